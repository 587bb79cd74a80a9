"""JSON written by orjson straight from the documents' arrays: numbers that read back as the same float64 (arrays
as float64, ±inf as null), NaN refused, U+2028-style line breaks escaped so a JSON Lines line is one document, and
never half a document; one of more than STREAM_ABOVE numbers goes a part at a time through a spool."""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, BinaryIO, TextIO

import numpy as np
import orjson

from attn_cli.errors import OutputError
from attn_cli.render.consoles import write_through

STREAM_ABOVE = 1 << 21  # numbers in a document's arrays beyond which it is written a part at a time (~40 MB)
BUFFER_BYTES = 64 << 20  # a large document's JSON is held in memory up to 64 MiB, then in a temporary file
_LINE_BREAKS = (("\u0085".encode(), b"\\u0085"), ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))
_WRITTEN_AS_IS = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.bool_))


def write_json(document: dict, stream: TextIO | None = None) -> None:
    """One JSON document and a newline, written whole or not at all, flushed so a pipe sees it at once."""
    stream = stream or sys.stdout
    numbers, as_is = _survey(document)
    document = document if as_is else _widened(document)
    with whole_or_none(stream):
        if numbers <= STREAM_ABOVE:
            write_through(stream, _encoded(document) + b"\n")
        else:
            import tempfile  # only a large document pays for its import

            with tempfile.SpooledTemporaryFile(BUFFER_BYTES, "w+b") as spool:
                try:
                    _write_parts(document, spool)  # type: ignore[arg-type]  # a binary spool is a BinaryIO
                    spool.write(b"\n")
                    spool.flush()  # a full folder fails here, not at the first read back
                    spool.seek(0)
                except OSError as exc:  # the temporary folder's failure, never stdout's
                    with suppress(OSError):
                        spool.close()  # now: closing it later would try to write what it holds again
                    raise OutputError(f"cannot hold the JSON in the temporary folder {tempfile.gettempdir()}: "
                                      f"{exc.strerror}; set TMPDIR to a folder with room for it", exc) from None
                stream.flush()  # whatever the text layer holds goes first
                while chunk := spool.read(1 << 20):
                    write_through(stream, chunk)
        stream.flush()


@contextmanager
def whole_or_none(stream: TextIO) -> Iterator[None]:
    """A document that fails midway (a full disk) is cut back out of the regular file behind the stream."""
    try:
        descriptor = stream.fileno()
        regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
    except (OSError, ValueError):  # a StringIO (io.UnsupportedOperation is both), a closed or odd stream
        regular = False
    if regular:
        stream.flush()
        start = os.lseek(descriptor, 0, os.SEEK_CUR)
    try:
        yield
    except (OSError, OutputError):  # OutputError: a character stdout's encoding cannot hold
        if regular:
            os.ftruncate(descriptor, start)
        raise


def encode(value: Any) -> bytes:
    """The same JSON in one piece, for embedding a (small) document in another file."""
    return _encoded(value if _survey(value)[1] else _widened(value))


def _survey(value: Any) -> tuple[int, bool]:
    """(numbers in the arrays, whether orjson writes them as they stand); refuses NaN and a bare infinite float."""
    count, clean = 0, True
    pending: list[Any] = [[value]]  # the value itself may be a float
    while pending:
        node = pending.pop()
        if isinstance(node, np.ndarray):
            if node.dtype.kind == "f" and np.isnan(node).any():
                raise ValueError("refusing to write NaN to JSON")
            count, clean = count + node.size, clean and node.dtype in _WRITTEN_AS_IS and node.flags.c_contiguous
            continue
        for item in node.values() if isinstance(node, dict) else node:
            kind = type(item)
            if kind is float:
                if not math.isfinite(item):  # only an array's infinite cells (masked logits) are written, as null
                    raise ValueError(f"refusing to write {item} to JSON")
            elif kind is str or kind is int or item is None or kind is bool:
                continue
            elif kind is dict or kind is list or kind is tuple or kind is np.ndarray:
                pending.append(item)
            elif isinstance(item, (float, dict, list, tuple, np.ndarray)):  # a subclass: the slow, general path
                pending.append(item if not isinstance(item, float) else [float(item)])
    return count, clean


def _widened(value: Any) -> Any:
    """The value with each array as C-contiguous float64 (integer and boolean arrays as they are)."""
    if isinstance(value, np.ndarray):
        return value if value.dtype in _WRITTEN_AS_IS[1:] else np.ascontiguousarray(value, dtype=np.float64)
    if isinstance(value, dict):
        return {key: _widened(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_widened(item) for item in value]
    return value


def _encoded(value: Any) -> bytes:
    """A widened value's JSON; what orjson refuses (a lone surrogate, a key not a str) goes through json."""
    try:
        encoded = orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)
    except orjson.JSONEncodeError:
        return json.dumps(value, default=_listed, allow_nan=False).encode("ascii")
    for character, escape in _LINE_BREAKS:
        encoded = encoded.replace(character, escape)
    return encoded


def _listed(value: Any) -> Any:
    """The stdlib encoder's hook: arrays as nested lists, ±inf as None (it would refuse them)."""
    if isinstance(value, (np.ndarray, np.generic)):
        cells = np.asarray(value, dtype=object)
        cells[np.isinf(value)] = None
        return cells.tolist()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _write_parts(value: Any, stream: BinaryIO) -> None:
    """A widened value a part at a time: a small part in one piece, a large array one row (last axis) at a time."""
    whole = value.ndim <= 1 or value.size <= STREAM_ABOVE if isinstance(value, np.ndarray) else (
        _survey(value)[0] <= STREAM_ABOVE)
    if whole:
        stream.write(_encoded(value))
    elif isinstance(value, dict):
        stream.write(b"{")
        for position, (key, item) in enumerate(value.items()):
            stream.write((b"," if position else b"") + _encoded(str(key)) + b":")
            _write_parts(item, stream)
        stream.write(b"}")
    else:  # a list, or an array of two or more axes
        stream.write(b"[")
        for position, item in enumerate(value):
            stream.write(b"," if position else b"")
            _write_parts(item, stream)
        stream.write(b"]")
