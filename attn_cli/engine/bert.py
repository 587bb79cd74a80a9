"""A BERT encoder (post-LayerNorm, as all-MiniLM-L6-v2 is) in numpy float64, every step kept to be shown:

    x_1  = LayerNorm(E[token] + P[position] + T[0])                      embed
    y    = concat_h(softmax(q k^T / sqrt(d_head)) v) W_O + b_O          encoder_layer (the engine's attention)
    h    = LayerNorm(x + y); out = LayerNorm(h + gelu(h W_1 + b_1) W_2 + b_2)   finish_layer

Every W is [in, out] (HF's Linear stores [out, in]), so x W reads as the formulas do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from attn_cli.engine.attention import AttentionConfig, AttentionResult, Projections, attend_inputs


@dataclass(frozen=True)
class LayerWeights:
    """One encoder layer's parameters, every matrix [in, out]."""

    attention: Projections  # W_Q, W_K, W_V [d, d] and W_O [d, d] with their biases
    norm_1: tuple[np.ndarray, np.ndarray]  # the attention block's LayerNorm: gain [d], bias [d]
    w_1: np.ndarray  # [d, d_ff]
    b_1: np.ndarray  # [d_ff]
    w_2: np.ndarray  # [d_ff, d]
    b_2: np.ndarray  # [d]
    norm_2: tuple[np.ndarray, np.ndarray]  # the feed-forward block's LayerNorm


@dataclass(frozen=True)
class BertWeights:
    """A BERT encoder: its embedding tables, their LayerNorm, the layers and the shape settings."""

    word_embeddings: np.ndarray  # [V, d]
    position_embeddings: np.ndarray  # [P, d]
    type_embeddings: np.ndarray  # [types, d]
    embedding_norm: tuple[np.ndarray, np.ndarray]
    layers: Sequence[LayerWeights]  # a tuple, or a sequence that makes each layer when first asked for
    heads: int
    eps: float  # LayerNorm's epsilon

    @property
    def dims(self) -> int:
        return int(self.word_embeddings.shape[1])

    @property
    def max_positions(self) -> int:
        return int(self.position_embeddings.shape[0])

    @cached_property
    def added_rows(self) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """The position rows, type 0's row and the embedding LayerNorm in float64 once: the cache maps float32."""
        gain, bias = (np.array(table, dtype=np.float64) for table in self.embedding_norm)
        positions = np.array(self.position_embeddings, dtype=np.float64)
        return positions, np.array(self.type_embeddings[0], dtype=np.float64), (gain, bias)

    def config(self, digest: str) -> AttentionConfig:
        """The engine's settings of every layer (`digest` names the weights)."""
        return AttentionConfig(mode="trained", scale="sqrt", heads=self.heads, d_k=self.dims, output_projection=True,
                               weights_digest=digest)


@dataclass(frozen=True)
class LayerSteps:
    """One encoder layer: its attention block, then the residual and LayerNorm, then the feed-forward block."""

    attention: AttentionResult
    residual: np.ndarray  # [.., n, d]  x + y
    normed: np.ndarray  # [.., n, d]  h = LayerNorm(x + y)
    hidden: np.ndarray  # [.., n, d_ff]  gelu(h W_1 + b_1)
    feed_forward: np.ndarray  # [.., n, d]  hidden W_2 + b_2
    outputs: np.ndarray  # [.., n, d]  LayerNorm(h + feed_forward): the next layer's x


def layer_norm(x: np.ndarray, norm: tuple[np.ndarray, np.ndarray], eps: float) -> np.ndarray:
    """[.., d] -> [.., d]: each row centred, divided by its standard deviation (biased, + eps), then gain and bias."""
    gain, bias = norm
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(variance + eps) * gain + bias


def embed(weights: BertWeights, ids: np.ndarray) -> np.ndarray:
    """Token ids [.., n] -> layer 1's input [.., n, d]: word, learned position and token type 0, summed and normed."""
    positions, type_row, norm = weights.added_rows
    words = weights.word_embeddings[ids].astype(np.float64)  # [.., n, d]
    return layer_norm(words + positions[:ids.shape[-1]] + type_row, norm, weights.eps)  # [.., n, d] + [n, d] + [d]


def encoder_layer(layer: LayerWeights, x: np.ndarray, config: AttentionConfig, eps: float) -> LayerSteps:
    """x [.., n, d] -> the layer's every step, every token seeing every token; `outputs` are the next layer's x."""
    n = x.shape[-2]
    attention = attend_inputs(x, x, config, layer.attention, np.ones((n, n), dtype=bool), self_attention=True)
    return finish_layer(layer, attention, eps)


def finish_layer(layer: LayerWeights, attention: AttentionResult, eps: float) -> LayerSteps:
    """The layer after its attention block: the residual and LayerNorm, then the feed-forward block."""
    x = attention.query_inputs  # [.., n, d]
    residual = x + attention.outputs  # [.., n, d]
    normed = layer_norm(residual, layer.norm_1, eps)  # [.., n, d]
    hidden = gelu(normed @ layer.w_1 + layer.b_1)  # [.., n, d] x [d, d_ff] -> [.., n, d_ff]
    feed_forward = hidden @ layer.w_2 + layer.b_2  # [.., n, d_ff] x [d_ff, d] -> [.., n, d]
    outputs = layer_norm(normed + feed_forward, layer.norm_2, eps)  # [.., n, d]
    return LayerSteps(attention, residual, normed, hidden, feed_forward, outputs)


def encode(weights: BertWeights, ids: np.ndarray, layers: int | None = None,
           digest: str = "") -> tuple[np.ndarray, list[LayerSteps]]:
    """Token ids [.., n] through the first `layers` layers (default: all): layer 1's input and each layer's steps."""
    embedded = embed(weights, ids)
    config = weights.config(digest)
    x, steps = embedded, []
    for layer in weights.layers[:layers]:
        steps.append(encoder_layer(layer, x, config, weights.eps))
        x = steps[-1].outputs
    return embedded, steps


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x) = x/2 (1 + erf(x / sqrt 2)) (not the tanh approximation)."""
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function of every entry, CPython's own: numpy has none, and scipy's import is slow."""
    return np.asarray(_ERF(np.asarray(x, dtype=np.float64)), dtype=np.float64)
