"""A transient Rich progress bar on stderr for long imports and downloads, or nothing at all.

Shown only when stderr is a terminal and the output is not JSON: pipes, logs
and `--json` runs stay silent. Rich is imported only when a bar is shown.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator


@contextmanager
def progress_bar(description: str, total_bytes: int | None, enabled: bool = True,
                 unit: str | None = "words") -> Iterator[Callable[[int, int], None]]:
    """Yields update(done_bytes, count): bytes read so far and words so far (no count column when unit is None)."""
    if not (enabled and sys.stderr.isatty()):
        yield lambda done, count: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                               TransferSpeedColumn)

    counter = () if unit is None else (TextColumn(f"{{task.fields[count]:,}} {unit}"),)
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
               *counter, TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(description, total=total_bytes, count=0)
        yield lambda done, count: progress.update(task, completed=done, count=count)
