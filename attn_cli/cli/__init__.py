"""The `attn-cli` command line: a thin client of the library, turning options into settings and results into output.

Its modules (Typer, Rich, numpy and the library) load when the program starts, which takes a good part of a
second; `run` loads them itself, so a Ctrl-C in that time ends the program with 130 and no traceback, as a
Ctrl-C later does.
"""

from __future__ import annotations

from typing import Any

from attn_cli.errors import INTERRUPTED

__all__ = ["main", "run"]


def run() -> None:
    """The `attn-cli` program: its console script, and `python -m attn_cli`."""
    try:
        from attn_cli.cli.app import main
    except KeyboardInterrupt:
        raise SystemExit(INTERRUPTED) from None
    main()


def __getattr__(name: str) -> Any:
    """`main`, the command line as a function, loaded on first use like everything `run` loads."""
    if name != "main":
        raise AttributeError(f"module 'attn_cli.cli' has no attribute {name!r}")
    from attn_cli.cli.app import main

    return main
