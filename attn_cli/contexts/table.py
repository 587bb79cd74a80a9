"""`Occurrences`: one row per occurrence of a word in a corpus, as columns (numpy arrays and lists): all the scan
keeps of a corpus, read by the grouping or any data tool."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from attn_cli.contexts.columns import ROW_COLUMNS
from attn_cli.errors import InputError, InputTypeError, require_iterable
from attn_cli.settings import MAX_OCCURRENCES, Settings
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:
    import pyarrow

    from attn_cli.batches import LineError

    from attn_cli.training.weights import TrainedLayer


@dataclass(frozen=True, eq=False)
class Occurrences:
    """Every occurrence of `word` found in a corpus, one row each, in corpus order; `static` [d_out] is the word's
    own vector through the layer's value space, blind to context."""

    word: str
    settings: Settings
    vectors: Vectors
    static: np.ndarray
    line: np.ndarray  # int64 [m]: 1-based corpus line
    position: np.ndarray  # int64 [m]: the token's place in its sentence, dropped tokens counted (Token.position)
    token: list[str]  # as typed
    sentence: list[str]  # the line's text, without its line break
    outputs: np.ndarray  # float64 [m, d_out]: the word's contextual output
    bags: np.ndarray  # float64 [m, d]: the mean static vector of the sentence's tokens (bag-of-words baseline)
    context_words: list[list[str]]  # the sentence's other tokens as typed
    context_shares: list[np.ndarray]  # each one's share of the occurrence's shift
    first_line: int = 1  # the number of the first line read (a later part of a corpus keeps its numbers)
    lines_read: int = 0  # corpus lines read by the scan (with the word or not)
    skipped_lines: int = 0  # lines with a possible occurrence that could not be attended (too long, all unknown)
    # the first of them with its InputError, which names the setting to change (None for a table read from a file)
    first_skipped: LineError | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        count = len(self.line)
        lengths = {name: len(getattr(self, name)) for name in ROW_COLUMNS}
        if any(length != count for length in lengths.values()):
            raise InputError(f"the columns of an Occurrences table differ in length: {lengths}")

    def __len__(self) -> int:
        return len(self.line)

    @property
    def lines_with_word(self) -> int:
        """How many lines hold at least one occurrence."""
        return len(np.unique(self.line))

    @classmethod
    def concat(cls, parts: Sequence[Occurrences]) -> Occurrences:
        """The tables of consecutive parts of one corpus (a Dask partition each, say) as one, in their order; the
        counts of lines add up. They must share word, settings and vectors."""
        parts = list(require_iterable("parts", parts, "Occurrences tables"))
        if not parts:
            raise InputError("Occurrences.concat needs at least one table")
        for index, part in enumerate(parts):
            if not isinstance(part, Occurrences):
                raise InputTypeError(f"parts[{index}] must be an Occurrences table, not {type(part).__name__}")
        first = parts[0]
        for before, part in zip(parts, parts[1:]):
            if part.first_line != before.first_line + before.lines_read:
                raise InputError(f"Occurrences.concat joins consecutive parts of a corpus: a part read from line "
                                 f"{before.first_line:,} to {before.first_line + before.lines_read - 1:,} is followed "
                                 f"by one from line {part.first_line:,}")
            if (part.word, part.settings, part.vectors.fingerprint) != (first.word, first.settings,
                                                                           first.vectors.fingerprint):
                raise InputError("Occurrences.concat joins tables of one word, settings and vector set only")
        columns = {name: [getattr(part, name) for part in parts] for name in ROW_COLUMNS}  # arrays stacked, lists too
        joined: dict[str, Any] = {name: np.concatenate(column) if isinstance(column[0], np.ndarray)
                                  else [value for part in column for value in part] for name, column in columns.items()}
        return cls(word=first.word, settings=first.settings, vectors=first.vectors, static=first.static,
                   first_line=first.first_line, lines_read=sum(part.lines_read for part in parts),
                   skipped_lines=sum(part.skipped_lines for part in parts),
                   first_skipped=next((part.first_skipped for part in parts if part.first_skipped), None), **joined)

    def to_arrow(self) -> pyarrow.Table:
        """One row per occurrence as an Arrow table, its `group` column null (needs pyarrow; columns.py)."""
        from attn_cli.contexts.columns import to_arrow

        return to_arrow(self)

    def write_parquet(self, path: str | os.PathLike[str]) -> None:
        """The table as a Parquet file, whole or not at all (`group` null: SensesResult.write_parquet fills it)."""
        from attn_cli.contexts.columns import write_parquet

        write_parquet(path, self)

    @classmethod
    def read_parquet(cls, path: str | os.PathLike[str], *, vectors: Any = None,
                     weights: TrainedLayer | str | os.PathLike[str] | None = None,
                     max_occurrences: int = MAX_OCCURRENCES) -> Occurrences:
        """A table written by `write_parquet` (or `attn-cli senses --parquet`), read with the vectors (and trained
        layer) it was scanned with; like a scan, it holds at most `max_occurrences` rows (an InputError)."""
        from attn_cli.contexts.columns import read_parquet

        return read_parquet(path, cls, vectors=vectors, weights=weights, max_occurrences=max_occurrences)

    def __repr__(self) -> str:
        return (f"<Occurrences {self.word!r}: {len(self):,} in {self.lines_with_word:,} of {self.lines_read:,} "
                f"lines>")
