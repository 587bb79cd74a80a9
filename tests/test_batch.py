"""Batches and pipes: files and stdin, JSON Lines that stream, --fields, --plain, failed lines, Ctrl-C."""

from __future__ import annotations

import copy
import io
import json
import os
import signal
import subprocess
import sys

import jsonschema
import pytest

from attn_cli.cli.fields import available_fields
from conftest import HANG_SECONDS

CLI = [sys.executable, "-m", "attn_cli"]
ANSI = "\x1b["


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def relaxed(schema: dict) -> dict:
    """The schema with every "required" (and the if/then/else choosing them) dropped: types still checked."""
    if isinstance(schema, dict):
        return {key: relaxed(value) for key, value in schema.items() if key not in ("required", "if", "then", "else")}
    if isinstance(schema, list):
        return [relaxed(value) for value in schema]
    return schema


def test_each_line_of_a_file_is_one_json_line_with_its_line_number(run, tmp_path, explain_schema):
    path = tmp_path / "sentences.txt"
    path.write_text("money bank grows\n\n   \nriver bank flows\n", encoding="utf-8")
    result = run("explain", "--file", str(path), "--json", "--neighbors", "0")
    assert result.exit_code == 0, result.stderr
    documents = json_lines(result.stdout)
    assert [(d["line"], d["id"], d["sentence"]) for d in documents] == [
        (1, None, "money bank grows"), (4, None, "river bank flows")]
    for document in documents:
        jsonschema.validate(document, explain_schema)
    alone = json.loads(run("explain", "river bank flows", "--json", "--neighbors", "0").stdout)
    assert "line" not in alone and documents[1]["shifts"] == alone["shifts"]


def test_jsonl_input_passes_id_and_other_fields_through(run, trace_schema):
    lines = ['{"id": "a-1", "text": "money bank grows", "source": "lesson 2"}', '{"text": "river bank flows", "id": 7}']
    result = run("trace", "-", "--input-format", "jsonl", "--json", "--word", "bank", "--neighbors", "0",
                 input="\n".join(lines) + "\n")
    assert result.exit_code == 0, result.stderr
    documents = json_lines(result.stdout)
    assert [(d["line"], d["id"], d.get("meta")) for d in documents] == [(1, "a-1", {"source": "lesson 2"}),
                                                                         (2, 7, None)]
    assert [d["traces"][0]["token"] for d in documents] == ["bank", "bank"]
    for document in documents:
        jsonschema.validate(document, trace_schema)


def test_compare_reads_jsonl_too(run):
    lines = '{"text": "river bank flows"}\n{"text": "money bank grows"}\n'
    result = run("compare", "-", "--input-format", "jsonl", "--json", "--neighbors", "0", input=lines)
    assert result.exit_code == 0, result.stderr
    assert [block["sentence"] for block in json.loads(result.stdout)["sentences"]] == [
        "river bank flows", "money bank grows"]


def test_compare_keeps_input_lines_and_ids_and_names_the_line_that_fails(run, compare_validator):
    lines = '{"id": "a", "text": "river bank flows"}\n\n{"id": 7, "text": "money bank grows", "lesson": 2}\n'
    result = run("compare", "-", "--input-format", "jsonl", "--json", "--neighbors", "0", input=lines)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    compare_validator.validate(report)
    assert [(b["line"], b["id"], b.get("meta")) for b in report["sentences"]] == [(1, "a", None), (3, 7, {"lesson": 2})]
    failed = run("compare", "-", "--neighbors", "0", input="river bank flows\n\nzzqx qqvv\n")
    assert failed.exit_code == 3 and failed.stderr.startswith('attn-cli: error: line 3 of stdin ("zzqx qqvv"): ')


def test_compare_errors_quote_long_sentences_shortened(run):
    result = run("compare", "x" * 100_000, "money bank")
    assert result.exit_code == 3 and len(result.stderr) < 400 and "(100,000 characters)" in result.stderr


BAD_BATCH = b"money bank grows\nzzqx qqvv\n\xff\xfe bank\n!!! ???\nriver bank flows\n"


def test_bad_lines_become_error_objects_and_the_run_goes_on(run, explain_schema):
    result = run("explain", "-", "--json", "--neighbors", "0", input=BAD_BATCH)
    assert result.exit_code == 3
    documents = json_lines(result.stdout)
    assert [d["line"] for d in documents] == [1, 2, 3, 4, 5]
    failed = {d["line"]: d["error"] for d in documents if "error" in d}
    assert set(failed) == {2, 3, 4} and all(error["code"] == 3 for error in failed.values())
    assert "no word of the sentence" in failed[2]["message"] and "UTF-8" in failed[3]["message"]
    assert "no word of the sentence" in failed[4]["message"]  # punctuation only: empty after tokenisation
    for document in documents:
        jsonschema.validate(document, explain_schema)
    errors = [line for line in result.stderr.splitlines() if line.startswith("attn-cli: error:")]
    assert errors == ["attn-cli: error: 3 of 5 input lines failed (see their error objects); fix or remove them, "
                      "or pass --strict to stop at the first"]


@pytest.mark.parametrize("command", [["explain"], ["trace", "--word", "bank"]])
def test_a_line_the_layer_refuses_fails_alone(run, command):
    """Issue 15 audit: under the "others" mask a line of one word (or one word repeated) has nothing to attend
    to. Its group is computed together, but the refusal is that line's error object; the others are written."""
    lines = "money bank grows\nbank\nriver bank flows\nbank bank bank\n"
    result = run(*command, "-", "--json", "--neighbors", "0", "--mask", "others", input=lines)
    assert result.exit_code == 3, result.stderr
    documents = json_lines(result.stdout)
    assert [(d["line"], "error" in d) for d in documents] == [(1, False), (2, True), (3, False), (4, True)]
    assert "--mask none" in documents[1]["error"]["message"] and "2 of 4 input lines failed" in result.stderr


def test_a_lines_warnings_come_with_it_and_strict_warns_of_no_line_after_the_failure(run):
    lines = "money qqzzxv grows\nzzqqx\nbank qqyyzz\n"
    result = run("explain", "-", "--json", "--neighbors", "0", "--strict", input=lines)
    assert result.exit_code == 3
    assert "qqzzxv" in result.stderr and "qqyyzz" not in result.stderr  # line 3 is never reached


def test_too_long_lines_fail_alone(run):
    result = run("explain", "-", "--json", "--neighbors", "0", "--max-tokens", "3",
                 input="money bank grows\nthe money bank grows fast\n")
    assert result.exit_code == 3
    assert "--max-tokens 3" in json_lines(result.stdout)[1]["error"]["message"]


def test_tables_tell_a_bad_line_on_stderr_and_go_on(run):
    result = run("explain", "-", "--neighbors", "0", input=BAD_BATCH)
    assert result.exit_code == 3
    assert "“money bank grows”" in result.stdout and "“river bank flows”" in result.stdout
    errors = [line for line in result.stderr.splitlines() if line.startswith("attn-cli: error:")]
    assert [error.split(":")[2].strip() for error in errors[:3]] == ["line 2 of stdin", "line 3 of stdin",
                                                                     "line 4 of stdin"]
    assert "3 of 5 input lines failed" in errors[3]


def test_strict_stops_at_the_first_bad_line(run):
    result = run("explain", "-", "--json", "--neighbors", "0", "--strict", input=BAD_BATCH)
    assert result.exit_code == 3
    assert [d["line"] for d in json_lines(result.stdout)] == [1]
    assert result.stderr.splitlines()[-1].startswith("attn-cli: error: line 2 of stdin: no word of the sentence")


def test_a_single_bad_line_fails_like_an_argument(run):
    result = run("explain", "-", "--json", input="zzqx qqvv\n")
    assert result.exit_code == 3 and result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith("attn-cli: error: line 1 of stdin: no word of the sentence")


def test_a_bad_first_line_is_still_reported_in_a_batch(run):
    result = run("explain", "-", "--json", "--neighbors", "0", input="zzqx\nmoney bank\n")
    assert result.exit_code == 3
    assert [("error" in d, d["line"]) for d in json_lines(result.stdout)] == [(True, 1), (False, 2)]


def test_fields_keep_only_the_named_paths(run, explain_schema):
    result = run("explain", "-", "--json", "--neighbors", "0", "--fields", "tokens.text,shifts.cosine,heads.weights",
                 input="money bank grows\nzzqx\nriver bank flows\n")
    assert result.exit_code == 3
    first, error, last = json_lines(result.stdout)
    assert list(first) == ["schema_version", "command", "line", "id", "tokens", "heads", "shifts"]
    assert first["tokens"] == [{"text": "money"}, {"text": "bank"}, {"text": "grows"}]
    assert [list(head) for head in first["heads"]] == [["weights"]] and len(first["heads"][0]["weights"]) == 3
    assert [list(shift) for shift in last["shifts"]] == [["cosine"]] * 3
    assert error["error"]["code"] == 3 and error["line"] == 2
    for document in (first, error, last):
        jsonschema.validate(document, relaxed(explain_schema))
    with pytest.raises(jsonschema.ValidationError):  # the relaxed check still checks types
        jsonschema.validate({**first, "shifts": [{"cosine": "high"}]}, relaxed(explain_schema))


def test_a_whole_parent_wins_over_its_children(run):
    result = run("explain", "money bank grows", "--json", "--neighbors", "0", "--fields", "shifts.cosine,shifts")
    assert json.loads(result.stdout)["shifts"][0]["delta_norm"] > 0


def test_bare_fields_lists_every_path_from_the_schema(run, explain_schema):
    for args in (["--fields"], ["--fields", "list"], ["-", "--fields"], ["--fields", "--json"]):
        result = run("explain", *args, input="")
        assert result.exit_code == 0, result.stderr
        assert result.stdout.splitlines() == list(available_fields("explain"))
    listed = set(available_fields("explain"))
    assert set(explain_schema["properties"]) <= listed
    assert {"shifts.cosine", "shifts.pulled_by.token", "shares.shift", "heads.weights",
            "diagnostics.heads.rows.entropy_bits", "shifts.neighbors_after.word"} <= listed
    assert "traces.heads.keys.weight" in available_fields("trace")


def test_an_unknown_field_is_a_usage_error_naming_the_valid_ones(run):
    result = run("explain", "money bank", "--json", "--fields", "tokens,shifts.cosin")
    assert result.exit_code == 2 and result.stdout == ""
    assert "unknown field 'shifts.cosin'; shifts has: token, index, self_weight, cosine" in result.stderr
    result = run("explain", "money bank", "--json", "--fields", "shfits")
    assert result.exit_code == 2 and "explain documents have: schema_version, command" in result.stderr
    assert run("explain", "money bank", "--fields", "tokens").exit_code == 2  # --fields needs --json


def test_plain_is_one_tab_separated_record_per_token(run):
    result = run("explain", "-", "--plain", input="money bank grows\n\nriver bank flows\n")
    assert result.exit_code == 0, result.stderr
    header, *records = result.stdout.splitlines()
    columns = header.lstrip("#").split("\t")
    assert columns[:4] == ["line", "id", "index", "token"]
    rows = [dict(zip(columns, record.split("\t"))) for record in records]
    assert all(len(record.split("\t")) == len(columns) for record in records)
    assert [(row["line"], row["token"]) for row in rows] == [
        ("1", "money"), ("1", "bank"), ("1", "grows"), ("3", "river"), ("3", "bank"), ("3", "flows")]
    document = json.loads(run("explain", "river bank flows", "--json").stdout)
    bank = rows[4]
    assert float(bank["cosine"]) == document["shifts"][1]["cosine"]
    assert bank["pulled_by"] == "river" and bank["neighbors_after"].split(",")[:2] == ["banks", "banking"]
    pulled = document["shifts"][1]["pulled_by"][0]
    assert (float(bank["pulled_weight"]), float(bank["pulled_share"])) == (pulled["weight"], pulled["shift_share"])
    assert ANSI not in result.stdout and "─" not in result.stdout
    assert run("explain", "money", "--plain", "--json").exit_code == 2


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_tables_have_no_colour_when_asked_even_on_a_terminal(run, env):
    coloured = run("explain", "money bank grows", "--neighbors", "0", env={"FORCE_COLOR": "1"})
    assert ANSI in coloured.stdout  # the check can fail: a forced terminal does get colour
    plain = run("explain", "money bank grows", "--neighbors", "0", env={"FORCE_COLOR": "1", **env})
    assert ANSI not in plain.stdout and "money" in plain.stdout


def test_a_pipe_gets_no_colour(tmp_path):
    result = subprocess.run([*CLI, "explain", "money bank grows", "--neighbors", "0"], capture_output=True, text=True,
                            env={k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")})
    assert result.returncode == 0 and ANSI not in result.stdout


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([*CLI, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_the_first_line_comes_out_before_the_last_line_goes_in():
    process = start("explain", "-", "--json", "--neighbors", "0")
    try:
        process.stdin.write(b"money bank grows\n")
        process.stdin.flush()
        first = json.loads(process.stdout.readline())  # blocks until written: stdin is still open
        assert first["line"] == 1 and first["sentence"] == "money bank grows"
        process.stdin.write(b"river bank flows\n")
        process.stdin.close()
        rest = process.stdout.read().decode()
        assert [d["line"] for d in json_lines(rest)] == [2]
        assert process.wait(timeout=HANG_SECONDS) == 0
    finally:
        process.kill()


def test_ctrl_c_keeps_every_line_written_and_exits_130():
    process = start("explain", "-", "--json", "--neighbors", "0")
    try:
        for _ in range(3):
            process.stdin.write(b"money bank grows\n")
        process.stdin.flush()
        received = [process.stdout.readline() for _ in range(3)]
        process.send_signal(signal.SIGINT)  # after three lines, wherever it is: writing them or waiting for more
        out, err = process.communicate(timeout=HANG_SECONDS)
        assert process.returncode == 130
        lines = b"".join(received + [out]).decode().splitlines(keepends=True)
        complete = [json.loads(line) for line in lines if line.endswith("\n")]
        assert [d["line"] for d in complete] == [1, 2, 3]
        assert b"Traceback" not in err
    finally:
        process.kill()


def test_memory_is_not_kept_without_html(monkeypatch):
    from attn_cli.cli.outputs import ReportOutputs

    outputs = ReportOutputs(lambda report, console: None, style="json", files={}, command_line="")
    document = {"schema_version": 1, "command": "explain"}
    outputs.show(copy.deepcopy(document))
    assert outputs.documents == []
    kept = ReportOutputs(lambda report, console: None, style="json", files={"--html": "x.html"}, command_line="")
    kept.show(document)
    assert kept.documents == [document]


@pytest.mark.parametrize("args", [
    ["trace", "money bank grows"],  # tables: Rich meets the closed pipe
    ["explain", "-", "--plain", "--neighbors", "0"],  # a batch that is still writing
    ["explain", "-", "--json", "--neighbors", "0"],
])
def test_a_closed_stdout_stops_quietly_with_141(args):
    """`attn-cli ... | head`: no traceback, no internal-error line, the documented exit code."""
    process = start(*args)
    try:
        process.stdin.write(b"money bank grows\n" * 3000)  # far more than a pipe buffer holds
        process.stdin.close()
    except BrokenPipeError:  # it may already have stopped reading: a sentence argument needs no stdin
        pass
    process.stdout.read(64)
    process.stdout.close()  # what head does after its lines
    assert process.wait(timeout=HANG_SECONDS) == 141
    assert process.stderr.read() == b""


def test_a_read_of_a_pipe_ends_a_group_and_a_read_of_a_file_never_does(tmp_path):
    from pathlib import Path

    from attn_cli.cli.inputs import stream_lines

    path = tmp_path / "lines.txt"
    path.write_bytes(b"money bank grows\nriver bank flows\n")
    assert [line.last_read for line in stream_lines(path, "text")] == [False, False]
    read, write = os.pipe()
    os.write(write, path.read_bytes())  # one read of the pipe takes both lines
    os.close(write)
    try:
        assert [line.last_read for line in stream_lines(Path(f"/dev/fd/{read}"), "text")] == [False, True]
    finally:
        os.close(read)


def test_lines_read_together_are_grouped_in_order_and_errors_come_after_the_lines_before_them():
    import dataclasses

    from attn_cli.cli.inputs import InputLine, ready_groups

    lines = [InputLine(f"line {i}", i) for i in range(1, 41)]  # a file's: no read of it waits
    groups = list(ready_groups(iter(lines), size=16))
    assert [line for group in groups for line in group] == lines and list(map(len, groups)) == [16, 16, 8]
    read = [dataclasses.replace(line, last_read=line.number % 5 == 0) for line in lines]  # a pipe, five lines a read
    assert [len(group) for group in ready_groups(iter(read), size=16)] == [5] * 8  # what has arrived

    def failing():
        yield from lines[:3]
        raise ValueError("the file went away")

    seen = []
    with pytest.raises(ValueError, match="went away"):
        for group in ready_groups(failing()):
            seen += group
    assert seen == lines[:3]


def test_a_batch_gives_each_sentence_the_numbers_it_gets_alone(run, tmp_path):
    """Grouped lines share one neighbour search; neighbours and cosines must not depend on the company."""
    sentences = ["money bank grows", "river bank flows", "the bank is closed today", "the river flows to the sea"]
    path = tmp_path / "sentences.txt"
    path.write_text("\n".join(sentences * 5) + "\n", encoding="utf-8")
    for options in ([], ["--mode", "projected", "--heads", "2", "--d-k", "64"]):
        batch = json_lines(run("explain", "--file", str(path), "--json", *options).stdout)
        assert len(batch) == 20
        alone = {sentence: json.loads(run("explain", sentence, "--json", *options).stdout) for sentence in sentences}
        for document in batch:
            assert document["shifts"] == alone[document["sentence"]]["shifts"]


class _Terminal(io.TextIOWrapper):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_reading_a_terminal_says_how_to_end_the_input(monkeypatch, capsys, terminal):
    """`explain -` typed at a terminal says how to end; piped input stays silent."""
    from attn_cli.cli.inputs import input_lines

    kind = _Terminal if terminal else io.TextIOWrapper
    monkeypatch.setattr(sys, "stdin", kind(io.BytesIO(b"money bank grows\n")))
    assert [line.text for line in input_lines("-", None)] == ["money bank grows"]
    note = capsys.readouterr().err
    if terminal:
        assert note == ("attn-cli: note: reading sentences from the terminal, one per line; end with Ctrl-D "
                        "(Ctrl-Z Enter on Windows)\n")
    else:
        assert note == ""


HOSTILE_JSONL = [
    "[" * 1000 + '{"text": "money"}' + "]" * 1000,  # nested 1,000 deep
    '{"id": NaN, "text": "money bank"}',
    '{"id": Infinity, "text": "money bank"}',
    '{"id": -Infinity, "text": "money bank"}',
    '{"id": 1e400, "text": "money bank"}',
    '{"id": "\\ud800", "text": "money bank"}',
    '{"id": 1, "text": "money \\udfff bank"}',
    '{"id": ' + "9" * 5000 + ', "text": "money bank"}',  # Python's own message advised sys.set_int_max_str_digits
]


@pytest.mark.parametrize("line", HOSTILE_JSONL, ids=["nested", "nan", "inf", "-inf", "1e400", "surrogate-id",
                                                      "surrogate-text", "5000 digits"])
def test_each_hostile_jsonl_line_is_an_error_object_and_the_run_goes_on(run, line):
    """Each would end the whole batch before (RecursionError before line 1; exit 1 writing the id)."""
    result = run("explain", "-", "--input-format", "jsonl", "--json",
                 input=f"{line}\n" + '{"id": 2, "text": "money"}\n')
    assert result.exit_code == 3, result.stderr
    first, second = json_lines(result.stdout)
    assert first["line"] == 1 and first["error"]["code"] == 3
    assert first["error"]["message"].startswith("not a JSON object (")
    assert "set_int_max_str_digits" not in first["error"]["message"]
    if any(culprit in line for culprit in ("NaN", "Infinity", "1e400")):  # the culprit named, not Python's words
        assert "no JSON number" in first["error"]["message"]
    if "9" * 5000 in line:
        assert "5,000 digits" in first["error"]["message"]
    assert second["id"] == 2 and [shift["token"] for shift in second["shifts"]] == ["money"]
    assert result.stderr.startswith("attn-cli: error: 1 of 2 input lines failed")


def test_a_bug_while_writing_a_document_fails_that_line_alone_and_never_cuts_it(run, monkeypatch):
    """An internal error in the middle of a large (streamed) document: stdout holds whole JSON lines only,
    the line that failed has an error object with code 1, the lines after it are written."""
    import numpy as np

    import attn_cli.cli.batch as batch
    import attn_cli.render.json_out as json_out

    real = batch.with_input

    def broken_second_line(document, number, id, meta):
        document = real(document, number, id, meta)
        if number == 2:  # a large array that ends in NaN: the writer refuses it half way through
            document["broken"] = np.append(np.ones(json_out.STREAM_ABOVE * 2), np.nan).reshape(1, -1)
        return document

    monkeypatch.setattr(batch, "with_input", broken_second_line)
    monkeypatch.setattr(json_out, "BUFFER_BYTES", 1000)  # spool through the temporary file
    result = run("explain", "-", "--json", input="money bank grows\nriver bank flows\nthe bank\n")
    assert result.exit_code == 3
    lines = json_lines(result.stdout)
    assert [line["line"] for line in lines] == [1, 2, 3]
    assert "shifts" in lines[0] and "shifts" in lines[2]
    assert lines[1]["error"]["code"] == 1 and "refusing to write NaN" in lines[1]["error"]["message"]
    assert "this is a bug" in lines[1]["error"]["message"]


def test_a_group_is_read_and_computed_a_run_of_lines_at_a_time():
    """Issue 15 audit: a group's inputs and results live until its last document is written, and 256 lines of
    1,000 tokens computed together took gigabytes. Runs of at most `limit` numbers (a larger line alone), each
    read from the group only when the run before it is done, keep it to what a few lines need, in order."""
    from attn_cli.batches import runs_within

    taken: list[int] = []

    def sizes():
        for size in (200, 2_000_000, 200, 200, 720_000, 980_000, 18_000_000):
            taken.append(size)
            yield size

    runs = runs_within(sizes(), lambda size: size, 2_000_000)
    assert next(runs) == [200] and taken == [200, 2_000_000]  # the second run not read further than needed
    assert list(runs) == [[2_000_000], [200, 200, 720_000, 980_000], [18_000_000]]


@pytest.mark.parametrize("failure, code", [("input", 3), ("bug", 1)])
def test_an_error_while_making_a_lines_document_fails_that_line_alone(run, monkeypatch, failure, code):
    """Issue 15 audit: documents are made as they are shown, after their group's attention; an error met while
    making one (an InputError of its input, or a bug) fails that line alone, and the lines after it are written."""
    from attn_cli.errors import InputError
    from attn_cli.results import ExplainResult

    real = ExplainResult.document

    def failing_on_bank(self, wanted=None):
        if self.sentence == "the bank":
            raise InputError("no document for this one") if failure == "input" else RuntimeError("boom")
        return real(self, wanted)

    monkeypatch.setattr(ExplainResult, "document", failing_on_bank)
    result = run("explain", "-", "--json", "--neighbors", "0", input="money bank grows\nthe bank\nriver flows\n")
    assert result.exit_code == 3
    documents = json_lines(result.stdout)
    assert [(d["line"], d.get("error", {}).get("code")) for d in documents] == [(1, None), (2, code), (3, None)]
    assert "1 of 3 input lines failed" in result.stderr


def test_an_explain_result_has_the_fields_it_always_had():
    """Issue 15 audit: the diagnosis a batch keeps for its documents is no dataclass field of the result."""
    import dataclasses

    from attn_cli.api import explain_tokenized
    from attn_cli.results import ExplainResult
    from attn_cli.settings import Settings
    import attn_cli

    fields = ["sentence", "tokenized", "vectors", "settings", "attention", "shifts"]
    assert [field.name for field in dataclasses.fields(ExplainResult)] == fields
    vectors, settings = attn_cli.load_vectors(), Settings()
    sentence = "money bank grows"
    [result] = explain_tokenized([(sentence, attn_cli.api.tokenized_for(sentence, vectors, settings))], vectors,
                                 settings)
    assert list(dataclasses.asdict(result)) == fields and ExplainResult.__match_args__ == tuple(fields)


def test_a_batch_names_its_unknown_words_once_at_the_end(run):
    lines = "".join("money bnak grows\n" if n % 2 else "river bank zzqx\n" for n in range(40))
    result = run("explain", "-", "--json", "--fields", "dropped_tokens", input=lines)
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == ['attn-cli: warning: skipped 40 unknown words in 40 of 40 lines, not in the vocabulary; '
                        'most often "zzqx" (20), "bnak" (20); each line\'s JSON lists its own under dropped_tokens']
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert [[item["text"] for item in document["dropped_tokens"]] for document in documents[:2]] == [["zzqx"], ["bnak"]]


def test_quiet_leaves_out_warnings_but_not_errors(run):
    quiet = run("explain", "-", "-q", "--plain", input="money bnak grows\n\nzzqx\n")
    assert quiet.exit_code == 3 and "warning" not in quiet.stderr
    assert "error: line 3 of stdin" in quiet.stderr
    assert "warning: skipped" in run("explain", "money bnak grows").stderr
    assert run("explain", "money bnak grows", "--quiet").stderr == ""


def test_a_strict_stop_mid_group_says_which_lines_it_read_but_did_not_run(run):
    """Issue 25.7: the error that ends a batch says what was left: here lines 3 and 4 came in the same group as
    the failed line 2 and are named, not silently dropped."""
    lines = "money bank grows\nzzqx qqvv\nriver bank flows\nmoney grows\n"
    result = run("explain", "-", "--json", "--neighbors", "0", "--strict", input=lines)
    assert result.exit_code == 3 and [d["line"] for d in json_lines(result.stdout)] == [1]
    assert result.stderr.splitlines()[-1].endswith(
        "(the run stopped at line 2: lines 3 to 4 were read but not run, and no line after line 4 was read)")


@pytest.mark.parametrize("source", ["--file", "stdin"])
def test_a_read_error_mid_group_keeps_the_lines_read_before_it(run, tmp_path, source):
    """Issue 25 item 7: a line too long to read ended a --file batch with nothing shown for the lines before it
    in its group (a group was read whole before any of it ran)."""
    data = b"money bank grows\nriver bank flows\n" + b"x" * (2 << 20) + b"\nmoney grows\n"
    path = tmp_path / "sentences.txt"
    path.write_bytes(data)
    result = (run("explain", "--file", str(path), "--json", "--neighbors", "0") if source == "--file" else
              run("explain", "-", "--json", "--neighbors", "0", input=data))
    assert result.exit_code == 3 and len(result.stderr.splitlines()) == 1
    assert "line 3 of" in result.stderr and "is longer than 1 MiB" in result.stderr
    assert [document["line"] for document in json_lines(result.stdout)] == [1, 2]


def test_a_byte_order_mark_starting_a_jsonl_line_is_read_as_text_mode_reads_it(run):
    """Files joined with cat carry a second file's BOM into a middle line: text mode read that line, JSON Lines
    refused it ("Unexpected UTF-8 BOM"). A mark that starts a line is no part of its object."""
    bom = "\ufeff"
    lines = f'{bom}{{"id": 1, "text": "money bank"}}\n{bom}{{"id": 2, "text": "river bank"}}\n'
    result = run("explain", "-", "--input-format", "jsonl", "--json", input=lines.encode("utf-8"))
    assert result.exit_code == 0, result.stderr
    assert [document["id"] for document in json_lines(result.stdout)] == [1, 2]


def test_a_strict_stop_one_line_before_the_end_names_that_line_alone(run):
    """It said "lines 4 to 4 were read but not run"; one line is "line 4"."""
    lines = "money bank grows\nriver bank\nzzqx qqvv\nmoney grows\n"
    result = run("explain", "-", "--json", "--neighbors", "0", "--strict", input=lines)
    assert result.exit_code == 3
    assert result.stderr.splitlines()[-1].endswith(
        "(the run stopped at line 3: line 4 was read but not run, and no line after line 4 was read)")


@pytest.mark.parametrize("line, kind", [("[1, 2]", "array"), ('"money bank"', "string"), ("3", "number"),
                                        ("null", "null")])
def test_a_json_line_that_is_no_object_says_so(run, line, kind):
    """Whatever the Python: a list nested 1,000 deep fails to parse before 3.12 and parses from 3.12 on, and both
    must say the line holds no object (CI's Python 3.13 run met 'no "text" string' for it)."""
    result = run("explain", "-", "--input-format", "jsonl", "--json", input=f"{line}\n" + '{"text": "money"}\n')
    first = json_lines(result.stdout)[0]
    assert first["error"]["message"].startswith(f"not a JSON object (a JSON {kind}); ")
