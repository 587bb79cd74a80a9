"""Help screens that cut nothing in a narrow terminal, and stop quietly when stdout is closed.

Typer draws each panel of options as a table (name, placeholder, help). When the terminal is too narrow for
every word of the table to stand whole, Rich cuts option names with an ellipsis (`--output-projec…`). Below
that width each option's name and placeholder take a line of their own and its help the lines under it,
indented, and so do the panels after it on that screen. Typer has no public hook for either: `_hook_typer`
wraps two of its private functions when a help screen is first drawn (so a run that shows no help never
loads Rich); tests/test_cli_help.py fails if Typer renames them.
"""

from __future__ import annotations

import copy
import functools
import weakref
from typing import TYPE_CHECKING, Any

from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:  # Rich loads with the first help screen: a run that shows none (explain --json) never loads it
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.table import Table

HELP_INDENT = 4  # how far an option's help sits under its name in the stacked layout
UNLIMITED = 10_000  # columns: wide enough that no option's row wraps
# The consoles (one per help screen) where a panel has stacked: the panels after it stack too, so one screen keeps
# one layout (a panel of short names fits where the rest cannot, as a cramped table of three narrow columns)
_STACKING: weakref.WeakSet[Console] = weakref.WeakSet()


def fits(panel: Panel, console: Console) -> bool:
    """Whether Rich draws the panel at the console's width without cutting a word: every word of its table,
    drawn without a limit on width, stands whole in the panel as drawn. (Rich's own measures cannot say: it
    shrinks columns below their longest word, and a help cell measures as zero wide.)"""
    def words(renderable: Any, width: int) -> set[str]:
        lines = console.render_lines(renderable, console.options.update_width(width), pad=False)
        return set("".join(segment.text for line in lines for segment in line).split())

    return words(panel.renderable, UNLIMITED) <= words(panel, console.width)


def stacked(table: Table) -> Group:
    """The table's rows, each as its name and placeholder on one line and its help (the last column) below."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    rows: list[Any] = []
    for cells in zip(*(list(column.cells) for column in table.columns)):
        heading = [Text(cell) if isinstance(cell, str) else cell for cell in cells[:-1]]
        rows += [Text(" ").join(cell for cell in heading if cell.plain), Padding(cells[-1], (0, 0, 0, HELP_INDENT))]
    return Group(*rows)


def _options_panel(draw, console: Console, **panel: Any) -> None:
    """Typer's panel of options, stacked when its table cannot fit the console's width, or when a panel before
    it on the same screen could not."""
    from rich.panel import Panel
    from rich.table import Table

    drawn: list[Any] = []
    console.print = lambda *renderables, **options: drawn.extend(renderables)  # type: ignore[method-assign]
    try:
        draw(console=console, **panel)
    finally:
        del console.print  # the class's own again
    for item in drawn:
        if isinstance(item, Panel) and isinstance(item.renderable, Table) and (
                console in _STACKING or not fits(item, console)):
            item.renderable = stacked(item.renderable)
            _STACKING.add(console)
        console.print(item)


def _hook_typer() -> None:
    """Route Typer's panels of options through `_options_panel`, and make its help consoles hand a closed stdout
    (`--help | head -c 1`) back to the CLI as a BrokenPipeError, which stops quietly with exit 141 where Rich's
    own handler would exit 1 without a word (once; later calls change nothing)."""
    from typer import rich_utils

    from attn_cli.cli.outputs import stdout_closed

    draw, make = rich_utils._print_options_panel, rich_utils._get_rich_console
    if getattr(draw, "hooked", False):
        return

    @functools.wraps(draw)  # the signature stays Typer's, as the test of these hooks reads it
    def options_panel(**panel: Any) -> None:
        _options_panel(draw, **panel)

    @functools.wraps(make)
    def console(stderr: bool = False) -> Console:
        made = make(stderr=stderr)
        made.on_broken_pipe = stdout_closed  # type: ignore[method-assign]
        return made

    options_panel.hooked = True  # type: ignore[attr-defined]
    rich_utils._print_options_panel, rich_utils._get_rich_console = options_panel, console


class NarrowHelp:
    """Mixed into a Typer command or group: its help is drawn through `_hook_typer`."""

    def format_help(self, ctx, formatter):
        _hook_typer()
        return super().format_help(ctx, formatter)  # type: ignore[misc]


class NarrowHelpGroup(NarrowHelp, TyperGroup):
    """A Typer group whose help cuts nothing in a narrow terminal."""


def _no_metavar(*args: Any, **kwargs: Any) -> str:
    return ""


class Command(NarrowHelp, TyperCommand):
    """A command whose help cuts nothing in a narrow terminal, shows an argument by its metavar alone (SENTENCE...,
    not also <str>), and whose usage line writes a required argument bare (WORD), as click and man pages do:
    Typer braces it ({WORD}), which reads as a set or a template."""

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for param in params:
            if param.param_type_name == "argument" and vars(param.type).get("get_metavar") is not _no_metavar:
                param.type = copy.copy(param.type)  # the type may be shared (click's STRING): change a copy
                param.type.get_metavar = _no_metavar  # type: ignore[method-assign]
        return params

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece
                for piece in super().collect_usage_pieces(ctx)]
