"""Where sentences come from: an argument, `-` for stdin, or a file; one sentence per non-blank line.

Kept apart from cli/app.py so every command reads its input the same way. Lines are
read as bytes, as they arrive, so a batch streams (the first sentence is processed
before the last one arrives) and a line that is not UTF-8, or not the JSON object
`--input-format jsonl` expects, is reported with its number instead of ending the run.
`ready_groups` hands a batch its lines in groups of those already read, so lines
that come fast share work (one neighbour search) and a slow pipe is still
answered line by line.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import queue
import stat
import sys
import threading
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable, Iterator

from attn_cli.errors import InputError, UsageError, shown_path
from attn_cli.cli.messages import fail

STDIN = "-"
INPUT_FORMATS = ("text", "jsonl")
GROUP_LINES = 256  # lines computed together at most: the sentences of one length among them form one stack
_CHUNK = 1 << 16
# a mark at the start of a stream names its encoding; UTF-32-LE's begins with UTF-16-LE's, so it is tried first
BYTE_ORDER_MARKS = ((codecs.BOM_UTF32_LE, "UTF-32-LE"), (codecs.BOM_UTF32_BE, "UTF-32-BE"), (codecs.BOM_UTF8, "UTF-8"),
                    (codecs.BOM_UTF16_LE, "UTF-16-LE"), (codecs.BOM_UTF16_BE, "UTF-16-BE"))
MAX_LINE_BYTES = 1 << 20  # 1 MiB: a 5,000-token sentence of 20-letter words is a tenth of that
MAX_INT_DIGITS = 4300  # Python's own bound on converting text to int (sys.get_int_max_str_digits by default)
TERMINAL_NOTE = "reading sentences from the terminal, one per line; end with Ctrl-D (Ctrl-Z Enter on Windows)"


@dataclass(frozen=True)
class InputLine:
    """One sentence to process, or the reason its line could not be read."""

    text: str | None  # None when the line is unreadable (see error)
    number: int | None = None  # 1-based line number in stdin or the file (blank lines counted); None: an argument
    source: str = ""  # "stdin" or the file's path, for messages
    id: object = None  # jsonl: the line's "id" field (any JSON value), passed through to the output
    meta: dict = field(default_factory=dict)  # jsonl: every other field but "text", passed through as "meta"
    error: str | None = None  # why the line cannot be read (no location: see `located`)

    @property
    def where(self) -> str:
        """'line 17 of stdin' ('' for a sentence argument)."""
        return "" if self.number is None else f"line {self.number} of {self.source}"

    def located(self, message: str) -> str:
        """The message with where it happened, for stderr: 'line 17 of stdin: ...'."""
        return f"{self.where}: {message}" if self.where else message

    def sentence(self) -> str:
        """The line's text, or an InputError naming the line when it cannot be read."""
        if self.error is not None:
            raise InputError(self.located(self.error))
        assert self.text is not None  # a line without an error always has its text
        return self.text


def input_lines(argument: str | None, file: Path | None, input_format: str = "text",
                example: str = 'echo "money bank grows" | attn-cli explain -',
                flag: str = "--file", source: str | None = None, kind: str = "sentence",
                blanks: bool = False) -> Iterator[InputLine]:
    """The sentence argument itself, or each non-blank line of stdin ('-') or of `file` (named `flag` in
    messages, and its lines 'line N of `source`', its path by default), in order; a line holds one `kind`
    ("sentence", "label"), as messages say. With `blanks` a blank line is yielded too, as an empty line: senses
    matches a corpus and its labels line by line, and a stream of blank lines is then counted as it is read."""
    if argument is not None and file is not None:
        raise UsageError("give a SENTENCE (or - for stdin) or --file PATH, not both")
    if argument is None and file is None:
        raise UsageError(f"give a SENTENCE, - to read one per line from stdin, or --file PATH; e.g. {example}")
    if argument is not None and argument != STDIN:
        yield InputLine(argument)
        return
    found = False
    for line in _stream_lines(file, input_format, flag, source, kind, blanks):
        found = found or line.text != ""
        yield line
    if not found:
        where = "on stdin" if file is None else f"in {flag} {shown_path(file)}"
        raise InputError(f"no {kind} {where}; give one {kind} per line, e.g. {example}")


def line_list(arguments: list[str], file: Path | None, example: str, input_format: str = "text") -> list[InputLine]:
    """Every argument in order ('-' expands to the lines of stdin), then the lines of `file`; all readable."""
    found = [readable(line) for argument in arguments for line in input_lines(argument, None, input_format, example)]
    if file is not None:
        found += [readable(line) for line in _stream_lines(file, input_format)]
    return found


def readable(line: InputLine) -> InputLine:
    """The line itself, or an InputError naming the line when it cannot be read."""
    line.sentence()
    return line


def _stream_lines(file: Path | None, input_format: str, flag: str = "--file",
                  source: str | None = None, kind: str = "sentence", blanks: bool = False) -> Iterator[InputLine]:
    if file is None:
        if _stdin_is_a_terminal():  # else a person sees a run that waits without a word
            fail(TERMINAL_NOTE, kind="note")
        read_back(_stdin_descriptor(), "stdin")
        yield from parse_lines(text_lines(stdin_reader(), "stdin"), "stdin", input_format, kind, blanks)
        return
    descriptor = open_input(file, flag, kind)
    try:
        read_back(descriptor, f"{flag} {shown_path(file)}")
        source = source or str(file)
        yield from parse_lines(text_lines(lambda size: os.read(descriptor, size), source), source, input_format,
                               kind, blanks)
    finally:
        os.close(descriptor)


def _stdin_is_a_terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):  # closed or replaced by something without isatty
        return False


def _stdin_descriptor() -> int | None:
    """stdin's descriptor, None when a stream without one stands in for it (a test runner's)."""
    try:
        return sys.stdin.buffer.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return None


def read_back(source: int | Path | None, name: str) -> None:
    """Refuse an input (`name`: a descriptor open on it, or its path) that is the very regular file stdout writes
    into, as GNU cat does ("input file is output file"): `--file f.txt >> f.txt` would read its own results back
    as sentences and grow the file without end, and `--vectors v.txt >> v.txt` would write into the vectors."""
    if stdout_file(source):
        raise InputError(f"{name} is also stdout (input file is output file): the results would be written into "
                         "the input; redirect stdout to another file")


def stdout_file(source: int | Path | None, regular: bool = True) -> bool:
    """Whether `source` (a descriptor, or a path, followed through links) is the very regular file stdout writes
    into (with `regular` False: whatever stdout is, a pipe or a terminal too); False when either has no file
    behind it (a test runner's stream)."""
    try:
        found, written = os.stat(source if source is not None else -1), os.fstat(sys.stdout.fileno())
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return False
    return ((stat.S_ISREG(found.st_mode) or not regular)
            and (found.st_dev, found.st_ino) == (written.st_dev, written.st_ino))


def input_may_wait(argument: str | None, file: Path | None) -> bool:
    """Whether reading the input can block: stdin that is a pipe or a terminal (not a file, not a test's stream)."""
    if argument != STDIN or file is not None:
        return False
    try:
        return not stat.S_ISREG(os.fstat(sys.stdin.buffer.fileno()).st_mode)
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return False


def stdin_reader() -> Callable[[int], bytes]:
    """How stdin is read: from its descriptor, or from the stream that stands in for it (a test runner's)."""
    descriptor = _stdin_descriptor()
    if descriptor is None:
        return getattr(sys.stdin.buffer, "read1", sys.stdin.buffer.read)
    return lambda size: os.read(descriptor, size)


def text_lines(read: Callable[[int], bytes], source: str) -> Iterator[bytes]:
    """The lines of a text stream as UTF-8 bytes (see raw_lines): the one place an input's encoding is decided.

    A byte order mark names the encoding: UTF-8's is dropped, a UTF-16 or UTF-32 stream is decoded as it
    arrives (a character that breaks that encoding ends the run, naming its line). Without a mark the bytes
    are taken as UTF-8, and parse_lines refuses a line that is not (Latin-1, UTF-16 without a mark).
    """
    head, encoding = _marked(read)
    pending = [head] if head else []

    def reread(size: int) -> bytes:
        return pending.pop() if pending else read(size)

    return raw_lines(_recoded(reread, encoding, source) if encoding != "UTF-8" else reread)


def _marked(read: Callable[[int], bytes]) -> tuple[bytes, str]:
    """The first bytes of the stream without their byte order mark, and the encoding it names (UTF-8 without one).

    Bytes are read until they hold a whole mark or cannot begin one, so a person typing is never kept waiting."""
    head = b""
    while any(len(head) < len(mark) and mark.startswith(head) for mark, _ in BYTE_ORDER_MARKS):
        chunk = read(_CHUNK)
        if not chunk:
            break
        head += chunk
    for mark, encoding in BYTE_ORDER_MARKS:
        if head.startswith(mark):
            return head[len(mark):], encoding
    return head, "UTF-8"


def _recoded(read: Callable[[int], bytes], encoding: str, source: str) -> Callable[[int], bytes]:
    """`read` of a UTF-16 or UTF-32 stream (past its mark) as UTF-8 bytes, decoded a chunk at a time. A character
    that breaks the encoding ends the stream with an InputError naming its line, once the text before it is read."""
    decoder = codecs.getincrementaldecoder(encoding)()
    lines = 0  # line ends decoded so far, to say where a broken character is
    broken: list[InputError] = []

    def recode(size: int) -> bytes:
        nonlocal lines
        if broken:
            raise broken[0]
        while True:
            chunk = read(size)
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                text = exc.object[:exc.start].decode(encoding)  # the decoder's bytes up to the broken character
                broken.append(InputError(f"line {lines + text.count(chr(10)) + 1} of {source} is not valid "
                                         f"{encoding}, as its byte order mark says it is; convert it to UTF-8 "
                                         f"(e.g. iconv -f {encoding} -t UTF-8)"))
                if not text:
                    raise broken[0] from None
            lines += text.count("\n")
            if text or not chunk:
                return text.encode("utf-8")

    return recode


def raw_lines(read: Callable[[int], bytes]) -> Iterator[bytes]:
    """The lines `read(size)` returns as they arrive, each with its newline (the last one may lack it).

    Read with os.read, not through sys.stdin's buffered reader, so a thread may wait on it
    without holding a lock the interpreter needs at exit. A line longer than MAX_LINE_BYTES is
    yielded as its first MAX_LINE_BYTES + 1 bytes, without a newline, and reading stops there:
    `/dev/zero` or a binary file has no end of line to wait for.
    """
    pending = b""
    while chunk := read(_CHUNK):
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        yield from (line + b"\n" for line in lines)
        if len(pending) > MAX_LINE_BYTES:
            yield pending[:MAX_LINE_BYTES + 1]
            return
    if pending:
        yield pending


def ready_groups(lines: Iterable[InputLine], size: int = GROUP_LINES,
                 may_wait: bool = True) -> Iterator[list[InputLine]]:
    """The lines in order, in groups of up to `size` of those already read when a group starts.

    When reading may wait (a pipe, a terminal), a thread reads ahead (at most 4 x size lines);
    a group takes the next line, waiting for it, then whatever else has arrived: a fast pipe
    gives full groups, a person typing groups of one. A file never waits, so it is simply cut
    into groups, without the thread's cost (docs/benchmarks.md). An error while
    reading (a missing --file, a line too long) is raised after a group of the lines before it.
    """
    if not may_wait:
        items = _ended(lines)
        while group := list(islice(items, size)):
            yield from _until_error(group)
        return
    arrived: queue.Queue = queue.Queue(maxsize=4 * size)
    end = object()

    def read() -> None:
        for item in _ended(lines):
            arrived.put(item)
        arrived.put(end)

    threading.Thread(target=read, name="attn-cli input", daemon=True).start()
    while True:
        group = [arrived.get()]
        while len(group) < size and isinstance(group[-1], InputLine):
            try:
                group.append(arrived.get_nowait())
            except queue.Empty:
                break
        if group[-1] is end:
            yield from _until_error(group[:-1])
            return
        yield from _until_error(group)


def _ended(lines: Iterable[InputLine]) -> Iterator[InputLine | Exception]:
    """The lines, then the error that ended reading them, if one did (raised later, in the caller's thread)."""
    try:
        yield from lines
    except Exception as exc:
        yield exc


def _until_error(group: list) -> Iterator[list[InputLine]]:
    """The group's lines (if any), then the error that ends it raised: only a group's last item can be one."""
    ready, last = group[:-1], group[-1:]
    if last and isinstance(last[0], Exception):
        if ready:
            yield ready
        raise last[0]
    if group:
        yield group


def open_input(path: Path, flag: str = "--file", kind: str = "sentence") -> int:
    """The input file (--file, --labels, or train's CORPUS: `flag`) of a `kind` a line, opened for reading bytes (a
    descriptor), or a usage error naming what is wrong with it. `-` names no file here (stdin is /dev/stdin)."""
    shown = shown_path(path)
    try:
        if str(path) == STDIN:
            raise UsageError(f"{flag} - names no file; give {flag} /dev/stdin to read stdin")
        if path.is_dir():
            raise IsADirectoryError
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise UsageError(f"{flag} {shown}: no such file; pass a text file with one {kind} per line") from None
    except IsADirectoryError:
        raise UsageError(f"{flag} {shown} is a directory; pass a text file with one {kind} per line") from None
    except OSError as exc:
        raise UsageError(f"{flag} {shown}: {exc.strerror}; pass a readable text file") from None


def parse_lines(stream: Iterable[bytes], source: str, input_format: str,
                kind: str = "sentence", blanks: bool = False) -> Iterator[InputLine]:
    """Each non-blank line as an InputLine: plain text, or (jsonl) an object with a "text" field; with `blanks`
    a blank one too, as an empty line (see input_lines)."""
    for number, raw in enumerate(stream, 1):
        if len(raw) > MAX_LINE_BYTES:
            raise InputError(too_long(number, source, raw, kind))
        text, error = decoded(raw)
        if error:
            yield InputLine(None, number, source, error=error)
            continue
        if not text.strip():
            if blanks:
                yield InputLine("", number, source)
            continue
        text = text.rstrip("\r\n")
        yield json_line(text, number, source) if input_format == "jsonl" else InputLine(text, number, source)


def decoded(raw: bytes) -> tuple[str, str]:
    """(the line's text, '') or ('', why it is not UTF-8 text, with the fix): invalid UTF-8 (Latin-1, say), or NUL
    bytes, which UTF-8 allows but no text holds: they are UTF-16 or UTF-32 without a byte order mark."""
    if b"\0" in raw:
        return "", ("holds NUL bytes: UTF-16 or UTF-32 without a byte order mark, or binary data, not UTF-8 text; "
                    "convert it to UTF-8 (e.g. iconv -f UTF-16LE -t UTF-8)")
    try:
        return raw.decode("utf-8"), ""
    except UnicodeDecodeError:
        return "", "not valid UTF-8; convert it to UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)"


def _bounded_int(text: str) -> int:
    """A JSON integer of at most MAX_INT_DIGITS digits, Python's own bound, said in our words (Python's advises
    sys.set_int_max_str_digits, which a command-line user cannot call)."""
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise ValueError(f"a whole number of {digits:,} digits; ids and values may have at most {MAX_INT_DIGITS:,}")
    return int(text)


def too_long(number: int, source: str, raw: bytes, kind: str = "sentence") -> str:
    """Why a line over the cap ends the run: no sentence (or label: `kind`) is that long, so the input is not
    sentences."""
    binary = " (it holds NUL bytes: binary data, not text)" if b"\0" in raw else ""
    return (f"line {number} of {source} is longer than {MAX_LINE_BYTES >> 20} MiB, which no {kind} is{binary}; "
            f"give text with one {kind} per line")


JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "true or false", type(None): "null"}


def not_an_object(why: object) -> str:
    """What a JSON Lines line that holds no object says."""
    return (f"not a JSON object ({why}); with --input-format jsonl write one object per line, e.g. "
            '{"id": 1, "text": "money bank grows"}')


def unwritable(record: object) -> str | None:
    """Why a parsed record is no JSON, as the output would refuse it (None: it is): NaN, Infinity and 1e400 (read
    as infinity) are no JSON numbers, and a lone surrogate (\\ud800) is no text."""
    try:
        json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"a lone surrogate {exc.object[exc.start]!r} is not text"
    except ValueError:
        return "NaN, Infinity or a number beyond float64 is no JSON number"
    except RecursionError:
        return "nested too deeply"
    return None


def json_line(text: str, number: int, source: str) -> InputLine:
    """A JSON Lines record: {"text": "...", "id": ..., anything else}; "id" and the rest are passed through. A byte
    order mark starting the line (a file joined on with cat) is no part of it, as text mode reads it."""
    try:
        record = json.loads(text.removeprefix("\ufeff"), parse_int=_bounded_int)
    except (ValueError, RecursionError) as exc:
        return InputLine(None, number, source, error=not_an_object(
            "nested too deeply" if isinstance(exc, RecursionError) else exc))
    why = unwritable(record)
    if why is not None:
        return InputLine(None, number, source, error=not_an_object(why))
    if not isinstance(record, dict):  # a list nested 1,000 deep parses on Python 3.12 and later, not before
        return InputLine(None, number, source, error=not_an_object(f"a JSON {JSON_KINDS.get(type(record), 'value')}"))
    if not isinstance(record.get("text"), str):
        return InputLine(None, number, source, id=record.get("id"),
                         error='no "text" string in this JSON line; write e.g. {"id": 1, "text": "money bank grows"}')
    meta = {key: value for key, value in record.items() if key not in ("text", "id")}
    return InputLine(record["text"], number, source, id=record.get("id"), meta=meta)
