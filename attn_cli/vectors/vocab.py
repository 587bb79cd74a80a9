"""The cached vocabulary: `vocab.txt`, `offsets.npy` (int64 [N + 1]) and `index.npy` (a CRC-32 hash table of
rows): a lookup touches a few pages of each, where a dict of millions of words costs more than a warm run."""

from __future__ import annotations

import mmap
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from attn_cli.files import quiet_npy_headers, write_all
from attn_cli.errors import DamagedCache

VOCAB_FILE, OFFSETS_FILE, INDEX_FILE = "vocab.txt", "offsets.npy", "index.npy"
_EMPTY = -1


class WordList(Sequence):
    """The words of a cached set, decoded only when asked for (len, [i], [a:b], iteration)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        with quiet_npy_headers():
            self.offsets = np.load(folder / OFFSETS_FILE, mmap_mode="r", allow_pickle=False)  # [N + 1] int64
        with open(folder / VOCAB_FILE, "rb") as handle:
            self._blob = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def word_bytes(self, row: int) -> bytes:
        """The UTF-8 bytes of a row's word, between line ends where offsets.npy says (a DamagedCache otherwise)."""
        start, stop = int(self.offsets[row]), int(self.offsets[row + 1])
        if not (0 <= start < stop <= len(self._blob) and self._blob[stop - 1] == 10
                and (start == 0 or self._blob[start - 1] == 10)):
            raise DamagedCache(self.folder, f"{OFFSETS_FILE} does not point to the word of row {row:,}")
        return self._blob[start:stop - 1]

    def __getitem__(self, item):
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            if step != 1 or stop <= start:
                return [self[i] for i in range(start, stop, step)]
            try:
                text = self._blob[int(self.offsets[start]):int(self.offsets[stop])].decode("utf-8")
            except UnicodeDecodeError as exc:
                at = int(np.searchsorted(self.offsets, self.offsets[start] + exc.start, "right")) - 1
                raise self.not_utf8(at) from None
            return text.split("\n")[:-1]  # "\n" only: words may hold other line-breaking characters
        row = int(item)
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(item)
        try:
            return self.word_bytes(row).decode("utf-8")
        except UnicodeDecodeError:
            raise self.not_utf8(row) from None

    def not_utf8(self, row: int) -> DamagedCache:
        """An import writes valid UTF-8, so a word that is not was damaged since (found where it is read)."""
        return DamagedCache(self.folder, f"{VOCAB_FILE} is not UTF-8 at row {row:,}")

    def __iter__(self):
        return iter(self[:])


class StoredIndex:
    """word -> row through the stored hash table, `.get` like a dict's; a probe that meets a row outside the
    vocabulary, a row twice or no free slot is a DamagedCache, never a crash or an endless loop."""

    def __init__(self, folder: Path, words: WordList) -> None:
        with quiet_npy_headers():
            self.table = np.load(folder / INDEX_FILE, mmap_mode="r", allow_pickle=False)  # [2^k] int32
        self.mask = len(self.table) - 1
        self.words, self.folder = words, folder

    def get(self, word: str, default: int | None = None) -> int | None:
        try:
            key = word.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (an undecodable byte of a command line): no stored word
            return default
        slot = zlib.crc32(key) & self.mask
        seen: set[int] = set()
        for _ in range(min(len(self.table), len(self.words) + 1)):  # a sound table's longest run is every row
            row = int(self.table[slot])
            if row == _EMPTY:
                return default
            if not 0 <= row < len(self.words):
                raise DamagedCache(self.folder, f"{INDEX_FILE} points to row {row} of {len(self.words):,}")
            if row in seen:
                raise DamagedCache(self.folder, f"{INDEX_FILE} holds row {row} twice")
            if self.words.word_bytes(row) == key:
                return row
            seen.add(row)
            slot = (slot + 1) & self.mask
        raise DamagedCache(self.folder, f"{INDEX_FILE} has no free slot")

    def __contains__(self, word: str) -> bool:
        return self.get(word) is not None


def write_vocabulary(folder: Path, words: list[bytes]) -> None:
    """Write vocab.txt, offsets.npy and index.npy for distinct UTF-8 words (no newline inside)."""
    lengths = np.fromiter((len(word) + 1 for word in words), dtype=np.int64, count=len(words))
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    with open(folder / VOCAB_FILE, "wb") as handle:
        write_all(handle, b"\n".join(words) + b"\n")
    np.save(folder / OFFSETS_FILE, offsets, allow_pickle=False)
    np.save(folder / INDEX_FILE, hash_table(words), allow_pickle=False)


def hash_table(words: list[bytes]) -> np.ndarray:
    """Open addressing with linear probing, built for all words at once; earlier rows win ties."""
    size = 1 << max(4, (2 * len(words) - 1).bit_length())  # a power of two >= 2N: at most half full
    mask = size - 1
    table = np.full(size, _EMPTY, dtype=np.int32)
    pending = np.arange(len(words), dtype=np.int64)
    slots = np.fromiter((zlib.crc32(word) for word in words), dtype=np.int64, count=len(words)) & mask
    while len(pending):
        free = table[slots] == _EMPTY
        candidates, candidate_slots = pending[free], slots[free]
        taken, first = np.unique(candidate_slots, return_index=True)  # lowest row per free slot
        table[taken] = candidates[first]
        placed = np.zeros(len(pending), dtype=bool)
        placed[np.flatnonzero(free)[first]] = True
        pending, slots = pending[~placed], (slots[~placed] + 1) & mask
    return table
