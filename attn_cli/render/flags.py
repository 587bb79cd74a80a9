"""Settings as the command line spells them.

The engine speaks in keyword arguments ({"scale": "sqrt"}, {"temperature": 10.0});
this is the one place that turns them into flags, so a warning, a trace note and
its table of alternatives always name a setting the way the user would type it.
"""

from __future__ import annotations


def flag_text(settings: dict) -> str:
    """{"scale": "sqrt", "output_projection": True} -> "--scale sqrt --output-projection" (True: a bare switch)."""
    return " ".join(f"--{key.replace('_', '-')}" + ("" if value is True else f" {value_text(value)}")
                    for key, value in settings.items())


def value_text(value: object) -> str:
    """A flag's value as typed: 10.0 -> "10", 0.1 -> "0.1"."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def remedies_text(warning: dict) -> str:
    """'try --scale sqrt (largest weights 0.35-0.35), --similarity cosine (...) or --temperature 10 (...)'."""
    options = [f"{flag_text(remedy['settings'])} (largest weights {low:.2f}-{high:.2f})"
               for remedy in warning["remedies"] for low, high in [remedy["largest_weights"]]]
    options += ["a larger --scale"] if warning["larger_scale"] else []
    return "try " + " or ".join(filter(None, [", ".join(options[:-1]), options[-1]]))


def see_with_text(note: dict) -> str:
    """' (see it with --shuffle-check)' when a note names the settings that show it, else ''."""
    return f" (see it with {flag_text(note['see_with'])})" if note.get("see_with") else ""
