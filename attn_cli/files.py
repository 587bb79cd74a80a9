"""Writing a file atomically (a report, a weights file, a Parquet table): a temporary file beside it, then a rename.

A link is followed (its file is replaced, the link stays). A device, a FIFO or a path naming a descriptor of this
process (`/dev/stdout`, `/dev/fd/3`) is a stream the shell opened: it is appended to, never truncated or replaced
(a rename would put a regular file where the device was; `--html /dev/stdout >> log` keeps what the log held).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import warnings
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TypeVar

from attn_cli.errors import InputTypeError, OutputError, path_argument

STANDARD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR_PATH = re.compile(r"/(?:dev/fd|proc/(?:self|thread-self|(?P<pid>\d+))/fd)/(?P<fd>\d+)")


def write_file(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` (text as `utf8`) to `path` so that a reader never sees half a file; an OutputError (also an
    OSError, with the cause's errno) names `path` and says why it could not."""
    if not isinstance(data, (str, bytes, bytearray)):
        raise InputTypeError(f"data must be str or bytes, not {type(data).__name__}")
    path = Path(path_argument("path", path))
    try:
        with AtomicFile(path) as target:
            write_all(target.stream, utf8(data) if isinstance(data, str) else data)
    except OSError as exc:  # named as the caller's path, never the temporary file beside it
        raise OutputError.of_file(path, exc) from exc


def utf8(text: str) -> bytes:
    """Text as UTF-8, a lone surrogate (a byte of a name that was not UTF-8) as the escape JSON gives it."""
    return text.encode("utf-8", errors="backslashreplace")


def encodable(texts: Iterable[str | None]) -> list[str | None]:
    """The texts as a UTF-8 store (Arrow, pandas' string columns) takes them: lone surrogates as `utf8` has them."""
    return [text if text is None or text.isascii() else utf8(text).decode("utf-8") for text in texts]


class WholeOrNothing:
    """Written whole or not at all: `close()` puts it in place, `discard()` leaves everything as it was; a `with`
    block closes it, or discards it when an exception (Ctrl-C included) leaves the block."""

    def close(self) -> None:
        raise NotImplementedError

    def discard(self) -> None:
        raise NotImplementedError

    def __enter__(self: Written) -> Written:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


Written = TypeVar("Written", bound=WholeOrNothing)


class AtomicFile(WholeOrNothing):
    """A file that `stream` fills, by write_file's rules; a regular file keeps its mode. The temporary file of
    one never closed nor discarded is removed when it is collected or the interpreter exits."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        path = Path(path)
        try:
            mode: int | None = os.stat(path).st_mode  # follows links
        except FileNotFoundError:
            mode = None
        self._temporary: str | None = None
        if mode is not None and (not stat.S_ISREG(mode) or stream_descriptor(path) is not None):
            self.stream: IO[bytes] = open(path, "ab")  # appended to: no truncation, no rename
            return
        import tempfile  # only when a file is written: its import costs start-up

        self._target = Path(os.path.realpath(path))
        if mode is None:  # a new file's mode, as open() would make it
            os.umask(umask := os.umask(0))  # the umask is read by setting it, then put back
            mode = 0o666 & ~umask
        self._mode = stat.S_IMODE(mode)
        handle, self._temporary = tempfile.mkstemp(dir=self._target.parent, prefix=_temporary_prefix(self._target),
                                                   suffix=".tmp")
        self.stream = os.fdopen(handle, "wb")
        self._forget = weakref.finalize(self, _remove, self.stream, self._temporary)

    def close(self) -> None:
        """The file in place; on failure nothing is left behind."""
        try:
            self.stream.close()
            if self._temporary is not None:
                os.chmod(self._temporary, self._mode)  # mkstemp makes it private
                os.replace(self._temporary, self._target)
                self._temporary = None
                self._forget.detach()
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Remove what was written (a no-op once closed)."""
        if self._temporary is None:
            _close(self.stream)
        else:
            self._temporary = None
            self._forget()


def _remove(stream: IO[bytes], temporary: str) -> None:
    _close(stream)
    os.unlink(temporary)


def _close(stream: IO[bytes]) -> None:
    with contextlib.suppress(OSError):  # a buffer that cannot be flushed any more: its bytes are dropped anyway
        stream.close()


def stream_descriptor(path: Path) -> int | None:
    """The descriptor of this process that `path` names (`/dev/stdin` 0, `/dev/fd/3` and `/proc/self/fd/3` 3),
    through links too; None for any other path. Opening such a path reopens whatever the descriptor holds."""
    for step in _links(path):
        if step in STANDARD_STREAMS:
            return STANDARD_STREAMS[step]
        match = _DESCRIPTOR_PATH.fullmatch(step)
        if match and match["pid"] in (None, str(os.getpid())):
            return int(match["fd"])
    return None


def _links(path: Path) -> list[str]:
    """`path` made absolute, then each path the links on the way to its file lead to, in order."""
    steps = [os.path.abspath(path)]
    while os.path.islink(steps[-1]) and len(steps) <= 40:  # 40: as many links as the kernel follows
        steps.append(os.path.join(os.path.dirname(steps[-1]), os.readlink(steps[-1])))
    return steps


def write_all(stream: IO[bytes], data: bytes) -> None:
    """Every byte of `data`, or an OSError: a raw write may take part of it (a file size limit lets the first
    part through) and say so only by its count."""
    view = memoryview(data)
    while view:
        written = stream.write(view)
        if not written:
            raise OSError(errno.EIO, "the stream took no bytes")
        view = view[written:]


def _temporary_prefix(target: Path) -> str:
    """".NAME." cut so that the temporary name (8 random characters and ".tmp" follow) fits the NAME_MAX
    `target`'s own name fits."""
    try:
        name_max = os.pathconf(target.parent, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows), or no answer: the common limit
        name_max = 255
    return f".{os.fsdecode(os.fsencode(target.name)[:name_max - 14])}."


@contextlib.contextmanager
def quiet_npy_headers() -> Iterator[None]:
    """Reading .npy files without Python's warnings about their headers (numpy's ast.literal_eval warns of an odd
    escape from Python 3.12): a damaged header is the reader's error to report in its own line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield
