"""The `attn-cli` command line: parse, load, hand over to the library, pick a renderer. Every expected failure
leaves as one line on stderr with its documented exit code."""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Callable, Optional, Union

import typer
from typer.core import TyperGroup

from attn_cli import ExplainResult, LineError, Settings, Vectors, compare as compare_sentences, cross as cross_attend
from attn_cli import explain_many, trace_many
from attn_cli.cli.batch import Document, run_lines, with_input
from attn_cli.cli.fields import available_fields, parse_selection
from attn_cli.cli.help import Command, NarrowHelp
from attn_cli.cli.inputs import STDIN, InputLine, input_lines, ready_groups, stream_lines
from attn_cli.cli.messages import as_options, bug_message, fail, to_null, warn
from attn_cli.cli.options import (LIST_FIELDS, EngineCommand, EngineOptions, Fields, InputFormatOption, Parquet,
                                  Plain, Strict, examples)
from attn_cli.cli.outputs import Draw, ReportOutputs, command_line, renderer, stdout_failure
from attn_cli.cli.senses import senses
from attn_cli.cli.train import train
from attn_cli.cli.vectors import vectors_app
from attn_cli.errors import INTERRUPTED, PIPE_CLOSED, AttnError, InputError, UsageError, shorten
from attn_cli.render.consoles import unencodable
from attn_cli.version import __version__

# The parser's own exception base (click's ClickException, vendored or not), found without private imports.
_ParserError: type[Exception] = next(cls for cls in typer.BadParameter.__mro__ if cls.__name__ == "ClickException")
OUT_OF_MEMORY = ("out of memory; free some, or ask for less: --max-tokens (sentence length), --neighbor-vocab, "
                 "--batch-size and --max-sentences (train), --limit (the vectors) bound what a run holds "
                 "(docs/limits.md)")


class OneLineErrors(NarrowHelp, TyperGroup):
    """The program: it runs a command itself (click's main would exit 1 on a closed pipe), and turns every
    expected failure into one stderr line and its exit code."""

    # complete_var and windows_expand_args reach click's main through **extra, by keyword as click passes them
    def main(self, args=None, prog_name=None, standalone_mode=True, **extra):  # type: ignore[override]
        arguments = bare_fields_means_list(list(sys.argv[1:] if args is None else args))
        # <&-: an empty input; 2>&-: warnings and errors go nowhere, and the run goes on
        closed = [reopen_closed(name, number) for number, name in enumerate(("stdin", "stdout", "stderr"))]
        ended: list[int] = []  # the signal that ended the run, if one did
        previous = end_like_ctrl_c(ended)
        try:
            if closed[1]:
                raise UsageError("stdout is closed (>&-), so no result can be written; redirect it to a file, or "
                                 "to /dev/null to discard it")
            with self.make_context(prog_name or "attn-cli", arguments, obj={"arguments": arguments}) as ctx:
                outcome = self.invoke(ctx)
            sys.stdout.flush()  # a full disk says so here, not in the interpreter's last flush
            code = outcome if isinstance(outcome, int) else 0
        except typer.Exit as exc:  # --help, --version
            code = exc.exit_code
        except KeyboardInterrupt:
            code = INTERRUPTED
        except Exception as exc:
            code = failed(exc)
        finally:
            for number, handler in previous.items():  # a caller running main() in-process gets its own back
                signal.signal(number, handler)
        code = 128 + ended[0] if ended else code  # the shell's convention for a run a signal ended (SIGTERM: 143)
        if standalone_mode:
            sys.exit(code)
        return code


def failed(exc: Exception) -> int:
    """The one stderr line of an exception that ends the run, and its exit code."""
    if isinstance(exc, OSError) and exc.errno == errno.EPIPE:  # a reader gone (`| head`): stop quietly, as Unix
        to_null(sys.stdout)  # tools do on SIGPIPE
        return PIPE_CLOSED
    if isinstance(exc, UnicodeEncodeError) and sys.stdout.encoding != "utf-8":  # a line stdout cannot hold
        exc = unencodable(exc)
    if isinstance(exc, AttnError):
        fail(as_options(exc))
        return exc.exit_code
    if isinstance(exc, _ParserError):
        parser: Any = exc
        if type(exc).__name__ != "NoArgsIsHelpError":  # a bare group: Rich has printed its help already
            context = getattr(exc, "ctx", None)
            fail(parser.format_message() + (f" (see '{context.command_path} --help')" if context is not None else ""))
        return parser.exit_code
    if isinstance(exc, OSError) and (said := stdout_failure(exc)):
        fail(said)
        return UsageError.exit_code
    if isinstance(exc, MemoryError):  # where no one setting drives it: those that bound a run's memory
        fail(OUT_OF_MEMORY)
        return UsageError.exit_code
    fail(bug_message(exc), kind="internal error")
    return 1


def end_like_ctrl_c(ended: list[int]) -> dict[int, Any]:
    """SIGTERM and SIGHUP end the run as Ctrl-C does, so temporary files are removed on the way out; `ended`
    records which. Returns the handlers replaced (only the main thread's, and never a caller's own)."""
    def interrupt(signum: int, frame: object) -> None:
        ended.append(signum)
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        return {}
    numbers = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]  # Windows: no HUP
    return {number: signal.signal(number, interrupt) for number in numbers
            if signal.getsignal(number) == signal.SIG_DFL}


def reopen_closed(name: str, descriptor: int) -> bool:
    """Whether the shell closed this standard stream; /dev/null then takes its place (and its descriptor, which no
    file the run opens may take)."""
    if getattr(sys, name) is not None:
        return False
    null = os.open(os.devnull, os.O_RDONLY if descriptor == 0 else os.O_WRONLY)  # the lowest free descriptor
    if null != descriptor:
        os.dup2(null, descriptor)
        os.close(null)
    setattr(sys, name, open(descriptor, "r" if descriptor == 0 else "w", encoding="utf-8",
                            errors="backslashreplace", closefd=False))
    return True


def bare_fields_means_list(arguments: list[str]) -> list[str]:
    """`--fields` with no value (last, or before another option) stands for `--fields list`: Typer has no options
    with an optional value."""
    end = arguments.index("--") if "--" in arguments else len(arguments)
    return [item for position, argument in enumerate(arguments)
            for item in ([argument, LIST_FIELDS] if argument == "--fields" and position < end and (
                position + 1 == end or arguments[position + 1].startswith("-")) else [argument])]


def _print_version(value: bool) -> None:
    if value:
        print(f"attn-cli {__version__}")
        raise typer.Exit()


app = typer.Typer(
    cls=OneLineErrors, name="attn-cli", no_args_is_help=True, add_completion=False,
    help="See self-attention at work: every score, every softmax weight, and how each word's vector moves.",
    epilog=examples("attn-cli explain money bank grows", "attn-cli explain --help"),
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def root(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    """attn-cli: an attention inspector for static word vectors."""


SENTENCE_ARGUMENT = Annotated[Optional[list[str]], typer.Argument(
    metavar="SENTENCE...", show_default=False,
    help="The sentence (quoting it is optional); - reads one sentence per line from stdin.")]
TRACE_PANEL, COMPARE_PANEL = "Trace", "Compare"
COMPARE_EXAMPLE = 'attn-cli compare "river bank flows" "money bank grows"'


@app.command(cls=EngineCommand, epilog=examples(
    "attn-cli explain money bank grows",
    "attn-cli explain river bank flows --scale sqrt --heads 2",
    "attn-cli explain money bank --json --fields shifts.cosine"))
def explain(
    ctx: typer.Context,
    sentence: SENTENCE_ARGUMENT = None,
    parquet: Parquet = None,
    input_format: InputFormatOption = "text", fields: Fields = None, plain: Plain = False, strict: Strict = False,
) -> None:
    """Show scores, softmax weights, shifts and diagnostics of self-attention over SENTENCE."""
    each_report(ctx, "explain", sentence, renderer("terminal", "render_explain"),
                lambda sentences, vectors, settings: explain_many(sentences, vectors=vectors, settings=settings),
                input_format=input_format, fields=fields, plain=plain, strict=strict, parquet=parquet)


@app.command(cls=EngineCommand, epilog=examples(
    "attn-cli trace money bank grows --word bank",
    "attn-cli trace money bank --word bank --mode projected",
    "attn-cli trace money bank --json --fields traces.token"))
def trace(
    ctx: typer.Context,
    sentence: SENTENCE_ARGUMENT = None,
    word: Annotated[Optional[str], typer.Option("--word", metavar="W", rich_help_panel=TRACE_PANEL,
                                                help="Trace this word only (default: each word in turn).")] = None,
    dims: Annotated[int, typer.Option("--dims", min=1, metavar="N", rich_help_panel=TRACE_PANEL,
                                      help="Show the first N dimensions of each vector.")] = 3,
    shuffle_check: Annotated[bool, typer.Option("--shuffle-check", rich_help_panel=TRACE_PANEL,
                                                help="Shuffle the words, rerun, show how much the outputs "
                                                     "change.")] = False,
    input_format: InputFormatOption = "text", fields: Fields = None, plain: Plain = False, strict: Strict = False,
) -> None:
    """Follow a word through attention step by step: vectors, dot products, softmax, weighted sum."""
    each_report(ctx, "trace", sentence, renderer("trace", "render_trace"), lambda sentences, vectors, settings:
                trace_many(sentences, word=word, dims=dims, shuffle_check=shuffle_check, vectors=vectors,
                           settings=settings), input_format=input_format, fields=fields, plain=plain, strict=strict)


Many = Callable[[list[str], Vectors, Settings], Iterator[Union[ExplainResult, LineError]]]


def each_report(ctx: typer.Context, command: str, words: list[str] | None, render: Draw, many: Many, *,
                input_format: str, fields: str | None, plain: bool, strict: bool, parquet: Path | None = None) -> None:
    """Load the vectors once, then show the documents of `many`'s results for each group of sentences (lines of
    stdin or --file arrive in groups), in order; explain's tokens go to the `parquet` table, put in place when
    the run ends (as the pictures are) and removed if it stops before."""
    engine = EngineOptions.of(ctx)
    settings = engine.settings()
    sentence = " ".join(words) if words else None  # `explain money bank grows` is `explain "money bank grows"`
    if fields == LIST_FIELDS:
        print("\n".join(available_fields(command)))
        return
    if fields is not None and not engine.json:
        raise UsageError("--fields selects fields of the JSON output; add --json")
    selection = None if fields is None else parse_selection(fields, command)
    files = engine.picture_files(stdin=sentence == STDIN, parquet=parquet)
    unknown = UnknownWords()

    def build_group(group: list[InputLine]) -> Iterator[Document | InputError]:
        """Each line's document (made when it is shown), or why the line failed, in order."""
        results = many([line.text for line in group if line.text is not None], vectors, settings)
        for line in group:
            outcome = next(results) if line.error is None else InputError(line.error)
            if isinstance(outcome, LineError):
                yield InputError(as_options(outcome.error))
            elif isinstance(outcome, InputError):
                yield outcome
            else:
                unknown.add(outcome, line)
                outputs.add_row(outcome, line.number)
                yield partial(outcome.document, outputs.wanted)

    if plain and engine.json:
        raise UsageError("--plain and --json are two output formats; choose one")
    style = "json" if engine.json else "plain" if plain else "tables"
    outputs = ReportOutputs(render, style=style, files=files, command_line=command_line(ctx),
                            selection=selection, one_document=sentence not in (None, STDIN) and engine.file is None)
    try:
        lines = input_lines(sentence, engine.file, input_format,
                            f'echo "money bank grows" | attn-cli {command} -')
        vectors = engine.load(warn, progress=not engine.json)
        groups = ready_groups(lines)
        try:
            run_lines(groups, build_group, outputs, command=command, strict=strict, tell=fail)
        finally:
            unknown.tell(outputs.json)
    finally:
        if outputs.table is not None:
            outputs.table.discard()  # nothing once the run has put it in place


class UnknownWords:
    """The unknown words a batch's lines left out, said once when the run ends (how many lines, which words most
    often): once per line would bury the output. A sentence argument's are said at once."""

    SHOWN = 5  # most frequent words named

    def __init__(self) -> None:
        self.words: Counter[str] = Counter()
        self.lines = self.with_unknown = 0
        self.unsearched = 0  # unknown words past the run's bound of spelling searches

    def add(self, result: ExplainResult, line: InputLine) -> None:
        if line.number is None:
            warn_unknown(result)
            return
        self.lines += 1
        found = [item for item in result.dropped if item.reason == "out of vocabulary"]
        self.with_unknown += bool(found)
        self.words.update(item.text for item in found)
        self.unsearched += sum(not item.searched for item in found)

    def tell(self, json: bool) -> None:
        if not self.words:
            return
        common = ", ".join(f'"{shorten(word)}" ({count:,})' for word, count in self.words.most_common(self.SHOWN))
        where = "; each line's JSON lists its own under dropped_tokens" if json else ""
        unsearched = (f"; {self.unsearched:,} of them were not searched for spelling suggestions, past the bound "
                      "on a run's searches (docs/limits.md)") if self.unsearched else ""
        warn(f"skipped {sum(self.words.values()):,} unknown words in {self.with_unknown:,} of {self.lines:,} lines, "
             f"not in the vocabulary; most often {common}{where}{unsearched}")


@app.command(cls=EngineCommand, epilog=examples(
    COMPARE_EXAMPLE, 'attn-cli compare "river bank" "money bank" --json',
    'attn-cli compare "river bank" "money bank" --cross'))
def compare(
    ctx: typer.Context,
    texts: Annotated[Optional[list[str]], typer.Argument(
        metavar="SENTENCE...", show_default=False,
        help="Two or more quoted sentences (with --cross: SOURCE TARGET); - reads one per line from "
             "stdin.")] = None,
    word: Annotated[Optional[list[str]], typer.Option("--word", metavar="W", show_default=False,
                                                      rich_help_panel=COMPARE_PANEL,
                                                      help="Compare only this word (repeatable; default: every "
                                                           "word in two or more sentences).")] = None,
    cross: Annotated[bool, typer.Option("--cross", rich_help_panel=COMPARE_PANEL,
                                        help="Cross-attention: TARGET's tokens (queries) attend over SOURCE's "
                                             "(keys and values).")] = False,
    input_format: InputFormatOption = "text",
) -> None:
    """Compare the same word across sentences, or (--cross) let one sentence attend over another."""
    engine = EngineOptions.of(ctx)
    settings = engine.settings()
    texts = texts or []
    if cross and word:
        raise UsageError("--word chooses words to compare across sentences; leave it out with --cross, which "
                         "shows every target token")
    if len(texts) >= 2 and STDIN not in texts and all(len(text.split()) == 1 for text in texts):
        raise UsageError(f"compare takes whole sentences, one argument each, and got {len(texts)} single words "
                         f"({shorten(' '.join(texts), 60)}); quote each sentence, e.g. {COMPARE_EXAMPLE}")
    outputs = ReportOutputs(renderer("compare", "render_cross" if cross else "render_compare"),
                            style="json" if engine.json else "tables", files=engine.picture_files(
                                stdin=STDIN in texts), command_line=command_line(ctx), one_document=True)
    example = "printf 'river bank flows\\nmoney bank grows\\n' | attn-cli compare -"
    lines = [line for text in texts for line in input_lines(text, None, input_format, example)]
    if engine.file is not None:  # after the arguments; an empty file adds no sentence
        lines += stream_lines(engine.file, input_format)
    found = [line.sentence() for line in lines]  # the first unreadable line ends the run
    if cross and len(found) != 2:
        raise InputError(f"--cross takes exactly two sentences, SOURCE then TARGET (got {len(found)}); e.g. "
                         f"{COMPARE_EXAMPLE} --cross")
    if len(found) < 2:
        raise InputError(f"compare needs at least two sentences (got {len(found)}); e.g. {COMPARE_EXAMPLE}")
    results = []
    for number, (text, line, result) in enumerate(zip(found, lines, explain_many(
            found, vectors=engine.load(warn, progress=not engine.json), settings=settings)), 1):
        where = line.where or f"sentence {number}"
        if isinstance(result, LineError):
            raise InputError(f'{where} ("{shorten(text, 60)}"): {as_options(result.error)}')
        warn_unknown(result, where)
        results.append(result)
    if cross:
        report = cross_attend(results[0], results[1]).document()
    else:
        report = compare_sentences(results, word=tuple(word or ())).document()
        report["sentences"] = [block if line.number is None else with_input(block, line.number, line.id, line.meta)
                               for block, line in zip(report["sentences"], lines)]
    outputs.show(report)
    outputs.finish()


def warn_unknown(result: ExplainResult, where: str = "") -> None:
    """A warning naming the unknown words the result left out (and where, if given)."""
    if result.unknown_words:
        warn(f"skipped {result.unknown_words}{f' in {where}' if where else ''}: not in the vocabulary")


app.command(cls=Command, epilog=examples(
    "attn-cli train --demo --out demo.npz",
    "attn-cli train corpus.txt --out layer.npz --heads 2",
    'attn-cli explain "money bank grows" --weights demo.npz'))(train)
app.command(cls=EngineCommand, epilog=examples(
    "attn-cli senses bank --example",
    "attn-cli senses bank --example --clusters 2 --json",
    "attn-cli senses bank --example --html senses.html"))(senses)
app.add_typer(vectors_app, name="vectors")


def main() -> None:
    """Run the command line; it ends with SystemExit(exit code), as click's standalone mode does."""
    app()
