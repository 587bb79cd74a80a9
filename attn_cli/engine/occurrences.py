"""One word's own rows of attention across many sentences, for `senses`: O(n d) per occurrence instead of O(n^2 d),
by the same `attend_inputs` as `multi_head_attention`, so each row holds the full matrix's numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attn_cli.engine.attention import (AttentionConfig, AttentionResult, Projections, attend_inputs,
                                       layer_projections, position_codes, shift_shares, static_outputs)


@dataclass(frozen=True)
class OccurrenceRows:
    """The attention rows of m occurrences, each over the n keys of its own sentence."""

    outputs: np.ndarray  # [m, d_out]  the word's contextual output, the full matrix's row
    static: np.ndarray  # [m, d_out]  its own value (position code included): the "before" of its shift
    shares: np.ndarray  # [m, n]  each key's share of the shift (the word's own key: ~0)
    attention: AttentionResult  # the rows' pass: arrays led by m, one query each ([m, 1, ...])


def occurrence_rows(embeddings: np.ndarray, sentences: np.ndarray, positions: np.ndarray, config: AttentionConfig,
                    projections: Projections | None = None) -> OccurrenceRows:
    """The rows of the occurrences at `positions` of `sentences` (indices into the stack `embeddings` [B, n, d]),
    each query with its own position code over its whole sentence's keys, as its mask's row allows."""
    x = np.asarray(embeddings, dtype=np.float64)  # [B, n, d]
    codes = position_codes(config, x)
    inputs = x if codes is None else x + codes
    x_q = inputs[sentences, positions][:, None, :]  # [m, 1, d]
    x_k = inputs[sentences]  # [m, n, d]
    visible = row_visibility(config.mask, x[sentences], positions)[:, None, :]  # [m, 1, n]
    layer = layer_projections(x.shape[-1], config, projections)
    result = attend_inputs(x_q, x_k, config, layer, visible, self_attention=False)
    return OccurrenceRows(outputs=result.outputs[:, 0], static=static_outputs(result)[:, 0],
                          shares=shift_shares(result)[:, 0], attention=result)


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
    """The layer over the word alone, without position or mask: what maps vocabulary vectors into the outputs'
    space (`value_space`, the neighbour search) and gives the word's static vector, blind to any context."""
    x = np.asarray(embedding, dtype=np.float64)[None, :]  # [1, d]
    layer = layer_projections(x.shape[-1], config, projections)
    return attend_inputs(x, x, config, layer, np.ones((1, 1), dtype=bool), self_attention=True)
