"""The cache of imported vector files, `<cache>/v1/<stem>-<key>/` (docs/vectors.md): mapped, never trusted.

A set is served only from a real folder whose meta.json is whole, records the very file asked for and agrees with
the files (CorruptCache otherwise); checks that would read a whole file wait until a part is used.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import mmap
import os
import re
import stat
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from attn_cli.files import quiet_npy_headers, write_all
from attn_cli.errors import DamagedCache, Option, VectorsError
from attn_cli.vectors.store import Vectors, row_norms

LAYOUT = "v1"
MATRIX_FILE, NORMS_FILE, META_FILE = "matrix.npy", "norms.npy", "meta.json"
VOCAB_FILE, OFFSETS_FILE, INDEX_FILE = "vocab.txt", "offsets.npy", "index.npy"
_EMPTY = -1  # a free slot of index.npy
_SAMPLE_BYTES = 1 << 16
_KEY = re.compile(r"[\w.-]{1,40}-[0-9a-f]{16}")  # Fingerprint.key's names: what list shows and remove deletes
DATA_FILES = (MATRIX_FILE, NORMS_FILE, VOCAB_FILE, OFFSETS_FILE, INDEX_FILE)
# every field CacheWriter.finish writes, with its type (a bool is no int here); the source's fields are Fingerprint's
META_FIELDS: dict[str, type | tuple[type, ...]] = {
    "layout": str, "name": str, "format": str, "lowercase": bool, "source": dict, "count": int, "dims": int,
    "limit": (int, type(None)), "header_count": (int, type(None)), "duplicates": int, "first_duplicates": list,
    "bad_lines": int, "first_bad_lines": list, "invalid_utf8_words": int}
SOURCE_FIELDS: dict[str, type | tuple[type, ...]] = {"path": str, "size": int, "mtime_ns": int, "sample_sha256": str}


class CorruptCache(Exception):
    """A cache folder that does not hold what its metadata promises."""


def cache_root() -> Path:
    """$ATTN_CLI_CACHE, else $XDG_CACHE_HOME/attn-cli (if absolute, as the XDG spec says), else ~/.cache/attn-cli."""
    if os.environ.get("ATTN_CLI_CACHE"):
        return Path(os.environ["ATTN_CLI_CACHE"]).expanduser()
    xdg = Path(os.environ.get("XDG_CACHE_HOME") or ".").expanduser()
    return (xdg if xdg.is_absolute() else Path.home() / ".cache") / "attn-cli"


@dataclass(frozen=True)
class Fingerprint:
    """What identifies a source file's content without reading all of it."""

    path: str
    size: int
    mtime_ns: int
    sample_sha256: str  # of the first, middle and last 64 KiB

    @classmethod
    def of(cls, path: Path) -> Fingerprint:
        resolved = path.resolve()
        stat = resolved.stat()
        digest = hashlib.sha256()
        with open(resolved, "rb") as handle:
            for offset in sorted({0, max(0, stat.st_size // 2 - _SAMPLE_BYTES // 2),
                                  max(0, stat.st_size - _SAMPLE_BYTES)}):
                handle.seek(offset)
                digest.update(handle.read(_SAMPLE_BYTES))
        return cls(str(resolved), stat.st_size, stat.st_mtime_ns, digest.hexdigest())

    def key(self, file_format: str, limit: int | None) -> str:
        text = json.dumps([self.path, self.size, self.mtime_ns, self.sample_sha256, file_format, limit])
        stem = re.sub(r"[^\w.-]", "_", Path(self.path).name)[:40]
        return f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"

    def check_origin(self, meta: dict, file_format: str, limit: int | None) -> None:
        """A folder copied or planted under this file's key (meta.json naming another source) is CorruptCache."""
        if meta["source"] != dataclasses.asdict(self) or (meta["format"], meta["limit"]) != (file_format, limit):
            recorded = meta["source"]
            raise CorruptCache(f"its {META_FILE} records another source: {recorded['path']}, "
                               f"{recorded['size']:,} bytes, read as {meta['format']}, "
                               f"limit {'none' if meta['limit'] is None else meta['limit']}")


class CacheWriter:
    """The sink the readers fill: rows stream into matrix.npy, words are de-duplicated on the way, and what the
    import met (duplicates, bad lines, undecodable words, the header's count) is kept for meta.json."""

    def __init__(self, folder: Path, dims: int, limit: int | None, skip_bad_lines: bool,
                 header_count: int | None) -> None:
        self.folder, self.dims, self.limit = folder, dims, limit
        self.skip_bad_lines, self.header_count = skip_bad_lines, header_count
        self.bad_lines = 0
        self.first_bad: list[str] = []
        self.words: list[bytes] = []
        self.seen: set[bytes] = set()
        self.norms: list[np.ndarray] = []
        self.duplicates = 0
        self.first_duplicates: list[str] = []
        self.replaced_utf8 = 0
        self._matrix = open(folder / MATRIX_FILE, "wb")
        self._header(0)  # numpy leaves room for the final count: its header is written in place at the end

    def add(self, words: list[bytes], rows: np.ndarray) -> int:
        """Store the new words (up to the limit) and their rows [n, d]; returns the words held."""
        keep = np.zeros(len(words), dtype=bool)
        for at, word in enumerate(self._valid_utf8(words)):
            if word in self.seen:
                self.duplicates += 1
                if len(self.first_duplicates) < 3:
                    self.first_duplicates.append(word.decode("utf-8"))
            elif self.limit is None or len(self.words) < self.limit:
                self.seen.add(word)
                self.words.append(word)
                keep[at] = True
        rows = np.ascontiguousarray(rows if keep.all() else rows[keep], dtype="<f4")
        write_all(self._matrix, rows.tobytes())
        self.norms.append(row_norms(rows))  # a row longer than float32 holds stores inf: never a neighbour
        return len(self.words)

    def _valid_utf8(self, words: list[bytes]) -> list[bytes]:  # undecodable bytes become U+FFFD, counted
        try:
            b"\n".join(words).decode("utf-8")
            return words
        except UnicodeDecodeError:
            fixed = [word.decode("utf-8", "replace").encode("utf-8") for word in words]
            self.replaced_utf8 += sum(word != was for word, was in zip(fixed, words))
            return fixed

    def _header(self, count: int) -> None:
        self._matrix.seek(0)
        np.lib.format.write_array_header_1_0(self._matrix, {"descr": "<f4", "fortran_order": False,
                                                            "shape": (count, self.dims)})
        self._matrix.seek(0, os.SEEK_END)

    def finish(self, meta: dict) -> dict:
        count = len(self.words)
        self._header(count)
        self._matrix.close()
        np.save(self.folder / NORMS_FILE, np.concatenate(self.norms) if self.norms else np.zeros(0, np.float32),
                allow_pickle=False)
        write_vocabulary(self.folder, self.words)
        meta = {**meta, "layout": LAYOUT, "count": count, "dims": self.dims, "limit": self.limit,
                "header_count": self.header_count, "duplicates": self.duplicates,
                "first_duplicates": self.first_duplicates, "bad_lines": self.bad_lines,
                "first_bad_lines": self.first_bad, "invalid_utf8_words": self.replaced_utf8}
        (self.folder / META_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")
        return meta

    def abandon(self) -> None:
        self._matrix.close()


def layout_folder(root: Path | None = None) -> Path:
    """`root`/v1, where the sets live; a symbolic link is an OSError, as an unwritable cache is."""
    layout = (root or cache_root()) / LAYOUT
    if layout.is_symlink():
        raise OSError(errno.ELOOP, f"{layout} is a symbolic link, which the cache never follows", str(layout))
    return layout


def _require(path: Path, is_kind: Callable[[int], bool], kind: str) -> None:  # a link to one is not one
    mode = path.lstat().st_mode
    if not is_kind(mode):
        raise CorruptCache(f"{path.name} is {'a symbolic link, not' if stat.S_ISLNK(mode) else 'not'} a {kind}")


def read_meta(folder: Path) -> dict:
    """meta.json of a real cache folder, every field present with its type: CorruptCache otherwise."""
    try:
        _require(folder, stat.S_ISDIR, "folder")
        _require(folder / META_FILE, stat.S_ISREG, "file")
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
        raise CorruptCache(f"unreadable {META_FILE}: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("layout") != LAYOUT:
        raise CorruptCache(f"{META_FILE} is not a {LAYOUT} cache description")
    wrong = _wrong_field(meta, META_FIELDS) or _wrong_field(meta["source"], SOURCE_FIELDS, "source.")
    if wrong:
        raise CorruptCache(f"{META_FILE} has no valid {wrong!r}")
    if (min(meta["count"], meta["dims"]) < 1 or (meta["bad_lines"] and not meta["first_bad_lines"])
            or not all(isinstance(text, str) for text in meta["first_duplicates"] + meta["first_bad_lines"])):
        raise CorruptCache(f"{META_FILE} contradicts itself")
    return meta


def _wrong_field(fields: dict, types: dict, prefix: str = "") -> str | None:  # True is not an int here
    for key, kind in types.items():
        value = fields.get(key, ...)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            return prefix + key
    return None


def load_cached(folder: Path, name: str | None = None, meta: dict | None = None) -> Vectors:
    """Map a cache folder as `Vectors`, after checking every file matches meta.json (`meta`, if already read)."""
    meta = meta or read_meta(folder)
    try:
        for file in DATA_FILES:
            _require(folder / file, stat.S_ISREG, "file")
        with quiet_npy_headers():
            matrix = np.load(folder / MATRIX_FILE, mmap_mode="r", allow_pickle=False)
            norms = np.load(folder / NORMS_FILE, mmap_mode="r", allow_pickle=False)
        words = WordList(folder)
        index = StoredIndex(folder, words)
    except Exception as exc:  # numpy's header parser: ValueError, SyntaxError, tokenize's TokenError
        raise CorruptCache(f"{type(exc).__name__}: {exc}") from exc
    try:
        _check_agreement(folder, meta, matrix, norms, words, index)
    except DamagedCache as exc:
        raise CorruptCache(exc.problem) from exc
    details = {"format": meta["format"], "source": meta["source"]["path"], "cache": str(folder)}
    if meta["limit"] is not None:  # the set is the file's first `limit` words: a weights file must say so to be met
        details["limit"] = meta["limit"]
    return Vectors(name=name or meta["name"], words=words, matrix=matrix, lowercase=meta["lowercase"],
                   details=details, stored_index=index, norms=norms)


def _check_agreement(folder: Path, meta: dict, matrix: np.ndarray, norms: np.ndarray, words: WordList,
                     index: StoredIndex) -> None:
    """CorruptCache when the files' headers disagree with meta.json (shapes, dtypes, sizes), or the first or last
    word is not found at its row: a table of zeros or garbage is rebuilt here."""
    count, dims = meta["count"], meta["dims"]
    table, offsets = index.table, words.offsets
    if matrix.shape != (count, dims) or matrix.dtype != np.float32:
        raise CorruptCache(f"{MATRIX_FILE} is not {count} x {dims} float32")
    if norms.shape != (count,) or norms.dtype != np.float32:
        raise CorruptCache(f"{NORMS_FILE} is not {count} float32")
    if offsets.shape != (count + 1,) or offsets.dtype != np.int64:
        raise CorruptCache(f"{OFFSETS_FILE} is not {count + 1} int64")
    if offsets[-1] != (folder / VOCAB_FILE).stat().st_size:
        raise CorruptCache(f"{VOCAB_FILE} / {OFFSETS_FILE} do not hold {count} words")
    if table.ndim != 1 or table.dtype != np.int32 or len(table) < 2 * count or len(table) & (len(table) - 1):
        raise CorruptCache(f"{INDEX_FILE} is malformed")
    for row in (0, count - 1):
        if index.get(words[row]) != row:
            raise CorruptCache(f"{INDEX_FILE} does not find the word of row {row}")


def cached_sets(root: Path | None = None) -> list[tuple[Path, dict | None]]:
    """Every real folder with a key-shaped name in v1 and its metadata (None when not valid), newest first."""
    layout = layout_folder(root)
    if not layout.is_dir():
        return []
    found: list[tuple[float, Path]] = []
    for entry in os.scandir(layout):
        try:  # another process may remove a set (or rename its import into place) at any moment
            if _KEY.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
                found.append((entry.stat(follow_symlinks=False).st_mtime, Path(entry.path)))
        except FileNotFoundError:
            continue
    return [(folder, _meta_or_none(folder)) for _, folder in sorted(found, reverse=True)]


def _meta_or_none(folder: Path) -> dict | None:
    try:
        return read_meta(folder)
    except CorruptCache:
        return None


def usage(path: Path) -> tuple[int, float]:
    """The bytes of the regular files at `path` or under it and the newest modification time there, no link
    followed (an uncached import's scratch folder holds its set's folder)."""
    infos = [path.lstat()]
    if stat.S_ISDIR(infos[0].st_mode):
        infos += [Path(root, name).lstat() for root, folders, files in os.walk(path) for name in folders + files]
    return sum(info.st_size for info in infos if stat.S_ISREG(info.st_mode)), max(info.st_mtime for info in infos)


@dataclass(frozen=True)
class LoadOptions:
    """How to read a vector source: the shared --format, --limit, --skip-bad-lines, --trust-pickle."""

    file_format: str | None = None  # None: detect from the content
    limit: int | None = None
    skip_bad_lines: bool = False
    trust_pickle: bool = False
    show_progress: bool = True  # a bar on stderr when it is a terminal (off with --json)
    require_cache: bool = False  # an import whose job is to cache fails when it cannot; a run reads without one
    warn: Callable[[str], None] = field(default=lambda message: None, compare=False)


@dataclass(frozen=True)
class Wanted:
    """What a run asks the cache for: this file, as it is now, read this way."""

    path: Path
    fingerprint: Fingerprint
    file_format: str
    options: LoadOptions
    name: str | None

    @property
    def key(self) -> str:
        return self.fingerprint.key(self.file_format, self.options.limit)


_WARNED_SHARED: set[Path] = set()  # folders others can write, warned about in this process


def serve(folder: Path, wanted: Wanted) -> Vectors:
    """The set in `folder`, sound and made from this file (CorruptCache otherwise)."""
    meta = read_meta(folder)
    wanted.fingerprint.check_origin(meta, wanted.file_format, wanted.options.limit)
    vectors = load_cached(folder, wanted.name, meta)
    info = folder.lstat()  # an import makes it 0700: others can change what is read only through the folder
    shared = (f"owned by another user (uid {info.st_uid})" if info.st_uid != os.geteuid() else
              f"writable by others (mode {stat.S_IMODE(info.st_mode):o})"
              if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) else None)
    if shared and folder not in _WARNED_SHARED:
        _WARNED_SHARED.add(folder)
        wanted.options.warn(f"the cache {folder} is {shared}: whoever can write it decides what this run reads; "
                            "keep the cache in a folder only you can write (set ATTN_CLI_CACHE)")
    if meta["bad_lines"] and not wanted.options.skip_bad_lines:  # imported with --skip-bad-lines, asked without
        raise VectorsError(f"{meta['first_bad_lines'][0]}; fix the line or pass ", Option("skip_bad_lines", True),
                           " to leave such lines out")
    return vectors


class WordList(Sequence):
    """The words of a cached set, decoded only when asked for."""

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

    def not_utf8(self, row: int) -> DamagedCache:  # an import writes valid UTF-8: damaged since
        return DamagedCache(self.folder, f"{VOCAB_FILE} is not UTF-8 at row {row:,}")

    def __iter__(self):
        return iter(self[:])


class StoredIndex:
    """word -> row through the stored hash table, `.get` like a dict's; a damaged table is a DamagedCache, never a
    crash or an endless loop."""

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


def write_vocabulary(folder: Path, words: list[bytes]) -> None:  # distinct UTF-8 words, no newline inside
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
