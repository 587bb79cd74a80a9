"""Files written whole or not at all: a temporary file beside the target, then a rename (a link is followed). A
device, a FIFO or a path naming a descriptor (`/dev/stdout`) is appended to, never truncated or replaced."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TypeVar

from attn_cli.errors import InputTypeError, OutputError, path_argument

STANDARD_STREAMS = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_DESCRIPTOR_PATH = re.compile(r"/(?:dev/fd|proc/(?:self|thread-self|(?P<pid>\d+))/fd)/(?P<fd>\d+)")


def write_file(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` (text as UTF-8) so that a reader never sees half a file; an OutputError (also an OSError, with
    the cause's errno) names `path`, never the temporary file beside it."""
    if not isinstance(data, (str, bytes, bytearray)):
        raise InputTypeError(f"data must be str or bytes, not {type(data).__name__}")
    path = Path(path_argument("path", path))
    try:
        with AtomicFile(path) as target:
            write_all(target.stream, data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data)
    except OSError as exc:
        raise OutputError.of_file(path, exc) from exc


def encodable(texts: Iterable[str | None]) -> list[str | None]:
    """The texts as a UTF-8 store (Arrow, pandas' string columns) takes them: a lone surrogate as its escape."""
    return [text if text is None or text.isascii() else text.encode("utf-8", "backslashreplace").decode("utf-8")
            for text in texts]


class WholeOrNothing:
    """Written whole or not at all: `close()` puts it in place, `discard()` leaves everything as it was; a `with`
    block closes it, or discards it when an exception (Ctrl-C included) leaves the block."""

    def close(self) -> None: ...

    def discard(self) -> None: ...

    def __enter__(self: Written) -> Written:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        self.close() if kind is None else self.discard()


Written = TypeVar("Written", bound=WholeOrNothing)


class AtomicFile(WholeOrNothing):
    """A file that `stream` fills, by write_file's rules; a regular file keeps its mode."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._temporary: Path | None = None
        mode = None
        with contextlib.suppress(FileNotFoundError):
            mode = os.stat(path).st_mode  # follows links
        if mode is not None and (not stat.S_ISREG(mode) or stream_descriptor(Path(path)) is not None):
            self.stream: IO[bytes] = open(path, "ab")  # appended to: no truncation, no rename
            return
        self._target, self._mode = Path(os.path.realpath(path)), mode
        self._temporary = self._target.with_name(f".attn-cli-{os.urandom(8).hex()}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        self.stream = os.fdopen(os.open(self._temporary, flags, 0o600), "wb")  # private until it is whole

    def close(self) -> None:
        """The file in place; on failure nothing is left behind."""
        try:
            self.stream.close()
            if self._temporary is not None:
                os.chmod(self._temporary, stat.S_IMODE(self._mode) if self._mode is not None else 0o666 & ~_umask())
                os.replace(self._temporary, self._target)
                self._temporary = None
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Remove what was written (a no-op once closed)."""
        with contextlib.suppress(OSError):  # a buffer that cannot be flushed: its bytes are dropped anyway
            self.stream.close()
        if self._temporary is not None:
            self._temporary.unlink(missing_ok=True)
            self._temporary = None


def _umask() -> int:
    mask = os.umask(0o022)  # read by setting it: there is no other way
    os.umask(mask)
    return mask


def stream_descriptor(path: Path) -> int | None:
    """The descriptor of this process that `path` names (`/dev/stdin` 0, `/dev/fd/3` and `/proc/self/fd/3` 3),
    through links too; None for any other path. Opening such a path reopens whatever the descriptor holds."""
    step = os.path.abspath(path)
    for _ in range(40):  # as many links as the kernel follows
        match = _DESCRIPTOR_PATH.fullmatch(step)
        if step in STANDARD_STREAMS:
            return STANDARD_STREAMS[step]
        if match and match["pid"] in (None, str(os.getpid())):
            return int(match["fd"])
        if not os.path.islink(step):
            return None
        step = os.path.join(os.path.dirname(step), os.readlink(step))
    return None


def write_all(stream: IO[bytes], data: bytes) -> None:
    """Every byte of `data`, or an OSError: a raw write may take part of it (a file size limit lets the first
    part through) and say so only by its count."""
    view = memoryview(data)
    while view:
        if not (written := stream.write(view)):
            raise OSError(errno.EIO, "the stream took no bytes")
        view = view[written:]


@contextlib.contextmanager
def quiet_npy_headers() -> Iterator[None]:
    """Reading .npy files without Python's warnings about their headers (numpy's ast.literal_eval warns of an odd
    escape from Python 3.12): a damaged header is the reader's error to report in its own line."""
    with warnings.catch_warnings():  # not catch_warnings(action=...): Python 3.11's, and it silences every warning
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield
