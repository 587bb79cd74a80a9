"""Every occurrence of a word in a corpus, attending its own row only, a group of lines at a time; a line that
cannot hold the word is never tokenized."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable

import numpy as np

from attn_cli.api import check_layer, prepared, tokenized_for
from attn_cli.batches import GROUP_CELLS, GROUP_LINES, LINE_TYPES, Line, LineError, is_line, runs_within
from attn_cli.declared import is_whole
from attn_cli.contexts.table import LARGEST_LINE, ROW_COLUMNS, Occurrences
from attn_cli.engine.attention import AttentionResult, static_outputs
from attn_cli.engine.occurrences import occurrence_rows, word_layer
from attn_cli.engine.tokenize import TokenizedSentence
from attn_cli.errors import (InputError, InputTypeError, Option, SettingsError, SettingsTypeError, require_iterable,
                             shorten)
from attn_cli.settings import MAX_OCCURRENCES, Settings, check_max_occurrences
from attn_cli.vectors.store import Vectors, without_accents

THREADS = 1  # BLAS threads of the scan and the grouping: spinning threads slow small products (docs/benchmarks.md)


def occurrences(word: str, lines: Iterable[Line], *, first_line: int = 1, vectors: Any = None,
                settings: Settings | None = None, progress: Callable[[int], None] | None = None,
                max_occurrences: int = MAX_OCCURRENCES, **changes: Any) -> Occurrences:
    """Each token of `lines` whose vocabulary entry is `word`'s, with its contextual output; a line that cannot be
    attended is skipped and counted. `progress` hears the lines read after each group."""
    if not isinstance(word, str):
        raise InputTypeError(f"word must be a str, not {type(word).__name__}")
    lines = require_iterable("lines", lines, "sentences (str) or of word lists")
    if not is_whole(first_line):
        raise SettingsTypeError("first_line", f"must be a whole number, not {type(first_line).__name__}")
    if not 1 <= first_line <= LARGEST_LINE:  # the table's int64 line numbers hold the lines after it too
        raise SettingsError("first_line", f"must be a whole number from 1 to 2**62 (got {first_line!r})")
    check_max_occurrences(max_occurrences)
    if not (progress is None or callable(progress)):  # else a TypeError once the first group is read
        raise SettingsTypeError("progress", f"must be a function taking the lines read, or None, not "
                                            f"{type(progress).__name__}")
    chosen, found = prepared(vectors, settings, changes)
    check_layer(chosen, found)
    from threadpoolctl import threadpool_limits  # scikit-learn's own dependency

    numbered = enumerate(lines, first_line)
    with threadpool_limits(limits=THREADS):
        scan = Scan(word, found, chosen, first_line)
        while group := list(islice(numbered, GROUP_LINES)):
            scan.read(group)
            if progress is not None:
                progress(scan.lines_read)
            if scan.found > max_occurrences:
                raise InputError(f"more than {max_occurrences:,} occurrences of {word!r} by line "
                                 f"{scan.lines_read:,}; give a smaller corpus (or scan its parts: docs/senses-dask.md)"
                                 ", or raise ", Option("max_occurrences"))
        return scan.table()


def word_entry(word: str, vectors: Vectors, settings: Settings) -> tuple[str, AttentionResult]:
    """The vocabulary key the word's tokens match (as `tokenize` looks it up) and the layer over the word alone."""
    found = vectors.lookup(unicodedata.normalize("NFC", word)) if word else None
    if found is None:
        raise InputError(f"{shorten(word)!r} is not in the vocabulary of {vectors.name}, so no token can be it; "
                         "give a word the vector set knows")
    key, row = found
    return key, word_layer(vectors.rows([row])[0], settings.attention, settings.projections)


def folded(text: str) -> str:
    """Safe as a pre-filter: folded(c) equals folded(s) for each spelling s `Vectors.candidate_keys` tries for c."""
    if text.isascii():
        return text.lower()
    return without_accents(without_accents(without_accents(text).upper()).casefold())


def could_hold(line: Line, folded_key: str) -> bool:
    """False only for a str line without the folded key in its folded NFC text (a word list is always tokenized)."""
    return not isinstance(line, str) or folded_key in folded(line if line.isascii() else
                                                             unicodedata.normalize("NFC", line))


@dataclass
class Found:  # a line's occurrences before attention: its tokens and the indices of those that are the word
    number: int
    text: str
    tokenized: TokenizedSentence
    indices: list[int]


class Scan:  # the occurrences found so far, column by column, and the counts of lines

    def __init__(self, word: str, vectors: Vectors, settings: Settings, first_line: int) -> None:
        self.word, self.vectors, self.settings, self.first_line = word, vectors, settings, first_line
        self.key, self.layer = word_entry(word, vectors, settings)
        self.folded_key = folded(self.key)
        self.lines_read = self.skipped_lines = 0
        self.first_skipped: LineError | None = None  # the first line skipped, with why
        self.pending: list[Found] = []  # lines with the word, not attended yet
        self.columns: dict[str, list] = {name: [] for name in ROW_COLUMNS}

    @property
    def found(self) -> int:  # attended or waiting
        return len(self.columns["line"]) + sum(len(item.indices) for item in self.pending)

    def read(self, group: list[tuple[int, Line]]) -> None:
        """Attend once GROUP_LINES lines with the word wait: a rare word's stacks of one would cost per line."""
        self.lines_read += len(group)
        self.pending += [item for item in map(self._found, group) if item is not None]
        if len(self.pending) >= GROUP_LINES:
            self.attend_pending()

    def attend_pending(self) -> None:  # in runs of at most GROUP_CELLS numbers
        cells = lambda item: len(item.indices) * item.tokenized.embeddings.size  # noqa: E731  its copies of [n, d]
        for run in runs_within(self.pending, cells, GROUP_CELLS):
            for item in sorted(self._attended(run), key=lambda attended: attended[0].number):  # corpus order
                self._keep(item)
        self.pending = []

    def _found(self, numbered: tuple[int, Line]) -> Found | None:
        number, line = numbered
        if not is_line(line):  # bytes or None would otherwise pass as lines without the word
            raise InputTypeError(f"line {number:,} must be {LINE_TYPES}, not {type(line).__name__}")
        if not could_hold(line, self.folded_key):
            return None
        try:
            tokenized = tokenized_for(line, self.vectors, self.settings)  # a pretrained model's pieces and inputs
        except InputError as error:
            self._skip(number, error)
            return None
        indices = [i for i, token in enumerate(tokenized.tokens) if token.key == self.key]
        text = line.rstrip("\r\n") if isinstance(line, str) else " ".join(line)  # a file's lines end with \n
        return Found(number, text, tokenized, indices) if indices else None

    def _skip(self, number: int, error: InputError) -> None:
        """Count it, keeping why if it is the first in corpus order (lines the layer refuses come later)."""
        self.skipped_lines += 1
        if self.first_skipped is None or number < self.first_skipped.line:
            self.first_skipped = LineError(number, error)

    def _attended(self, run: list[Found]) -> Iterator[tuple[Found, Any]]:
        """Each line with its occurrences' rows, one stack per length; a line the layer refuses is skipped."""
        lengths: dict[int, list[Found]] = {}
        for item in run:
            lengths.setdefault(len(item.tokenized.tokens), []).append(item)
        for stack in lengths.values():
            try:
                rows = self._rows(stack)
            except InputError as error:
                if len(stack) == 1:
                    self._skip(stack[0].number, error)
                    continue
                for item in stack:
                    yield from self._attended([item])
                continue
            start = 0
            for item in stack:
                yield item, [part[start:start + len(item.indices)] for part in rows]
                start += len(item.indices)

    def _rows(self, stack: list[Found]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # outputs, shares, bags
        embeddings = np.stack([item.tokenized.embeddings for item in stack])  # [B, n, d]
        sentences = np.array([s for s, item in enumerate(stack) for _ in item.indices], dtype=np.int64)
        positions = np.array([i for item in stack for i in item.indices], dtype=np.int64)
        rows = occurrence_rows(embeddings, sentences, positions, self.settings.attention, self.settings.projections)
        bags = embeddings.mean(axis=1)[sentences]  # [m, d]
        return rows.outputs, rows.shares, bags

    def _keep(self, attended: tuple[Found, Any]) -> None:
        item, (outputs, shares, bags) = attended
        tokens = item.tokenized.tokens
        for row, index in enumerate(item.indices):
            others = [j for j in range(len(tokens)) if j != index]
            self.columns["line"].append(item.number)
            self.columns["position"].append(tokens[index].position)
            self.columns["token"].append(tokens[index].text)
            self.columns["sentence"].append(item.text)
            self.columns["context_words"].append([tokens[j].text for j in others])
            self.columns["context_shares"].append(shares[row, others])
        self.columns["outputs"].append(outputs)
        self.columns["bags"].append(bags)

    def table(self) -> Occurrences:
        self.attend_pending()
        static, columns = static_outputs(self.layer)[0], self.columns
        return Occurrences(
            word=self.word, settings=self.settings, vectors=self.vectors, static=static,
            line=np.array(columns["line"], dtype=np.int64), position=np.array(columns["position"], dtype=np.int64),
            token=columns["token"], sentence=columns["sentence"],
            outputs=np.vstack(columns["outputs"]) if columns["outputs"] else np.zeros((0, len(static))),
            bags=np.vstack(columns["bags"]) if columns["bags"] else np.zeros((0, self.vectors.dims)),
            context_words=columns["context_words"], context_shares=columns["context_shares"],
            first_line=self.first_line, lines_read=self.lines_read, skipped_lines=self.skipped_lines,
            first_skipped=self.first_skipped)
