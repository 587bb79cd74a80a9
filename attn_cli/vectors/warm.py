"""Serve a vector file from the cache when a sound import of it is there: all a warm run needs, and no more.

`warm_vectors` finds the cache folder for this exact file, checks it and maps it.
Everything else, a missing set to import, a corrupt one to report and rebuild, the
leftovers to sweep, a cache that cannot be written, is importer.py's life cycle,
imported only when this finds nothing to serve: a warm run never loads the
importer, the parsers (readers, textparse), the leftovers sweep, tempfile or the
progress bar.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from attn_cli.errors import Option, VectorsError
from attn_cli.vectors.cache import (CorruptCache, Fingerprint, layout_folder, load_cached, read_meta,
                                    shared_with_others)
from attn_cli.vectors.store import Vectors


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

    @classmethod
    def of(cls, path: Path, file_format: str, options: LoadOptions, name: str | None = None) -> Wanted:
        return cls(path, Fingerprint.of(path), file_format, options, name)

    @property
    def key(self) -> str:
        return self.fingerprint.key(self.file_format, self.options.limit)


def warm_vectors(wanted: Wanted) -> Vectors | None:
    """The cached set of this very file when a sound one is in the cache; None when there is none, when it is
    corrupt, or when the cache cannot be reached: the importer then deals with it, and says what it met."""
    try:
        return served(layout_folder() / wanted.key, wanted)
    except (OSError, CorruptCache):
        return None


def served(final: Path, wanted: Wanted) -> Vectors | None:
    """The set at `final` (`serve`), or None when nothing is there; CorruptCache when what is there is unsound."""
    return serve(final, wanted) if os.path.lexists(final) else None


_WARNED_SHARED: set[Path] = set()  # folders others can write, warned about in this process


def serve(folder: Path, wanted: Wanted) -> Vectors:
    """The set in `folder`, checked to be sound and made from this file (CorruptCache otherwise); a folder
    others can write is served with a warning, once per run."""
    meta = read_meta(folder)
    wanted.fingerprint.check_origin(meta, wanted.file_format, wanted.options.limit)
    vectors = load_cached(folder, wanted.name, meta)
    shared = shared_with_others(folder)
    if shared and folder not in _WARNED_SHARED:
        _WARNED_SHARED.add(folder)
        wanted.options.warn(f"the cache {folder} is {shared}: whoever can write it decides what this run reads; "
                            "keep the cache in a folder only you can write (set ATTN_CLI_CACHE)")
    refuse_skipped_lines(meta, wanted.options)
    return vectors


def refuse_skipped_lines(meta: dict, options: LoadOptions) -> None:
    """A cache imported with --skip-bad-lines serves a run without it only if no line was skipped."""
    if meta.get("bad_lines") and not options.skip_bad_lines:
        raise VectorsError(f"{meta['first_bad_lines'][0]}; fix the line or pass ", Option("skip_bad_lines", True),
                           " to leave such lines out")
