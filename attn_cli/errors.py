"""One exception family for every expected failure, each with its documented exit code (docs/limits.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import PurePath
from typing import Callable

NAME_ONLY = object()  # an Option without a value: the setting's name alone
LONGEST_WORD = 200  # characters: a real path (a venv's, a cache's) stays whole, so a command it is in can be pasted
# Characters that could steer a terminal or reorder a line (C0/C1 controls, bidi marks, separators, lone surrogates,
# invisible spaces) are shown as their escapes wherever input text is echoed; accents, CJK and emoji are left alone.
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029"
                     "\ufeff\ud800-\udfff]")


def flag(name: str) -> str:
    """A setting's command-line option: "d_k" -> "--d-k"."""
    return "--" + name.replace("_", "-")


def literal(text: str) -> str:
    """'bank\\x1b[2J' -> 'bank\\\\x1b[2J': each control or bidi character as its visible escape."""
    return _HIDDEN.sub(lambda match: f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100
                       else f"\\u{ord(match.group()):04x}", text)


def shorten(text: str, limit: int = 40) -> str:
    """A word as it can stand in a one-line message: long ones cut, with their length."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def shown_path(path: object) -> str:
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
        return flag(self.name) + ("" if self.value is NAME_ONLY or self.value is True else f" {self.value}")


class AttnError(Exception):
    """An expected failure naming the problem and the fix; its `Option` parts are spelt per language (`spoken`)."""

    exit_code = 1

    def __init__(self, *parts: str | Option) -> None:
        self.parts = parts
        self.message = self.spoken(Option.python)
        super().__init__(self.message)

    def spoken(self, spell: Callable[[Option], str]) -> str:
        return "".join(part if isinstance(part, str) else spell(part) for part in self.parts)

    def noted(self, note: str) -> AttnError:
        """A copy with `note` after its message (not copy.copy: that would call __init__ with the message alone)."""
        noted = type(self).__new__(type(self))
        noted.__dict__.update(vars(self))
        noted.parts = (*self.parts, note)
        noted.message = noted.spoken(Option.python)
        noted.args = (noted.message,)
        return noted


class UsageError(AttnError):
    """An option value or combination of options that cannot work."""

    exit_code = 2


class SettingsError(UsageError, ValueError):
    """A bad setting: names the keyword (`setting`), the problem, and a setting that would fix it."""

    def __init__(self, setting: str, problem: str | tuple[str | Option, ...], fix: dict[str, object] | None = None
                 ) -> None:
        self.setting = setting
        remedy = [part for name, value in (fix or {}).items() for part in (" ", Option(name, value))]
        super().__init__(Option(setting), " ", *((problem,) if isinstance(problem, str) else problem),
                         *(["; add", *remedy] if remedy else []))


class MissingExtra(UsageError, ImportError):
    """An optional extra a feature needs is not installed (exit 2, and the ImportError Python users catch)."""


class UnknownWordsWarning(UserWarning):
    """A result left out words the vector set does not know (listed in its `unknown_words`)."""


class SettingsTypeError(SettingsError, TypeError):
    """A setting of the wrong type (heads="2"): also the TypeError Python users catch."""


class InputError(AttnError):
    """The sentence itself cannot be attended: empty, all unknown words, ..."""

    exit_code = 3


class InputTypeError(InputError, TypeError):
    """Text asked for and something else given (explain(42))."""


def require_iterable(name: str, value: object, items: str) -> Iterator:
    """iter(value) for an argument of many `items`; one str or a non-iterable is an InputTypeError naming it."""
    if not isinstance(value, (str, bytes)):
        try:
            return iter(value)  # type: ignore[call-overload]
        except TypeError:
            pass
    given = "one str" if isinstance(value, str) else type(value).__name__
    raise InputTypeError(f"{name} must be an iterable of {items}, not {given}")


def path_argument(name: str, value: object) -> str:
    """An argument naming a file, as a str; a wrong type or a NUL in it is a SettingsError naming the argument."""
    if not isinstance(value, (str, os.PathLike)):
        raise SettingsTypeError(name, f"must be a file path (str or os.PathLike), got {type(value).__name__}")
    path = str(os.fspath(value))
    if "\0" in path:
        raise SettingsError(name, f"{literal(shown_path(path))} holds a NUL character (\\x00), which no file name can "
                                  "hold; give the file's name without it")
    return path


class OutputError(UsageError, OSError):
    """What the run writes cannot be written: a UsageError (exit 2) that is also an OSError with the cause's errno;
    it ends a run, a batch included."""

    def __init__(self, problem: str, cause: OSError | None = None, target: object = None) -> None:
        super().__init__(problem)
        self.errno, self.strerror = (None, None) if cause is None else (cause.errno, cause.strerror)
        self.filename = None if target is None else str(target)

    @classmethod
    def of_file(cls, target: object, cause: OSError) -> OutputError:
        """`target` (as the caller named it, never a temporary file) could not be written, for `cause`."""
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
    """A cache folder found inconsistent after it was loaded, too late to rebuild in this run."""

    def __init__(self, folder: object, problem: str) -> None:
        self.problem = problem
        super().__init__(f"the cache {folder} is damaged ({problem}); remove it with attn-cli vectors remove "
                         f"{PurePath(str(folder)).name} and run again to import its file afresh")


@contextmanager
def memory_named(error: Callable[[], AttnError]) -> Iterator[None]:
    """A MemoryError inside becomes `error()`: the setting that drives that memory, never taken for a bug."""
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
