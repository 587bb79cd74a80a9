"""Stream a GloVe / word2vec text or word2vec binary file into the cache writer, BLOCK_BYTES at a time; a bad line
stops the import naming the file, the line and a snippet, unless `skip_bad_lines` counts it."""

from __future__ import annotations

from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterator

import numpy as np

from attn_cli.errors import Option, VectorsError
from attn_cli.vectors.formats import split_records
from attn_cli.vectors.store import MAX_WORD_BYTES
from attn_cli.vectors.textparse import MAX_LINE_BYTES, LineTooLong, parse_block

if TYPE_CHECKING:
    from attn_cli.vectors.cache import CacheWriter

BLOCK_BYTES = 8 << 20
PARSERS = 2  # text blocks parsed at once, one per core of the machines we measure on


@dataclass
class Reading:
    """How to read (the first `limit` words; bad lines skipped or not) and what the reader met on the way."""

    limit: int | None = None
    skip_bad_lines: bool = False
    progress: Callable[[int, int], None] = lambda done_bytes, words: None
    header_count: int | None = None
    bad_lines: int = 0
    first_bad: list[str] = field(default_factory=list)


def read_header(stream: BinaryIO) -> tuple[int, int] | None:
    """'COUNT DIMS' from a word2vec header line, or None (the line is pushed back by the caller)."""
    line = stream.readline(4096)
    fields = line.split()
    if len(fields) == 2 and all(f.isdigit() for f in fields):
        return int(fields[0]), int(fields[1])
    return None


def guess_dims(sample: bytes) -> int:
    """The vector width of a GloVe file: the most common field count minus one on its first lines."""
    counts = Counter(len(line.split()) - 1 for line in sample.split(b"\n")[:-1][:1000] if line.strip())
    return counts.most_common(1)[0][0] if counts else 0


def read_text(stream: BinaryIO, path: Path, dims: int, sink: CacheWriter, options: Reading,
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
                _bad_line(path, line_number + index, reason, line, options)
            held = sink.add(parsed.words, parsed.rows)
            line_number += lines
            options.progress(done, held)
            if options.limit is not None and held >= options.limit:
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


def read_binary(stream: BinaryIO, path: Path, count: int, dims: int, sink: CacheWriter, options: Reading) -> None:
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
                _bad_line(path, seen + row + 2, "NaN or infinite value", words[row], options)
            seen += len(words)
            held = sink.add([w for w, ok in zip(words, finite.tolist()) if ok], matrix[finite])
            options.progress(done, held)
            if options.limit is not None and held >= options.limit:
                return
        if len(pending) >= MAX_WORD_BYTES + 2 + 4 * dims:  # a newline, a word, a space, the floats: no record is longer
            raise VectorsError(f"{path}: the word of record {seen + 1:,} is longer than {MAX_WORD_BYTES:,} bytes, "
                               "which no word is; this is not word2vec binary, or it is damaged")
        if not data:
            break
    if pending.strip():
        raise VectorsError(f"{path}: the file ends inside a record after {seen:,} words (the header promises "
                           f"{count:,}); the file is truncated: download or copy it again")


def _bad_line(path: Path, number: int, reason: str, line: bytes, options: Reading) -> None:
    if looks_binary(line):  # no line to fix, and a snippet of it would be noise: the format is wrong
        raise VectorsError(f"{path}, line {number}: binary data, not text; leave out ", Option("format"),
                           " to have the format detected, or pass ", Option("format", "word2vec-binary"),
                           " (or fasttext-bin)")
    snippet = line[:60].decode("utf-8", "replace") + ("..." if len(line) > 60 else "")
    where = f"{path}, line {number}: {reason}: {snippet!r}"
    if not options.skip_bad_lines:
        raise VectorsError(f"{where}; fix the line or pass ", Option("skip_bad_lines", True),
                           " to leave such lines out")
    options.bad_lines += 1
    if len(options.first_bad) < 3:
        options.first_bad.append(where)


def looks_binary(line: bytes) -> bool:
    """More than one character in twenty a control character or a byte that is not UTF-8."""
    text = line.decode("utf-8", "replace")
    odd = sum(1 for char in text if char == "\ufffd" or (char < " " and char not in "\t\r\n"))
    return odd > max(2, len(text) // 20)
