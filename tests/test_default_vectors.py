"""The embedded default set: its size, its quality on human judgements, and a start-up free of gensim."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from attn_cli import __version__
from attn_cli.vectors import default_data_dir, load_default_vectors


@pytest.fixture(scope="module")
def default_vectors():
    return load_default_vectors()


def test_default_set_is_small_lowercase_and_finite(default_vectors):
    folder = default_data_dir()
    assert sum(f.stat().st_size for f in folder.iterdir()) < 8_000_000
    assert default_vectors.dims == 128 and default_vectors.count > 20_000
    assert default_vectors.lowercase
    assert np.isfinite(np.asarray(default_vectors.matrix, dtype=np.float32)).all()
    assert len(set(default_vectors.words)) == default_vectors.count


@pytest.mark.parametrize("name, minimum", [("wordsim353.tsv", 0.70), ("simlex999.txt", 0.45)])
def test_default_set_agrees_with_human_similarity_judgements(default_vectors, gensim_sample, name, minimum):
    """Spearman correlation on the evaluation files gensim ships (measured: 0.778 and 0.494)."""
    from gensim.models import KeyedVectors

    keyed = KeyedVectors(vector_size=default_vectors.dims)
    keyed.add_vectors(default_vectors.words, np.asarray(default_vectors.matrix, dtype=np.float32))
    _, spearman, oov_percent = keyed.evaluate_word_pairs(gensim_sample(name))
    assert spearman.statistic >= minimum
    assert oov_percent < 10


def test_explain_on_the_default_set_never_imports_gensim():
    """Importing gensim costs about a second: the default path must not pay it."""
    code = ("import sys\n"
            "from attn_cli.cli.app import app\n"
            "try:\n    app(['explain', 'money bank grows', '--json'])\n"
            "except SystemExit as stop:\n    assert stop.code == 0, stop.code\n"
            "print('gensim' in sys.modules, file=sys.stderr)\n")
    finished = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert finished.stderr.strip() == "False"


def test_python_dash_m_runs_the_cli():
    finished = subprocess.run([sys.executable, "-m", "attn_cli", "--version"], capture_output=True, text=True)
    assert finished.returncode == 0 and finished.stdout.startswith("attn-cli ")


@pytest.mark.parametrize("setup, shown", [
    ("", ""),
    ("import atexit; atexit.register(print, 'atexit ran')", "atexit ran\n"),
    # the thread prints only once the main thread has finished: it runs only if the exit waits for it
    ("import threading; threading.Thread(target=lambda: (threading.main_thread().join(), print('thread ran')))"
     ".start()", "thread ran\n"),
])
def test_the_program_ends_through_the_interpreters_own_exit(setup, shown):
    """run() returns the command's exit code through SystemExit, as any Python program ends: the caller's atexit
    callbacks and threads still run, and stdout is flushed."""
    code = (f"{setup}\nimport sys\nfrom attn_cli.cli import run\nsys.argv = ['attn-cli'] + sys.argv[1:]\nrun()\n"
            "print('not reached')")
    for arguments, exit_code, printed in ((["--version"], 0, f"attn-cli {__version__}\n"),
                                          (["explain", "money", "--heads", "0"], 2, "")):
        finished = subprocess.run([sys.executable, "-c", code, *arguments], capture_output=True, text=True)
        assert (finished.returncode, finished.stdout) == (exit_code, printed + shown), finished.stderr


def test_default_set_lists_the_most_frequent_words_first(default_vectors, run):
    """Issue 13: --neighbor-vocab N promises the N most frequent words, so the rows go by frequency
    (scripts/build_default_vectors.py orders them with wordfreq), not in the tokenizer's a, b, c order."""
    assert default_vectors.words[:10] == ["the", "to", "and", "of", "a", "in", "i", "is", "for", "that"]
    top = set(default_vectors.words[:2000])
    assert {"money", "river", "bank", "water", "house", "people"} <= top
    assert not {"aardvark", "zygote"} & top
    result = run("explain", "money bank grows", "--neighbor-vocab", "2000", "--json")
    neighbours = {n["word"] for shift in json.loads(result.stdout)["shifts"] for n in shift["neighbors_after"]}
    assert neighbours and neighbours <= top
