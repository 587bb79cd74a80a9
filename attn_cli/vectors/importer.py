"""Import a GloVe / word2vec file into the cache: the life cycle behind a warm run's lookup.

`cached_vectors` runs when warm.py found nothing to serve: it checks the cache
folder for this exact file again (another process may have imported it since),
rebuilds it when corrupt, imports it when missing, and falls back to a
throw-away folder when the cache cannot be written. Imported only then, so a
warm run never loads the writers, the leftovers sweep, tempfile or the progress bar.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import shutil
import tempfile
import zlib
from pathlib import Path

from attn_cli.errors import Option, VectorsError
from attn_cli.vectors.cache import (CacheWriter, CorruptCache, Fingerprint, cache_root, cached_sets, layout_folder,
                                    load_cached, read_meta)
from attn_cli.vectors.formats import UTF8_BOM, open_maybe_compressed
from attn_cli.vectors.leftovers import (IMPORT, SCRATCH, delete, import_prefix, scratch_folder, scratch_prefix,
                                        sweep as sweep_leftovers)
from attn_cli.vectors.progress import progress_bar
from attn_cli.vectors.store import Vectors, is_lowercase_vocabulary
from attn_cli.vectors.warm import LoadOptions, Wanted, serve, served

__all__ = ["LoadOptions", "cached_vectors", "import_into"]  # LoadOptions: where callers have always found it


def cached_vectors(wanted: Wanted) -> Vectors:
    """The cached form of `wanted.path`, importing it first if needed."""
    root = cache_root()
    try:
        layout = layout_folder(root)
        vectors = _warm(layout / wanted.key, wanted)
        if vectors is not None:
            return vectors
        sweep_leftovers([(layout, IMPORT), (scratch_folder(), SCRATCH)])  # of imports killed long ago
        layout.mkdir(parents=True, exist_ok=True)
        # beside its final place (one file system: the rename is atomic), named as leftovers.py finds it if killed
        temporary = Path(tempfile.mkdtemp(prefix=import_prefix(wanted.key), dir=layout))
    except OSError as exc:
        return _uncached(wanted, f"cannot write the cache at {root} ({exc.strerror or exc})")
    try:
        import_into(temporary, wanted.path, wanted.fingerprint, wanted.file_format, wanted.options)
    except CacheFull as exc:
        shutil.rmtree(temporary, ignore_errors=True)
        return _uncached(wanted, exc.problem)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return _publish(temporary, layout / wanted.key, wanted)


def _uncached(wanted: Wanted, problem: str) -> Vectors:
    """The set read without a cache, with a warning saying why; an error instead when caching is the whole job
    (`vectors import`)."""
    if wanted.options.require_cache:
        raise VectorsError(f"{problem}; set ATTN_CLI_CACHE (or XDG_CACHE_HOME) to a writable folder with room, "
                           f"then import {wanted.path} again")
    wanted.options.warn(f"{problem}; reading {wanted.path} without a cache (set ATTN_CLI_CACHE to a writable "
                        "folder to make the next run fast)")
    return _without_cache(wanted)


def _without_cache(wanted: Wanted) -> Vectors:
    """Import into a throw-away folder in $TMPDIR, named as leftovers.py finds it should the run be killed."""
    with tempfile.TemporaryDirectory(prefix=scratch_prefix()) as scratch:
        folder = Path(scratch) / wanted.key
        folder.mkdir()
        import_into(folder, wanted.path, wanted.fingerprint, wanted.file_format, wanted.options)
        return load_cached(folder, wanted.name)  # the maps stay valid after the files are deleted


def _warm(final: Path, wanted: Wanted) -> Vectors | None:
    """The set at `final` when there is one made from this very file; None when there is none, or when it was
    corrupt, planted or not a folder (it is then reported and deleted, so the caller imports afresh)."""
    try:
        return served(final, wanted)
    except CorruptCache as exc:
        wanted.options.warn(f"the cache of {wanted.path} at {final} is corrupt ({exc}); rebuilding it")
        discard(final)
        return None


def _publish(temporary: Path, final: Path, wanted: Wanted) -> Vectors:
    """Rename this import into place and map it. When another process's import got there first, use that one
    if it checks out; when what is there cannot be replaced (not this user's to delete), map this import once."""
    if publish(temporary, final):
        vectors = load_cached(final, wanted.name)
        remove_stale(final)
        return vectors
    try:
        return serve(final, wanted)
    except CorruptCache as exc:
        wanted.options.warn(f"cannot replace the corrupt cache at {final} ({exc}); using this run's import of "
                            f"{wanted.path} once")
        return load_cached(temporary, wanted.name)  # the maps stay valid after the files are deleted
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def publish(temporary: Path, final: Path) -> bool:
    """Rename the finished folder into place; False when something was there first (another process's import,
    or a folder this user cannot delete), which the caller checks before using it."""
    try:
        os.rename(temporary, final)
    except OSError:
        if not os.path.lexists(final):
            raise
        return False
    return True


def discard(final: Path) -> None:
    """Delete what stands at a set's own place (leftovers.delete: a link itself, never what it leads to). What
    cannot be deleted stays (the importer then uses its own import once)."""
    delete(final)


def remove_stale(final: Path) -> None:
    """Delete earlier imports of the same file (same format and --limit) made before it changed."""
    meta = read_meta(final)
    same = (meta["source"]["path"], meta["format"], meta["limit"])
    for folder, other in cached_sets(final.parent.parent):
        if folder != final and other and (other["source"]["path"], other["format"], other["limit"]) == same:
            shutil.rmtree(folder, ignore_errors=True)


def import_into(folder: Path, path: Path, fingerprint: Fingerprint, file_format: str, options: LoadOptions) -> dict:
    """Read the whole source into `folder` (matrix, norms, vocabulary, meta.json); returns the metadata."""
    from attn_cli.vectors.readers import ReadOptions  # the parser's tables are built only when importing

    total = os.path.getsize(path)
    with open_maybe_compressed(path) as stream, \
            progress_bar(f"importing {path.name}", total, options.show_progress) as update:
        read = ReadOptions(limit=options.limit, skip_bad_lines=options.skip_bad_lines,
                           progress=lambda done, words: update(_position(stream, done), words))
        try:
            writer, report = _read(stream, path, file_format, folder, read)
        except (EOFError, zlib.error) as exc:  # a truncated or damaged .gz/.bz2
            raise VectorsError(f"cannot read {path}: {exc}; check the file is complete") from exc
        except OSError as exc:
            raise import_failure(exc, path, folder) from exc
    if not writer.words:
        writer.abandon()
        raise VectorsError(f"{path} holds no word vectors; pass a GloVe or word2vec vector file")
    if Fingerprint.of(path) != fingerprint:
        writer.abandon()
        raise VectorsError(f"{path} changed while it was being imported; run again once nothing is writing to it")
    words_sample = [word.decode("utf-8") for word in writer.words[:50_000]]
    try:  # complete the cache folder's files and its meta.json
        meta = writer.finish({
            "name": str(path), "format": file_format, "limit": options.limit,
            "lowercase": is_lowercase_vocabulary(words_sample), "source": dataclasses.asdict(fingerprint),
            "header_count": report.header_count, "bad_lines": report.bad_lines, "first_bad_lines": report.first_bad,
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
    """An OSError while importing, said as what the user can do: a full or read-only disk where the import
    writes (CacheFull: a run then reads without the cache), or a bad read."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS):
        return CacheFull(folder.parent, exc)
    return VectorsError(f"cannot read {path}: {exc.strerror or exc}; check the file is complete and readable")


def _read(stream, path: Path, file_format: str, folder: Path, read):
    from attn_cli.vectors.readers import guess_dims, read_binary, read_header, read_text

    if stream.peek(3)[:3] == UTF8_BOM:  # Windows editors start UTF-8 text with one: not part of the first word
        stream.read(3)

    if file_format == "word2vec-binary":
        header = read_header(stream)
        if header is None:
            raise VectorsError(f"{path} has no 'COUNT DIMS' header line; it is not word2vec binary "
                               "(try ", Option("format", "glove"), " or ", Option("format", "word2vec"), ")")
        writer = CacheWriter(folder, checked_dims(path, header[1]), read.limit)
        return writer, read_binary(stream, path, header[0], header[1], writer, read)
    header = read_header(stream) if file_format == "word2vec" else None
    if file_format == "word2vec" and header is None:
        raise VectorsError(f"{path} has no 'COUNT DIMS' header line; pass ", Option("format", "glove"),
                           " for GloVe text")
    sample = stream.read(1 << 20) if header is None else b""
    dims = checked_dims(path, header[1]) if header else guess_dims(sample)
    if dims < 1:
        raise VectorsError(f"{path} holds no word vectors; pass a GloVe or word2vec vector file")
    writer = CacheWriter(folder, dims, read.limit)
    report = read_text(stream, path, dims, writer, read, first_line_number=2 if header else 1, prefix=sample)
    report.header_count = header[0] if header else None
    return writer, report


def checked_dims(path: Path, dims: int) -> int:
    """The width a 'COUNT DIMS' header announces, if a vector file can have it (1 to MAX_DIMS)."""
    from attn_cli.vectors.textparse import MAX_DIMS

    if not 1 <= dims <= MAX_DIMS:
        raise VectorsError(f"{path}: its 'COUNT DIMS' header announces {dims:,} dimensions, and a vector file has "
                           f"1 to {MAX_DIMS:,}; the header is damaged, or this is not a word2vec file")
    return dims


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
    """What the import met that the user should know (once, at import time; `vectors info` keeps it)."""
    if meta["duplicates"]:
        options.warn(f"{path}: {counted(meta['duplicates'], 'duplicate word')} kept the first vector "
                     f"(e.g. {', '.join(repr(w) for w in meta['first_duplicates'])})")
    if meta["bad_lines"]:
        options.warn(f"{path}: skipped {counted(meta['bad_lines'], 'bad line')} "
                     f"(first: {meta['first_bad_lines'][0]})")
    if meta["invalid_utf8_words"]:
        options.warn(f"{path}: {counted(meta['invalid_utf8_words'], 'word')} not valid UTF-8; "
                     "the bad bytes became U+FFFD")
    header = meta["header_count"]
    if (header is not None and meta["limit"] is None
            and header != meta["count"] + meta["duplicates"] + meta["bad_lines"]):
        options.warn(f"{path}: the header announces {header:,} words but the file holds "
                     f"{meta['count'] + meta['duplicates'] + meta['bad_lines']:,}; using what the file holds")
