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


# --- vectors remove deletes only what attn-cli made (issue 14.2) ---------------------------------------------
# Each setup gets the cache root and the user's folder, after vectors.txt was imported and a file of the user's
# (important/data.txt) was put beside the cache, and returns what else must survive the command.

def a_copy_of_the_set(root: Path, where: Path) -> Path:
    """A copy of the imported set (valid metadata, a key-shaped name) at `where`, outside the cache."""
    [real] = [p for p in (root / "v1").iterdir() if not p.name.startswith(".")]
    shutil.copytree(real, where / real.name)
    return where / real.name


def folder_of_the_users_in_v1(root, user):
    (root / "v1" / "photos").mkdir()
    (root / "v1" / "photos" / "cat.jpg").write_bytes(b"\xff\xd8 a cat")
    return [root / "v1" / "photos"]


def key_shaped_folder_without_metadata(root, user):
    (root / "v1" / "notes-0123456789abcdef").mkdir()
    (root / "v1" / "notes-0123456789abcdef" / "todo.txt").write_text("call mum")
    return [root / "v1" / "notes-0123456789abcdef"]


def linked_layout(root, user):
    """v1 a symbolic link to a folder of the user's holding a set-shaped folder."""
    (user / "elsewhere").mkdir()
    a_copy_of_the_set(root, user / "elsewhere")
    shutil.rmtree(root / "v1")
    (root / "v1").symlink_to(user / "elsewhere")
    return [user / "elsewhere"]


def linked_set(root, user):
    """A key-shaped symbolic link in v1 to a set-shaped folder among the user's files."""
    (user / "elsewhere").mkdir()
    target = a_copy_of_the_set(root, user / "elsewhere")
    (root / "v1" / "linked-0123456789abcdef").symlink_to(target)
    return [user / "elsewhere"]


def nothing(root, user):
    return []


# (case, setup, arguments after `vectors remove`, exit code, words of the one stderr line or "", set kept)
REMOVE_CATALOGUE = [
    ("'..' (the cache's root)", nothing, [".."], 4, "nothing cached for ..", True),
    ("'.' (the layout folder)", nothing, ["."], 4, "nothing cached for .", True),
    ("an empty name", nothing, [""], 2, "name one cached set", True),
    ("the name of a folder of the user's in v1", folder_of_the_users_in_v1, ["photos"], 4,
     "nothing cached for photos", True),
    ("--all beside a folder of the user's in v1", folder_of_the_users_in_v1, ["--all"], 0, "", False),
    ("--all beside a key-shaped folder without meta.json", key_shaped_folder_without_metadata, ["--all"], 0,
     "has no valid meta.json, so it may not be a set attn-cli made and is left alone", False),
    ("the name of a key-shaped folder without meta.json", key_shaped_folder_without_metadata,
     ["notes-0123456789abcdef"], 4, "is left alone: look inside and delete it yourself", True),
    ("--all through a linked v1", linked_layout, ["--all"], 0, "is a symbolic link, which the cache never follows",
     True),
    ("the name of a link in v1", linked_set, ["linked-0123456789abcdef"], 4, "nothing cached for linked-", True),
]


@pytest.mark.parametrize("name, setup, arguments, code, words, set_kept", REMOVE_CATALOGUE,
                         ids=[case[0] for case in REMOVE_CATALOGUE])
def test_remove_deletes_only_what_attn_cli_made(run, user, private_cache, name, setup, arguments, code, words,
                                                 set_kept):
    import jsonschema

    load_vectors(str(user / "vectors.txt"))
    (private_cache / "important").mkdir()
    (private_cache / "important" / "data.txt").write_text("the user's, beside the cache")
    [real_set] = list((private_cache / "v1").iterdir())
    keep = setup(private_cache, user) + [user, private_cache / "important"]
    before = {folder: snapshot(folder) for folder in keep}
    result = run("vectors", "remove", *arguments, "--json")
    assert result.exit_code == code, (result.stdout, result.stderr)
    if words:
        assert words in one_line(result.stderr, "error" if code else "warning")
    else:
        assert result.stderr == ""
    if code:
        assert result.stdout == ""
    else:
        document = json.loads(result.stdout)
        jsonschema.validate(document, json.loads((Path(__file__).parent.parent / "schemas" /
                                                  "vectors.schema.json").read_text()))
        assert document["removed"] == ([] if set_kept else [real_set.name])
    assert {folder: snapshot(folder) for folder in keep} == before and all(folder.exists() for folder in keep)
    assert (real_set / "meta.json").is_file() == set_kept  # (with a linked v1: the copy it leads to)
