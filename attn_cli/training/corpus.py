"""A training corpus: sentences as rows of the vector set, split into training and held-out sentences.

Words follow the product's own rule (tokenize.sentence_pieces, through the run's per-word lexicon),
so a trained layer sees sentences as explain does. Unknown words are skipped without the spelling
suggestions explain gives (a corpus may hold millions of them); sentences left with fewer than two different
known words (nothing to predict from) or more than `max_words` are skipped and counted.

The held-out tenth is chosen by a hash of each sentence's words, not by its place in the file, so a
sentence that occurs twice always falls on the same side: the evaluation never scores a sentence the
layer was trained on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from attn_cli.engine.tokenize import has_letters, sentence_pieces
from attn_cli.errors import InputError
from attn_cli.vectors.store import Vectors

HELD_OUT_SHARE = 10  # one sentence in ten is held out
MIN_SENTENCES = 10  # fewer usable sentences leave no held-out tenth


@dataclass(frozen=True)
class Corpus:
    """Usable sentences (each [n] int rows of the vector set, n >= 2), which are held out, and the counts."""

    sentences: list[np.ndarray]
    held_out: np.ndarray  # [S] bool
    fingerprint: str  # blake2b of the text as read (its lines, each ended by "\n"): names the corpus in provenance
    lines: int  # sentences read
    short: int  # skipped: fewer than two different known words
    long: int  # skipped: more than max_words known words
    unknown: int  # words skipped as unknown to the vector set
    words: int  # known words in the usable sentences

    @cached_property
    def training(self) -> list[np.ndarray]:
        return [s for s, held in zip(self.sentences, self.held_out) if not held]

    @cached_property
    def evaluation(self) -> list[np.ndarray]:
        return [s for s, held in zip(self.sentences, self.held_out) if held]


def read_corpus(lines: Iterable[str], vectors: Vectors, max_words: int) -> Corpus:
    """Encode one sentence per line; raises InputError when too few sentences remain for a held-out split."""
    digest = hashlib.blake2b(digest_size=16)
    sentences: list[np.ndarray] = []
    held_out: list[bool] = []
    read = short = long = unknown = 0
    for line in lines:
        digest.update(line.rstrip("\n").encode("utf-8", "surrogatepass") + b"\n")
        read += 1
        keys, rows, missing = known_words(line, vectors)
        unknown += missing
        if len(set(rows)) < 2:  # a word is predicted from other words: "ha ha" has none
            short += 1
        elif len(rows) > max_words:
            long += 1
        else:
            sentences.append(np.array(rows, dtype=np.int64))
            held_out.append(is_held_out(keys))
    corpus = Corpus(sentences, np.array(held_out, dtype=bool), digest.hexdigest(), read, short, long, unknown,
                    sum(len(s) for s in sentences))
    check_split(corpus)
    return corpus


def known_words(sentence: str, vectors: Vectors) -> tuple[list[str], list[int], int]:
    """The vocabulary keys and rows of the sentence's known words, and how many words were unknown.

    Punctuation and clitics the vocabulary lacks are dropped quietly, as tokenize does.
    """
    keys: list[str] = []
    rows: list[int] = []
    unknown = 0
    for text, clitic, key, row in sentence_pieces(sentence, vectors):
        if key is not None and row is not None:
            keys.append(key)
            rows.append(row)
        elif has_letters(text) and not clitic:
            unknown += 1
    return keys, rows, unknown


def is_held_out(keys: list[str]) -> bool:
    """True for about one sentence in HELD_OUT_SHARE, decided by the sentence's words alone."""
    digest = hashlib.blake2b(" ".join(keys).encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % HELD_OUT_SHARE == 0


def check_split(corpus: Corpus) -> None:
    """Refuse a corpus too small to hold out a tenth, or whose sentences all fell on one side."""
    usable = len(corpus.sentences)
    held = int(corpus.held_out.sum())
    if usable < MIN_SENTENCES or held == 0 or held == usable:
        skipped = f" ({corpus.short:,} had fewer than 2 different known words)" if corpus.short else ""
        raise InputError(f"the corpus has {usable:,} usable sentence(s) of {corpus.lines:,}{skipped}, {held:,} of "
                         f"them held out; training holds out one sentence in {HELD_OUT_SHARE} to evaluate on, so "
                         f"it needs at least {MIN_SENTENCES} (more, in practice: hundreds); add sentences, one "
                         "per line, in words the vector set knows")
