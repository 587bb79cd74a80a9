"""The import life cycle: a GloVe / word2vec file read into a temporary folder beside its place in the cache, a
rename, a sweep of stale temporaries. Loaded only when the cache has no sound set of the file (never on a warm run).

What killed imports and downloads leave is found by our names only, this user's files only, and is stale once
untouched for SWEEP_AFTER seconds (a running import or download writes all the time):

    <cache>/v1/.tmp-<key>-<random>/               an import, renamed into place when complete
    <gensim-data>/<name>/.<name>-<random>.part    a download, renamed into place when verified
    $TMPDIR/attn-cli-<random>[.bin]               a decompressed fastText model, or an uncached import
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import re
import shutil
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from attn_cli.errors import VectorsError
from attn_cli.vectors.cache import (CorruptCache, Fingerprint, LoadOptions, Wanted, cache_root,
                                    cached_sets, layout_folder, load_cached, serve, usage)
from attn_cli.vectors.formats import open_maybe_compressed
from attn_cli.vectors.progress import progress_bar
from attn_cli.vectors.store import Vectors, is_lowercase_vocabulary

__all__ = ["LoadOptions", "cached_vectors", "import_into"]  # LoadOptions: where callers have always found it
SWEEP_AFTER = 600.0
_RANDOM = r"[a-z0-9_]{8}"  # tempfile's random part, after each prefix
IMPORT = re.compile(rf"\.tmp-.+-[0-9a-f]{{16}}-{_RANDOM}")  # in the cache's v1
DOWNLOAD = re.compile(rf"\.(?P<name>.+)-{_RANDOM}\.part")  # in the gensim-data folder `name`
SCRATCH = re.compile(rf"attn-cli-{_RANDOM}(\.bin)?")  # in $TMPDIR
SCRATCH_PREFIX = "attn-cli-"
Places = list[tuple[Path, re.Pattern]]


def cached_vectors(wanted: Wanted) -> Vectors:
    """The cached form of `wanted.path`, imported first if needed; a corrupt set is reported and rebuilt, and a
    cache that cannot be written is read around."""
    root = cache_root()
    try:
        final = layout_folder(root) / wanted.key
        if os.path.lexists(final):
            try:
                return serve(final, wanted)
            except CorruptCache as exc:
                wanted.options.warn(f"the cache of {wanted.path} at {final} is corrupt ({exc}); rebuilding it")
                delete(final)  # a link itself, never what it leads to; what cannot be deleted stays
        sweep([(final.parent, IMPORT), scratch_place()])
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = tempfile.TemporaryDirectory(prefix=f".tmp-{wanted.key}-", dir=final.parent,
                                              ignore_cleanup_errors=True)  # renamed into place, else deleted
    except OSError as exc:
        return _uncached(wanted, f"cannot write the cache at {root} ({exc.strerror or exc})")
    with staging as temporary:
        try:
            import_into(Path(temporary), wanted)
        except CacheFull as exc:
            problem = exc.problem
        else:
            return _publish(Path(temporary), final, wanted)
    return _uncached(wanted, problem)


def _uncached(wanted: Wanted, problem: str) -> Vectors:
    """The set imported into a throw-away folder, with a warning; an error when caching is the whole job."""
    if wanted.options.require_cache:
        raise VectorsError(f"{problem}; set ATTN_CLI_CACHE (or XDG_CACHE_HOME) to a writable folder with room, "
                           f"then import {wanted.path} again")
    wanted.options.warn(f"{problem}; reading {wanted.path} without a cache (set ATTN_CLI_CACHE to a writable "
                        "folder to make the next run fast)")
    with tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX) as scratch:
        folder = Path(scratch) / wanted.key
        folder.mkdir()
        import_into(folder, wanted)
        return load_cached(folder, wanted.name)  # the maps stay valid after the files are deleted


def _publish(temporary: Path, final: Path, wanted: Wanted) -> Vectors:
    """Rename this import into place and map it, deleting the imports of earlier versions of the file; when another
    process's import got there first, use it if sound, else map this import once."""
    try:
        os.rename(temporary, final)
    except OSError:
        if not os.path.lexists(final):
            raise
    else:
        vectors = load_cached(final, wanted.name)
        same = (wanted.fingerprint.path, wanted.file_format, wanted.options.limit)
        for folder, other in cached_sets(final.parent.parent):
            if folder != final and other and (other["source"]["path"], other["format"], other["limit"]) == same:
                shutil.rmtree(folder, ignore_errors=True)
        return vectors
    try:
        return serve(final, wanted)
    except CorruptCache as exc:
        wanted.options.warn(f"cannot replace the corrupt cache at {final} ({exc}); using this run's import of "
                            f"{wanted.path} once")
        return load_cached(temporary, wanted.name)  # the maps stay valid after the files are deleted


def import_into(folder: Path, wanted: Wanted) -> dict:
    """Read the whole source into `folder` (matrix, norms, vocabulary, meta.json); returns the metadata."""
    from attn_cli.vectors.readers import read_vectors  # the parser's tables are built only when importing

    path, options = wanted.path, wanted.options
    with open_maybe_compressed(path) as stream, \
            progress_bar(f"importing {path.name}", os.path.getsize(path), options.show_progress) as update:
        try:
            writer = read_vectors(stream, path, wanted.file_format, folder, options,
                                  lambda done, words: update(_position(stream, done), words))
        except (EOFError, zlib.error) as exc:  # a truncated or damaged .gz/.bz2
            raise VectorsError(f"cannot read {path}: {exc}; check the file is complete") from exc
        except OSError as exc:
            raise import_failure(exc, path, folder) from exc
    if not writer.words or Fingerprint.of(path) != wanted.fingerprint:
        writer.abandon()
        raise VectorsError(f"{path} holds no word vectors; pass a GloVe or word2vec vector file" if not writer.words
                           else f"{path} changed while it was being imported; run again once nothing is writing to it")
    try:  # complete the cache folder's files and its meta.json
        meta = writer.finish({
            "name": str(path), "format": wanted.file_format, "source": dataclasses.asdict(wanted.fingerprint),
            "lowercase": is_lowercase_vocabulary([word.decode("utf-8") for word in writer.words[:50_000]]),
        })
    except OSError as exc:
        raise import_failure(exc, path, folder) from exc
    _warn_about(path, meta, options)
    return meta


class CacheFull(VectorsError):
    """The folder an import writes ran out of room (a full or read-only disk, a quota, the file size limit)."""

    def __init__(self, folder: Path, exc: OSError) -> None:
        self.problem = f"cannot write the cache in {folder}: {exc.strerror}"
        super().__init__(f"{self.problem}; free some space there or set ATTN_CLI_CACHE to a folder on another disk")


def import_failure(exc: OSError, path: Path, folder: Path) -> VectorsError:
    """An OSError while importing: CacheFull (a run then reads without the cache) or a bad read."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS):
        return CacheFull(folder.parent, exc)
    return VectorsError(f"cannot read {path}: {exc.strerror or exc}; check the file is complete and readable")


def _position(stream, done: int) -> int:
    """Bytes of the file on disk consumed so far (the compressed position for .gz/.bz2)."""
    inner = getattr(stream, "fileobj", None) or getattr(stream, "_fp", None)
    try:
        return inner.tell() if inner is not None else done
    except (OSError, ValueError):
        return done


def counted(number: int, noun: str) -> str:
    """'1 bad line', '2 bad lines'."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _warn_about(path: Path, meta: dict, options: LoadOptions) -> None:
    """What the import met that the user should know (once; `vectors info` keeps it)."""
    if meta["duplicates"]:
        options.warn(f"{path}: {counted(meta['duplicates'], 'duplicate word')} kept the first vector "
                     f"(e.g. {', '.join(repr(w) for w in meta['first_duplicates'])})")
    if meta["bad_lines"]:
        options.warn(f"{path}: skipped {counted(meta['bad_lines'], 'bad line')} (first: {meta['first_bad_lines'][0]})")
    if meta["invalid_utf8_words"]:
        options.warn(f"{path}: {counted(meta['invalid_utf8_words'], 'word')} not valid UTF-8; "
                     "the bad bytes became U+FFFD")
    held = meta["count"] + meta["duplicates"] + meta["bad_lines"]
    if meta["header_count"] not in (None, held) and meta["limit"] is None:
        options.warn(f"{path}: the header announces {meta['header_count']:,} words but the file holds {held:,}; "
                     "using what the file holds")


@dataclass(frozen=True)
class Leftover:
    """One file or folder a killed process left, found by its name."""

    path: Path
    bytes: int
    modified: float  # the newest modification time of the path and anything inside it

    @property
    def stale(self) -> bool:
        return time.time() - self.modified >= SWEEP_AFTER


def scratch_place() -> tuple[Path, re.Pattern]:
    return Path(tempfile.gettempdir()), SCRATCH


def every_place(data_dir: Path) -> Places:
    """The cache's v1 (not when it is a link, never followed), every gensim-data folder, $TMPDIR."""
    places: Places = []
    with contextlib.suppress(OSError):  # a linked v1: cached_vector_sets says so
        places.append((layout_folder(), IMPORT))
    with contextlib.suppress(OSError):
        places += [(Path(entry.path), DOWNLOAD) for entry in os.scandir(data_dir)
                   if entry.is_dir(follow_symlinks=False)]
    return places + [scratch_place()]


def find(places: Places) -> list[Leftover]:
    """This user's leftovers in those places, each folder searched for its kind's names; oldest first."""
    found = []
    for folder, pattern in places:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            match = pattern.fullmatch(entry.name)
            if match is None or match.groupdict().get("name", folder.name) != folder.name:
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid == os.geteuid():
                    found.append(Leftover(Path(entry.path), *usage(Path(entry.path))))
            except OSError:  # removed since it was listed
                continue
    return sorted(found, key=lambda item: item.modified)


def sweep(places: Places) -> None:
    for item in find(places):
        if item.stale:
            delete(item.path)


def delete(path: Path) -> None:
    """A folder with all it holds, or a file or link itself (never what a link leads to); what cannot be
    deleted stays."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
