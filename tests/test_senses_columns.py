"""The occurrences as columns (issue 27 item 4): Occurrences.to_arrow / write_parquet / read_parquet and
SensesResult's table with its groups, read back with pyarrow and checked against the JSON document."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import attn_cli
from conftest import stand_in_layer

pa = pytest.importorskip("pyarrow", reason="the parquet extra (pip install 'attn-cli[parquet]') is not installed")
pq = pytest.importorskip("pyarrow.parquet")

CORPUS = Path(__file__).resolve().parent.parent / "data" / "senses" / "bank.txt"
ROWS = ("line", "position", "token", "sentence", "outputs", "bags", "context_words", "context_shares")


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return ["", "no such word here", *CORPUS.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def table(corpus):
    return attn_cli.occurrences("bank", corpus, first_line=5)


def assert_same_table(read, written) -> None:
    """Every column and count bit for bit, the settings equal, the vectors the ones given."""
    for name in ROWS:
        ours, theirs = getattr(read, name), getattr(written, name)
        if isinstance(theirs, np.ndarray):
            assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs), name
        elif name == "context_shares":
            assert len(ours) == len(theirs) and all(np.array_equal(a, b) for a, b in zip(ours, theirs))
        else:
            assert ours == theirs, name
    assert np.array_equal(read.static, written.static)
    assert (read.word, read.settings, read.first_line, read.lines_read, read.skipped_lines) == (
        written.word, written.settings, written.first_line, written.lines_read, written.skipped_lines)


def test_a_table_read_back_is_the_table_written_and_groups_the_same(table, tmp_path):
    path = tmp_path / "bank.parquet"
    table.write_parquet(path)
    read = attn_cli.Occurrences.read_parquet(path)
    assert_same_table(read, table)
    assert read.first_line == 5 and read.lines_read == 42 and list(read.line[:2]) == [7, 8]
    assert attn_cli.group_senses(read).to_dict() == attn_cli.group_senses(table).to_dict()


def test_the_columns_are_typed_arrays_one_row_per_occurrence(table):
    arrow = table.to_arrow()
    types = {field.name: str(field.type) for field in arrow.schema}
    assert types == {"line": "int64", "position": "int64", "token": "string", "sentence": "string", "group": "int64",
                     "outputs": "fixed_size_list<item: double>[128]", "bags": "fixed_size_list<item: double>[128]",
                     "context_words": "list<item: string>", "context_shares": "list<item: double>"}
    assert arrow.num_rows == len(table) == 40 and arrow.column("group").null_count == 40
    assert np.array_equal(np.stack(arrow.column("outputs").to_pylist()), table.outputs)
    assert arrow.column("context_words").to_pylist()[0] == table.context_words[0]


def test_a_grouped_table_has_the_groups_and_rows_of_the_json_document(table, tmp_path):
    """What `senses --parquet` writes, read back with pyarrow, against the document `--json` prints."""
    result = attn_cli.group_senses(table)
    path = tmp_path / "grouped.parquet"
    result.write_parquet(path)
    read = pq.read_table(path)
    document = result.to_dict()
    assert read.select(["line", "position", "token", "group"]).to_pylist() == [
        {key: row[key] for key in ("line", "position", "token", "group")} for row in document["occurrences"]]
    assert sorted(set(read.column("group").to_pylist())) == [group["group"] for group in document["groups"]]
    assert np.array_equal(np.stack(read.column("outputs").to_pylist()), table.outputs)
    assert_same_table(attn_cli.Occurrences.read_parquet(path), table)  # the groups do not get in the way


def test_a_table_without_occurrences_is_written_and_read(tmp_path):
    empty = attn_cli.occurrences("bank", ["money grows", "river flows"])
    empty.write_parquet(tmp_path / "empty.parquet")
    read = attn_cli.Occurrences.read_parquet(tmp_path / "empty.parquet")
    assert len(read) == 0 and read.outputs.shape == (0, 128) and read.lines_read == 2


def test_reading_with_other_vectors_is_refused_naming_those_of_the_table(table, tmp_path):
    path = tmp_path / "bank.parquet"
    table.write_parquet(path)
    with pytest.raises(attn_cli.InputError, match=r"scanned with the vectors default \(minilm-l6-128d\) \(21,745 "
                                                  r"words x 128 dims\), not .*pass the same vectors"):
        attn_cli.Occurrences.read_parquet(path, vectors=attn_cli.load_vectors(limit=5000))


def test_a_table_of_a_trained_layer_needs_that_layer(corpus, tmp_path):
    vectors = attn_cli.load_vectors()
    layer = stand_in_layer(vectors, mask="none")
    table = attn_cli.occurrences("bank", corpus, weights=layer)
    path = tmp_path / "trained.parquet"
    table.write_parquet(path)
    with pytest.raises(attn_cli.WeightsError, match="scanned with a trained layer"):
        attn_cli.Occurrences.read_parquet(path)
    with pytest.raises(attn_cli.WeightsError, match="not those"):
        attn_cli.Occurrences.read_parquet(path, weights=stand_in_layer(vectors, mask="none", draw_seed=12))
    assert_same_table(attn_cli.Occurrences.read_parquet(path, weights=layer), table)


@pytest.mark.parametrize("content", [b"line one\nline two\n", None, "folder"])
def test_a_file_that_is_no_occurrences_table_is_an_input_error(table, tmp_path, content):
    path = tmp_path / "not.parquet"
    if content == "folder":  # the parts of a Dask run: pyarrow would read them as one table, counts wrong
        path.mkdir()
        table.write_parquet(path / "part-0.parquet")
        table.write_parquet(path / "part-1.parquet")
        message = "is a folder; read each table in it and join them in corpus order with Occurrences.concat"
    elif content is None:  # a Parquet file, but explain's tokens
        with attn_cli.ExplainParquet(path) as tokens:
            tokens.add(attn_cli.explain("money bank grows", neighbors=0))
        message = "is not an occurrences table"
    else:
        path.write_bytes(content)
        message = "cannot read the occurrences table"
    with pytest.raises(attn_cli.InputError, match=message):
        attn_cli.Occurrences.read_parquet(path)


def test_a_write_that_fails_leaves_the_path_as_it_was(table, tmp_path, monkeypatch):
    path = tmp_path / "bank.parquet"
    path.write_bytes(b"before")

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", broken)
    with pytest.raises(OSError):
        table.write_parquet(path)
    assert path.read_bytes() == b"before" and os.listdir(tmp_path) == ["bank.parquet"]


def test_a_missing_pyarrow_names_the_method_and_the_extra(table, tmp_path, monkeypatch):
    result = attn_cli.group_senses(table)  # scikit-learn looks for pyarrow in sys.modules: group first
    for name in [name for name in sys.modules if name == "pyarrow" or name.startswith("pyarrow.")]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r'^Occurrences.write_parquet needs pyarrow: pip install '
                                          r'"attn-cli\[parquet\]"$'):
        table.write_parquet(tmp_path / "t.parquet")
    with pytest.raises(attn_cli.AttnError, match=r"^SensesResult.write_parquet needs pyarrow"):
        result.write_parquet(tmp_path / "t.parquet")
    with pytest.raises(attn_cli.AttnError, match=r"^SensesResult.to_arrow needs pyarrow"):
        result.to_arrow()
    assert os.listdir(tmp_path) == []
