"""Writing a file atomically (a report, a weights file): a temporary file in the same folder, then a rename.

Only a regular file is replaced that way. A symbolic link is followed (the file it
names is replaced, the link stays), and a device or FIFO (`/dev/null`, a named pipe)
is written into directly: a rename would put a regular file where the device node
was. A path that reaches its file through /dev or /proc (`/dev/stdout`, `/dev/fd/3`,
`/proc/self/fd/1`) is a stream the shell opened: it is appended to, never truncated
or replaced, so `--html /dev/stdout >> log` keeps what the log held.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO

from attn_cli.errors import InputTypeError, OutputError, path_argument

STREAM_FOLDERS = ("/dev/", "/proc/")  # a link through these names an open descriptor, not a file to replace


def write_file(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` (text is written as UTF-8) to `path` so that a reader never sees half a file; an OutputError
    (an AttnError that is also an OSError, with the cause's errno) names `path` and says why it could not.

    Text holding lone surrogates (a file name that is not UTF-8, shown in a page) is written with \\udcxx
    escapes.
    """
    if not isinstance(data, (str, bytes, bytearray)):
        raise InputTypeError(f"data must be str or bytes, not {type(data).__name__}")
    if isinstance(data, str):
        data = data.encode("utf-8", errors="backslashreplace")
    path = Path(path_argument("path", path))
    try:
        _write(path, data)
    except OSError as exc:  # named as the caller's path, never the temporary file beside it
        raise OutputError(path, exc) from exc


def _write(path: Path, data: bytes) -> None:
    """Append to a device, a FIFO or a stream the shell opened; replace a regular file (or make a new one)."""
    try:
        mode = os.stat(path).st_mode  # follows links
    except FileNotFoundError:
        mode = None
    if mode is not None and (not stat.S_ISREG(mode) or names_a_stream(path)):
        with open(path, "ab") as stream:  # appended to: no truncation, no rename
            write_all(stream, data)
        return
    _replace(Path(os.path.realpath(path)), data, None if mode is None else stat.S_IMODE(mode))


def names_a_stream(path: Path) -> bool:
    """Whether `path`, or a link on the way to its file, lies in /dev or /proc (`/dev/stdout` -> /proc/self/fd/1)."""
    seen = 0
    current = os.path.abspath(path)
    while True:
        if current.startswith(STREAM_FOLDERS):
            return True
        if not os.path.islink(current) or seen > 40:  # 40: as many links as the kernel follows
            return False
        current, seen = os.path.join(os.path.dirname(current), os.readlink(current)), seen + 1


def write_all(stream: IO[bytes], data: bytes) -> None:
    """Every byte of `data`, or an OSError: a buffered write may take part of it and say so only by its count
    (a file size limit, EFBIG, lets the first part through), and the rest must then meet the error."""
    view = memoryview(data)
    while view:
        written = stream.write(view)
        if not written:
            raise OSError(errno.EIO, "the stream took no bytes")
        view = view[written:]


def _replace(target: Path, data: bytes, mode: int | None) -> None:
    """A temporary file beside `target`, renamed over it; it keeps `mode` (the old file's), else a new file's."""
    import tempfile  # only when a file is written: it costs ~8 ms of start-up (random, hashlib)

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            write_all(stream, data)
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temporary, mode)  # mkstemp makes it private
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
