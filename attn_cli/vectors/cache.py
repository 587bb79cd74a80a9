"""The tool's own cache of imported vector files: safe to load, fast to map, written atomically.

Layout, under `$ATTN_CLI_CACHE` or `$XDG_CACHE_HOME/attn-cli` (default
`~/.cache/attn-cli`), one folder per imported source, `v1/<stem>-<key>/`:

    matrix.npy    float32 [N, d], memory-mapped, loaded with allow_pickle=False
    norms.npy     float32 [N], |row| for cosine neighbours without touching every row
    vocab.txt, offsets.npy, index.npy   the words and their stored hash index (vocab.py)
    meta.json     source path, size, mtime, sampled content hash, format, count, dims, ...

The key hashes the resolved path, size, mtime, a sampled content hash, the
format and --limit, so an edited or replaced file is imported again. An import
writes into `v1/.tmp-<key>-<pid>-<random>/` and renames it into place in one
step: a killed import leaves no half cache (its leftovers are swept by the next
import), and when several processes import the same file at once, the first
rename wins and the others use its result.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attn_cli.vectors.store import Vectors, row_norms
from attn_cli.vectors.vocab import INDEX_FILE, OFFSETS_FILE, VOCAB_FILE, StoredIndex, WordList, write_vocabulary

LAYOUT = "v1"
MATRIX_FILE, NORMS_FILE, META_FILE = "matrix.npy", "norms.npy", "meta.json"
_SAMPLE_BYTES = 1 << 16
_HEADER_BYTES = 128  # fixed .npy header size, so the final shape can be written in place


class CorruptCache(Exception):
    """A cache folder that does not hold what its metadata promises."""


def cache_root() -> Path:
    """$ATTN_CLI_CACHE, else $XDG_CACHE_HOME/attn-cli, else ~/.cache/attn-cli."""
    if os.environ.get("ATTN_CLI_CACHE"):
        return Path(os.environ["ATTN_CLI_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "attn-cli"


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
        stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in Path(self.path).name)[:40]
        return f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


class CacheWriter:
    """The sink the readers fill: rows stream into matrix.npy, words are de-duplicated on the way."""

    def __init__(self, folder: Path, dims: int, limit: int | None) -> None:
        self.folder, self.dims, self.limit = folder, dims, limit
        self.words: list[bytes] = []
        self.seen: set[bytes] = set()
        self.norms: list[np.ndarray] = []
        self.duplicates = 0
        self.first_duplicates: list[str] = []
        self.replaced_utf8 = 0
        self._matrix = open(folder / MATRIX_FILE, "wb")
        self._matrix.write(b"\0" * _HEADER_BYTES)

    def add(self, words: list[bytes], rows: np.ndarray) -> int:
        words = self._valid_utf8(words)
        keep = []
        for word in words:
            if word in self.seen or (self.limit is not None and len(self.words) >= self.limit):
                keep.append(False)
                if word in self.seen:
                    self.duplicates += 1
                    if len(self.first_duplicates) < 3:
                        self.first_duplicates.append(word.decode("utf-8"))
                continue
            self.seen.add(word)
            self.words.append(word)
            keep.append(True)
        if not all(keep):
            rows = rows[np.asarray(keep, dtype=bool)]
        rows = np.ascontiguousarray(rows, dtype="<f4")
        self._matrix.write(rows.tobytes())
        self.norms.append(row_norms(rows))  # a row longer than float32 holds stores inf: never a neighbour
        return len(self.words)

    def _valid_utf8(self, words: list[bytes]) -> list[bytes]:
        """Words as valid UTF-8: undecodable bytes become U+FFFD (counted, reported)."""
        try:
            b"\n".join(words).decode("utf-8")
            return words
        except UnicodeDecodeError:
            fixed = []
            for word in words:
                try:
                    word.decode("utf-8")
                    fixed.append(word)
                except UnicodeDecodeError:
                    self.replaced_utf8 += 1
                    fixed.append(word.decode("utf-8", "replace").encode("utf-8"))
            return fixed

    def finish(self, meta: dict) -> dict:
        """Write the .npy header with the final shape, the norms, the vocabulary and meta.json."""
        count = len(self.words)
        header = {"descr": "<f4", "fortran_order": False, "shape": (count, self.dims)}
        text = repr(header).encode("latin1")
        text += b" " * (_HEADER_BYTES - 10 - len(text) - 1) + b"\n"
        self._matrix.seek(0)
        self._matrix.write(b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text)
        self._matrix.close()
        np.save(self.folder / NORMS_FILE, np.concatenate(self.norms) if self.norms else np.zeros(0, np.float32),
                allow_pickle=False)
        write_vocabulary(self.folder, self.words)
        meta = {**meta, "layout": LAYOUT, "count": count, "dims": self.dims, "duplicates": self.duplicates,
                "first_duplicates": self.first_duplicates, "invalid_utf8_words": self.replaced_utf8}
        # ASCII: a file name that is not UTF-8 (its bytes as lone surrogates) survives the round trip
        (self.folder / META_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")
        return meta

    def abandon(self) -> None:
        if not self._matrix.closed:
            self._matrix.close()


def new_temporary_folder(root: Path, key: str) -> Path:
    """A private folder next to the final one (same file system: the rename is atomic)."""
    layout = root / LAYOUT
    layout.mkdir(parents=True, exist_ok=True)
    sweep_abandoned(layout)
    return Path(tempfile.mkdtemp(prefix=f".tmp-{key}-{os.getpid()}-", dir=layout))


def publish(temporary: Path, final: Path) -> Path:
    """Rename the finished folder into place; if another process won the race, keep theirs."""
    try:
        os.rename(temporary, final)
    except OSError:
        shutil.rmtree(temporary, ignore_errors=True)
        if not (final / META_FILE).is_file():
            raise
    return final


def sweep_abandoned(layout: Path) -> None:
    """Remove temporary folders of imports whose process is gone (killed, crashed)."""
    for folder in layout.glob(".tmp-*"):
        try:
            pid = int(folder.name.rsplit("-", 2)[-2])
        except (ValueError, IndexError):
            continue
        if not _process_alive(pid):
            shutil.rmtree(folder, ignore_errors=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_meta(folder: Path) -> dict:
    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorruptCache(f"unreadable {META_FILE}: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("layout") != LAYOUT:
        raise CorruptCache(f"{META_FILE} is not a {LAYOUT} cache description")
    return meta


def load_cached(folder: Path, name: str | None = None, meta: dict | None = None) -> Vectors:
    """Map a cache folder as `Vectors`, after checking every file matches meta.json (`meta`, if already read)."""
    meta = meta or read_meta(folder)
    try:
        matrix = np.load(folder / MATRIX_FILE, mmap_mode="r", allow_pickle=False)
        norms = np.load(folder / NORMS_FILE, mmap_mode="r", allow_pickle=False)
        words = WordList(folder)
        index = StoredIndex(folder, words)
    except (OSError, ValueError) as exc:
        raise CorruptCache(str(exc)) from exc
    count, dims = meta.get("count"), meta.get("dims")
    if not isinstance(count, int) or not isinstance(dims, int):
        raise CorruptCache(f"{META_FILE} does not give the word count and width")
    problems = [
        (matrix.shape != (count, dims) or matrix.dtype != np.float32, f"{MATRIX_FILE} is not {count} x {dims} float32"),
        (norms.shape != (count,), f"{NORMS_FILE} does not hold {count} norms"),
        (len(words) != count or words.offsets[-1] != (folder / VOCAB_FILE).stat().st_size,
         f"{VOCAB_FILE} / {OFFSETS_FILE} do not hold {count} words"),
        (len(index.table) < 2 * count or len(index.table) & (len(index.table) - 1), f"{INDEX_FILE} is malformed"),
    ]
    for failed, reason in problems:
        if failed:
            raise CorruptCache(reason)
    details = {"format": meta.get("format"), "source": meta.get("source", {}).get("path"), "cache": str(folder)}
    return Vectors(name=name or meta.get("name") or folder.name, words=words, matrix=matrix,
                   lowercase=bool(meta.get("lowercase")), details=details, stored_index=index, norms=norms)


def cached_sets(root: Path | None = None) -> list[tuple[Path, dict | None]]:
    """Every cache folder with its metadata (None when unreadable), newest first."""
    layout = (root or cache_root()) / LAYOUT
    if not layout.is_dir():
        return []
    found: list[tuple[float, Path, dict | None]] = []
    for folder in layout.iterdir():
        if folder.name.startswith(".tmp-"):  # another process's import, which may vanish at any moment
            continue
        try:
            modified = folder.stat().st_mtime
        except FileNotFoundError:  # removed (by another process) since it was listed
            continue
        if folder.is_dir():
            try:
                found.append((modified, folder, read_meta(folder)))
            except CorruptCache:
                found.append((modified, folder, None))
    return [(folder, meta) for _, folder, meta in sorted(found, key=lambda item: item[0], reverse=True)]


def folder_size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())

