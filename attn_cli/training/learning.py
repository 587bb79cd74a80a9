"""One attention layer predicting words from context: forward, loss, backward by hand and Adam, in numpy alone.
Shapes, for B sentences of n words (one length), d input dims, H heads of d_head = d_k / H, N vocabulary words:

    X            [B, n, d]           word vectors (+ position codes), constants
    Q, K, V      [B, H, n, d_head]   X W_Q, X W_K, X W_V, heads split as split_heads does
    S            [B, H, n, n]        Q K^T x scale, -inf where the mask hides key j from query i
    A            [B, H, n, n]        softmax(S), rows sum to 1
    O            [B, n, d_k]         A V, heads concatenated
    Y            [B, n, d]           O W_O (no residual: x_i added back would hand over the answer)
    Z            [P, N]              Y E^T at the P predicted positions, E the vocabulary's vectors
    loss                             mean over the P positions of logsumexp(Z_p) - Z_p[target_p]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from attn_cli.engine.attention import Projections, attend, merge_heads, split_heads

NO_TARGET = -1  # a position that predicts nothing (the last word under next-word, a word outside the vocabulary)
SCORE_BLOCK_BYTES = 24 * 2**20  # scores of one block of predictions: glibc maps (and zeroes) blocks over 32 MB anew


@dataclass(frozen=True)
class Layer:
    projections: Projections  # W_Q, W_K, W_V [d, d_k]; W_O [d_k, d] or None (heads concatenated as they are)
    heads: int
    scale: float


@dataclass(frozen=True)
class LayerPass:  # the forward intermediates that the backward pass reuses

    inputs: np.ndarray  # [B, n, d]
    queries: np.ndarray  # [B, H, n, d_head]
    keys: np.ndarray  # [B, H, n, d_head]
    values: np.ndarray  # [B, H, n, d_head]
    weights: np.ndarray  # [B, H, n, n]
    concatenated: np.ndarray  # [B, n, d_k]
    outputs: np.ndarray  # [B, n, d]


@dataclass(frozen=True)
class BatchLoss:
    loss: float  # mean cross-entropy over the predictions (0.0 when there are none)
    predictions: int
    gradients: Projections  # d loss / d W_Q, W_K, W_V, W_O


def prediction_targets(words: np.ndarray, mask: str, vocabulary_size: int) -> np.ndarray:
    """[B, n]: its own word under the mask "others", else the next; NO_TARGET for none or one past the vocabulary."""
    targets = words.copy() if mask == "others" else np.pad(words[:, 1:], ((0, 0), (0, 1)), constant_values=NO_TARGET)
    targets[targets >= vocabulary_size] = NO_TARGET
    return targets


def layer_forward(inputs: np.ndarray, layer: Layer, visible: np.ndarray) -> LayerPass:
    w = layer.projections  # inputs [B, n, d], visible [B, 1, n, n] or [n, n] bool
    # [B, n, d] x [d, d_k] -> [B, n, d_k] -> [B, H, n, d_head]
    queries, keys, values = (split_heads(inputs @ m, layer.heads) for m in (w.w_q, w.w_k, w.w_v))
    head_outputs, weights, _, _ = attend(queries, keys, values, scale=layer.scale, mask=visible)
    concatenated = merge_heads(head_outputs)  # [B, H, n, d_head] -> [B, n, d_k]
    outputs = concatenated if w.w_o is None else concatenated @ w.w_o  # [B, n, d_k] x [d_k, d] -> [B, n, d]
    return LayerPass(inputs, queries, keys, values, weights, concatenated, outputs)


def score_blocks(outputs: np.ndarray, vocabulary: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    """Blocks of logits Z = Y E^T ([p, N], in the vocabulary's dtype) of at most SCORE_BLOCK_BYTES each."""
    rows = max(1, SCORE_BLOCK_BYTES // (vocabulary.shape[0] * vocabulary.itemsize))
    for start in range(0, len(outputs), rows):
        block = slice(start, start + rows)
        yield block, outputs[block].astype(vocabulary.dtype, copy=False) @ vocabulary.T


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[P] -log softmax(Z_p)[target_p], [P, 1] sums of exp(Z_p - max Z_p); in place: training's largest arrays."""
    logits -= logits.max(axis=1, keepdims=True)  # every entry <= 0: exp cannot overflow
    target_logits = logits[np.arange(len(targets)), targets].astype(np.float64)  # [P]
    np.exp(logits, out=logits)
    sums = logits.sum(axis=1, keepdims=True)  # [P, 1]
    return np.log(sums[:, 0].astype(np.float64)) - target_logits, sums


def batch_loss(inputs: np.ndarray, targets: np.ndarray, layer: Layer, visible: np.ndarray,
               vocabulary: np.ndarray) -> BatchLoss:
    forward = layer_forward(inputs, layer, visible)  # inputs [B, n, d], targets [B, n], vocabulary E [N, d]
    chosen = targets != NO_TARGET  # [B, n]
    count = int(np.count_nonzero(chosen))
    if count == 0:  # no gradient: zeros of each weight's shape
        return BatchLoss(0.0, 0, Projections(*map(np.zeros_like, parameters(layer.projections))))
    outputs, wanted = forward.outputs[chosen], targets[chosen]  # [P, d], [P]
    losses, d_chosen = np.empty(count), np.empty_like(outputs)  # [P], [P, d]
    for block, logits in score_blocks(outputs, vocabulary):  # [p, N]
        losses[block], sums = cross_entropy(logits, wanted[block])
        logits *= 1.0 / (sums * count)  # softmax / P: the mean over the batch's predictions
        logits[np.arange(len(logits)), wanted[block]] -= logits.dtype.type(1.0 / count)  # d loss / d Z: (p - 1_t) / P
        d_chosen[block] = logits @ vocabulary  # [p, N] x [N, d] -> [p, d]
    d_outputs = np.zeros_like(forward.outputs)  # [B, n, d]
    d_outputs[chosen] = d_chosen
    return BatchLoss(float(losses.mean()), count, layer_backward(forward, d_outputs, layer))


def layer_backward(forward: LayerPass, d_outputs: np.ndarray, layer: Layer) -> Projections:
    """d loss / d W from d loss / d Y [B, n, d], back through each step of layer_forward."""
    w_o = parameters(layer.projections)[3]
    d_w_o = flat(forward.concatenated).T @ flat(d_outputs)  # [d_k, B*n] x [B*n, d] -> [d_k, d]
    d_heads = split_heads(d_outputs @ w_o.T, layer.heads)  # [B, n, d] x [d, d_k] -> [B, H, n, d_head]
    d_weights = d_heads @ np.swapaxes(forward.values, -1, -2)  # [B, H, n, d_head] x [.., d_head, n] -> [B, H, n, n]
    d_values = np.swapaxes(forward.weights, -1, -2) @ d_heads  # [B, H, n, n] x [B, H, n, d_head] -> [.., d_head]
    a = forward.weights
    d_scores = a * (d_weights - np.sum(d_weights * a, axis=-1, keepdims=True)) * layer.scale  # softmax' (0 if hidden)
    d_queries = d_scores @ forward.keys  # [B, H, n, n] x [B, H, n, d_head] -> [B, H, n, d_head]
    d_keys = np.swapaxes(d_scores, -1, -2) @ forward.queries  # [B, H, n, d_head]
    x = flat(forward.inputs).T  # [d, B*n]
    d_w_q, d_w_k, d_w_v = (x @ flat(merge_heads(g)) for g in (d_queries, d_keys, d_values))
    return Projections(w_q=d_w_q, w_k=d_w_k, w_v=d_w_v, w_o=d_w_o)  # each [d, d_k] x ... -> [d, d_k]


def parameters(weights: Projections) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    assert weights.w_o is not None
    return weights.w_q, weights.w_k, weights.w_v, weights.w_o


def flat(x: np.ndarray) -> np.ndarray:  # [B, n, m] -> [B*n, m]
    return x.reshape(-1, x.shape[-1])


AdamState = tuple[int, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]  # steps; m and v, one array per parameter
BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-8  # Adam's defaults (Kingma & Ba, 2015)


def adam_start(parameters: tuple[np.ndarray, ...]) -> AdamState:
    return 0, tuple(map(np.zeros_like, parameters)), tuple(map(np.zeros_like, parameters))


def adam_step(parameters: tuple[np.ndarray, ...], gradients: tuple[np.ndarray, ...], state: AdamState,
              learning_rate: float) -> tuple[tuple[np.ndarray, ...], AdamState]:
    """p - lr * m_hat / (sqrt(v_hat) + eps) as new arrays, so weights interrupted by Ctrl-C stay whole."""
    steps = state[0] + 1
    first = tuple(BETA1 * m + (1 - BETA1) * g for m, g in zip(state[1], gradients))
    second = tuple(BETA2 * v + (1 - BETA2) * g * g for v, g in zip(state[2], gradients))
    bias1, bias2 = 1 - BETA1 ** steps, 1 - BETA2 ** steps
    updated = tuple(p - learning_rate * (m / bias1) / (np.sqrt(v / bias2) + EPSILON)
                    for p, m, v in zip(parameters, first, second))
    return updated, (steps, first, second)
