"""The help screens: printed once, readable at 80 columns, and every example in them runs."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("words", [(), ("vectors",)], ids=["attn-cli", "vectors"])
def test_a_bare_command_prints_its_help_once(run, words):
    bare, asked = run(*words), run(*words, "--help")
    assert bare.stdout.count("Usage:") == 1 and not bare.stderr.strip()
    assert bare.stdout.rstrip() == asked.stdout.rstrip()
