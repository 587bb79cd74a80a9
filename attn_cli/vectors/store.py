"""`Vectors`: a vocabulary and its matrix, whatever file they came from."""

from __future__ import annotations

import functools
import unicodedata

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Callable, Protocol

import numpy as np

from attn_cli.errors import DamagedCache, SettingsTypeError, VectorsError

FLOAT32_MAX = float(np.finfo(np.float32).max)  # 3.4e38: every value a set may hold, whatever its dtype
FINGERPRINT_ROWS = 4096  # rows read to fingerprint a set (evenly spaced; every row of a smaller set)
MAX_SOUND_NORMS = 200_000  # rows whose checked norm a run remembers (~10 MB), as many as the words it remembers
MAX_WORD_BYTES = 1000  # the longest word a vector file may hold (UTF-8 bytes); real words are far shorter


class WordIndex(Protocol):
    """Anything that maps a word to its row: a dict, or the cache's stored hash table."""

    def get(self, word: str, /) -> int | None: ...


@dataclass(frozen=True, repr=False)
class Vectors:
    """Words in file order (most frequent first) and their vectors [N, d]."""

    name: str  # what the user sees: a set name or a file path
    words: Sequence[str]  # a list, or the cache's lazy word list (len, indexing, slicing)
    matrix: np.ndarray  # [N, d], float16/float32; promoted to float64 only for the few rows used
    lowercase: bool  # True when the vocabulary has no upper-case words: lower-case the input
    details: dict = field(default_factory=dict)  # provenance shown in `settings.vectors`
    stored_index: WordIndex | None = None  # a prebuilt word -> row index (the cache's); else built on demand
    norms: np.ndarray | None = None  # [N] float32 |row|, precomputed by the cache
    subword: Callable[[str], np.ndarray] | None = None  # fastText .bin: a vector for any word, from its n-grams
    # rows derived from these (a layer's mapping of them) kept between runs: keep_rows(name, shape, compute)
    keep_rows: Callable[[str, tuple[int, int], Callable[[], np.ndarray]], np.ndarray] | None = None

    def __post_init__(self) -> None:
        if self.matrix.ndim != 2 or self.matrix.shape[0] != len(self.words):
            raise ValueError(f"{len(self.words)} words but a matrix of shape {self.matrix.shape}")

    @property
    def count(self) -> int:
        return self.matrix.shape[0]

    @property
    def dims(self) -> int:
        return self.matrix.shape[1]

    @cached_property
    def index(self) -> WordIndex:
        """Word -> row; the first occurrence wins when a file repeats a word."""
        if self.stored_index is not None:
            return self.stored_index
        # built last row first, so an earlier row overwrites a later one: a dict at C speed
        return dict(zip(reversed(self.words), range(len(self.words) - 1, -1, -1)))

    def lookup(self, text: str) -> tuple[str, int] | None:
        """The vocabulary key and row for a token, following the vocabulary's case convention."""
        for key in self.candidate_keys(text):
            row = self.index.get(key)
            if row is not None:
                return key, row
        return None

    def candidate_keys(self, text: str) -> list[str]:
        """Spellings to try, in order: lower-case only for a lower-case vocabulary; then without accents."""
        spellings = [text.lower()] if self.lowercase else [text, text.lower(), text.capitalize()]
        return list(dict.fromkeys(spellings + [without_accents(spelling) for spelling in spellings]))

    def rows(self, rows: list[int]) -> np.ndarray:
        """The float64 vectors of the given rows [len(rows), d], checked for damage since the import here, on the
        few rows a run uses."""
        values = np.asarray(self.matrix[rows], dtype=np.float64)
        bad = first_unfit_row(values)
        if bad is not None:
            raise self.damaged(unfit_problem(self.words[rows[bad]]))
        self.check_norms(rows)
        return values

    def check_norms(self, rows: Sequence[int]) -> None:
        """Refuse stored lengths of these rows that are not their rows': a cosine divides by them."""
        if self.norms is None:
            return
        rows = [row for row in rows if row not in self._sound_norms]  # a batch repeats its words: each checked once
        if not rows:
            return
        stored = np.asarray(self.norms[rows], dtype=np.float64)  # [k]
        actual = row_norms(self.matrix[rows]).astype(np.float64)  # [k]
        wrong = ~np.isclose(stored, actual, rtol=1e-5, atol=float(np.finfo(np.float32).tiny))
        if wrong.any():
            at = int(np.argmax(wrong))
            raise self.damaged(f"norms.npy gives {self.words[rows[at]]!r} a length of {stored[at]:.3g}, its row "
                               f"{actual[at]:.3g}")
        if len(self._sound_norms) > MAX_SOUND_NORMS:
            self._sound_norms.clear()
        self._sound_norms.update(rows)

    @cached_property
    def _sound_norms(self) -> set[int]:
        return set()

    def damaged(self, problem: str) -> VectorsError:  # a cache's names the folder and its remedy
        if self.details.get("cache"):
            return DamagedCache(self.details["cache"], problem)
        return VectorsError(f"{self.name}: {problem}; repair or re-export the vectors")

    @classmethod
    def from_keyedvectors(cls, keyed: Any, name: str = "KeyedVectors") -> Vectors:
        """A gensim `KeyedVectors` in memory, not copied; a fastText one keeps its subword vectors."""
        if not (hasattr(keyed, "index_to_key") and hasattr(keyed, "vectors")):
            raise SettingsTypeError("keyed", f"must be a gensim KeyedVectors, got {type(keyed).__name__}")
        matrix = np.asarray(keyed.vectors)
        if matrix.ndim != 2 or matrix.dtype.kind not in "fiu":
            raise VectorsError(f"{name} holds {matrix.dtype} values in {matrix.ndim} dimension(s), not a matrix of "
                               "numbers; it cannot be attended")
        vectors = cls.of_keyed(keyed, name, type(keyed).__name__, subwords=bool(getattr(keyed, "bucket", 0)))
        return replace(vectors, norms=row_norms(matrix))  # as the cache stores them: the same neighbours

    @classmethod
    def of_keyed(cls, keyed: Any, name: str, file_format: str, limit: int | None = None,
                 subwords: bool = False) -> Vectors:
        """gensim's vectors, the first `limit` words, refused (naming the word) if a value is unfit; with `subwords`
        (fastText), any word's vector from its n-grams, refused alike."""
        words, matrix = list(keyed.index_to_key)[:limit], np.asarray(keyed.vectors)[:limit]
        check_values(matrix, words, name)
        subword = functools.partial(_subword, keyed, name) if subwords else None
        return cls(name=name, words=words, matrix=matrix, lowercase=is_lowercase_vocabulary(words),
                   details={"format": file_format}, subword=subword)

    def to_keyedvectors(self) -> Any:
        """These vectors as a gensim `KeyedVectors` (float32 values)."""
        from gensim.models import KeyedVectors

        keyed = KeyedVectors(vector_size=self.dims, dtype=np.float32)
        keyed.add_vectors(list(self.words), np.asarray(self.matrix, dtype=np.float32))
        return keyed

    def first(self, count: int) -> Vectors:
        """The first `count` words (the most frequent, in frequency-ordered files) and their rows."""
        norms = None if self.norms is None else self.norms[:count]
        return Vectors(name=self.name, words=list(self.words[:count]), matrix=self.matrix[:count],
                       lowercase=self.lowercase, details={**self.details, "limit": count}, norms=norms,
                       subword=self.subword)

    @cached_property
    def fingerprint(self) -> str:
        """A digest of the set's size and of evenly spaced words and rows: the set a weights file was trained on,
        whatever its name or path."""
        import hashlib

        rows = np.unique(np.linspace(0, self.count - 1, min(self.count, FINGERPRINT_ROWS)).astype(np.int64))
        digest = hashlib.blake2b(f"{self.count} {self.dims}".encode(), digest_size=16)
        for row in rows.tolist():
            word = self.words[row].encode("utf-8", errors="surrogatepass")
            digest.update(len(word).to_bytes(4, "little") + word)
        digest.update(np.ascontiguousarray(self.matrix[rows], dtype="<f4").tobytes())  # [m, d]
        return digest.hexdigest()

    def __repr__(self) -> str:
        return f"<Vectors {self.name!r}: {self.count:,} words x {self.dims} dims>"

    def describe(self) -> dict:
        """The JSON block naming the vector set, so any output can be reproduced."""
        return {"name": self.name, "count": self.count, "dims": self.dims,
                "lowercase": self.lowercase, **self.details}


def first_unfit_row(values: np.ndarray) -> int | None:
    """The first row [N, d] holding NaN, infinity or a value beyond float32's range, or None."""
    with np.errstate(invalid="ignore"):
        fit = (np.abs(values) <= FLOAT32_MAX).all(axis=1)  # NaN compares False
    return None if fit.all() else int(np.argmin(fit))


def unfit_problem(word: str) -> str:
    return f"the vector of {word!r} holds NaN, infinity or a value beyond float32's range (±3.4e38)"


def check_values(matrix: np.ndarray, words: Sequence[str], name: str, block: int = 8192) -> None:
    """A VectorsError naming the first word whose vector `first_unfit_row` refuses."""
    for start in range(0, len(matrix), block):
        bad = first_unfit_row(np.asarray(matrix[start:start + block], dtype=np.float64))
        if bad is not None:
            raise VectorsError(f"{name}: {unfit_problem(words[start + bad])}; it cannot be attended: repair or "
                               "re-export the vectors")


def _subword(keyed: Any, name: str, word: str) -> np.ndarray:
    with np.errstate(all="ignore"):  # gensim's overflow warnings: the values are checked here
        values = np.asarray(keyed[word], dtype=np.float64)
    check_values(values[None], [word], name)
    return values


def is_lowercase_vocabulary(words: Sequence[str], sample: int = 50_000) -> bool:
    """True when under 0.5 % of the most frequent words have an upper-case letter (GloVe 6B; not GoogleNews)."""
    head = words[:sample]
    cased = sum(1 for word in head if word != word.lower())
    return cased <= 0.005 * max(len(head), 1)


def row_norms(rows: np.ndarray, block: int = 2048) -> np.ndarray:
    """|row| of each row [N, d] -> [N] float32 (inf beyond float32), the bits np.linalg.norm(axis=1) gives."""
    norms = np.empty(len(rows), dtype=np.float32)  # [N]
    with np.errstate(over="ignore"):
        for start in range(0, len(rows), block):
            squares = np.array(rows[start:start + block], dtype=np.float64)  # [b, d], always a copy: squared in place
            norms[start:start + block] = np.sqrt(np.add.reduce(np.square(squares, out=squares), axis=1))
    return norms


def without_accents(text: str) -> str:
    """The text with combining marks removed after canonical decomposition: café -> cafe, Übung -> Ubung."""
    if text.isascii():
        return text
    return "".join(char for char in unicodedata.normalize("NFD", text) if not unicodedata.combining(char))
