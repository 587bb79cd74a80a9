"""Property tests of the attention engine (attn_cli.engine.attention).

Every property is checked on hypothesis-generated inputs: small shapes (n in 1..8,
d in 1..16, heads dividing the width) and finite elements of moderate magnitude.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_cli.errors import SettingsError

from attn_cli.engine.analysis import MAX_PULLS, PULL_SHARE, StackShifts
from attn_cli.engine.attention import (
    MAX_SCALE,
    MIN_TEMPERATURE,
    AttentionConfig,
    as_stack,
    Projections,
    attend,
    multi_head_attention,
    output_shares,
    shift_shares,
    softmax,
    split_heads,
    static_outputs,
)

SETTINGS = settings(max_examples=60, deadline=None)
FEW = settings(max_examples=30, deadline=None)

ELEMENTS = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False)


def matrices(n: int, d: int, elements=ELEMENTS, dtype=np.float64):
    return arrays(dtype, (n, d), elements=elements)


def divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


@st.composite
def configs(draw, d: int, *, mode=None, heads=None, similarity=None, mask=None, positions=None,
            scale=None, output_projection=None):
    """A valid AttentionConfig for embeddings of width d; keyword arguments pin a knob."""
    mode = mode if mode is not None else draw(st.sampled_from(["raw", "projected"]))
    d_k = None
    if mode == "projected":
        d_k = draw(st.one_of(st.none(), st.integers(1, 16)))
    width = d if d_k is None else d_k
    if heads is None:
        heads = draw(st.sampled_from(divisors(width)))
    if output_projection is None:
        output_projection = draw(st.booleans()) if mode == "projected" else False
    if scale is None:
        scale = draw(st.one_of(st.sampled_from(["none", "sqrt"]), st.floats(0.0, 3.0)))
    return AttentionConfig(
        mode=mode,
        scale=scale,
        temperature=draw(st.floats(0.25, 4.0)),
        similarity=similarity if similarity is not None else draw(st.sampled_from(["dot", "cosine"])),
        heads=heads,
        d_k=d_k,
        seed=draw(st.integers(0, 2**32 - 1)) if mode == "projected" else 0,  # a seed is for W only
        mask=mask if mask is not None else draw(st.sampled_from(["none", "causal"])),
        positions=positions if positions is not None else draw(st.sampled_from(["none", "sinusoidal"])),
        output_projection=output_projection,
    )


@st.composite
def cases(draw, *, cross=None, **pinned):
    """(query embeddings, context embeddings or None, config)."""
    n_q = draw(st.integers(1, 8))
    d = draw(st.integers(1, 16))
    config = draw(configs(d, **pinned))
    x_q = draw(matrices(n_q, d))
    cross = draw(st.booleans()) if cross is None else cross
    x_k = draw(matrices(draw(st.integers(1, 8)), d)) if cross else None
    return x_q, x_k, config


# --- weights are a probability distribution ------------------------------------------------


@SETTINGS
@given(cases())
def test_weights_are_distributions(case):
    x_q, x_k, config = case
    result = multi_head_attention(x_q, x_k, config)
    n_q = x_q.shape[0]
    n_k = n_q if x_k is None else x_k.shape[0]
    assert result.weights.shape == (config.heads, n_q, n_k)
    assert np.all(np.isfinite(result.weights))
    assert np.all(result.weights >= 0)
    np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


# --- outputs lie in the convex hull of the values ------------------------------------------


@SETTINGS
@given(cases())
def test_head_outputs_inside_value_range(case):
    x_q, x_k, config = case
    result = multi_head_attention(x_q, x_k, config)
    values = result.values  # [H, n_k, d_head]
    n_q, n_k = result.weights.shape[1:]
    tol = 1e-12 * (1.0 + np.max(np.abs(values)))
    for i in range(n_q):
        visible = np.arange(n_k) <= i if config.mask == "causal" else np.ones(n_k, dtype=bool)
        lo = values[:, visible, :].min(axis=1)  # [H, d_head]
        hi = values[:, visible, :].max(axis=1)
        y = result.head_outputs[:, i, :]
        assert np.all(lo - tol <= y), (i, lo, y)
        assert np.all(y <= hi + tol), (i, hi, y)


@SETTINGS
@given(st.data())
def test_raw_single_head_outputs_inside_embedding_range(data):
    n, d = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 16))
    x = data.draw(matrices(n, d))
    config = data.draw(configs(d, mode="raw", heads=1, positions="none"))
    result = multi_head_attention(x, None, config)
    tol = 1e-12 * (1.0 + np.max(np.abs(x)))
    assert result.outputs.shape == (n, d)
    assert np.all(x.min(axis=0) - tol <= result.outputs)
    assert np.all(result.outputs <= x.max(axis=0) + tol)


# --- permutation equivariance --------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_permutation_equivariance_without_positions(data):
    n, d = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 16))
    x = data.draw(matrices(n, d))
    config = data.draw(configs(d, mask="none", positions="none"))
    perm = np.array(data.draw(st.permutations(range(n))), dtype=int)
    base = multi_head_attention(x, None, config)
    permuted = multi_head_attention(x[perm], None, config)
    np.testing.assert_allclose(permuted.outputs, base.outputs[perm], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(permuted.weights, base.weights[:, perm][:, :, perm], rtol=1e-9, atol=1e-9)


def test_permutation_equivariance_breaks_with_sinusoidal_positions():
    x = np.array([[1.0, 0.0, 0.5, -1.0], [0.0, 1.0, -0.5, 2.0], [2.0, -1.0, 0.0, 0.0]])
    perm = np.array([2, 0, 1])
    for positions, equivariant in (("none", True), ("sinusoidal", False)):
        config = AttentionConfig(mode="raw", scale="none", positions=positions)
        base = multi_head_attention(x, None, config)
        permuted = multi_head_attention(x[perm], None, config)
        assert np.allclose(permuted.outputs, base.outputs[perm], atol=1e-9) == equivariant
        assert np.allclose(permuted.weights, base.weights[:, perm][:, :, perm], atol=1e-9) == equivariant


# --- causal mask ---------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_causal_mask_hides_the_future(data):
    n, d = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 16))
    x = data.draw(matrices(n, d))
    other = data.draw(matrices(n, d))
    config = data.draw(configs(d, mask="causal"))
    result = multi_head_attention(x, None, config)
    future = np.triu(np.ones((n, n), dtype=bool), k=1)  # j > i
    assert np.all(result.weights[:, future] == 0.0)
    assert np.all(np.isneginf(result.logits[:, future]))
    for i in range(n):
        changed = np.concatenate([x[: i + 1], other[i + 1:]])
        altered = multi_head_attention(changed, None, config)
        np.testing.assert_allclose(altered.outputs[i], result.outputs[i], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(altered.weights[:, i], result.weights[:, i], rtol=1e-12, atol=1e-12)


# --- scale 0 gives uniform attention -------------------------------------------------------


@SETTINGS
@given(cases(scale=0.0))
def test_zero_scale_gives_uniform_weights(case):
    x_q, x_k, config = case
    result = multi_head_attention(x_q, x_k, config)
    n_q, n_k = result.weights.shape[1:]
    if config.mask == "causal":
        expected = np.array([[1.0 / min(i + 1, n_k) if j <= i else 0.0 for j in range(n_k)] for i in range(n_q)])
    else:
        expected = np.full((n_q, n_k), 1.0 / n_k)
    np.testing.assert_allclose(result.weights, np.broadcast_to(expected, result.weights.shape), rtol=0, atol=1e-15)


# --- cosine similarity ---------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_cosine_scores_in_unit_interval_even_with_zero_vectors(data):
    n, d = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 16))
    x = data.draw(matrices(n, d))
    zero_rows = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    x[zero_rows] = 0.0
    config = data.draw(configs(d, similarity="cosine", positions="none"))
    result = multi_head_attention(x, None, config)
    assert np.all(np.isfinite(result.scores))
    assert np.all(result.scores >= -1.0 - 1e-12)
    assert np.all(result.scores <= 1.0 + 1e-12)
    assert np.all(np.isfinite(result.weights)) and np.all(np.isfinite(result.outputs))
    # a zero embedding is a zero query/key in every head (projection is linear): cosine 0
    assert np.all(result.scores[:, zero_rows, :] == 0.0)
    assert np.all(result.scores[:, :, zero_rows] == 0.0)


def test_cosine_of_all_zero_input_is_uniform():
    x = np.zeros((3, 4))
    result = multi_head_attention(x, None, AttentionConfig(similarity="cosine"))
    assert np.all(result.scores == 0.0)
    np.testing.assert_allclose(result.weights, 1.0 / 3.0, atol=1e-15)
    assert np.all(result.outputs == 0.0)


# any float64 magnitude: inputs beyond float32's range (which loading refuses, docs/limits.md) may overflow the
# weighted sum of the values, whose warning says nothing about the scores this test is about
@pytest.mark.filterwarnings("ignore:overflow encountered in matmul:RuntimeWarning")
@SETTINGS
@given(st.data())
def test_cosine_scores_in_unit_interval_at_any_magnitude(data):
    n, d = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 16))
    x = data.draw(matrices(n, d, elements=st.floats(allow_nan=False, allow_infinity=False)))
    config = data.draw(configs(d, mode="raw", similarity="cosine", positions="none"))
    result = multi_head_attention(x, None, config)
    assert np.all(np.isfinite(result.scores))
    assert np.all(np.abs(result.scores) <= 1.0 + 1e-12)
    np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    # a nonzero row is parallel to itself at any magnitude
    for h in range(config.heads):
        nonzero = np.any(result.keys[h] != 0.0, axis=-1)
        np.testing.assert_allclose(np.diag(result.scores[h])[nonzero], 1.0, rtol=0, atol=1e-12)


def test_cosine_of_tiny_and_huge_vectors():
    """Squaring inside a norm under/overflows for |x| < ~1.5e-154 or > ~1.3e154: cosine must not."""
    for magnitude in (1e-160, 1e-170, 5e-324, 1e170, 1e300):
        x = np.array([[magnitude, 0.0], [magnitude, magnitude]])
        scores = multi_head_attention(x, None, AttentionConfig(similarity="cosine")).scores[0]
        np.testing.assert_allclose(scores, [[1.0, 2 ** -0.5], [2 ** -0.5, 1.0]], atol=1e-12)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("x, scale", [
    ([[1.0, 0.0], [0.0, 1.0]], 1.0),
    ([[3e38, -3e38], [-3e38, 3e38]], MAX_SCALE),  # float32's largest values at the largest scale / temperature
])
def test_the_smallest_temperature_is_a_hard_max_with_finite_logits(x, scale):
    """The bounds on scale and temperature keep every logit finite: the smallest temperature is one-hot on the
    largest score."""
    result = multi_head_attention(np.array(x), None, AttentionConfig(scale=scale, temperature=MIN_TEMPERATURE))
    assert np.isfinite(result.logits).all()
    np.testing.assert_allclose(result.weights[0], np.eye(2), rtol=0, atol=1e-12)
    with pytest.raises(SettingsError, match=r"scale must be .* from 0 to 1,000,000"):
        AttentionConfig(scale=2 * MAX_SCALE)


# --- softmax stability ---------------------------------------------------------------------


@pytest.mark.parametrize("magnitude", [1e4, 1e6, 1e300])
@FEW
@given(data=st.data())
def test_softmax_stable_for_huge_scores(magnitude, data):
    rows, cols = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 8))
    logits = data.draw(arrays(np.float64, (rows, cols), elements=st.floats(-1.0, 1.0))) * magnitude
    weights = softmax(logits)
    assert np.all(np.isfinite(weights)) and np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert np.all(weights[np.arange(rows), logits.argmax(axis=-1)] == weights.max(axis=-1))

    # the same through attend(), with a causal mask on top
    q = data.draw(arrays(np.float64, (rows, 1), elements=st.floats(-1.0, 1.0))) * np.sqrt(magnitude)
    k = data.draw(arrays(np.float64, (cols, 1), elements=st.floats(-1.0, 1.0))) * np.sqrt(magnitude)
    mask = np.tril(np.ones((rows, cols), dtype=bool))
    out, w, _, scores = attend(q, k, k, scale=1.0, temperature=0.5, mask=mask)
    assert np.all(np.isfinite(w)) and np.all(np.isfinite(out))
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("magnitude", [1e4, 1e6, 1e300])
def test_engine_stable_for_huge_scores(magnitude):
    root = np.sqrt(magnitude)
    x = np.array([[root], [-root], [0.5 * root], [0.0]])
    for mask in ("none", "causal"):
        result = multi_head_attention(x, None, AttentionConfig(scale="none", mask=mask))
        assert np.all(np.isfinite(result.weights)) and np.all(np.isfinite(result.outputs))
        np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@SETTINGS
@given(st.data())
def test_softmax_invariant_to_row_constant(data):
    rows, cols = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 8))
    logits = data.draw(arrays(np.float64, (rows, cols), elements=ELEMENTS))
    shift = data.draw(arrays(np.float64, (rows, 1), elements=st.floats(-1e3, 1e3)))
    np.testing.assert_allclose(softmax(logits + shift), softmax(logits), rtol=0, atol=1e-10)


def test_softmax_handles_masked_entries():
    weights = softmax(np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, 5.0]]))
    np.testing.assert_allclose(weights, [[1 / (1 + np.e), 0.0, np.e / (1 + np.e)], [0.0, 0.0, 1.0]], atol=1e-15)


# --- dtype promotion -----------------------------------------------------------------------


@FEW
@given(st.data())
def test_low_precision_inputs_are_promoted(data):
    dtype = data.draw(st.sampled_from([np.float16, np.float32]))
    width = 16 if dtype == np.float16 else 32
    elements = st.floats(-10.0, 10.0, width=width)
    n, d = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 16))
    x_q = data.draw(arrays(dtype, (n, d), elements=elements))
    x_k = data.draw(st.one_of(st.none(), arrays(dtype, (data.draw(st.integers(1, 8)), d), elements=elements)))
    config = data.draw(configs(d))
    result = multi_head_attention(x_q, x_k, config)
    for name in ("query_inputs", "context_inputs", "queries", "keys", "values", "scores", "logits",
                 "weights", "head_outputs", "outputs"):
        assert getattr(result, name).dtype == np.float64, name
    reference = multi_head_attention(x_q.astype(np.float64), None if x_k is None else x_k.astype(np.float64),
                                     config)
    np.testing.assert_array_equal(result.outputs, reference.outputs)
    np.testing.assert_array_equal(result.weights, reference.weights)
    assert softmax(x_q).dtype == np.float64


# --- output terms --------------------------------------------------------------------------


def assert_shares_add_up(result):
    """The shares of every key (output_shares) add up to each whole output: sum_j share_ij = 1."""
    n_q, n_k = result.weights.shape[1:]
    shares = output_shares(result)
    assert shares.shape == (n_q, n_k)
    squared = np.einsum("id,id->i", result.outputs, result.outputs)  # 0 for a zero output, whose shares are 0
    np.testing.assert_allclose(shares.sum(axis=1) * squared, squared, rtol=1e-10, atol=1e-10)


@SETTINGS
@given(cases())
def test_output_terms_sum_to_outputs(case):
    x_q, x_k, config = case
    assert_shares_add_up(multi_head_attention(x_q, x_k, config))


@FEW
@given(cases(mode="projected", output_projection=True, heads=None))
def test_output_terms_sum_with_output_projection(case):
    x_q, x_k, config = case
    result = multi_head_attention(x_q, x_k, config)
    assert result.projections.w_o is not None
    assert result.outputs.shape == (x_q.shape[0], x_q.shape[1])
    assert_shares_add_up(result)


# --- shares of the shift --------------------------------------------------------------------


def shift_terms(result) -> tuple[np.ndarray, np.ndarray]:
    """Each key's term of the shift, built directly: term_ij = sum_h w^h_ij (v^h_j - u^h_i) W_O^h, [n_q, n_k, d_out]
    (u_i: the token's own value before W_O), and the shift y - s itself [n_q, d_out]."""
    own = result.query_inputs if result.projections is None else result.query_inputs @ result.projections.w_v
    differences = result.values[:, None, :, :] - split_heads(own, result.n_heads)[:, :, None, :]  # [H, n_q, n_k, dh]
    per_head = result.weights[..., None] * differences
    heads, n_q, n_k, d_head = per_head.shape
    terms = per_head.transpose(1, 2, 0, 3).reshape(n_q, n_k, heads * d_head)
    if result.projections is not None and result.projections.w_o is not None:
        terms = terms @ result.projections.w_o
    return terms, result.outputs - static_outputs(result)


def conditioning(result, shift: np.ndarray) -> np.ndarray:
    """How many times larger than the shift the vectors that make it are, per row [n_q] (inf for no shift)."""
    w_o = result.projections.w_o if result.projections is not None else None
    own = result.query_inputs if result.projections is None else result.query_inputs @ result.projections.w_v
    size = np.linalg.norm(own, axis=-1) + np.abs(result.weights @ np.linalg.norm(result.values, axis=-1)[..., None]
                                                 ).sum(axis=(0, 2))
    size = size * (1.0 if w_o is None else np.linalg.norm(w_o))
    length = robust_norm(shift)
    return np.divide(size, length, out=np.full(len(length), np.inf), where=length > 0)


def robust_norm(rows: np.ndarray) -> np.ndarray:
    """|row| for each row, scaled by its largest entry first so that a row of 1e-284 does not square to 0."""
    peak = np.abs(rows).max(axis=-1, keepdims=True)
    scaled = np.divide(rows, peak, out=np.zeros_like(rows), where=peak > 0)
    return np.linalg.norm(scaled, axis=-1) * peak[:, 0]


@SETTINGS
@given(cases())
def test_the_terms_of_the_shift_sum_to_the_shift(case):
    """The decomposition the shares rest on holds in every mode: y - s = sum_j term_ij."""
    x_q, x_k, config = case
    result = multi_head_attention(x_q, x_k, config)
    terms, shift = shift_terms(result)
    scale = 1.0 + np.abs(terms).sum(axis=1).max()
    np.testing.assert_allclose(terms.sum(axis=1), shift, rtol=0, atol=1e-12 * scale)


def assert_shares_of_the_shift(result) -> None:
    """Every row that moved has shares summing to 1, equal to term_ij . d_i / |d_i|^2; the token's own is 0."""
    shares = shift_shares(result)
    terms, shift = shift_terms(result)
    assert shares.shape == result.weights.shape[1:]
    condition = conditioning(result, shift)
    moved = condition < 1e7
    np.testing.assert_array_equal(shares[~moved], 0.0)  # rounding, not movement: nothing moved it
    length = robust_norm(shift)[:, None]  # [n_q, 1]
    length = np.where(length > 0, length, 1.0)
    expected = np.einsum("ijd,id->ij", terms, shift / length) / length  # term . d / |d|^2, without squaring d
    tolerance = 1e-13 * condition[moved, None] ** 2 + 1e-9
    assert np.all(np.abs(shares[moved] - expected[moved]) <= tolerance)
    np.testing.assert_allclose(shares[moved].sum(axis=-1), 1.0, rtol=0, atol=1e-6)
    if result.self_attention:
        assert np.all(np.diagonal(shares) == 0.0) and not np.signbit(shares).any(where=shares == 0)


@SETTINGS
@given(cases())
def test_shares_of_the_shift_sum_to_one_in_every_mode(case):
    x_q, x_k, config = case
    # subnormal inputs (below 2.2e-308) keep a few bits: their shifts are rounding, which neither side can tell
    assume(all(np.all((x == 0) | (np.abs(x) >= 1e-150)) for x in (x_q, x_k) if x is not None))
    assert_shares_of_the_shift(multi_head_attention(x_q, x_k, config))


def test_a_shift_too_small_to_square_still_has_its_shares():
    """A shift of 1e-155 squares to 0 in float64: the shares divide by its length, never by its square (CI found
    a query of 0 and a key of 6.7e-155 give an infinite share)."""
    result = multi_head_attention(np.array([[0.0]]), np.array([[6.72479203e-155]]))
    assert shift_shares(result).tolist() == [[1.0]]


@pytest.mark.parametrize("heads, output_projection", [(1, False), (2, True)])
def test_shares_of_the_shift_sum_to_one_in_trained_mode(heads, output_projection):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(5, 6))
    layer = Projections(*(rng.normal(size=(6, 4)) for _ in range(3)), rng.normal(size=(4, 6)) if output_projection
                        else None)
    config = AttentionConfig(mode="trained", heads=heads, d_k=4, output_projection=output_projection)
    assert_shares_of_the_shift(multi_head_attention(x, None, config, layer))


def test_a_token_that_did_not_move_has_no_shares():
    """One word, or all the weight on itself: y = s, so no word moved it and no share is made of rounding."""
    alone = multi_head_attention(np.array([[0.3, -1.2, 2.0]]))
    assert shift_shares(alone).tolist() == [[0.0]]
    saturated = multi_head_attention(np.array([[30.0, 0.0], [0.0, 30.0]]))  # weights 1 - 1e-391: exactly 1
    assert shift_shares(saturated).tolist() == [[0.0, 0.0], [0.0, 0.0]]


@SETTINGS
@given(cases())
def test_the_first_word_named_has_the_largest_share_of_the_shift(case):
    """pulled_by names the keys whose share of the shift is at least PULL_SHARE, at most MAX_PULLS, largest
    first: the word that moved the token most comes first, whatever its weight."""
    x_q, x_k, config = case
    result = multi_head_attention(x_q, x_k, config)
    shares = shift_shares(result)
    for shift, row in zip(StackShifts(as_stack(result)).records(0), shares):
        named = [pull.shift_share for pull in shift.pulled_by]
        assert named == [row[pull.index] for pull in shift.pulled_by]
        assert named == sorted(named, reverse=True) and len(named) <= MAX_PULLS
        assert all(share >= PULL_SHARE for share in named)
        assert len(named) == min(MAX_PULLS, int((row >= PULL_SHARE).sum()))
        if named:
            assert named[0] == row.max()
        if result.self_attention:
            assert shift.index not in [pull.index for pull in shift.pulled_by]
        assert [c.shift_share for c in shift.contributions] == [row[c.index] for c in shift.contributions]


# --- projections are seeded ----------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_projections_reproducible_per_seed(data):
    n, d = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 16))
    x = data.draw(matrices(n, d))
    config = data.draw(configs(d, mode="projected"))
    other_seed = data.draw(st.integers(0, 2**32 - 1).filter(lambda s: s != config.seed))
    first = multi_head_attention(x, None, config)
    again = multi_head_attention(x, None, config)
    other = multi_head_attention(x, None, AttentionConfig(**{**config.__dict__, "seed": other_seed}))
    for name in ("w_q", "w_k", "w_v", "w_o"):
        a, b, c = (getattr(r.projections, name) for r in (first, again, other))
        if not config.output_projection and name == "w_o":
            assert a is None and b is None and c is None
            continue
        np.testing.assert_array_equal(a, b)
        assert a.shape == c.shape
        assert not np.array_equal(a, c), name
    np.testing.assert_array_equal(first.outputs, again.outputs)
    np.testing.assert_array_equal(first.weights, again.weights)


def test_raw_mode_has_no_projections():
    result = multi_head_attention(np.eye(3), None, AttentionConfig(mode="raw"))
    assert result.projections is None


@pytest.mark.parametrize("kwargs, d", [
    ({"mode": "raw", "heads": 3}, 4),
    ({"mode": "projected", "heads": 2, "d_k": 5}, 4),
])
def test_heads_must_divide_width(kwargs, d):
    with pytest.raises(SettingsError, match="^heads [0-9]+ does not divide the width") as caught:
        multi_head_attention(np.ones((2, d)), None, AttentionConfig(**kwargs))
    assert isinstance(caught.value, ValueError) and caught.value.setting == "heads"
