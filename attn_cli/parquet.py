"""Parquet tables written with pyarrow (the extra `parquet`, imported only then), whole or not at all."""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any

from attn_cli.declared import is_whole
from attn_cli.errors import (InputTypeError, MissingExtra, Option, OutputError, SettingsError, SettingsTypeError,
                             UsageError, path_argument, shown_path)
from attn_cli.files import AtomicFile, WholeOrNothing, encodable, write_all

if TYPE_CHECKING:
    import pyarrow

    from attn_cli.results import ExplainResult


def arrow(name: str) -> tuple[ModuleType, ModuleType]:
    """pyarrow and pyarrow.parquet, or a MissingExtra naming `--parquet` (`name` in Python) and the extra."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise MissingExtra(Option("parquet", python_text=name), ' needs pyarrow: pip install "attn-cli[parquet]"'
                           ) from None
    return pyarrow, pyarrow.parquet


class ParquetOut(WholeOrNothing):
    """A Parquet file in an AtomicFile: a failed write or a table never closed leaves the path as it was."""

    group_rows = 1 << 16  # rows per row group when added a few at a time: large enough for readers, flat memory

    def __init__(self, path: str | os.PathLike[str], schema: pyarrow.Schema, *, name: str) -> None:
        self._pyarrow, parquet = arrow(name)
        self.path = path_argument("path", path)
        self.schema = schema
        self._pending: dict[str, list] = {column: [] for column in schema.names}
        try:
            self._file = AtomicFile(self.path)
        except OSError as exc:
            raise OutputError.of_file(shown_path(self.path), exc) from exc
        sink = Sink(self._file)
        try:
            self._writer = parquet.ParquetWriter(sink, self.schema)
        except BaseException:
            self._file.discard()
            raise
        # a table never closed (dropped, or open as the interpreter leaves) is discarded, its temporary file too
        self._discard = weakref.finalize(self, sink.discard, self._writer)

    def write(self, columns: Mapping[str, Any]) -> None:
        with self._writing():
            self._write(columns)

    def add_rows(self, columns: Mapping[str, Iterable]) -> None:  # held until `group_rows` make a row group
        with self._writing():
            for name, values in columns.items():
                self._pending[name] += values
            if len(self._pending[self.schema.names[0]]) >= self.group_rows:
                self._write_pending()

    def close(self) -> None:
        if not self._discard.alive:
            return
        with self._writing():
            self._write_pending()
            self._writer.close()
            self._file.close()
        self._discard.detach()

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A failure discards the table; an OSError is an OutputError naming the path."""
        if not self._discard.alive:
            raise UsageError(f"the Parquet table {shown_path(self.path)} is already closed (or discarded); open "
                             "another to write more rows")
        try:
            yield
        except BaseException as exc:
            self.discard()
            if isinstance(exc, OSError) and not isinstance(exc, OutputError):
                raise OutputError.of_file(shown_path(self.path), exc) from exc
            raise

    def discard(self) -> None:
        """Leave the path as it was; a FIFO keeps the rows it got, without the footer readers need."""
        self._discard()

    def _write_pending(self) -> None:
        if self._pending[self.schema.names[0]]:
            self._write(self._pending)
            self._pending = {name: [] for name in self._pending}

    def _write(self, columns: Mapping[str, Any]) -> None:
        pa = self._pyarrow
        arrays = {name: values if isinstance(values, pa.Array) or self.schema.field(name).type != pa.string()
                  else text_array(pa, values) for name, values in columns.items()}
        self._writer.write_table(pa.Table.from_pydict(arrays, schema=self.schema))


def text_array(pa: Any, texts: Iterable[str | None]) -> pyarrow.Array:
    """A lone surrogate written as its escape: Arrow holds UTF-8 only."""
    return pa.array(encodable(texts), pa.string())


class Sink:
    """The file's stream until `discard`: after it the writer's footer goes nowhere."""

    closed = False

    def __init__(self, file: AtomicFile) -> None:
        self.file, self.writing = file, True

    def write(self, data: bytes) -> int:
        if self.writing:
            write_all(self.file.stream, data)
        return len(data)

    def flush(self) -> None:
        if self.writing:
            self.file.stream.flush()

    def close(self) -> None:
        self.closed = True  # the stream is the AtomicFile's to close

    def discard(self, writer: Any) -> None:  # the table's finaliser: it holds the sink and writer, not the table
        self.writing = False
        self.file.discard()
        writer.close()  # its footer goes nowhere; closed, the writer's finaliser does not try again


class ExplainParquet(ParquetOut):
    """explain's results as a Parquet table, one row per token (`--parquet`'s; columns in docs/batch.md).

        with attn_cli.ExplainParquet("tokens.parquet") as table:
            for number, result in enumerate(attn_cli.explain_many(lines), 1):
                if not isinstance(result, attn_cli.LineError):
                    table.add(result, line=number)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        pa, number, text = arrow("ExplainParquet")[0], "float64", "string"
        schema = pa.schema([("line", "int64"), ("index", "int64"), ("position", "int64"), ("token", text),
                            ("cosine", number), ("delta_norm", number), ("self_weight", number), ("pulled_by", text),
                            ("pulled_share", number)])
        super().__init__(path, schema, name="ExplainParquet")

    def add(self, result: ExplainResult, line: int | None = None) -> None:
        """One row per token of `result`, from its own `shifts`, so they equal its document's."""
        _check_row(result, line)  # before a row is held
        shifts = result.shifts
        pulls = [shift.pulled_by[0] if shift.pulled_by else None for shift in shifts]
        self.add_rows({
            "line": [line] * len(shifts), "index": range(len(shifts)),
            "position": [token.position for token in result.tokenized.tokens], "token": result.tokens,
            "cosine": [shift.cosine for shift in shifts], "delta_norm": [shift.delta_norm for shift in shifts],
            "self_weight": [shift.self_weight for shift in shifts],
            "pulled_by": [None if pull is None else pull.token for pull in pulls],
            "pulled_share": [None if pull is None else pull.shift_share for pull in pulls]})


def _check_row(result: object, line: object) -> None:
    from attn_cli.batches import LineError
    from attn_cli.results import ExplainResult

    if not isinstance(result, ExplainResult):
        skip = (f" (line {result.line:,} could not be attended: leave it out, as the example in "
                "help(attn_cli.ExplainParquet) does)" if isinstance(result, LineError) else "")
        raise InputTypeError(f"result must be an attn_cli.ExplainResult (of explain or explain_many), not "
                             f"{type(result).__name__}{skip}")
    if not (line is None or is_whole(line)):
        raise SettingsTypeError("line", f"must be a whole number or None, not {type(line).__name__}")
    if line is not None and not 0 <= line <= 2**63 - 1:  # type: ignore[operator]
        raise SettingsError("line", f"must be from 0 to 2**63 - 1, the numbers int64 holds (got {line!r})")
