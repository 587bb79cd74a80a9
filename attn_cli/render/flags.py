"""Settings as the reader types them: `--scale sqrt` on the command line (the default), `scale='sqrt'` while
`SPELLING` is "keywords" (the Python API's tables and reports)."""

from __future__ import annotations

from contextvars import ContextVar

from attn_cli.errors import flag

SPELLING: ContextVar[str] = ContextVar("attn_cli_spelling", default="options")  # "options" or "keywords"
FIXED_BY_TRAINING = "the weights file fixes the settings: train longer, or on more text, to change what it learnt"
FIXED_BY_PRETRAINING = "a pretrained layer's weights fix the settings: this is what it learnt, not a setting to change"


def settings_text(settings: dict) -> str:
    """{"scale": "sqrt", "output_projection": True} -> "--scale sqrt --output-projection", or as keywords."""
    if SPELLING.get() == "keywords":
        return ", ".join(f"{key}={value!r}" for key, value in settings.items())
    return " ".join(flag(key) + ("" if value is True else f" {value:g}" if isinstance(value, float) else f" {value}")
                    for key, value in settings.items())


def remedies_text(warning: dict, pretrained: bool = False) -> str:
    """'try --scale sqrt (largest weights 0.35-0.35) or ...'; for a layer whose weights fix every setting, why not."""
    options = [f"{settings_text(remedy['settings'])} (largest weights {low:.2f}-{high:.2f})"
               for remedy in warning["remedies"] for low, high in [remedy["largest_weights"]]]
    if warning["larger_scale"]:
        options.append(f"a larger {'scale' if SPELLING.get() == 'keywords' else flag('scale')}")
    if not options:
        return FIXED_BY_PRETRAINING if pretrained else FIXED_BY_TRAINING
    return "try " + " or ".join(filter(None, [", ".join(options[:-1]), options[-1]]))


def see_with_text(note: dict) -> str:
    """' (see it with --shuffle-check)' when a note names the settings that show it, else ''."""
    return f" (see it with {settings_text(note['see_with'])})" if note.get("see_with") else ""
