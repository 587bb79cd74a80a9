"""Many sentences in one run: each group of lines computed, written and forgotten before the next.

A line that cannot be attended (unreadable, every word unknown, too long, nothing
left after tokenisation) does not end the run: with --json it becomes an error
object on its own line, otherwise one line on stderr, and the run ends with exit 3
saying how many lines failed. `--strict` stops at the first failure instead. A
single input line behaves exactly like a sentence argument: its failure is the
usual one-line error with nothing on stdout (so the first failed line is held
back until a second line shows that this is a batch).
"""

from __future__ import annotations

from typing import Callable, Iterable, Union

from attn_cli.errors import AttnError, InputError, Option, OutputError, UsageError, memory_named
from attn_cli.cli.inputs import InputLine
from attn_cli.cli.messages import as_options, bug_message
from attn_cli.cli.outputs import ReportOutputs, is_output_failure, silence_stdout, stdout_failure
from attn_cli import document_header

Document = Callable[[], dict]  # makes a line's document when it is shown: a group's are never all in memory at once
BuildGroup = Callable[[list[InputLine]], Iterable[Union[Document, InputError]]]  # per line, in order: its document, or
# why the line failed


def run_lines(groups: Iterable[list[InputLine]], build: BuildGroup, outputs: ReportOutputs, *, command: str,
              strict: bool, tell: Callable[[str], None]) -> None:
    """Build each group of lines, showing its documents in order as they are made; `tell` writes a failed line's
    message to stderr (not with --json). An error that ends the run at a line (--strict's, stdout's, a damaged
    cache's) says which lines it leaves unread."""
    count = failed = 0
    held: tuple[InputLine, str] | None = None  # a failed first line, until a second line arrives
    for group in groups:
        outcomes = iter(build(group))
        for place, line in enumerate(group):
            try:
                outcome = next(outcomes)
                count += 1
                if held is not None:
                    report_failure(*held, outputs, command, tell)
                    failed, held = failed + 1, None
                if isinstance(outcome, InputError):
                    if strict or line.number is None:
                        raise InputError(line.located(outcome.message)) from None
                    if count == 1:
                        held = (line, outcome.message)
                    else:
                        report_failure(line, outcome.message, outputs, command, tell)
                        failed += 1
                elif line.number is None:
                    outputs.show(outcome())
                elif not shown(line, outcome, outputs, command, tell, strict):
                    failed += 1
            except (AttnError, OSError) as exc:
                raise stopped(exc, group, place) from None
    if held is not None:  # the only line: fail as a sentence argument would
        raise InputError(held[0].located(held[1]))
    outputs.finish()
    if failed:
        raise InputError(f"{failed:,} of {count:,} input lines failed (see "
                         f"{'their error objects' if outputs.json else 'the messages above'}); "
                         "fix or remove them, or pass --strict to stop at the first")


def stopped(exc: AttnError | OSError, group: list[InputLine], place: int) -> Exception:
    """The error that ends the run at `group[place]`, saying what it leaves unread; a failed write to stdout is
    one (exit 2, stdout then silenced), any other OSError stays what it was; stdout's failures say the line."""
    if isinstance(exc, OutputError):  # also an OSError, but ours: it says what failed and the fix
        exc = OutputError(group[place].located(exc.message))
    elif isinstance(exc, OSError):
        if not is_output_failure(exc):
            return exc
        silence_stdout()
        exc = UsageError(group[place].located(stdout_failure(exc)))
    note = unread(group, place)
    return exc.noted(note) if note else exc


def unread(group: list[InputLine], place: int) -> str:
    """What a run that stops at `group[place]` leaves undone, said after its error: the lines read with it, and
    that the input after them was never read."""
    number = group[place].number
    if number is None:  # a sentence argument: nothing else to read
        return ""
    left = len(group) - place - 1
    kept = ("" if not left else f"line {group[-1].number:,} was read but not run, and " if left == 1 else
            f"lines {group[place + 1].number:,} to {group[-1].number:,} were read but not run, and ")
    return f" (the run stopped at line {number:,}: {kept}no line after line {group[-1].number:,} was read)"


def shown(line: InputLine, document: Document, outputs: ReportOutputs, command: str,
          tell: Callable[[str], None], strict: bool) -> bool:
    """Make and show one line's document; an error of its input met while making it (running out of memory
    included), or a bug met while making or writing it, fails that line alone (a bug's error object has code 1;
    never a cut document: write_json encodes a document whole before writing it)."""
    assert line.number is not None  # a line of stdin or --file
    try:
        with memory_named(document_too_large):
            outputs.show(with_input(document(), line.number, line.id, line.meta))
    except (OSError, KeyboardInterrupt, UsageError):  # stdout's failure (an OutputError), Ctrl-C, a picture's bound
        raise
    except InputError as exc:
        if strict:
            raise InputError(line.located(as_options(exc))) from None
        report_failure(line, as_options(exc), outputs, command, tell)
        return False
    except Exception as exc:
        report_failure(line, f"internal error: {bug_message(exc)}", outputs, command, tell, code=1)
        return False
    return True


def document_too_large() -> InputError:
    """Out of memory while a line's document is made and written: its matrices, as text, grow with n x n."""
    return InputError("out of memory making this sentence's document; shorten it, or lower ", Option("max_tokens"),
                      " to refuse sentences this long")


def report_failure(line: InputLine, message: str, outputs: ReportOutputs, command: str,
                   tell: Callable[[str], None], code: int = InputError.exit_code) -> None:
    if outputs.json:
        outputs.show_error(error_document(command, line.number, line.id, code, message))
    else:
        tell(line.located(message))


def with_input(report: dict, number: int, id: object, meta: dict) -> dict:
    """The document with the input line it came from: `line`, `id` (and `meta`) right after the header."""
    header = document_header(report["command"])
    located = {"line": number, "id": id, **({"meta": meta} if meta else {})}
    return {**{key: report[key] for key in header}, **located, **report}


def error_document(command: str, number: int | None, id: object, code: int, message: str) -> dict:
    """What a batch writes for a line that failed: where, and the one-line error with its exit code."""
    return {**document_header(command), "line": number, "id": id, "error": {"code": code, "message": message}}
