"""One exception family for every expected failure, each with its exit code.

The CLI catches `AttnError` in one place and prints `attn-cli: error: <message>`
as a single line on stderr, so no expected failure ever shows a traceback. The
table of exit codes is part of the public contract (docs/limits.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePath

from dataclasses import dataclass
from typing import Callable

NAME_ONLY = object()  # an Option without a value: the setting's name alone


def flag(name: str) -> str:
    """A setting's command-line option: "d_k" -> "--d-k" (the one place a keyword is spelt as a flag)."""
    return "--" + name.replace("_", "-")


# Text that came from input is shown literally: no terminal control, no reordering, on every output. Words of a
# vector file, sentences, jsonl ids, file names and spelling suggestions can carry escape sequences (clear the
# screen, write the clipboard through OSC 52, hide a link behind OSC 8, ring the bell) or bidi overrides that
# reorder what a line seems to say. Before such text reaches a terminal, a log or an SVG (where U+0001 is not even
# well-formed XML), each of those characters is written as its escape: ESC as `\\x1b`, RIGHT-TO-LEFT OVERRIDE as
# `\\u202e`. Everything else, accents, CJK and emoji included, is left as it is.
# C0 and C1 controls and DEL, bidi marks, overrides and isolates, line and paragraph separators, lone surrogates,
# and the invisible spaces that make look-alike words (zero width space, word joiner, BOM); not the joiners of emoji
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029"
                     "\ufeff\ud800-\udfff]")


def literal(text: str) -> str:
    """'bank\\x1b[2J' -> 'bank\\\\x1b[2J': each control or bidi character as its visible escape."""
    return _HIDDEN.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


LONGEST_WORD = 200  # characters: a real path (a venv's, a cache's) stays whole, so a command it is in can be pasted


def shorten(text: str, limit: int = 40) -> str:
    """A word as it can stand in a one-line message: long ones cut, with their length."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def shown_path(path: object) -> str:
    """A file name as it can stand in a one-line message: one longer than 80 characters (a name past the file
    system's NAME_MAX, say) cut, with its length."""
    return shorten(str(path), 80)


@dataclass(frozen=True)
class Option:
    """A setting named inside a message: `name=value` to Python, `--name value` on the command line."""

    name: str
    value: object = NAME_ONLY
    python_text: str = ""  # how Python says it, when that is not a keyword argument (another function, say)
    typed_text: str = ""  # how the command line says it, when that is not the option (a value: "all" for None)

    def python(self) -> str:
        return self.python_text or (self.name if self.value is NAME_ONLY else f"{self.name}={self.value!r}")

    def command_line(self) -> str:
        if self.typed_text:
            return self.typed_text
        option = flag(self.name)
        return option if self.value is NAME_ONLY or self.value is True else f"{option} {self.value}"


class AttnError(Exception):
    """An expected failure: the message names the problem and the fix.

    A message is text and `Option`s; `message` spells the options as Python
    keywords, `spoken(Option.command_line)` as command-line options.
    """

    exit_code = 1

    def __init__(self, *parts: str | Option) -> None:
        self.parts = parts
        self.message = self.spoken(Option.python)
        super().__init__(self.message)

    def spoken(self, spell: Callable[[Option], str]) -> str:
        return "".join(part if isinstance(part, str) else spell(part) for part in self.parts)

    def noted(self, note: str) -> AttnError:
        """A copy of this error with `note` after its message (a batch says where it stopped)."""
        noted = type(self).__new__(type(self))  # not copy.copy: it would call __init__ with the message alone
        noted.__dict__.update(vars(self))
        noted.parts = (*self.parts, note)
        noted.message = noted.spoken(Option.python)
        noted.args = (noted.message,)
        return noted


class UsageError(AttnError):
    """An option value or combination of options that cannot work."""

    exit_code = 2


class SettingsError(UsageError, ValueError):
    """A setting whose value (or combination with another) cannot be computed.

    It names the keyword (`setting`), what is wrong (`problem`) and, where another
    setting would make it work, that setting (`fix`, e.g. {"mode": "projected"}).
    """

    def __init__(self, setting: str, problem: str | tuple[str | Option, ...], fix: dict[str, object] | None = None
                 ) -> None:
        parts = (problem,) if isinstance(problem, str) else problem  # parts: a value each language spells its way
        self.setting, self.fix = setting, fix or {}
        self.problem = "".join(part if isinstance(part, str) else part.python() for part in parts)
        remedy = [part for name, value in self.fix.items() for part in (" ", Option(name, value))]
        super().__init__(Option(setting), " ", *parts, *(["; add", *remedy] if remedy else []))


class MissingExtra(UsageError, ImportError):
    """An optional extra that a feature needs is not installed; the message names the package and the pip command
    (`--parquet needs pyarrow: pip install "attn-cli[parquet]"`). A usage error (exit 2) that is also the
    ImportError Python users catch for a missing package."""


class UnknownWordsWarning(UserWarning):
    """explain, trace, compare or cross left out words the vector set does not know (each result names them in
    `unknown_words` and `warnings`); silence it with warnings.simplefilter("ignore", UnknownWordsWarning)."""


class SettingsTypeError(SettingsError, TypeError):
    """A setting of the wrong type (heads="2", settings={}): a SettingsError that is also the TypeError Python
    users catch for it."""


class InputError(AttnError):
    """The sentence itself cannot be attended: empty, all unknown words, ..."""

    exit_code = 3


class InputTypeError(InputError, TypeError):
    """Text asked for and something else given (explain(42)): an InputError that is also a TypeError."""


def require_iterable(name: str, value: object, items: str) -> Iterator:
    """iter(value) for an argument that takes many `items` (sentences, lines): one str, or a value that is not
    iterable at all (42, None), is an InputTypeError naming the argument."""
    if not isinstance(value, (str, bytes)):
        try:
            return iter(value)  # type: ignore[call-overload]
        except TypeError:
            pass
    given = "one str" if isinstance(value, str) else type(value).__name__
    raise InputTypeError(f"{name} must be an iterable of {items}, not {given}")


def path_argument(name: str, value: object) -> str:
    """An argument that names a file, as a str: anything but a str or os.PathLike is a SettingsTypeError naming
    the argument (os.fspath's own TypeError would not say which), and a name holding a NUL, which no file name
    can hold, a SettingsError showing it (the ValueError os.stat or open would raise names neither)."""
    if not isinstance(value, (str, os.PathLike)):
        raise SettingsTypeError(name, f"must be a file path (str or os.PathLike), got {type(value).__name__}")
    path = str(os.fspath(value))
    if "\0" in path:
        raise SettingsError(name, f"{literal(shown_path(path))} holds a NUL character (\\x00), which no file name can "
                                  "hold; give the file's name without it")
    return path


class OutputError(UsageError, OSError):
    """What the run writes cannot be written: a file (a full disk, a folder where the file should be, no such
    folder), stdout in an encoding without one of its characters, or a large JSON document with no room in the
    temporary folder. A UsageError naming the fix (exit 2) that is also the OSError Python users catch, with the
    cause's errno; like a full disk behind stdout, it ends a run, a batch included, rather than failing one line."""

    def __init__(self, problem: str, cause: OSError | None = None, target: object = None) -> None:
        super().__init__(problem)
        self.errno, self.strerror = (None, None) if cause is None else (cause.errno, cause.strerror)
        self.filename = None if target is None else str(target)

    @classmethod
    def of_file(cls, target: object, cause: OSError) -> OutputError:
        """`target` could not be written, for `cause`: named as the caller gave it, never as a temporary file."""
        return cls(f"cannot write {target}: {cause.strerror or cause}; choose a writable file", cause, target)

    def __str__(self) -> str:
        return self.message  # OSError's own would be "[Errno 28] ...: 'target'", without the fix


class VectorsError(AttnError):
    """The vector source is missing, unreadable or malformed."""

    exit_code = 4


class WeightsError(AttnError):
    """A trained layer's weights file is missing, damaged, or made for another vector set or other settings."""

    exit_code = 5


class DamagedCache(VectorsError):
    """A cache folder found inconsistent after it was loaded: in what a warm load does not read (an entry of the
    stored index, the values of a row a sentence uses), so it cannot be rebuilt in this run. Names the fix."""

    def __init__(self, folder: object, problem: str) -> None:
        self.problem = problem
        super().__init__(f"the cache {folder} is damaged ({problem}); remove it with attn-cli vectors remove "
                         f"{PurePath(str(folder)).name} and run again to import its file afresh")


@contextmanager
def memory_named(error: Callable[[], AttnError]) -> Iterator[None]:
    """A MemoryError inside (numpy's "Unable to allocate ...") becomes `error()`: the error of the setting that
    drives that memory, named with its remedy and its family's exit code, never taken for a bug."""
    try:
        yield
    except MemoryError:
        raise error() from None


PIPE_CLOSED = 141  # 128 + SIGPIPE: what a shell reports for `yes | head`
INTERRUPTED = 130  # 128 + SIGINT: Ctrl-C

EXIT_CODES = {
    0: "success",
    1: "internal error (a bug: please report it with the command line)",
    UsageError.exit_code: "bad option or option combination, an output that cannot be written, or an optional "
                          "extra an option needs (pip install \"attn-cli[parquet]\")",
    InputError.exit_code: "the sentence cannot be attended (empty, every word out of vocabulary, word not found) "
                          "or compared (too few sentences, no shared word), or its input is the file stdout "
                          "writes into",
    VectorsError.exit_code: "vector source missing, unreadable or malformed",
    WeightsError.exit_code: "weights file (--weights) missing, damaged, or made for another vector set or settings",
    INTERRUPTED: "interrupted (Ctrl-C)",
    129: "ended by SIGHUP (the terminal closed); nothing half-written left behind, as with Ctrl-C",
    143: "ended by SIGTERM (kill, a service manager); nothing half-written left behind, as with Ctrl-C",
    PIPE_CLOSED: "stdout closed early (e.g. piped into head): stopped quietly",
}
