"""Split a sentence into words (inner hyphens and apostrophes kept, each other punctuation mark a token) and match
them to the vocabulary; a missing word follows the `oov` policy: error, skip (with suggestions) or zero."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np

from attn_cli.errors import InputError, Option, shorten
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:  # the spelling index loads with a run's first unknown word: a run without one never needs it
    from attn_cli.engine.spelling import SpellingIndex

OOV_POLICIES = ("skip", "error", "zero")
DEFAULT_MAX_TOKENS = 1000  # peak ~90 MB + 32 x heads x n^2 bytes: ~0.2 GB at 1,000 tokens (docs/limits.md)
_TOKEN = re.compile(r"\w+(?:['’\-]\w+)*|[^\w\s]")
_CLITIC = re.compile(r"(\w.*?)(n['’]t|['’](?:s|re|ll|ve|d|m))", re.IGNORECASE)  # bank's, don't, we're
MAX_NAMED = 10  # unknown words named in one message; the rest are counted


@dataclass(frozen=True)
class Token:
    """One token that takes part in attention."""

    text: str  # as typed
    key: str | None  # the vocabulary entry used; None when out of vocabulary (zero vector, or fastText's n-grams)
    position: int  # index among all tokens of the sentence, dropped ones included

    @property
    def oov(self) -> bool:
        return self.key is None


@dataclass(frozen=True)
class DroppedToken:
    """A token left out of the computation, and why."""

    text: str
    position: int
    reason: str  # "out of vocabulary", "punctuation", "symbol" (emoji, £, +) or "clitic" (the 's of bank's)
    suggestions: tuple[str, ...] = ()
    searched: bool = True  # False for an unknown word past the run's bound of spelling searches (spelling.py)


@dataclass(frozen=True)
class TokenizedSentence:
    tokens: list[Token]
    dropped: list[DroppedToken]
    embeddings: np.ndarray  # [n, d] float64, one row per token


def split_words(sentence: str | Sequence[str]) -> list[str]:
    """Words and punctuation marks in reading order, NFC-normalised; a list of words is taken as it is."""
    if isinstance(sentence, str):
        return _TOKEN.findall(unicodedata.normalize("NFC", sentence))
    return [unicodedata.normalize("NFC", word) for word in sentence if word.strip()]


def tokenize(sentence: str | Sequence[str], vectors: Vectors, oov: str = "skip",
             max_tokens: int = DEFAULT_MAX_TOKENS) -> TokenizedSentence:
    """Tokens with their vectors; raises InputError when nothing is left to attend or too much."""
    [tokenized] = with_vectors([tokenized_rows(sentence, vectors, oov, max_tokens)], vectors)
    return tokenized


Rows = tuple[list[Token], list[DroppedToken], list["np.ndarray | int"]]  # tokens, dropped, a row or vector of each


def with_vectors(sentences: list[Rows], vectors: Vectors) -> list[TokenizedSentence]:
    """The sentences with their vectors, the vocabulary rows of all of them read (and checked) in one call."""
    stored = [row for _, _, rows in sentences for row in rows if isinstance(row, int)]
    read = vectors.rows(stored) if stored else np.zeros((0, vectors.dims))  # [m, d]
    taken = iter(read)
    return [TokenizedSentence(tokens, dropped, np.vstack([next(taken) if isinstance(row, int) else row
                                                          for row in rows])) for tokens, dropped, rows in sentences]


def unread(sentence: Rows) -> TokenizedSentence:
    """A sentence's tokens with no vectors ([0, 0]), for a check that reads the tokens alone."""
    return TokenizedSentence(sentence[0], sentence[1], np.zeros((0, 0)))


def tokenized_rows(sentence: str | Sequence[str], vectors: Vectors, oov: str = "skip",
                   max_tokens: int = DEFAULT_MAX_TOKENS) -> Rows:
    """`tokenize` but each token's vocabulary row (or own vector) unread, so a batch reads many at once."""
    pieces = sentence_pieces(sentence, vectors)
    if not pieces:
        raise InputError('the sentence is empty; give a sentence with at least one word, e.g. "money bank grows"')
    if len(pieces) > max_tokens:
        raise InputError(f"the sentence has {len(pieces):,} tokens, more than ", Option("max_tokens", max_tokens),
                         "; shorten it or pass ", Option("max_tokens", len(pieces)),
                         " (memory grows with the square of the length)")
    tokens: list[Token] = []
    dropped: list[DroppedToken] = []
    rows: list[np.ndarray | int] = []  # a vocabulary row, or a vector of its own (subword, zeros)
    lexicon = _lexicon(vectors)
    for position, (word, clitic, key, row) in enumerate(pieces):
        if key is not None and row is not None:
            tokens.append(Token(word, key, position))
            rows.append(row)
        elif not has_letters(word):
            dropped.append(DroppedToken(word, position, "symbol" if is_symbol(word) else "punctuation"))
        elif clitic:
            dropped.append(DroppedToken(word, position, "clitic"))  # the 's of bank's, when the set has no 's
        elif vectors.subword is not None or oov == "zero":  # fastText .bin builds a vector from character n-grams
            tokens.append(Token(word, None, position))
            rows.append(np.zeros(vectors.dims) if vectors.subword is None else vectors.subword(word))
        else:
            dropped.append(lexicon.unknown(word, position))
    unknown = [item for item in dropped if item.reason == "out of vocabulary"]
    if unknown and oov == "error":
        raise InputError(f"not in the vocabulary of {vectors.name}: {describe_unknown(unknown)}; "
                         "fix the spelling, or pass ", Option("oov", "skip"), " or ", Option("oov", "zero"))
    if tokens and oov == "zero" and vectors.subword is None and all(token.key is None for token in tokens):
        unknown = [lexicon.unknown(token.text, token.position) for token in tokens]
        tokens = []  # only zero vectors: nothing to attend, whatever the oov policy says
    if not tokens:
        detail = f": {describe_unknown(unknown)}" if unknown else ""
        raise InputError(f"no word of the sentence is in the vocabulary of {vectors.name}{detail}; "
                         "use words the vector set knows or pass ", Option("vectors"), " with a larger set")
    return tokens, dropped, rows


Piece = tuple[str, bool, "str | None", "int | None"]  # text, is a clitic, vocabulary key and row (None: unknown)


def sentence_pieces(sentence: str | Sequence[str], vectors: Vectors) -> list[Piece]:
    """The sentence's pieces (words, their stems and clitics, punctuation) with their vocabulary entries."""
    lexicon = _lexicon(vectors)
    return [piece for word in split_words(sentence) for piece in lexicon.pieces(word)]


def has_letters(text: str) -> bool:
    """A word or number, not punctuation or a symbol: only such a piece can be an unknown word."""
    return any(char.isalnum() for char in text)


class Lexicon:
    """Each word's pieces and their vocabulary rows, looked up once per run: a batch repeats its words."""

    def __init__(self, vectors: Vectors) -> None:
        self.vectors = vectors
        self.pieces = lru_cache(maxsize=MAX_REMEMBERED)(self._pieces)
        self.suggestions: dict[str, tuple[str, ...]] = {}  # at most spelling.MAX_SEARCHED words

    def _pieces(self, word: str) -> tuple[Piece, ...]:
        return tuple((text, clitic, *(self.vectors.lookup(text) or (None, None)))
                     for text, clitic in vocabulary_parts(word, self.vectors))

    def unknown(self, word: str, position: int) -> DroppedToken:
        """The unknown word left out with its spelling suggestions, for at most spelling.MAX_SEARCHED words."""
        from attn_cli.engine.spelling import MAX_SEARCHED

        found = self.suggestions.get(word)
        if found is None:
            if len(self.suggestions) >= MAX_SEARCHED:  # one search for each word remembered
                return DroppedToken(word, position, "out of vocabulary", searched=False)
            found = self.suggestions[word] = self.spelling_index.suggest(self.vectors.candidate_keys(word)[0])
        return DroppedToken(word, position, "out of vocabulary", found)

    @cached_property
    def spelling_index(self) -> SpellingIndex:
        from attn_cli.engine.spelling import SpellingIndex

        return SpellingIndex(self.vectors.words)


MAX_REMEMBERED = 200_000  # distinct words a run remembers (~40 MB at most), the least recently used forgotten
_LEXICONS: dict[int, Lexicon] = {}


def _lexicon(vectors: Vectors) -> Lexicon:
    """The lexicon of this vector set, one at a time (a new set replaces it)."""
    found = _LEXICONS.get(id(vectors))
    if found is None or found.vectors is not vectors:
        _LEXICONS.clear()
        found = _LEXICONS[id(vectors)] = Lexicon(vectors)
    return found


def is_symbol(text: str) -> bool:
    """Emoji, currency and maths signs (Unicode's S categories), which are not punctuation."""
    return all(unicodedata.category(char).startswith("S") for char in text)


def vocabulary_parts(word: str, vectors: Vectors) -> list[tuple[str, bool]]:
    """(text, is a clitic) of the word, or of its stem and clitic when unknown (bank's -> bank 's), as GloVe splits."""
    match = _CLITIC.fullmatch(word) if ("'" in word or "’" in word) else None
    if match is None or vectors.lookup(word) is not None:
        return [(word, False)]
    return [(match[1], False), (match[2], True)]


def describe_unknown(unknown: list[DroppedToken]) -> str:
    """'"bnak" (did you mean bank, bark?), "zzq"' for messages."""
    parts = []
    for item in unknown[:MAX_NAMED]:
        hint = f" (did you mean {', '.join(item.suggestions)}?)" if item.suggestions else ""
        parts.append(f'"{shorten(item.text)}"{hint}')
    more = f" and {len(unknown) - MAX_NAMED:,} more" if len(unknown) > MAX_NAMED else ""
    return ", ".join(parts) + more
