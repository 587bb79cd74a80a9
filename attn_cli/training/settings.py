"""`TrainingSettings`: every choice of a training run, declared once; a bad value a `SettingsError` naming it."""

from __future__ import annotations

from dataclasses import dataclass

from attn_cli.declared import CHOICE, NUMBER, WHOLE, check_declared, setting, setting_like
from attn_cli.engine.attention import AttentionConfig, LayerSettings

LAYER_MASKS = {"none": "others", "causal": "causal"}  # --mask -> the layer's mask: masked word, next word
DEFAULT_SOFTMAX_VOCAB = 50_000
MAX_SENTENCE_WORDS = 200  # longer sentences are skipped: a batch holds B x H x n x n weights
MAX_CORPUS_SENTENCES = 1_000_000  # a corpus is held in memory: 0.3 GB of 10-word sentences, 1.7 GB of 198-word ones


@dataclass(frozen=True)
class TrainingSettings:
    """The layer to learn and how to learn it, with the command line's defaults."""

    mask: str = setting("none", "none: predict each word from the others. causal: predict the next word.", CHOICE,
                        choices=tuple(LAYER_MASKS), says="'none' (masked word) or 'causal' (next word)")
    heads: int = setting_like(LayerSettings, "heads", help="Number of heads.")
    d_k: int | None = setting_like(LayerSettings, "d_k", help="Total width of Q, K, V (default: d).")
    positions: str = setting_like(LayerSettings, "positions", help="Add sinusoidal position encodings to the inputs.")
    seed: int = setting_like(LayerSettings, "seed", help="Seed of the initial weights and of the shuffling.")
    softmax_vocab: int = setting(DEFAULT_SOFTMAX_VOCAB, "Predict among the N most frequent words (all if fewer).",
                                 WHOLE, low=1, metavar="N")
    learning_rate: float = setting(1e-3, "Adam's step size.", NUMBER, low=0, low_open=True, example="0.001",
                                   metavar="R")
    batch_size: int = setting(32, "Sentences per step.", WHOLE, low=1, metavar="N")
    epochs: int = setting(3, "Passes over the corpus.", WHOLE, low=1, metavar="N")
    max_words: int = setting(MAX_SENTENCE_WORDS, "Skip sentences with more known words (and count them); at least 2, "
                                                 "as a word is predicted from others.", WHOLE, low=2, metavar="N")
    max_sentences: int = setting(MAX_CORPUS_SENTENCES, "Refuse a corpus of more sentences (non-blank lines): a stream "
                                                       "that never ends stops here.", WHOLE, low=1, metavar="N")

    def __post_init__(self) -> None:
        check_declared(self)
        self.attention  # noqa: B018 - the engine checks what its layer cannot take together

    @property
    def attention(self) -> AttentionConfig:
        """Projected with W_O, scale 1/sqrt(d_head): draw_projections(d, attention) is the seeded start that
        `explain --mode projected --output-projection` shows."""
        return AttentionConfig(mode="projected", scale="sqrt", heads=self.heads, d_k=self.d_k, seed=self.seed,
                               mask=LAYER_MASKS[self.mask], positions=self.positions, output_projection=True)


# Small batches (more steps) and the top 3,000 words (all the demo's) as the vocabulary.
DEMO_SETTINGS = TrainingSettings(learning_rate=1e-2, batch_size=8, epochs=3, softmax_vocab=3_000)
