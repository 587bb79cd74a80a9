"""A demonstration corpus whose right attention pattern is known in advance.

K "cue" words are paired with K "answer" words by a seeded random mapping, so that raw similarity does
not already link them; every sentence holds one cue, its answer and 6 to 10 random filler words, in
random places. Fillers are unpredictable, but the answer is given away by the cue alone (and the cue
by the answer): under the masked-word objective the answer's row should learn to put its weight on the
cue. `cue_weight` measures exactly that, so a test (or a curious user) can see training find the pattern
that raw and random attention do not have.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attn_cli.training.learning import Layer, identity_layer, layer_forward
from attn_cli.errors import VectorsError
from attn_cli.training.batches import Feed
from attn_cli.training.evaluation import projected_layer
from attn_cli.training.trainer import Trainer
from attn_cli.vectors.store import Vectors

COMMON_WORDS = (100, 3_000)  # the demo's words come from this band of frequency ranks: real words, not "the"


@dataclass(frozen=True)
class DemoCorpus:
    lines: list[str]  # one sentence per line, as a corpus file holds them
    answers: dict[str, str]  # cue -> its answer
    cue_rows: frozenset[int]  # rows of the cues in the vector set
    answer_rows: frozenset[int]


def demo_corpus(vectors: Vectors, sentences: int = 2_250, pairs: int = 20, fillers: int = 200,
                seed: int = 0) -> DemoCorpus:
    """Sentences of 6-10 fillers with one cue and its answer, all drawn with default_rng(seed)."""
    rng = np.random.default_rng(seed)
    pool = [row for row in range(*COMMON_WORDS) if row < vectors.count and plain_word(vectors, row)]
    if len(pool) < 2 * pairs + fillers:
        raise VectorsError(f"{vectors.name} has {len(pool)} plain words among its ranks {COMMON_WORDS[0]:,} to "
                           f"{COMMON_WORDS[1]:,}; the demo needs {2 * pairs + fillers}: use a larger vector set")
    chosen = rng.choice(pool, size=2 * pairs + fillers, replace=False)  # distinct rows, in random order
    cues, answers, filler_rows = chosen[:pairs], chosen[pairs:2 * pairs], chosen[2 * pairs:]
    lines = []
    for _ in range(sentences):
        pair = rng.integers(pairs)
        words = list(rng.choice(filler_rows, size=rng.integers(6, 11)))
        for row in (cues[pair], answers[pair]):
            words.insert(rng.integers(len(words) + 1), row)
        lines.append(" ".join(vectors.words[row] for row in words))
    return DemoCorpus(lines, {vectors.words[c]: vectors.words[a] for c, a in zip(cues, answers)},
                      frozenset(int(c) for c in cues), frozenset(int(a) for a in answers))


def plain_word(vectors: Vectors, row: int) -> bool:
    """A lower-case word of letters that reads back as itself (so the corpus's text round-trips to its rows)."""
    word = vectors.words[row]
    return word.isalpha() and word.islower() and len(word) >= 3 and vectors.lookup(word) == (word, row)


def cue_weight(feed: Feed, layer: Layer, sentences: Sequence[np.ndarray], demo: DemoCorpus) -> float:
    """Mean attention weight (heads averaged) from each sentence's answer row onto its cue."""
    weights = []
    for batch in feed.batches(sentences, 64):
        attention = layer_forward(batch.inputs, layer, batch.visible).weights.mean(axis=1)  # [B, n, n]
        for words, rows in zip(batch.words, attention):
            answer = next(i for i, word in enumerate(words) if word in demo.answer_rows)
            cue = next(i for i, word in enumerate(words) if word in demo.cue_rows)
            weights.append(rows[answer, cue])
    return float(np.mean(weights))


def cue_weights(trainer: Trainer, demo: DemoCorpus) -> dict[str, float]:
    """The cue weight of raw attention, the random start and the trained (best) layer on the held-out sentences."""
    feed, held = trainer.feed, trainer.corpus.evaluation
    layers = {"raw": identity_layer(feed.vectors.dims), "random": projected_layer(feed.config, trainer.initial),
              "trained": projected_layer(feed.config, trainer.best.weights)}
    return {name: cue_weight(feed, layer, held, demo) for name, layer in layers.items()}
