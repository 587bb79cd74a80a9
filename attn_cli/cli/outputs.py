"""Where a command's report documents go: stdout (tables, JSON or records), each written as it is shown, and on
request --html and --svg, which keep the run's documents until `finish`."""

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
from typing import TYPE_CHECKING, Any, Callable, TextIO

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
    from attn_cli import ExplainParquet
    from rich.console import Console

Draw = Callable[[dict, "Console"], None]
# Rich's SVG asks a CDN for its Fira Code font; keep only the local() sources so opening it fetches nothing.
_WEB_FONT = re.compile(r',\s*url\("https?://[^"]*"\)\s*format\("[^"]*"\)')


def renderer(module: str, function: str) -> Draw:
    """A table renderer of attn_cli.render.<module>, imported only when tables are drawn (Rich loads slowly)."""
    return lambda report, console: getattr(importlib.import_module(f"attn_cli.render.{module}"), function)(
        report, console)


def stdout_failure(exc: OSError) -> str | None:
    """What a disk error says when it is stdout's (`> /dev/full`: every file the commands write names itself),
    /dev/null then in stdout's place so the interpreter's final flush cannot fail again; None for another's."""
    if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO) or exc.filename is not None:
        return None
    to_null(sys.stdout)
    return f"cannot write to stdout: {exc.strerror}; redirect it to a file on a disk with room"


def command_line(ctx: typer.Context) -> str:
    """This run's command line, quoted for a shell, as the HTML report shows it."""
    return shlex.join(["attn-cli", *ctx.find_root().obj["arguments"]])


def stdout_closed() -> None:
    """Rich's broken-pipe hook: the CLI then stops quietly with 141 (Rich would exit 1, a bug's code)."""
    raise BrokenPipeError(errno.EPIPE, "stdout was closed")


@contextlib.contextmanager
def status_bar(enabled: bool, columns: Callable[[Any], tuple], stream: TextIO | None = None,
               **fields: Any) -> Iterator[Callable[..., None]]:
    """A transient Rich bar on stderr (or `stream`) when it is a terminal, so a pipe and --json stay silent;
    `columns(rich.progress)` lays it out, and the function given moves it (Progress.update's keywords)."""
    stream = stream or sys.stderr
    if not (enabled and stream.isatty()):
        yield lambda **changes: None
        return
    from rich import progress
    from rich.console import Console

    with progress.Progress(*columns(progress), console=Console(file=stream, force_terminal=True),
                           transient=True) as bar:
        task = bar.add_task(**{"description": "", "total": None, **fields})
        yield lambda **changes: bar.update(task, **changes)


MAX_PICTURED = 1_000  # sentences an --html page or --svg picture holds: ~20 kB of page each (7 words), all in memory


class ReportOutputs:
    """Each document to stdout ("tables", "json" or "plain" `style`), and what --html and --svg need; a run of
    `one_document` writes its files first, so one that cannot be written leaves nothing on stdout."""

    def __init__(self, draw: Draw, *, style: str, files: dict[str, Path], command_line: str,
                 selection: Selection | None = None, one_document: bool = False) -> None:
        self.draw, self.style, self.command_line = draw, style, command_line
        self.files = {option: path for option, path in files.items() if option in ("--html", "--svg")}
        self.selection, self.parquet = selection, files.get("--parquet")
        self.table: ExplainParquet | None = None
        if self.parquet is not None:
            from attn_cli import ExplainParquet  # the Parquet writer loads for a run that asks for a table

            with writing(self.parquet, "--parquet"):
                self.table = ExplainParquet(self.parquet)
        self.documents: list[dict] = []  # kept for --html only
        self.pictured = 0  # documents the pictures hold
        self.title = ""  # the SVG's title, from the first document
        held = one_document and (self.files or self.table is not None)
        self.held: list[dict] | None = [] if held else None  # stdout's documents, after the files
        self.header = header() if style == "plain" else ""  # the records' header, before the first document
        self.terminal = self.recorder = None
        if style != "tables" and "--svg" not in files:
            return  # JSON or plain only: Rich is never imported
        drawn_apart = style != "tables" or self.held is not None  # the SVG's tables are not stdout's as they go
        # NO_COLOR: no escape codes at all (Rich alone would keep bold and dim)
        self.terminal = report_console(record="--svg" in files and not drawn_apart, file=trimmed(sys.stdout),
                                       color_system=None if os.environ.get("NO_COLOR", "") else "auto")
        self.terminal.on_broken_pipe = stdout_closed  # type: ignore[method-assign]
        self.recorder = self.terminal if self.terminal.record else None
        if "--svg" in files and drawn_apart:  # tables for the SVG only, never on stdout
            self.recorder = report_console(record=True, file=io.StringIO(), width=self.terminal.width,
                                           force_terminal=True)

    @property
    def wanted(self) -> frozenset[str] | None:
        """The top-level keys (and `block.part`s) of a document this output shows; None: all of it."""
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
                             "sentences (a page of more is too large to open, and a batch's pictures are held until "
                             f"it ends); split the input (split -l {MAX_PICTURED}) or leave out {named}")
        self.pictured += 1
        self.title = self.title or f"attn-cli {report['command']}"
        if "--html" in self.files:
            self.documents.append(report)
        if self.recorder is not None and self.recorder is not self.terminal:  # tables drawn for the SVG alone
            draw_literally(self.draw, report, self.recorder)
        if self.held is not None:
            self.held.append(report)
        else:
            self._write(report)

    def add_row(self, result: ExplainResult, line: int | None) -> None:
        """explain's tokens of one sentence, to --parquet (when asked)."""
        if self.table is not None:
            with writing(self.parquet, "--parquet"):  # type: ignore[arg-type]
                self.table.add(result, line)

    def _write(self, report: dict) -> None:
        """The document on stdout, whole or (cut by a failed write) not at all."""
        if self.style == "json":
            write_json(report if self.selection is None else select(report, self.selection))
            return
        with whole_or_none(sys.stdout):
            if self.style == "plain":
                write_through(sys.stdout, self.header + plain_records(report))
                self.header = ""
            else:
                assert self.terminal is not None  # __init__ makes it whenever the style is tables
                draw_literally(self.draw, report, self.terminal)
                self.terminal.file.flush()
            sys.stdout.flush()

    def finish(self) -> None:
        """Write the requested files (none when no sentence was shown), then a held document."""
        if not self.title:
            return
        if "--html" in self.files:
            from attn_cli.render.html import html_page

            write_target(self.files["--html"], "--html", html_page(self.documents, self.command_line))
        if self.recorder is not None:
            write_target(self.files["--svg"], "--svg", _WEB_FONT.sub("", self.recorder.export_svg(title=self.title)))
        if self.table is not None:
            with writing(self.parquet, "--parquet"):  # type: ignore[arg-type]
                self.table.close()
        for report in self.held or ():
            self._write(report)


def write_target(path: Path, flag: str, data: str | bytes) -> None:
    """Write a picture or a weights file atomically; a failure is a usage error naming the option. A path to
    stdout's own file (`--html /dev/stdout > x`) goes through stdout: a second descriptor would write over it."""
    with writing(path, flag):
        if not stdout_file(path):
            write_file(path, data)
            return
        with whole_or_none(sys.stdout):
            write_through(sys.stdout, data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data)


@contextlib.contextmanager
def writing(path: Path, flag: str) -> Iterator[None]:
    """An OSError writing option `flag`'s file as the usage error naming them; a closed pipe behind it
    (`--html /dev/stdout | head`) ends the run as a closed stdout does (141)."""
    try:
        yield
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise
        raise UsageError(f"cannot write {flag} {shown_path(path)}: {exc.strerror or exc}; choose a writable "
                         "file") from None
