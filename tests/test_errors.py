"""Every expected failure: one stderr line that names the fix, the documented exit code, nothing on stdout."""

from __future__ import annotations

import pytest

from attn_cli.errors import EXIT_CODES

CASES = [
    # (arguments, exit code, words the message must contain)
    (["explain", ""], 3, "sentence is empty"),
    (["explain", "   "], 3, "sentence is empty"),
    (["explain", "!!! ..."], 3, "no word of the sentence"),
    (["explain", "zzqx qqzv"], 3, '"zzqx", "qqzv"'),
    (["explain", "money bnak", "--oov", "error"], 3, "did you mean bank"),
    (["explain", "money bank", "--mask", "sideways"], 2, "'--mask'"),
    (["explain", "money bank", "--mode", "trained"], 2, "'--mode'"),  # trained mode comes with --weights
    (["explain", "money bank", "--heads", "two"], 2, "'--heads'"),
    (["explain", "money bank", "--heads", "0"], 2, "--heads must be at least 1"),
    (["explain", "money bank", "--heads", "3"], 2, "choose a divisor of 128"),
    (["explain", "money bank", "--mode", "projected", "--d-k", "10", "--heads", "4"], 2, "divisor of 10"),
    (["explain", "money bank", "--d-k", "0", "--mode", "projected"], 2, "--d-k must be from 1 to 4,096"),
    (["explain", "money bank", "--d-k", "100000", "--mode", "projected"], 2, "--d-k must be from 1 to 4,096"),
    (["explain", "money bank", "--d-k", "16"], 2, "add --mode projected"),
    (["explain", "money bank", "--output-projection"], 2, "add --mode projected"),
    # issue 13.10: an option that does not apply is always an error naming what it needs, never ignored
    (["explain", "money bank", "--seed", "3"], 2, "--seed applies only to projected mode; add --mode projected"),
    (["trace", "money bank", "--seed", "3"], 2, "--seed applies only to projected mode; add --mode projected"),
    (["explain", "money bank", "--format", "glove"], 2, "--format applies only to a vector file; add --vectors FILE"),
    (["explain", "money bank", "--skip-bad-lines"], 2, "--skip-bad-lines applies only to a vector file"),
    (["compare", "river bank", "money bank", "--trust-pickle"], 2, "--trust-pickle applies only to a vector file"),
    (["explain", "money bank", "--position-scale", "2"], 2, "--position-scale applies only with position encodings"),
    (["explain", "money bank", "--scale", "nan"], 2, "--scale must be"),
    (["explain", "money bank", "--scale", "inf"], 2, "--scale must be"),
    (["explain", "money bank", "--scale", "-1"], 2, "--scale must be"),
    (["explain", "money bank", "--scale", "big"], 2, "--scale must be"),
    (["explain", "money bank", "--temperature", "0"], 2, "--temperature must be"),
    (["explain", "money bank", "--temperature", "nan"], 2, "--temperature must be"),
    (["explain", "money bank", "--neighbors", "-1"], 2, "--neighbors must be"),
    (["explain", "money bank", "--neighbor-vocab", "0"], 2,
     "--neighbor-vocab must be at least 1, or all for all words"),
    # the weights fix the mode: raw mode with a weights file would ignore the file
    (["explain", "money bank", "--mode", "raw", "--weights", "layer.npz"], 2, "--weights"),
    (["explain", "money bank", "--include", "qkv"], 2, "add --json"),
    (["explain", "money bank", "--json", "--include", "gradients"], 2, "choose from embeddings, qkv, outputs"),
    (["explain", "money bank", "--html", "/no/such/folder/r.html"], 2, "folder /no/such/folder does not exist"),
    (["explain", "money bank", "--html", "same.out", "--svg", "./same.out"], 2, "--html and --svg name the same file"),
    (["explain", "money bank", "--vectors", "/no/such/file.txt"], 4, "no such vector file"),
    (["explain", "money bank", "--bogus"], 2, "--bogus"),
    (["explain"], 2, "give a SENTENCE, - to read one per line from stdin, or --file PATH"),
    (["compare", "river flows", "money grows"], 3, "share no word"),
    (["compare", "river flows", "money grows"], 3, "pass --word W"),
    (["compare", "river bank flows", "money grows", "--word", "bank"], 3,
     '--word "bank" is not in sentence 2 ("money grows")'),
    (["compare", "river bank", "money bank", "--word", "zzqx"], 3, '--word "zzqx" is not in the vocabulary'),
    (["compare", "river bank flows"], 3, "at least two sentences (got 1)"),
    (["compare"], 3, "at least two sentences (got 0)"),
    (["compare", "river bank", "money bank", "tree bank", "--cross"], 3, "--cross takes exactly two sentences"),
    (["compare", "river bank", "--cross"], 3, "--cross takes exactly two sentences"),
    (["compare", "river bank", "money bank", "--cross", "--word", "bank"], 2, "leave it out with --cross"),
    (["compare", "river bank", "zzqx qqzv"], 3, 'sentence 2 ("zzqx qqzv"): no word of the sentence'),
    (["compare", "river bank", "money bank", "--file", "/no/such/sentences.txt"], 2,
     "--file /no/such/sentences.txt: no such file"),
    (["compare", "river bank", "money bank", "--heads", "3"], 2, "choose a divisor of 128"),
]


@pytest.mark.parametrize("args, code, words", CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_expected_failures_are_one_clear_line(run, args, code, words):
    result = run(*args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("attn-cli: error: ")
    assert words in lines[0]
    assert "Traceback" not in result.stderr


def test_a_directory_is_not_a_vector_file(run, tmp_path):
    result = run("explain", "money", "--vectors", str(tmp_path))
    assert result.exit_code == 4
    assert "is a directory" in result.stderr


def test_an_empty_vector_file_is_named(run, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = run("explain", "money", "--vectors", str(empty))
    assert result.exit_code == 4 and "is empty" in result.stderr
    assert empty.read_text() == ""  # nothing of the user's is changed


def test_a_malformed_vector_file_is_an_error_not_a_crash(run, tmp_path):
    broken = tmp_path / "broken.txt"
    broken.write_text("money 0.1 0.2 0.3\nbank 0.1 oops 0.3\n")
    result = run("explain", "money bank", "--vectors", str(broken))
    assert result.exit_code == 4
    assert result.stderr.startswith(f"attn-cli: error: {broken}, line 2: 'oops' is not a number")
    assert len(result.stderr.splitlines()) == 1


def test_empty_stdin_is_an_input_error(run):
    result = run("explain", "-", input="\n\n")
    assert result.exit_code == 3 and "no sentence on stdin" in result.stderr


def test_empty_stdin_for_compare_shows_how_to_pipe_sentences(run):
    result = run("compare", "-", input="")
    assert result.exit_code == 3 and "attn-cli compare -" in result.stderr and result.stdout == ""


def test_a_sentence_file_that_is_not_utf8_is_named(run, tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("caf\xe9 bank\nmoney bank\n".encode("latin-1"))
    result = run("compare", "--file", str(path))
    assert result.exit_code == 3 and f"line 1 of {path}: not valid UTF-8" in result.stderr


def test_no_arguments_show_the_help(run):
    result = run()
    assert "explain" in result.stdout + result.stderr


def test_every_exit_code_is_documented_in_the_docs():
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "limits.md").read_text(encoding="utf-8")
    for code in EXIT_CODES:
        assert f"| {code} |" in page


def test_a_value_python_spells_none_is_spelt_as_python_writes_it():
    """The command line types `all` where Python passes None: each message spells its own."""
    import attn_cli

    with pytest.raises(attn_cli.SettingsError, match="neighbor_vocab must be at least 1, or None for all words"):
        attn_cli.explain("money bank", neighbor_vocab=0)
