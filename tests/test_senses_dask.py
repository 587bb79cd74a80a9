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
    lines, and last a line with the word that fails: longer than max_tokens, so skipped and counted."""
    sentences = (ROOT / "data" / "senses" / "bank.txt").read_text(encoding="utf-8").splitlines()
    lines = [line for number, sentence in enumerate(sentences) for line in (sentence, FILLER[number % len(FILLER)])]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines + ["the bank " * 600]) + "\n", encoding="utf-8")
    return path


def test_the_recipe_on_two_worker_processes_groups_exactly_as_one_process(corpus, tmp_path):
    from dask.distributed import Client, LocalCluster

    occurrences_on_dask = recipe()["occurrences_on_dask"]
    folder = tmp_path / "parts"
    folder.mkdir()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        table = occurrences_on_dask(str(corpus), "bank", str(folder), blocksize=700)
        workers = client.run(lambda: True)
    assert len(workers) == 2
    parts = sorted(folder.glob("part-*.parquet"))
    assert len(parts) >= 8  # small partitions: line numbers must cross many part boundaries

    lines = [line.rstrip("\n") for line in corpus.read_text(encoding="utf-8").splitlines(keepends=True)]
    alone = attn_cli.senses("bank", lines)
    read = attn_cli.Occurrences.read_parquet(folder / "bank.parquet")
    for joined in (table, read):
        assert joined.lines_read == len(lines) and joined.skipped_lines == alone.occurrences.skipped_lines >= 1
        assert list(joined.line) == list(alone.occurrences.line)
        assert np.array_equal(joined.outputs, alone.occurrences.outputs)
        assert np.array_equal(joined.bags, alone.occurrences.bags)
        assert joined.context_words == alone.occurrences.context_words
        assert attn_cli.group_senses(joined).to_dict() == alone.to_dict()


def test_the_recipe_is_the_pages_only_code_and_defines_what_the_page_says():
    names = recipe()
    assert {"occurrences_on_dask", "scan_part", "count_lines"} <= set(names)
    assert "attn_cli.occurrences(word" in PAGE.read_text(encoding="utf-8")
