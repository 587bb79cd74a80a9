"""JSON output: written straight to stdout, never through Rich, never with NaN, never half a document.

Rich would read "[...]" as markup and wrap long lines. Report documents hold
their matrices as numpy arrays, encoded here one row at a time, so a
5,000-token sentence (three 25-million-number matrices per head) never exists
as one Python list or one string (it is spooled through a temporary file). Infinite entries (masked logits, -inf) are
written as null; a NaN is a bug and raises ValueError instead of invalid JSON.
Small values (every array in them together under STREAM_ABOVE numbers) are
turned into plain lists first and encoded by one call of the C encoder: a
12-word sentence's document takes a fraction of a millisecond, so a batch of
thousands of lines is not slowed by a Python loop per number.
Non-ASCII text is escaped (\\uXXXX), so no character that some reader takes for a
line break (U+0085, U+2028, ...) can split a line of JSON Lines.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any, TextIO

import numpy as np

from attn_cli.render.fast_json import encode

STREAM_ABOVE = 65_536  # numbers in one value's arrays beyond which it is streamed row by row (~1.2 MB of JSON)


def write_json(document: dict, stream: TextIO | None = None) -> None:
    """One JSON document and a newline, written whole or not at all, flushed so a pipe sees it at once.

    It is encoded first, so a failure while encoding (a NaN, a bug) leaves no cut
    document behind: a small one by fast_json (orjson, respelled byte for byte as the
    C encoder writes), a large one (more than STREAM_ABOVE numbers) row by row into a spool that stays in memory up to
    BUFFER_BYTES and beyond that moves to an anonymous temporary file (gone with the
    process, however it ends), then copied out.
    """
    stream = stream or sys.stdout
    try:
        budget = [STREAM_ABOVE]
        stream.write(encode(document, _encodable(budget), budget) + "\n")
    except _TooLarge:
        import shutil
        import tempfile

        with tempfile.SpooledTemporaryFile(BUFFER_BYTES, "w+", encoding="utf-8") as spool:
            _write(document, spool)  # type: ignore[arg-type]  # a text spool is a TextIO
            spool.write("\n")
            spool.seek(0)
            shutil.copyfileobj(spool, stream, 1 << 20)
    stream.flush()


BUFFER_BYTES = 64 << 20  # a large document's JSON is held in memory up to 64 MiB, then in a temporary file


def dumps(document: dict) -> str:
    """The same JSON as one string, for embedding a (small) document in another file."""
    buffer = io.StringIO()
    _write(document, buffer)
    return buffer.getvalue()


class _TooLarge(Exception):
    """Raised inside the encoder when a value holds too many numbers to encode in one piece."""


def _write(value: Any, stream: TextIO) -> None:
    """The value in one piece when it is small enough, else its parts one by one."""
    try:
        stream.write(json.dumps(value, allow_nan=False, default=_encodable([STREAM_ABOVE])))
        return
    except _TooLarge:
        pass
    if isinstance(value, np.ndarray):
        _write_array(value, stream)
    elif isinstance(value, dict):
        stream.write("{")
        for position, (key, item) in enumerate(value.items()):
            stream.write(", " if position else "")
            stream.write(json.dumps(str(key)) + ": ")
            _write(item, stream)
        stream.write("}")
    else:  # a list or tuple: only they and dicts can hold arrays
        stream.write("[")
        for position, item in enumerate(value):
            stream.write(", " if position else "")
            _write(item, stream)
        stream.write("]")


def _encodable(budget: list[int]):
    """The encoder's hook for what it cannot encode: arrays as lists (within the budget), numpy scalars."""

    def convert(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            budget[0] -= value.size
            if budget[0] < 0:
                raise _TooLarge
            return _array_items(value)
        if isinstance(value, np.generic):
            return value.item()
        raise TypeError(f"cannot write {type(value).__name__} to JSON")

    return convert


def _array_items(array: np.ndarray) -> list:
    """Nested lists of floats; infinite entries (masked logits) become None, a NaN raises ValueError."""
    values = np.asarray(array, dtype=np.float64)
    finite = np.isfinite(values)
    if finite.all():
        return values.tolist()
    if np.isnan(values).any():
        raise ValueError("refusing to write NaN to JSON")
    cells = values.astype(object)
    cells[~finite] = None
    return cells.tolist()


def _write_array(array: np.ndarray, stream: TextIO) -> None:
    """An n-d array as nested lists, one row (last axis) at a time."""
    if array.ndim > 1:
        stream.write("[")
        for position, row in enumerate(array):
            stream.write(", " if position else "")
            _write_array(row, stream)
        stream.write("]")
        return
    stream.write(json.dumps(_array_items(array)))
