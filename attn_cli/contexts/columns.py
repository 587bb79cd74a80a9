"""An `Occurrences` table as Arrow columns and Parquet files, and back (pyarrow, the optional extra `parquet`).

One row per occurrence (the table's columns, and a grouping's `group`, from 1, and `label`, null until written);
the matrices go to Arrow as flat buffers, with no Python per number. The file's metadata (key `attn_cli`, JSON)
holds what grouping again needs: the word, the settings (a trained layer by its digest), the vector set, the
static vector and the line counts; reading refuses other vectors or weights. float64 numbers survive bit for bit.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from attn_cli.declared import declarations, is_real
from attn_cli.engine.attention import SHIFT_FLOOR
from attn_cli.errors import InputError, Option, SettingsError, WeightsError, path_argument, shorten, shown_path
from attn_cli.parquet import ParquetOut, arrow, text_array
from attn_cli.settings import Settings, check_max_occurrences
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:
    import pyarrow

    from attn_cli.training.weights import TrainedLayer

Table = Any  # an attn_cli.contexts.table.Occurrences (whose methods import this module: `make` builds it)

METADATA_KEY = "attn_cli"
FORMAT = "attn-cli occurrences 1"  # changed when the columns or the metadata change meaning


def to_arrow(table: Table, groups: np.ndarray | None = None, labels: Sequence[str] | None = None, *,
             feature: Option | None = None) -> pyarrow.Table:
    """The occurrences as an Arrow table with its metadata; `groups` (1-based, one per row) fills `group`, `labels`
    (one per row) `label`."""
    pa, _ = arrow(feature or Option("parquet", python_text="Occurrences.to_arrow"))
    return pa.Table.from_arrays(list(_columns(pa, table, groups, labels).values()), schema=_schema(pa, table))


def write_parquet(path: str | os.PathLike[str], table: Table, groups: np.ndarray | None = None,
                  labels: Sequence[str] | None = None, *, feature: Option | None = None) -> None:
    """The occurrences as a Parquet file, whole or not at all (attn_cli.parquet.ParquetOut's rules)."""
    feature = feature or Option("parquet", python_text="Occurrences.write_parquet")
    pa, _ = arrow(feature)
    with ParquetOut(path, _schema(pa, table), feature=feature) as out:
        out.write(_columns(pa, table, groups, labels))


def read_parquet(path: str | os.PathLike[str], make: Callable[..., Table], *, vectors: Any = None,
                 weights: TrainedLayer | str | os.PathLike[str] | None = None, max_occurrences: int) -> Table:
    """The occurrences a Parquet file holds, as `make` (the Occurrences class) builds them; `group` and `label` are
    left to data tools. `vectors` and `weights` must be those the table was written with (InputError, WeightsError
    for the layer). The footer is checked before any column is read, the table whole before it is used: a damaged
    one is an InputError saying what is wrong, never a failure later."""
    check_max_occurrences(max_occurrences)
    pa, parquet = arrow(Option("parquet", python_text="Occurrences.read_parquet"))
    path = path_argument("path", path)
    with _opened(pa, parquet, path) as stored:
        about = _metadata(stored.schema_arrow, path)
        settings, found, width = _settings(about, vectors, weights, path)
        _check_footer(stored.metadata, max_occurrences, 5 + width + found.dims + 2 * settings.max_tokens, path)
        try:
            fields = _checked(pa, stored, about, found.dims, width, settings.attention.heads)
        except (ValueError, TypeError, KeyError, IndexError, RecursionError, pa.ArrowException) as exc:
            raise damaged(path, str(exc)) from None
    return make(word=about["word"], settings=settings, vectors=found, first_line=about["first_line"],
                lines_read=about["lines_read"], skipped_lines=about["skipped_lines"], **fields)


def damaged(path: str, what: str) -> InputError:
    """The one error of a table whose metadata or columns are not what write_parquet writes; what it says is
    shortened (a message may quote a value of the file)."""
    what = shorten(" ".join(what.split()), 300)  # one line, whatever pyarrow's message
    return InputError(f"the occurrences table {shown_path(path)} is damaged: {what}; write it again with attn-cli "
                      "senses --parquet (or Occurrences.write_parquet)")


def _opened(pa: Any, parquet: Any, path: str) -> pyarrow.parquet.ParquetFile:
    """The file, its footer read; a path that holds none (missing, a folder, empty, a pipe: read from its end) is
    an InputError saying why."""
    shown = shown_path(path)
    if os.path.isdir(path):  # pyarrow would read every file in it as one table, under the first one's counts
        raise InputError(f"{shown} is a folder; read each table in it and join them in corpus order with "
                         "Occurrences.concat")
    try:
        mode = os.stat(path)
        empty = stat.S_ISREG(mode.st_mode) and mode.st_size == 0 or os.path.samefile(path, os.devnull)
        if empty:
            raise InputError(f"cannot read the occurrences table {shown}: it is empty; write it with attn-cli senses "
                             "--parquet (or Occurrences.write_parquet)")
        if not stat.S_ISREG(mode.st_mode):
            raise InputError(f"cannot read the occurrences table {shown}: it is a pipe or a device, and a Parquet "
                             "file is read from its end; save it to a file first")
        return parquet.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        reason = "no such file" if isinstance(exc, FileNotFoundError) else getattr(exc, "strerror", None) or exc
        raise InputError(f"cannot read the occurrences table {shown}: {reason}; give a Parquet file written by "
                         "Occurrences.write_parquet or attn-cli senses --parquet") from None


ABOUT = {"word": str, "settings": dict, "vectors": dict, "static": list, "first_line": int, "lines_read": int,
         "skipped_lines": int}  # the metadata's fields, each of its JSON type
VECTORS = {"name": str, "size": int, "dims": int, "fingerprint": str}  # its vectors' fields
LARGEST_LINE = 2**62  # first_line and the counts of lines are at most this, so their sums stay within int64
ROW_COLUMNS = ("line", "position", "token", "sentence", "outputs", "bags", "context_words", "context_shares")
WIDE = ("outputs", "bags")  # the columns whose width the metadata and the vectors fix
LEFT = ("group", "label")  # a grouping's columns: not read back, and `label` missing from a table of an older writer


TEXT_COLUMNS = ("token", "sentence", "context_words")  # a row's sentence, and its words again
TEXT_BYTES_PER_ROW = 1 << 20  # 1 MiB, a corpus line's bound: real rows average far less (--max-tokens words)


def _check_footer(metadata: Any, most: int, per_row: int, path: str) -> None:
    """What the footer counts, before any column is read (zeros compress to a few bytes a million): at most `most`
    rows, at most `per_row` values a row in the columns read, and in each row group's text columns, uncompressed,
    at most TEXT_BYTES_PER_ROW a row (and one row more)."""
    rows = metadata.num_rows
    if rows > most:
        raise InputError(f"the occurrences table {shown_path(path)} holds {rows:,} occurrences, more than the "
                         f"{most:,} a table read may hold; group a part of the corpus, or raise ",
                         Option("max_occurrences"))
    groups = [metadata.row_group(index) for index in range(metadata.num_row_groups)]
    values = sum(chunk.num_values for group in groups for chunk in map(group.column, range(group.num_columns))
                 if chunk.path_in_schema.split(".")[0] in (*ROW_COLUMNS, "group"))
    if values > rows * per_row:
        raise damaged(path, f"its footer counts {values:,} values in {rows:,} rows, more than such rows hold")
    for index, group in enumerate(groups):
        text = sum(chunk.total_uncompressed_size for chunk in map(group.column, range(group.num_columns))
                   if chunk.path_in_schema.split(".")[0] in TEXT_COLUMNS)
        if text > (group.num_rows + 1) * TEXT_BYTES_PER_ROW:  # one row more: the pages' own bytes
            raise InputError(f"the occurrences table {shown_path(path)} holds {text:,} bytes of text in the "
                             f"{group.num_rows:,} rows of its row group {index}, more than the "
                             f"{TEXT_BYTES_PER_ROW >> 20} MiB a row a corpus's lines give; it is not a table of "
                             "their occurrences")


def _checked(pa: Any, stored: pyarrow.parquet.ParquetFile, about: dict[str, Any], dims: int, width: int,
             heads: int) -> dict[str, Any]:
    """The row fields of a table, once everything `make` and grouping rely on holds (write_parquet's types and
    widths, no nulls, `_check_values`); ValueError (and the parse errors the caller catches) otherwise."""
    static = np.array(about["static"], dtype=np.float64)
    if len(static) != width:
        raise ValueError(f"its metadata's static has {len(static)} numbers, not the {width} its settings give for "
                         f"vectors of {dims} dims")
    types = _types(pa, width, dims)
    schema = stored.schema_arrow
    for name, kind in types.items():
        if name == "label" and name not in schema.names:
            continue
        if name not in schema.names or schema.field(name).type != kind:
            found = schema.field(name).type if name in schema.names else "missing"
            widths = f" (the settings give {width} numbers, the vectors {dims} dims)"
            raise ValueError(f"its column {name} is {found}, not {kind}{widths if name in WIDE else ''}")
    read = stored.read(columns=[name for name in types if name not in LEFT])
    columns = {name: read.column(name).combine_chunks() for name in types if name not in LEFT}
    nulls = [name for name, column in columns.items()
             if column.null_count or (pa.types.is_list(column.type) or pa.types.is_fixed_size_list(column.type))
             and column.flatten().null_count]
    if nulls:
        raise ValueError(f"its column {nulls[0]} has nulls")
    fields = {
        "static": static, "line": columns["line"].to_numpy(), "position": columns["position"].to_numpy(),
        "token": columns["token"].to_pylist(), "sentence": columns["sentence"].to_pylist(),
        "outputs": _matrix(columns["outputs"]), "bags": _matrix(columns["bags"]),
        "context_words": columns["context_words"].to_pylist(), "context_shares": _lists(columns["context_shares"])}
    _check_values(fields, columns, about, heads)
    return fields


def _check_values(fields: dict[str, Any], columns: dict[str, Any], about: dict[str, Any], heads: int) -> None:
    """The numbers of a table whose columns have the right types: ValueError naming the first that cannot be."""
    shares = columns["context_shares"].flatten().to_numpy()
    for name, values in (("static", fields["static"]), ("outputs", fields["outputs"]), ("bags", fields["bags"]),
                         ("context_shares", shares)):
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


def _schema(pa: Any, table: Table) -> pyarrow.Schema:
    return pa.schema(list(_types(pa, table.outputs.shape[1], table.bags.shape[1]).items()),
                     metadata={METADATA_KEY: json.dumps(_about(table), allow_nan=False)})


def _types(pa: Any, width: int, dims: int) -> dict[str, pyarrow.DataType]:
    """Each column's type, for outputs of `width` numbers and vectors of `dims`."""
    number, text = pa.float64(), pa.string()
    return {"line": pa.int64(), "position": pa.int64(), "token": text, "sentence": text, "group": pa.int64(),
            "label": text, "outputs": pa.list_(number, width), "bags": pa.list_(number, dims),
            "context_words": pa.list_(text), "context_shares": pa.list_(number)}


def _columns(pa: Any, table: Table, groups: np.ndarray | None,
             labels: Sequence[str] | None = None) -> dict[str, pyarrow.Array]:
    """Each column from the table's arrays; the nested ones as flat values with their offsets."""
    count = len(table)
    for name, given in (("groups", groups), ("labels", labels)):
        if given is not None and len(given) != count:
            raise InputError(f"{name} has {len(given):,} entries for {count:,} occurrences; give one per occurrence")
    offsets = np.concatenate([[0], np.cumsum([len(words) for words in table.context_words])]).astype(np.int32)
    shares = np.concatenate([np.asarray(row, dtype=np.float64) for row in table.context_shares]) if count else \
        np.zeros(0)
    return {
        "line": pa.array(np.asarray(table.line, dtype=np.int64)),
        "position": pa.array(np.asarray(table.position, dtype=np.int64)),
        "token": text_array(pa, table.token), "sentence": text_array(pa, table.sentence),
        "group": pa.nulls(count, pa.int64()) if groups is None else pa.array(np.asarray(groups, dtype=np.int64)),
        "label": pa.nulls(count, pa.string()) if labels is None else text_array(pa, labels),
        "outputs": _fixed_rows(pa, table.outputs), "bags": _fixed_rows(pa, table.bags),
        "context_words": pa.ListArray.from_arrays(
            offsets, text_array(pa, [word for words in table.context_words for word in words])),
        "context_shares": pa.ListArray.from_arrays(offsets, pa.array(shares, pa.float64())),
    }


def _fixed_rows(pa: Any, matrix: np.ndarray) -> pyarrow.Array:
    """[m, d] float64 as m fixed-size lists of d numbers over one flat buffer."""
    return pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(matrix, dtype=np.float64).ravel()),
                                             matrix.shape[1])


def _matrix(column: Any) -> np.ndarray:
    return column.flatten().to_numpy().reshape(len(column), column.type.list_size)


def _lists(column: Any) -> list[np.ndarray]:
    """A list column of numbers as one array per row (views of one flat array)."""
    offsets = column.offsets.to_numpy() - column.offsets[0].as_py()
    values = column.flatten().to_numpy()
    return [values[start:end] for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist())]


def _about(table: Table) -> dict[str, Any]:
    """The metadata: what reading needs besides the rows, and what it checks."""
    settings = table.settings
    layer = settings.layer_weights
    keywords = {name: getattr(settings, name) for name in declarations(Settings)}
    return {
        "format": FORMAT, "word": table.word,
        "settings": {**keywords, "weights": None if layer is None else layer.digest},
        "vectors": {"name": table.vectors.name, "size": table.vectors.count, "dims": table.vectors.dims,
                    "fingerprint": table.vectors.fingerprint},
        "static": np.asarray(table.static, dtype=np.float64).tolist(),
        "first_line": table.first_line, "lines_read": table.lines_read, "skipped_lines": table.skipped_lines,
    }


def _metadata(schema: Any, path: str) -> dict[str, Any]:
    """The metadata's JSON object; a file without it is no occurrences table, one whose JSON does not parse is a
    damaged one."""
    raw = (schema.metadata or {}).get(METADATA_KEY.encode())
    try:
        about = json.loads(raw) if raw else {}
    except (ValueError, RecursionError) as exc:
        raise damaged(path, f"its metadata is not JSON ({type(exc).__name__})") from None
    if not isinstance(about, dict):
        raise damaged(path, f"its metadata is a JSON {type(about).__name__}, not an object")
    if about.get("format") != FORMAT:
        raise InputError(f"{shown_path(path)} is not an occurrences table of this attn-cli (its metadata has no "
                         f"{FORMAT!r}); write it with Occurrences.write_parquet or attn-cli senses --parquet")
    _check_types(about, ABOUT, "metadata", path)
    _check_types(about["vectors"], VECTORS, "metadata's vectors", path)
    if not (1 <= about["first_line"] <= LARGEST_LINE and 0 <= about["skipped_lines"] <= about["lines_read"]
            <= LARGEST_LINE and all(0 <= about["vectors"][name] <= LARGEST_LINE for name in ("size", "dims"))):
        raise damaged(path, "its metadata's first_line, lines_read, skipped_lines or vectors' size or dims is out of "
                            "range")
    if not all(is_real(number) and abs(number) <= sys.float_info.max for number in about["static"]):  # 10**400 too
        raise damaged(path, "its metadata's static holds something that is not a finite number")
    return about


def _check_types(fields: dict[str, Any], kinds: dict[str, type], where: str, path: str) -> None:
    """Each of `kinds`' fields present in `fields` and of its JSON type (a bool is no number), else damaged."""
    for name, kind in kinds.items():
        value = fields.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise damaged(path, f"its {where}: {name} is {type(value).__name__}, not {kind.__name__}")


def _settings(about: dict[str, Any], vectors: Any, weights: Any, path: str) -> tuple[Settings, Vectors, int]:
    """The table's settings, the vectors given (checked against what the table was written with) and the outputs'
    width; settings the engine refuses are a damaged table, never an option the user did not give."""
    from attn_cli.api import as_vectors, resolve_settings

    stored = dict(about["settings"])
    digest = stored.pop("weights", None)
    if not (digest is None or isinstance(digest, str)):
        raise damaged(path, f"its settings' weights is {type(digest).__name__}, not a digest")
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
        raise damaged(path, f"its settings: {exc}") from None
    if settings.layer_weights is not None and settings.layer_weights.digest != digest:
        raise WeightsError(f"the weights given are not those {shown_path(path)} was scanned with (weights "
                           f"{(digest or '')[:12]}); pass the same weights file")
    found = as_vectors(vectors)
    wanted = about["vectors"]
    if found.fingerprint != wanted["fingerprint"]:
        raise InputError(f"{shown_path(path)} was scanned with the vectors {shorten(wanted['name'])} "
                         f"({wanted['size']:,} words x {wanted['dims']} dims), not {shorten(found.name)} "
                         f"({found.count:,} x {found.dims}); pass the same vectors to read it")
    try:
        settings.attention.check_width(found.dims)  # heads that do not divide the width
    except SettingsError as exc:
        raise damaged(path, f"its settings: {exc}") from None
    return settings, found, settings.attention.output_width(found.dims)

