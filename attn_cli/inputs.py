"""Where sentences come from: an argument, `-` for stdin, or a file; one sentence per non-blank line.

Kept apart from cli.py so every command reads its input the same way.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterable, Iterator

from attn_cli.errors import InputError, UsageError

STDIN = "-"


def sentences(argument: str, example: str = 'echo "money bank grows" | attn-cli explain -') -> Iterator[str]:
    """The sentence itself, or each non-blank line of stdin for '-'."""
    if argument != STDIN:
        yield argument
        return
    found = False
    for line in nonblank_lines(stdin_lines()):
        found = True
        yield line
    if not found:
        raise InputError(f"no sentence on stdin; pipe one sentence per line, e.g. {example}")


def stdin_lines() -> Iterator[str]:
    """The lines of stdin decoded as UTF-8, read as bytes so a bad line is named, not a traceback."""
    for number, raw in enumerate(sys.stdin.buffer, 1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"line {number} of stdin is not valid UTF-8; convert the input to UTF-8 "
                             "(e.g. iconv -f latin1 -t utf-8)") from None


def sentence_list(arguments: list[str], file: Path | None, example: str) -> list[str]:
    """Every argument in order ('-' expands to the lines of stdin), then the lines of `file`."""
    found = [text for argument in arguments for text in sentences(argument, example)]
    if file is not None:
        found += file_lines(file)
    return found


def file_lines(path: Path) -> list[str]:
    """The non-blank lines of a UTF-8 text file, one sentence each."""
    try:
        with path.open(encoding="utf-8") as stream:
            return list(nonblank_lines(stream))
    except FileNotFoundError:
        raise UsageError(f"--file {path}: no such file; pass a text file with one sentence per line") from None
    except IsADirectoryError:
        raise UsageError(f"--file {path} is a directory; pass a text file with one sentence per line") from None
    except UnicodeDecodeError:
        raise UsageError(f"--file {path} is not UTF-8 text; save it as UTF-8, one sentence per line") from None
    except OSError as exc:
        raise UsageError(f"--file {path}: {exc.strerror}; pass a readable text file") from None


def nonblank_lines(lines: Iterable[str]) -> Iterator[str]:
    """Each line that holds more than white space, without its line ending."""
    for line in lines:
        if line.strip():
            yield line.rstrip("\r\n")
