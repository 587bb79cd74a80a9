"""One declaration per setting (its kind, allowed values and help), read by the one check, the docs and the
command line's options, so adding a setting is one edit."""

from __future__ import annotations

import math
import numbers
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from attn_cli.errors import Option, SettingsError, SettingsTypeError

CHOICE, WHOLE, NUMBER, SWITCH, NAMED_NUMBER, NAMES = "choice", "whole", "number", "switch", "named number", "names"


@dataclass(frozen=True)
class Declared:
    """What a setting takes. kind: CHOICE (one of `choices`), WHOLE (an int in [low, high]), NUMBER (a finite real
    above `low`, or at least it unless `low_open`), SWITCH (a bool), NAMED_NUMBER (one of `choices` or a finite
    number in [0, high]) or NAMES (a tuple of `choices`). `none` says what None means where allowed and
    `typed_none` how the command line types it; `also` are accepted values nobody picks (the "trained" mode);
    `says` words the allowed values; `example` ends the message of a refused value."""

    help: str
    kind: str
    choices: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    none: str = ""
    typed_none: str = ""
    says: str = ""
    example: str = ""
    metavar: str = ""  # how the command line shows the value (default: the choices, or N, X)

    def typed(self, text: str) -> Any:
        """The value as typed after an option ("sqrt", "0.5", "all", "qkv,outputs"), before checking."""
        word = text.strip()
        if self.typed_none and word.lower() == self.typed_none:
            return None
        if self.kind == NAMES:
            return tuple(name.strip() for name in word.split(",") if name.strip())
        if self.kind == NAMED_NUMBER and word.lower() in self.choices:
            return word.lower()
        try:
            return int(word) if self.kind == WHOLE else float(word) if self.kind in (NAMED_NUMBER, NUMBER) else text
        except ValueError:
            return text  # refused by the check, which shows it as typed


def setting(default: Any, help: str, kind: str, **declared: Any) -> Any:
    """A dataclass field declared as a setting (its metadata holds the `Declared`)."""
    return field(default=default, metadata={"declared": Declared(help, kind, **declared)})


def setting_like(owner: Any, name: str, **changes: Any) -> Any:
    """A field declared as `owner`'s `name` is, with `changes` to its declaration (`default=` too)."""
    [found] = [item for item in fields(owner) if item.name == name]
    default = changes.pop("default", found.default)
    assert default is not MISSING, f"{name} has no default"
    return field(default=default, metadata={"declared": replace(found.metadata["declared"], **changes)})


def declarations(cls: Any) -> dict[str, Declared]:
    """The declared settings of a settings dataclass (or instance), in field order."""
    return {item.name: item.metadata["declared"] for item in fields(cls) if "declared" in item.metadata}


def check_declared(owner: Any) -> None:
    """Refuse any declared field of `owner` its declaration does not allow: a SettingsError naming the keyword
    (a SettingsTypeError when the value is not even of the setting's type), None as each language types it."""
    for name, declared in declarations(owner).items():
        value = getattr(owner, name)
        if (value is None and declared.none) or (isinstance(value, str) and value in declared.also):
            continue
        typed = _of_type(declared.kind, value)
        if declared.kind == NAMES and typed:
            unknown = [item for item in value if item not in declared.choices]
            problem: tuple[str | Option, ...] = (
                f"got unknown {', '.join(unknown)}; choose from {', '.join(declared.choices)}",) if unknown else ()
        elif declared.kind in (WHOLE, NUMBER) and not typed:
            problem = (f"must be {'an int' if declared.kind == WHOLE else 'a number'}, got {value!r}",)
        elif typed and _within(declared, value):
            problem = ()
        else:
            example = f"; e.g. {declared.example}" if declared.example else ""
            problem = ("must be ", *((declared.says,) if declared.says else _allowed(declared)),
                       f" (got {value!r}){example}")
        wrong_type = not declared.none if value is None else not typed
        if problem:
            raise (SettingsTypeError if wrong_type else SettingsError)(name, problem)


def _of_type(kind: str, value: object) -> bool:
    """Whether `value` is of the type a setting of this kind takes, whatever its range (a bool is no number)."""
    if kind in (WHOLE, NUMBER, NAMED_NUMBER):
        return is_whole(value) if kind == WHOLE else is_real(value) or (kind == NAMED_NUMBER and isinstance(value, str))
    if kind == NAMES:
        return isinstance(value, tuple) and all(isinstance(name, str) for name in value)
    return isinstance(value, bool if kind == SWITCH else str)


def _within(declared: Declared, value: Any) -> bool:
    """One of the setting's choices, or within its range (a value of its type)."""
    if isinstance(value, str) or declared.kind == SWITCH:
        return declared.kind == SWITCH or value in declared.choices
    low = 0 if declared.kind == NAMED_NUMBER and declared.low is None else declared.low
    return ((declared.kind == WHOLE or math.isfinite(value)) and (declared.high is None or value <= declared.high)
            and (low is None or (value > low if declared.low_open else value >= low)))


def _allowed(declared: Declared) -> tuple[str | Option, ...]:
    """What a setting takes, in words: "one of 'dot', 'cosine'", "from 1 to 4,096", "at least 1", ..."""
    kind, low, high = declared.kind, declared.low, declared.high
    if kind in (SWITCH, NAMES):
        return ("True or False" if kind == SWITCH else f"names from {', '.join(declared.choices)}",)
    if kind == CHOICE:
        text = f"one of {', '.join(map(repr, declared.choices))}"
    elif kind == NAMED_NUMBER:
        bound = ">= 0" if high is None else f"from 0 to {high:,.0f}"
        text = f"{', '.join(map(repr, declared.choices))} or a finite number {bound}"
    elif kind == NUMBER:
        text = "a finite number" + ("" if low is None else f" {'>' if declared.low_open else '>='} {low:g}")
    else:
        text = f"from {low:,} to {high:,}" if high is not None else f"at least {low:,}" if low is not None else "an int"
    if not declared.none:
        return (text,)
    none = Option("none", python_text="None", typed_text=declared.typed_none) if declared.typed_none else "None"
    return (text, ", or ", none, f" for {declared.none}")


def require_count(name: str, value: object) -> None:
    """The one rule of a count argument (limit, dims, max_occurrences): a whole number, at least 1."""
    if not (is_whole(value) and value >= 1):  # type: ignore[operator]
        raise SettingsError(name, f"must be at least 1 (got {value!r})")


def is_whole(value: object) -> bool:
    """An integer (numpy's too) and not a bool: what counts, widths and seeds must be."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: object) -> bool:
    """A real number (numpy's too) and not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
