"""Where sentences come from: an argument, `-` for stdin, or a file; one sentence per non-blank line.

Lines are read as they arrive, so a batch streams and is answered line by line when someone types; a line
that is not UTF-8, or not the JSON object `--input-format jsonl` expects, fails alone, named by its number.
"""

from __future__ import annotations

import codecs
import contextlib
import itertools
import json
import math
import os
import re
import stat
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from attn_cli.errors import InputError, UsageError, shown_path
from attn_cli.cli.messages import fail

STDIN = "-"
INPUT_FORMATS = ("text", "jsonl")
GROUP_LINES = 256  # lines computed together at most: the sentences of one length among them form one stack
_CHUNK = 1 << 16
# a mark at the start of a stream names its encoding; UTF-32-LE's begins with UTF-16-LE's, so it is tried first
BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "UTF-32-LE"), (codecs.BOM_UTF32_BE, "UTF-32-BE"), (codecs.BOM_UTF8, "UTF-8"),
                    (codecs.BOM_UTF16_LE, "UTF-16-LE"), (codecs.BOM_UTF16_BE, "UTF-16-BE"))
MAX_LINE = 1 << 20  # UTF-8 bytes: no sentence is that long, and /dev/zero or binary data has no end of line to wait for
MAX_INT_DIGITS = 4300  # Python's own bound on converting text to int (sys.get_int_max_str_digits by default)
TERMINAL_NOTE = "reading sentences from the terminal, one per line; end with Ctrl-D (Ctrl-Z Enter on Windows)"
_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # the bytes of a line that is not UTF-8, as surrogateescape keeps them
JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "true or false", type(None): "null"}


@dataclass(frozen=True)
class InputLine:
    """One sentence to process, or the reason its line could not be read."""

    text: str | None  # None when the line is unreadable (see error)
    number: int | None = None  # 1-based line number in stdin or the file (blank lines counted); None: an argument
    source: str = ""  # "stdin" or the file's path, for messages
    id: object = None  # jsonl: the line's "id" field (any JSON value), passed through to the output
    meta: dict = field(default_factory=dict)  # jsonl: every other field but "text", passed through as "meta"
    error: str | None = None  # why the line cannot be read (no location: see `located`)
    last_read: bool = field(default=False, compare=False)  # the last line a read of a pipe or terminal returned

    @property
    def where(self) -> str:
        return "" if self.number is None else f"line {self.number} of {self.source}"

    def located(self, message: str) -> str:
        return f"{self.where}: {message}" if self.where else message

    def sentence(self) -> str:
        if self.error is not None:
            raise InputError(self.located(self.error))
        assert self.text is not None  # a line without an error always has its text
        return self.text


def input_lines(argument: str | None, file: Path | None, input_format: str = "text",
                example: str = 'echo "money bank grows" | attn-cli explain -',
                flag: str = "--file", source: str | None = None, kind: str = "sentence",
                blanks: bool = False) -> Iterator[InputLine]:
    """The sentence argument, or each non-blank line of stdin ('-') or of `file` (option `flag`, its lines
    'line N of `source`'); a line holds one `kind`. With `blanks` blank lines come too (senses pairs labels)."""
    if argument is not None and file is not None:
        raise UsageError("give a SENTENCE (or - for stdin) or --file PATH, not both")
    if argument is None and file is None:
        raise UsageError(f"give a SENTENCE, - to read one per line from stdin, or --file PATH; e.g. {example}")
    if argument is not None and argument != STDIN:
        yield InputLine(argument)
        return
    found = False
    for line in stream_lines(file, input_format, flag, source, kind, blanks):
        found = found or line.text != ""
        yield line
    if not found:
        where = "on stdin" if file is None else f"in {flag} {shown_path(file)}"
        raise InputError(f"no {kind} {where}; give one {kind} per line, e.g. {example}")


def stream_lines(file: Path | None, input_format: str, flag: str = "--file",
                 source: str | None = None, kind: str = "sentence", blanks: bool = False) -> Iterator[InputLine]:
    """Each non-blank line (with `blanks`, a blank one too, as an empty line) as an InputLine, the last of each
    read marked as such."""
    if file is None:  # a person typing is told how to end, else they see a run that waits without a word
        with contextlib.suppress(AttributeError, ValueError):  # closed, or replaced by something without isatty
            if sys.stdin.isatty():
                fail(TERMINAL_NOTE, kind="note")
    with open_input(file, flag, kind) if file is not None else contextlib.nullcontext(sys.stdin.buffer) as opened:
        try:
            descriptor: int | None = opened.fileno()
        except (AttributeError, ValueError, OSError):  # a stream without one (a test runner's)
            descriptor = None
        read_back(descriptor, "stdin" if file is None else f"{flag} {shown_path(file)}")
        may_wait = descriptor is not None and not stat.S_ISREG(os.fstat(descriptor).st_mode)  # a pipe, a terminal
        source = "stdin" if file is None else source or str(file)
        numbers = itertools.count(1)
        for texts in _decoded(getattr(opened, "read1", opened.read), source):
            parsed = []
            for text, number in zip(texts, numbers):  # texts first: zip then takes no number past them
                if len(text) > MAX_LINE >> 2 and len(text.encode("utf-8", "surrogateescape")) > MAX_LINE:
                    binary = " (it holds NUL bytes: binary data, not text)" if "\0" in text else ""
                    raise InputError(f"line {number} of {source} is longer than {MAX_LINE >> 20} MiB, which no "
                                     f"{kind} is{binary}; give text with one {kind} per line")
                line = _parsed(text, number, source, input_format)
                if line is not None or blanks:
                    parsed.append(line or InputLine("", number, source))
            yield from parsed[:-1]
            if parsed:
                yield replace(parsed[-1], last_read=may_wait)


def read_back(source: int | Path | None, name: str) -> None:
    """Refuse an input that is the very regular file stdout writes into, as GNU cat does: `--file f.txt >> f.txt`
    would read its own results back and grow the file without end."""
    if stdout_file(source):
        raise InputError(f"{name} is also stdout (input file is output file): the results would be written into "
                         "the input; redirect stdout to another file")


def stdout_file(source: int | Path | None, regular: bool = True) -> bool:
    """Whether `source` (a descriptor, or a path, followed through links) is the very regular file stdout writes
    into (with `regular` False: whatever stdout is, a pipe or a terminal too); False when either has no file."""
    try:
        found, written = os.stat(source if source is not None else -1), os.fstat(sys.stdout.fileno())
    except (AttributeError, ValueError, OSError):
        return False
    return ((stat.S_ISREG(found.st_mode) or not regular)
            and (found.st_dev, found.st_ino) == (written.st_dev, written.st_ino))


def _decoded(read: Callable[[int], bytes], source: str) -> Iterator[list[str]]:
    """Each read's complete lines, in the encoding a byte order mark names, else UTF-8 (a byte that is not UTF-8
    kept as a surrogate, for `_parsed` to refuse its line); a line over MAX_LINE characters ends reading, cut
    there, and a character that breaks a marked encoding ends it with an InputError naming its line."""
    head = b""  # read until it holds a whole mark or cannot begin one: a person typing is never kept waiting
    while any(len(head) < len(mark) and mark.startswith(head) for mark, _ in BYTE_ORDER_MARKS) and (
            chunk := read(_CHUNK)):
        head += chunk
    mark, encoding = next(((mark, name) for mark, name in BYTE_ORDER_MARKS if head.startswith(mark)), (b"", "UTF-8"))
    decoder = codecs.getincrementaldecoder(encoding)("surrogateescape" if encoding == "UTF-8" else "strict")
    pending, ended = "", 0  # ended: the line ends decoded so far
    for data in itertools.chain([head[len(mark):]], iter(lambda: read(_CHUNK), b"") if head else (), [None]):
        try:
            text, broken = decoder.decode(data or b"", final=data is None), False
        except UnicodeDecodeError as exc:
            text, broken = exc.object[:exc.start].decode(encoding), True  # the decoder's bytes up to the break
        *lines, pending = (pending + text).split("\n")
        ended += len(lines)
        yield lines
        if broken:
            raise InputError(f"line {ended + 1} of {source} is not valid {encoding}, as its byte order mark says it "
                             f"is; convert it to UTF-8 (e.g. iconv -f {encoding} -t UTF-8)")
        if len(pending) > MAX_LINE:
            yield [pending[:MAX_LINE + 1]]
            return
    if pending:
        yield [pending]


def ready_groups(lines: Iterable[InputLine], size: int = GROUP_LINES) -> Iterator[list[InputLine]]:
    """The lines in order, in groups of up to `size`, each ending too with a read of a pipe or terminal (a fast
    pipe shares work, a person typing is answered at once); a read's error follows a group of the lines before it."""
    group: list[InputLine] = []
    try:
        for line in lines:
            group.append(line)
            if len(group) == size or line.last_read:
                yield group
                group = []
    except Exception:
        if group:
            yield group
        raise
    if group:
        yield group


def open_input(path: Path, flag: str = "--file", kind: str = "sentence") -> BinaryIO:
    """The input file of option `flag` opened for reading bytes as they come, or a usage error naming what is
    wrong with it. `-` names no file here (stdin is /dev/stdin)."""
    if str(path) == STDIN:
        raise UsageError(f"{flag} - names no file; give {flag} /dev/stdin to read stdin")
    try:
        return open(path, "rb", buffering=0)
    except OSError as exc:
        said = {FileNotFoundError: ": no such file", IsADirectoryError: " is a directory"}.get(type(exc))
        fix = f"a text file with one {kind} per line" if said else "a readable text file"
        raise UsageError(f"{flag} {shown_path(path)}{said or f': {exc.strerror}'}; pass {fix}") from None


def _parsed(text: str, number: int, source: str, input_format: str) -> InputLine | None:
    """The line as text (UTF-8 without NUL bytes, which are UTF-16 or UTF-32 without a mark), or why it is not;
    None for a blank line."""
    if "\0" in text:
        return InputLine(None, number, source, error=(
            "holds NUL bytes: UTF-16 or UTF-32 without a byte order mark, or binary data, not UTF-8 text; convert "
            "it to UTF-8 (e.g. iconv -f UTF-16LE -t UTF-8)"))
    if _NOT_UTF8.search(text):
        return InputLine(None, number, source, error="not valid UTF-8; convert it to UTF-8 (e.g. iconv -f LATIN1 "
                                                     "-t UTF-8)")
    if not text.strip():
        return None
    text = text.rstrip("\r")
    return json_line(text, number, source) if input_format == "jsonl" else InputLine(text, number, source)


def _bounded_int(text: str) -> int:
    """Python's bound on digits, said in our words (Python's advises a call a command-line user cannot make)."""
    if (digits := len(text.lstrip("-"))) > MAX_INT_DIGITS:
        raise ValueError(f"a whole number of {digits:,} digits; ids and values may have at most {MAX_INT_DIGITS:,}")
    return int(text)


def _finite(text: str) -> float:
    if not math.isfinite(number := float(text)):
        raise ValueError("NaN, Infinity or a number beyond float64 is no JSON number")
    return number


def json_line(text: str, number: int, source: str) -> InputLine:
    """A JSON Lines record: {"text": "...", "id": ..., anything else}; a byte order mark starting the line (a
    file joined on with cat) is no part of it, as text mode reads it."""
    try:
        record = json.loads(text.removeprefix("\ufeff"), parse_int=_bounded_int, parse_float=_finite,
                            parse_constant=_finite)
        json.dumps(record, ensure_ascii=False).encode("utf-8")  # a lone surrogate is no text the output can hold
        why = None if isinstance(record, dict) else f"a JSON {JSON_KINDS.get(type(record), 'value')}"
    except UnicodeEncodeError as exc:
        why = f"a lone surrogate {exc.object[exc.start]!r} is not text"
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
    if why is not None:
        return InputLine(None, number, source, error=f"not a JSON object ({why}); with --input-format jsonl write "
                                                     'one object per line, e.g. {"id": 1, "text": "money bank grows"}')
    if not isinstance(record.get("text"), str):
        return InputLine(None, number, source, id=record.get("id"),
                         error='no "text" string in this JSON line; write e.g. {"id": 1, "text": "money bank grows"}')
    meta = {key: value for key, value in record.items() if key not in ("text", "id")}
    return InputLine(record["text"], number, source, id=record.get("id"), meta=meta)
