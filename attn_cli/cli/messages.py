"""The one way the command line speaks to a person on stderr: `attn-cli: <kind>: <message>`."""

from __future__ import annotations

import io
import os
import re
import sys
from contextvars import ContextVar

from attn_cli.errors import LONGEST_WORD, AttnError, Option, literal, shorten

QUIET: ContextVar[bool] = ContextVar("quiet", default=False)  # --quiet: warnings unsaid, errors still said
# the punctuation after a word kept, and a word `shorten` already cut (it ends in …) left as it is
LONG_WORD = re.compile(rf"[^\s:;,'\"…]{{{LONGEST_WORD + 1},}}")


def fail(message: str, kind: str = "error") -> None:
    """One line on stderr, never through Rich, with input's control characters escaped and every word longer
    than LONGEST_WORD cut (the parser's messages too, so none quotes kilobytes of what it was given)."""
    if kind == "warning" and QUIET.get():
        return
    say(f"attn-cli: {kind}: {literal(LONG_WORD.sub(lambda word: shorten(word.group(), LONGEST_WORD), message))}")


def warn(message: str) -> None:
    fail(message, kind="warning")


def say(line: str) -> None:
    """A line on stderr, best effort: when stderr cannot be written it goes to /dev/null, and the run, its output
    and its exit code are what they would have been."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        to_null(sys.stderr)


def to_null(stream: object) -> None:
    """/dev/null in place of the descriptor behind `stream`, so the interpreter's final flush goes nowhere."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())  # type: ignore[attr-defined]
        os.close(null)
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):  # a stand-in stream (a test runner's)
        pass


def bug_message(exc: Exception) -> str:
    """That an unexpected exception is a bug; with ATTN_CLI_DEBUG set it is raised again, traceback and all."""
    if os.environ.get("ATTN_CLI_DEBUG"):
        raise exc
    return f"{type(exc).__name__}: {exc}; this is a bug: rerun with ATTN_CLI_DEBUG=1 and report the traceback"


def as_options(error: AttnError) -> str:
    """An error's message with the library's keywords spelt as this command line's options."""
    return error.spoken(Option.command_line)
