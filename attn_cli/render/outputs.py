"""Where a command's report documents go: stdout (tables or JSON) and, on request, the --html and --svg files.

Every command hands each document to `ReportOutputs.show` and calls `finish` at the end, so `explain`,
`compare` and `trace` write their pictures the same way. The SVG is the terminal rendering, recorded by
Rich at the console's width (the terminal's, else $COLUMNS, else 80); with --json the tables still go to
the SVG though stdout gets JSON. The HTML page holds every document of the run (one per stdin line).
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from attn_cli.errors import UsageError
from attn_cli.render.json_out import write_json

if TYPE_CHECKING:
    from rich.console import Console

Draw = Callable[[dict, "Console"], None]
# Rich's SVG asks a CDN for its Fira Code font; keep only the local() sources so opening it fetches nothing.
_WEB_FONT = re.compile(r',\s*url\("https?://[^"]*"\)\s*format\("[^"]*"\)')


class ReportOutputs:
    """Sends each report document to stdout and remembers what the --html and --svg files need."""

    def __init__(self, draw: Draw, *, json: bool, files: dict[str, Path], command_line: str) -> None:
        self.draw, self.json, self.files, self.command_line = draw, json, files, command_line
        self.documents: list[dict] = []
        self.terminal = self.recorder = None
        if json and "--svg" not in files:
            return  # JSON only: Rich is never imported (~50 ms of start-up saved)
        from rich.console import Console

        self.terminal = Console(record="--svg" in files and not json)
        self.recorder = self.terminal if self.terminal.record else None
        if "--svg" in files and json:  # tables for the SVG only, never on stdout
            self.recorder = Console(record=True, file=io.StringIO(), width=self.terminal.width, force_terminal=True)

    def show(self, report: dict) -> None:
        self.documents.append(report)
        if self.json:
            write_json(report)
        else:
            self.draw(report, self.terminal)
        if self.recorder is not None and self.recorder is not self.terminal:
            self.draw(report, self.recorder)

    def finish(self) -> None:
        """Write the requested files (nothing happens when no sentence was shown)."""
        if not self.documents:
            return
        if "--html" in self.files:
            from attn_cli.render.html import html_page

            write_file(self.files["--html"], "--html", html_page(self.documents, self.command_line))
        if self.recorder is not None:
            title = f"attn-cli {self.documents[0]['command']}"
            write_file(self.files["--svg"], "--svg", _WEB_FONT.sub("", self.recorder.export_svg(title=title)))


def write_file(path: Path, flag: str, text: str) -> None:
    """Write atomically (a temporary file in the same folder, then rename): never a half-written picture."""
    import tempfile  # only when a file is written: it costs ~8 ms of start-up (random, hashlib)

    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes it private; give it a normal file's mode
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        raise UsageError(f"cannot write {flag} {path}: {exc.strerror or exc}; choose a writable file") from None
