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
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from attn_cli.declared import declarations
from attn_cli.errors import InputError, Option, WeightsError
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
    pa, _ = arrow(feature)
    with ParquetOut(path, _schema(pa, table), feature=feature) as out:
        out.write(_columns(pa, table, groups))


def read_parquet(path: str | os.PathLike[str], make: Callable[..., Table], *, vectors: Any = None,
                 weights: TrainedLayer | str | os.PathLike[str] | None = None) -> Table:
    """The occurrences a Parquet file holds, as `make` (the Occurrences class) builds them from their fields; its
    `group` column, if filled, is left to data tools.

    `vectors` (as every function takes them; the embedded set by default) and `weights` (a trained layer's
    file or TrainedLayer, when the table was scanned with one) must be those the table was written with:
    InputError (WeightsError for the layer) naming what the file holds otherwise."""
    pa, parquet = arrow(Option("parquet", python_text="Occurrences.read_parquet"))
    if os.path.isdir(path):  # pyarrow would read every file in it as one table, under the first one's counts
        raise InputError(f"{os.fspath(path)} is a folder; read each table in it and join them in corpus order with "
                         "Occurrences.concat")
    try:
        stored = parquet.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"cannot read the occurrences table {os.fspath(path)}: {exc}; give a Parquet file "
                         "written by Occurrences.write_parquet or attn-cli senses --parquet") from None
    about = _metadata(stored.schema, path)
    settings, found = _settings(about, vectors, weights, path)
    columns = {name: stored.column(name).combine_chunks() for name in stored.column_names}
    return make(
        word=about["word"], settings=settings, vectors=found, static=np.array(about["static"], dtype=np.float64),
        line=columns["line"].to_numpy(), position=columns["position"].to_numpy(),
        token=columns["token"].to_pylist(), sentence=columns["sentence"].to_pylist(),
        outputs=_matrix(columns["outputs"]), bags=_matrix(columns["bags"]),
        context_words=columns["context_words"].to_pylist(), context_shares=_lists(columns["context_shares"]),
        first_line=about["first_line"], lines_read=about["lines_read"], skipped_lines=about["skipped_lines"])


def _schema(pa: Any, table: Table) -> pyarrow.Schema:
    number, text = pa.float64(), pa.string()
    return pa.schema([
        ("line", pa.int64()), ("position", pa.int64()), ("token", text), ("sentence", text), ("group", pa.int64()),
        ("outputs", pa.list_(number, table.outputs.shape[1])), ("bags", pa.list_(number, table.bags.shape[1])),
        ("context_words", pa.list_(text)), ("context_shares", pa.list_(number)),
    ], metadata={METADATA_KEY: json.dumps(_about(table), allow_nan=False)})


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
    layer = settings.layer
    keywords = {name: getattr(settings, name) for name in declarations(Settings)}
    return {
        "format": FORMAT, "word": table.word,
        "settings": {**keywords, "weights": None if layer is None else layer.digest},
        "vectors": {"name": table.vectors.name, "size": table.vectors.count, "dims": table.vectors.dims,
                    "fingerprint": table.vectors.fingerprint},
        "static": np.asarray(table.static, dtype=np.float64).tolist(),
        "first_line": table.first_line, "lines_read": table.lines_read, "skipped_lines": table.skipped_lines,
    }


def _metadata(schema: Any, path: str | os.PathLike[str]) -> dict[str, Any]:
    raw = (schema.metadata or {}).get(METADATA_KEY.encode())
    about = json.loads(raw) if raw else {}
    if about.get("format") != FORMAT:
        raise InputError(f"{os.fspath(path)} is not an occurrences table of this attn-cli (its metadata has no "
                         f"{FORMAT!r}); write it with Occurrences.write_parquet or attn-cli senses --parquet")
    return about


def _settings(about: dict[str, Any], vectors: Any, weights: Any, path: str | os.PathLike[str]
              ) -> tuple[Settings, Vectors]:
    """The table's settings and the vectors given, checked against what the table was written with."""
    from attn_cli.api import as_vectors, resolve_settings

    stored = dict(about["settings"])
    digest = stored.pop("weights")
    if digest is not None and weights is None:
        raise WeightsError(f"{os.fspath(path)} was scanned with a trained layer (weights {digest[:12]}); pass the "
                           "same weights file to read it")
    if digest is None and weights is not None:
        raise WeightsError(f"{os.fspath(path)} was scanned without a trained layer; leave out the weights")
    if weights is not None:
        stored.pop("mode")  # "trained": the layer sets it, and its own settings equal the table's
        stored["weights"] = weights
    settings = resolve_settings(None, stored)
    if settings.layer is not None and settings.layer.digest != digest:
        raise WeightsError(f"the weights given are not those {os.fspath(path)} was scanned with (weights "
                           f"{digest[:12]}); pass the same weights file")
    found = as_vectors(vectors)
    wanted = about["vectors"]
    if found.fingerprint != wanted["fingerprint"]:
        raise InputError(f"{os.fspath(path)} was scanned with the vectors {wanted['name']} ({wanted['size']:,} words "
                         f"x {wanted['dims']} dims), not {found.name} ({found.count:,} x {found.dims}); pass the same "
                         "vectors to read it")
    return settings, found

