"""Writing a file atomically (a report, a weights file): a temporary file in the same folder, then a rename.

Only a regular file is replaced that way. A symbolic link is followed (the file it
names is replaced, the link stays), and a device or FIFO (`/dev/stdout`,
`/dev/null`, a named pipe) is written into directly: a rename would put a regular
file where the device node was.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def write_file(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` (text is written as UTF-8) to `path` so that a reader never sees half a file; an OSError
    says why it could not.

    Text holding lone surrogates (a file name that is not UTF-8, shown in a page) is written with \\udcxx
    escapes.
    """
    if isinstance(data, str):
        data = data.encode("utf-8", errors="backslashreplace")
    path = Path(path)
    try:
        mode = os.stat(path).st_mode  # follows links
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(path, "wb") as stream:
            stream.write(data)
        return
    _replace(Path(os.path.realpath(path)), data, None if mode is None else stat.S_IMODE(mode))


def _replace(target: Path, data: bytes, mode: int | None) -> None:
    """A temporary file beside `target`, renamed over it; it keeps `mode` (the old file's), else a new file's."""
    import tempfile  # only when a file is written: it costs ~8 ms of start-up (random, hashlib)

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temporary, mode)  # mkstemp makes it private
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
