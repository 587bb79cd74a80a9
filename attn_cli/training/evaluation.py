"""How well a layer predicts the held-out sentences' words: loss, accuracy@1 and accuracy@10.

Three layers are compared on the same predictions, with the same mask and inputs (position codes included
when the run uses them):
    raw      Q = K = V = X, scale "none" (explain's raw default): y_i = sum_j w_ij x_j, scored against E as it is
    random   the initial projected weights (draw_projections with the run's seed): the untrained starting point
    trained  the learned weights
Accuracy@k counts a prediction as right when fewer than k vocabulary words score strictly above the target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attn_cli.engine.attention import AttentionConfig, Projections
from attn_cli.training.learning import (NO_TARGET, Layer, cross_entropy, identity_layer, layer_forward, score_blocks,
                                     vocabulary_logits)
from attn_cli.training.batches import Feed

EVALUATION_BATCH = 64  # sentences per forward pass (the vocabulary is scored in blocks of learning.score_blocks)
# Held-out predictions below which the table means little: an accuracy over m predictions is uncertain by up to
# 0.98 / sqrt(m) either way (95%), 10 points at 100: below that the three layers' rows can swap by chance.
MIN_PREDICTIONS = 100


@dataclass(frozen=True)
class LayerScore:
    loss: float  # mean cross-entropy (nats) per predicted word
    accuracy_at_1: float
    accuracy_at_10: float
    predictions: int


@dataclass(frozen=True)
class Evaluation:
    raw: LayerScore
    random: LayerScore
    trained: LayerScore


def evaluation_warnings(evaluation: Evaluation) -> list[dict]:
    """What to say about the held-out table before reading it: a warning when it rests on too few predictions."""
    predictions = evaluation.trained.predictions
    if predictions >= MIN_PREDICTIONS:
        return []
    return [{"code": "small_held_out", "predictions": predictions, "minimum": MIN_PREDICTIONS,
             "message": f"the held-out table rests on {predictions:,} predictions, fewer than {MIN_PREDICTIONS}: "
                        f"its accuracies are uncertain by up to ±{98 / max(predictions, 1) ** 0.5:.0f} points and "
                        "its rows may rank by chance; train on more sentences (a tenth of them is held out)"}]


def projected_layer(config: AttentionConfig, projections: Projections) -> Layer:
    """The Layer the engine runs for `config` with these weights: its heads and its 1/sqrt(d_head) scale."""
    d_head = projections.w_q.shape[1] // config.heads
    return Layer(projections, config.heads, config.scale_factor(d_head))


def score_layer(feed: Feed, layer: Layer, sentences: Sequence[np.ndarray]) -> LayerScore:
    """Loss and accuracy of `layer` over every prediction the sentences hold."""
    losses, ranks = [], []
    for batch in feed.batches(sentences, EVALUATION_BATCH):
        chosen = batch.targets != NO_TARGET  # [B, n]
        outputs, targets = layer_forward(batch.inputs, layer, batch.visible).outputs[chosen], batch.targets[chosen]
        for block in score_blocks(len(targets), feed.vocabulary):
            logits = vocabulary_logits(outputs[block], feed.vocabulary)  # [p, N]
            wanted = targets[block]
            ranks.append(np.count_nonzero(logits > logits[np.arange(len(wanted)), wanted][:, None], axis=1))
            losses.append(cross_entropy(logits, wanted)[0])
    loss, rank = np.concatenate(losses or [np.zeros(0)]), np.concatenate(ranks or [np.zeros(0, dtype=int)])
    if not len(loss):
        return LayerScore(float("nan"), float("nan"), float("nan"), 0)
    return LayerScore(float(loss.mean()), float(np.mean(rank < 1)), float(np.mean(rank < 10)), len(loss))


def evaluate_layers(feed: Feed, sentences: Sequence[np.ndarray], initial: Projections,
                    trained: Projections) -> Evaluation:
    """Raw, random and trained layers scored on the same (held-out) sentences."""
    return Evaluation(raw=score_layer(feed, identity_layer(feed.vectors.dims), sentences),
                      random=score_layer(feed, projected_layer(feed.config, initial), sentences),
                      trained=score_layer(feed, projected_layer(feed.config, trained), sentences))
