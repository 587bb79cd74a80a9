"""Where a command's report documents go: stdout (tables or JSON) and, on request, the --html and --svg files.

Every command hands each document to `ReportOutputs.show` and calls `finish` at the end, so `explain`,
`compare` and `trace` write their pictures the same way (explain's --parquet table is put in place with
them). The SVG is the terminal rendering, recorded by Rich at the console's width (the terminal's, else
$COLUMNS, else 80); with --json the tables still go to the SVG though stdout gets JSON. The HTML page holds
every document of the run (one per stdin line).

Batches stream: each document is written (and flushed) as soon as it is shown and then dropped, so memory
stays flat however many sentences come in. Only --html keeps every document until the end (the page
holds them all), and --svg keeps Rich's recording of every table.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import io
import os
import re
import shlex
import sys
from pathlib import Path
from collections.abc import Iterator
from typing import TYPE_CHECKING, Callable

from attn_cli.errors import UsageError, shown_path
from attn_cli.cli.fields import Selection, select
from attn_cli.cli.inputs import stdout_file
from attn_cli.cli.messages import to_null
from attn_cli import ExplainResult, write_file
from attn_cli.render.json_out import whole_or_none, write_json
from attn_cli.render.plain import READS, header, plain_records
from attn_cli.render.consoles import draw_literally, report_console, trimmed, write_through

if TYPE_CHECKING:
    import typer
    from rich.console import Console

Draw = Callable[[dict, "Console"], None]
# Rich's SVG asks a CDN for its Fira Code font; keep only the local() sources so opening it fetches nothing.
_WEB_FONT = re.compile(r',\s*url\("https?://[^"]*"\)\s*format\("[^"]*"\)')


def renderer(module: str, function: str) -> Draw:
    """A table renderer of attn_cli.render.<module>, imported only when tables are drawn (Rich loads slowly)."""
    def draw(report: dict, console) -> None:
        getattr(importlib.import_module(f"attn_cli.render.{module}"), function)(report, console)

    return draw


def is_output_failure(exc: OSError) -> bool:
    """Whether a disk error is stdout's (`> /dev/full`): a write to an open stream (no file name), and every
    other file the commands write (the cache, downloads, --html, --svg) turns its errors into AttnErrors."""
    return exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO) and exc.filename is None


def stdout_failure(exc: OSError) -> str:
    """What a failed write to stdout says."""
    return f"cannot write to stdout: {exc.strerror}; redirect it to a file on a disk with room"


def silence_stdout() -> None:
    """/dev/null in stdout's place, so the interpreter's final flush of what could not be written cannot fail."""
    to_null(sys.stdout)


def command_line(ctx: typer.Context) -> str:
    """The exact command line of this run, quoted for a shell, as the HTML report shows it."""
    return shlex.join(["attn-cli", *ctx.find_root().obj["arguments"]])


def stdout_closed() -> None:
    """Hand a closed stdout back to the CLI, which stops quietly with its documented exit code."""
    raise BrokenPipeError(errno.EPIPE, "stdout was closed")


MAX_PICTURED = 1_000  # sentences an --html page or --svg picture holds: ~20 kB of page each (7 words), all in memory


class ReportOutputs:
    """Sends each report document to stdout and remembers what the --html and --svg files need.

    `style` is "tables" (Rich), "json" (one line per document, `selection` keeping only some fields)
    or "plain" (tab-separated records). `table`, when given, is closed (put in place) with the pictures. A run
    of `one_document` (a sentence argument, compare) with files writes them before stdout, so a file that
    cannot be written leaves nothing on stdout before its error; a batch streams, and its files follow its
    documents.
    """

    def __init__(self, draw: Draw, *, style: str, files: dict[str, Path], command_line: str,
                 selection: Selection | None = None, table: ParquetTable | None = None,
                 one_document: bool = False) -> None:
        self.draw, self.style, self.command_line = draw, style, command_line
        self.files = {option: path for option, path in files.items() if option in ("--html", "--svg")}
        self.selection, self.table = selection, table
        self.documents: list[dict] = []  # kept for --html only
        self.pictured = 0  # documents the pictures hold
        self.title = ""  # the SVG's title, from the first document
        held = one_document and (self.files or table is not None)
        self.held: list[tuple[dict, bool]] | None = [] if held else None  # stdout's documents, after the files
        self.terminal = self.recorder = None
        if style != "tables" and "--svg" not in files:
            return  # JSON or plain only: Rich is never imported
        # NO_COLOR: Rich alone would drop colours but keep bold and dim; a reader who asks for no colour
        # wants no escape codes at all, even on a terminal
        plain_terminal = os.environ.get("NO_COLOR", "") != ""
        drawn_apart = style != "tables" or self.held is not None  # the SVG's tables are not stdout's as they go
        self.terminal = report_console(record="--svg" in files and not drawn_apart, file=trimmed(sys.stdout),
                                       color_system=None if plain_terminal else "auto")
        # Rich would exit 1, the code for a bug; replacing the method on this one instance is deliberate
        self.terminal.on_broken_pipe = stdout_closed  # type: ignore[method-assign]
        self.recorder = self.terminal if self.terminal.record else None
        if "--svg" in files and drawn_apart:  # tables for the SVG only, never on stdout
            self.recorder = report_console(record=True, file=io.StringIO(), width=self.terminal.width,
                                           force_terminal=True)

    @property
    def wanted(self) -> frozenset[str] | None:
        """The top-level keys of a document this output shows (None: all), with the parts kept of a block kept in
        part (`shifts.cosine`): the --fields kept, or the blocks --plain reads; all of them when tables or a
        picture (--html, --svg) draw whole documents."""
        if self.files or self.style == "tables":
            return None
        if self.selection is not None:
            return frozenset(self.selection) | {f"{key}.{part}" for key, parts in self.selection.items()
                                                 if parts is not True for part in parts}
        return frozenset(READS) if self.style == "plain" else None

    @property
    def json(self) -> bool:
        return self.style == "json"

    def show(self, report: dict) -> None:
        if self.files and self.pictured == MAX_PICTURED:
            named = " and ".join(self.files)
            raise UsageError(f"{named} {'hold' if len(self.files) > 1 else 'holds'} at most {MAX_PICTURED:,} "
                             "sentences (a page of more "
                             "is too large to open, and a batch's pictures are held until it ends); split the input "
                             f"(split -l {MAX_PICTURED}) or leave out {named}")
        self.pictured += 1
        first = not self.title
        self.title = self.title or f"attn-cli {report['command']}"
        if "--html" in self.files:
            self.documents.append(report)
        if self.recorder is not None and self.recorder is not self.terminal:  # tables drawn for the SVG alone
            draw_literally(self.draw, report, self.recorder)
        if self.held is not None:
            self.held.append((report, first))
        else:
            self._write(report, first)

    def _write(self, report: dict, first: bool) -> None:
        """The document on stdout, whole: one that a write cuts is removed from a regular file behind stdout."""
        if self.style == "json":
            write_json(report if self.selection is None else select(report, self.selection))
            return
        with whole_or_none(sys.stdout):
            if self.style == "plain":
                write_through(sys.stdout, (header() if first else "") + plain_records(report))
            else:
                assert self.terminal is not None  # __init__ makes it whenever the style is tables
                draw_literally(self.draw, report, self.terminal)
                self.terminal.file.flush()
            sys.stdout.flush()

    def show_error(self, document: dict) -> None:
        """A line that failed: its error document on stdout with --json (the caller tells stderr otherwise)."""
        if self.style == "json":
            write_json(document)

    def finish(self) -> None:
        """Write the requested files (nothing happens when no sentence was shown), then a held document."""
        if not self.title:
            return
        if "--html" in self.files:
            from attn_cli.render.html import html_page

            write_target(self.files["--html"], "--html", html_page(self.documents, self.command_line))
        if self.recorder is not None:
            write_target(self.files["--svg"], "--svg", _WEB_FONT.sub("", self.recorder.export_svg(title=self.title)))
        if self.table is not None:
            self.table.close()
        for report, first in self.held or ():
            self._write(report, first)


def write_target(path: Path, flag: str, data: str | bytes) -> None:
    """Write a picture or a weights file atomically (never half a file); a failure is a usage error naming the
    option. A path to stdout's own file (`--html /dev/stdout > page.html`) is written through stdout, after what
    stdout holds: a second descriptor on the file would write at its own offset, over stdout's output or under
    it. Only --html and --svg get here so (options.output_target)."""
    with writing(path, flag):
        if not stdout_file(path):
            write_file(path, data)
            return
        with whole_or_none(sys.stdout):
            write_through(sys.stdout, data.encode("utf-8", errors="backslashreplace") if isinstance(data, str)
                          else data)


@contextlib.contextmanager
def writing(path: Path, flag: str) -> Iterator[None]:
    """An OSError met while writing the file of option `flag` as the usage error that names them (the disk is
    full, the folder is read-only, ...); a closed pipe behind it (`--html /dev/stdout | head`) is left to end the
    run as a closed stdout does (141)."""
    try:
        yield
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise
        raise UsageError(f"cannot write {flag} {shown_path(path)}: {exc.strerror or exc}; choose a writable "
                         "file") from None


class ParquetTable:
    """explain's --parquet: attn_cli.ExplainParquet, one row per token of each line, whole or absent (`discard`
    leaves the path as it was); its write failures are usage errors naming --parquet."""

    def __init__(self, path: Path) -> None:
        self.path = path
        from attn_cli import ExplainParquet  # the Parquet writer loads for a run that asks for a table

        with writing(path, "--parquet"):
            self.table = ExplainParquet(path)

    def add(self, result: ExplainResult, line: int | None) -> None:
        with writing(self.path, "--parquet"):
            self.table.add(result, line)

    def close(self) -> None:
        with writing(self.path, "--parquet"):
            self.table.close()

    def discard(self) -> None:
        self.table.discard()
