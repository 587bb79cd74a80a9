"""The engine against an independent, slow, per-query reference in plain Python.

The reference below uses only `math` and Python lists: it adds its own sinusoidal
positions, builds Q, K and V from the embeddings (and, in projected mode, the
engine's seeded W matrices, the only thing it takes from the engine), splits the
heads itself, computes every softmax row with loops, concatenates the heads and
applies W_O itself. Sums use math.fsum, so the reference is (nearly) exact and any
disagreement is the engine's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_cli.engine.attention import AttentionConfig, multi_head_attention

TOL = 1e-10


# --- the reference -------------------------------------------------------------------------


def ref_positions(n: int, d: int) -> list[list[float]]:
    """PE[p][2i] = sin(p / 10000^(2i/d)), PE[p][2i+1] = cos(p / 10000^(2i/d))."""
    table = []
    for p in range(n):
        row = []
        for c in range(d):
            angle = p / 10000.0 ** ((2 * (c // 2)) / d)
            row.append(math.sin(angle) if c % 2 == 0 else math.cos(angle))
        table.append(row)
    return table


def ref_matmul(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    cols = len(b[0])
    return [[math.fsum(row[t] * b[t][c] for t in range(len(row))) for c in range(cols)] for row in a]


def ref_similarity(q: list[float], k: list[float], similarity: str) -> float:
    if similarity == "dot":
        return math.fsum(a * b for a, b in zip(q, k))
    # cosine: unit vectors first (math.hypot neither under- nor overflows), so a dot
    # of two tiny vectors cannot underflow to 0; a zero vector has cosine 0 with anything
    norm_q, norm_k = math.hypot(*q), math.hypot(*k)
    if norm_q == 0.0 or norm_k == 0.0:
        return 0.0
    return math.fsum((a / norm_q) * (b / norm_k) for a, b in zip(q, k))


def reference_attention(x_q, x_k, *, mode="raw", scale="sqrt", temperature=1.0, similarity="dot",
                        heads=1, d_k=None, mask="none", positions="none", position_scale="auto", w_q=None,
                        w_k=None, w_v=None, w_o=None):
    """Returns (weights [H][n_q][n_k], outputs [n_q][d_out]) as nested lists."""
    x_q = [[float(v) for v in row] for row in x_q]
    x_k = x_q if x_k is None else [[float(v) for v in row] for row in x_k]
    n_q, n_k, d = len(x_q), len(x_k), len(x_q[0])
    if positions == "sinusoidal":
        pe_q, pe_k = ref_positions(n_q, d), ref_positions(n_k, d)

        def factor(row, pe):  # auto: each code as long as its own word
            if position_scale != "auto":
                return float(position_scale)
            return math.hypot(*row) / math.hypot(*pe) if math.hypot(*pe) else 0.0

        same = x_k is x_q
        x_q = [[x + factor(row, pe) * p for x, p in zip(row, pe)] for row, pe in zip(x_q, pe_q)]
        x_k = x_q if same else [[x + factor(row, pe) * p for x, p in zip(row, pe)] for row, pe in zip(x_k, pe_k)]
    if mode == "projected":
        q_all, k_all, v_all = ref_matmul(x_q, w_q), ref_matmul(x_k, w_k), ref_matmul(x_k, w_v)
    else:
        q_all, k_all, v_all = x_q, x_k, x_k
    width = len(q_all[0])
    assert width % heads == 0
    d_head = width // heads
    if scale == "none":
        factor = 1.0
    elif scale == "sqrt":
        factor = 1.0 / math.sqrt(d_head)
    else:
        factor = float(scale)

    all_weights = []
    concatenated = [[] for _ in range(n_q)]
    for h in range(heads):
        cols = range(h * d_head, (h + 1) * d_head)
        head_weights = []
        for i in range(n_q):
            q_i = [q_all[i][c] for c in cols]
            visible = [j for j in range(n_k) if mask == "none" or j <= i]
            logits = {}
            for j in visible:
                k_j = [k_all[j][c] for c in cols]
                logits[j] = ref_similarity(q_i, k_j, similarity) * factor / temperature
            top = max(logits.values())
            exps = {j: math.exp(logit - top) for j, logit in logits.items()}
            total = math.fsum(exps.values())
            row = [exps[j] / total if j in exps else 0.0 for j in range(n_k)]
            head_weights.append(row)
            for c in cols:
                concatenated[i].append(math.fsum(row[j] * v_all[j][c] for j in visible))
        all_weights.append(head_weights)
    outputs = concatenated if w_o is None else ref_matmul(concatenated, w_o)
    return all_weights, outputs


def check_against_reference(x_q, x_k, config: AttentionConfig):
    result = multi_head_attention(x_q, x_k, config)
    p = result.projections
    weights, outputs = reference_attention(
        x_q.tolist(), None if x_k is None else x_k.tolist(),
        mode=config.mode, scale=config.scale, temperature=config.temperature, similarity=config.similarity,
        heads=config.heads, d_k=config.d_k, mask=config.mask, positions=config.positions,
        position_scale=config.position_scale,
        w_q=None if p is None else p.w_q.tolist(), w_k=None if p is None else p.w_k.tolist(),
        w_v=None if p is None else p.w_v.tolist(),
        w_o=None if p is None or p.w_o is None else p.w_o.tolist(),
    )
    np.testing.assert_allclose(result.weights, np.array(weights), rtol=0, atol=TOL)
    np.testing.assert_allclose(result.outputs, np.array(outputs), rtol=0, atol=TOL)
    return result, weights, outputs


# --- hypothesis: one scenario per feature, plus everything at once -------------------------

SCENARIOS = {
    "raw": dict(mode="raw", scale="none"),
    "raw-sqrt": dict(mode="raw", scale="sqrt"),
    "projected-dk-differs": dict(mode="projected", d_k="differs"),
    "multihead-raw": dict(mode="raw", heads="many"),
    "multihead-projected": dict(mode="projected", heads="many", d_k="any"),
    "causal": dict(mask="causal"),
    "cosine": dict(similarity="cosine"),
    "float-scale-temperature": dict(scale="float", temperature="not-one"),
    "positions": dict(positions="sinusoidal"),
    "positions-scaled": dict(positions="sinusoidal", position_scale="float"),
    "output-projection": dict(mode="projected", output_projection=True, d_k="any"),
    "cross-attention": dict(cross=True),
}

# subnormal entries (5e-324) carry a few bits at most: the cosine of two such rows is noise in any
# implementation, so two of them cannot agree to 1e-10 (hypothesis found [5e-324, 5e-324] in projected mode)
ELEMENTS = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@st.composite
def scenario_cases(draw, scenario: dict):
    """(x_q, x_k or None, config): the scenario pins its knobs, hypothesis draws the rest."""
    any_ = scenario.get("any", False)
    mode = scenario.get("mode") or draw(st.sampled_from(["raw", "projected"]))
    heads_rule = scenario.get("heads", "any" if any_ else "one")
    heads = draw(st.integers(2, 4)) if heads_rule == "many" else (
        draw(st.integers(1, 4)) if heads_rule == "any" else 1)
    d_head = draw(st.integers(1, 16 // heads))
    d_k = None
    if mode == "raw":
        d = heads * d_head
    else:
        rule = scenario.get("d_k", "any")
        width = heads * d_head
        if rule == "differs":
            d = draw(st.integers(1, 16).filter(lambda v: v != width))
            d_k = width
        else:
            d_k = draw(st.sampled_from([None, width]))
            d = width if d_k is None else draw(st.integers(1, 16))
    scale = scenario.get("scale") or draw(st.sampled_from(["none", "sqrt", "float"]))
    if scale == "float":
        scale = draw(st.floats(0.0, 3.0))
    temperature = 1.0
    if scenario.get("temperature") == "not-one" or any_:
        temperature = draw(st.floats(0.25, 4.0).filter(lambda t: t != 1.0))
    positions = scenario.get("positions") or (draw(st.sampled_from(["none", "sinusoidal"])) if any_ else "none")
    position_scale: str | float = "auto"
    if positions != "none" and (scenario.get("position_scale") == "float" or (any_ and draw(st.booleans()))):
        position_scale = draw(st.floats(0.0, 3.0))
    config = AttentionConfig(
        mode=mode, scale=scale, temperature=temperature, position_scale=position_scale,
        similarity=scenario.get("similarity") or (draw(st.sampled_from(["dot", "cosine"])) if any_ else "dot"),
        heads=heads, d_k=d_k, seed=draw(st.integers(0, 2**32 - 1)) if mode == "projected" else 0,
        mask=scenario.get("mask") or (draw(st.sampled_from(["none", "causal"])) if any_ else "none"),
        positions=positions,
        output_projection=scenario.get("output_projection", draw(st.booleans()) if any_ else False)
        and mode == "projected",
    )
    n_q = draw(st.integers(1, 8))
    x_q = draw(arrays(np.float64, (n_q, d), elements=ELEMENTS))
    cross = scenario.get("cross", draw(st.booleans()) if any_ else False)
    x_k = draw(arrays(np.float64, (draw(st.integers(1, 8)), d), elements=ELEMENTS)) if cross else None
    return x_q, x_k, config


@pytest.mark.quick
@pytest.mark.parametrize("name", list(SCENARIOS))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_engine_matches_reference(name, data):
    scenario = SCENARIOS[name]
    x_q, x_k, config = data.draw(scenario_cases(scenario))
    if name == "cross-attention":
        assert x_k is not None
    if name == "projected-dk-differs":
        assert config.d_k != x_q.shape[1]
    check_against_reference(x_q, x_k, config)


def test_tiny_words_keep_their_length_for_position_codes():
    """Hypothesis found it: words of 1.5e-208 square to 0, so `auto` scaled the position codes to 0 and every row
    came out the same; their length is taken after dividing by each row's peak."""
    x = np.tile([[1.5e-208, 0.0]], (5, 1))  # one word five times: only the codes tell the rows apart
    result, weights, _ = check_against_reference(x, None, AttentionConfig(similarity="cosine", positions="sinusoidal"))
    assert np.ptp(result.weights) > 0.01  # not the uniform rows of codes scaled to 0


@settings(max_examples=100, deadline=None)
@given(scenario_cases({"any": True}))
def test_engine_matches_reference_any_configuration(case):
    x_q, x_k, config = case
    check_against_reference(x_q, x_k, config)


# --- hand-written cases --------------------------------------------------------------------

X = np.array([
    [1.0, 0.0, -0.5, 2.0],
    [0.0, 1.0, 0.5, -1.0],
    [1.5, -2.0, 0.0, 0.25],
    [-1.0, 0.5, 3.0, 0.0],
    [0.0, 0.0, 0.0, 0.0],
])
CONTEXT = np.array([
    [0.5, 0.5, 0.5, 0.5],
    [2.0, -1.0, 0.0, 1.0],
    [-0.25, 0.75, -1.5, 0.0],
])

HAND_CONFIGS = {
    "raw": AttentionConfig(mode="raw", scale="none"),
    "projected d_k=6": AttentionConfig(mode="projected", d_k=6, seed=7),
    "multi-head raw": AttentionConfig(mode="raw", heads=2),
    "multi-head projected": AttentionConfig(mode="projected", heads=3, d_k=6, seed=3),
    "causal": AttentionConfig(mode="raw", mask="causal", scale="none"),
    "cosine": AttentionConfig(mode="raw", similarity="cosine", scale=4.0),
    "float scale + temperature": AttentionConfig(mode="projected", scale=0.3, temperature=0.4, seed=11),
    "positions": AttentionConfig(mode="raw", positions="sinusoidal"),
    "output projection": AttentionConfig(mode="projected", heads=2, d_k=8, output_projection=True, seed=5),
    "everything": AttentionConfig(mode="projected", heads=2, d_k=6, similarity="cosine", scale="sqrt",
                                  temperature=0.7, mask="causal", positions="sinusoidal",
                                  output_projection=True, seed=42),
}


@pytest.mark.quick
@pytest.mark.parametrize("cross", [False, True], ids=["self", "cross"])
@pytest.mark.parametrize("name", list(HAND_CONFIGS))
def test_hand_written_cases(name, cross):
    check_against_reference(X, CONTEXT if cross else None, HAND_CONFIGS[name])


def test_two_tokens_closed_form():
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    result, weights, outputs = check_against_reference(x, None, AttentionConfig(mode="raw", scale="none"))
    big, small = math.e / (1 + math.e), 1 / (1 + math.e)
    np.testing.assert_allclose(result.weights[0], [[big, small], [small, big]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(result.outputs, [[big, small], [small, big]], rtol=0, atol=1e-15)


def test_causal_closed_form():
    x = np.array([[1.0], [2.0], [3.0]])
    result, _, _ = check_against_reference(x, None, AttentionConfig(mode="raw", scale="none", mask="causal"))
    # row 0 sees only itself; row 1 sees logits 2, 4; row 2 sees 3, 6, 9
    w1 = [math.exp(2) / (math.exp(2) + math.exp(4)), math.exp(4) / (math.exp(2) + math.exp(4)), 0.0]
    z2 = math.exp(3) + math.exp(6) + math.exp(9)
    w2 = [math.exp(3) / z2, math.exp(6) / z2, math.exp(9) / z2]
    np.testing.assert_allclose(result.weights[0], [[1.0, 0.0, 0.0], w1, w2], rtol=0, atol=1e-15)
    np.testing.assert_allclose(result.outputs[:, 0], [1.0, w1[0] + 2 * w1[1], w2[0] + 2 * w2[1] + 3 * w2[2]],
                               rtol=0, atol=1e-14)


def test_cross_attention_single_query_closed_form():
    q = np.array([[0.0, 2.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    result, _, _ = check_against_reference(q, k, AttentionConfig(mode="raw", scale="sqrt", temperature=2.0))
    logits = [0.0, 2.0 / math.sqrt(2) / 2, 2.0 / math.sqrt(2) / 2]
    z = sum(math.exp(v) for v in logits)
    expected = [math.exp(v) / z for v in logits]
    np.testing.assert_allclose(result.weights[0, 0], expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(result.outputs[0], [expected[0] + expected[2], expected[1] + expected[2]],
                               rtol=0, atol=1e-15)


def test_positions_formula_on_a_known_row():
    pe = ref_positions(2, 4)
    assert pe[0] == [0.0, 1.0, 0.0, 1.0]
    assert pe[1] == pytest.approx([math.sin(1.0), math.cos(1.0), math.sin(0.01), math.cos(0.01)], abs=1e-15)


# --- real-looking data: GloVe-like norms, unscaled, saturated softmax ----------------------


@pytest.mark.parametrize("config", [
    AttentionConfig(mode="raw", scale="none"),
    AttentionConfig(mode="raw", scale="none", heads=5, mask="causal", positions="sinusoidal"),
    AttentionConfig(mode="projected", scale="none", heads=2, d_k=64, output_projection=True, seed=1),
], ids=["raw", "raw-multihead-causal-positions", "projected"])
def test_glove_like_embeddings_saturate_and_agree(config):
    rng = np.random.default_rng(2024)
    d, n = 50, 10
    x = rng.normal(0.0, 6.0 / math.sqrt(d), size=(n, d))  # norms ~ 6, like GloVe 50d
    assert 4.0 < np.linalg.norm(x, axis=1).mean() < 8.0
    result, _, _ = check_against_reference(x, None, config)
    if config.mode == "raw" and config.heads == 1:
        # self-score ~36 against cross-scores ~N(0, 5^2): each token attends almost only to itself
        assert np.all(np.diag(result.weights[0]) > 0.99)
        assert result.weights.min() < 1e-8


def test_auto_position_codes_are_as_long_as_their_words():
    """position_scale="auto": |PE_p| scaled to |x_p| for each row; a zero word gets no code."""
    from attn_cli.engine.attention import position_codes

    x = np.array([[3.0, 4.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.1, 0.0, 0.0, 0.2]])
    codes = position_codes(AttentionConfig(positions="sinusoidal"), x)
    np.testing.assert_allclose(np.linalg.norm(codes, axis=1), np.linalg.norm(x, axis=1), rtol=1e-15)
    raw = np.array(ref_positions(3, 4))
    np.testing.assert_allclose(codes[2] / np.linalg.norm(codes[2]), raw[2] / np.linalg.norm(raw[2]), rtol=1e-14)
    np.testing.assert_allclose(position_codes(AttentionConfig(positions="sinusoidal", position_scale=2.5), x),
                               2.5 * raw, rtol=1e-15)


# --- the v3 document's shares against the reference ----------------------------------------


def reference_shares(weights, x, w_v=None):
    """(output shares, shift shares) [n][n] of a layer without W_O, from the reference's weights [H][n][n] and the
    inputs x: term_ij = w^h_ij v^h_j per head, concatenated; s_i = v_i; d_i = y_i - s_i."""
    values = x if w_v is None else ref_matmul(x, w_v)
    heads, n, width = len(weights), len(x), len(values[0])
    d_head = width // heads

    def term(i, j, less):  # key j's term of row i, concatenated over heads: w^h_ij (v^h_j - less^h)
        return [weights[c // d_head][i][j] * (values[j][c] - less[c]) for c in range(width)]

    def dot(a, b):
        return math.fsum(p * q for p, q in zip(a, b))

    output, shift = [], []
    for i in range(n):
        y = [math.fsum(term(i, j, [0.0] * width)[c] for j in range(n)) for c in range(width)]
        d = [y[c] - values[i][c] for c in range(width)]
        output.append([dot(term(i, j, [0.0] * width), y) / dot(y, y) for j in range(n)])
        shift.append([dot(term(i, j, values[i]), d) / dot(d, d) for j in range(n)])
    return output, shift


@pytest.mark.parametrize("changes", [dict(heads=2, scale="sqrt"), dict(mode="projected", heads=2, d_k=32, seed=4)])
def test_v2_contributions_recomputed_from_v3_matrices_match_the_reference(changes):
    """Schema 3 keeps every key's shares as two matrices: v2's `contributions` lists, computed from them (the
    10 heaviest keys by mean weight), equal the slow reference's numbers and the API's records."""
    import attn_cli
    from conftest import contributions

    result = attn_cli.explain("the river bank flows past the old money bank today", neighbors=0, **changes)
    document = result.to_dict()
    p = result.projections
    x = result.embeddings.tolist()
    weights, _ = reference_attention(x, None, mode=result.settings.mode, scale=result.settings.scale,
                                     heads=result.settings.heads, w_q=None if p is None else p.w_q.tolist(),
                                     w_k=None if p is None else p.w_k.tolist(),
                                     w_v=None if p is None else p.w_v.tolist())
    output, shift = reference_shares(weights, x, None if p is None else p.w_v.tolist())
    for i, record in enumerate(result.shifts):
        listed = contributions(document, i)
        mean = [math.fsum(head[i][j] for head in weights) / len(weights) for j in range(len(x))]
        assert [c["index"] for c in listed] == sorted(range(len(x)), key=lambda j: -mean[j])[:10]
        for c in listed:
            j = c["index"]
            assert c["weight"] == pytest.approx(mean[j], abs=TOL)
            assert c["share"] == pytest.approx(output[i][j], abs=1e-9)
            assert c["shift_share"] == pytest.approx(shift[i][j], abs=1e-9)
        assert listed == [{"token": c.token, "index": c.index, "weight": c.weight, "share": c.share,
                           "shift_share": c.shift_share} for c in record.contributions]
