"""JSON output: streamed straight to stdout, never through Rich, never with NaN.

Rich would read "[...]" as markup and wrap long lines. Report documents hold
their matrices as numpy arrays, written here one row at a time, so a
5,000-token sentence (three 25-million-number matrices per head) never exists
as one Python list or one string. Infinite entries (masked logits, -inf) are
written as null; a NaN is a bug and raises ValueError instead of invalid JSON.
Non-ASCII text is escaped (\\uXXXX), so no character that some reader takes for a
line break (U+0085, U+2028, ...) can split a line of JSON Lines.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any, TextIO

import numpy as np


def write_json(document: dict, stream: TextIO | None = None) -> None:
    """One JSON document and a newline, flushed so a pipe sees it at once."""
    stream = stream or sys.stdout
    _write(document, stream)
    stream.write("\n")
    stream.flush()


def dumps(document: dict) -> str:
    """The same JSON as one string, for embedding a (small) document in another file."""
    buffer = io.StringIO()
    _write(document, buffer)
    return buffer.getvalue()


def _write(value: Any, stream: TextIO) -> None:
    if isinstance(value, np.ndarray):
        _write_array(value, stream)
    elif isinstance(value, dict):
        stream.write("{")
        for position, (key, item) in enumerate(value.items()):
            stream.write(", " if position else "")
            stream.write(json.dumps(str(key)) + ": ")
            _write(item, stream)
        stream.write("}")
    elif isinstance(value, (list, tuple)):
        stream.write("[")
        for position, item in enumerate(value):
            stream.write(", " if position else "")
            _write(item, stream)
        stream.write("]")
    else:
        stream.write(json.dumps(value.item() if isinstance(value, np.generic) else value, allow_nan=False))


def _write_array(array: np.ndarray, stream: TextIO) -> None:
    """An n-d array as nested lists, one row (last axis) at a time."""
    if array.ndim > 1:
        stream.write("[")
        for position, row in enumerate(array):
            stream.write(", " if position else "")
            _write_array(row, stream)
        stream.write("]")
        return
    values = np.asarray(array, dtype=np.float64)
    if np.isnan(values).any():
        raise ValueError("refusing to write NaN to JSON")
    finite = np.isfinite(values)
    items = values.tolist() if finite.all() else [v if ok else None for v, ok in zip(values.tolist(), finite)]
    stream.write(json.dumps(items))
