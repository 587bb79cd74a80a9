"""Text that came from input, shown literally: no terminal control, no reordering, on every output.

Words of a vector file, sentences, jsonl ids, file names and spelling suggestions
can carry escape sequences (clear the screen, write the clipboard through OSC 52,
hide a link behind OSC 8, ring the bell) or bidi overrides that reorder what a
line seems to say. Before such text reaches a terminal, a log or an SVG (where
U+0001 is not even well-formed XML), each of those characters is written as its
escape: ESC as `\\x1b`, RIGHT-TO-LEFT OVERRIDE as `\\u202e`. Everything else,
accents, CJK and emoji included, is left as it is.
"""

from __future__ import annotations

import re
from typing import TypeVar, cast

Document = TypeVar("Document")
# C0 and C1 controls and DEL, bidi marks, overrides and isolates, line and paragraph separators, lone surrogates,
# and the invisible spaces that make look-alike words (zero width space, word joiner, BOM); not the joiners of emoji
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029"
                     "\ufeff\ud800-\udfff]")


def literal(text: str) -> str:
    """'bank\\x1b[2J' -> 'bank\\\\x1b[2J': each control or bidi character as its visible escape."""
    return _HIDDEN.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def literal_document(document: Document) -> Document:
    """A report document with every string in it made literal (numbers and matrices pass through untouched)."""
    return cast(Document, _literal_value(document))


def _literal_value(value: object) -> object:
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, dict):
        return {key: _literal_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return value if _numbers(value) else [_literal_value(item) for item in value]
    return value


def _numbers(value: list) -> bool:
    """Whether a list is a vector or a matrix (judged by its first number): nothing in it to make literal."""
    first = value[0] if value else None
    first = first[0] if isinstance(first, list) and first else first
    return isinstance(first, (int, float)) and not isinstance(first, bool)
