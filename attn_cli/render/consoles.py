"""The Rich consoles the tables are drawn on: no markup, no trailing spaces.

Rich would read `[link=...]` in a word as markup (a hidden link; `[/oops]` is an
error) and `:bank:` as an emoji code; the tables are built from Text objects, so
every console here reads no markup, no emoji codes and highlights nothing. And a
piped table ends where its text ends, without the spaces Rich pads lines with.
"""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING, Any, Callable, TextIO, TypeVar, cast

from attn_cli.errors import OutputError, literal
from attn_cli.files import write_all

Document = TypeVar("Document")

if TYPE_CHECKING:
    from rich.console import Console

MIN_WIDTH = 60  # the narrowest the tables stay legible: below it a shift's "pulled by" cell is cut to "…"
_PADDING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)  # spaces, then only style codes, at a line's end


class TrimmedLines:
    """A stream whose lines lose their trailing spaces on the way through.

    Whole lines are trimmed as they come (a line's end may be followed by the escape
    codes that close its styles); a partial line waits for the rest. Everything
    else (isatty, fileno, encoding) is the wrapped stream's, so Rich sees the real
    terminal or pipe.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.pending = stream, ""

    def write(self, text: str) -> int:
        lines, newline, self.pending = (self.pending + text).rpartition("\n")
        if newline:
            write_through(self.stream, _PADDING.sub(r"\1", lines + "\n"))
        return len(text)

    def flush(self) -> None:
        write_through(self.stream, _PADDING.sub(r"\1", self.pending))
        self.pending = ""
        self.stream.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


def write_through(stream: TextIO, data: str | bytes) -> None:
    """Every byte of `data` onto the file behind a text stream (stdout), past its buffers, or an OSError.

    A buffered writer that meets a short write (a file size limit) keeps the rest and says nothing, even on
    flush: only the next document's write fails, after this one was cut. The file's own writes report it.
    A stream without a binary layer (a notebook's) takes the text.
    """
    binary = getattr(stream, "buffer", None)
    if binary is None:
        stream.write(data if isinstance(data, str) else data.decode("utf-8"))
        return
    if isinstance(data, str):
        data = encoded(data, stream.encoding or "utf-8", stream.errors or "strict")
    stream.flush()
    write_all(getattr(binary, "raw", binary), data)


def encoded(text: str, encoding: str, errors: str) -> bytes:
    """`text` in stdout's encoding, or an OutputError naming the fix when that encoding has no room for one of its
    characters (PYTHONIOENCODING=ascii, a C or Latin-1 locale): an output that cannot be written, not a bug."""
    try:
        return text.encode(encoding, errors)
    except UnicodeEncodeError as exc:
        raise unencodable(exc) from None


def unencodable(exc: UnicodeEncodeError) -> OutputError:
    """The OutputError of text that stdout's encoding cannot hold, naming the character and the fix."""
    character = str(exc.object[exc.start]).encode("unicode_escape").decode("ascii")
    encoding = codecs.lookup(exc.encoding).name  # as Python names it: latin-1 is iso8859-1
    return OutputError(f"cannot write to stdout: its encoding ({encoding}) has no {character}; set "
                       "PYTHONIOENCODING=utf-8 or a UTF-8 locale (LC_ALL=C.UTF-8)")


def trimmed(stream: TextIO) -> TextIO:
    """`stream` as Rich's Console takes it, its lines trimmed."""
    return cast(TextIO, TrimmedLines(stream))


def draw_literally(draw: Callable[[dict, Console], None], document: dict, console: Console) -> None:
    """Draw a report with every text that came from input made literal first (errors.literal): the one way
    tables reach a console, from the command line and from Python alike."""
    draw(literal_document(document), console)


def report_console(**options: Any) -> Console:
    """A Rich Console for report tables: Console(**options) with markup, emoji codes and highlighting off, at least
    MIN_WIDTH columns wide, however narrow the terminal or $COLUMNS (0 drew nothing, 10 cells of "…")."""
    from rich.console import Console

    console = Console(markup=False, emoji=False, highlight=False, **options)
    console.width = max(console.width, MIN_WIDTH)
    return console


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
