"""The occurrences as columns (issue 27 item 4): Occurrences.to_arrow / write_parquet / read_parquet and
SensesResult's table with its groups, read back with pyarrow and checked against the JSON document."""

from __future__ import annotations

import os
import re
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
                     "label": "string", "outputs": "fixed_size_list<item: double>[128]",
                     "bags": "fixed_size_list<item: double>[128]",
                     "context_words": "list<item: string>", "context_shares": "list<item: double>"}
    assert arrow.num_rows == len(table) == 40 and arrow.column("group").null_count == 40
    assert arrow.column("label").null_count == 40
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


def test_a_grouped_table_holds_each_occurrences_label_and_one_without_the_column_still_reads(table, tmp_path):
    labels = [f"sense {line % 2}" for line in range(table.first_line, table.first_line + table.lines_read)]
    result = attn_cli.group_senses(table, labels=labels)
    path = tmp_path / "labelled.parquet"
    result.write_parquet(path)
    assert pq.read_table(path).column("label").to_pylist() == [labels[line - 5] for line in table.line.tolist()]
    older = tmp_path / "older.parquet"  # as a writer before the label column wrote it
    pq.write_table(pq.read_table(path).drop_columns(["label"]), older)
    assert_same_table(attn_cli.Occurrences.read_parquet(older), table)


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


def _with_about(arrow, change):
    """The table with its metadata's JSON object changed by `change` (or replaced by it, when it is bytes)."""
    import json

    about = json.loads(arrow.schema.metadata[b"attn_cli"])
    raw = change if isinstance(change, bytes) else json.dumps(change(about)).encode()
    return arrow.replace_schema_metadata({b"attn_cli": raw})


def _with_column(arrow, name, array):
    return arrow.set_column(arrow.column_names.index(name), name, array)


def _edited(about, **changes):
    return {**about, **changes}


def _numbers(arrow, name, value):
    """The list column `name` with its first number replaced by `value`, of the same type."""
    column = arrow.column(name).combine_chunks()
    rows = column.to_pylist()
    rows[0] = [value, *rows[0][1:]]
    return _with_column(arrow, name, pa.array(rows, column.type))


def _lines(arrow, values):
    return _with_column(arrow, "line", pa.array(values + arrow.column("line").to_pylist()[len(values):], pa.int64()))


DAMAGED = {
    "metadata nested too deep": (lambda t: _with_about(t, b"[" * 100_000 + b"]" * 100_000), "metadata"),
    "metadata not JSON": (lambda t: _with_about(t, b"{not json"), "metadata"),
    "metadata a JSON array": (lambda t: _with_about(t, b'["attn-cli occurrences 1"]'), "metadata"),
    "no static": (lambda t: _with_about(t, lambda a: {k: v for k, v in a.items() if k != "static"}), "static"),
    "settings a list": (lambda t: _with_about(t, lambda a: _edited(a, settings=[1, 2])), "settings"),
    "settings a string": (lambda t: _with_about(t, lambda a: _edited(a, settings="heads")), "settings"),
    "settings of the wrong shape": (lambda t: _with_about(t, lambda a: _edited(
        a, settings={**a["settings"], "heads": "two"})), "settings"),
    "static too short": (lambda t: _with_about(t, lambda a: _edited(a, static=a["static"][:64])), "static"),
    "static a string": (lambda t: _with_about(t, lambda a: _edited(a, static=["NaN"])), "static"),
    "static not finite": (lambda t: _with_about(t, lambda a: _edited(a, static=[float("nan")] * 128)), "static"),
    "vectors of the wrong shape": (lambda t: _with_about(t, lambda a: _edited(
        a, vectors={**a["vectors"], "size": "many", "fingerprint": "other"})), "vectors"),
    "word null": (lambda t: _with_about(t, lambda a: _edited(a, word=None)), "word"),
    "first line too large": (lambda t: _with_about(t, lambda a: _edited(a, first_line=2**70)), "first_line"),
    "other columns": (lambda t: pa.table({"a": [1]}).replace_schema_metadata(t.schema.metadata), "line"),
    "outputs of 64 dims": (lambda t: _with_column(t, "outputs", pa.FixedSizeListArray.from_arrays(
        pa.array(np.zeros(len(t) * 64)), 64)), "outputs"),
    "outputs of variable size": (lambda t: _with_column(t, "outputs", pa.array(
        t.column("outputs").to_pylist(), pa.list_(pa.float64()))), "outputs"),
    "a null line": (lambda t: _with_column(t, "line", pa.array([None] + t.column("line").to_pylist()[1:],
                                                                 pa.int64())), "line"),
    "a null sentence": (lambda t: _with_column(t, "sentence", pa.array(
        [None] + t.column("sentence").to_pylist()[1:], pa.string())), "sentence"),
    "NaN in outputs": (lambda t: _numbers(t, "outputs", float("nan")), "outputs"),
    "inf in bags": (lambda t: _numbers(t, "bags", float("inf")), "bags"),
    "NaN in context_shares": (lambda t: _numbers(t, "context_shares", float("nan")), "context_shares"),
    "a null context word": (lambda t: _numbers(t, "context_words", None), "context_words"),
    "context lists of other lengths": (lambda t: _with_column(t, "context_words", pa.array(
        [t.column("context_words").to_pylist()[0][1:], *t.column("context_words").to_pylist()[1:]],
        pa.list_(pa.string()))), "context"),
    "line -1": (lambda t: _lines(t, [-1]), "line"),
    "line 1e15": (lambda t: _lines(t, [10**15]), "line"),
    "lines not ascending": (lambda t: _lines(t, [9, 8]), "line"),
    "position -1": (lambda t: _with_column(t, "position", pa.array(
        [-1] + t.column("position").to_pylist()[1:], pa.int64())), "position"),
    # issue 32: tables that passed the check and failed later (exit 1 or a blamed option)
    "static and outputs of 64 dims": (lambda t: _with_about(_with_column(
        t, "outputs", pa.FixedSizeListArray.from_arrays(pa.array(np.zeros(len(t) * 64)), 64)),
        lambda a: _edited(a, static=a["static"][:64])), "static"),
    "static of 400 digits": (lambda t: _with_about(t, lambda a: _edited(a, static=[10**400, *a["static"][1:]])),
                             "static"),
    "context_shares of 1.7e308": (lambda t: _numbers(t, "context_shares", 1.7e308), "context_shares"),
    "heads 10^30": (lambda t: _with_about(t, lambda a: _edited(a, settings={**a["settings"], "heads": 10**30})),
                    "its settings: heads 1000"),
    "a context list longer than a sentence": (lambda t: _with_column(_with_column(
        t, "context_words", pa.array([[""] * 100_000, *t.column("context_words").to_pylist()[1:]])),
        "context_shares", pa.array([[0.0] * 100_000, *t.column("context_shares").to_pylist()[1:]])),
        "its footer counts"),
    "vectors' size of 10^30": (lambda t: _with_about(t, lambda a: _edited(
        a, vectors={**a["vectors"], "size": 10**30})), "vectors' size"),
}


@pytest.mark.parametrize("kind", DAMAGED)
def test_a_damaged_table_is_one_input_error_naming_it(table, tmp_path, kind):
    good = tmp_path / "good.parquet"
    table.write_parquet(good)
    damage, what = DAMAGED[kind]
    path = tmp_path / "damaged.parquet"
    pq.write_table(damage(pq.read_table(good)), path)
    with pytest.raises(attn_cli.InputError) as raised:
        attn_cli.Occurrences.read_parquet(path)
    message = str(raised.value)
    assert message.startswith(f"the occurrences table {path} is damaged: ") and "\n" not in message
    assert message.endswith("; write it again with attn-cli senses --parquet (or Occurrences.write_parquet)")
    assert what in message.split(" is damaged: ")[1]


def test_a_table_of_more_rows_than_max_occurrences_is_refused_from_its_footer(table, tmp_path):
    """A few KB of Parquet can hold millions of rows of zeros (3 million made 6.9 GB): the footer's row count is
    checked before any column is read, here of a file whose columns are not even a table's."""
    path = tmp_path / "many.parquet"
    metadata = table.to_arrow().schema.metadata
    pq.write_table(pa.table({"line": np.zeros(100_001, dtype=np.int64)}).replace_schema_metadata(metadata), path)
    with pytest.raises(attn_cli.InputError, match=r"holds 100,001 occurrences, more than the 100,000 a table read "
                                                  r"may hold; .* raise max_occurrences$"):
        attn_cli.Occurrences.read_parquet(path)
    table.write_parquet(path)
    with pytest.raises(attn_cli.InputError, match="holds 40 occurrences, more than the 39 a table read may hold"):
        attn_cli.Occurrences.read_parquet(path, max_occurrences=39)
    assert len(attn_cli.Occurrences.read_parquet(path, max_occurrences=40)) == 40
    with pytest.raises(attn_cli.SettingsError, match="max_occurrences must be at least 1"):
        attn_cli.Occurrences.read_parquet(path, max_occurrences=0)


def test_text_columns_larger_than_sentences_give_are_refused_from_the_footer(table, tmp_path, monkeypatch):
    """Issue 32 audit 4: a 4.8 MB table whose first sentence was "bank " + "a " * 50,000,000 was read whole (1.1 GB
    of memory) and grouped, exit 0: the footer's uncompressed sizes of the text columns bound them, a sentence at
    most 1 MiB (lowered here, so the file stays small)."""
    from attn_cli.contexts import table as module

    monkeypatch.setattr(module, "TEXT_BYTES_PER_ROW", 1024)
    path = tmp_path / "bomb.parquet"
    arrow = table.to_arrow()
    sentences = arrow.column("sentence").to_pylist()
    pq.write_table(_with_column(arrow, "sentence", pa.array(["bank " + "a " * 100_000, *sentences[1:]])), path,
                   compression="zstd")
    with pytest.raises(attn_cli.InputError, match=r"bomb.parquet holds [\d,]+ bytes of text in the 40 rows of its "
                                                  r"row group 0"):
        attn_cli.Occurrences.read_parquet(path)
    table.write_parquet(path)
    assert len(attn_cli.Occurrences.read_parquet(path)) == 40


def _empty(tmp_path):
    (tmp_path / "empty.parquet").write_bytes(b"")
    return tmp_path / "empty.parquet"


def _fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    return tmp_path / "pipe"


@pytest.mark.parametrize("make, reason", [
    (lambda tmp_path: tmp_path / "missing.parquet", "no such file"),
    (lambda tmp_path: Path(os.devnull), "is empty"),
    (_empty, "is empty"),
    (_fifo, "save it to a file first"),
    (lambda tmp_path: tmp_path / ("n" * 200 + ".parquet"), "… (")])
def test_a_path_that_holds_no_table_is_one_line_with_the_reason(tmp_path, make, reason):
    path = make(tmp_path)
    with pytest.raises(attn_cli.InputError) as raised:
        attn_cli.Occurrences.read_parquet(path)
    assert reason in str(raised.value) and "\n" not in str(raised.value)


@pytest.fixture(scope="module")
def lone_surrogate(corpus):
    """Senses over a corpus one of whose lines holds a lone surrogate (a byte that was not UTF-8, decoded with
    surrogateescape)."""
    return attn_cli.senses("bank", [*corpus, "the bank \udc80 money"], neighbors=0)


@pytest.mark.parametrize("table", [
    lambda result, path: result.to_arrow().column("sentence").to_pylist(),
    lambda result, path: result.occurrences.to_arrow().column("sentence").to_pylist(),
    lambda result, path: (result.write_parquet(path), pq.read_table(path).column("sentence").to_pylist())[1],
    lambda result, path: list(pytest.importorskip("pandas").Series(result.to_pandas()["sentence"])),
], ids=["to_arrow", "occurrences.to_arrow", "write_parquet", "to_pandas"])
def test_a_lone_surrogate_in_a_line_is_written_as_its_escape_as_in_the_json(lone_surrogate, tmp_path, table):
    sentences = table(lone_surrogate, tmp_path / "t.parquet")
    assert sentences[-1] == "the bank \\udc80 money"
    assert "the bank \\udc80 money" in lone_surrogate.to_json()  # JSON's escape of the same character


@pytest.mark.parametrize("call", [
    lambda result, path: result.write_parquet(path),
    lambda result, path: result.occurrences.write_parquet(path),
    lambda result, path: attn_cli.Occurrences.read_parquet(path),
    lambda result, path: result.to_html(path),
    lambda result, path: result.to_svg(path),
    lambda result, path: attn_cli.write_file(path, "text"),
    lambda result, path: attn_cli.ExplainParquet(path),
], ids=["write_parquet", "occurrences.write_parquet", "read_parquet", "to_html", "to_svg", "write_file",
        "ExplainParquet"])
def test_a_nul_in_a_path_is_a_settings_error_showing_it(lone_surrogate, tmp_path, call):
    path = f"{tmp_path}/a\0b"
    with pytest.raises(attn_cli.SettingsError, match=re.escape(f"path {tmp_path}/a\\x00b holds a NUL")) as caught:
        call(lone_surrogate, path)
    assert isinstance(caught.value, ValueError) and "\0" not in str(caught.value)
    assert os.listdir(tmp_path) == []


def test_a_table_read_back_lists_the_causes_a_skipped_line_can_have(tmp_path):
    """The file keeps the count of skipped lines, not why: the message lists the causes instead of naming one."""
    path = tmp_path / "few.parquet"
    attn_cli.occurrences("bank", ["bank", "bank bank", "river bank"], mask="others").write_parquet(path)
    table = attn_cli.Occurrences.read_parquet(path)
    assert table.skipped_lines == 2 and table.first_skipped is None
    with pytest.raises(attn_cli.InputError, match=re.escape("2 lines that may hold it were skipped by the scan (too "
                                                            "long for max_tokens, without a known word, or refused "
                                                            "by oov='error' or mask='others')")):
        attn_cli.group_senses(table)
