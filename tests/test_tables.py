"""The tables a person reads, as a pipe and an 80-column terminal show them (issue 13's first-hour items).

New neighbours are marked in plain text, diagnostic warnings are a section of the
report with indented continuation lines, words are never cut, repeated words are
explained and keep their `#position`, and the tables carry no trailing spaces,
aligned decimals and no `-0.00`.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from attn_cli.render.terminal import signed

SENTENCE = "money bank grows"


def table(run, command: str, *args: str, env: dict | None = None) -> str:
    result = run(command, *args, env=env)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def document(run, command: str, *args: str) -> dict:
    return json.loads(table(run, command, *args, "--json"))


def section_of(out: str, title: str, end: str) -> str:
    return out[out.index(title):out.index(end, out.index(title))]


@pytest.mark.parametrize("env", [{}, {"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_new_neighbours_are_marked_in_plain_text(run, env):
    """A pipe, NO_COLOR and TERM=dumb drop colour; the `+` mark and a legend that does not promise green stay."""
    report = document(run, "explain", SENTENCE)
    out = table(run, "explain", SENTENCE, env=env)
    after = " ".join(section_of(out, "Nearest words", "searched the").split())
    for shift in report["shifts"]:
        before = {n["word"] for n in shift["neighbors_before"]}
        for neighbor in shift["neighbors_after"]:
            marked = f"+{neighbor['word']}" if neighbor["word"] not in before else neighbor["word"]
            assert re.search(rf"(^| ){re.escape(marked)}(,| |$)", after), marked
    assert any(n["word"] not in {b["word"] for b in s["neighbors_before"]}
               for s in report["shifts"] for n in s["neighbors_after"])  # something to mark
    assert "+word: new after attention" in out and "green" not in out


def test_the_legend_names_the_colour_only_where_there_is_colour(run):
    out = table(run, "explain", SENTENCE, env={"FORCE_COLOR": "1", "TERM": "xterm-256color"})
    assert "+word (green): new after attention" in out


def test_diagnostic_warnings_are_a_report_section_laid_out_under_their_labels(run, large_norm_file):
    """The warnings describe the weights: on stdout with the tables, titled per sentence, continuation lines
    indented under the text, a blank line before the next heading; stderr stays empty."""
    result = run("compare", "put my money near the the", "my bank near the river", "--vectors", large_norm_file)
    assert result.exit_code == 0 and result.stderr == ""
    for number in (1, 2):
        warnings = section_of(result.stdout, f"Warnings in sentence {number}\n", "\n\n")
        lines = warnings.splitlines()[1:]
        assert lines[0].startswith("warning head 1: ") and any(line.startswith("hint    try ") for line in lines)
        assert all(re.match(r"(warning|hint) |\s{8}\S", line) for line in lines), lines
    assert "\n\nWeights in sentence 2" in result.stdout and "\n\n“near” in each sentence" in result.stdout


def test_no_word_is_cut_in_any_table(run):
    """Long words keep every letter in the matrices, shifts, neighbours and diagnostics at 80 columns."""
    sentence = "international banking regulations"
    report = document(run, "explain", sentence)
    out = table(run, "explain", sentence)
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80
    for title, end in [("Weights", "each row"), ("Shift", "pulled by:"), ("Diagnostics", "entropy in bits")]:
        part = section_of(out, title, end)
        assert all(word in part for word in sentence.split()), title
    words = " ".join(section_of(out, "Nearest words", "searched the").split()).replace(",", " ").split()
    for shift in report["shifts"]:
        for neighbor in shift["neighbors_before"] + shift["neighbors_after"]:
            assert neighbor["word"] in words or f"+{neighbor['word']}" in words, neighbor["word"]


def test_repeated_words_are_explained_and_keep_their_position(run):
    """Two copies of a word share one vector without positions: a note says so; positions make it go."""
    out = " ".join(table(run, "explain", "the bank by the bank").split())
    assert "repeated “the” at 1, 4; “bank” at 2, 5: without positions every copy of a word has the same" in out
    assert "--positions sinusoidal tells them apart" in out
    assert "repeated" not in table(run, "explain", "the bank by the bank", "--positions", "sinusoidal")
    assert "repeated" not in table(run, "explain", SENTENCE)


def test_the_verdict_names_a_repeated_word_as_the_tables_do(run):
    report = document(run, "compare", "river bank flows", "the bank by the bank")
    (bank,) = report["words"]
    second = bank["occurrences"][1]
    assert [pull["index"] for pull in second["pulled_by"]] == [2, 0, 3]  # by, then each "the": equal shares
    assert abs(report["sentences"][1]["shares"]["shift"][1][4]) < 1e-12  # a copy: no move
    assert bank["verdict"].endswith("vs by, the#1, the#4 (2, bank#2)")
    out = table(run, "compare", "river bank flows", "the bank by the bank")
    assert "the#4 0." in out and "vs by, the#1, the#4 (2, bank#2)" in out


@pytest.mark.parametrize("command", [["explain", SENTENCE], ["explain", "the bank by the bank", "--heads", "2"],
                                     ["compare", "river bank flows", SENTENCE], ["trace", SENTENCE, "--word", "bank"],
                                     ["compare", "river bank flows", SENTENCE, "--cross"]])
def test_piped_tables_have_no_trailing_spaces(run, command):
    out = table(run, *command)
    assert [line for line in out.splitlines() if line != line.rstrip()] == []


def test_weights_have_three_decimals_and_decimal_points_line_up(run):
    report = document(run, "explain", SENTENCE)
    out = table(run, "explain", SENTENCE)
    shifts = section_of(out, "Shift", "pulled by:").splitlines()[4:7]
    for line, shift in zip(shifts, report["shifts"]):
        assert f" {shift['self_weight']:.3f} " in line
        assert all(f"{pull['token']} {pull['weight']:.3f} (" in line for pull in shift["pulled_by"])
    rows = section_of(out, "Diagnostics", "entropy in bits").splitlines()[4:7]
    points = {line.index(".", line.index(str(row["entropy_bits"])[:3]) + 4) for line, row
              in zip(rows, report["diagnostics"]["heads"][0]["rows"])}
    assert len(points) == 1, rows


def test_a_share_that_rounds_to_zero_has_no_sign():
    assert [signed(value) for value in (0.26, -0.12, -0.001, 0.004, -0.0)] == ["+0.26", "-0.12", "0.00", "0.00",
                                                                             "0.00"]


def test_the_import_progress_bar_fits_80_columns(monkeypatch):
    """A long file name is elided in the middle; the bar never wraps onto a second line."""
    from attn_cli.vectors.progress import progress_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    monkeypatch.setenv("COLUMNS", "80")
    with progress_bar("importing glove.6B.100d.a-rather-long-file-name.txt", 456_700_000) as update:
        update(123_400_000, 412_345)
    lines = [line for line in re.split(r"[\r\n]", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue()))
             if line.strip()]
    assert lines and all(len(line.rstrip()) <= 80 and "words" in line for line in lines), lines
    assert "importing glov" in lines[-1] and "name.txt" in lines[-1] and "…" in lines[-1]


@pytest.mark.parametrize("columns", [80, 60])
def test_vectors_list_fits_the_terminal_and_its_columns_line_up(run, tmp_path, glove_file, word2vec_text_file,
                                                                 columns):
    """Sets of different sizes and long names: each set's id on a line, its size, format and source on the next
    (a source too long for the line wrapped, every character kept), no line wider than the terminal, and the
    sizes in one column."""
    env = {"ATTN_CLI_CACHE": str(tmp_path / "cache"), "COLUMNS": str(columns)}
    deep = tmp_path / "a-folder-with-a-rather-long-name" / "and-another-one-below-it" / "glove.test.50d.txt"
    deep.parent.mkdir(parents=True)
    deep.write_text(Path(glove_file).read_text(encoding="utf-8"), encoding="utf-8")
    for args in ([glove_file, "--limit", "5"], [word2vec_text_file], [str(deep)]):
        assert run("vectors", "import", *args, env=env).exit_code == 0
    sets = json.loads(table(run, "vectors", "list", "--json", env=env))["sets"]
    lines = table(run, "vectors", "list", env=env).splitlines()[1:]
    assert all(line == line.rstrip() and len(line) <= columns for line in lines), lines
    starts = [lines.index(f"  {entry['id']}") for entry in sets]
    assert starts == sorted(starts) and len(starts) == 3
    details = [lines[start + 1] for start in starts]
    for marker in (" x ", " MB"):
        assert len({line.index(marker) for line in details}) == 1, details
    for entry, start, end in zip(sets, starts, [*starts[1:], len(lines)]):
        assert entry["name"] in "".join(line.strip() for line in lines[start + 1:end])
    info = table(run, "vectors", "info", glove_file, env=env).splitlines()
    assert len({len(re.match(r"\S+( \S+)?\s+", line).group()) for line in info}) == 1, info


def test_long_words_are_never_cut_in_neighbour_lists_or_the_largest_weights(run, tmp_path):
    """A 45-letter neighbour folds onto the next line, every letter kept, in explain and compare; the largest
    weights of a wide matrix keep each key=weight pair together and end no line in a space of any kind."""
    long_word = "pneumonoultramicroscopicsilicovolcanoconiosis"
    rng = np.random.default_rng(3)
    path = tmp_path / "long.txt"
    path.write_text("".join(f"{word} {' '.join(f'{x:.4f}' for x in rng.normal(size=8))}\n"
                            for word in ["money", "bank", "grows", "river", "flows", long_word]), encoding="utf-8")
    env = {"ATTN_CLI_CACHE": str(tmp_path / "cache")}
    for command, heading in ((["explain", SENTENCE], "after: y"),
                             (["compare", SENTENCE, "river bank flows", "--word", "bank"], "nearest words after")):
        out = table(run, *command, "--vectors", str(path), env=env)
        assert "…" not in out
        lines = out.splitlines()
        start = next(i for i, line in enumerate(lines) if heading in line)
        column = lines[start].index(heading)
        assert long_word in "".join(line[column:].strip() for line in lines[start + 2:start + 12])
    wide = "the telecommunications representatives deposited interdisciplinary responsibilities at the bank"
    out = table(run, "explain", wide)
    assert "Largest weights per query" in out and all(line == line.rstrip() for line in out.splitlines())
    report = document(run, "explain", wide)
    flat = " ".join(out.split())
    row = report["heads"][0]["weights"][4]  # interdisciplinary's row
    best = max(range(len(row)), key=row.__getitem__)
    assert f"{report['tokens'][best]['text']}={row[best]:.3f}" in flat


def test_the_compared_copy_of_a_repeated_word_is_named(run):
    out = table(run, "compare", "money bank grows and the bank", "river bank flows", "--word", "bank")
    assert "leans to money, grows, the (1, bank#2) vs river, flows (2)" in out
    assert re.search(r"^\s+1 bank#2\s", out, re.M)
