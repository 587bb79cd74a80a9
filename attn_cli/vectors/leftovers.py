"""What killed imports and downloads leave: temporaries found by our names only, swept once stale.

    <cache>/v1/.tmp-<key>-<random>/               an import, renamed into place when complete
    <gensim-data>/<name>/.<name>-<random>.part    a download, renamed into place when verified
    $TMPDIR/attn-cli-<random>[.bin]               a decompressed fastText model, or an uncached import

A temporary untouched for SWEEP_AFTER seconds is stale: a running import or download writes its files all the time.
Only this user's files are looked at.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SWEEP_AFTER = 600.0
_RANDOM = r"[a-z0-9_]{8}"  # tempfile's random part, after each prefix
IMPORT = re.compile(rf"\.tmp-.+-[0-9a-f]{{16}}-{_RANDOM}")  # in the cache's v1
DOWNLOAD = re.compile(rf"\.(?P<name>.+)-{_RANDOM}\.part")  # in the gensim-data folder `name`
SCRATCH = re.compile(rf"attn-cli-{_RANDOM}(\.bin)?")  # in $TMPDIR
SCRATCH_PREFIX = "attn-cli-"
Places = list[tuple[Path, re.Pattern]]


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


def every_place(layout: Path | None, data_dir: Path) -> Places:
    """The cache's v1 (None when it is a link, never followed), every gensim-data folder, $TMPDIR."""
    try:
        downloads = [(Path(entry.path), DOWNLOAD) for entry in os.scandir(data_dir)
                     if entry.is_dir(follow_symlinks=False)]
    except OSError:
        downloads = []
    return ([(layout, IMPORT)] if layout else []) + downloads + [scratch_place()]


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
                    found.append(Leftover(Path(entry.path), *_usage(Path(entry.path))))
            except OSError:  # removed since it was listed
                continue
    return sorted(found, key=lambda item: item.modified)


def sweep(places: Places) -> list[Leftover]:
    """Remove the stale leftovers in those places; returns them."""
    stale = [item for item in find(places) if item.stale]
    for item in stale:
        delete(item.path)
    return stale


def delete(path: Path) -> None:
    """A folder with all it holds, or a file or link itself (never what a link leads to); what cannot be
    deleted stays."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass


def _usage(path: Path) -> tuple[int, float]:
    """The bytes of the regular files at or under `path` and the newest modification time there (no link followed)."""
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        return (info.st_size if stat.S_ISREG(info.st_mode) else 0), info.st_mtime
    size, modified = 0, info.st_mtime
    for folder, _, files in os.walk(path):
        for name in files:
            inner = os.lstat(os.path.join(folder, name))
            size, modified = size + inner.st_size, max(modified, inner.st_mtime)
    return size, modified
