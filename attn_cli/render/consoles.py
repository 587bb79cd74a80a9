"""The Rich consoles tables are drawn on: no markup, emoji or highlighting (`[/oops]` is text), no trailing spaces."""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING, Any, Callable, TextIO, cast

from attn_cli.errors import OutputError, literal
from attn_cli.files import write_all

if TYPE_CHECKING:
    from rich.console import Console

MIN_WIDTH = 60  # the narrowest the tables stay legible: below it a shift's "pulled by" cell is cut to "…"
_PADDING = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)  # spaces, then only style codes, at a line's end


class TrimmedLines:
    """Whole lines lose their trailing spaces; the rest (isatty, fileno) is the stream's, so Rich sees the terminal."""

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
    """Every byte past the buffers, or an OSError: a buffered writer meeting a short write would say nothing."""
    binary = getattr(stream, "buffer", None)
    if binary is None:
        stream.write(data if isinstance(data, str) else data.decode("utf-8"))
        return
    if isinstance(data, str):
        try:
            data = data.encode(stream.encoding or "utf-8", stream.errors or "strict")
        except UnicodeEncodeError as exc:
            raise unencodable(exc) from None
    stream.flush()
    write_all(getattr(binary, "raw", binary), data)


def unencodable(exc: UnicodeEncodeError) -> OutputError:
    """Text stdout's encoding (ascii, Latin-1) cannot hold, named with the fix."""
    character = str(exc.object[exc.start]).encode("unicode_escape").decode("ascii")
    encoding = codecs.lookup(exc.encoding).name  # as Python names it: latin-1 is iso8859-1
    return OutputError(f"cannot write to stdout: its encoding ({encoding}) has no {character}; set "
                       "PYTHONIOENCODING=utf-8 or a UTF-8 locale (LC_ALL=C.UTF-8)")


def trimmed(stream: TextIO) -> TextIO:
    return cast(TextIO, TrimmedLines(stream))


def draw_literally(draw: Callable[[dict, Console], None], document: dict, console: Console) -> None:
    """Every text from input made literal first (errors.literal), from the CLI and Python alike."""
    draw(literal_document(document), console)


def report_console(**options: Any) -> Console:
    """At least MIN_WIDTH columns wide however narrow the terminal or $COLUMNS."""
    from rich.console import Console

    console = Console(markup=False, emoji=False, highlight=False, **options)
    console.width = max(console.width, MIN_WIDTH)
    return console


def literal_document(document: Any) -> Any:
    """Every string made literal; arrays pass through untouched."""
    if isinstance(document, str):
        return literal(document)
    if isinstance(document, dict):
        return {key: literal_document(item) for key, item in document.items()}
    if isinstance(document, list):
        return [literal_document(item) for item in document]
    return document
