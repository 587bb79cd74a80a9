"""The vector sets attn-cli keeps, as library functions (`attn-cli vectors` is their client). Only what attn-cli
made is ever deleted: a folder without valid metadata may not be its own and is left alone, said to `warn`."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from attn_cli.errors import OutputError, SettingsError, SettingsTypeError, VectorsError, path_argument, shorten
from attn_cli.files import AtomicFile, write_all
from attn_cli.vectors.cache import CorruptCache, cache_root, cached_sets, load_cached, read_meta, usage
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:  # loaded when leftovers are looked for: a warm run never does
    from attn_cli.vectors.importer import Leftover

Warn = Callable[[str], None]
EXPORT_FORMATS = ("word2vec", "word2vec-binary")  # what export_vectors writes; gensim's load_word2vec_format reads both
EXPORT_ROWS = 4096  # rows formatted and written at a time: memory stays flat for a set of millions
FLOAT_TEXT = "%.9g"  # nine significant digits: every float32 read back exactly
LEFT_ALONE = ("it has no valid meta.json, so it may not be a set attn-cli made and is left alone: look inside and "
              "delete it yourself if it is one")


def _quiet(message: str) -> None:
    pass


cache_folder = cache_root  # the public name of where imported sets live


@dataclass(frozen=True)
class CachedSet:
    """One folder of the cache and the set its metadata describes (`meta` None: unreadable, so `corrupt`)."""

    folder: Path
    meta: dict[str, Any] | None

    @property
    def id(self) -> str:
        return self.folder.name

    @property
    def corrupt(self) -> bool:
        return self.meta is None

    @cached_property
    def bytes(self) -> int:
        return usage(self.folder)[0]

    def describe(self) -> dict[str, Any]:
        meta = self.meta or {}
        return {"id": self.id, "name": meta.get("name"), "format": meta.get("format"), "count": meta.get("count"),
                "dims": meta.get("dims"), "bytes": self.bytes, "corrupt": self.corrupt}

    def load(self) -> Vectors:
        """The set, its files checked; a corrupt folder is a VectorsError naming the remedy."""
        try:
            return load_cached(self.folder)
        except CorruptCache as exc:
            fix = f"remove it with attn-cli vectors remove {self.id}" if self.meta else LEFT_ALONE
            raise VectorsError(f"the cache folder {self.folder} is corrupt ({exc}); {fix}") from exc

    def __repr__(self) -> str:
        meta = self.meta
        shape = "corrupt" if meta is None else f"{meta.get('name')!r}, {meta.get('count'):,} x {meta.get('dims')}"
        return f"<CachedSet {self.id}: {shape}>"


def cached_vector_sets(warn: Warn = _quiet) -> list[CachedSet]:
    """Every set in the cache, newest first; none (with a warning) when its v1 is a symbolic link."""
    try:
        return [CachedSet(folder, meta) for folder, meta in cached_sets()]
    except OSError as exc:
        warn(f"{exc.strerror}; remove the link, or set ATTN_CLI_CACHE to another folder")
        return []


def find_cached(source: str, warn: Warn = _quiet) -> list[CachedSet]:
    """The cached set whose id is `source`, or every one imported from the file or gensim-data set it names,
    newest first; never a path into the cache (`..` or `v1/x` name no set)."""
    from attn_cli.vectors import gensim_data, unreachable

    source = path_argument("source", source)
    listed = cached_vector_sets(warn)
    named = [cached for cached in listed if cached.id == source]
    if named:
        return named
    path = Path(source).expanduser()
    try:
        if not path.is_file() and gensim_data.looks_like_name(source):
            try:
                path = gensim_data.resolve(source)
            except VectorsError:
                return []
        if not path.is_file():
            return []
    except OSError as exc:
        raise unreachable(source, exc) from None
    resolved = str(path.resolve())
    return [cached for cached in listed if cached.meta and cached.meta["source"]["path"] == resolved]


def describe_vectors(vectors: Vectors) -> dict[str, Any]:
    """A vector set's shape, provenance and what its import met (`attn-cli vectors info`)."""
    _require_vectors(vectors)
    folder = vectors.details.get("cache")
    if folder and not Path(folder).is_dir():  # read without a cache
        folder = None
    meta = read_meta(Path(folder)) if folder else {}
    return {
        "name": vectors.name, "format": vectors.details.get("format"), "count": vectors.count, "dims": vectors.dims,
        "lowercase": vectors.lowercase,
        "cache": {"path": folder, "bytes": usage(Path(folder))[0]} if folder else None,
        "source": meta.get("source"), "limit": meta.get("limit"), "header_count": meta.get("header_count"),
        "duplicates": meta.get("duplicates", 0), "bad_lines": meta.get("bad_lines", 0),
        "invalid_utf8_words": meta.get("invalid_utf8_words", 0),
    }


def _require_vectors(vectors: object) -> None:
    if not isinstance(vectors, Vectors):
        raise SettingsTypeError("vectors", "must be attn_cli.Vectors (from load_vectors), got "
                                           f"{type(vectors).__name__}")


def remove_cached(sets: list[CachedSet], warn: Warn = _quiet, *, named: bool = False) -> list[Path]:
    """Delete these sets' folders, returning them; one without valid metadata is left alone (a VectorsError when
    it was `named`, else a warning)."""
    for cached in sets:
        if not isinstance(cached, CachedSet):
            raise SettingsTypeError("sets", "must be a list of attn_cli.CachedSet (from cached_vector_sets or "
                                            f"find_cached), got {type(cached).__name__}")
    for cached in [cached for cached in sets if cached.corrupt]:
        if named:
            raise VectorsError(f"{cached.folder}: {LEFT_ALONE}")
        warn(f"{cached.folder}: {LEFT_ALONE}")
    removed = [cached.folder for cached in sets if not cached.corrupt]
    for folder in removed:
        shutil.rmtree(folder, ignore_errors=True)
    return removed


def vector_leftovers() -> list[Leftover]:
    """What killed imports and downloads of this user left behind (in the cache, gensim-data's folders, $TMPDIR)."""
    from attn_cli.vectors.gensim_data import data_dir
    from attn_cli.vectors.importer import every_place, find

    return find(every_place(data_dir()))


def remove_leftovers(warn: Warn = _quiet) -> list[Leftover]:
    """Delete the stale leftovers; a recent one may still be written, and is kept with a warning."""
    from attn_cli.vectors.importer import SWEEP_AFTER, delete

    found = vector_leftovers()
    for item in found:
        if item.stale:
            delete(item.path)
        else:
            warn(f"kept {item.path}: touched in the last {SWEEP_AFTER / 60:g} minutes, it may still be written")
    return [item for item in found if item.stale]


def download_vectors(name: str, *, progress: bool = True) -> Path:
    """Fetch a gensim-data model, check its MD5 and store it in $GENSIM_DATA_DIR (nothing is run); its path."""
    from attn_cli.vectors import gensim_data

    if not isinstance(name, str):
        raise SettingsTypeError("name", f"must be a gensim-data name (str), got {type(name).__name__}")
    return gensim_data.download(name, show_progress=progress)


def export_vectors(vectors: Vectors, path: str | os.PathLike[str], *, format: str = "word2vec") -> None:
    """Write `vectors` as a word2vec text or binary file (what gensim's load_word2vec_format reads), whole or not
    at all: a failed write is an OutputError naming `path`; a word that is empty or holds whitespace would split
    its line, a VectorsError names it and nothing is written."""
    _require_vectors(vectors)
    if format not in EXPORT_FORMATS:
        raise SettingsError("format", f"must be {' or '.join(EXPORT_FORMATS)} (got {format!r})")
    path = path_argument("path", path)
    try:
        with AtomicFile(path) as target:
            write_all(target.stream, f"{vectors.count} {vectors.dims}\n".encode())
            for start in range(0, vectors.count, EXPORT_ROWS):
                write_all(target.stream, _word2vec_rows(vectors, start, binary=format == "word2vec-binary"))
    except OSError as exc:
        raise OutputError.of_file(path, exc) from exc


def _word2vec_rows(vectors: Vectors, start: int, binary: bool) -> bytes:
    """EXPORT_ROWS words from `start` and their float32 values, as word2vec lines."""
    words = list(vectors.words[start:start + EXPORT_ROWS])
    unfit = next((word for word in words if word.split() != [word]), None)
    if unfit is not None:
        raise VectorsError(f"{vectors.name}: the word {shorten(unfit)!r} is empty or holds whitespace, which a "
                           "word2vec file cannot hold (it separates words from values by spaces); nothing was "
                           "written")
    values = np.asarray(vectors.matrix[start:start + EXPORT_ROWS], dtype="<f4")  # [b, d]
    if binary:
        return b"".join(word.encode("utf-8") + b" " + row.tobytes() + b"\n" for word, row in zip(words, values))
    return "".join(f"{word} {' '.join(FLOAT_TEXT % value for value in row)}\n"
                   for word, row in zip(words, values.tolist())).encode("utf-8")
