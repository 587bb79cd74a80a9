"""The catalogue of bad input: every case one stderr line naming the fix, its documented exit code,
no traceback, nothing on stdout (the commands run with --json), and no file of the user's changed.

Vector-file and cache cases live beside the readers' tests; this file covers what a person
types: sentences and options, through every command.
"""

from __future__ import annotations

import json

import pytest

from attn_cli.errors import EXIT_CODES

LONG_WORD = "q" * 100_000
TEN_THOUSAND_WORDS = " ".join(["bank"] * 10_000)

# (case name, arguments, stdin or None, exit code, words the one stderr line must contain)
CATALOGUE = [
    # sentences
    ("empty sentence", ["explain", ""], None, 3, "sentence is empty"),
    ("whitespace only", ["explain", " \t  "], None, 3, "sentence is empty"),
    ("only punctuation", ["explain", "?! ... ,;"], None, 3, "no word of the sentence"),
    ("every word out of vocabulary", ["explain", "qqqzzz jjjxxx"], None, 3, '"qqqzzz", "jjjxxx"'),
    ("10,000 words", ["explain", TEN_THOUSAND_WORDS], None, 3, "--max-tokens 1,000"),
    ("one 100,000-character word", ["explain", LONG_WORD], None, 3, "(100,000 characters)"),
    ("emoji only", ["explain", "🏦 💸 🌊"], None, 3, "no word of the sentence"),
    ("right-to-left text only", ["explain", "בנק כסף"], None, 3, '"בנק", "כסף"'),
    ("mixed scripts, nothing known", ["explain", "банк 銀行 bänk"], None, 3, "no word of the sentence"),
    ("empty stdin", ["explain", "-"], "", 3, "no sentence on stdin"),
    ("blank stdin", ["explain", "-"], "\n \n\t\n", 3, "no sentence on stdin"),
    ("invalid UTF-8 on stdin", ["explain", "-"], b"\xff\xfe bank\n", 3, "line 1 of stdin: not valid UTF-8"),
    ("NUL bytes only on stdin", ["explain", "-"], "\x00\x00\n", 3, "no word of the sentence"),
    ("every word unknown with --oov error", ["explain", "money bnak", "--oov", "error"], None, 3,
     "did you mean bank"),
    # options
    ("zero heads", ["explain", "money bank", "--heads", "0"], None, 2, "--heads must be at least 1"),
    ("negative heads", ["explain", "money bank", "--heads", "-2"], None, 2, "--heads must be at least 1"),
    ("heads that do not divide the width", ["explain", "money bank", "--heads", "5"], None, 2,
     "does not divide the width 128"),
    ("heads that do not divide d_k", ["explain", "money bank", "--mode", "projected", "--d-k", "30", "--heads",
                                      "4"], None, 2, "does not divide the width 30"),
    ("d_k zero", ["explain", "money bank", "--mode", "projected", "--d-k", "0"], None, 2, "--d-k must be"),
    ("d_k without projected mode", ["explain", "money bank", "--d-k", "8"], None, 2, "add --mode projected"),
    ("scale NaN", ["explain", "money bank", "--scale", "nan"], None, 2, "--scale must be"),
    ("scale inf", ["explain", "money bank", "--scale", "inf"], None, 2, "--scale must be"),
    ("scale negative", ["explain", "money bank", "--scale", "-0.5"], None, 2, "--scale must be"),
    ("scale a word", ["explain", "money bank", "--scale", "huge"], None, 2, "--scale must be"),
    ("temperature zero", ["explain", "money bank", "--temperature", "0"], None, 2, "--temperature must be"),
    ("temperature negative", ["explain", "money bank", "--temperature", "-1"], None, 2, "--temperature must be"),
    ("temperature inf", ["explain", "money bank", "--temperature", "inf"], None, 2, "--temperature must be"),
    ("unknown mask", ["explain", "money bank", "--mask", "future"], None, 2, "'--mask'"),
    ("unknown mode", ["explain", "money bank", "--mode", "learned"], None, 2, "'--mode'"),
    ("unknown similarity", ["explain", "money bank", "--similarity", "l2"], None, 2, "'--similarity'"),
    ("heads not a number", ["explain", "money bank", "--heads", "many"], None, 2, "'--heads'"),
    ("negative neighbours", ["explain", "money bank", "--neighbors", "-3"], None, 2, "--neighbors must be"),
    ("max tokens zero", ["explain", "money bank", "--max-tokens", "0"], None, 2, "--max-tokens must be"),
    ("unknown include", ["explain", "money bank", "--include", "gradients"], None, 2, "choose from"),
    ("unknown option", ["explain", "money bank", "--colour"], None, 2, "--colour"),
    ("trace --word not in the sentence", ["trace", "money bank grows", "--word", "river"], None, 3, "river"),
    ("trace --dims zero", ["trace", "money bank grows", "--dims", "0"], None, 2, "'--dims'"),
    ("compare --word missing from a sentence", ["compare", "river bank flows", "money bank grows", "--word",
                                                "river"], None, 3, "sentence 2"),
    ("compare with no shared word", ["compare", "river flows", "money grows"], None, 3, "--word"),
    ("compare with one sentence", ["compare", "money bank grows"], None, 3, "at least two sentences"),
    ("compare --cross with three sentences", ["compare", "a bank", "the bank", "my bank", "--cross"], None, 3,
     "exactly two sentences"),
    ("compare --file missing", ["compare", "--file", "/no/such/sentences.txt"], None, 2, "no such file"),
    ("vectors file missing", ["explain", "money bank", "--vectors", "/no/such/glove.txt"], None, 4,
     "no such vector file"),
]


@pytest.mark.parametrize("name, args, stdin, code, words", CATALOGUE, ids=[case[0] for case in CATALOGUE])
def test_bad_input_is_one_clear_line(run, name, args, stdin, code, words):
    result = run(*args, "--json", input=stdin)
    assert result.exit_code == code, (result.stdout[:200], result.stderr[:500])
    assert code in EXIT_CODES
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if not line.startswith("attn-cli: warning:")]
    assert len(errors) == 1, result.stderr[:500]
    assert errors[0].startswith("attn-cli: error: ")
    assert words in errors[0]
    assert len(errors[0]) < 400  # one readable line, even for a 100,000-character word
    assert "Traceback" not in result.stderr


def test_the_catalogue_is_large_enough():
    assert len(CATALOGUE) >= 40


def test_a_user_file_is_never_changed(run, tmp_path):
    """Failures that name a file of the user's leave it byte for byte as it was."""
    sentences = tmp_path / "sentences.txt"
    sentences.write_bytes(b"river flows\nmoney grows\n")
    vectors = tmp_path / "vectors.txt"
    vectors.write_bytes(b"money 0.1 0.2\nbank 0.3 nope\n")
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in (sentences, vectors)}
    assert run("compare", "--file", str(sentences), "--json").exit_code == 3
    assert run("explain", "money bank", "--vectors", str(vectors), "--json").exit_code == 4
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in before} == before


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1e"])
def test_line_separators_in_a_sentence_never_split_a_json_line(run, separator):
    """Found by fuzzing: U+0085 written raw made str.splitlines() cut one document in two."""
    result = run("explain", f"money{separator}bank", "--json")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["sentence"] == f"money{separator}bank"
