"""Out of memory is not a bug (issue 25 item 9): a MemoryError is one stderr line naming the setting that drives the
memory, with the exit code of that setting's family, never "this is a bug".

The allocation is made to fail in-process (a real one would need gigabytes): the engine's step that holds the
memory is replaced by one that raises MemoryError, as numpy does when an array cannot be allocated.
"""

from __future__ import annotations

import json

import pytest

import attn_cli
from attn_cli.engine import analysis, sentences
from attn_cli.training import trainer


def refuse(monkeypatch, owner, name: str, when=lambda *args, **kwargs: True) -> None:
    """`owner.name` raises MemoryError when `when(*args)` holds, else runs as before."""
    original = getattr(owner, name)

    def allocating(*args, **kwargs):
        if when(*args, **kwargs):
            raise MemoryError  # what numpy raises: "Unable to allocate ..." without naming any setting
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, allocating)


def one_error(result, code: int, *words: str) -> None:
    assert result.exit_code == code and result.stdout == "", (result.stdout, result.stderr)
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("attn-cli: error: ")
    assert "bug" not in result.stderr and all(word in result.stderr for word in words), result.stderr


def test_a_sentence_too_large_for_memory_names_max_tokens(run, monkeypatch):
    refuse(monkeypatch, sentences, "attention_stacks")
    one_error(run("explain", "money bank grows"), 3, "out of memory attending 3 tokens with 1 head(s)",
              "--max-tokens")


def test_in_a_batch_the_sentence_too_large_fails_alone(run, monkeypatch):
    longest = lambda embeddings, *rest: max(len(rows) for rows in embeddings) > 3  # noqa: E731
    refuse(monkeypatch, sentences, "attention_stacks", longest)
    result = run("explain", "-", "--json", "--neighbors", "0",
                 input="money bank grows\nthe money bank grows fast\nriver bank flows\n")
    assert result.exit_code == 3
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert [document["line"] for document in documents] == [1, 2, 3]
    assert "tokens" in documents[0] and "tokens" in documents[2]
    assert "out of memory attending 5 tokens" in documents[1]["error"]["message"]
    assert "--max-tokens" in documents[1]["error"]["message"]


def test_a_neighbour_vocabulary_too_large_for_memory_names_neighbor_vocab(run, monkeypatch):
    refuse(monkeypatch, analysis, "mapped_unit_rows")
    one_error(run("explain", "money bank grows", "--mode", "projected", "--neighbor-vocab", "20000"), 2,
              "--neighbor-vocab", "--neighbors 0")


def test_a_training_batch_too_large_for_memory_names_batch_size(run, tmp_path, monkeypatch):
    refuse(monkeypatch, trainer, "batch_loss")
    out = tmp_path / "x.npz"
    one_error(run("train", "--demo", "--out", str(out), "--batch-size", "4096"), 2,
              "--batch-size (4096) asks for more memory")
    assert not out.exists()


def test_python_gets_the_setting_too(monkeypatch):
    refuse(monkeypatch, analysis, "mapped_unit_rows")
    with pytest.raises(attn_cli.SettingsError, match="^neighbor_vocab "):
        attn_cli.explain("money bank grows", mode="projected")


def test_anywhere_else_out_of_memory_is_one_line_not_a_bug(run, monkeypatch):
    """Where no one setting drives it (here: the tokenizer), the line names the settings that bound a run."""
    from attn_cli import batches

    refuse(monkeypatch, batches, "tokens_for")
    one_error(run("explain", "money bank grows"), 2, "out of memory", "--max-tokens", "--neighbor-vocab",
              "--batch-size")


def test_a_document_too_large_for_memory_fails_its_line_alone(run, monkeypatch):
    """Its JSON (n x n matrices as text) is made as the line is written: a MemoryError there was 'a bug' (code 1)."""
    from attn_cli.results import ExplainResult

    refuse(monkeypatch, ExplainResult, "document", lambda result, *rest: len(result.tokens) > 3)
    result = run("explain", "-", "--json", "--neighbors", "0",
                 input="money bank grows\nthe money bank grows fast\nriver bank flows\n")
    assert result.exit_code == 3
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert [document.get("error", {}).get("code") for document in documents] == [None, 3, None]
    assert "--max-tokens" in documents[1]["error"]["message"]
