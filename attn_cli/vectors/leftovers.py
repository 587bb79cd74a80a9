"""What killed imports and downloads leave behind: found by our own names only, swept once their process is gone.

Each kind is named with the id of the process that made it, and removed by that
process when it finishes or fails; only a killed process (SIGKILL, a power cut)
leaves one:

    <cache>/v1/.tmp-<key>-<pid>-<random>/               an import, renamed into place when complete
    <gensim-data>/<name>/.<name>-<pid>-<random>.part    a download, renamed into place when verified
    $TMPDIR/attn-cli-<pid>-<random>[.bin]               a decompressed fastText model, or an import
                                                        that could not write the cache

A leftover is stale when no process of its id runs. Imports, downloads and
decompressions sweep the stale ones untouched for SWEEP_AFTER seconds (a process
id can belong to another machine or container sharing the folder, where it looks
dead: a running import touches its files all the time); `attn-cli vectors remove
--leftovers` (and `--all`) removes every stale one at once. Only this user's
files are looked at.
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


def import_prefix(key: str) -> str:
    """The temporary folder of an import into the cache (IMPORT finds it): `.tmp-<key>-<pid>-`."""
    return f".tmp-{key}-{os.getpid()}-"


def download_prefix(name: str) -> str:
    """The `.part` file of a download (DOWNLOAD finds it, with the suffix `.part`): `.<name>-<pid>-`."""
    return f".{name}-{os.getpid()}-"


def scratch_prefix() -> str:
    """A file or folder in $TMPDIR, an uncached import or a decompressed model (SCRATCH finds it)."""
    return f"attn-cli-{os.getpid()}-"
Places = list[tuple[Path, re.Pattern]]


@dataclass(frozen=True)
class Leftover:
    """One file or folder a killed process left, found by its name."""

    path: Path
    pid: int
    bytes: int
    modified: float  # the newest modification time of the path and anything inside it

    @property
    def running(self) -> bool:
        return process_alive(self.pid)


def scratch_folder() -> Path:
    return Path(tempfile.gettempdir())


def every_place(layout: Path | None, data_dir: Path) -> Places:
    """Where leftovers can be: the cache's v1 (None when it is a link, never followed), every gensim-data
    folder, $TMPDIR."""
    places: Places = [(layout, IMPORT)] if layout else []
    return places + [(folder, DOWNLOAD) for folder in _subfolders(data_dir)] + [(scratch_folder(), SCRATCH)]


def find(places: Places) -> list[Leftover]:
    """This user's leftovers in those places, each folder searched for its kind's names; oldest first."""
    found = [item for folder, pattern in places for item in _matching(folder, pattern)]
    return sorted(found, key=lambda item: item.modified)


def sweep(places: Places, min_age: float = SWEEP_AFTER) -> list[Leftover]:
    """Remove the stale leftovers in those places untouched for `min_age` seconds; returns them."""
    now = time.time()
    stale = [item for item in find(places) if now - item.modified >= min_age and not item.running]
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


def process_alive(pid: int) -> bool:
    """True when a process of this id runs (or may: another user's cannot be signalled)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none runs, or an id no process can have
        return False
    except PermissionError:
        return True
    return True


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _matching(folder: Path, pattern: re.Pattern) -> list[Leftover]:
    """The entries of `folder` whose whole name matches `pattern` (the pid, and the folder's own name for a
    download) and which this user owns."""
    try:
        entries = [(entry, pattern.fullmatch(entry.name)) for entry in os.scandir(folder)]
    except OSError:
        return []
    found = []
    for entry, match in entries:
        if match is None or match.groupdict().get("name", folder.name) != folder.name:
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != os.geteuid():
                continue
            size, modified = _usage(Path(entry.path))
        except OSError:  # removed since it was listed
            continue
        found.append(Leftover(Path(entry.path), int(match["pid"]), size, modified))
    return found


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
