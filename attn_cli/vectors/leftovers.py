"""What killed imports and downloads leave: temporaries named with their process id, found by our names only.

    <cache>/v1/.tmp-<key>-<pid>-<random>/               an import, renamed into place when complete
    <gensim-data>/<name>/.<name>-<pid>-<random>.part    a download, renamed into place when verified
    $TMPDIR/attn-cli-<pid>-<random>[.bin]               a decompressed fastText model, or an uncached import

A run sweeps the ones untouched for SWEEP_AFTER seconds whose process is gone (a running import touches its files
all the time; a recent one may be another machine's, sharing the folder); `vectors remove --leftovers` sweeps every
one whose process is gone. Only this user's files are looked at.
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

SWEEP_AFTER = 600.0  # seconds untouched before a stale leftover is swept without being asked
_RANDOM = r"[a-z0-9_]{8}"  # tempfile's random part, after each prefix below
IMPORT = re.compile(rf"\.tmp-.+-[0-9a-f]+-(?P<pid>\d+)-{_RANDOM}")  # in the cache's v1 (a key ends in hex digits)
DOWNLOAD = re.compile(rf"\.(?P<name>.+)-(?P<pid>\d+)-{_RANDOM}\.part")  # in the gensim-data folder `name`
SCRATCH = re.compile(rf"attn-cli-(?P<pid>\d+)-{_RANDOM}(\.bin)?")  # in $TMPDIR
Places = list[tuple[Path, re.Pattern]]


def prefix(kind: str) -> str:
    """The start of a temporary's name, as its pattern above finds it: kind "" for $TMPDIR, ".tmp-<key>" for an
    import, ".<name>" for a download."""
    return f"{kind or 'attn-cli'}-{os.getpid()}-"


@dataclass(frozen=True)
class Leftover:
    """One file or folder a killed process left, found by its name."""

    path: Path
    pid: int
    bytes: int
    modified: float  # the newest modification time of the path and anything inside it

    @property
    def running(self) -> bool:
        """True when a process of this id runs (or may: another user's cannot be signalled)."""
        try:
            os.kill(self.pid, 0)
        except (ProcessLookupError, OverflowError):  # none runs, or an id no process can have
            return False
        except PermissionError:
            pass
        return True


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
                    found.append(Leftover(Path(entry.path), int(match["pid"]), *_usage(Path(entry.path))))
            except OSError:  # removed since it was listed
                continue
    return sorted(found, key=lambda item: item.modified)


def sweep(places: Places, min_age: float = SWEEP_AFTER) -> list[Leftover]:
    """Remove the leftovers in those places untouched for `min_age` seconds whose process is gone; returns them."""
    stale = [item for item in find(places) if time.time() - item.modified >= min_age and not item.running]
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
