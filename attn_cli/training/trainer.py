"""The training loop: shuffled minibatches, Adam, the best weights by validation; steps replace whole weight sets,
so after Ctrl-C both the best and the latest are complete."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from attn_cli.engine.attention import AttentionConfig, Projections, draw_projections, position_codes, visible_matrix
from attn_cli.errors import InputError, Option
from attn_cli.training.corpus import Corpus
from attn_cli.training.learning import (NO_TARGET, Layer, adam_start, adam_step, batch_loss, cross_entropy,
                                        layer_forward, parameters, prediction_targets, score_blocks)
from attn_cli.training.settings import TrainingSettings
from attn_cli.vectors.store import Vectors

EVALUATION_BATCH = 64  # sentences per forward pass


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


@dataclass(frozen=True)
class Batch:
    words: np.ndarray  # [B, n] rows of the vector set
    inputs: np.ndarray  # [B, n, d] float64: their vectors (+ position codes)
    targets: np.ndarray  # [B, n] the vocabulary row each position predicts, NO_TARGET for none
    visible: np.ndarray  # [B, 1, n, n] or [n, n] bool: the keys each query may see (every head alike)


@dataclass(frozen=True)
class Feed:
    """Sentences of one length stacked into batches (no padding, one product per batch), and the vocabulary E."""

    vectors: Vectors
    config: AttentionConfig
    vocabulary: np.ndarray  # [N, d]: the first softmax_vocab rows of the vector set

    @classmethod
    def build(cls, vectors: Vectors, settings: TrainingSettings, dtype: type = np.float32) -> Feed:
        size = min(settings.softmax_vocab, vectors.count)
        return cls(vectors, settings.attention, vectors.rows(list(range(size))).astype(dtype))

    def batch(self, sentences: Sequence[np.ndarray]) -> Batch:
        words = np.stack(sentences)  # [B, n]
        inputs = self.vectors.rows(words.ravel().tolist()).reshape(*words.shape, self.vectors.dims)  # [B, n, d]
        codes = position_codes(self.config, inputs)
        if codes is not None:
            inputs += codes
        return Batch(words, inputs, prediction_targets(words, self.config.mask, len(self.vocabulary)),
                     visible_matrix(self.config.mask, words[:, None, :], words[:, None, :]))  # [B, 1, n, n]

    def batches(self, sentences: Sequence[np.ndarray], size: int,
                rng: np.random.Generator | None = None) -> Iterator[Batch]:
        for indices in length_batches([len(s) for s in sentences], size, rng):
            yield self.batch([sentences[i] for i in indices])


def length_batches(lengths: Sequence[int], size: int, rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """Indices of equal-length sentences, `size` at most a batch; in length order, or shuffled by a seeded rng."""
    sizes = np.asarray(lengths)
    order = np.arange(len(sizes)) if rng is None else rng.permutation(len(sizes))
    batches: list[np.ndarray] = []
    for length in np.unique(sizes):
        members = order[sizes[order] == length]  # in `order`'s order
        batches += [members[start:start + size] for start in range(0, len(members), size)]
    if rng is not None:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def projected_layer(config: AttentionConfig, projections: Projections) -> Layer:
    d_head = projections.w_q.shape[1] // config.heads
    return Layer(projections, config.heads, config.scale_factor(d_head))


def score_layer(feed: Feed, layer: Layer, sentences: Sequence[np.ndarray]) -> LayerScore:
    """Loss and accuracy@k (fewer than k words score above the target) over the sentences' predictions."""
    losses, ranks = [], []
    for batch in feed.batches(sentences, EVALUATION_BATCH):
        chosen = batch.targets != NO_TARGET  # [B, n]
        outputs, targets = layer_forward(batch.inputs, layer, batch.visible).outputs[chosen], batch.targets[chosen]
        for block, logits in score_blocks(outputs, feed.vocabulary):  # [p, N]
            wanted = targets[block]
            ranks.append(np.count_nonzero(logits > logits[np.arange(len(wanted)), wanted][:, None], axis=1))
            losses.append(cross_entropy(logits, wanted)[0])
    if not losses:
        return LayerScore(float("nan"), float("nan"), float("nan"), 0)
    loss, rank = np.concatenate(losses), np.concatenate(ranks)
    return LayerScore(float(loss.mean()), float(np.mean(rank < 1)), float(np.mean(rank < 10)), len(loss))


@dataclass(frozen=True)
class EpochReport:
    epoch: int  # 0: the initial weights, before any step
    training_loss: float | None  # mean over the epoch's predictions (None for epoch 0)
    validation: LayerScore
    seconds: float  # wall time of the epoch's steps, the validation check left out (0.0 for epoch 0)


@dataclass(frozen=True)
class Checkpoint:
    epoch: int
    weights: Projections
    validation_loss: float


@dataclass(frozen=True)
class Progress:  # what the callback hears after every step, and once more when an epoch's check is done
    epoch: int  # 1-based
    epochs: int
    sentences: int  # trained on so far, over all epochs
    total: int  # training sentences x epochs
    loss: float  # running mean loss of this epoch's predictions so far
    epoch_done: EpochReport | None = None  # set on the call that closes an epoch


class Trainer:
    """`run` once, then read `best` and `latest`."""

    def __init__(self, vectors: Vectors, corpus: Corpus, settings: TrainingSettings = TrainingSettings()) -> None:
        settings.attention.check_width(vectors.dims)
        self.settings = settings
        self.corpus = corpus
        self.feed = Feed.build(vectors, settings)
        self.initial = draw_projections(vectors.dims, settings.attention)
        self.latest = self.initial
        self.history: list[EpochReport] = []
        self.best = Checkpoint(0, self.initial, float("inf"))
        self.interrupted = False
        self._started = False
        self._rng = np.random.default_rng(settings.seed)

    def run(self, progress: Callable[[Progress], None] | None = None) -> Checkpoint:
        """Train every epoch; a KeyboardInterrupt propagates, the trainer kept usable."""
        if self._started:
            raise RuntimeError("a Trainer runs once: make a new one to train again")
        self._started = True
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # vectors too large to score are told below
                first = self._check(0, None, 0.0).validation
            if not first.predictions:
                raise InputError("the validation sentences hold no word among the ", Option("softmax_vocab"),
                                 f" ({len(self.feed.vocabulary):,}) most frequent words, so nothing can be scored; "
                                 "raise it or add sentences")
            if not np.isfinite(first.loss):
                raise self._too_large()
            done, adam = 0, adam_start(parameters(self.initial))
            for epoch in range(1, self.settings.epochs + 1):
                loss_sum, predictions, start = 0.0, 0, time.perf_counter()
                for batch in self.feed.batches(self.corpus.training, self.settings.batch_size, self._rng):
                    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run is told below, once
                        result = batch_loss(batch.inputs, batch.targets,
                                            projected_layer(self.feed.config, self.latest), batch.visible,
                                            self.feed.vocabulary)
                    if not np.isfinite(result.loss):
                        raise InputError("training diverged: the loss is no longer a finite number; lower ",
                                         Option("learning_rate"), f" (now {self.settings.learning_rate:g})")
                    if result.predictions:
                        updated, adam = adam_step(parameters(self.latest), parameters(result.gradients), adam,
                                                  float(self.settings.learning_rate))
                        self.latest = Projections(*updated)
                    loss_sum += result.loss * result.predictions
                    predictions += result.predictions
                    done += len(batch.words)
                    if progress is not None:
                        progress(self._progress(epoch, done, loss_sum / max(predictions, 1)))
                report = self._check(epoch, loss_sum / max(predictions, 1), time.perf_counter() - start)
                if progress is not None:
                    progress(self._progress(epoch, done, report.training_loss or 0.0, report))
        except KeyboardInterrupt:
            self.interrupted = True
            raise
        return self.best

    def layers(self) -> dict[str, Layer]:
        """Raw attention (Q = K = V = X), the random start and the best layer so far, as the table names them."""
        config, eye = self.feed.config, np.eye(self.feed.vectors.dims)  # raw: Q = K = V = X, no scale, no W_O
        return {"raw": Layer(Projections(eye, eye, eye, None), 1, 1.0), "random": projected_layer(config, self.initial),
                "trained": projected_layer(config, self.best.weights)}

    def evaluate(self) -> Evaluation:
        return Evaluation(**{name: score_layer(self.feed, layer, self.corpus.evaluation)
                             for name, layer in self.layers().items()})

    def _check(self, epoch: int, training_loss: float | None, seconds: float) -> EpochReport:
        weights = self.latest
        score = score_layer(self.feed, projected_layer(self.feed.config, weights), self.corpus.validation)
        report = EpochReport(epoch, training_loss, score, seconds)
        self.history.append(report)
        if score.loss < self.best.validation_loss:
            self.best = Checkpoint(epoch, weights, score.loss)
        return report

    def _too_large(self) -> InputError:
        # Scores that overflow before any step: no learning rate helps, the vectors' size does.
        vocabulary = self.feed.vocabulary
        norms = np.sqrt(np.einsum("ij,ij->i", vocabulary, vocabulary, dtype=np.float64))  # float32 would overflow
        largest = int(np.argmax(norms))
        return InputError(f"the vectors are too large to train on: the largest norm among the words scored is "
                          f"{norms[largest]:.3g} ({self.feed.vectors.words[largest]!r}), so "
                          "their scores overflow before any step whatever the learning rate; rescale the vectors "
                          "(to unit length, say) and train again")

    def _progress(self, epoch: int, done: int, loss: float, report: EpochReport | None = None) -> Progress:
        return Progress(epoch, self.settings.epochs, done, len(self.corpus.training) * self.settings.epochs, loss,
                        report)

