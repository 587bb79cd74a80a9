"""The `attn-cli` command line: a thin client of the library, turning options into settings and results into
output. `run` loads its modules itself, so a Ctrl-C while they load ends with 130 and no traceback."""

from __future__ import annotations

from attn_cli.errors import INTERRUPTED

__all__ = ["run"]


def run() -> None:
    """The `attn-cli` program: its console script, and `python -m attn_cli`."""
    try:
        from attn_cli.cli.app import main
    except KeyboardInterrupt:
        raise SystemExit(INTERRUPTED) from None
    main()
