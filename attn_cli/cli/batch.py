"""Many sentences in one run: each group of lines computed, written and forgotten before the next. A failed line
is an error object (--json) or a stderr line and the run ends with exit 3, unless --strict stops it there."""

from __future__ import annotations

from typing import Callable, Iterable, Union

from attn_cli.errors import AttnError, InputError, Option, OutputError, UsageError, memory_named
from attn_cli.cli.inputs import InputLine
from attn_cli.cli.messages import as_options, bug_message
from attn_cli.cli.outputs import ReportOutputs, stdout_failure
from attn_cli import document_header
from attn_cli.render.json_out import write_json

Document = Callable[[], dict]  # makes a line's document when it is shown: a group's are never all in memory at once
# per line of a group, in order: its document, or why the line failed
BuildGroup = Callable[[list[InputLine]], Iterable[Union[Document, InputError]]]


def run_lines(groups: Iterable[list[InputLine]], build: BuildGroup, outputs: ReportOutputs, *, command: str,
              strict: bool, tell: Callable[[str], None]) -> None:
    """Build each group of lines and show its documents in order; `tell` says a failed line on stderr."""
    count = failed = 0
    held: InputLine | None = None  # a failed first line, until a second line shows this is a batch
    for group in groups:
        outcomes = iter(build(group))
        for place, line in enumerate(group):
            try:
                outcome = next(outcomes)
                count += 1
                if held is not None:
                    report_failure(held, held.error or "", outputs, command, tell)
                    failed, held = failed + 1, None
                if isinstance(outcome, InputError) and count == 1 and not strict and line.number is not None:
                    held = InputLine(None, line.number, line.source, line.id, error=outcome.message)
                elif not shown(line, outcome, outputs, command, tell, strict):
                    failed += 1
            except (AttnError, OSError) as exc:
                raise stopped(exc, group, place) from None
    if held is not None:  # the only line: fail as a sentence argument would
        held.sentence()
    outputs.finish()
    if failed:
        raise InputError(f"{failed:,} of {count:,} input lines failed (see "
                         f"{'their error objects' if outputs.json else 'the messages above'}); "
                         "fix or remove them, or pass --strict to stop at the first")


def stopped(exc: AttnError | OSError, group: list[InputLine], place: int) -> Exception:
    """The error that ends the run at `group[place]`, saying what it leaves unread; a failed write to stdout
    (exit 2, stdout then silenced) names the line, any other OSError stays what it was."""
    if isinstance(exc, OutputError):  # also an OSError, but ours: it says what failed and the fix
        exc = OutputError(group[place].located(exc.message))
    elif isinstance(exc, OSError):
        said = stdout_failure(exc)
        if said is None:
            return exc
        exc = UsageError(group[place].located(said))
    number, last = group[place].number, group[-1].number
    if number is None:  # a sentence argument: nothing else to read
        return exc
    left = len(group) - place - 1
    kept = ("" if not left else f"line {last:,} was read but not run, and " if left == 1 else
            f"lines {group[place + 1].number:,} to {last:,} were read but not run, and ")
    return exc.noted(f" (the run stopped at line {number:,}: {kept}no line after line {last:,} was read)")


def shown(line: InputLine, outcome: Document | InputError, outputs: ReportOutputs, command: str,
          tell: Callable[[str], None], strict: bool) -> bool:
    """Show one line's document; an InputError of the line (running out of memory making its document included),
    or a bug met making or writing it (code 1, never a cut document), fails that line alone."""
    if line.number is None and not isinstance(outcome, InputError):
        outputs.show(outcome())
        return True
    try:
        if isinstance(outcome, InputError):
            raise outcome
        with memory_named(lambda: InputError("out of memory making this sentence's document; shorten it, or lower ",
                                             Option("max_tokens"), " to refuse sentences this long")):
            outputs.show(with_input(outcome(), line.number, line.id, line.meta))  # type: ignore[arg-type]
        return True
    except (OSError, KeyboardInterrupt, UsageError):  # stdout's failure (an OutputError), Ctrl-C, a picture's bound
        raise
    except InputError as exc:
        if strict or line.number is None:
            raise InputError(line.located(as_options(exc))) from None
        report_failure(line, as_options(exc), outputs, command, tell)
    except Exception as exc:
        report_failure(line, f"internal error: {bug_message(exc)}", outputs, command, tell, code=1)
    return False


def report_failure(line: InputLine, message: str, outputs: ReportOutputs, command: str,
                   tell: Callable[[str], None], code: int = InputError.exit_code) -> None:
    if outputs.json:
        write_json({**document_header(command), "line": line.number, "id": line.id,
                    "error": {"code": code, "message": message}})
    else:
        tell(line.located(message))


def with_input(report: dict, number: int, id: object, meta: dict) -> dict:
    """The document with the input line it came from: `line`, `id` (and `meta`) right after the header."""
    header = document_header(report["command"])
    located = {"line": number, "id": id, **({"meta": meta} if meta else {})}
    return {**{key: report[key] for key in header}, **located, **report}
