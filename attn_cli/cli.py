"""The `attn-cli` command line: parse, load, hand over to the library, pick a renderer.

No maths lives here. Every expected failure arrives as an `AttnError` (or a
parser error) and leaves as one line on stderr with its documented exit code.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Iterator

import typer
from typer.core import TyperGroup

from attn_cli import __version__
from attn_cli.errors import AttnError, InputError
from attn_cli.options import EngineOptions, with_engine_options
from attn_cli.render.json_out import write_json
from attn_cli.report import explain_report
from attn_cli.tokenize import describe_unknown, tokenize
from attn_cli.vectors import load_vectors
from attn_cli.vectors_cli import vectors_app

# The parser's own exception base (click's ClickException, vendored or not), found without private imports.
_ParserError = next(cls for cls in typer.BadParameter.__mro__ if cls.__name__ == "ClickException")


def fail(message: str, kind: str = "error") -> None:
    """One line on stderr, prefixed with the program name: never through Rich, never wrapped."""
    sys.stderr.write(f"attn-cli: {kind}: {message}\n")
    sys.stderr.flush()


def warn(message: str) -> None:
    fail(message, kind="warning")


class OneLineErrors(TyperGroup):
    """Runs the commands and turns every expected failure into one stderr line and an exit code."""

    def main(self, args=None, prog_name=None, standalone_mode=True, **extra):
        try:
            outcome = super().main(args=args, prog_name=prog_name or "attn-cli", standalone_mode=False, **extra)
            code = outcome if isinstance(outcome, int) else 0
        except AttnError as exc:
            fail(exc.message)
            code = exc.exit_code
        except _ParserError as exc:
            code = self._parser_failure(exc)
        except Exception as exc:  # a bug: say so in one line unless debugging
            if os.environ.get("ATTN_CLI_DEBUG"):
                raise
            fail(f"{type(exc).__name__}: {exc}; this is a bug: rerun with ATTN_CLI_DEBUG=1 and report the "
                 "traceback", kind="internal error")
            code = 1
        if standalone_mode:
            sys.exit(code)
        return code

    @staticmethod
    def _parser_failure(exc) -> int:
        context = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and context is not None:
            sys.stderr.write(context.get_help() + "\n")
            return exc.exit_code
        where = f" (see '{context.command_path} --help')" if context is not None else ""
        fail(f"{exc.format_message()}{where}")
        return exc.exit_code


app = typer.Typer(
    cls=OneLineErrors,
    name="attn-cli",
    help="See self-attention at work: every score, every softmax weight, and how each word's vector moves.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        print(f"attn-cli {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    """attn-cli: an attention inspector for static word vectors."""


@app.command()
@with_engine_options
def explain(
    sentence: Annotated[str, typer.Argument(help='The sentence, e.g. "money bank grows"; - reads one per line '
                                                 "from stdin.")],
    engine: EngineOptions,
) -> None:
    """Show scores, softmax weights, shifts and diagnostics of self-attention over SENTENCE."""
    config = engine.attention_config()
    include, neighbors, neighbor_vocab = engine.included(), engine.neighbor_count(), engine.neighbor_vocabulary()
    vectors = load_vectors(engine.vectors, engine.load_options(warn))
    console = None if engine.json else terminal_console()
    for text in sentences(sentence):
        tokenized = tokenize(text, vectors, engine.oov.value)
        unknown = [item for item in tokenized.dropped if item.reason == "out of vocabulary"]
        if unknown:
            fail(f"skipped {describe_unknown(unknown)}: not in the vocabulary", kind="warning")
        report = explain_report(text, tokenized, vectors, config, neighbors=neighbors,
                                neighbor_vocab=neighbor_vocab, include=include)
        if engine.json:
            write_json(report)
        else:
            from attn_cli.render.terminal import render_explain

            render_explain(report, console)


app.add_typer(vectors_app, name="vectors")


def terminal_console():
    """Rich is imported only for tables: --json runs skip its ~30 ms import."""
    from rich.console import Console

    return Console()


def sentences(argument: str) -> Iterator[str]:
    """The sentence itself, or each non-blank line of stdin for '-'."""
    if argument != "-":
        yield argument
        return
    found = False
    for line in sys.stdin:
        if line.strip():
            found = True
            yield line.rstrip("\r\n")
    if not found:
        raise InputError("no sentence on stdin; pipe one sentence per line, e.g. echo \"money bank grows\" | "
                         "attn-cli explain -")


def main() -> None:
    """Console-script entry point."""
    app()
