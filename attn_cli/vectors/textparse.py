"""Parse blocks of GloVe / word2vec text lines into words and float32 rows with whole-block numpy operations.

float() is too slow for a large GloVe file (docs/benchmarks.md), so every number is cut out as a fixed-width window
and all windows are evaluated column by column (Horner's rule): the exact integer of its digits over a power of ten,
rounded to float32. Lines the fast path cannot vouch for fall back to `parse_line`, which names what is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

from attn_cli.vectors.formats import is_number
from attn_cli.vectors.store import FLOAT32_MAX, MAX_WORD_BYTES  # a larger value is a bad line: the cache stores float32

_MAX_WIDTH = 24  # widest number the fast path evaluates; longer ones take the slow path
_MAX_DIGITS = 15  # every integer of up to 15 digits is exact in float64
_POWERS = 10.0 ** np.arange(_MAX_WIDTH + 1)
_SPACE, _NEWLINE, _MINUS, _DOT = 32, 10, 45, 46
MAX_LINE_BYTES = 1 << 20  # 1 MiB: a 4,096-dim line of 20-character numbers is 82 KB
MAX_DIMS = MAX_LINE_BYTES // 2  # 524,288: each number takes a space and a digit at least, so no line holds more


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
    """All lines of `chunk` (complete lines, the last one ending in a newline)."""
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
    regular = (counts - trailing == dims) & (word_end > starts) & (word_end - starts <= MAX_WORD_BYTES) & (counts > 0)
    if dims < 1:
        regular[:] = False

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
