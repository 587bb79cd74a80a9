"""Minibatches without padding: sentences of one length stacked into [B, n] words and [B, n, d] inputs, so no
padded key takes weight and one product serves the batch. A seeded generator shuffles the sentences within each
length and the batches' order: the same corpus and seed give the same steps."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from attn_cli.engine.attention import AttentionConfig, position_codes, visible_matrix
from attn_cli.training.learning import prediction_targets
from attn_cli.training.settings import TrainingSettings
from attn_cli.vectors.store import Vectors


@dataclass(frozen=True)
class Batch:
    words: np.ndarray  # [B, n] rows of the vector set
    inputs: np.ndarray  # [B, n, d] float64: their vectors (+ position codes)
    targets: np.ndarray  # [B, n] the vocabulary row each position predicts, NO_TARGET for none
    visible: np.ndarray  # [B, 1, n, n] or [n, n] bool: the keys each query may see (every head alike)


@dataclass(frozen=True)
class Feed:
    """Turns sentences into batches for one vector set and layer; holds the vocabulary E the words are scored on."""

    vectors: Vectors
    config: AttentionConfig
    vocabulary: np.ndarray  # [N, d]: the first softmax_vocab rows of the vector set

    @classmethod
    def build(cls, vectors: Vectors, settings: TrainingSettings, dtype: type = np.float32) -> Feed:
        size = min(settings.softmax_vocab, vectors.count)
        return cls(vectors, settings.attention, vectors.rows(list(range(size))).astype(dtype))

    def batch(self, sentences: Sequence[np.ndarray]) -> Batch:
        """Sentences of one length n -> a Batch."""
        words = np.stack(sentences)  # [B, n]
        inputs = self.vectors.rows(words.ravel().tolist()).reshape(*words.shape, self.vectors.dims)  # [B, n, d]
        codes = position_codes(self.config, inputs)  # exactly as explain adds them to a stack of sentences
        if codes is not None:
            inputs += codes
        return Batch(words, inputs, prediction_targets(words, self.config.mask, len(self.vocabulary)),
                     visible_matrix(self.config.mask, words[:, None, :], words[:, None, :]))  # [B, 1, n, n]

    def batches(self, sentences: Sequence[np.ndarray], size: int,
                rng: np.random.Generator | None = None) -> Iterator[Batch]:
        """All the sentences in batches of at most `size` sentences of one length (shuffled when rng is given)."""
        for indices in length_batches([len(s) for s in sentences], size, rng):
            yield self.batch([sentences[i] for i in indices])


def length_batches(lengths: Sequence[int], size: int, rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """Indices of sentences of equal length, at most `size` per batch; in length order, or shuffled by rng."""
    sizes = np.asarray(lengths)
    order = np.arange(len(sizes)) if rng is None else rng.permutation(len(sizes))
    batches: list[np.ndarray] = []
    for length in np.unique(sizes):
        members = order[sizes[order] == length]  # in `order`'s order
        batches += [members[start:start + size] for start in range(0, len(members), size)]
    if rng is not None:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches
