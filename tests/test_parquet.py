"""Columnar output (issue 27 item 4): `explain --parquet`, one row per token, written with pyarrow, complete or
absent; a missing pyarrow is one stderr line naming the extra."""

from __future__ import annotations

import json
import re
import subprocess
import os
import sys
import threading

import pytest

import attn_cli
from conftest import HANG_SECONDS

pa = pytest.importorskip("pyarrow", reason="the parquet extra (pip install 'attn-cli[parquet]') is not installed")
pq = pytest.importorskip("pyarrow.parquet")

LINES = "money bank grows\nzzqx qqvv\nthe, river bank flows\n\nbank bank money\nbank\n"


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_explain_parquet_has_one_row_per_token_with_the_json_values(run, tmp_path):
    """Read back with pyarrow: each token of each line that passed, with the numbers --json gives in the same
    run, exactly; the failed line has no rows and the file is still written (as --html is)."""
    out = tmp_path / "tokens.parquet"
    result = run("explain", "-", "--json", "--parquet", str(out), input=LINES)
    assert result.exit_code == 3, result.stderr  # line 2 failed
    expected = []
    for document in json_lines(result.stdout):
        if "error" in document:
            continue
        for shift in document["shifts"]:
            pulled = (shift["pulled_by"] or [None])[0]
            expected.append({
                "line": document["line"], "index": shift["index"],
                "position": document["tokens"][shift["index"]]["position"], "token": shift["token"],
                "cosine": shift["cosine"], "delta_norm": shift["delta_norm"], "self_weight": shift["self_weight"],
                "pulled_by": pulled and pulled["token"], "pulled_share": pulled and pulled["shift_share"]})
    table = pq.read_table(out)
    assert table.to_pylist() == expected
    assert [row["line"] for row in expected] == [1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 6]
    assert [row["position"] for row in expected if row["line"] == 3] == [0, 2, 3, 4]  # the comma is dropped
    assert expected[-1]["pulled_by"] is None  # nothing pulls a lone word: null, as --json's empty list
    assert str(table.schema.field("cosine").type) == "double" and str(table.schema.field("line").type) == "int64"


def test_a_sentence_argument_has_rows_without_a_line_number(run, tmp_path):
    out = tmp_path / "one.parquet"
    result = run("explain", "money bank grows", "--neighbors", "0", "--parquet", str(out))
    assert result.exit_code == 0, result.stderr
    table = pq.read_table(out)
    assert table.column("line").to_pylist() == [None] * 3 and table.column("token").to_pylist() == [
        "money", "bank", "grows"]


def test_rows_are_written_a_row_group_at_a_time_not_held_for_the_whole_run(run, tmp_path, monkeypatch):
    """Memory stays flat: every `group_rows` rows go to the file as one row group."""
    monkeypatch.setattr(attn_cli.ExplainParquet, "group_rows", 500)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("money bank grows\n" * 600)
    out = tmp_path / "tokens.parquet"
    result = run("explain", "--file", str(corpus), "--neighbors", "0", "--json", "--fields", "tokens",
                 "--parquet", str(out))
    assert result.exit_code == 0, result.stderr
    metadata = pq.ParquetFile(out).metadata
    assert [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)] == [501, 501, 501, 297]


def test_a_full_disk_is_a_usage_error_naming_parquet(run):
    """A sentence argument's file outputs are written before its tables, so nothing on stdout claims success."""
    result = run("explain", "money bank grows", "--neighbors", "0", "--parquet", "/dev/full")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == ("attn-cli: error: cannot write --parquet /dev/full: No space left on device; choose a "
                             "writable file\n")


def test_a_run_that_stops_leaves_no_parquet_and_no_temporary_file(run, tmp_path):
    """--strict stops at line 2: the file the run was filling is removed (complete or absent, never cut), and
    what the path held before is kept."""
    out = tmp_path / "tokens.parquet"
    out.write_bytes(b"before")
    result = run("explain", "-", "--json", "--strict", "--parquet", str(out), input=LINES)
    assert result.exit_code == 3
    assert out.read_bytes() == b"before" and sorted(os.listdir(tmp_path)) == ["tokens.parquet"]


def test_parquet_replaces_the_file_a_link_names_and_keeps_the_link(run, tmp_path):
    target, link = tmp_path / "real.parquet", tmp_path / "link.parquet"
    target.write_bytes(b"old")
    target.chmod(0o640)
    link.symlink_to(target.name)
    result = run("explain", "money bank grows", "--neighbors", "0", "--parquet", str(link))
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and pq.read_table(target).num_rows == 3
    assert target.stat().st_mode & 0o777 == 0o640


def test_parquet_into_a_named_pipe_is_streamed(run, tmp_path):
    """A FIFO (or /dev/stdout) is written into, not replaced by a regular file."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = run("explain", "money bank grows", "--neighbors", "0", "--parquet", str(fifo))
    reader.join()
    assert result.exit_code == 0, result.stderr
    assert pq.read_table(pa.BufferReader(received[0])).column("token").to_pylist() == ["money", "bank", "grows"]


def test_a_run_that_stops_never_ends_a_pipe_as_if_the_table_were_whole(run, tmp_path):
    """What a FIFO got cannot be taken back; it gets no footer, so a reader refuses it instead of reading a table
    without the rows that never came."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = run("explain", "-", "--strict", "--neighbors", "0", "--parquet", str(fifo), input=LINES)
    reader.join()
    assert result.exit_code == 3
    assert result.stderr.startswith("attn-cli: error: line 2") and result.stderr.count("\n") == 1  # nothing else
    with pytest.raises(pa.ArrowInvalid):
        pq.read_table(pa.BufferReader(received[0]))


@pytest.mark.parametrize(("extra", "message"), [
    (["--parquet", "{dir}"], "--parquet {dir} is a directory"),
    (["--parquet", "{dir}/no/such/t.parquet"], "folder {dir}/no/such does not exist"),
    (["--parquet", "{dir}/same", "--html", "{dir}/same"], "--html and --parquet name the same file"),
    (["--parquet", "{dir}/corpus.txt"], "--parquet {dir}/corpus.txt is the --file input"),
])
def test_a_parquet_target_that_cannot_work_is_refused_before_any_work(run, tmp_path, extra, message):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("money bank grows\n")
    result = run("explain", "--file", str(corpus), *[item.format(dir=tmp_path) for item in extra])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("attn-cli: error: ") and message.format(dir=tmp_path) in result.stderr
    assert corpus.read_text() == "money bank grows\n"


@pytest.fixture
def no_pyarrow(monkeypatch):
    """pyarrow hidden as if it were not installed: every import of it (or of its modules) fails."""
    for name in [name for name in sys.modules if name == "pyarrow" or name.startswith("pyarrow.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "pyarrow", None)


def test_a_missing_pyarrow_is_one_line_naming_the_extra(run, tmp_path, no_pyarrow):
    out = tmp_path / "tokens.parquet"
    result = run("explain", "-", "--parquet", str(out), input=LINES)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == 'attn-cli: error: --parquet needs pyarrow: pip install "attn-cli[parquet]"\n'
    assert not out.exists()


def test_a_missing_pyarrow_in_python_names_the_extra_and_is_an_import_error(tmp_path, no_pyarrow):
    with pytest.raises(ImportError, match=r'ExplainParquet needs pyarrow: pip install "attn-cli\[parquet\]"') as caught:
        attn_cli.ExplainParquet(tmp_path / "t.parquet")
    assert isinstance(caught.value, attn_cli.AttnError) and caught.value.exit_code == 2


def test_python_writes_explain_many_as_parquet_complete_or_absent(tmp_path):
    out = tmp_path / "t.parquet"
    results = list(attn_cli.explain_many(["money bank grows", "river bank"], neighbors=0))
    with attn_cli.ExplainParquet(out) as table:
        for number, result in enumerate(results, 1):
            table.add(result, line=number)
    assert pq.read_table(out).column("line").to_pylist() == [1, 1, 1, 2, 2]
    assert pq.read_table(out).column("cosine").to_pylist() == [s.cosine for r in results for s in r.shifts]

    broken = tmp_path / "broken.parquet"
    with pytest.raises(KeyboardInterrupt):
        with attn_cli.ExplainParquet(broken) as table:
            table.add(results[0], line=1)
            raise KeyboardInterrupt
    assert sorted(os.listdir(tmp_path)) == ["t.parquet"]


def test_the_extras_name_pyarrow_and_dask_and_the_test_extra_pulls_both():
    """CI installs ".[test]": the Parquet and Dask tests must run there, not be skipped."""
    from importlib.metadata import requires

    wanted = {}
    for requirement in requires("attn-cli") or []:
        name, _, marker = requirement.partition(";")
        if "extra ==" in marker:
            extra = marker.split("extra ==")[1].strip().strip('"')
            wanted.setdefault(extra.strip("'"), set()).add(name.split(">")[0].split("[")[0].strip())
    assert {"pyarrow"} <= wanted["parquet"]
    assert {"dask", "pyarrow"} <= wanted["dask"]
    assert {"dask", "pyarrow"} <= wanted["test"]


@pytest.fixture(scope="module")
def one_result():
    return attn_cli.explain("money bank grows", neighbors=0)


def line_error():
    return attn_cli.LineError(3, attn_cli.InputError("the sentence is empty"))


@pytest.mark.parametrize("make_args, error, culprit", [
    (lambda r: (line_error(),), TypeError, "not LineError (line 3 could not be attended"),
    (lambda r: (None,), TypeError, "not NoneType"),
    (lambda r: (attn_cli.compare(["money bank", "river bank"], neighbors=0),), TypeError, "not CompareResult"),
    (lambda r: (r, "x"), attn_cli.SettingsError, "line must be a whole number or None, not str"),
    (lambda r: (r, 2**70), attn_cli.SettingsError, "line must be from 0 to 2**63 - 1"),
    (lambda r: (r, -1), attn_cli.SettingsError, "got -1"),
], ids=["line-error", "none", "compare-result", "line-str", "line-2**70", "line-negative"])
def test_explain_parquet_refuses_what_is_no_row_naming_it(tmp_path, one_result, make_args, error, culprit):
    out = tmp_path / "t.parquet"
    with attn_cli.ExplainParquet(out) as table:
        with pytest.raises(error, match=re.escape(culprit)) as caught:
            table.add(*make_args(one_result))
        assert isinstance(caught.value, attn_cli.AttnError)
        table.add(one_result, line=1)  # a refused row leaves the table as it was
    assert pq.read_table(out).column("line").to_pylist() == [1, 1, 1]


@pytest.mark.parametrize("path, error, culprit", [
    (lambda tmp: tmp, attn_cli.OutputError, "Is a directory"),
    (lambda tmp: 5, attn_cli.SettingsError, "path must be a file path"),
    (lambda tmp: tmp / "no-such-folder" / "t.parquet", attn_cli.OutputError, "no-such-folder"),
    (lambda tmp: f"{tmp}/t\0.parquet", attn_cli.SettingsError, "NUL"),
], ids=["folder", "int", "missing-folder", "nul"])
def test_explain_parquet_refuses_a_path_it_cannot_write_naming_it(tmp_path, path, error, culprit):
    with pytest.raises(error, match=re.escape(culprit)) as caught:
        attn_cli.ExplainParquet(path(tmp_path))
    assert caught.value.exit_code == 2


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_explain_parquet_on_a_full_disk_is_an_output_error_naming_the_path(one_result):
    with pytest.raises(attn_cli.OutputError, match="cannot write /dev/full: No space left") as caught:
        with attn_cli.ExplainParquet("/dev/full") as table:
            table.add(one_result, line=1)
    assert caught.value.errno == 28


def test_an_explain_parquet_closed_takes_no_more_rows_and_closes_again_quietly(tmp_path, one_result):
    out = tmp_path / "t.parquet"
    table = attn_cli.ExplainParquet(out)
    table.add(one_result, line=1)
    table.close()
    table.close()
    with pytest.raises(attn_cli.AttnError, match=re.escape(f"the Parquet table {out} is already closed")):
        table.add(one_result, line=2)
    assert pq.read_table(out).num_rows == 3


def test_an_explain_parquet_never_closed_leaves_nothing_when_python_exits(tmp_path):
    code = ("import sys, attn_cli\n"
            "table = attn_cli.ExplainParquet(sys.argv[1])\n"
            "table.add(attn_cli.explain('money bank grows', neighbors=0), line=1)\n"
            "kept = attn_cli.ExplainParquet(sys.argv[2])\n"
            "del kept\n"
            "assert [name for name in __import__('os').listdir(sys.argv[3]) if 'kept' in name] == []\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "t.parquet"), str(tmp_path / "kept.parquet"),
                           str(tmp_path)], capture_output=True, text=True, timeout=HANG_SECONDS)
    assert done.returncode == 0 and done.stderr == ""
    assert os.listdir(tmp_path) == []



def test_a_writer_that_cannot_start_leaves_no_temporary_file(run, tmp_path, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise OSError("pyarrow refused")

    monkeypatch.setattr(pq, "ParquetWriter", refuse)
    result = run("explain", "money bank grows", "--neighbors", "0", "--parquet", str(tmp_path / "t.parquet"))
    assert result.exit_code != 0
    assert list(tmp_path.iterdir()) == []
