"""`Settings`: every choice of a run as Python keywords, declared once (attn_cli.declared) for the engine, the API
and the command line. Settings read no file: a `weights` path is read by the function they are given to."""

from __future__ import annotations

import difflib
import os
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from attn_cli.declared import CHOICE, NAMES, WHOLE, check_declared, declarations, require_count, setting
from attn_cli.documents.explain import INCLUDABLE, ReportOptions
from attn_cli.engine.attention import AttentionConfig, LayerSettings, Projections
from attn_cli.engine.tokenize import DEFAULT_MAX_TOKENS, OOV_POLICIES
from attn_cli.errors import SettingsError, SettingsTypeError

if TYPE_CHECKING:
    from attn_cli.models import Model, PretrainedLayer
    from attn_cli.training.weights import TrainedLayer

MAX_OCCURRENCES = 100_000  # a senses scan keeps them all, with their words and shares (docs/benchmarks.md)
check_max_occurrences = partial(require_count, "max_occurrences")

MAX_NEIGHBORS = 100  # neighbours listed per token: each costs a word and a cosine per token twice, in every format


@dataclass(frozen=True)
class Settings(LayerSettings):
    """How to attend (the engine's LayerSettings) and what to report, with the command line's defaults."""

    oov: str = setting("skip", "Unknown words: skip them (warn), stop, or use zero vectors.", CHOICE,
                       choices=OOV_POLICIES)
    neighbors: int = setting(5, "Nearest vocabulary words shown per token (0: none).", WHOLE, low=0,
                             high=MAX_NEIGHBORS, says=f"0 (off) to {MAX_NEIGHBORS}", metavar="N")
    neighbor_vocab: int | None = setting(50_000, "Search neighbours among the N most frequent words.", WHOLE, low=1,
                                         none="all words", typed_none="all", metavar="N|all")
    max_tokens: int = setting(DEFAULT_MAX_TOKENS, "Refuse longer sentences (memory grows with N squared).", WHOLE,
                              low=1, metavar="N")
    include: tuple[str, ...] = setting((), "Extra matrices in the JSON: " + ", ".join(INCLUDABLE) + ".", NAMES,
                                       choices=INCLUDABLE, metavar="LIST")
    weights: TrainedLayer | str | os.PathLike[str] | None = None  # a layer learned by attn-cli train (trained mode)
    model: Model | str | os.PathLike[str] | None = None  # a pretrained BERT model, its tokens and vocabulary
    layer: int = setting(1, "With --model: the layer inspected (1: the first); its input is what the embeddings "
                            "and the layers below it give.", WHOLE, low=1, metavar="N")
    # the settings a layer set (name, value): replace() carries them, so a new layer or none undoes them
    _adopted: tuple[tuple[str, Any], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.include, str):  # "qkv" or "embeddings,qkv", as --include takes them
            object.__setattr__(self, "include", declarations(self)["include"].typed(self.include))
        elif isinstance(self.include, list):
            object.__setattr__(self, "include", tuple(self.include))
        self._adopt_layer()
        super().__post_init__()  # the engine's checks of the attention settings
        check_declared(self)

    def _adopt_layer(self) -> None:
        """Take the layer's own settings (another value given is an error: weights mean something only as trained),
        first undoing what an earlier layer set, unless changed since (this may be a replace() of one)."""
        defaults = {item.name: item.default for item in fields(self) if item.default is not MISSING}
        for name, value in self._adopted:
            if getattr(self, name) == value:
                object.__setattr__(self, name, defaults[name])
        object.__setattr__(self, "_adopted", ())
        if self.weights_file is not None or self.model_source is not None:
            return  # read, and its settings adopted, by the function these settings are given to
        if self.model is not None and self.weights is not None:
            raise SettingsError("model", "and weights are two layers; give one of them")
        if self.model is None and self.layer != 1:
            raise SettingsError("layer", "applies only to a pretrained model", fix={"model": "minilm"})
        layer = self.layer_weights
        if layer is None:
            if self.mode == "trained":
                raise SettingsError("mode", "'trained' needs the weights of a layer made by attn-cli train",
                                    fix={"weights": "FILE"})
            return
        for name, value in layer.settings().items():
            given = getattr(self, name)
            if given != defaults[name] and given != value:
                raise SettingsError(name, f"cannot be {given!r} with {layer.name}: its learnt weights replace the "
                                          "random ones; leave it out" if name == "mode" else
                                    (f"is fixed by {layer.name} ("
                                     f"{'its own learned positions' if name == 'positions' else repr(value)}); "
                                     "leave it out" if self.model is not None
                                     else f"is fixed by {layer.name}, which was trained with {value!r}; leave it out "
                                     "(or train another layer)"))
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_adopted", tuple(layer.settings().items()))

    @property
    def model_source(self) -> str | os.PathLike[str] | None:
        return self.model if isinstance(self.model, (str, os.PathLike)) else None

    @property
    def weights_file(self) -> str | os.PathLike[str] | None:
        return self.weights if isinstance(self.weights, (str, os.PathLike)) else None

    @cached_property
    def attention(self) -> AttentionConfig:
        """Made and checked once: a batch asks per line."""
        if self.layer_weights is not None:
            return self.layer_weights.config()
        return AttentionConfig(**{name: getattr(self, name) for name in declarations(LayerSettings)})

    @property
    def projections(self) -> Projections | None:
        return None if self.layer_weights is None else self.layer_weights.projections

    @property
    def report(self) -> ReportOptions:
        return ReportOptions(neighbors=self.neighbors, neighbor_vocab=self.neighbor_vocab, include=self.include,
                             layer=self.layer_weights)

    @property
    def layer_weights(self) -> TrainedLayer | PretrainedLayer | None:
        """The layer whose weights attend (of `weights` or `model`), or None; one not read yet is an error."""
        if self.model is not None:
            if self.model_source is not None:
                raise SettingsError("model", f"{os.fspath(self.model_source)!r} is a model these settings have not "
                                             "loaded; pass them to an attn_cli function, which loads it")
            return self.model.layer(self.layer)  # type: ignore[union-attr]
        if self.weights is None:
            return None
        if self.weights_file is not None:
            raise SettingsError("weights", f"{os.fspath(self.weights_file)!r} is a file these settings have not "
                                           "read; pass them to an attn_cli function, which reads it")
        from attn_cli.training.weights import TrainedLayer

        if not isinstance(self.weights, TrainedLayer):
            raise SettingsError("weights", f"must be a weights file (a path) or a TrainedLayer (got "
                                           f"{type(self.weights).__name__})")
        return self.weights

    @classmethod
    def resolve(cls, settings: Settings | None = None, **changes: Any) -> Settings:
        """`settings` (or the defaults) with keyword changes; an unknown keyword names the closest one."""
        if settings is not None and not isinstance(settings, cls):
            raise SettingsTypeError("settings", f"must be an attn_cli.{cls.__name__}, got {type(settings).__name__}")
        names = [item.name for item in fields(cls) if not item.name.startswith("_")]
        for name in changes:
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; choose from {', '.join(names)}"
                raise SettingsError(name, f"is not a setting{hint}")
        return replace(settings or cls(), **changes)
