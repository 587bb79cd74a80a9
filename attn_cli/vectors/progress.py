"""A transient Rich progress bar on stderr for long imports and downloads, when stderr is a terminal and the
output is not JSON; Rich is imported only then."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

from attn_cli.errors import literal


@contextmanager
def progress_bar(description: str, total_bytes: int | None, enabled: bool = True,
                 unit: str | None = "words") -> Iterator[Callable[[int, int], None]]:
    """Yields update(done_bytes, count): bytes read so far and words so far (no count column when unit is None)."""
    if not (enabled and sys.stderr.isatty()):
        yield lambda done, count: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    counter = () if unit is None else (TextColumn(f"{{task.fields[count]:,}} {unit}"),)
    columns = (TextColumn("{task.description}", markup=False), BarColumn(bar_width=BAR_WIDTH), DownloadColumn(),
               *counter, TimeRemainingColumn())
    shown = shortened(literal(description), console.width - FIXED_COLUMNS - (0 if unit is None else COUNT_WIDTH))
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(shown, total=total_bytes, count=0)
        yield lambda done, count: progress.update(task, completed=done, count=count)


BAR_WIDTH = 12
FIXED_COLUMNS = BAR_WIDTH + len(" 456.7/456.7 MB 0:00:00 ")  # what the bar's other columns take
COUNT_WIDTH = len("4,000,000 words ")


def shortened(description: str, width: int) -> str:
    """The description in `width` columns, its middle elided ("importing glove.6B.1…head.txt"), so the bar
    stays one line long."""
    width = max(width, 12)
    if len(description) <= width:
        return description
    keep = width - 1
    return description[:keep - keep // 2] + "…" + description[len(description) - keep // 2:]
