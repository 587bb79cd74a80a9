"""The one way the command line speaks to a person on stderr: `attn-cli: <kind>: <message>`."""

from __future__ import annotations

import sys

from attn_cli.errors import AttnError, Option
from attn_cli.literal import literal


def fail(message: str, kind: str = "error") -> None:
    """One line on stderr, prefixed with the program name: never through Rich, never wrapped, and with any
    control or bidi character that came from input (a word, a file name) shown as its escape."""
    sys.stderr.write(f"attn-cli: {kind}: {literal(message)}\n")
    sys.stderr.flush()


def warn(message: str) -> None:
    fail(message, kind="warning")


def as_options(error: AttnError) -> str:
    """An error's message with the library's keywords spelt as this command line's options."""
    return error.spoken(Option.command_line)
