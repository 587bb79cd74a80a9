"""Text that is not UTF-8 is said to be so (issue 25 item 5): a byte order mark names the encoding a corpus or a
batch is decoded from; bytes that are not UTF-8, or UTF-16 without a mark (NUL bytes), are refused naming the line
and the fix, never trained on or explained as mojibake."""

from __future__ import annotations

import json

import pytest

import attn_cli
from attn_cli.training.demo import demo_corpus
from attn_cli.training.weights import load_layer

SENTENCES = "money bank grows\nriver bank flows\n"
MARKED = ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"]  # Python's utf-16 and utf-32 write a mark (little-endian)


def marked(text: str, encoding: str) -> bytes:
    """The text in `encoding`, with its byte order mark (utf-16-be has none of its own: added here)."""
    return ("\ufeff" + text).encode(encoding) if encoding.endswith("-be") else text.encode(encoding)


@pytest.fixture(scope="module")
def corpus_text() -> str:
    return "\n".join(demo_corpus(attn_cli.load_vectors(), sentences=200, seed=5).lines) + "\n"


def tokens(stdout: str) -> list[list[str]]:
    return [[token["text"] for token in json.loads(line)["tokens"]] for line in stdout.splitlines()]


@pytest.mark.parametrize("encoding", MARKED)
def test_a_marked_batch_on_stdin_is_read_in_its_encoding(run, encoding):
    result = run("explain", "-", "--json", "--neighbors", "0", input=marked(SENTENCES, encoding))
    assert result.exit_code == 0, result.stderr
    assert tokens(result.stdout) == [["money", "bank", "grows"], ["river", "bank", "flows"]]


@pytest.mark.parametrize("encoding", MARKED)
def test_a_marked_file_is_read_in_its_encoding(run, tmp_path, encoding):
    path = tmp_path / "sentences.txt"
    path.write_bytes(marked(SENTENCES, encoding))
    result = run("explain", "--file", str(path), "--json", "--neighbors", "0")
    assert result.exit_code == 0, result.stderr
    assert tokens(result.stdout) == [["money", "bank", "grows"], ["river", "bank", "flows"]]


def test_utf16_without_a_mark_is_refused_line_by_line_not_explained_letter_by_letter(run):
    """Read as UTF-8, UTF-16 of ASCII is valid: `m\\0o\\0n\\0...` was explained as the words m, o, n, e, y."""
    result = run("explain", "-", "--json", "--neighbors", "0", input=SENTENCES.encode("utf-16-le"))
    assert result.exit_code == 3
    errors = [json.loads(line)["error"]["message"] for line in result.stdout.splitlines()]
    assert len(errors) == 3 and all(  # the last line end's NUL byte is a line of its own
        "holds NUL bytes" in message and "iconv -f UTF-16LE -t UTF-8" in message for message in errors)


def test_a_marked_stream_that_breaks_its_encoding_names_the_line(run):
    damaged = marked(SENTENCES, "utf-16-le") + b"\x00\xd8x\x00\n\x00"  # a lone high surrogate on line 3
    result = run("explain", "-", "--json", "--neighbors", "0", input=b"\xff\xfe" + damaged)
    assert result.exit_code == 3 and len(result.stderr.splitlines()) == 1
    assert "line 3 of stdin is not valid UTF-16-LE, as its byte order mark says" in result.stderr
    assert len(result.stdout.splitlines()) == 2  # the lines before it were explained


@pytest.mark.parametrize("encoding", MARKED)
def test_a_marked_corpus_trains_as_its_utf8_text_does(run, tmp_path, corpus_text, encoding):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(marked(corpus_text, encoding))
    options = ["--epochs", "1", "--softmax-vocab", "3000"]
    assert run("train", str(corpus), "--out", str(tmp_path / "marked.npz"), *options).exit_code == 0
    assert run("train", "-", "--out", str(tmp_path / "plain.npz"), *options, input=corpus_text).exit_code == 0
    layers = [load_layer(tmp_path / name) for name in ("marked.npz", "plain.npz")]
    assert layers[0].provenance["corpus"]["fingerprint"] == layers[1].provenance["corpus"]["fingerprint"]
    assert (layers[0].projections.w_q == layers[1].projections.w_q).all()


@pytest.mark.parametrize("encoding, source, line, fix", [
    ("latin-1", "file", 3, "not valid UTF-8; convert it to UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)"),
    ("utf-16-le", "file", 1, "holds NUL bytes"),
    ("utf-16-le", "stdin", 1, "iconv -f UTF-16LE -t UTF-8"),
])
def test_a_corpus_that_is_not_utf8_is_refused_naming_the_line_and_the_fix(run, tmp_path, corpus_text, encoding,
                                                                          source, line, fix):
    """Lines that were not UTF-8 used to be skipped with a warning (a Latin-1 corpus lost its accented lines) and
    UTF-16 without a mark was trained on letter by letter."""
    lines = corpus_text.splitlines(keepends=True)
    text = "".join(lines[:2] + ["café " + lines[2]] + lines[3:])
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(text.encode(encoding))
    out = tmp_path / "x.npz"
    result = (run("train", str(corpus), "--out", str(out)) if source == "file" else
              run("train", "-", "--out", str(out), input=text.encode(encoding)))
    where = "stdin" if source == "stdin" else str(corpus)
    assert result.exit_code == 3 and result.stdout == "" and not out.exists()
    assert len(result.stderr.splitlines()) == 1 and f"line {line} of {where}" in result.stderr
    assert fix in result.stderr
