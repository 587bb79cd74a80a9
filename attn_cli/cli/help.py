"""Help screens that cut nothing in a narrow terminal.

Typer draws each panel of options as a table (name, placeholder, help). When the
terminal is too narrow for every word of the table to stand whole, Rich cuts option
names with an ellipsis (`--output-projec…`). Below that width each option's name
and placeholder take a line of their own and its help the lines under it, indented,
and so do the panels after it on that screen; at widths where the tables fit they are
drawn as Typer draws them.

Typer has no hook for this: the panel printer is wrapped, once, when a help screen
is first drawn (so a run that shows no help never loads Typer's Rich module, nor Rich).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from typer.core import TyperGroup

if TYPE_CHECKING:  # Rich loads with the first help screen: a run that shows none (explain --json) never loads it
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.table import Table

HELP_INDENT = 4  # how far an option's help sits under its name in the stacked layout
UNLIMITED = 10_000  # columns: wide enough that no option's row wraps


class _PanelCatcher:
    """Stands in for the console while Typer builds a panel, and keeps the panel instead of printing it."""

    def __init__(self, console: Console):
        self.console = console
        self.panels: list[Panel] = []

    def print(self, *renderables: Any, **options: Any) -> None:
        self.panels.extend(renderables)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


def fits(panel: Panel, console: Console) -> bool:
    """Whether Rich draws the panel at the console's width without cutting a word: every word of its table,
    drawn without a limit on width, stands whole in the panel as drawn. (Rich's own measures cannot say: it
    shrinks columns below their longest word, and a help cell measures as zero wide.)"""
    return _words(panel.renderable, console, UNLIMITED) <= _words(panel, console, console.width)


def _words(renderable: Any, console: Console, width: int) -> set[str]:
    lines = console.render_lines(renderable, console.options.update_width(width), pad=False)
    return set("".join(segment.text for line in lines for segment in line).split())


def stacked(table: Table) -> Group:
    """The table's rows, each as its name and placeholder on one line and its help (the last column) below."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    columns = [list(column.cells) for column in table.columns]
    rows: list[Any] = []
    for cells in zip(*columns):
        heading = [Text(cell) if isinstance(cell, str) else cell for cell in cells[:-1]]
        rows.append(Text(" ").join(cell for cell in heading if cell.plain))
        rows.append(Padding(cells[-1], (0, 0, 0, HELP_INDENT)))
    return Group(*rows)


# The consoles (one per help screen) where a panel has stacked: the panels after it stack too, so one screen keeps
# one layout (a panel of short names fits where the rest cannot, as a cramped table of three narrow columns)
_STACKING: weakref.WeakSet[Console] = weakref.WeakSet()


def _options_panel(draw, **panel: Any) -> None:
    """Typer's panel of options, stacked when its table cannot fit the console's width, or when a panel before
    it on the same screen could not."""
    from rich.panel import Panel
    from rich.table import Table

    console = panel.pop("console")
    catcher = _PanelCatcher(console)
    draw(console=catcher, **panel)
    for drawn in catcher.panels:
        if isinstance(drawn, Panel) and isinstance(drawn.renderable, Table) and (
                console in _STACKING or not fits(drawn, console)):
            drawn.renderable = stacked(drawn.renderable)
            _STACKING.add(console)
        console.print(drawn)


def stack_options_when_narrow() -> None:
    """Route Typer's panels of options through `_options_panel` (once; later calls change nothing)."""
    from typer import rich_utils

    draw = rich_utils._print_options_panel
    if getattr(draw, "stacks_when_narrow", False):
        return

    def options_panel(**panel: Any) -> None:
        _options_panel(draw, **panel)

    options_panel.stacks_when_narrow = True  # type: ignore[attr-defined]
    rich_utils._print_options_panel = options_panel


def closed_pipes_handed_back() -> None:
    """Make Typer's help consoles hand a closed stdout (`--help | head -c 1`) back to the CLI as a BrokenPipeError,
    which stops quietly with exit 141, where Rich's own handler would exit 1 without a word (once)."""
    from typer import rich_utils

    make = rich_utils._get_rich_console
    if getattr(make, "hands_back_closed_pipes", False):
        return

    def console(stderr: bool = False) -> Console:
        from attn_cli.cli.outputs import stdout_closed

        made = make(stderr=stderr)
        made.on_broken_pipe = stdout_closed  # type: ignore[method-assign]
        return made

    console.hands_back_closed_pipes = True  # type: ignore[attr-defined]
    rich_utils._get_rich_console = console


class NarrowHelp:
    """Mixed into a Typer command or group: its help stacks options over their help when the table cannot fit,
    and stops quietly when stdout is closed."""

    def format_help(self, ctx, formatter):
        stack_options_when_narrow()
        closed_pipes_handed_back()
        return super().format_help(ctx, formatter)  # type: ignore[misc]


class NarrowHelpGroup(NarrowHelp, TyperGroup):
    """A Typer group whose help cuts nothing in a narrow terminal."""

