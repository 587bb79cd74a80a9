"""`Settings`: every choice of a run as Python keywords, validated in one place.

The library takes them as keyword arguments (`attn_cli.explain(s, heads=4)`) or
as one object (`settings=Settings(heads=4)`); the command line builds the same
object from its options. A bad value raises `SettingsError` (a ValueError) that
names the keyword, so the message reads as Python in Python and as options on
the command line.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal, Union

from attn_cli.documents.explain import INCLUDABLE, ReportOptions
from attn_cli.engine.attention import MODES, AttentionConfig, is_whole
from attn_cli.engine.tokenize import DEFAULT_MAX_TOKENS, OOV_POLICIES
from attn_cli.errors import SettingsError

if TYPE_CHECKING:
    from attn_cli.training.weights import TrainedLayer

MAX_NEIGHBORS = 100  # neighbours listed per token: each costs a word and a cosine per token twice, in every format

Scale = Union[Literal["none", "sqrt"], float]
PositionScale = Union[Literal["auto"], float]


@dataclass(frozen=True)
class Settings:
    """How to attend and what to report. Every field has the command line's default."""

    mode: Literal["raw", "projected", "trained"] = "raw"  # raw: Q = K = V = X; projected: seeded random W_Q, W_K,
    # W_V; trained: the learned ones of `weights`
    scale: Scale = "none"  # multiply scores by 1, by 1/sqrt(d_head), or by a number >= 0
    temperature: float = 1.0  # divide the scaled scores by this (> 0)
    similarity: Literal["dot", "cosine"] = "dot"
    heads: int = 1
    d_k: int | None = None  # projected mode: total width of Q, K, V (default: the vectors' dims)
    seed: int = 0  # projected mode: numpy.random.default_rng(seed) draws W
    mask: Literal["none", "causal", "others"] = "none"  # others: each word sees every word but itself
    positions: Literal["none", "sinusoidal"] = "none"
    position_scale: PositionScale = "auto"  # codes as long as each word ("auto") or times a number >= 0
    output_projection: bool = False  # projected mode: map the concatenated heads back with W_O
    oov: Literal["skip", "error", "zero"] = "skip"  # unknown words: leave out, stop, or use a zero vector
    max_tokens: int = DEFAULT_MAX_TOKENS
    neighbors: int = 5  # nearest vocabulary words per token before and after (0: none)
    neighbor_vocab: int | None = 50_000  # search among this many most frequent words (None: all)
    include: tuple[str, ...] = ()  # extra matrices in to_dict(): documents.explain.INCLUDABLE
    weights: TrainedLayer | str | os.PathLike[str] | None = None  # a layer from `attn-cli train` (or its file)
    # the settings a layer set (name, value): replace() carries them, so a new layer or none undoes them
    _adopted: tuple[tuple[str, Any], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.include, str):  # "qkv" or "embeddings,qkv", as --include takes them
            object.__setattr__(self, "include", tuple(name.strip() for name in self.include.split(",") if name.strip()))
        object.__setattr__(self, "include", tuple(self.include))
        self._adopt_layer()
        self.attention  # noqa: B018 - building the engine's configuration validates the attention settings
        _check(self.oov in OOV_POLICIES, "oov", f"must be one of {', '.join(map(repr, OOV_POLICIES))} "
                                                f"(got {self.oov!r})")
        _check(is_whole(self.max_tokens) and self.max_tokens >= 1, "max_tokens",
               f"must be at least 1 (got {self.max_tokens!r})")
        _check(is_whole(self.neighbors) and 0 <= self.neighbors <= MAX_NEIGHBORS, "neighbors",
               f"must be 0 (off) to {MAX_NEIGHBORS} (got {self.neighbors!r})")
        _check(self.neighbor_vocab is None or (is_whole(self.neighbor_vocab) and self.neighbor_vocab >= 1),
               "neighbor_vocab",
               f"must be a positive whole number, or None for all words (got {self.neighbor_vocab!r})")
        unknown = [name for name in self.include if name not in INCLUDABLE]
        _check(not unknown, "include", f"got unknown {', '.join(unknown)}; choose from {', '.join(INCLUDABLE)}")

    def _adopt_layer(self) -> None:
        """With `weights`, the layer's own settings: a file path is read, and a setting given another value
        than the layer was trained with is an error (the weights only mean something as they were trained).
        A setting left at its default takes the layer's value. What an earlier layer set (this object may be
        a replace() of one with other weights, or none) is undone first, unless it was changed since."""
        defaults = {item.name: item.default for item in fields(self) if item.default is not MISSING}
        for name, value in self._adopted:
            if getattr(self, name) == value:
                object.__setattr__(self, name, defaults[name])
        object.__setattr__(self, "_adopted", ())
        if self.weights is None:
            if self.mode == "trained":
                raise SettingsError("mode", "'trained' needs the weights of a layer made by attn-cli train",
                                    fix={"weights": "FILE"})
            _check(self.mode in MODES, "mode", f"must be one of {', '.join(map(repr, MODES))} (got {self.mode!r})")
            return
        from attn_cli.training.weights import TrainedLayer, load_layer

        if not isinstance(self.weights, (TrainedLayer, str, os.PathLike)):
            raise SettingsError("weights", f"must be a weights file (a path) or a TrainedLayer (got "
                                           f"{type(self.weights).__name__})")
        layer = self.weights if isinstance(self.weights, TrainedLayer) else load_layer(self.weights)
        object.__setattr__(self, "weights", layer)
        for name, value in layer.settings().items():
            given = getattr(self, name)
            if given != defaults[name] and given != value:
                raise SettingsError(name, f"cannot be {given!r} with {layer.name}: its learnt weights replace the "
                                          "random ones; leave it out" if name == "mode" else
                                    f"is fixed by {layer.name}, which was trained with {value!r}; leave it out "
                                    "(or train another layer)")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_adopted", tuple(layer.settings().items()))

    @property
    def attention(self) -> AttentionConfig:
        """The engine's configuration of the attention layer."""
        if self.layer is not None:
            return self.layer.config()
        return AttentionConfig(mode=self.mode, scale=self.scale, temperature=self.temperature,
                               similarity=self.similarity, heads=self.heads, d_k=self.d_k, seed=self.seed,
                               mask=self.mask, positions=self.positions, position_scale=self.position_scale,
                               output_projection=self.output_projection)

    @property
    def report(self) -> ReportOptions:
        """What the documents hold beyond the attention: neighbours and opt-in matrices."""
        return ReportOptions(neighbors=self.neighbors, neighbor_vocab=self.neighbor_vocab, include=self.include,
                             layer=self.layer)

    @property
    def layer(self) -> TrainedLayer | None:
        """The trained layer of `weights` (a path given there was read on construction)."""
        return self.weights  # type: ignore[return-value]  # __post_init__ turned a path into its layer

    @classmethod
    def resolve(cls, settings: Settings | None = None, **changes: Any) -> Settings:
        """`settings` (or the defaults) with keyword changes; an unknown keyword names the closest one."""
        names = [item.name for item in fields(cls) if not item.name.startswith("_")]
        for name in changes:
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; choose from {', '.join(names)}"
                raise SettingsError(name, f"is not a setting{hint}")
        return replace(settings or cls(), **changes)


def _check(condition: bool, setting: str, problem: str) -> None:
    if not condition:
        raise SettingsError(setting, problem)
