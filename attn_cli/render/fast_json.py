"""The small-document JSON encoder: orjson's speed, the stdlib's exact bytes.

A 12-word explain document is ~27 KB of JSON holding ~1,300 numbers; the stdlib's C
encoder spends about 1 ms on it (float repr), which capped a batch at a few hundred
sentences per second. orjson writes the same numbers 20 times faster, but spells some
of them, and the layout, its own way. This module writes each list (and array) of a
document with orjson and then makes its bytes exactly what `json.dumps(document,
allow_nan=False)` writes, or, when it cannot prove them equal, hands that list to the
stdlib instead. Nothing a reader sees changes; documents/json_out.py's contract (no
NaN, infinite array entries as null, ASCII only) holds byte for byte.

What differs, and how each difference is undone:
  * separators: orjson writes "," and ":", the stdlib ", " and ": ". A list is taken
    from orjson only when none of its strings holds `, : [ ] { }`, so every such byte
    is structure and a plain replace is exact;
  * numbers: orjson writes 1e-05 as 0.00001 and 3.2e-07 as 3.2e-7 (the same shortest
    digits, another layout); both are respelled as Python's repr. Strings free of
    `, : [ ] { }` cannot hold a match, which starts after `[ , :` or ends before `, ] }`;
  * strings: orjson writes UTF-8, DEL and escapes of its own; a list whose output holds
    a non-ASCII byte, a backslash or DEL goes to the stdlib (its strings need escapes);
  * null: orjson writes NaN and infinite floats as null where the stdlib raises. The
    nulls of a list must be exactly its arrays' infinite entries (counted), so a list
    with a None, a NaN or an infinite float goes to the stdlib, which writes or refuses it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

import numpy as np
import orjson

_quoted: Callable[[str], str] = json.encoder.encode_basestring_ascii
_NOT_STRUCTURE = bytes(set(range(256)) - set(b'",:[]{}'))  # deleted, the quotes and structure stay
_SHORT_EXPONENT = re.compile(rb"e-(\d)(?=[,\]}])")  # 3.2e-7 -> 3.2e-07
_FIXED_SMALL = re.compile(rb"([\[,:]-?)(0\.0000\d+)")  # 0.00001 -> 1e-05 (orjson's fixed notation under 1e-4)
_OPTIONS = (orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS)


class _Refused(Exception):
    """A value orjson would write differently from the stdlib: the list goes to the stdlib."""


def encode(value: Any, convert: Callable[[Any], Any], budget: list[int]) -> str:
    """`json.dumps(value, allow_nan=False, default=convert)`, byte for byte, faster for lists of numbers.

    Objects are written key by key, so each list inside them is tried on its own; `convert` is
    the stdlib's hook (arrays within `budget` numbers, numpy scalars), whose errors pass through.
    """
    if type(value) is dict and all(type(key) is str for key in value):
        return "{" + ", ".join(f"{_quoted(key)}: {encode(item, convert, budget)}" for key, item in value.items()) + "}"
    scalar = _scalar(value)
    if scalar is not None:
        return scalar
    if isinstance(value, (list, tuple, np.ndarray)):
        before = budget[0]
        try:
            return _from_orjson(value, convert, budget)
        except _Refused:
            budget[0] = before  # the stdlib counts the arrays again
    return json.dumps(value, allow_nan=False, default=convert)


def _scalar(value: Any) -> str | None:
    """A string, integer, finite float, bool or null as the stdlib spells it; None for anything else."""
    kind = type(value)
    if kind is str:
        return _quoted(value)
    if kind is float:
        return float.__repr__(value) if math.isfinite(value) else None  # the stdlib refuses the others
    if kind is int:
        return int.__repr__(value)
    if kind is bool:
        return "true" if value else "false"
    return "null" if value is None else None


def _holds_structure(out: bytes) -> bool:
    """Whether a string of this JSON (which holds no backslash, so no escaped quote) holds `, : [ ] { }`.

    With every other byte deleted, a string free of them is `""`, and no two strings meet (a
    structure byte always parts them); removing the `""` pairs leaves a quote only where a
    string held one. Three C passes, about three times faster than splitting out the strings.
    """
    return b'"' in out.translate(None, _NOT_STRUCTURE).replace(b'""', b"")


def _from_orjson(value: Any, convert: Callable[[Any], Any], budget: list[int]) -> str:
    """The list as orjson writes it, respelled as the stdlib would; _Refused when that cannot be proved exact."""
    nulls = [0]  # infinite array entries, written as null

    def array_fragment(item: Any) -> Any:
        if not isinstance(item, np.ndarray):
            if isinstance(item, np.generic):
                return convert(item)
            raise _Refused  # what the stdlib alone decides: it writes or refuses it
        values = np.ascontiguousarray(item, dtype=np.float64)
        if item.ndim == 0 or item.size > budget[0] or np.isnan(values).any():
            return convert(item)  # a scalar, or the stdlib's own error: too large, NaN refused
        budget[0] -= item.size
        fragment = orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)
        nulls[0] += fragment.count(b"null")
        return orjson.Fragment(fragment)

    try:
        out = orjson.dumps(value, default=array_fragment, option=_OPTIONS)
    except orjson.JSONEncodeError as exc:
        if isinstance(exc.__cause__, Exception) and not isinstance(exc.__cause__, _Refused):
            raise exc.__cause__ from None  # the hook's own error: too large, NaN
        raise _Refused from None  # an integer beyond 64 bits, a key that is not a string...
    if not out.isascii() or b"\\" in out or b"\x7f" in out or out.count(b"null") != nulls[0]:
        raise _Refused
    if _holds_structure(out):
        raise _Refused
    if b"e-" in out:
        out = _SHORT_EXPONENT.sub(rb"e-0\g<1>", out)
    if b"0.0000" in out:
        out = _FIXED_SMALL.sub(lambda match: match[1] + repr(float(match[2])).encode(), out)
    return out.replace(b",", b", ").replace(b":", b": ").decode("ascii")
