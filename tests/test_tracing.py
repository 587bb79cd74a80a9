"""The trace document against the engine: every number it holds, and each note's condition."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from attn_cli.engine.attention import MIN_TEMPERATURE, AttentionConfig, multi_head_attention, softmax
from attn_cli.engine.analysis import entropy_bits
from attn_cli.errors import InputError, SettingsError
from attn_cli.api import trace_tokenized
from attn_cli.settings import Settings
from attn_cli.engine.tokenize import tokenize
from attn_cli.vectors import load_vectors
from attn_cli.vectors import load_default_vectors

EXACT = 1e-12


@pytest.fixture(scope="module")
def default_vectors():
    return load_default_vectors()


def traced(vectors, sentence: str, config: AttentionConfig, **options):
    """(document, engine result, embeddings) for the same sentence and settings."""
    tokenized = tokenize(sentence, vectors)
    settings = Settings(**{name: value for name, value in vars(config).items() if name != "weights_digest"})
    [result] = trace_tokenized([(sentence, tokenized)], vectors, settings, **options)
    report = result.to_dict()
    return report, multi_head_attention(tokenized.embeddings, config=config), tokenized.embeddings


def assert_summary(summary: dict, vector: np.ndarray, dims: int) -> None:
    """A vector summary holds the vector's first coordinates, its length and its size."""
    assert summary["dims"] == vector.shape[0]
    np.testing.assert_allclose(summary["first"], vector[:dims], rtol=0, atol=EXACT)
    assert len(summary["first"]) == min(dims, vector.shape[0])
    assert math.isclose(summary["norm"], math.sqrt(float(vector @ vector)), rel_tol=1e-12, abs_tol=EXACT)


CONFIGS = [
    AttentionConfig(),
    AttentionConfig(scale="sqrt", temperature=0.5, mask="causal"),
    AttentionConfig(similarity="cosine", positions="sinusoidal", heads=4),
    AttentionConfig(mode="projected", d_k=32, heads=2, seed=7, output_projection=True),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.mode}-{c.heads}h-{c.mask}-{c.similarity}")
def test_every_number_of_the_document_is_the_engines(default_vectors, config):
    dims = 5
    report, result, embeddings = traced(default_vectors, "money bank grows", config, dims=dims)
    for summary, row in zip(report["static_vectors"], embeddings):
        assert_summary(summary, row, dims)
    if config.positions != "none":
        for summary, row in zip(report["inputs"], result.query_inputs):
            assert_summary(summary, row, dims)
    assert [t["index"] for t in report["traces"]] == [0, 1, 2]  # no --word: every word in turn
    for trace in report["traces"]:
        i = trace["index"]
        for block in trace["heads"]:
            h = block["index"]
            q = result.queries[h, i]
            assert_summary(block["query"], q, dims)
            assert block["columns"] == [h * result.d_head, (h + 1) * result.d_head]
            exps = []
            for key in block["keys"]:
                j = key["index"]
                assert_summary(key["key"], result.keys[h, j], dims)
                assert_summary(key["value"], result.values[h, j], dims)
                assert math.isclose(key["dot"], math.fsum(q * result.keys[h, j]), abs_tol=EXACT)
                assert key["score"] == result.scores[h, i, j]
                assert key["masked"] == (config.mask == "causal" and j > i)
                if key["masked"]:
                    assert key["logit"] is None and key["exp"] == 0 and key["weight"] == 0
                else:
                    assert key["logit"] == result.logits[h, i, j]
                    assert math.isclose(key["exp"], math.exp(key["logit"]), rel_tol=1e-12)
                assert key["weight"] == result.weights[h, i, j]
                assert_summary(key["term"], result.weights[h, i, j] * result.values[h, j], dims)
                exps.append(key["exp"])
            assert math.isclose(block["exp_sum"], math.fsum(exps), rel_tol=1e-12)
            np.testing.assert_allclose(np.array(exps) / block["exp_sum"], result.weights[h, i], atol=EXACT)
            assert math.isclose(block["weight_sum"], 1.0, abs_tol=EXACT)
            assert_summary(block["output"], result.head_outputs[h, i], dims)
        joined = result.head_outputs[:, i, :].reshape(-1)
        if config.heads > 1:
            assert_summary(trace["concatenation"], joined, dims)
        else:
            assert trace["concatenation"] is None
        if config.output_projection:
            assert trace["output_projection"]["shape"] == list(result.projections.w_o.shape)
            assert_summary(trace["output_projection"]["output"], joined @ result.projections.w_o, dims)
        assert_summary(trace["output"], result.outputs[i], dims)
        assert_summary(trace["matrix_form"]["output"], result.outputs[i], dims)
        assert trace["matrix_form"]["weights_shape"] == [3, 3]
        assert trace["matrix_form"]["queries_shape"] == [3, result.d_head]
        assert 0 <= trace["matrix_form_max_abs_diff"] < EXACT


def test_the_comparison_is_computed_from_x_and_y(default_vectors):
    report, result, embeddings = traced(default_vectors, "money bank grows", AttentionConfig(), word="bank")
    shift = report["traces"][0]["shift"]
    x, y = embeddings[1], result.outputs[1]
    assert math.isclose(shift["cosine"], x @ y / np.linalg.norm(x) / np.linalg.norm(y), rel_tol=1e-12)
    assert math.isclose(shift["delta_norm"], np.linalg.norm(y - x), rel_tol=1e-12)
    money = next(c for c in shift["pulled_by"] if c["token"] == "money")
    d = y - x
    moved = result.weights[0, 1, 0] * (embeddings[0] - x)
    assert math.isclose(money["shift_share"], moved @ d / (d @ d), rel_tol=1e-9)
    assert [n["word"] for n in shift["neighbors_after"]][:2] == ["banks", "money"]
    assert "money" not in [n["word"] for n in shift["neighbors_before"]]


def test_word_selects_each_occurrence_and_a_missing_word_names_the_choices(default_vectors):
    report, _, _ = traced(default_vectors, "the bank and the river", AttentionConfig(), word="The")
    assert [t["index"] for t in report["traces"]] == [0, 3]
    with pytest.raises(InputError, match="choose one of: the, bank, and, river"):
        traced(default_vectors, "the bank and the river", AttentionConfig(), word="money")


def notes(trace: dict, code: str) -> list[dict]:
    return [note for note in trace["notes"] if note["code"] == code]


def test_saturated_row_states_the_gap_and_recomputes_the_remedies(glove_file):
    """Real GloVe 6B vectors (norms ~5), unscaled: the word itself takes ~all the weight."""
    vectors = load_vectors(glove_file)
    config = AttentionConfig()
    report, result, embeddings = traced(vectors, "the people said", config, word="people")
    (note,) = notes(report["traces"][0], "saturated")
    logits = result.logits[0, 1]
    ranked = np.sort(logits)[::-1]
    assert note["max_weight"] == result.weights[0, 1].max() >= 0.95
    assert note["argmax"] == 1 and math.isclose(note["logit_gap"], ranked[0] - ranked[1], rel_tol=1e-12)
    assert f"by {note['logit_gap']:.3g}" in note["message"]
    scores = result.scores[0, 1]
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    temperature = note["alternatives"][-1]["settings"]["temperature"]  # solved for the row (issue 26)
    expected = [
        ({"scale": "sqrt"}, softmax(scores / math.sqrt(50))),
        ({"similarity": "cosine"}, softmax(unit @ unit[1])),
        ({"temperature": temperature}, softmax(scores / temperature)),
    ]
    assert 0.98 * math.log2(3) > entropy_bits(expected[-1][1]) and max(expected[-1][1]) < 0.95
    assert [a["settings"] for a in note["alternatives"]] == [settings for settings, _ in expected]
    for alternative, (_, weights) in zip(note["alternatives"], expected):
        np.testing.assert_allclose(alternative["weights"], weights, atol=1e-12)
        assert max(alternative["weights"]) < note["max_weight"]
    assert not notes(report["traces"][0], "flat")


def test_flat_row_recomputes_a_sharper_temperature(default_vectors):
    """Issue 26: the temperature is solved for the row, so that under it the row is neither flat nor saturated."""
    config = AttentionConfig(scale="sqrt")
    report, result, _ = traced(default_vectors, "money bank grows", config, word="bank")
    (note,) = notes(report["traces"][0], "flat")
    visible = result.logits[0, 1]
    assert math.isclose(note["logit_spread"], visible.max() - visible.min(), rel_tol=1e-12)
    assert note["max_weight"] < 0.4
    temperature = note["alternatives"][0]["settings"]["temperature"]
    sharper = softmax(result.scores[0, 1] / math.sqrt(128) / temperature)
    assert 0.5 < max(sharper) < 0.95 and entropy_bits(sharper) < 0.98 * math.log2(3)
    unscaled = softmax(result.scores[0, 1])
    assert [a["settings"] for a in note["alternatives"]] == [{"temperature": temperature}, {"scale": "none"}]
    np.testing.assert_allclose(note["alternatives"][0]["weights"], sharper, atol=1e-12)
    np.testing.assert_allclose(note["alternatives"][1]["weights"], unscaled, atol=1e-12)
    assert not notes(report["traces"][0], "saturated")


def test_a_readable_row_gets_neither_shape_note(default_vectors):
    report, _, _ = traced(default_vectors, "money bank grows", AttentionConfig(), word="bank")
    assert {note["code"] for note in report["traces"][0]["notes"]} == {"convex", "permutation"}


def test_causal_mask_names_the_future_words_with_weight_zero(default_vectors):
    config = AttentionConfig(mask="causal", heads=2)
    report, result, _ = traced(default_vectors, "money bank grows", config)
    first, middle, last = report["traces"]
    assert notes(first, "causal")[0]["future"] == [1, 2]
    assert notes(middle, "causal")[0]["future"] == [2]
    assert not notes(last, "causal")  # the last word has no future
    assert result.weights[:, 0, 1:].max() == 0 == notes(first, "causal")[0]["largest_future_weight"]
    assert "“bank”, “grows” get score −∞ and weight 0" in notes(first, "causal")[0]["message"]
    assert all(not notes(t, "permutation") for t in report["traces"])  # order matters: no claim without a check


def test_shuffle_check_measures_the_permutation(default_vectors):
    blind, _, _ = traced(default_vectors, "money bank grows", AttentionConfig(), word="bank", shuffle_check=True)
    (note,) = notes(blind["traces"][0], "permutation")
    assert note["checked"] and note["order"] == [1, 2, 0] and note["max_abs_diff"] < 1e-12
    assert "“bank grows money”" in note["message"]
    config = AttentionConfig(positions="sinusoidal")
    aware, result, embeddings = traced(default_vectors, "money bank grows", config, word="bank", shuffle_check=True)
    (note,) = notes(aware["traces"][0], "permutation")
    rotated = multi_head_attention(embeddings[[1, 2, 0]], config=config)
    assert math.isclose(note["max_abs_diff"], max(np.abs(rotated.outputs[[2, 0, 1]] - result.outputs).max(),
                                                  np.abs(rotated.weights[:, [2, 0, 1]][:, :, [2, 0, 1]]
                                                         - result.weights).max()), rel_tol=1e-12)
    assert note["max_abs_diff"] > 0.01 and "sinusoidal positions" in note["message"]


@pytest.mark.parametrize("heads, outside", [(1, False), (2, True)])
def test_convexity_is_checked_and_several_heads_with_w_o_break_it(default_vectors, heads, outside):
    raw, _, _ = traced(default_vectors, "money bank grows", AttentionConfig(), word="bank")
    (note,) = notes(raw["traces"][0], "convex")
    assert note["inside"] == note["dims"] == 128 and note["after_projection"] is None
    config = AttentionConfig(mode="projected", heads=heads, output_projection=True)
    projected, result, _ = traced(default_vectors, "money bank grows", config, word="bank")
    (note,) = notes(projected["traces"][0], "convex")
    assert note["inside"] == note["dims"] == 128
    mapped = result.values.transpose(1, 0, 2).reshape(3, -1) @ result.projections.w_o  # own values through W_O
    # the only mix a s_money + b s_bank + (1 - a - b) s_grows closest to y, by the normal equations
    basis = (mapped[:2] - mapped[2]).T  # [d, 2]
    a = np.linalg.solve(basis.T @ basis, basis.T @ (result.outputs[1] - mapped[2]))
    miss = np.linalg.norm(basis @ a + mapped[2] - result.outputs[1])
    assert math.isclose(note["after_projection"]["miss"], miss, rel_tol=1e-6, abs_tol=1e-12)
    assert note["after_projection"]["outside"] is outside
    assert bool(miss > 0.01) == outside
    if heads == 1:  # one head: y W_O = sum_j w_j (v_j W_O), the very weights of the row
        np.testing.assert_allclose([*a, 1 - a.sum()], result.weights[0, 1], atol=1e-9)


def test_projection_block_and_a_temperature_limit(default_vectors):
    config = AttentionConfig(mode="projected", d_k=16, seed=3)
    report, result, _ = traced(default_vectors, "money bank", config)
    assert report["projections"]["w_q"] == [128, 16] and report["projections"]["seed"] == 3
    assert report["projections"]["w_o"] is None and math.isclose(report["projections"]["std"][0], 1 / math.sqrt(128))
    hard, _, _ = traced(default_vectors, "money bank grows", replace(AttentionConfig(), temperature=MIN_TEMPERATURE))
    block = hard["traces"][1]["heads"][0]
    assert block["exp_shift"] == max(key["logit"] for key in block["keys"]) > 1e6
    assert [key["exp"] for key in block["keys"]] == [0.0, 1.0, 0.0]
    with pytest.raises(SettingsError, match="temperature must be a finite number >= 1e-06"):
        AttentionConfig(temperature=1e-320)
