"""Settings (engine keywords) spelt as command-line flags, in the one place that does it."""

from __future__ import annotations

from attn_cli.render.flags import SPELLING, remedies_text, see_with_text, settings_text


def test_flag_text_spells_keywords_as_flags():
    assert settings_text({"scale": "sqrt"}) == "--scale sqrt"
    assert settings_text({"temperature": 10.0}) == "--temperature 10"
    assert settings_text({"temperature": 0.1}) == "--temperature 0.1"
    assert settings_text({"mode": "projected", "heads": 2, "output_projection": True}) == (
        "--mode projected --heads 2 --output-projection")


def test_remedies_read_as_one_hint():
    def warning(*settings, larger=False):
        return {"remedies": [{"settings": s, "largest_weights": [0.3, 0.456]} for s in settings],
                "larger_scale": larger}

    assert remedies_text(warning({"scale": "sqrt"}, {"similarity": "cosine"}, {"temperature": 10.0})) == (
        "try --scale sqrt (largest weights 0.30-0.46), --similarity cosine (largest weights 0.30-0.46) "
        "or --temperature 10 (largest weights 0.30-0.46)")
    assert remedies_text(warning({"temperature": 0.1}, larger=True)) == (
        "try --temperature 0.1 (largest weights 0.30-0.46) or a larger --scale")
    assert remedies_text(warning({"temperature": 10.0})) == "try --temperature 10 (largest weights 0.30-0.46)"


def test_see_with_is_empty_unless_a_note_names_settings():
    assert see_with_text({"see_with": {"shuffle_check": True}}) == " (see it with --shuffle-check)"
    assert see_with_text({"message": "x"}) == ""


def test_the_python_api_spells_the_same_settings_as_keywords():
    token = SPELLING.set("keywords")
    try:
        assert settings_text({"mode": "projected", "heads": 2, "output_projection": True}) == (
            "mode='projected', heads=2, output_projection=True")
        warning = {"remedies": [{"settings": {"temperature": 0.1}, "largest_weights": [0.3, 0.456]}],
                   "larger_scale": True}
        assert remedies_text(warning) == "try temperature=0.1 (largest weights 0.30-0.46) or a larger scale"
        assert see_with_text({"see_with": {"shuffle_check": True}}) == " (see it with shuffle_check=True)"
    finally:
        SPELLING.reset(token)
    assert settings_text({"scale": "sqrt"}) == "--scale sqrt"
