"""One word's own rows of attention across many sentences, for `senses`: O(n d) per occurrence instead of O(n^2 d),
by the same `attend_inputs` as `multi_head_attention`, so each row holds the full matrix's numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attn_cli.engine.attention import (AttentionConfig, AttentionResult, Projections, affine, attend_inputs,
                                       layer_projections, position_codes, require_visible, scaled_logits,
                                       shift_basis, shift_shares, softmax, split_heads, static_outputs)


@dataclass(frozen=True)
class OccurrenceRows:
    """The attention rows of m occurrences, each over the n keys of its own sentence."""

    outputs: np.ndarray  # [m, d_out]  the word's contextual output, the full matrix's row
    static: np.ndarray  # [m, d_out]  its own value (position code included): the "before" of its shift
    shares: np.ndarray  # [m, n]  each key's share of the shift (the word's own key: ~0)
    weights: np.ndarray  # [m, H, n]  the row's attention weights per head


def occurrence_rows(embeddings: np.ndarray, sentences: np.ndarray, positions: np.ndarray, config: AttentionConfig,
                    projections: Projections | None = None) -> OccurrenceRows:
    """The rows of the occurrences at `positions` of `sentences` (indices into `embeddings` [B, n, d])."""
    x = np.asarray(embeddings, dtype=np.float64)  # [B, n, d]
    codes = position_codes(config, x)
    inputs = x if codes is None else x + codes
    x_q = inputs[sentences, positions][:, None, :]  # [m, 1, d]
    x_k = inputs[sentences]  # [m, n, d]
    visible = row_visibility(config.mask, x[sentences], positions)[:, None, :]  # [m, 1, n]
    layer = layer_projections(x.shape[-1], config, projections)
    if layer is not None and config.similarity == "dot":
        return projected_rows(x_q[:, 0], x_k, config, layer, visible)
    result = attend_inputs(x_q, x_k, config, layer, visible, self_attention=False)
    return OccurrenceRows(outputs=result.outputs[:, 0], static=static_outputs(result)[:, 0],
                          shares=shift_shares(result)[:, 0], weights=result.weights[:, :, 0])


def projected_rows(x_q: np.ndarray, x_k: np.ndarray, config: AttentionConfig, layer: Projections,
                   visible: np.ndarray) -> OccurrenceRows:
    """The rows without any key's K or V: q . k_j = x_j . (W_K q) + q . b_K and sum_j w_j v_j = (sum_j w_j x_j)
    W_V + b_V, O(m n d H) rather than O(m n d d_k); attend_inputs' numbers to rounding."""
    require_visible(visible, config)
    heads = config.heads
    w_k, w_v = split_heads(layer.w_k, heads), split_heads(layer.w_v, heads)  # [H, d, d_head]
    m = len(x_q)
    q = affine(x_q, layer.w_q, layer.b_q).reshape(m, heads, -1)  # [m, H, d_head]
    scores = across(q, w_k, layer.b_k, x_k)  # [m, H, n]
    scale = config.scale_factor(q.shape[-1])
    weights = softmax(scaled_logits(scores, scale / config.temperature, visible))  # [m, H, n]
    mixed = np.swapaxes(weights @ x_k, 0, 1)  # [H, m, d]: sum_j w_j x_j
    bias = 0.0 if layer.b_v is None else layer.b_v.reshape(heads, -1)  # [H, d_head] or none
    head_outputs = np.swapaxes(mixed @ w_v, 0, 1) + bias  # [m, H, d_head]
    outputs = layer.output(head_outputs.reshape(m, -1))  # [m, d_k] -> [m, d_out]
    own = affine(x_q, layer.w_v, layer.b_v)  # [m, d_k]: u_i
    static = layer.output(own)  # [m, d_out]
    z, length, moved = shift_basis(outputs[:, None], static[:, None], own[:, None], weights[:, :, None], x_k, layer)
    z, length, moved = z[:, :, 0], length[:, 0], moved[:, 0]  # [m, H, d_head], [m], [m]: one query each
    kept = np.einsum("mhe,mhe->mh", z, own.reshape(m, heads, -1))  # [m, H]: z_i . u_i
    dots = across(z, w_v, layer.b_v, x_k) - kept[..., None]  # [m, H, n]: z_i . (v_j - u_i)
    shares = np.where(moved[:, None], np.sum(weights * dots, axis=1) / np.where(moved, length, 1.0)[:, None], 0.0)
    return OccurrenceRows(outputs=outputs, static=static, shares=shares + 0.0, weights=weights)


def across(a: np.ndarray, w: np.ndarray, b: np.ndarray | None, x_k: np.ndarray) -> np.ndarray:
    """a_h . (x_j W^h + b^h) for each head h and key j, [m, H, n], without computing x_j W^h."""
    back = np.swapaxes(np.swapaxes(a, 0, 1) @ np.swapaxes(w, -1, -2), 0, 1)  # [m, H, d]
    dots = back @ np.swapaxes(x_k, -1, -2)  # [m, H, n]
    return dots if b is None else dots + np.einsum("mhe,he->mh", a, b.reshape(len(w), -1))[..., None]


def row_visibility(mask: str, sentences: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Row `positions[i]` of `visible_matrix` for each sentence's plain embeddings [m, n, d]: [m, n] bool."""
    m, n = sentences.shape[:2]
    if mask == "causal":
        return np.arange(n)[None, :] <= positions[:, None]
    if mask == "others":
        own = sentences[np.arange(m), positions]  # [m, d]
        return np.any(sentences != own[:, None, :], axis=-1)
    return np.ones((m, n), dtype=bool)


def word_layer(embedding: np.ndarray, config: AttentionConfig, projections: Projections | None = None,
               ) -> AttentionResult:
    """The layer over the word alone, without position or mask: it maps vocabulary into the outputs' space."""
    x = np.asarray(embedding, dtype=np.float64)[None, :]  # [1, d]
    layer = layer_projections(x.shape[-1], config, projections)
    return attend_inputs(x, x, config, layer, np.ones((1, 1), dtype=bool), self_attention=True)
