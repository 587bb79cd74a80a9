"""The `attn-cli` command line: a thin client of the library that turns options into settings and results into
output."""

from attn_cli.cli.app import app, main

__all__ = ["app", "main"]
