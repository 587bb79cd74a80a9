"""The Dask recipe of docs/senses-dask.md (issue 27 item 5), run as the page shows it on a LocalCluster of two
worker processes: its grouping equals the single-process `attn_cli.senses` run exactly."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import attn_cli

pytest.importorskip("dask", reason="the dask extra is not installed: pip install 'attn-cli[dask]'")
pytest.importorskip("distributed", reason="the dask extra is not installed: pip install 'attn-cli[dask]'")
pytest.importorskip("pyarrow", reason="the dask extra is not installed: pip install 'attn-cli[dask]'")

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "senses-dask.md"
FILLER = ["the river flows past the old mill", "", "money grows when it is saved", "zzqx qqvv bank",
          "the water was cold and clear"]


def recipe() -> dict:
    """The page's Python block, run as a module of its own (not as __main__, so its cluster part stays out)."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "the page shows the recipe as one Python block"
    namespace: dict = {"__name__": "senses_dask_recipe"}
    exec(compile(blocks[0], str(PAGE), "exec"), namespace)
    return namespace


@pytest.fixture
def corpus(tmp_path) -> Path:
    """The bundled river/money sentences among lines without the word (or with unknown words beside it), blank
    lines, a line holding a lone \\r (one line to --file, two to Dask's default reader), and last a line with the
    word that fails: longer than max_tokens, so skipped and counted."""
    sentences = (ROOT / "data" / "senses" / "bank.txt").read_text(encoding="utf-8").splitlines()
    lines = [line for number, sentence in enumerate(sentences) for line in (sentence, FILLER[number % len(FILLER)])]
    lines[7] = "the bank\rof the river"
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines + ["the bank " * 600]) + "\n", encoding="utf-8", newline="")
    return path


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes on this machine, shared by the module's tests."""
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local, \
            Client(local) as client:
        yield client


def test_the_recipe_on_two_worker_processes_groups_exactly_as_one_process(corpus, tmp_path, cluster, run):
    folder = tmp_path / "out" / "parts"  # not there yet: the recipe makes it
    table = recipe()["occurrences_on_dask"](str(corpus), "bank", str(folder), blocksize=700)
    assert len(cluster.run(lambda: True)) == 2
    parts = sorted(folder.glob("part-*.parquet"))
    assert len(parts) >= 8  # small partitions: line numbers must cross many part boundaries

    lines = corpus.read_bytes().decode("utf-8").removesuffix("\n").split("\n")  # as --file reads it
    alone = attn_cli.senses("bank", lines)
    read = attn_cli.Occurrences.read_parquet(folder / "bank.parquet")
    for joined in (table, read):
        assert joined.lines_read == len(lines) and joined.skipped_lines == alone.occurrences.skipped_lines >= 1
        assert list(joined.line) == list(alone.occurrences.line)
        assert np.array_equal(joined.outputs, alone.occurrences.outputs)
        assert np.array_equal(joined.bags, alone.occurrences.bags)
        assert joined.context_words == alone.occurrences.context_words
        assert attn_cli.group_senses(joined).to_dict() == alone.to_dict()

    labels = tmp_path / "labels.txt"  # one per line of the file, as --labels counts them
    labels.write_text("".join(f"l{number % 3}\n" for number in range(len(lines))), encoding="utf-8")
    documents = [run("senses", "bank", *source, "--labels", str(labels), "--json")
                 for source in (("--file", str(corpus)), ("--occurrences", str(folder / "bank.parquet")))]
    assert [result.exit_code for result in documents] == [0, 0], documents[1].stderr
    assert documents[0].stdout == documents[1].stdout


def test_an_empty_corpus_gives_a_table_without_occurrences(tmp_path, cluster):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    table = recipe()["occurrences_on_dask"](str(empty), "bank", str(tmp_path / "parts"), blocksize=700)
    assert len(table) == 0 and table.lines_read == 0
    assert len(attn_cli.Occurrences.read_parquet(tmp_path / "parts" / "bank.parquet")) == 0
    with pytest.raises(attn_cli.InputError, match="no occurrence of 'bank' in 0 lines"):
        attn_cli.group_senses(table)


def test_the_recipe_is_the_pages_only_code_and_defines_what_the_page_says():
    names = recipe()
    assert {"occurrences_on_dask", "read_lines", "scan_part", "count_lines"} <= set(names)
    assert "attn_cli.occurrences(word" in PAGE.read_text(encoding="utf-8")
