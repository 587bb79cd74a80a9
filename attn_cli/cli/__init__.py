"""The `attn-cli` command line: a thin client of the library, turning options into settings and results into output."""

from attn_cli.cli.app import main, run

__all__ = ["main", "run"]
