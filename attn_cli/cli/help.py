"""Help screens that cut nothing in a narrow terminal (Rich would cut `--output-projec…`: each option then
stacks over its help) and stop quietly when stdout is closed. Typer has no public hook for either, so
`_hook_typer` wraps its private console maker; tests/test_cli_help.py fails if Typer changes it."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:  # Rich loads with the first help screen: a run that shows none (explain --json) never loads it
    from rich.console import Console, Group
    from rich.table import Table

HELP_INDENT = 4  # how far an option's help sits under its name in the stacked layout
STACKED_BELOW = 80  # columns: in fewer, Rich would cut the longest option names (--output-projec…)


def stacked(table: Table) -> Group:
    """Each row's name and placeholder on one line, its help (the last column) indented below."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    rows: list[Any] = []
    for cells in zip(*(list(column.cells) for column in table.columns)):
        heading = [Text(cell) if isinstance(cell, str) else cell for cell in cells[:-1]]
        rows += [Text(" ").join(cell for cell in heading if cell.plain), Padding(cells[-1], (0, 0, 0, HELP_INDENT))]
    return Group(*rows)


def _hook_typer() -> None:
    """Make Typer's help console stack every panel's table on a narrow terminal and hand a closed stdout
    (`--help | head -c 1`) back as a BrokenPipeError (exit 141; Rich's handler would exit 1). Once."""
    from rich.panel import Panel
    from rich.table import Table
    from typer import rich_utils

    from attn_cli.cli.outputs import stdout_closed

    make = rich_utils._get_rich_console
    if getattr(make, "hooked", False):
        return

    def console(stderr: bool = False) -> Console:
        made = make(stderr=stderr)
        made.on_broken_pipe = stdout_closed  # type: ignore[method-assign]
        draw = made.print

        def narrow(*items: Any, **options: Any) -> None:
            for item in items:
                if isinstance(item, Panel) and isinstance(item.renderable, Table) and made.width < STACKED_BELOW:
                    item.renderable = stacked(item.renderable)
            draw(*items, **options)

        made.print = narrow  # type: ignore[method-assign]
        return made

    console.hooked = True  # type: ignore[attr-defined]
    rich_utils._get_rich_console = console


class NarrowHelp:

    def format_help(self, ctx, formatter):
        _hook_typer()
        return super().format_help(ctx, formatter)  # type: ignore[misc]


class NarrowHelpGroup(NarrowHelp, TyperGroup):
    pass


class Command(NarrowHelp, TyperCommand):
    """A command showing an argument by its metavar alone (SENTENCE..., not also <str>) and a required one bare in
    its usage line (WORD, as man pages do, where Typer writes {WORD})."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.param_type_name == "argument":
                param.type = copy.copy(param.type)  # the type may be shared (click's STRING): change a copy
                param.type.get_metavar = lambda *args, **kwargs: ""  # type: ignore[method-assign]

    def get_help_option(self, ctx):
        """--help (and -h), listed last in a panel of its own."""
        option = super().get_help_option(ctx)
        if option is not None:
            option.rich_help_panel = "Help"
        return option

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece
                for piece in super().collect_usage_pieces(ctx)]
