"""The occurrence rows of attn_cli.engine.occurrences hold the full matrix's numbers for those rows.

Property: over random stacks of sentences (words drawn from a small vocabulary, so copies occur), every
layer setting (raw, projected, trained; masks none, causal, others; positions; several heads; cosine
scores; output projection; biases), the rows of the chosen occurrences equal `multi_head_attention`'s rows of the
whole sentence to 1e-10: outputs, the token's own value (static) and each key's share of the shift.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_cli.engine.attention import (AttentionConfig, Projections, multi_head_attention, shift_shares,
                                       static_outputs)
from attn_cli.engine.occurrences import occurrence_rows, word_layer
from attn_cli.errors import InputError

# rounded to 6 places: 0 or at least 1e-6, so no shift is made of the rounding of numbers near 1e-306 (where one
# product order gives an exact 0 and another a subnormal remainder)
ELEMENTS = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False).map(lambda value: round(value, 6))


@st.composite
def layers(draw, d: int) -> tuple[AttentionConfig, Projections | None]:
    """A layer for inputs of d dims: its config and, in trained mode, its weights."""
    mode = draw(st.sampled_from(["raw", "projected", "trained"]))
    width = d if mode == "raw" else draw(st.integers(1, 8))
    heads = draw(st.sampled_from([h for h in range(1, width + 1) if width % h == 0]))
    with_w_o = mode != "raw" and draw(st.booleans())
    positions = draw(st.sampled_from(["none", "sinusoidal"]))
    config = AttentionConfig(
        mode=mode, heads=heads, d_k=None if mode == "raw" else width,
        seed=draw(st.integers(0, 99)) * (mode == "projected"),
        mask=draw(st.sampled_from(["none", "causal", "others"])), positions=positions,
        position_scale="auto" if positions == "none" else draw(st.sampled_from(["auto", 0.5])),
        similarity=draw(st.sampled_from(["dot", "cosine"])), scale=draw(st.sampled_from(["none", "sqrt", 0.7])),
        temperature=draw(st.sampled_from([1.0, 0.5, 3.0])), output_projection=with_w_o,
        weights_digest="test" if mode == "trained" else None)
    if mode != "trained":
        return config, None
    matrix = lambda rows, cols: draw(arrays(np.float64, (rows, cols), elements=ELEMENTS))  # noqa: E731
    bias = lambda size: draw(arrays(np.float64, size, elements=ELEMENTS)) if with_bias else None  # noqa: E731
    with_bias = draw(st.booleans())  # a pretrained layer's biases
    return config, Projections(matrix(d, width), matrix(d, width), matrix(d, width),
                               matrix(width, d) if with_w_o else None, b_q=bias(width), b_k=bias(width),
                               b_v=bias(width), b_o=bias(d) if with_w_o else None)


@st.composite
def stacks(draw):
    """(embeddings [B, n, d] from a vocabulary of a few words, sentence indices, positions, config, projections)."""
    d = draw(st.integers(1, 6))
    vocabulary = draw(arrays(np.float64, (draw(st.integers(1, 4)), d), elements=ELEMENTS, unique=False))
    b, n = draw(st.integers(1, 4)), draw(st.integers(1, 7))
    words = draw(arrays(np.int64, (b, n), elements=st.integers(0, len(vocabulary) - 1)))
    chosen = draw(st.lists(st.tuples(st.integers(0, b - 1), st.integers(0, n - 1)), min_size=1, max_size=6))
    config, projections = draw(layers(d))
    return (vocabulary[words], np.array([s for s, _ in chosen]), np.array([p for _, p in chosen]), config,
            projections)


def full_rows(embeddings, sentences, positions, config, projections):
    """The same rows read from each sentence's whole matrix."""
    rows = {"outputs": [], "static": [], "shares": []}
    for s, p in zip(sentences.tolist(), positions.tolist()):
        full = multi_head_attention(embeddings[s], config=config, projections=projections)
        rows["outputs"].append(full.outputs[p])
        rows["static"].append(static_outputs(full)[p])
        rows["shares"].append(shift_shares(full)[p])
    return {name: np.array(values) for name, values in rows.items()}


@settings(max_examples=300, deadline=None)
@given(stacks())
def test_occurrence_rows_equal_the_full_matrix_rows(case):
    embeddings, sentences, positions, config, projections = case
    try:
        expected = full_rows(embeddings, sentences, positions, config, projections)
    except InputError:  # "others" over a sentence of one word: the rows refuse it too
        with pytest.raises(InputError):
            occurrence_rows(embeddings, sentences, positions, config, projections)
        return
    rows = occurrence_rows(embeddings, sentences, positions, config, projections)
    for name in ("outputs", "static"):
        np.testing.assert_allclose(getattr(rows, name), expected[name], rtol=1e-10, atol=1e-10, err_msg=name)
    # a share divides by its shift, which may be as short as SHIFT_FLOOR (1e-7) of the vectors that make it: the
    # row's own value, computed from one row instead of the sentence's, differs by rounding (~1e-16 of those
    # vectors), which a share then shows as up to ~1e-9 (CI's hypothesis run met 1.1e-10)
    np.testing.assert_allclose(rows.shares, expected["shares"], rtol=1e-10, atol=1e-8, err_msg="shares")


def test_the_rows_never_build_the_n_by_n_matrix():
    """One query row per occurrence: the weights are [m, H, n], not [B, H, n, n]."""
    rng = np.random.default_rng(0)
    rows = occurrence_rows(rng.normal(size=(3, 40, 8)), np.array([0, 2]), np.array([5, 39]),
                           AttentionConfig(heads=2))
    assert rows.weights.shape == (2, 2, 40)
    assert rows.shares.shape == (2, 40) and rows.outputs.shape == (2, 8)


def test_the_word_layer_maps_the_word_into_the_outputs_space_without_positions():
    config = AttentionConfig(mode="projected", d_k=4, positions="sinusoidal", output_projection=True, seed=3)
    word = np.array([0.5, -1.0, 2.0])
    layer = word_layer(word, config)
    np.testing.assert_allclose(static_outputs(layer)[0],
                               word @ layer.projections.w_v @ layer.projections.w_o, rtol=1e-12)
