"""JSON output: written straight to stdout, never through Rich, never with NaN, never half a document.

Rich would read "[...]" as markup and wrap long lines. Report documents hold
their matrices as numpy arrays, encoded here one row at a time, so a
5,000-token sentence (three 25-million-number matrices per head) never exists
as one Python list or one string (it is spooled through a temporary file). Infinite entries (masked logits, -inf) are
written as null; a NaN is a bug and raises ValueError instead of invalid JSON.
Those rows are written by orjson straight from the array, in the stdlib's spelling
(see `_row_bytes`): a float's repr costs about 1 µs, which made a 1,000-token
document take 3 s and a 5,000-token one most of a minute.
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
from typing import Any, BinaryIO, TextIO

import numpy as np
import orjson

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
        import tempfile

        with tempfile.SpooledTemporaryFile(BUFFER_BYTES, "w+b") as spool:
            _write(document, spool)  # type: ignore[arg-type]  # a binary spool is a BinaryIO
            spool.write(b"\n")
            spool.seek(0)
            _copy_out(spool, stream)  # type: ignore[arg-type]
    stream.flush()


def _copy_out(spool: BinaryIO, stream: TextIO) -> None:
    """The spooled (ASCII) JSON onto the stream: as bytes to the stream's buffer, past its text layer, when it has
    one (stdout does), so a 1.7 GB document is not decoded and encoded again."""
    import shutil

    stream.flush()  # whatever the text layer holds goes first
    target = getattr(stream, "buffer", None)
    if target is not None:
        shutil.copyfileobj(spool, target, 1 << 20)
        target.flush()
        return
    while chunk := spool.read(1 << 20):
        stream.write(chunk.decode("ascii"))


BUFFER_BYTES = 64 << 20  # a large document's JSON is held in memory up to 64 MiB, then in a temporary file


def dumps(document: dict) -> str:
    """The same JSON as one string, for embedding a (small) document in another file."""
    buffer = io.BytesIO()
    _write(document, buffer)
    return buffer.getvalue().decode("ascii")


class _TooLarge(Exception):
    """Raised inside the encoder when a value holds too many numbers to encode in one piece."""


def _write(value: Any, stream: BinaryIO) -> None:
    """The value in one piece when it is small enough, else its parts one by one (as ASCII: non-ASCII is escaped)."""
    try:
        stream.write(json.dumps(value, allow_nan=False, default=_encodable([STREAM_ABOVE])).encode("ascii"))
        return
    except _TooLarge:
        pass
    if isinstance(value, np.ndarray):
        _write_array(value, stream)
    elif isinstance(value, dict):
        stream.write(b"{")
        for position, (key, item) in enumerate(value.items()):
            stream.write(b", " if position else b"")
            stream.write(json.dumps(str(key)).encode("ascii") + b": ")
            _write(item, stream)
        stream.write(b"}")
    else:  # a list or tuple: only they and dicts can hold arrays
        stream.write(b"[")
        for position, item in enumerate(value):
            stream.write(b", " if position else b"")
            _write(item, stream)
        stream.write(b"]")


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


def _write_array(array: np.ndarray, stream: BinaryIO) -> None:
    """An n-d array as nested lists, one row (last axis) at a time."""
    if array.ndim > 1:
        stream.write(b"[")
        for position, row in enumerate(array):
            stream.write(b", " if position else b"")
            _write_array(row, stream)
        stream.write(b"]")
        return
    stream.write(_row_bytes(array))


REPR_SPELT_ABOVE = 1e-4  # orjson spells every float as repr() does but the non-zero ones smaller than this


def _row_bytes(row: np.ndarray) -> bytes:
    """One row of numbers exactly as json.dumps(_array_items(row)) writes it, at orjson's speed: [n] -> b"[...]".

    orjson writes a float64 array's shortest round-trip digits as repr() does, ±inf as null,
    compact separators, and exponents below 1e-4 its own way (0.00001 for 1e-05, 1e-9 for
    1e-09): so ", " replaces "," (only numbers are here) and those few entries are spelt by repr.
    """
    values = np.ascontiguousarray(row, dtype=np.float64)  # [n]
    if np.isnan(values).any():
        raise ValueError("refusing to write NaN to JSON")  # orjson would write null
    encoded = orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)  # b"[x,y,...]"
    tiny = np.flatnonzero((np.abs(values) < REPR_SPELT_ABOVE) & (values != 0))  # [t]
    if len(tiny):
        encoded = _respelt(encoded, tiny, values[tiny].tolist())
    return encoded.replace(b",", b", ")


def _respelt(encoded: bytes, items: np.ndarray, values: list[float]) -> bytes:
    """The row's JSON with the numbers at positions `items` [t] (ascending) spelt by repr, the rest as they are.

    The items are found by their commas, not by splitting the row into n pieces (a
    5,000-number row of scores holds a few such numbers, 8,000 of 15,000 rows hold one).
    """
    commas = np.flatnonzero(np.frombuffer(encoded, dtype=np.uint8) == ord(","))  # [n - 1]
    bounds = np.concatenate(([0], commas, [len(encoded) - 1]))  # [n + 1]: item i lies between bounds i and i + 1
    pieces, done = [], 0
    for item, value in zip(items.tolist(), values):
        pieces += [encoded[done:int(bounds[item]) + 1], repr(value).encode("ascii")]
        done = int(bounds[item + 1])
    return b"".join(pieces + [encoded[done:]])
