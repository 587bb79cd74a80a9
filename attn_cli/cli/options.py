"""The options every command shares, declared once and validated in one place.

`with_engine_options` appends them to a command's signature (Typer reads
`__signature__`) and hands the command a single `EngineOptions`, so `explain`,
`compare` and `trace` cannot drift apart in names, defaults or help.
"""

from __future__ import annotations

import copy
import errno
import functools
import inspect
import itertools
import os
import typing
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer
from typer.core import TyperCommand

import attn_cli
from attn_cli import VECTOR_FORMATS, Declared, LayerSettings, Settings, Vectors, declarations, load_vectors
from attn_cli.errors import SettingsError, UsageError, flag, shown_path
from attn_cli.cli.help import NarrowHelp
from attn_cli.cli.inputs import INPUT_FORMATS, read_back, stdout_file

ENGINE_PANEL = "Attention"
OUTPUT_PANEL = "Vectors and output"
TRAIN_PANEL = "Training"
BATCH_PANEL = "Batches and pipes"
HELP_PANEL = "Help"
LIST_FIELDS = "list"  # what a bare --fields stands for


def examples(*lines: str) -> str:
    """A help screen's epilog: its examples, one a line (tests/test_cli_help.py runs each)."""
    return "\n\n".join(["Examples:", *lines])


def _no_metavar(*args, **kwargs) -> str:
    return ""


class HelpInOrder(NarrowHelp, TyperCommand):
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

    def collect_usage_pieces(self, ctx) -> list[str]:
        """The usage line's pieces, a required argument bare (WORD) as click and man pages write it: Typer braces it
        ({WORD}), which reads as a set or a template to fill in."""
        return [piece[1:-1] if piece.startswith("{") and piece.endswith("}") else piece
                for piece in super().collect_usage_pieces(ctx)]


def _choices(name: str, values: tuple[str, ...]) -> type[Enum]:
    """A str Enum for Typer, built from the library's own tuple of accepted values."""
    # the functional Enum API builds a class; mypy types the call as an instance when the name is not a literal
    return Enum(name, {value: value for value in values}, type=str)  # type: ignore[return-value]


if typing.TYPE_CHECKING:  # mypy cannot see the members of Enums built at run time: to it each is a str Enum
    class _Choice(str, Enum):
        pass

    InputFormat: typing.TypeAlias = _Choice
    VectorFormat: typing.TypeAlias = _Choice
else:
    InputFormat = _choices("InputFormat", INPUT_FORMATS)
    VectorFormat = _choices("VectorFormat", VECTOR_FORMATS)

PANELS = {"attention": ENGINE_PANEL, "output": OUTPUT_PANEL, "training": TRAIN_PANEL}


def declared_option(name: str, declared: Declared, default: Any, note: str = "") -> inspect.Parameter:
    """A setting's command-line option, built from its declaration: --name, its type (choices as an Enum, text
    that `Declared.typed` reads), its default, metavar, help (and `note` after it) and panel."""
    kind: Any
    if declared.kind == "choice":
        kind = _choices(name.title().replace("_", ""), declared.choices)
        default = None if default is None else kind(default)
    elif declared.typed_as_text:
        kind = str
        default = declared.typed_none if default is None else ",".join(default) if isinstance(default, tuple) else \
            str(default)
    else:
        kind = {"whole": int, "number": float, "switch": bool}[declared.kind]
        kind = kind if default is not None else Optional[kind]
    metavar = None if declared.kind == "switch" else declared.metavar or "|".join(declared.choices) or "X"
    option = typer.Option(flag(name), metavar=metavar, help=" ".join(filter(None, (declared.help, note))),
                          rich_help_panel=PANELS[declared.group], show_default=default not in (None, ""))
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[kind, option])


def chosen(owner: type, typed: dict[str, Any]) -> dict[str, Any]:
    """The settings' values from their options' (an Enum member's value, text read by `Declared.typed`)."""
    found = declarations(owner)
    return {name: value.value if isinstance(value, Enum) else
            found[name].typed(value) if found[name].typed_as_text and isinstance(value, str) else value
            for name, value in typed.items()}


SETTING_NAMES = [*declarations(LayerSettings), "weights", "model", "layer", "vectors", "format", "limit",
                 "skip_bad_lines", "trust_pickle", "oov", "neighbors", "neighbor_vocab", "max_tokens", "json",
                 "include", "html", "svg", "quiet"]


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
        if self.vectors:
            read_back(Path(self.vectors), f"--vectors {shown_path(self.vectors)}")
        return load_vectors(self.vectors, limit=self.limit, format=self.format.value if self.format else None,
                            skip_bad_lines=self.skip_bad_lines, trust_pickle=self.trust_pickle, progress=progress,
                            warn=warn)


@dataclass(frozen=True)
class EngineOptions(VectorOptions):
    """What the user asked for: the library's declared settings as typed (`typed`, by keyword), and the options
    of the command line alone: where the vectors come from, and what to write."""

    typed: dict[str, Any] = field(default_factory=dict)
    given: frozenset[str] = frozenset()  # the settings typed on the command line (or set in the environment)
    weights: Optional[Path] = None
    model: Optional[str] = None
    json: bool = False
    html: Optional[Path] = None
    svg: Optional[Path] = None
    quiet: bool = False

    def settings(self) -> Settings:
        """The library's settings these options stand for (a bad value raises SettingsError, exit 2)."""
        if self.typed.get("include") and not self.json:
            raise UsageError("--include adds matrices to the JSON output; add --json")
        if self.weights is not None and "mode" in self.given:  # the default raw mode would pass the layer's check
            raise SettingsError("mode", f"cannot be {chosen(Settings, self.typed)['mode']!r} with --weights: the "
                                        "layer's learnt weights fix the mode; leave it out")
        # the library's settings read no file; the weights module loads only for a run that names one
        if self.weights is not None:
            read_back(self.weights, f"--weights {shown_path(self.weights)}")
        layer = None if self.weights is None else attn_cli.load_layer(self.weights)
        model = None if self.model is None else attn_cli.load_model(self.model)
        return Settings(**chosen(Settings, self.typed), weights=layer, model=model)

    def load(self, warn: Callable[[str], None], progress: bool) -> Vectors:
        """The vectors --vectors names, or with --model the model's own vocabulary (--vectors is then an error)."""
        if self.model is None:
            return super().load(warn, progress)
        if self.vectors is not None:
            raise UsageError("--vectors cannot be given with --model, which reads its own vocabulary; leave it out")
        return attn_cli.load_model(self.model).vectors

    def picture_files(self, file: Path | None = None, stdin: bool = False, parquet: Path | None = None,
                      inputs: dict[str, Path | None] | None = None) -> dict[str, Path]:
        """--html, --svg (and a command's --parquet) targets, checked before any work: the folder must exist, they
        must differ, and none may be an input (the --file sentences, a file on stdin read as `-`, the --vectors
        file, or a command's other `inputs` such as senses' --labels, however it is reached)."""
        targets = {option: path for option, path in (("--html", self.html), ("--svg", self.svg),
                                                     ("--parquet", parquet)) if path is not None}
        read = {("--file", file), ("stdin", "/dev/stdin" if stdin else None), ("--vectors", self.vectors),
                ("--weights", self.weights), *(inputs or {}).items()}
        sources = {option: Path(path) for option, path in sorted(read, key=str) if path}
        one_stdin_reader(sources)
        for option, path in targets.items():
            output_path(option, path, f"report.{option[2:]}")
            for source, input_path in sources.items():
                if same_regular_file(path, input_path):
                    raise UsageError(f"{option} {path} is the {source} input; writing it would replace it, so give "
                                     f"{option} another file name")
            writable_target(option, path)
        for (one, first), (other, second) in itertools.combinations(targets.items(), 2):
            if first.resolve() == second.resolve():
                raise UsageError(f"{one} and {other} name the same file; give each its own")
        return targets


def one_stdin_reader(sources: dict[str, Path]) -> None:
    """Refuse two inputs that both read stdin (`- --labels /dev/stdin`): the first to read a pipe empties it for
    the other, which then finds nothing (or, from a file, the same lines)."""
    readers = ["-" if option == "stdin" else f"{option} {shown_path(path)}" for option, path in sources.items()
               if attn_cli.stream_descriptor(path) == 0]
    if len(readers) > 1:
        raise UsageError(f"{' and '.join(readers)} each read stdin, which only one input can; give all "
                         "but one of them a file")


def output_path(option: str, path: Path, example: str) -> None:
    """A file name an output option (`option`, e.g. --html) can be given, checked before any work: not `-` or `--`
    (which would make files of those names), not a folder (`""` is `.`), in a folder that exists, and short
    enough for the file system (ENAMETOOLONG, said with the name shortened)."""
    if str(path).strip("-") == "":
        raise UsageError(f"{option} {path} would write a file named {path}; give a file name (./{path} if you mean "
                         f"one){to_stdout(option, ', or')}")
    try:
        _in_a_folder(option, path, example)
    except OSError as exc:
        fix = "give a shorter file name" if exc.errno == errno.ENAMETOOLONG else "give a file name you can write"
        raise UsageError(f"{option} {shown_path(path)}: {exc.strerror}; {fix}") from None


def _in_a_folder(option: str, path: Path, example: str) -> None:
    """That `path` names a file, not a folder, in a folder that exists (an OSError when the name cannot be looked
    up at all)."""
    if path.is_dir():
        raise UsageError(f"{option} needs a file name, not '' or . (a folder); give one, e.g. {option} {example}"
                         if str(path) == "." else
                         f"{option} {path} is a directory; give a file name, e.g. {option} {example}")
    if path.parent.exists() and not path.parent.is_dir():
        raise UsageError(f"{option} {path}: {path.parent} is a file, not a folder; give a file name in an existing "
                         "folder")
    if not path.parent.is_dir():
        raise UsageError(f"{option} {path}: folder {path.parent} does not exist; create it or give a file name in "
                         "an existing folder")


STREAMED = ("--html", "--svg")  # text outputs a path to stdout's own file adds to stdout, written through it


def writable_target(option: str, path: Path) -> None:
    """An output path checked before any work. One that names a descriptor (`/dev/stdin`, `/dev/fd/3`) reopens
    what it holds, so it must be open for writing: `--html /dev/stdin < mine.txt` would append to a file given
    only for reading. Any other path must not be the regular file stdout or stderr writes into, which a rename
    would replace (`--json > o.json --html o.json` lost the JSON). A descriptor's path to stdout's own file
    (`--html /dev/stdout > page.html`) is written through stdout, in order (see outputs.write_target), which a
    binary or data file (--parquet, train's --out, vectors export's FILE) cannot share with the report, whatever
    stdout is (a file, a pipe, a terminal): it is refused."""
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
    """The hint that `option` can add its file to stdout, for the options that can (STREAMED): the binary files
    (--parquet, train's --out, vectors export's FILE) never share stdout with the report."""
    return f"{before} {option} /dev/stdout to add it to stdout{after}" if option in STREAMED else ""


def access_mode(descriptor: int) -> int | None:
    """How a descriptor of this process is open (os.O_RDONLY, O_WRONLY or O_RDWR); None when it is not open."""
    import fcntl  # Unix only, as are the descriptor paths that lead here

    try:
        return fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE
    except OSError:
        return None


def same_regular_file(one: Path, other: Path) -> bool:
    """Whether two paths reach one existing regular file (through links too); a device such as /dev/stdout
    may be both read and written."""
    try:
        return one.is_file() and other.is_file() and os.path.samefile(one, other)
    except OSError:
        return False


def _option(*flags: str, panel: str = ENGINE_PANEL, **kwargs) -> typer.models.OptionInfo:
    return typer.Option(*flags, rich_help_panel=panel, **kwargs)


def parquet_option(rows: str) -> typer.models.OptionInfo:
    """A command's --parquet FILE (explain's tokens, senses' occurrences), `rows` saying what one row is:
    `parquet: Annotated[Optional[Path], parquet_option("token")] = None`."""
    return _option("--parquet", panel=OUTPUT_PANEL, metavar="FILE",
                   help=f"Also write a Parquet table, one row per {rows} (needs pyarrow).")


QUIET_OPTION = Annotated[bool, _option("--quiet", "-q", panel=OUTPUT_PANEL,
                                      help="No warnings on stderr (errors are still said).")]
COMMAND_LINE_ANNOTATIONS = {  # the options of the command line alone; the settings' come from their declarations
    "weights": Annotated[Optional[Path], _option(
        "--weights", metavar="FILE",  # the help Settings gives its field, which is not a declared setting
        help=next(item.metadata["help"] for item in fields(Settings) if item.name == "weights"))],
    "model": Annotated[Optional[str], _option(
        "--model", metavar="NAME|DIR",  # the help Settings gives its field, which is not a declared setting
        help=next(item.metadata["help"] for item in fields(Settings) if item.name == "model"))],
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
    "json": Annotated[bool, _option("--json", panel=OUTPUT_PANEL, help="Write JSON to stdout.")],
    "html": Annotated[Optional[Path], _option("--html", panel=OUTPUT_PANEL, metavar="FILE",
                                              help="Also write an interactive HTML report.")],
    "svg": Annotated[Optional[Path], _option("--svg", panel=OUTPUT_PANEL, metavar="FILE",
                                             help="Also write the tables as an SVG picture.")],
    "quiet": QUIET_OPTION,
}


def plain_options(owner: type, annotations: dict[str, Any]) -> list[inspect.Parameter]:
    """Options declared by the command line itself, one per field of `owner` (a dataclass), with its default."""
    return [inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, default=item.default,
                              annotation=annotations[item.name]) for item in fields(owner) if item.name in annotations]


CONTEXT = "cli_context"  # the parameter through which Typer hands option groups the command's context


def option_group(parameters: list[inspect.Parameter], pack: Callable[..., object], name: str, given: bool = False):
    """A decorator giving `command(..., <name>: ...)` each of `parameters` as a CLI option; the wrapper hands the
    command `pack(**their values)` as `name`, and with `given`, `pack(..., given=...)` the names of those typed on
    the command line or set in the environment (a value equal to the default may still be a choice to refuse).

    Typer reads the wrapper's `__signature__`: the parameters replace the `name` parameter. Groups stack
    (engine, then batch options).
    """
    def decorate(command):
        signature = inspect.signature(command)
        hints = typing.get_type_hints(command, include_extras=True)  # Typer cannot evaluate string annotations
        own = [parameter.replace(annotation=hints.get(key, parameter.annotation))  # behind __signature__
               for key, parameter in signature.parameters.items() if key != name]

        # Typer hands a command one context, to its parameter typed so: the command's own (ctx), or one added here
        # that stacked groups share and the innermost takes off
        passed = next((p.name for p in own if p.annotation is typer.Context), None)
        context = [] if passed else [inspect.Parameter(CONTEXT, inspect.Parameter.KEYWORD_ONLY,
                                                       annotation=typer.Context)]

        @functools.wraps(command)
        def wrapper(**kwargs):
            found = kwargs[passed] if passed else kwargs.pop(CONTEXT)
            typed = {parameter.name: kwargs.pop(parameter.name) for parameter in parameters}
            chosen = frozenset(key for key in typed if found.get_parameter_source(key).name in ("COMMANDLINE",
                                                                                                 "ENVIRONMENT"))
            group = pack(**typed, **({"given": chosen} if given else {}))
            return command(**{name: group}, **kwargs)

        # Typer reads __signature__ (inspect.signature honours it); functools.wraps' type does not declare it
        wrapper.__signature__ = signature.replace(parameters=own + parameters + context)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {**{p.name: p.annotation for p in own},
                                   **{p.name: p.annotation for p in parameters + context}}
        return wrapper

    return decorate


def _engine_parameters(helps: dict[str, str]) -> list[inspect.Parameter]:
    """The attention commands' options, in the order their help lists them; `helps` replaces the help of some
    of the command line's own (a command whose --svg draws something else than the tables says what)."""
    defaults = {item.name: item.default for item in fields(Settings)}
    declared = {name: declared_option(name, found, defaults[name]) for name, found in declarations(Settings).items()}
    annotations = {**COMMAND_LINE_ANNOTATIONS, **{name: helped(COMMAND_LINE_ANNOTATIONS[name], text)
                                                  for name, text in helps.items()}}
    plain = {parameter.name: parameter for parameter in plain_options(EngineOptions, annotations)}
    return [declared.get(name) or plain[name] for name in SETTING_NAMES]


def helped(annotation: Any, text: str) -> Any:
    """An option's annotation with another help text (the option itself, its name and type, unchanged)."""
    info = copy.copy(annotation.__metadata__[0])
    info.help = text
    return Annotated[annotation.__origin__, info]


def _engine_options(given: frozenset[str], **values: Any) -> EngineOptions:
    typed = {name: values.pop(name) for name in list(values) if name in declarations(Settings)}
    return EngineOptions(typed=typed, given=given & set(typed), **values)


def engine_options(**helps: str):
    """The decorator giving a command every attention option, and the vectors and output ones (`helps`: see
    _engine_parameters)."""
    return option_group(_engine_parameters(helps), _engine_options, "engine", given=True)


with_engine_options = engine_options()
with_vector_options = option_group(plain_options(VectorOptions, COMMAND_LINE_ANNOTATIONS), VectorOptions, "source")


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
with_batch_options = option_group(plain_options(BatchOptions, _BATCH_ANNOTATIONS), BatchOptions, "batch")
