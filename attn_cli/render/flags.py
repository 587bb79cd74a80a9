"""Settings as the reader types them: options on the command line, keyword arguments in Python.

The engine speaks in keyword arguments ({"scale": "sqrt"}, {"temperature": 10.0});
this is the one place that spells them for a reader, so a warning, a trace note and
its table of alternatives always name a setting the way the user would type it:
`--scale sqrt` for the command line (the default), `scale='sqrt'` while
`SPELLING` is "keywords" (the Python API's tables and reports).
"""

from __future__ import annotations

from contextvars import ContextVar

from attn_cli.errors import flag

SPELLING: ContextVar[str] = ContextVar("attn_cli_spelling", default="options")  # "options" or "keywords"


def settings_text(settings: dict) -> str:
    """{"scale": "sqrt", "output_projection": True} -> "--scale sqrt --output-projection" (True: a bare switch),
    or "scale='sqrt', output_projection=True" as keywords."""
    if SPELLING.get() == "keywords":
        return ", ".join(f"{key}={value!r}" for key, value in settings.items())
    return " ".join(setting_name(key) + ("" if value is True else f" {value_text(value)}")
                    for key, value in settings.items())


def setting_name(name: str) -> str:
    """A setting's name alone: "--d-k" on the command line, "d_k" as a keyword."""
    return name if SPELLING.get() == "keywords" else flag(name)


def value_text(value: object) -> str:
    """An option's value as typed: 10.0 -> "10", 0.1 -> "0.1"."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def remedies_text(warning: dict, pretrained: bool = False) -> str:
    """'try --scale sqrt (largest weights 0.35-0.35), --similarity cosine (...) or --temperature 10 (...)'; for a
    layer whose weights fix every setting, what that means (no setting is offered as a fix)."""
    options = [f"{settings_text(remedy['settings'])} (largest weights {low:.2f}-{high:.2f})"
               for remedy in warning["remedies"] for low, high in [remedy["largest_weights"]]]
    options += [f"a larger {setting_name('scale')}"] if warning["larger_scale"] else []
    if not options:  # a trained or pretrained layer: its weights fix every setting
        return FIXED_BY_PRETRAINING if pretrained else FIXED_BY_TRAINING
    return "try " + " or ".join(filter(None, [", ".join(options[:-1]), options[-1]]))


FIXED_BY_TRAINING = "the weights file fixes the settings: train longer, or on more text, to change what it learnt"
FIXED_BY_PRETRAINING = "a pretrained layer's weights fix the settings: this is what it learnt, not a setting to change"


def see_with_text(note: dict) -> str:
    """' (see it with --shuffle-check)' when a note names the settings that show it, else ''."""
    return f" (see it with {settings_text(note['see_with'])})" if note.get("see_with") else ""
