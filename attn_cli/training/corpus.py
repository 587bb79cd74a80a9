"""A training corpus: sentences as rows of the vector set, split by a hash of their words (so a repeated sentence
falls on one side) into training, validation (choosing the best epoch) and held-out (the final table) sentences."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from attn_cli.engine.tokenize import has_letters, sentence_pieces
from attn_cli.errors import InputError, InputTypeError, Option
from attn_cli.training.settings import MAX_CORPUS_SENTENCES
from attn_cli.vectors.store import Vectors

SHARE = 10  # one sentence in ten is held out, and one in ten is the validation split
TRAINING, VALIDATION, HELD_OUT = 0, 1, 2  # the sides of the split
MIN_SENTENCES = 20  # fewer usable sentences leave no held-out or validation tenth


@dataclass(frozen=True)
class Corpus:
    """Usable sentences (each [n] rows of the vector set, n >= 2) on each side of the split, and the counts."""

    training: list[np.ndarray]
    validation: list[np.ndarray]  # what the trainer picks its best epoch on
    evaluation: list[np.ndarray]  # held out: what the final table scores, never trained on nor used to choose
    fingerprint: str  # blake2b of the text as read (its lines, each ended by "\n"): names the corpus in provenance
    lines: int  # sentences read
    short: int  # skipped: fewer than two different known words
    long: int  # skipped: more than max_words known words
    unknown: int  # words skipped as unknown to the vector set
    words: int  # known words in the usable sentences


def read_corpus(lines: Iterable[str], vectors: Vectors, max_words: int, max_sentences: int = MAX_CORPUS_SENTENCES,
                name: str = "the corpus") -> Corpus:
    """One sentence per line, split as explain splits them; at most `max_sentences`: a stream may never end."""
    digest = hashlib.blake2b(digest_size=16)
    sides: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])  # by side_of
    read = short = long = unknown = 0
    for line in lines:
        if not isinstance(line, str):
            raise InputTypeError(f"sentences[{read}] must be a str, not {type(line).__name__}")
        if read == max_sentences:
            raise InputError(f"{name} holds more than {max_sentences:,} sentences; raise ", Option("max_sentences"),
                             " to train on more")
        digest.update(line.rstrip("\n").encode("utf-8", "surrogatepass") + b"\n")
        read += 1
        keys, rows = [], []
        for text, clitic, key, row in sentence_pieces(line, vectors):
            if key is not None and row is not None:
                keys.append(key)
                rows.append(row)
            elif has_letters(text) and not clitic:  # punctuation and clitics are dropped quietly, as tokenize does
                unknown += 1
        if len(set(rows)) < 2:  # a word is predicted from other words: "ha ha" has none
            short += 1
        elif len(rows) > max_words:
            long += 1
        else:
            sides[side_of(keys)].append(np.array(rows, dtype=np.int64))
    counts = [len(side) for side in sides]  # TRAINING, VALIDATION, HELD_OUT
    if sum(counts) < MIN_SENTENCES or not all(counts):
        skipped = f" ({short:,} had fewer than 2 different known words)" if short else ""
        raise InputError(f"the corpus has {sum(counts):,} usable sentence(s) of {read:,}{skipped}: "
                         f"{counts[HELD_OUT]:,} held out, {counts[VALIDATION]:,} to validate on; training holds "
                         f"out one sentence in {SHARE} to evaluate on and another to choose the best epoch with, "
                         f"so it needs at least {MIN_SENTENCES} (more, in practice: hundreds); add sentences, one "
                         "per line, in words the vector set knows")
    return Corpus(*sides, digest.hexdigest(), read, short, long, unknown,
                  sum(len(sentence) for side in sides for sentence in side))


def side_of(keys: list[str]) -> int:
    """HELD_OUT or VALIDATION for about one sentence in SHARE each, else TRAINING."""
    digest = hashlib.blake2b(" ".join(keys).encode("utf-8", "surrogatepass"), digest_size=8).digest()
    bucket = int.from_bytes(digest, "big") % SHARE
    return HELD_OUT if bucket == 0 else VALIDATION if bucket == 1 else TRAINING

