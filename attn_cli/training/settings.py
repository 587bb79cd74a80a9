"""`TrainingSettings`: every choice of a training run, validated in one place.

A bad value raises `SettingsError` naming the keyword, which the command line spells as its option.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attn_cli.engine.adam import AdamSettings
from attn_cli.engine.attention import POSITIONS, AttentionConfig, is_real, is_whole
from attn_cli.errors import SettingsError

LAYER_MASKS = {"none": "others", "causal": "causal"}  # --mask -> the layer's mask: masked word, next word
DEFAULT_SOFTMAX_VOCAB = 50_000
MAX_SENTENCE_WORDS = 200  # longer sentences are skipped: a batch holds B x H x n x n weights


@dataclass(frozen=True)
class TrainingSettings:
    """The layer to learn and how to learn it. Every field has the command line's default."""

    mask: str = "none"  # none: predict each word from the others (masked word); causal: predict the next word
    heads: int = 1
    d_k: int | None = None  # total width of Q, K, V over all heads (default: the vectors' dims)
    positions: str = "none"  # "sinusoidal": add position codes (position_scale "auto") to the frozen inputs
    seed: int = 0  # draws the initial weights (as explain --mode projected --seed) and shuffles the batches
    softmax_vocab: int = DEFAULT_SOFTMAX_VOCAB  # predict among this many most frequent words (all if fewer)
    learning_rate: float = 1e-3
    batch_size: int = 32  # sentences per step
    epochs: int = 3
    max_words: int = MAX_SENTENCE_WORDS  # sentences with more known words are skipped (and counted)

    def __post_init__(self) -> None:
        _check(self.mask in LAYER_MASKS, "mask", f"must be 'none' (masked word) or 'causal' (next word) "
                                                f"(got {self.mask!r})")
        _check(self.positions in POSITIONS, "positions", f"must be one of {', '.join(map(repr, POSITIONS))} "
                                                         f"(got {self.positions!r})")
        _check(is_real(self.learning_rate) and math.isfinite(self.learning_rate) and self.learning_rate > 0,
               "learning_rate", f"must be a finite number > 0, e.g. 0.001 (got {self.learning_rate!r})")
        for name in ("softmax_vocab", "batch_size", "epochs", "max_words"):
            value = getattr(self, name)
            _check(is_whole(value) and value >= 1, name, f"must be a whole number >= 1 (got {value!r})")
        _check(self.max_words >= 2, "max_words", f"must be at least 2: a word is predicted from others "
                                                 f"(got {self.max_words!r})")
        self.attention  # noqa: B018 - the engine validates heads, d_k and seed

    @property
    def layer_mask(self) -> str:
        """The mask the layer runs with: "others" for the masked-word objective, "causal" for next word."""
        return LAYER_MASKS[self.mask]

    @property
    def attention(self) -> AttentionConfig:
        """The layer as the engine runs it: projected with W_O, scale 1/sqrt(d_head), the objective's mask.

        draw_projections(d, attention) gives the initial weights: the seeded random layer that
        `explain --mode projected --output-projection --seed S` shows.
        """
        return AttentionConfig(mode="projected", scale="sqrt", heads=self.heads, d_k=self.d_k, seed=self.seed,
                               mask=self.layer_mask, positions=self.positions, output_projection=True)

    @property
    def adam(self) -> AdamSettings:
        return AdamSettings(learning_rate=float(self.learning_rate))


def _check(condition: bool, setting: str, problem: str) -> None:
    if not condition:
        raise SettingsError(setting, problem)
