"""The options every command shares, declared once and validated in one place.

`with_engine_options` appends them to a command's signature (Typer reads
`__signature__`) and hands the command a single `EngineOptions`, so `explain`,
`compare` and `trace` cannot drift apart in names, defaults or help.
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
import os
import typing
from dataclasses import dataclass, fields
from enum import Enum
from pathlib import Path
from typing import Annotated, Callable, Optional, cast

import typer
from typer.core import TyperCommand

from attn_cli.engine.attention import MASKS, MODES, POSITIONS, SIMILARITIES
from attn_cli.errors import SettingsError, UsageError
from attn_cli.settings import PositionScale, Scale, Settings
from attn_cli.vectors.store import Vectors
from attn_cli.cli.inputs import INPUT_FORMATS
from attn_cli.engine.tokenize import DEFAULT_MAX_TOKENS, OOV_POLICIES
from attn_cli.vectors.formats import FORMATS

ENGINE_PANEL = "Attention"
OUTPUT_PANEL = "Vectors and output"
BATCH_PANEL = "Batches and pipes"
HELP_PANEL = "Help"
LIST_FIELDS = "list"  # what a bare --fields stands for


def examples(*lines: str) -> str:
    """A help screen's epilog: its examples, one a line (tests/test_cli_help.py runs each)."""
    return "\n\n".join(["Examples:", *lines])


def _no_metavar(*args, **kwargs) -> str:
    return ""


class HelpInOrder(TyperCommand):
    """A command whose help shows its arguments, the attention options, its own, the rest, then --help.

    The arguments show their metavar only (SENTENCE...), one placeholder style with the options'."""

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for param in params:  # an argument shows its metavar only (SENTENCE...), not also its type (<str>)
            if param.param_type_name == "argument" and vars(param.type).get("get_metavar") is not _no_metavar:
                param.type = copy.copy(param.type)  # the type may be shared (click's STRING): change a copy
                param.type.get_metavar = _no_metavar  # type: ignore[method-assign]
        help_option = self.get_help_option(ctx)
        if help_option is not None and any(getattr(param, "rich_help_panel", None) for param in params):
            help_option.rich_help_panel = HELP_PANEL
        order = {ENGINE_PANEL: 1, OUTPUT_PANEL: 3, BATCH_PANEL: 4, HELP_PANEL: 5}  # a command's own panel: 2

        def rank(param) -> int:
            if param.param_type_name == "argument":
                return 0
            return order.get(getattr(param, "rich_help_panel", None) or "", 2)

        return sorted(params, key=rank)


def _choices(name: str, values: tuple[str, ...]) -> type[Enum]:
    """A str Enum for Typer, built from the library's own tuple of accepted values."""
    # the functional Enum API builds a class; mypy types the call as an instance when the name is not a literal
    return Enum(name, {value: value for value in values}, type=str)  # type: ignore[return-value]


if typing.TYPE_CHECKING:  # mypy cannot see the members of Enums built at run time: to it each is a str Enum
    class _Choice(str, Enum):
        pass

    Mode: typing.TypeAlias = _Choice
    Similarity: typing.TypeAlias = _Choice
    Mask: typing.TypeAlias = _Choice
    Positions: typing.TypeAlias = _Choice
    OovPolicy: typing.TypeAlias = _Choice
    InputFormat: typing.TypeAlias = _Choice
    VectorFormat: typing.TypeAlias = _Choice
else:
    Mode = _choices("Mode", MODES)
    Similarity = _choices("Similarity", SIMILARITIES)
    Mask = _choices("Mask", MASKS)
    Positions = _choices("Positions", POSITIONS)
    OovPolicy = _choices("OovPolicy", OOV_POLICIES)
    InputFormat = _choices("InputFormat", INPUT_FORMATS)
    VectorFormat = _choices("VectorFormat", FORMATS)


@dataclass(frozen=True)
class EngineOptions:
    """What the user asked for, before validation turns it into an AttentionConfig."""

    mode: Mode = Mode("raw")
    scale: str = "none"
    temperature: float = 1.0
    similarity: Similarity = Similarity("dot")
    heads: int = 1
    d_k: Optional[int] = None
    seed: int = 0
    mask: Mask = Mask("none")
    positions: Positions = Positions("none")
    position_scale: str = "auto"
    output_projection: bool = False
    weights: Optional[Path] = None
    vectors: Optional[str] = None
    format: Optional[VectorFormat] = None
    limit: Optional[int] = None
    skip_bad_lines: bool = False
    trust_pickle: bool = False
    oov: OovPolicy = OovPolicy("skip")
    neighbors: int = 5
    neighbor_vocab: str = "50000"
    max_tokens: int = DEFAULT_MAX_TOKENS
    json: bool = False
    include: str = ""
    html: Optional[Path] = None
    svg: Optional[Path] = None

    def settings(self) -> Settings:
        """The library's settings these options stand for (a bad value raises SettingsError, exit 2)."""
        if self.include and not self.json:
            raise UsageError("--include adds matrices to the JSON output; add --json")
        return Settings(
            mode=self.mode.value, scale=parse_scale(self.scale), temperature=self.temperature,
            similarity=self.similarity.value, heads=self.heads, d_k=self.d_k, seed=self.seed,
            mask=self.mask.value, positions=self.positions.value,
            position_scale=parse_position_scale(self.position_scale), output_projection=self.output_projection,
            oov=self.oov.value, max_tokens=self.max_tokens, neighbors=self.neighbors,
            neighbor_vocab=parse_neighbor_vocab(self.neighbor_vocab),
            include=tuple(name.strip() for name in self.include.split(",") if name.strip()),
            weights=self.weights,
        )

    def load_vectors(self, warn: Callable[[str], None]) -> Vectors:
        """The vectors --vectors names (the embedded set by default); a bar while importing, not with --json."""
        return VectorOptions(self.vectors, self.format, self.limit, self.skip_bad_lines,
                             self.trust_pickle).load(warn, progress=not self.json)

    def picture_files(self, file: Path | None = None, stdin: bool = False) -> dict[str, Path]:
        """--html and --svg targets, checked before any work: the folder must exist, the two must differ, and
        neither may be an input (the --file sentences, a file on stdin read as `-`, or the --vectors file,
        however it is reached)."""
        targets = {flag: path for flag, path in (("--html", self.html), ("--svg", self.svg)) if path is not None}
        inputs = {flag: Path(path) for flag, path in (("--file", file), ("stdin", "/dev/stdin" if stdin else None),
                                                      ("--vectors", self.vectors), ("--weights", self.weights))
                  if path}
        for flag, path in targets.items():
            if path.is_dir():
                raise UsageError(f"{flag} {path} is a directory; give a file name, e.g. {flag} report.{flag[2:]}")
            if not path.parent.is_dir():
                raise UsageError(f"{flag} {path}: folder {path.parent} does not exist; create it or pick another")
            for source, input_path in inputs.items():
                if same_regular_file(path, input_path):
                    raise UsageError(f"{flag} {path} is the {source} input; writing it would replace it, so give "
                                     f"{flag} another file name")
        if len(targets) == 2 and targets["--html"].resolve() == targets["--svg"].resolve():
            raise UsageError("--html and --svg name the same file; give each its own")
        return targets


@dataclass(frozen=True)
class VectorOptions:
    """Where the vectors come from: what `train` shares with the attention commands."""

    vectors: Optional[str] = None
    format: Optional[VectorFormat] = None
    limit: Optional[int] = None
    skip_bad_lines: bool = False
    trust_pickle: bool = False

    def load(self, warn: Callable[[str], None], progress: bool) -> Vectors:
        """The vectors --vectors names (the embedded set by default), with a bar while a file is imported."""
        from attn_cli.api import load_vectors

        return load_vectors(self.vectors, limit=self.limit, format=self.format.value if self.format else None,
                            skip_bad_lines=self.skip_bad_lines, trust_pickle=self.trust_pickle, progress=progress,
                            warn=warn)


def same_regular_file(one: Path, other: Path) -> bool:
    """Whether two paths reach one existing regular file (through links too); a device such as /dev/stdout
    may be both read and written."""
    try:
        return one.is_file() and other.is_file() and os.path.samefile(one, other)
    except OSError:
        return False


def parse_scale(text: str) -> Scale:
    """--scale: 'none', 'sqrt' or a finite number >= 0 (the multiplier applied to every score)."""
    return cast(Scale, name_or_number(text, "scale", ("none", "sqrt")))


def parse_position_scale(text: str) -> PositionScale:
    """--position-scale: 'auto' or a finite number >= 0 (the multiplier of the position codes)."""
    return cast(PositionScale, name_or_number(text, "position_scale", ("auto",)))


def name_or_number(text: str, setting: str, names: tuple[str, ...]) -> str | float:
    """One of `names` or a finite number >= 0, as typed after an option."""
    word = text.strip().lower()
    if word in names:
        return word
    try:
        value = float(word)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise SettingsError(setting, f"must be {', '.join(names)} or a finite number >= 0 (got {text!r})")
    return value


def parse_neighbor_vocab(text: str) -> int | None:
    """--neighbor-vocab N|all as the library's neighbor_vocab: a word count, or None for all words."""
    if text.strip().lower() == "all":
        return None
    try:
        size = int(text)
    except ValueError:
        size = 0
    if size < 1:
        raise SettingsError("neighbor_vocab", f"must be a positive whole number or 'all' (got {text!r})")
    return size


def _option(*flags: str, panel: str = ENGINE_PANEL, **kwargs) -> typer.models.OptionInfo:
    return typer.Option(*flags, rich_help_panel=panel, **kwargs)


ENGINE_ANNOTATIONS = {
    # declared in the order the help shows them: the attention first, then the vectors and the output
    "mode": Annotated[Mode, _option("--mode", metavar="raw|projected",
                                    help="raw: Q = K = V = X. projected: seeded random W_Q, W_K, W_V.")],
    "scale": Annotated[str, _option("--scale", metavar="none|sqrt|X",
                                    help="Multiply scores by 1, by 1/sqrt(d_head) or by X >= 0.")],
    "temperature": Annotated[float, _option("--temperature", metavar="T",
                                            help="Divide the scaled scores by T (above 0).")],
    "similarity": Annotated[Similarity, _option("--similarity", metavar="dot|cosine",
                                                help="Score q.k (dot) or cos(q, k) (cosine).")],
    "heads": Annotated[int, _option("--heads", metavar="H", help="Number of heads; each gets width / H dimensions.")],
    "d_k": Annotated[Optional[int], _option("--d-k", metavar="N",
                                            help="With --mode projected: total width of Q, K, V (default: d).")],
    "seed": Annotated[int, _option("--seed", metavar="N",
                                   help="With --mode projected: seed of the random W_Q, W_K, W_V.")],
    "mask": Annotated[Mask, _option("--mask", metavar="none|causal|others",
                                    help="causal: query i sees keys j <= i only; others: every key but its own.")],
    "positions": Annotated[Positions, _option("--positions", metavar="none|sinusoidal",
                                              help="Add sinusoidal position encodings to X.")],
    "position_scale": Annotated[str, _option("--position-scale", metavar="auto|X",
                                             help="With --positions: codes as long as their words (auto), or x X.")],
    "output_projection": Annotated[bool, _option("--output-projection",
                                                 help="With --mode projected: map the heads back to d with W_O.")],
    "weights": Annotated[Optional[Path], _option(
        "--weights", metavar="FILE",
        help="A layer learned by attn-cli train: its W_Q, W_K, W_V, W_O and settings (trained mode).")],
    "vectors": Annotated[Optional[str], _option(
        "--vectors", envvar="ATTN_CLI_VECTORS", panel=OUTPUT_PANEL, metavar="FILE|NAME",
        help="A vector file (GloVe, word2vec, fastText; .gz, .bz2) or a gensim-data name, cached on first use. "
             "Default: the embedded set.")],
    "format": Annotated[Optional[VectorFormat], _option(
        "--format", panel=OUTPUT_PANEL, metavar="FORMAT",
        help="Read --vectors as glove, word2vec, word2vec-binary, fasttext-bin or gensim-pickle (default: detected).")],
    "limit": Annotated[Optional[int], _option("--limit", panel=OUTPUT_PANEL, metavar="N",
                                              help="Keep the first (most frequent) N words of the vectors.")],
    "skip_bad_lines": Annotated[bool, _option("--skip-bad-lines", panel=OUTPUT_PANEL,
                                              help="Leave out malformed lines of --vectors (counted).")],
    "trust_pickle": Annotated[bool, _option("--trust-pickle", panel=OUTPUT_PANEL,
                                            help="Allow gensim .kv/.model pickles (loading one can run code).")],
    "oov": Annotated[OovPolicy, _option("--oov", panel=OUTPUT_PANEL, metavar="skip|error|zero",
                                        help="Unknown words: skip them (warn), stop, or use zero vectors.")],
    "neighbors": Annotated[int, _option("--neighbors", panel=OUTPUT_PANEL, metavar="N",
                                        help="Nearest vocabulary words shown per token (0: none; at most 100).")],
    "neighbor_vocab": Annotated[str, _option("--neighbor-vocab", panel=OUTPUT_PANEL, metavar="N|all",
                                             help="Search neighbours among the N most frequent words.")],
    "max_tokens": Annotated[int, _option("--max-tokens", panel=OUTPUT_PANEL, metavar="N",
                                         help="Refuse longer sentences (memory grows with N squared).")],
    "json": Annotated[bool, _option("--json", panel=OUTPUT_PANEL, help="Write JSON to stdout.")],
    "include": Annotated[str, _option("--include", panel=OUTPUT_PANEL, metavar="LIST",
                                      help="With --json: add embeddings, qkv, outputs, projections, inputs.")],
    "html": Annotated[Optional[Path], _option("--html", panel=OUTPUT_PANEL, metavar="FILE",
                                              help="Also write an interactive HTML report.")],
    "svg": Annotated[Optional[Path], _option("--svg", panel=OUTPUT_PANEL, metavar="FILE",
                                             help="Also write the tables as an SVG picture.")],
}


def option_group(options_class: type, annotations: dict, name: str):
    """A decorator giving `command(..., <name>: options_class)` each field of the dataclass as a CLI flag.

    Typer reads the wrapper's `__signature__`: the group's fields replace the `name` parameter, and the
    wrapper packs them back into one `options_class` instance. Groups stack (engine, then batch options).
    """
    parameters = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                    annotation=annotations[f.name]) for f in fields(options_class)]

    def decorate(command):
        signature = inspect.signature(command)
        hints = typing.get_type_hints(command, include_extras=True)  # Typer cannot evaluate string annotations
        own = [parameter.replace(annotation=hints.get(key, parameter.annotation))  # behind __signature__
               for key, parameter in signature.parameters.items() if key != name]

        @functools.wraps(command)
        def wrapper(**kwargs):
            group = options_class(**{parameter.name: kwargs.pop(parameter.name) for parameter in parameters})
            return command(**{name: group}, **kwargs)

        # Typer reads __signature__ (inspect.signature honours it); functools.wraps' type does not declare it
        wrapper.__signature__ = signature.replace(parameters=own + parameters)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {**{p.name: p.annotation for p in own}, **annotations}
        return wrapper

    return decorate


with_engine_options = option_group(EngineOptions, ENGINE_ANNOTATIONS, "engine")
with_vector_options = option_group(VectorOptions, {f.name: ENGINE_ANNOTATIONS[f.name] for f in fields(VectorOptions)},
                                   "source")


@dataclass(frozen=True)
class BatchOptions:
    """How explain and trace read many sentences and write them for other programs."""

    file: Optional[Path] = None
    input_format: InputFormat = InputFormat("text")
    fields: Optional[str] = None
    plain: bool = False
    strict: bool = False

    def listing_fields(self) -> bool:
        """True for a bare --fields: list the available fields instead of running."""
        return self.fields == LIST_FIELDS

    def field_names(self, engine: EngineOptions) -> list[str] | None:
        """--fields as a list of dotted names (checked against the schema by the caller), None when absent."""
        if self.fields is None:
            return None
        if not engine.json:
            raise UsageError("--fields selects fields of the JSON output; add --json")
        names = [name.strip() for name in self.fields.split(",") if name.strip()]
        if not names:
            raise UsageError("--fields needs names, e.g. --fields tokens,shifts.cosine (--fields alone lists them)")
        return names

    def output_style(self, engine: EngineOptions) -> str:
        """'json', 'plain' or 'tables'."""
        if self.plain and engine.json:
            raise UsageError("--plain and --json are two output formats; choose one")
        return "json" if engine.json else "plain" if self.plain else "tables"


INPUT_FORMAT_OPTION = Annotated[InputFormat, _option(
    "--input-format", panel=BATCH_PANEL, metavar="text|jsonl",
    help='Input lines are sentences (text) or JSON objects with a "text" field (jsonl).')]
FILE_OPTION = Annotated[Optional[Path], _option("--file", panel=BATCH_PANEL, metavar="FILE",
                                                help="Read sentences from FILE, one per line (as - reads stdin).")]
_BATCH_ANNOTATIONS = {
    "file": FILE_OPTION,
    "input_format": INPUT_FORMAT_OPTION,
    "fields": Annotated[Optional[str], _option(
        "--fields", panel=BATCH_PANEL, metavar="LIST",
        help="With --json: keep only these fields (dotted paths, comma-separated); alone: list them.")],
    "plain": Annotated[bool, _option("--plain", panel=BATCH_PANEL,
                                     help="Tab-separated records, one per token, for grep, cut and awk.")],
    "strict": Annotated[bool, _option("--strict", panel=BATCH_PANEL,
                                      help="Stop at the first line that fails (default: report it, go on).")],
}
with_batch_options = option_group(BatchOptions, _BATCH_ANNOTATIONS, "batch")
