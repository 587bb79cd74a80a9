"""Hostile files and a shared cache (issue 14): what others can put in the cache folder never crashes a run,
never serves vectors of another file, and never leads the tool to read, write or delete outside the cache.

The cases that fit the catalogue (one `explain --json` run on a damaged cache) are in test_bad_inputs.py; these
need more than one run, or look at what is left on disk. Each checks the exit code, the one stderr line, stdout,
and that the files around the cache are untouched.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from attn_cli.vectors import load_vectors
from attn_cli.vectors.cache import Fingerprint

GOOD = "money 0.1 0.2 0.3\nbank 0.2 0.1 0.0\ngrows 0.0 0.3 0.1\n"


def snapshot(folder: Path) -> dict:
    """Everything under `folder` (links not followed): a file's bytes and modification time, a folder's None."""
    return {p: None if p.is_dir() else (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*")}


def one_line(stderr: str, kind: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"attn-cli: {kind}: "), stderr
    return lines[0]


@pytest.fixture
def user(tmp_path) -> Path:
    """A folder of the user's, with a vector file and a file that must survive everything."""
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "vectors.txt").write_text(GOOD)
    (folder / "important").mkdir()
    (folder / "important" / "data.txt").write_text("keep me")
    return folder


def test_a_linked_layout_folder_is_never_followed_by_a_run(run, user, private_cache):
    """v1 a symbolic link into the user's files: the run reads without a cache instead of writing there."""
    (private_cache / "v1").symlink_to(user / "important")
    before = snapshot(user)
    result = run("explain", "money bank grows", "--vectors", str(user / "vectors.txt"), "--json")
    assert result.exit_code == 0
    assert "is a symbolic link, which the cache never follows" in one_line(result.stderr, "warning")
    assert [t["key"] for t in json.loads(result.stdout)["tokens"]] == ["money", "bank", "grows"]
    assert snapshot(user) == before  # nothing written where the link leads


def test_a_planted_folder_that_cannot_be_deleted_is_never_served(run, user, monkeypatch):
    """Another user's folder under this file's key (which this user cannot delete): this run's own import is used."""
    other = user / "other.txt"
    other.write_text(GOOD.replace("0.1", "0.9"))
    load_vectors(str(other))
    layout = Path(os.environ["ATTN_CLI_CACHE"]) / "v1"
    [planted] = list(layout.iterdir())
    shutil.copytree(planted, layout / Fingerprint.of(user / "vectors.txt").key("glove", None))
    monkeypatch.setattr("attn_cli.vectors.importer.discard", lambda folder: None)  # as if not ours to delete
    before = snapshot(user)
    result = run("explain", "money bank grows", "--vectors", str(user / "vectors.txt"), "--json",
                 "--include", "embeddings")
    assert result.exit_code == 0, result.stderr
    corrupt, replaced = result.stderr.splitlines()
    assert "records another source" in corrupt and "rebuilding it" in corrupt
    assert replaced.startswith("attn-cli: warning: cannot replace the corrupt cache") and "import of" in replaced
    np.testing.assert_allclose(json.loads(result.stdout)["embeddings"], [[0.1, 0.2, 0.3], [0.2, 0.1, 0], [0, 0.3, 0.1]],
                               rtol=1e-6)
    assert snapshot(user) == before
    assert not [p for p in layout.iterdir() if p.name.startswith(".tmp-")]
