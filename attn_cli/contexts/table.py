"""`Occurrences`: one row per occurrence of a word, as columns and as Arrow or Parquet (float64 bit for bit); a file
read is checked whole, so a damaged or hostile one is one InputError naming it, never a failure later."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from attn_cli.declared import declarations, is_real
from attn_cli.engine.attention import SHIFT_FLOOR
from attn_cli.errors import (AttnError, InputError, InputTypeError, Option, SettingsError, WeightsError,
                             path_argument, require_iterable, shorten, shown_path)
from attn_cli.parquet import ParquetOut, arrow, text_array
from attn_cli.settings import MAX_OCCURRENCES, Settings, check_max_occurrences
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:
    import pyarrow

    from attn_cli.batches import LineError
    from attn_cli.training.weights import TrainedLayer

ROW_COLUMNS = ("line", "position", "token", "sentence", "outputs", "bags", "context_words", "context_shares")
LARGEST_LINE = 2**62  # first_line and the counts of lines are at most this, so their sums stay within int64


@dataclass(frozen=True, eq=False)
class Occurrences:
    """Every occurrence of `word` in a corpus, in corpus order; `static` [d_out]: the word alone, blind to context."""

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
        if len(set(lengths := {name: len(getattr(self, name)) for name in ROW_COLUMNS}.values())) > 1:
            raise InputError(f"the columns of an Occurrences table differ in length: {lengths}")

    def __len__(self) -> int:
        return len(self.line)

    @property
    def lines_with_word(self) -> int:
        return len(np.unique(self.line))

    @classmethod
    def concat(cls, parts: Sequence[Occurrences]) -> Occurrences:
        """The tables of consecutive parts of one corpus (Dask partitions, say), of one word, settings and vectors."""
        parts = list(require_iterable("parts", parts, "Occurrences tables"))
        if not parts:
            raise InputError("Occurrences.concat needs at least one table")
        first = parts[0]
        for index, (before, part) in enumerate(zip([first, *parts], parts)):
            if not isinstance(part, Occurrences):
                raise InputTypeError(f"parts[{index}] must be an Occurrences table, not {type(part).__name__}")
            if index and part.first_line != before.first_line + before.lines_read:
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
        """One row per occurrence as an Arrow table, its `group` and `label` null."""
        return to_arrow(self, name="Occurrences.to_arrow")

    def write_parquet(self, path: str | os.PathLike[str]) -> None:
        """The table as a Parquet file, whole or not at all (`group` null: SensesResult.write_parquet fills it)."""
        write_parquet(path, self, name="Occurrences.write_parquet")

    @classmethod
    def read_parquet(cls, path: str | os.PathLike[str], *, vectors: Any = None,
                     weights: TrainedLayer | str | os.PathLike[str] | None = None,
                     max_occurrences: int = MAX_OCCURRENCES) -> Occurrences:
        """A table `write_parquet` wrote, read with the vectors (and layer) it was scanned with."""
        check_max_occurrences(max_occurrences)
        pa, parquet = arrow("Occurrences.read_parquet")
        path = path_argument("path", path)
        with _opened(pa, parquet, path) as stored:
            try:
                about = _metadata(stored.schema_arrow, path)
                settings, found = _settings(about, vectors, weights, path)
                width = settings.attention.output_width(found.dims)
                _check_footer(stored.metadata, max_occurrences, 5 + width + found.dims + 2 * settings.max_tokens,
                              path)
                fields = _checked(pa, stored, about, found.dims, width, settings.attention.heads)
            except AttnError:
                raise
            except (ValueError, TypeError, KeyError, IndexError, RecursionError, pa.ArrowException) as exc:
                what = shorten(" ".join(str(exc).split()), 300)  # one line, whatever pyarrow says
                raise InputError(f"the occurrences table {shown_path(path)} is damaged: {what}; write it again with "
                                 "attn-cli senses --parquet (or Occurrences.write_parquet)") from None
        return cls(word=about["word"], settings=settings, vectors=found, first_line=about["first_line"],
                   lines_read=about["lines_read"], skipped_lines=about["skipped_lines"], **fields)

    def __repr__(self) -> str:
        return (f"<Occurrences {self.word!r}: {len(self):,} in {self.lines_with_word:,} of {self.lines_read:,} "
                f"lines>")


METADATA_KEY = "attn_cli"
FORMAT = "attn-cli occurrences 1"  # changed when the columns or the metadata change meaning
ABOUT = {"word": str, "settings": dict, "vectors": dict, "static": list, "first_line": int, "lines_read": int,
         "skipped_lines": int}  # the metadata's fields, each of its JSON type
VECTORS = {"name": str, "size": int, "dims": int, "fingerprint": str}  # its vectors' fields
LEFT = ("group", "label")  # a grouping's columns: not read back, and `label` missing from a table of an older writer
TEXT_BYTES_PER_ROW = 1 << 20  # 1 MiB, a corpus line's bound: real rows average far less (--max-tokens words)


def to_arrow(table: Occurrences, groups: np.ndarray | None = None, labels: Sequence[str] | None = None, *,
             name: str) -> pyarrow.Table:
    """`groups` (1-based) fill `group`, `labels` `label`, one per row; `name` is what a missing pyarrow blames."""
    pa, _ = arrow(name)
    return pa.Table.from_arrays(list(_columns(pa, table, groups, labels).values()), schema=_schema(pa, table))


def write_parquet(path: str | os.PathLike[str], table: Occurrences, groups: np.ndarray | None = None,
                  labels: Sequence[str] | None = None, *, name: str) -> None:
    pa, _ = arrow(name)
    with ParquetOut(path, _schema(pa, table), name=name) as out:
        out.write(_columns(pa, table, groups, labels))


def _opened(pa: Any, parquet: Any, path: str) -> pyarrow.parquet.ParquetFile:
    """The file, its footer read; a path that holds none (missing, a folder, empty, a pipe) is an InputError."""
    if os.path.isdir(path):  # pyarrow would read every file in it as one table, under the first one's counts
        raise InputError(f"{shown_path(path)} is a folder; read each table in it and join them in corpus order "
                         "with Occurrences.concat")
    remedy = "give a Parquet file written by Occurrences.write_parquet or attn-cli senses --parquet"
    try:
        mode = os.stat(path)
        if stat.S_ISREG(mode.st_mode) and mode.st_size == 0 or os.path.samefile(path, os.devnull):
            reason, remedy = "it is empty", "write it with attn-cli senses --parquet (or Occurrences.write_parquet)"
        elif not stat.S_ISREG(mode.st_mode):
            reason = "it is a pipe or a device, and a Parquet file is read from its end"
            remedy = "save it to a file first"
        else:
            return parquet.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        reason = "no such file" if isinstance(exc, FileNotFoundError) else getattr(exc, "strerror", None) or str(exc)
    raise InputError(f"cannot read the occurrences table {shown_path(path)}: {reason}; {remedy}")


def _metadata(schema: Any, path: str) -> dict[str, Any]:
    raw = (schema.metadata or {}).get(METADATA_KEY.encode())
    try:
        about = json.loads(raw) if raw else {}
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"its metadata is not JSON ({type(exc).__name__})") from None
    if not isinstance(about, dict):
        raise ValueError(f"its metadata is a JSON {type(about).__name__}, not an object")
    if about.get("format") != FORMAT:
        raise InputError(f"{shown_path(path)} is not an occurrences table of this attn-cli (its metadata has no "
                         f"{FORMAT!r}); write it with Occurrences.write_parquet or attn-cli senses --parquet")
    for where, kinds in (("metadata", ABOUT), ("metadata's vectors", VECTORS)):
        fields = about if kinds is ABOUT else about["vectors"]
        for name, kind in kinds.items():  # a bool is no number
            if not isinstance(fields.get(name), kind) or isinstance(fields.get(name), bool):
                raise ValueError(f"its {where}: {name} is {type(fields.get(name)).__name__}, not {kind.__name__}")
    if not (1 <= about["first_line"] <= LARGEST_LINE and 0 <= about["skipped_lines"] <= about["lines_read"]
            <= LARGEST_LINE and all(0 <= about["vectors"][name] <= LARGEST_LINE for name in ("size", "dims"))):
        raise ValueError("its metadata's first_line, lines_read, skipped_lines or vectors' size or dims is out of "
                         "range")
    if not all(is_real(number) and abs(number) <= sys.float_info.max for number in about["static"]):  # 10**400 too
        raise ValueError("its metadata's static holds something that is not a finite number")
    return about


def _settings(about: dict[str, Any], vectors: Any, weights: Any, path: str) -> tuple[Settings, Vectors]:
    """Settings the engine refuses are a damaged table, never an option the user did not give."""
    from attn_cli.api import as_vectors, resolve_settings

    stored = dict(about["settings"])
    digest = stored.pop("weights", None)
    if not (digest is None or isinstance(digest, str)):
        raise ValueError(f"its settings' weights is {type(digest).__name__}, not a digest")
    if digest is not None and weights is None:
        raise WeightsError(f"{shown_path(path)} was scanned with a trained layer (weights {digest[:12]}); pass the "
                           "same weights file to read it")
    if digest is None and weights is not None:
        raise WeightsError(f"{shown_path(path)} was scanned without a trained layer; leave out the weights")
    if weights is not None:
        stored.pop("mode", None)  # "trained": the layer sets it, and its own settings equal the table's
        stored["weights"] = weights
    try:
        settings = resolve_settings(None, stored)
    except (SettingsError, TypeError) as exc:
        if isinstance(exc, SettingsError) and exc.setting == "weights":  # the layer given, not the table
            raise
        raise ValueError(f"its settings: {exc}") from None
    if settings.layer_weights is not None and settings.layer_weights.digest != digest:
        raise WeightsError(f"the weights given are not those {shown_path(path)} was scanned with (weights "
                           f"{(digest or '')[:12]}); pass the same weights file")
    found, wanted = as_vectors(vectors), about["vectors"]
    if found.fingerprint != wanted["fingerprint"]:
        raise InputError(f"{shown_path(path)} was scanned with the vectors {shorten(wanted['name'])} "
                         f"({wanted['size']:,} words x {wanted['dims']} dims), not {shorten(found.name)} "
                         f"({found.count:,} x {found.dims}); pass the same vectors to read it")
    try:
        settings.attention.check_width(found.dims)  # heads that do not divide the width
    except SettingsError as exc:
        raise ValueError(f"its settings: {exc}") from None
    return settings, found


def _check_footer(metadata: Any, most: int, per_row: int, path: str) -> None:
    """Before any column is read (zeros compress to a few bytes a million): at most `most` rows, `per_row` values
    a row, and TEXT_BYTES_PER_ROW of text a row (and one more) in each row group."""
    rows = metadata.num_rows
    if rows > most:
        raise InputError(f"the occurrences table {shown_path(path)} holds {rows:,} occurrences, more than the "
                         f"{most:,} a table read may hold; group a part of the corpus, or raise ",
                         Option("max_occurrences"))
    groups = [metadata.row_group(index) for index in range(metadata.num_row_groups)]
    chunks = [[group.column(c) for c in range(group.num_columns)] for group in groups]
    values = sum(chunk.num_values for columns in chunks for chunk in columns
                 if chunk.path_in_schema.split(".")[0] in (*ROW_COLUMNS, "group"))
    if values > rows * per_row:
        raise ValueError(f"its footer counts {values:,} values in {rows:,} rows, more than such rows hold")
    for index, (group, columns) in enumerate(zip(groups, chunks)):
        text = sum(chunk.total_uncompressed_size for chunk in columns
                   if chunk.path_in_schema.split(".")[0] in ("token", "sentence", "context_words"))
        if text > (group.num_rows + 1) * TEXT_BYTES_PER_ROW:  # one row more: the pages' own bytes
            raise InputError(f"the occurrences table {shown_path(path)} holds {text:,} bytes of text in the "
                             f"{group.num_rows:,} rows of its row group {index}, more than the "
                             f"{TEXT_BYTES_PER_ROW >> 20} MiB a row a corpus's lines give; it is not a table of "
                             "their occurrences")


def _checked(pa: Any, stored: pyarrow.parquet.ParquetFile, about: dict[str, Any], dims: int, width: int,
             heads: int) -> dict[str, Any]:
    static = np.array(about["static"], dtype=np.float64)
    if len(static) != width:
        raise ValueError(f"its metadata's static has {len(static)} numbers, not the {width} its settings give for "
                         f"vectors of {dims} dims")
    columns = _typed_columns(pa, stored, width, dims)
    shares = columns["context_shares"].flatten().to_numpy()
    offsets = columns["context_shares"].offsets.to_numpy() - columns["context_shares"].offsets[0].as_py()
    fields = {
        "static": static, "line": columns["line"].to_numpy(), "position": columns["position"].to_numpy(),
        "token": columns["token"].to_pylist(), "sentence": columns["sentence"].to_pylist(),
        "outputs": _matrix(columns["outputs"]), "bags": _matrix(columns["bags"]),
        "context_words": columns["context_words"].to_pylist(),
        "context_shares": [shares[start:end] for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist())]}
    for name, values in (("outputs", fields["outputs"]), ("bags", fields["bags"]), ("context_shares", shares)):
        if not np.isfinite(values).all():
            raise ValueError(f"{name} holds a number that is not finite")
    largest = heads / SHIFT_FLOOR  # a shift shorter than SHIFT_FLOOR of the vectors that make it has no shares
    if len(shares) and np.abs(shares).max() > largest:  # and each share is at most sqrt(heads) / |shift| of them
        raise ValueError(f"context_shares holds {np.abs(shares).max():.3g}, beyond the ±{largest:.3g} a share of "
                         "the shift can be")
    line, last = fields["line"], about["first_line"] - 1 + about["lines_read"]
    if len(line) and (line[0] < about["first_line"] or line[-1] > last or (np.diff(line) < 0).any()):
        raise ValueError(f"its column line is not in corpus order within lines {about['first_line']:,} to {last:,}")
    if (fields["position"] < 0).any():
        raise ValueError("its column position has a number below 0")
    if not np.array_equal(columns["context_words"].value_lengths(), columns["context_shares"].value_lengths()):
        raise ValueError("its context_words and context_shares differ in length for an occurrence")
    return fields


def _typed_columns(pa: Any, stored: pyarrow.parquet.ParquetFile, width: int, dims: int) -> dict[str, Any]:
    schema, types = stored.schema_arrow, _types(pa, width, dims)
    for name, kind in types.items():
        found = schema.field(name).type if name in schema.names else None
        if found != kind and not (name == "label" and found is None):
            wide = f" (the settings give {width} numbers, the vectors {dims} dims)" * (name in ("outputs", "bags"))
            raise ValueError(f"its column {name} is {'missing' if found is None else found}, not {kind}{wide}")
    read = stored.read(columns=[name for name in types if name not in LEFT])
    columns = {name: read.column(name).combine_chunks() for name in read.column_names}
    for name, column in columns.items():
        nested = pa.types.is_list(column.type) or pa.types.is_fixed_size_list(column.type)
        if column.null_count or nested and column.flatten().null_count:
            raise ValueError(f"its column {name} has nulls")
    return columns


def _matrix(column: Any) -> np.ndarray:
    return column.flatten().to_numpy().reshape(len(column), column.type.list_size)


def _schema(pa: Any, table: Occurrences) -> pyarrow.Schema:
    layer = table.settings.layer_weights
    about = {
        "format": FORMAT, "word": table.word,
        "settings": {**{name: getattr(table.settings, name) for name in declarations(Settings)},
                     "weights": None if layer is None else layer.digest},
        "vectors": {"name": table.vectors.name, "size": table.vectors.count, "dims": table.vectors.dims,
                    "fingerprint": table.vectors.fingerprint},
        "static": np.asarray(table.static, dtype=np.float64).tolist(),
        "first_line": table.first_line, "lines_read": table.lines_read, "skipped_lines": table.skipped_lines}
    return pa.schema(list(_types(pa, table.outputs.shape[1], table.bags.shape[1]).items()),
                     metadata={METADATA_KEY: json.dumps(about, allow_nan=False)})


def _types(pa: Any, width: int, dims: int) -> dict[str, pyarrow.DataType]:
    number, text = pa.float64(), pa.string()
    return {"line": pa.int64(), "position": pa.int64(), "token": text, "sentence": text, "group": pa.int64(),
            "label": text, "outputs": pa.list_(number, width), "bags": pa.list_(number, dims),
            "context_words": pa.list_(text), "context_shares": pa.list_(number)}


def _columns(pa: Any, table: Occurrences, groups: np.ndarray | None,
             labels: Sequence[str] | None) -> dict[str, pyarrow.Array]:
    # the matrices as flat buffers: no Python per number
    count = len(table)
    offsets = np.concatenate([[0], np.cumsum([len(words) for words in table.context_words])]).astype(np.int32)
    shares = np.concatenate([np.zeros(0), *(np.asarray(row, dtype=np.float64) for row in table.context_shares)])
    matrices = {name: pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(matrix, np.float64).ravel()),
                                                        matrix.shape[1])
                for name, matrix in (("outputs", table.outputs), ("bags", table.bags))}
    return {
        "line": pa.array(np.asarray(table.line, dtype=np.int64)),
        "position": pa.array(np.asarray(table.position, dtype=np.int64)),
        "token": text_array(pa, table.token), "sentence": text_array(pa, table.sentence),
        "group": pa.nulls(count, pa.int64()) if groups is None else pa.array(np.asarray(groups, dtype=np.int64)),
        "label": pa.nulls(count, pa.string()) if labels is None else text_array(pa, labels), **matrices,
        "context_words": pa.ListArray.from_arrays(
            offsets, text_array(pa, [word for words in table.context_words for word in words])),
        "context_shares": pa.ListArray.from_arrays(offsets, pa.array(shares, pa.float64())),
    }
