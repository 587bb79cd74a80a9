"""Text from input reaches no terminal raw (issue 14.1): escape sequences, bidi overrides and Rich markup in
words, sentences, jsonl ids and file names are shown literally in tables, --plain, messages, SVG and Python.

The vector file's words carry a screen clear, an OSC 52 clipboard write, an OSC 8 hidden link, bells, a
right-to-left override, Rich markup that would hide a link or raise MarkupError, and an emoji code.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import attn_cli
from attn_cli.errors import literal
from conftest import HANG_SECONDS

HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029\ufeff]")
MARKUP = "[link=https://evil.example]click-me[/link]"
EVIL_WORDS = ["ba\u200bnk", "bank\x1b[2J", "\x1b]52;c;aGVsbG8=\x07", "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
              "abc\u202edef", MARKUP, "[/oops]", ":bank:", "bell\x07", "nul\x01", "csi\x9b2J"]
SENTENCE = "money bank bell\x07 [/oops] :bank: abc\u202edef"


@pytest.fixture
def evil_file(tmp_path) -> Path:
    """Four ordinary words and the hostile ones, each with a vector, so they show up as neighbours."""
    rng = np.random.default_rng(0)
    path = tmp_path / "evil\x1b[2J\u202e.txt"
    path.write_text("".join(f"{word} {' '.join(f'{x:.4f}' for x in rng.normal(size=8))}\n"
                            for word in ["money", "bank", "grows", "river", *EVIL_WORDS]), encoding="utf-8")
    return path


def assert_literal(*texts: str) -> None:
    """No control or bidi character but line ends, tabs (--plain's separator) and the colour codes of a table."""
    for text in texts:
        found = HIDDEN.search(re.sub(r"\x1b\[[0-9;]*m|[\t\n]", "", text))
        assert not found, repr(found)


def visible_text(result) -> str:
    assert result.exit_code == 0, result.stderr
    assert_literal(result.stdout, result.stderr)
    return result.stdout


@pytest.mark.parametrize("env", [{}, {"NO_COLOR": "1"}, {"TERM": "dumb"},
                                 {"FORCE_COLOR": "1", "TERM": "xterm-256color"}])
@pytest.mark.parametrize("command", [["explain"], ["explain", "--plain"], ["trace", "--word", "bank"],
                                     ["compare", "--word", "money", "money grows"],
                                     ["compare", "--cross", "money grows"]])
def test_words_and_file_names_are_shown_literally_in_every_table(run, tmp_path, evil_file, command, env):
    """Markup is printed as typed (never a hidden link, never MarkupError), escapes are visible, with or
    without colour; the neighbour lists hold every hostile word of the file."""
    name, *options = command
    out = visible_text(run(name, SENTENCE, *options, "--vectors", str(evil_file), "--neighbors", "13",
                           env={"ATTN_CLI_CACHE": str(tmp_path / "cache"), **env}))
    if "--plain" in options or name == "trace":
        return
    flat = re.sub(r"\x1b\[[0-9;]*m", "", out)
    for word in ("bank\\x1b[2J", "abc\\u202edef", "bell\\x07", "csi\\x9b2J"):
        assert word in flat
    assert "[/oops]" in flat and "[link=https://evil." in flat  # as typed: no hidden link, no MarkupError


def test_plain_records_show_jsonl_ids_and_words_literally(run, tmp_path, evil_file):
    lines = json.dumps({"id": "row\x1b]52;c;x\x07\u202e", "text": "money bank"}) + "\n"
    out = visible_text(run("explain", "-", "--input-format", "jsonl", "--plain", "--neighbors", "13", "--vectors",
                           str(evil_file),
                           input=lines, env={"ATTN_CLI_CACHE": str(tmp_path / "cache")}))
    assert "row\\x1b]52;c;x\\x07\\u202e" in out and "bank\\x1b[2J" in out


def test_messages_show_file_names_and_suggestions_literally(run, tmp_path, evil_file):
    """An unknown word's suggestion comes from the file (bell + BEL); a missing file's name carries an OSC 52."""
    env = {"ATTN_CLI_CACHE": str(tmp_path / "cache")}
    result = run("explain", "money bel", "--vectors", str(evil_file), env=env)
    assert result.exit_code == 0 and "bell\\x07" in result.stderr
    assert_literal(result.stderr)
    missing = run("explain", "money", "--vectors", str(tmp_path / "nope\x1b]52;c;eA==\x07"), env=env)
    assert missing.exit_code == 4 and "nope\\x1b]52;c;eA==\\x07" in missing.stderr
    assert_literal(missing.stderr)
    bad_choice = run("explain", "money", "--mode", "\x1b[2J")
    assert bad_choice.exit_code == 2 and "\\x1b[2J" in bad_choice.stderr
    assert_literal(bad_choice.stderr)


def test_vectors_list_and_info_show_names_literally(run, tmp_path, evil_file):
    env = {"ATTN_CLI_CACHE": str(tmp_path / "cache")}
    visible_text(run("vectors", "import", str(evil_file), env=env))
    assert "evil\\x1b[2J\\u202e.txt" in visible_text(run("vectors", "list", env=env))
    assert "evil\\x1b[2J\\u202e.txt" in visible_text(run("vectors", "info", str(evil_file), env=env))


def test_the_svg_is_well_formed_xml_with_the_words_literal(run, tmp_path, evil_file):
    """U+0001 is not allowed in XML 1.0: the picture holds its escape instead."""
    svg = tmp_path / "tables.svg"
    visible_text(run("explain", SENTENCE, "--vectors", str(evil_file), "--neighbors", "13", "--svg", str(svg),
                     env={"ATTN_CLI_CACHE": str(tmp_path / "cache")}))
    text = svg.read_text(encoding="utf-8")
    ElementTree.fromstring(text)
    assert "nul\\x01" in text.replace("&#160;", " ")
    assert_literal(text)


def test_a_result_printed_in_python_shows_words_literally(evil_file, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTN_CLI_CACHE", str(tmp_path / "cache"))
    result = attn_cli.explain(SENTENCE, vectors=str(evil_file), neighbors=13)
    assert_literal(str(result))
    assert "bank\\x1b[2J" in str(result)
    assert "bank\x1b[2J" in [n["word"] for s in result.to_dict()["shifts"] for n in s["neighbors_after"]]


@given(st.text())
def test_literal_hides_nothing_and_changes_nothing_else(text):
    shown = literal(text)
    assert not HIDDEN.search(shown) and not re.search("[\ud800-\udfff]", shown)  # tabs and line ends too
    if not HIDDEN.search(text) and not re.search("[\ud800-\udfff]", text):
        assert shown == text


def test_an_undecodable_byte_in_a_sentence_argument_is_an_unknown_word(tmp_path, evil_file):
    """A command line that is not UTF-8 reaches Python as a lone surrogate; a cached vocabulary has no such
    word: the byte is skipped as unknown and shown as its escape, never an internal error."""
    import subprocess
    import sys

    env = {**os.environ, "ATTN_CLI_CACHE": str(tmp_path / "cache")}
    for command in ([b"explain", b"money bank \xff", b"--json"], [b"compare", b"money bank \xff", b"river bank",
                                                                    b"--word", b"ba\xffnk"]):
        result = subprocess.run([sys.executable.encode(), b"-m", b"attn_cli", *command, b"--vectors",
                                 str(evil_file).encode()], capture_output=True, env=env, timeout=HANG_SECONDS)
        assert result.returncode in (0, 3) and b"internal error" not in result.stderr, result.stderr
    assert b"\\udcff" in result.stderr  # compare names the --word it cannot find, the byte as its escape
