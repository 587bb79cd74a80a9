"""Stream a GloVe / word2vec text or word2vec binary file into the cache writer, BLOCK_BYTES at a time; a bad line
stops the import naming the file, the line and a snippet, unless `skip_bad_lines` counts it.

float() is too slow for a large GloVe file (docs/benchmarks.md), so every number of a block of text lines is cut
out as a fixed-width window and all windows are evaluated column by column (Horner's rule): the exact integer of its
digits over a power of ten, rounded to float32. Lines the fast path cannot vouch for fall back to `parse_line`,
which names what is wrong.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import numpy as np
from numpy.lib.stride_tricks import as_strided

from attn_cli.errors import Option, VectorsError
from attn_cli.vectors.cache import CacheWriter, LoadOptions
from attn_cli.vectors.formats import UTF8_BOM, header_of, is_number, split_records
from attn_cli.vectors.store import FLOAT32_MAX, MAX_WORD_BYTES  # a larger value is a bad line: the cache stores float32


BLOCK_BYTES = 8 << 20
PARSERS = 2  # text blocks parsed at once, one per core of the machines we measure on
_MAX_WIDTH = 24  # widest number the fast path evaluates; longer ones take the slow path
_MAX_DIGITS = 15  # every integer of up to 15 digits is exact in float64
_POWERS = 10.0 ** np.arange(_MAX_WIDTH + 1)
_SPACE, _NEWLINE, _MINUS, _DOT = 32, 10, 45, 46
MAX_LINE_BYTES = 1 << 20  # 1 MiB: a 4,096-dim line of 20-character numbers is 82 KB
MAX_DIMS = MAX_LINE_BYTES // 2  # 524,288: each number takes a space and a digit at least, so no line holds more
Progress = Callable[[int, int], None]  # (bytes read, words held)


class LineTooLong(Exception):
    """A line longer than MAX_LINE_BYTES, after `args[0]` complete lines of its block."""


class BadLine(ValueError):
    """A line that is not `WORD x1 ... xD`; `args[0]` says what is wrong with it."""


@dataclass
class Block:
    """The parsed lines of one block, in file order."""

    words: list[bytes]
    rows: np.ndarray  # [len(words), dims] float32
    line_numbers: np.ndarray  # [len(words)] 0-based line index within the block
    bad: list[tuple[int, str, bytes]]  # (0-based line index, reason, line) of lines that failed


def parse_line(line: bytes, dims: int) -> tuple[bytes, list[float]]:
    """One line by the slow path: the last `dims` fields are the vector, the rest is the word."""
    fields = line.rstrip().rsplit(None, dims)
    # a word may be a number ("2010") or hold spaces ("new york"), but a word with spaces that ends in a
    # number means a line with too many numbers
    if len(fields) != dims + 1 or not fields[0].strip() or _too_many_numbers(fields[0].strip()):
        found = max(len(line.split()) - 1, 0)
        raise BadLine(f"expected a word and {dims} numbers, found {found} number{'' if found == 1 else 's'}")
    word = fields[0].lstrip(b" ")
    if len(word) > MAX_WORD_BYTES:
        raise BadLine(f"a word of {len(word):,} bytes, longer than the {MAX_WORD_BYTES:,} a word may have")
    try:
        values = [float(field) for field in fields[1:]]
    except ValueError:
        bad = next(field for field in fields[1:] if not is_number(field))
        raise BadLine(f"{bad.decode('utf-8', 'replace')!r} is not a number") from None
    if not all(math.isfinite(value) for value in values):
        raise BadLine("NaN or infinite value")
    if any(abs(value) > FLOAT32_MAX for value in values):
        raise BadLine("a value beyond the float32 range (±3.4e38)")
    return word, values


def _too_many_numbers(word: bytes) -> bool:
    """A word part that holds white space and ends in a number: the line has more than `dims` numbers."""
    parts = word.rsplit(None, 1)
    return len(parts) == 2 and is_number(parts[1])


def parse_block(chunk: bytes, dims: int) -> Block:
    """All lines of `chunk` (complete lines, the last one ending in a newline); read_vectors makes dims >= 1."""
    buffer = np.frombuffer(chunk, dtype=np.uint8)
    if b"\r" in chunk or b"\t" in chunk:  # CRLF files, tab separators: both are plain spaces here
        buffer = buffer.copy()
        buffer[(buffer == 13) | (buffer == 9)] = _SPACE
    ends = np.flatnonzero(buffer == _NEWLINE)  # [n_lines] position of each line's newline
    starts = np.concatenate(([0], ends[:-1] + 1))
    too_long = np.flatnonzero(ends - starts > MAX_LINE_BYTES)
    if len(too_long):
        raise LineTooLong(int(too_long[0]))
    spaces = np.flatnonzero(buffer == _SPACE)
    first = np.searchsorted(spaces, starts)  # index in `spaces` of each line's first space
    counts = np.searchsorted(spaces, ends) - first
    trailing = (ends > starts) & (buffer[ends - 1] == _SPACE)  # one trailing space (word2vec C output)
    word_end = spaces[np.minimum(first, len(spaces) - 1)] if len(spaces) else starts
    regular = (counts - trailing == dims) & (word_end > starts) & (word_end - starts <= MAX_WORD_BYTES)

    lines = np.flatnonzero(regular)
    value_starts = (first[lines, None] + np.arange(dims)) if len(lines) else np.zeros((0, dims), np.int64)
    if len(lines) == len(ends) and not trailing.any() and len(spaces) == len(ends) * dims:
        token_starts = spaces.reshape(-1, dims) + 1  # [n, dims], every line regular: no gather needed
    else:
        token_starts = spaces[value_starts] + 1
    token_ends = np.empty_like(token_starts)
    token_ends[:, :-1] = token_starts[:, 1:] - 1
    token_ends[:, -1] = ends[lines] - trailing[lines]
    values, ok = _evaluate(buffer, token_starts.ravel(), token_ends.ravel())
    values = values.reshape(-1, dims)
    ok = ok.reshape(-1, dims) & (np.abs(values) <= FLOAT32_MAX)  # 1e40 would become inf in float32

    words = [chunk[s:e] for s, e in zip(starts[lines].tolist(), word_end[lines].tolist())]
    _retry_refused_numbers(chunk, token_starts, token_ends, values, ok)
    keep = ok.all(axis=1)
    slow = set(lines[~keep].tolist()) | set(np.flatnonzero(~regular).tolist())
    if keep.all() and not slow:
        return Block(words, values.astype(np.float32), lines, [])
    return _merge_slow_lines(chunk, starts, ends, dims, lines, keep, words, values, sorted(slow))


def _retry_refused_numbers(chunk: bytes, token_starts, token_ends, values, ok) -> None:
    """float() for the few numbers the fast path refused (1e-05, 0); what it cannot read leaves its line to the
    slow path, which reports it."""
    for row, column in zip(*np.nonzero(~ok)):
        try:
            value = float(chunk[token_starts[row, column]:token_ends[row, column]])
        except ValueError:
            continue
        if math.isfinite(value) and abs(value) <= FLOAT32_MAX:
            values[row, column] = value
            ok[row, column] = True


def _merge_slow_lines(chunk, starts, ends, dims, lines, keep, words, values, slow) -> Block:
    """Parse the lines the fast path refused one by one, and put everything back in file order."""
    bad, parsed = [], []  # parsed: (line index, word, row) of each refused line that parses after all
    for index in slow:
        line = chunk[starts[index]:ends[index]]
        if not line.strip():
            continue  # blank lines (a trailing one, say) carry nothing
        try:
            parsed.append((index, *parse_line(line, dims)))
        except BadLine as exc:
            bad.append((index, exc.args[0], line))
    all_lines = np.concatenate([lines[keep], np.asarray([item[0] for item in parsed], dtype=np.int64)])
    all_rows = np.concatenate([values[keep],
                               np.asarray([item[2] for item in parsed], dtype=np.float64).reshape(len(parsed), dims)])
    all_words = [word for word, good in zip(words, keep.tolist()) if good] + [item[1] for item in parsed]
    order = np.argsort(all_lines, kind="stable")
    return Block([all_words[i] for i in order.tolist()], all_rows[order].astype(np.float32), all_lines[order], bad)


def _evaluate(buffer: np.ndarray, token_starts: np.ndarray, token_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Decimal numbers `-?digits.digits` between the given offsets -> (float64 values, ok flags: False where the
    token is anything else)."""
    widths = token_ends - token_starts  # [T]
    if len(widths) == 0:
        return np.zeros(0), np.zeros(0, dtype=bool)
    dot_positions = _one_dot_each(buffer, token_starts, token_ends)
    one_dot = dot_positions >= 0
    width = int(min(max(widths.max(), 2), _MAX_WIDTH))
    width += width % 2  # whole byte pairs: the tables read two characters at a time
    padded = np.concatenate((buffer, np.zeros(width, dtype=np.uint8)))
    windows = as_strided(padded, shape=(len(buffer), width), strides=(1, 1))
    block = windows[np.minimum(token_starts, len(buffer) - 1)]  # [T, width] uint8, one number per row
    block &= _KEEP[np.minimum(widths, _MAX_WIDTH), :width]  # zero the next number's bytes
    accumulator = np.zeros(len(widths))
    scale = np.ones(len(widths))
    for column in block.view(np.uint16).T:  # Horner's rule, two characters at a time, skipping sign and dot
        multiplier = _PAIR_MULTIPLIER[column]
        accumulator *= multiplier
        accumulator += _PAIR_VALUE[column]
        scale *= multiplier
    negative = block[:, 0] == _MINUS
    digit_count = widths - 1 - negative
    ok = one_dot & (widths <= _MAX_WIDTH) & (digit_count <= _MAX_DIGITS)
    ok &= scale == _POWERS[np.clip(digit_count, 0, _MAX_WIDTH)]  # every other character was a digit
    decimals = np.clip(token_ends - dot_positions - 1, 0, _MAX_WIDTH)
    accumulator /= _POWERS[decimals]
    np.negative(accumulator, out=accumulator, where=negative)
    return accumulator, ok


def _one_dot_each(buffer: np.ndarray, token_starts: np.ndarray, token_ends: np.ndarray) -> np.ndarray:
    """The position of each token's decimal point, -1 where a token has none or several."""
    dots = np.flatnonzero(buffer == _DOT)
    if len(dots) == len(token_starts) and ((dots >= token_starts) & (dots < token_ends)).all():
        return dots  # the usual case: exactly one dot in every number, nothing to search
    if len(dots) == 0:
        return np.full(len(token_starts), -1)
    first = np.searchsorted(dots, token_starts)
    single = (np.searchsorted(dots, token_ends) - first) == 1
    return np.where(single, dots[np.minimum(first, len(dots) - 1)], -1)


def _pair_tables() -> tuple[np.ndarray, np.ndarray]:
    """For every two-byte pair (as a native uint16): the Horner multiplier and the digits' value."""
    pair = np.arange(65536, dtype=np.uint32)
    first, second = (pair & 0xFF, pair >> 8) if np.little_endian else (pair >> 8, pair & 0xFF)
    first_digit, second_digit = (first - 48) < 10, (second - 48) < 10
    multiplier = np.where(first_digit, 10.0, 1.0) * np.where(second_digit, 10.0, 1.0)
    value = np.where(first_digit, (first - 48.0), 0.0) * np.where(second_digit, 10.0, 1.0)
    value += np.where(second_digit, second - 48.0, 0.0)
    return multiplier, value


_PAIR_MULTIPLIER, _PAIR_VALUE = _pair_tables()
_KEEP = np.tril(np.full((_MAX_WIDTH + 1, _MAX_WIDTH), 0xFF, dtype=np.uint8), -1)  # row w: w bytes kept


def read_vectors(stream, path: Path, file_format: str, folder: Path, options: LoadOptions,
                 progress: Progress) -> CacheWriter:
    """The whole file into a cache writer on `folder`, by its format (a word2vec header first, if it has one)."""
    if stream.peek(3)[:3] == UTF8_BOM:  # Windows editors start UTF-8 text with one: not part of the first word
        stream.read(3)
    header = header_of(stream.readline(4096)) if file_format != "glove" else None
    if header is None and file_format == "word2vec-binary":
        raise VectorsError(f"{path} has no 'COUNT DIMS' header line; it is not word2vec binary (try ",
                           Option("format", "glove"), " or ", Option("format", "word2vec"), ")")
    if header is None and file_format == "word2vec":
        raise VectorsError(f"{path} has no 'COUNT DIMS' header line; pass ", Option("format", "glove"),
                           " for GloVe text")
    sample = stream.read(1 << 20) if header is None else b""
    dims = checked_dims(path, header[1]) if header else guess_dims(sample)
    if dims < 1:
        raise VectorsError(f"{path} holds no word vectors; pass a GloVe or word2vec vector file")
    writer = CacheWriter(folder, dims, options.limit, options.skip_bad_lines, header[0] if header else None)
    if file_format == "word2vec-binary":
        read_binary(stream, path, dims, writer, progress)
    else:
        read_text(stream, path, dims, writer, progress, first_line_number=2 if header else 1, prefix=sample)
    return writer


def checked_dims(path: Path, dims: int) -> int:
    """The width a 'COUNT DIMS' header announces, if a vector file can have it (1 to MAX_DIMS)."""
    if not 1 <= dims <= MAX_DIMS:
        raise VectorsError(f"{path}: its 'COUNT DIMS' header announces {dims:,} dimensions, and a vector file has "
                           f"1 to {MAX_DIMS:,}; the header is damaged, or this is not a word2vec file")
    return dims


def guess_dims(sample: bytes) -> int:
    """The vector width of a GloVe file: the most common field count minus one on its first lines."""
    counts = Counter(len(line.split()) - 1 for line in sample.split(b"\n")[:-1][:1000] if line.strip())
    return counts.most_common(1)[0][0] if counts else 0


def read_text(stream: BinaryIO, path: Path, dims: int, sink: CacheWriter, progress: Progress,
              first_line_number: int = 1, prefix: bytes = b"") -> None:
    """Text lines `word x1 ... xD` into the sink, in file order; blocks are parsed on threads (numpy releases the
    GIL) while the oldest is stored, so bad lines, line numbers and --limit behave as in one pass."""
    line_number = first_line_number
    blocks = line_blocks(stream, prefix)
    with ThreadPoolExecutor(PARSERS) as pool:
        parsing: deque = deque()
        while True:
            try:
                for chunk, done in islice(blocks, PARSERS + 1 - len(parsing)):  # keep every parser busy
                    parsing.append((pool.submit(parse_block, chunk, dims), chunk.count(b"\n"), done))
            except LineTooLong:  # the line after every line read so far
                raise too_long(path, line_number + sum(lines for _, lines, _ in parsing)) from None
            if not parsing:
                break
            future, lines, done = parsing.popleft()
            try:
                parsed = future.result()
            except LineTooLong as exc:
                raise too_long(path, line_number + exc.args[0]) from None
            for index, reason, line in parsed.bad:
                _bad_line(path, line_number + index, reason, line, sink)
            held = sink.add(parsed.words, parsed.rows)
            line_number += lines
            progress(done, held)
            if sink.limit is not None and held >= sink.limit:
                for waiting, _, _ in parsing:
                    waiting.cancel()
                break


def too_long(path: Path, number: int) -> VectorsError:
    return VectorsError(f"{path}, line {number:,}: longer than {MAX_LINE_BYTES >> 20} MiB, which no vector line "
                        "is; this is not a vector file, or it is damaged")


def line_blocks(stream: BinaryIO, prefix: bytes = b"") -> Iterator[tuple[bytes, int]]:
    """Blocks of whole lines (the last one completed) and the bytes read so far; a line that spans reads is joined
    once, when its newline arrives."""
    cut = prefix.rfind(b"\n") + 1
    if cut:  # the whole lines of what was read ahead (a sample) come first
        yield prefix[:cut], 0
    pending, pending_bytes, done = [prefix[cut:]], len(prefix) - cut, 0
    while data := stream.read(BLOCK_BYTES):
        done += len(data)
        cut = data.rfind(b"\n") + 1
        if cut == 0:  # no line ends in this read: the pending line grows
            pending.append(data)
            pending_bytes += len(data)
            if pending_bytes > MAX_LINE_BYTES:
                raise LineTooLong(0)
            continue
        block = b"".join([*pending, data[:cut]]) if pending_bytes else data[:cut]  # parse_block checks its lines
        pending, pending_bytes = [data[cut:]], len(data) - cut
        yield block, done
    block = b"".join(pending)
    if block:
        yield (block if block.endswith(b"\n") else block + b"\n"), done


def read_binary(stream: BinaryIO, path: Path, dims: int, sink: CacheWriter, progress: Progress) -> None:
    """word2vec binary records `word<space><dims float32 little-endian>[\\n]` into the sink, to the end of the file
    (the body wins over the header's count); a file that ends inside a record is truncated."""
    pending, done, seen = b"", 0, 0
    while True:
        data = stream.read(BLOCK_BYTES)
        done += len(data)
        buffer = pending + data
        words, matrix, used = split_records(buffer, dims)
        pending = buffer[used:]
        if words:
            finite = np.isfinite(matrix).all(axis=1)
            for row in np.flatnonzero(~finite).tolist():
                _bad_line(path, seen + row + 2, "NaN or infinite value", words[row], sink)
            seen += len(words)
            held = sink.add([w for w, ok in zip(words, finite.tolist()) if ok], matrix[finite])
            progress(done, held)
            if sink.limit is not None and held >= sink.limit:
                return
        if len(pending) >= MAX_WORD_BYTES + 2 + 4 * dims:  # a newline, a word, a space, the floats: no record is longer
            raise VectorsError(f"{path}: the word of record {seen + 1:,} is longer than {MAX_WORD_BYTES:,} bytes, "
                               "which no word is; this is not word2vec binary, or it is damaged")
        if not data:
            break
    if pending.strip():
        raise VectorsError(f"{path}: the file ends inside a record after {seen:,} words (the header promises "
                           f"{sink.header_count:,}); the file is truncated: download or copy it again")


def _bad_line(path: Path, number: int, reason: str, line: bytes, sink: CacheWriter) -> None:
    if looks_binary(line):  # no line to fix, and a snippet of it would be noise: the format is wrong
        raise VectorsError(f"{path}, line {number}: binary data, not text; leave out ", Option("format"),
                           " to have the format detected, or pass ", Option("format", "word2vec-binary"),
                           " (or fasttext-bin)")
    snippet = line[:60].decode("utf-8", "replace") + ("..." if len(line) > 60 else "")
    where = f"{path}, line {number}: {reason}: {snippet!r}"
    if not sink.skip_bad_lines:
        raise VectorsError(f"{where}; fix the line or pass ", Option("skip_bad_lines", True),
                           " to leave such lines out")
    sink.bad_lines += 1
    if len(sink.first_bad) < 3:
        sink.first_bad.append(where)


def looks_binary(line: bytes) -> bool:
    """More than one character in twenty a control character or a byte that is not UTF-8."""
    text = line.decode("utf-8", "replace")
    odd = sum(1 for char in text if char == "\ufffd" or (char < " " and char not in "\t\r\n"))
    return odd > max(2, len(text) // 20)
