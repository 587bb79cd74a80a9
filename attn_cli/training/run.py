"""One training run from text to a `TrainedLayer` with its provenance: no timings in it, so the same inputs, seed
and number of BLAS threads give the same file (docs/train.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

from attn_cli.errors import InputError, SettingsError, memory_named
from attn_cli.training.corpus import Corpus, read_corpus
from attn_cli.training.demo import DemoCorpus, sense_leads
from attn_cli.training.settings import TrainingSettings
from attn_cli.training.trainer import Evaluation, Progress, Trainer
from attn_cli.training.weights import LAYER_KEYS, TrainedLayer
from attn_cli.vectors.store import Vectors
from attn_cli.vectors import DEFAULT_NAME
from attn_cli.version import __version__

# An accuracy over m predictions is uncertain by up to 0.98 / sqrt(m) either way (95%): 10 points at 100.
MIN_PREDICTIONS = 100
OBJECTIVE_NAMES = {"others": "masked-word", "causal": "next-word"}  # the layer's mask -> what a position predicts


@dataclass(frozen=True)
class TrainingRun:
    """A finished (or interrupted) run: the layer to save, and the held-out table to show."""

    layer: TrainedLayer  # the best weights (lowest validation loss)
    evaluation: Evaluation  # raw attention, the random start and the trained layer on the held-out sentences
    corpus: Corpus
    trainer: Trainer
    demo: dict | None = None  # the demo's topics and the sense leads of the three layers (demo only)

    @property
    def warnings(self) -> list[dict]:
        """A warning when the held-out table rests on too few predictions to rank its rows."""
        predictions = self.evaluation.trained.predictions
        if predictions >= MIN_PREDICTIONS:
            return []
        return [{"code": "small_held_out", "predictions": predictions, "minimum": MIN_PREDICTIONS,
                 "message": f"the held-out table rests on {predictions:,} predictions, fewer than {MIN_PREDICTIONS}: "
                            f"its accuracies are uncertain by up to ±{98 / max(predictions, 1) ** 0.5:.0f} points "
                            "and its rows may rank by chance; train on more sentences (a tenth of them is held out)"}]

    def __repr__(self) -> str:
        trained = self.evaluation.trained
        return (f"<TrainingRun best epoch {self.trainer.best.epoch} of {len(self.trainer.history) - 1}, "
                f"held-out loss {trained.loss:.3f}, {len(self.corpus.training):,} training sentences>")


class Training:
    """A run made ready, the corpus read and checked: on Ctrl-C in `run`, `result()` keeps the best weights so far."""

    def __init__(self, lines: Iterable[str], vectors: Vectors, settings: TrainingSettings, corpus_name: str,
                 demo: DemoCorpus | None = None) -> None:
        self.vectors, self.corpus_name, self.demo = vectors, corpus_name, demo
        self.corpus = read_corpus(lines, vectors, settings.max_words, settings.max_sentences, corpus_name)
        self.trainer = Trainer(vectors, self.corpus, settings)

    @property
    def skipped(self) -> str:
        """Which sentences training leaves out and why, as one message ('' when none)."""
        corpus = self.corpus
        reasons = [f"{count:,} with {why}" for count, why in (
            (corpus.short, "fewer than 2 different known words"),
            (corpus.long, f"more than {self.trainer.settings.max_words:,} known words")) if count]
        return f"skipped {corpus.short + corpus.long:,} of {corpus.lines:,} sentences: {', '.join(reasons)}" \
            if reasons else ""

    @property
    def best_epoch(self) -> int:
        """The best weights' epoch so far (0: the random start)."""
        return self.trainer.best.epoch

    @property
    def epochs_done(self) -> int:
        """Epochs ended, their validation check done."""
        return max(len(self.trainer.history) - 1, 0)

    def run(self, progress: Callable[[Progress], None] | None = None) -> TrainingRun:
        """Train, then evaluate; running out of memory names --batch-size, which sets how much a step holds."""
        size = self.trainer.settings.batch_size
        with memory_named(lambda: SettingsError("batch_size", f"({size}) asks for more memory than is left for a "
                                                "step's attention weights and word scores; lower it")):
            self.trainer.run(progress)
            return self.result()

    def result(self) -> TrainingRun:
        """Evaluate the best weights so far and give them provenance."""
        trainer = self.trainer
        if not trainer.history:
            raise InputError("training stopped before the initial weights were scored: nothing to evaluate or keep")
        evaluation = trainer.evaluate()
        demo = None if self.demo is None else {
            "topics": {topic: words[:4] for topic, words in self.demo.topics.items()},
            "sense_lead": sense_leads(trainer)}
        return TrainingRun(layer_of(trainer, self.vectors, self.corpus_name, evaluation), evaluation, trainer.corpus,
                           trainer, demo)


def layer_of(trainer: Trainer, vectors: Vectors, corpus_name: str, evaluation: Evaluation) -> TrainedLayer:
    config, corpus, settings = trainer.feed.config, trainer.corpus, trainer.settings
    layer = {"objective": OBJECTIVE_NAMES[config.mask], "heads": config.heads, "d_k": config.width(vectors.dims),
             **{name: getattr(config, name) for name in LAYER_KEYS[3:]}}  # mask, positions, ... temperature
    history = [{"epoch": report.epoch, "training_loss": report.training_loss,
                "validation_loss": report.validation.loss} for report in trainer.history]
    provenance = {
        "vectors": {"name": vectors.name, "fingerprint": vectors.fingerprint, "count": vectors.count,
                    "dims": vectors.dims, "default": vectors.name.startswith(f"{DEFAULT_NAME} ("),
                    "limit": vectors.details.get("limit")},
        "corpus": {"name": corpus_name, "fingerprint": corpus.fingerprint, "sentences": corpus.lines,
                   "train_sentences": len(corpus.training),
                   "validation_sentences": len(corpus.validation), "held_out_sentences": len(corpus.evaluation),
                   "skipped_short": corpus.short, "skipped_long": corpus.long, "unknown_words": corpus.unknown,
                   "words": corpus.words},
        "training": {"epochs": len(trainer.history) - 1, "epochs_asked": settings.epochs,
                     "best_epoch": trainer.best.epoch, "interrupted": trainer.interrupted,
                     "batch_size": settings.batch_size, "learning_rate": settings.learning_rate,
                     "softmax_vocab": len(trainer.feed.vocabulary),
                     "validation_loss": trainer.best.validation_loss,  # what chose best_epoch
                     "held_out_loss": evaluation.trained.loss,  # the chosen weights on sentences never used to choose
                     "history": history},
        "evaluation": [{"layer": name, **asdict(getattr(evaluation, name))} for name in ("raw", "random", "trained")],
        "attn_cli_version": __version__,
    }
    return TrainedLayer(projections=trainer.best.weights, layer=layer, provenance=provenance)
