"""The one way the command line speaks to a person on stderr: `attn-cli: <kind>: <message>`."""

from __future__ import annotations

import io
import os
import re
import sys
from contextvars import ContextVar

from attn_cli.errors import AttnError, Option, literal, shorten

QUIET: ContextVar[bool] = ContextVar("quiet", default=False)  # --quiet: warnings and notes unsaid, errors still said


LONGEST_WORD = 200  # characters: a real path (a venv's, a cache's) stays whole, so a command it is in can be pasted
LONG_WORD = re.compile(rf"[^\s:;,'\"]{{{LONGEST_WORD + 1},}}")  # the punctuation after a word kept


def fail(message: str, kind: str = "error") -> None:
    """One line on stderr, prefixed with the program name: never through Rich, never wrapped, and with any
    control or bidi character that came from input (a word, a file name) shown as its escape. Every word (a
    path, a value) longer than LONGEST_WORD is cut, with its length, here where every message passes, the
    parser's own included, so none quotes kilobytes of what it was given. Under --quiet only errors are
    written."""
    if kind == "warning" and QUIET.get():
        return
    say(f"attn-cli: {kind}: {literal(LONG_WORD.sub(lambda word: shorten(word.group(), LONGEST_WORD), message))}")


def say(line: str) -> None:
    """A line on stderr, best effort: when stderr cannot be written (`2>/dev/full`, a reader gone), the line is
    lost and stderr goes to /dev/null, but the run, its output and its exit code are what they would have been."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        to_null(sys.stderr)


def to_null(stream: object) -> None:
    """/dev/null in place of the descriptor behind `stream`, so what could not be written, and the interpreter's
    final flush of it, go nowhere instead of failing."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())  # type: ignore[attr-defined]
        os.close(null)
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):  # a stand-in stream (a test runner's)
        pass


def bug_message(exc: Exception) -> str:
    """What an unexpected exception says: that it is a bug, and how to get its traceback. With
    ATTN_CLI_DEBUG set, the exception is raised again instead, traceback and all."""
    if os.environ.get("ATTN_CLI_DEBUG"):
        raise exc
    return f"{type(exc).__name__}: {exc}; this is a bug: rerun with ATTN_CLI_DEBUG=1 and report the traceback"


def warn(message: str) -> None:
    fail(message, kind="warning")


def as_options(error: AttnError) -> str:
    """An error's message with the library's keywords spelt as this command line's options."""
    return error.spoken(Option.command_line)
