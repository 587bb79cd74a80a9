"""An `Occurrences` table as Arrow columns and Parquet files, and back (pyarrow, the optional extra `parquet`).

One row per occurrence: `line`, `position`, `token`, `sentence`, `group` (null until a grouping writes it,
then 1-based as the documents number groups), `outputs` and `bags` (fixed-size lists of float64),
`context_words` (list of strings) and `context_shares` (list of float64). The arrays go to Arrow as they are
(a matrix is one flat buffer with its width), so a table of 100,000 occurrences costs no Python per number.

What the rows need to be grouped again is in the file's metadata (key `attn_cli`, JSON): the word, the
settings as keywords (a trained layer by its digest), the vector set's name, size, dims and fingerprint, the
word's static vector, and the scan's line counts. Reading checks them: the vectors (and weights) given must be
the ones the table was written with, since grouping measures neighbours in their space. float64 numbers
survive both ways bit for bit (JSON writes a float as repr does), so a table read back groups exactly as the
one written.
"""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from attn_cli.declared import declarations, is_real
from attn_cli.errors import InputError, Option, OutputError, SettingsError, WeightsError, path_argument, shown_path
from attn_cli.parquet import ParquetOut, arrow
from attn_cli.settings import Settings
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:
    import pyarrow

    from attn_cli.training.weights import TrainedLayer

Table = Any  # an attn_cli.contexts.table.Occurrences (which imports this module: named here, not imported)

METADATA_KEY = "attn_cli"
FORMAT = "attn-cli occurrences 1"  # changed when the columns or the metadata change meaning


def to_arrow(table: Table, groups: np.ndarray | None = None, *, feature: Option | None = None
             ) -> pyarrow.Table:
    """The occurrences as an Arrow table with its metadata; `groups` (1-based, one per row) fills `group`."""
    pa, _ = arrow(feature or Option("parquet", python_text="Occurrences.to_arrow"))
    return pa.Table.from_arrays(list(_columns(pa, table, groups).values()), schema=_schema(pa, table))


def write_parquet(path: str | os.PathLike[str], table: Table, groups: np.ndarray | None = None, *,
                  feature: Option | None = None) -> None:
    """The occurrences as a Parquet file, whole or not at all (attn_cli.parquet.ParquetOut's rules)."""
    feature = feature or Option("parquet", python_text="Occurrences.write_parquet")
    path = path_argument("path", path)
    pa, _ = arrow(feature)
    try:
        with ParquetOut(path, _schema(pa, table), feature=feature) as out:
            out.write(_columns(pa, table, groups))
    except OSError as exc:  # named as the caller gave it, as write_file names it
        raise OutputError.of_file(shown_path(path), exc) from exc


def read_parquet(path: str | os.PathLike[str], make: Callable[..., Table], *, vectors: Any = None,
                 weights: TrainedLayer | str | os.PathLike[str] | None = None) -> Table:
    """The occurrences a Parquet file holds, as `make` (the Occurrences class) builds them from their fields; its
    `group` column, if filled, is left to data tools.

    `vectors` (as every function takes them; the embedded set by default) and `weights` (a trained layer's
    file or TrainedLayer, when the table was scanned with one) must be those the table was written with:
    InputError (WeightsError for the layer) naming what the file holds otherwise. The table is checked whole
    before it is used (`_checked`): a damaged one is an InputError saying what is wrong, never a failure later."""
    pa, parquet = arrow(Option("parquet", python_text="Occurrences.read_parquet"))
    path = path_argument("path", path)
    stored = _stored(pa, parquet, path)
    about = _metadata(stored.schema, path)
    settings, found = _settings(about, vectors, weights, path)
    try:
        fields = _checked(pa, stored, about, found.dims)
    except (ValueError, TypeError, KeyError, IndexError, RecursionError, pa.ArrowException) as exc:
        raise damaged(path, str(exc)) from None
    return make(word=about["word"], settings=settings, vectors=found, first_line=about["first_line"],
                lines_read=about["lines_read"], skipped_lines=about["skipped_lines"], **fields)


def damaged(path: str, what: str) -> InputError:
    """The one error of a table whose metadata or columns are not what write_parquet writes."""
    what = " ".join(what.split())  # one line, whatever pyarrow's message
    return InputError(f"the occurrences table {shown_path(path)} is damaged: {what}; write it again with attn-cli "
                      "senses --parquet (or Occurrences.write_parquet)")


def _stored(pa: Any, parquet: Any, path: str) -> pyarrow.Table:
    """The file's Arrow table; a path that holds none (missing, a folder, empty, a pipe) is an InputError saying
    why. A pipe is refused before pyarrow reads it: a Parquet file is read from its end."""
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
        return parquet.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        reason = "no such file" if isinstance(exc, FileNotFoundError) else getattr(exc, "strerror", None) or exc
        raise InputError(f"cannot read the occurrences table {shown}: {reason}; give a Parquet file written by "
                         "Occurrences.write_parquet or attn-cli senses --parquet") from None


ABOUT = {"word": str, "settings": dict, "vectors": dict, "static": list, "first_line": int, "lines_read": int,
         "skipped_lines": int}  # the metadata's fields, each of its JSON type
VECTORS = {"name": str, "size": int, "dims": int, "fingerprint": str}  # its vectors' fields
LARGEST_LINE = 2**62  # first_line and the counts of lines are at most this, so their sums stay within int64
WIDE = ("outputs", "bags")  # the columns whose width the metadata and the vectors fix


def _checked(pa: Any, stored: pyarrow.Table, about: dict[str, Any], dims: int) -> dict[str, Any]:
    """The row fields of a table, once everything `make` and grouping rely on holds: the metadata's fields of
    their types, the columns of write_parquet's types (outputs as wide as `static`, bags as the vectors' dims), no
    nulls, every number finite, lines within the lines read and in corpus order, positions from 0, each
    occurrence's context words and shares of one length. ValueError (and the parse errors the caller catches)
    otherwise."""
    static = np.array(about["static"], dtype=np.float64)
    types = _types(pa, len(static), dims)
    for name, kind in types.items():
        if name not in stored.column_names or stored.schema.field(name).type != kind:
            found = stored.schema.field(name).type if name in stored.column_names else "missing"
            widths = f" (static has {len(static)} numbers, the vectors {dims} dims)"
            raise ValueError(f"its column {name} is {found}, not {kind}{widths if name in WIDE else ''}")
    columns = {name: stored.column(name).combine_chunks() for name in types if name != "group"}
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
    _check_values(fields, columns, about)
    return fields


def _check_values(fields: dict[str, Any], columns: dict[str, Any], about: dict[str, Any]) -> None:
    """The numbers of a table whose columns have the right types: ValueError naming the first that cannot be."""
    shares = columns["context_shares"].flatten().to_numpy()
    for name, values in (("static", fields["static"]), ("outputs", fields["outputs"]), ("bags", fields["bags"]),
                         ("context_shares", shares)):
        if not np.isfinite(values).all():
            raise ValueError(f"{name} holds a number that is not finite")
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
            "outputs": pa.list_(number, width), "bags": pa.list_(number, dims),
            "context_words": pa.list_(text), "context_shares": pa.list_(number)}


def _columns(pa: Any, table: Table, groups: np.ndarray | None) -> dict[str, pyarrow.Array]:
    """Each column from the table's arrays; the nested ones as flat values with their offsets."""
    count = len(table)
    if groups is not None and len(groups) != count:
        raise InputError(f"groups has {len(groups):,} entries for {count:,} occurrences; give one per occurrence")
    offsets = np.concatenate([[0], np.cumsum([len(words) for words in table.context_words])]).astype(np.int32)
    shares = np.concatenate([np.asarray(row, dtype=np.float64) for row in table.context_shares]) if count else \
        np.zeros(0)
    return {
        "line": pa.array(np.asarray(table.line, dtype=np.int64)),
        "position": pa.array(np.asarray(table.position, dtype=np.int64)),
        "token": pa.array(table.token, pa.string()), "sentence": pa.array(table.sentence, pa.string()),
        "group": pa.nulls(count, pa.int64()) if groups is None else pa.array(np.asarray(groups, dtype=np.int64)),
        "outputs": _fixed_rows(pa, table.outputs), "bags": _fixed_rows(pa, table.bags),
        "context_words": pa.ListArray.from_arrays(
            offsets, pa.array([word for words in table.context_words for word in words], pa.string())),
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
    """The metadata's JSON object; a file without it is no occurrences table, one whose JSON does not parse (or
    nests deeper than Python's stack) is a damaged one."""
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
            <= LARGEST_LINE):
        raise damaged(path, "its metadata's first_line, lines_read or skipped_lines is out of range")
    if not all(is_real(number) for number in about["static"]):
        raise damaged(path, "its metadata's static holds something that is not a number")
    return about


def _check_types(fields: dict[str, Any], kinds: dict[str, type], where: str, path: str) -> None:
    """Each of `kinds`' fields present in `fields` and of its JSON type (a bool is no number): the table is damaged
    otherwise."""
    for name, kind in kinds.items():
        value = fields.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise damaged(path, f"its {where}: {name} is {type(value).__name__}, not {kind.__name__}")


def _settings(about: dict[str, Any], vectors: Any, weights: Any, path: str
              ) -> tuple[Settings, Vectors]:
    """The table's settings and the vectors given, checked against what the table was written with."""
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
        raise InputError(f"{shown_path(path)} was scanned with the vectors {wanted['name']} ({wanted['size']:,} words "
                         f"x {wanted['dims']} dims), not {found.name} ({found.count:,} x {found.dims}); pass the same "
                         "vectors to read it")
    return settings, found

