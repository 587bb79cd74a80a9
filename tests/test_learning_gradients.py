"""The hand-written gradients of training/learning.py against central finite differences, in float64.

Every setting the trainer can use (1 and 2 heads, d_k equal to d and not, no positions and sinusoidal
ones, the masked-word and next-word masks) and every weight matrix; some targets lie beyond the
vocabulary, so positions that predict nothing are covered too.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from attn_cli.engine.attention import AttentionConfig, Projections, draw_projections, position_codes, visible_matrix
from attn_cli.training.learning import NO_TARGET, Layer, batch_loss, prediction_targets

D, VOCABULARY, STEP = 6, 15, 1e-6
SETTINGS = list(itertools.product((1, 2), (4, 6), ("none", "sinusoidal"), ("others", "causal")))


def problem(heads: int, d_k: int, positions: str, mask: str, n: int, seed: int = 0):
    """A batch of 3 sentences of n words over a random 15-word vocabulary, and a layer's starting weights."""
    rng = np.random.default_rng(seed)
    config = AttentionConfig(mode="projected", d_k=d_k, heads=heads, seed=seed + 1, output_projection=True,
                             scale="sqrt", mask=mask, positions=positions)
    vocabulary = rng.normal(size=(VOCABULARY + 3, D))  # 3 rows beyond the scored vocabulary: context only
    words = rng.integers(0, VOCABULARY + 3, size=(3, n))
    inputs = vocabulary[words]  # [3, n, D]
    for sentence in inputs:
        codes = position_codes(config, sentence)
        sentence += 0.0 if codes is None else codes
    targets = prediction_targets(words, mask, VOCABULARY)
    layer = Layer(draw_projections(D, config), heads, config.scale_factor(d_k // heads))
    return inputs, targets, layer, visible_matrix(mask, words[:, None, :], words[:, None, :]), vocabulary[:VOCABULARY]


def numeric_gradient(inputs, targets, layer: Layer, visible, vocabulary, name: str) -> np.ndarray:
    weights = getattr(layer.projections, name)
    gradient = np.zeros_like(weights)
    for index in np.ndindex(weights.shape):
        losses = []
        for step in (STEP, -STEP):
            moved = weights.copy()
            moved[index] += step
            shifted = Layer(Projections(**{**vars(layer.projections), name: moved}), layer.heads, layer.scale)
            losses.append(batch_loss(inputs, targets, shifted, visible, vocabulary).loss)
        gradient[index] = (losses[0] - losses[1]) / (2 * STEP)
    return gradient


@pytest.mark.parametrize("heads, d_k, positions, mask", SETTINGS)
@pytest.mark.parametrize("n", [2, 5])
def test_every_gradient_matches_central_differences(heads, d_k, positions, mask, n):
    inputs, targets, layer, visible, vocabulary = problem(heads, d_k, positions, mask, n)
    result = batch_loss(inputs, targets, layer, visible, vocabulary)
    assert result.predictions == np.count_nonzero(targets != NO_TARGET) > 0
    for name in ("w_q", "w_k", "w_v", "w_o"):
        numeric = numeric_gradient(inputs, targets, layer, visible, vocabulary, name)
        analytic = getattr(result.gradients, name)
        assert analytic.shape == numeric.shape
        size = max(np.linalg.norm(numeric), np.linalg.norm(analytic))
        if size < 1e-9:  # two words: every predicting row sees one key, with weight 1 whatever W_Q and W_K are
            assert n == 2 and name in ("w_q", "w_k") and not np.any(analytic)
            continue
        error = np.linalg.norm(analytic - numeric) / size
        assert error < 1e-6, (name, error)


def test_a_batch_without_predictions_has_zero_loss_and_gradients():
    inputs, targets, layer, visible, vocabulary = problem(1, 4, "none", "others", 3)
    result = batch_loss(inputs, np.full_like(targets, NO_TARGET), layer, visible, vocabulary)
    assert (result.loss, result.predictions) == (0.0, 0)
    assert all(not np.any(g) for g in vars(result.gradients).values())


def test_float32_scores_agree_with_float64_to_single_precision():
    inputs, targets, layer, visible, vocabulary = problem(2, 4, "sinusoidal", "others", 5)
    exact = batch_loss(inputs, targets, layer, visible, vocabulary)
    fast = batch_loss(inputs, targets, layer, visible, vocabulary.astype(np.float32))
    assert fast.loss == pytest.approx(exact.loss, rel=1e-5)
    for name in ("w_q", "w_k", "w_v", "w_o"):
        np.testing.assert_allclose(getattr(fast.gradients, name), getattr(exact.gradients, name), rtol=1e-3,
                                   atol=1e-5 * np.abs(getattr(exact.gradients, name)).max())


def test_targets_follow_the_mask():
    words = np.array([[3, 20, 5, 7]])
    assert prediction_targets(words, "others", 10).tolist() == [[3, NO_TARGET, 5, 7]]
    assert prediction_targets(words, "causal", 10).tolist() == [[NO_TARGET, 5, 7, NO_TARGET]]
