"""Property-based fuzzing: whatever is typed, attn-cli answers with a result or one documented error.

The normal run tries a few dozen inputs per target; the long run sets the count:
    ATTN_CLI_FUZZ_EXAMPLES=100000 pytest -m fuzz -p no:cacheprovider
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attn_cli.errors import EXIT_CODES, InputError
from attn_cli.tokenize import tokenize
from attn_cli.vectors import load_vectors

EXAMPLES = int(os.environ.get("ATTN_CLI_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
pytestmark = pytest.mark.fuzz

DEFAULT_VECTORS = load_vectors(None)
WORDS = ["money", "bank", "grows", "river", "flows", "the", "a", "of"]

# text that mixes known words, unknown words, punctuation, emoji, scripts, controls and odd spaces
fragments = st.one_of(
    st.sampled_from(WORDS),
    st.text(min_size=1, max_size=12),
    st.sampled_from(["\u00a0", "\u200b", "\u202e", "\x00", "\t", "\r\n", "🏦", "بنك", "銀行", "ß", "İ", "'", "-"]),
)
sentences = st.lists(fragments, max_size=12).map(" ".join)


@FUZZ
@given(text=sentences, oov=st.sampled_from(["skip", "zero", "error"]))
def test_tokenize_returns_tokens_or_an_input_error(text, oov):
    try:
        tokenized = tokenize(text, DEFAULT_VECTORS, oov)
    except InputError as exc:
        assert exc.message and "\n" not in exc.message
        return
    assert len(tokenized.tokens) == tokenized.embeddings.shape[0] >= 1
    assert np.isfinite(tokenized.embeddings).all()
    positions = [t.position for t in tokenized.tokens] + [d.position for d in tokenized.dropped]
    assert sorted(positions) == list(range(len(positions)))  # every token accounted for once


def option_value(valid: list[str]):
    """A valid value, a number of any kind, or junk: what a person might type after the flag."""
    numbers = st.one_of(st.integers(-5, 300), st.floats(allow_nan=True, allow_infinity=True)).map(str)
    return st.one_of(st.sampled_from(valid), numbers, st.text(max_size=6))


OPTIONS = {
    "--mode": ["raw", "projected"],
    "--scale": ["none", "sqrt", "0", "0.5", "2"],
    "--temperature": ["1", "0.1", "10"],
    "--similarity": ["dot", "cosine"],
    "--heads": ["1", "2", "4", "8"],
    "--d-k": ["16", "32", "64"],
    "--seed": ["0", "1", "42"],
    "--mask": ["none", "causal"],
    "--positions": ["none", "sinusoidal"],
    "--oov": ["skip", "error", "zero"],
    "--neighbors": ["0", "1", "5"],
    "--neighbor-vocab": ["100", "all"],
    "--max-tokens": ["3", "1000"],
}


@st.composite
def command_lines(draw):
    command = draw(st.sampled_from(["explain", "trace", "compare"]))
    arguments = [command, draw(sentences)]
    if command == "compare":
        arguments.append(draw(sentences))
    for flag in draw(st.lists(st.sampled_from(sorted(OPTIONS)), unique=True, max_size=5)):
        arguments += [flag, draw(option_value(OPTIONS[flag]))]
    if draw(st.booleans()):
        arguments.append("--output-projection")
    return arguments + ["--json"]


@FUZZ
@given(arguments=command_lines())
def test_any_command_line_gives_json_or_one_documented_error(run, arguments):
    result = run(*arguments)
    assert result.exit_code in EXIT_CODES and result.exit_code != 1, result.stderr
    assert "Traceback" not in result.stderr
    if result.exit_code == 0:
        for line in result.stdout.splitlines():
            json.loads(line)
    else:
        assert result.stdout == ""
        errors = [line for line in result.stderr.splitlines() if line.startswith("attn-cli: error: ")]
        assert len(errors) == 1, result.stderr
