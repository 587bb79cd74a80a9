"""The options the commands share, as Typer `Annotated` aliases (as huggingface_hub's CLI does); the attention
commands' own common set comes with EngineCommand. A setting's option takes its help and placeholder from the
library's declaration."""

from __future__ import annotations

import errno
import itertools
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Callable, Literal, Optional, TypeAlias

import typer

import attn_cli
from attn_cli import VECTOR_FORMATS, LayerSettings, Settings, TrainingSettings, Vectors, declarations, load_vectors
from attn_cli.errors import SettingsError, UsageError, flag, shown_path
from attn_cli.cli.help import Command
from attn_cli.cli.inputs import INPUT_FORMATS, read_back, stdout_file
from attn_cli.cli.messages import QUIET

ENGINE_PANEL, OUTPUT_PANEL, TRAIN_PANEL = "Attention", "Vectors and output", "Training"
BATCH_PANEL = "Batches and pipes"
LIST_FIELDS = "list"  # what a bare --fields stands for
STREAMED = ("--html", "--svg")  # text outputs a path to stdout's own file adds to stdout, written through it


def examples(*lines: str) -> str:
    """A help screen's epilog: its examples, one a line (tests/test_cli_help.py runs each)."""
    return "\n\n".join(["Examples:", *lines])


if TYPE_CHECKING:  # Typer reads a Literal of the library's tuple of accepted values; mypy needs them spelt out
    InputFormat: TypeAlias = str
    VectorFormat: TypeAlias = str
else:
    InputFormat, VectorFormat = Literal[INPUT_FORMATS], Literal[VECTOR_FORMATS]


def setting(name: str, owner: type = Settings, note: str = "") -> Any:
    """The option of a declared setting, as the library declares it; a choice is checked here, text naming a
    number or a list is read by `Declared.typed`, and the settings check every value."""
    declared = declarations(owner)[name]

    def parse(text: object) -> Any:
        if declared.kind == "choice" and text not in declared.choices:
            raise typer.BadParameter(f"{text!r} is not one of {', '.join(map(repr, declared.choices))}.")
        return declared.typed(str(text))

    as_text = declared.kind in ("choice", "named number", "names") or declared.typed_none  # else Typer's int, float
    attention = name in declarations(LayerSettings) or name == "layer"  # the rest of Settings: what a run reports
    panel = TRAIN_PANEL if owner is TrainingSettings else ENGINE_PANEL if attention else OUTPUT_PANEL
    return typer.Option(flag(name), parser=parse if as_text else None,
                        metavar=None if declared.kind == "switch" else declared.metavar or "|".join(declared.choices),
                        help=" ".join(filter(None, (declared.help, note))), rich_help_panel=panel,
                        show_default=getattr(owner(), name) not in (None, ()))


def _option(*flags: str, panel: str = ENGINE_PANEL, **kwargs) -> Any:
    return typer.Option(*flags, rich_help_panel=panel, **kwargs)


# The settings' options take their defaults from S
S = Settings()
Weights = Annotated[Optional[Path], _option(
    "--weights", metavar="FILE",
    help="A layer learned by attn-cli train: its W_Q, W_K, W_V, W_O and settings (trained mode).")]
Model = Annotated[Optional[str], _option(
    "--model", metavar="NAME|DIR",
    help="A pretrained BERT model: minilm (all-MiniLM-L6-v2, after attn-cli vectors import minilm) or a model folder "
         "(config.json, vocab.txt, model.safetensors). Its WordPiece tokens and vocabulary replace the vectors'.")]
# The command line's own: where the vectors come from, and what to write
VectorsOption = Annotated[Optional[str], _option(
    "--vectors", envvar="ATTN_CLI_VECTORS", panel=OUTPUT_PANEL, metavar="FILE|NAME",
    help="A vector file (GloVe, word2vec, fastText; .gz, .bz2) or a gensim-data name, cached on first use. "
         "Default: the embedded set.")]
Format = Annotated[Optional[VectorFormat], _option(
    "--format", panel=OUTPUT_PANEL, metavar="FORMAT",
    help="Read the vector file as glove, word2vec, word2vec-binary, fasttext-bin or gensim-pickle (default: "
         "detected).")]
Limit = Annotated[Optional[int], _option("--limit", panel=OUTPUT_PANEL, metavar="N",
                                         help="Keep the first (most frequent) N words of the vectors.")]
SkipBadLines = Annotated[bool, _option("--skip-bad-lines", panel=OUTPUT_PANEL,
                                       help="Leave out malformed lines of the vector file (counted).")]
TrustPickle = Annotated[bool, _option("--trust-pickle", panel=OUTPUT_PANEL,
                                      help="Allow gensim .kv/.model pickles (loading one can run code).")]
Json = Annotated[bool, _option("--json", panel=OUTPUT_PANEL, help="Write JSON to stdout.")]


def _quiet(value: bool) -> bool:
    QUIET.set(value)  # as the option is parsed: every warning after it obeys, and no command need remember it
    return value


Quiet = Annotated[bool, _option("--quiet", "-q", panel=OUTPUT_PANEL, callback=_quiet,
                                help="No warnings on stderr (errors are still said).")]
Html = Annotated[Optional[Path], _option(
    "--html", panel=OUTPUT_PANEL, metavar="FILE",
    help="Also write an interactive HTML report (senses: the occurrences' scatter and the tables).")]
Svg = Annotated[Optional[Path], _option(
    "--svg", panel=OUTPUT_PANEL, metavar="FILE",
    help="Also write the tables as an SVG picture (senses: the occurrences' scatter, coloured by group).")]
Parquet = Annotated[Optional[Path], _option(
    "--parquet", panel=OUTPUT_PANEL, metavar="FILE",
    help="Also write a Parquet table, one row per token of each sentence (senses: per occurrence); needs pyarrow.")]
File = Annotated[Optional[Path], _option("--file", panel=BATCH_PANEL, metavar="FILE",
                                         help="Read sentences from FILE, one per line (as - reads stdin).")]
InputFormatOption = Annotated[InputFormat, _option(
    "--input-format", panel=BATCH_PANEL, metavar="text|jsonl",
    help='Input lines are sentences (text) or JSON objects with a "text" field (jsonl).')]
Fields = Annotated[Optional[str], _option(
    "--fields", panel=BATCH_PANEL, metavar="LIST",
    help="With --json: keep only these fields (dotted paths, comma-separated); alone: list them.")]
Plain = Annotated[bool, _option("--plain", panel=BATCH_PANEL,
                                help="Tab-separated records, one per token, for grep, cut and awk.")]
Strict = Annotated[bool, _option("--strict", panel=BATCH_PANEL,
                                 help="Stop at the first line that fails (default: report it, go on).")]


def _engine(
    mode: Annotated[str, setting("mode")] = S.mode, scale: Annotated[Any, setting("scale")] = S.scale,
    temperature: Annotated[float, setting("temperature")] = S.temperature,
    similarity: Annotated[str, setting("similarity")] = S.similarity, heads: Annotated[int, setting("heads")] = S.heads,
    d_k: Annotated[Optional[int], setting("d_k")] = S.d_k, seed: Annotated[int, setting("seed")] = S.seed,
    mask: Annotated[str, setting("mask")] = S.mask, positions: Annotated[str, setting("positions")] = S.positions,
    position_scale: Annotated[Any, setting("position_scale")] = S.position_scale,
    output_projection: Annotated[bool, setting("output_projection")] = False, weights: Weights = None,
    model: Model = None, layer: Annotated[int, setting("layer")] = S.layer,
    vectors: VectorsOption = None, format: Format = None, limit: Limit = None, skip_bad_lines: SkipBadLines = False,
    trust_pickle: TrustPickle = False, oov: Annotated[str, setting("oov")] = S.oov,
    neighbors: Annotated[int, setting("neighbors")] = S.neighbors,
    neighbor_vocab: Annotated[Any, setting("neighbor_vocab")] = S.neighbor_vocab,
    max_tokens: Annotated[int, setting("max_tokens")] = S.max_tokens, json: Json = False,
    include: Annotated[Any, setting("include")] = "", html: Html = None, svg: Svg = None, quiet: Quiet = False,
    file: File = None,
) -> dict[str, Any]:
    return locals()


def _command(function: Callable[..., dict[str, Any]]) -> Any:
    """The click command Typer makes of `function`: its options, and a callback returning their values."""
    app = typer.Typer(add_completion=False)
    app.command()(function)
    return typer.main.get_command(app)


class EngineCommand(Command):
    """A command taking the attention commands' shared options (Attention before its own, the rest after), their
    values in `ctx.meta["options"]` for EngineOptions.of, so each command lists only what is its own."""

    shared = _command(_engine)

    def __init__(self, *args: Any, params: list, **kwargs: Any) -> None:
        arguments = [param for param in params if param.param_type_name == "argument"]
        options = [param for param in params if param.param_type_name != "argument"]
        common = self.shared.params
        rank = {ENGINE_PANEL: 0, OUTPUT_PANEL: 2, BATCH_PANEL: 3}  # the command's own panels: 1
        options = sorted([*common, *options], key=lambda param: rank.get(getattr(param, "rich_help_panel", ""), 1))
        super().__init__(*args, params=[*arguments, *options], **kwargs)

    def invoke(self, ctx):
        ctx.meta["options"] = self.shared.callback(**{param.name: ctx.params.pop(param.name)
                                                      for param in self.shared.params})
        return super().invoke(ctx)


def picked(cls: Callable[..., Any], values: dict[str, Any]) -> Any:
    """`cls` (a dataclass) made of the values its fields name, from the parameters a command was given."""
    return cls(**{item.name: values[item.name] for item in fields(cls) if item.name in values})  # type: ignore


@dataclass(frozen=True)
class EngineOptions:
    """An attention command's options: the declared settings as typed (`typed`), and the command line's own;
    `train` takes those of the vectors."""

    vectors: Optional[str] = None
    format: Optional[VectorFormat] = None
    limit: Optional[int] = None
    skip_bad_lines: bool = False
    trust_pickle: bool = False
    typed: dict[str, Any] = field(default_factory=dict)
    given: frozenset[str] = frozenset()  # the settings typed on the command line (or set in the environment)
    weights: Optional[Path] = None
    model: Optional[str] = None
    json: bool = False
    html: Optional[Path] = None
    svg: Optional[Path] = None
    file: Optional[Path] = None

    @classmethod
    def of(cls, ctx: typer.Context) -> EngineOptions:
        """From the shared options an EngineCommand put in `ctx.meta`."""
        values = ctx.meta["options"]
        typed = {name: values[name] for name in declarations(Settings)}
        given = frozenset(name for name in typed if getattr(ctx.get_parameter_source(name), "name", "") in (
            "COMMANDLINE", "ENVIRONMENT"))
        return picked(cls, {**values, "typed": typed, "given": given})

    def settings(self) -> Settings:
        """The library's settings these options stand for (a bad value raises SettingsError, exit 2)."""
        if self.typed.get("include") and not self.json:
            raise UsageError("--include adds matrices to the JSON output; add --json")
        if self.weights is not None and "mode" in self.given:  # the default raw mode would pass the layer's check
            raise SettingsError("mode", f"cannot be {self.typed['mode']!r} with --weights: the layer's learnt "
                                        "weights fix the mode; leave it out")
        if self.weights is not None:
            read_back(self.weights, f"--weights {shown_path(self.weights)}")
        layer = None if self.weights is None else attn_cli.load_layer(self.weights)
        model = None if self.model is None else attn_cli.load_model(self.model)
        return Settings(**self.typed, weights=layer, model=model)

    def load(self, warn: Callable[[str], None], progress: bool) -> Vectors:
        """The vectors --vectors names, or with --model the model's own vocabulary."""
        if self.model is not None and self.vectors is not None:
            raise UsageError("--vectors cannot be given with --model, which reads its own vocabulary; leave it out")
        if self.model is not None:
            return attn_cli.load_model(self.model).vectors
        if self.vectors:
            read_back(Path(self.vectors), f"--vectors {shown_path(self.vectors)}")
        return load_vectors(self.vectors, limit=self.limit, format=self.format, skip_bad_lines=self.skip_bad_lines,
                            trust_pickle=self.trust_pickle, progress=progress, warn=warn)

    def picture_files(self, stdin: bool = False, parquet: Path | None = None,
                      inputs: dict[str, Path | None] | None = None) -> dict[str, Path]:
        """--html, --svg (and --parquet) targets, checked before any work: each in an existing folder, none the
        same file as another or as an input (--file, stdin read as `-`, --vectors, --weights, `inputs`)."""
        targets = {option: path for option, path in (("--html", self.html), ("--svg", self.svg),
                                                     ("--parquet", parquet)) if path is not None}
        read = {("--file", self.file), ("stdin", "/dev/stdin" if stdin else None), ("--vectors", self.vectors),
                ("--weights", self.weights), *(inputs or {}).items()}
        sources = {option: Path(path) for option, path in sorted(read, key=str) if path}
        readers = ["-" if option == "stdin" else f"{option} {shown_path(path)}" for option, path in sources.items()
                   if attn_cli.stream_descriptor(path) == 0]
        if len(readers) > 1:  # the first to read a pipe would empty it for the other
            raise UsageError(f"{' and '.join(readers)} each read stdin, which only one input can; give all "
                             "but one of them a file")
        for option, path in targets.items():
            output_target(option, path, f"report.{option[2:]}", sources)
        for (one, first), (other, second) in itertools.combinations(targets.items(), 2):
            if first.resolve() == second.resolve():
                raise UsageError(f"{one} and {other} name the same file; give each its own")
        return targets


def output_target(option: str, path: Path, example: str, inputs: dict[str, Path]) -> None:
    """The file an output option names, checked before any work: not `-` or `--`, not a folder, in a folder that
    exists, a name the file system takes, none of the `inputs` (by option), and no stream it would clash with."""
    if str(path).strip("-") == "":
        raise UsageError(f"{option} {path} would write a file named {path}; give a file name (./{path} if you mean "
                         f"one){to_stdout(option, ', or')}")
    try:
        if path.is_dir():
            raise UsageError(f"{option} needs a file name, not '' or . (a folder); give one, e.g. {option} {example}"
                             if str(path) == "." else
                             f"{option} {path} is a directory; give a file name, e.g. {option} {example}")
        if path.parent.exists() and not path.parent.is_dir():
            raise UsageError(f"{option} {path}: {path.parent} is a file, not a folder; give a file name in an "
                             "existing folder")
        if not path.parent.is_dir():
            raise UsageError(f"{option} {path}: folder {path.parent} does not exist; create it or give a file name "
                             "in an existing folder")
    except OSError as exc:  # the name cannot be looked up at all (ENAMETOOLONG, said with the name shortened)
        fix = "give a shorter file name" if exc.errno == errno.ENAMETOOLONG else "give a file name you can write"
        raise UsageError(f"{option} {shown_path(path)}: {exc.strerror}; {fix}") from None
    for source, input_path in inputs.items():
        if same_regular_file(path, input_path):
            raise UsageError(f"{option} {path} is the {source} input; writing it would replace it, so give "
                             f"{option} another file name")
    _no_stream_clash(option, path)


def _no_stream_clash(option: str, path: Path) -> None:
    """A descriptor's path (`/dev/fd/3`) must be open for writing, and only a text output may name stdout (written
    through it, in order); any other path must not be the regular file stdout or stderr writes into."""
    descriptor = attn_cli.stream_descriptor(path)
    if descriptor is None:
        for stream, number in (("stdout", 1), ("stderr", 2)):
            if same_regular_file(path, Path(f"/dev/fd/{number}")):
                raise UsageError(f"{option} {path} is the file {stream} writes into; writing it would replace what "
                                 f"{stream} wrote, so give {option} another file name{to_stdout(option, ' (or', ')')}")
    elif access_mode(descriptor) == os.O_RDONLY:
        raise UsageError(f"{option} {path} is open for reading only; give a file name, or a descriptor open for "
                         f"writing{f' (e.g. {option} /dev/stdout)' if option in STREAMED else ''}")
    elif option not in STREAMED and stdout_file(path, regular=False):
        raise UsageError(f"{option} {path} is stdout (a file, a pipe or a terminal), where the report goes too: the "
                         f"two together would read as neither, so give {option} a file name")


def to_stdout(option: str, before: str, after: str = "") -> str:
    """The hint that a text output (STREAMED) can add its file to stdout; binary files never share it."""
    return f"{before} {option} /dev/stdout to add it to stdout{after}" if option in STREAMED else ""


def access_mode(descriptor: int) -> int | None:
    """How a descriptor is open (os.O_RDONLY, O_WRONLY or O_RDWR); None when it is not open."""
    import fcntl  # Unix only, as are the descriptor paths that lead here

    try:
        return fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE
    except OSError:
        return None


def same_regular_file(one: Path, other: Path) -> bool:
    """Whether two paths reach one existing regular file (a device such as /dev/stdout may be read and written)."""
    try:
        return one.is_file() and other.is_file() and os.path.samefile(one, other)
    except OSError:
        return False
