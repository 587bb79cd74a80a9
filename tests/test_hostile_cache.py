"""Hostile files and a shared cache (issue 14): what others can put in the cache folder never crashes a run,
never serves vectors of another file, and never leads the tool to read, write or delete outside the cache.

The cases that fit the catalogue (one `explain --json` run on a damaged cache) are in test_bad_inputs.py; these
need more than one run, or look at what is left on disk. Each checks the exit code, the one stderr line, stdout,
and that the files around the cache are untouched.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG_SECONDS

import attn_cli
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
    monkeypatch.setattr("attn_cli.vectors.importer.delete", lambda folder: None)  # as if not ours to delete
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


# --- nothing left behind (issue 14.11) ----------------------------------------------------------------------

STALE = 11 * 60  # seconds: older than importer.SWEEP_AFTER


@pytest.fixture
def scratch() -> Path:
    """The test's private $TMPDIR (conftest.private_cache), for this process and its children."""
    return Path(tempfile.gettempdir())


def aged(path: Path, age: float) -> None:
    """`path` (and what it holds) last touched `age` seconds ago."""
    for inner in [*path.rglob("*"), path]:
        os.utime(inner, (time.time() - age, time.time() - age))


def leftovers_of(cache: Path, scratch: Path, age: float = STALE, tag: str = "0") -> list[Path]:
    """One leftover of each kind (an import, a download, a decompressed model), 1 MB each, last touched `age`
    seconds ago; `tag` ends their random parts."""
    data = Path(os.environ["GENSIM_DATA_DIR"]) / "glove-test-50"
    made = [cache / "v1" / f".tmp-vectors.txt-0123456789abcdef-ab_cd12{tag}" / "matrix.npy",
            data / f".glove-test-50-x1y2z3w{tag}.part", scratch / f"attn-cli-k9j8h7g{tag}.bin"]
    for path in made:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\0" * 1_000_000)
    made = [made[0].parent] + made[1:]
    for path in made:
        aged(path, age)
    return made


def look_alikes(cache: Path, scratch: Path) -> list[Path]:
    """Files named almost like leftovers, which are not ours to delete."""
    data = Path(os.environ["GENSIM_DATA_DIR"]) / "glove-test-50"
    made = [cache / "v1" / ".tmp-notes", scratch / "attn-cli-notes.txt", scratch / "attn-cli-ab.bin",
            data / ".notes.part", data / ".other-model-x1y2z3w4.part"]
    for path in made:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("not a leftover")
        aged(path, STALE)
    return made


@pytest.mark.parametrize("option", ["--leftovers", "--all"])
def test_leftovers_are_listed_with_their_size_and_removed(run, user, private_cache, scratch, option):
    """Issue 14.11: list said "the cache is empty" while 3 MB of killed imports and downloads remained."""
    import jsonschema

    schema = json.loads((Path(__file__).parent.parent / "schemas" / "vectors.schema.json").read_text())
    load_vectors(str(user / "vectors.txt"))
    made, others = leftovers_of(private_cache, scratch), look_alikes(private_cache, scratch)
    before = snapshot(user)
    listed = run("vectors", "list", "--json")
    assert listed.exit_code == 0 and listed.stderr == ""
    jsonschema.validate(json.loads(listed.stdout), schema)
    assert json.loads(listed.stdout)["leftovers"] == [
        {"path": str(path), "bytes": 1_000_000, "stale": True} for path in made]
    assert "(attn-cli vectors remove --leftovers deletes them)" in run("vectors", "list").stdout
    removed = run("vectors", "remove", option, "--json")
    assert removed.exit_code == 0 and removed.stderr == ""
    jsonschema.validate(json.loads(removed.stdout), schema)
    assert json.loads(removed.stdout)["leftovers"] == [{"path": str(path), "bytes": 1_000_000} for path in made]
    assert not any(path.exists() for path in made) and all(path.exists() for path in others)
    assert (len(json.loads(removed.stdout)["removed"]) == 1) == (option == "--all")  # the set, with --all only
    assert snapshot(user) == before


def test_a_recent_leftover_is_kept(run, private_cache, scratch):
    """Touched in the last ten minutes, a temporary may be a running import's (here or on another machine sharing
    the folder)."""
    made = leftovers_of(private_cache, scratch, age=60)
    listed = json.loads(run("vectors", "list", "--json").stdout)["leftovers"]
    assert [item["stale"] for item in listed] == [False] * 3
    result = run("vectors", "remove", "--leftovers")
    assert result.exit_code == 0 and result.stdout == "no leftovers\n"
    warnings = result.stderr.splitlines()
    assert len(warnings) == 3 and all("may still be written" in line for line in warnings)
    assert all(path.exists() for path in made)


def test_a_running_uncached_import_is_sized_and_kept_by_what_it_holds(run, scratch):
    """An import without a cache writes its set's folder inside its scratch folder: the newest file anywhere in it,
    not the folders' own times, says whether it is still being written, and every byte in it counts."""
    matrix = scratch / "attn-cli-abcd1234" / "vectors.txt-0123456789abcdef" / "matrix.npy"
    matrix.parent.mkdir(parents=True)
    matrix.write_bytes(b"\0" * 300_000)
    for folder in (matrix.parent, matrix.parent.parent):
        os.utime(folder, (time.time() - 2 * 3600, time.time() - 2 * 3600))
    listed = json.loads(run("vectors", "list", "--json").stdout)["leftovers"]
    assert listed == [{"path": str(matrix.parent.parent), "bytes": 300_000, "stale": False}]
    result = run("vectors", "remove", "--leftovers")
    assert result.exit_code == 0 and "may still be written" in result.stderr and matrix.exists()


def test_stale_leftovers_are_swept_without_being_asked_only_when_old(run, user, private_cache, scratch,
                                                                     monkeypatch):
    """An import (and a download) sweeps the leftovers untouched for ten minutes; a recent one may be a live
    import of another machine sharing the folder, so it stays."""
    from attn_cli.vectors import gensim_data

    old = leftovers_of(private_cache, scratch, age=11 * 60)
    recent, others = leftovers_of(private_cache, scratch, age=60, tag="1"), look_alikes(private_cache, scratch)
    result = run("explain", "money bank grows", "--vectors", str(user / "vectors.txt"), "--json")
    assert result.exit_code == 0 and result.stderr == "" and json.loads(result.stdout)["tokens"]
    assert [path.exists() for path in old] == [False, True, False]  # the import's own kinds
    monkeypatch.setattr(gensim_data, "catalogue", lambda deadline: {"glove-test-50": {}})
    monkeypatch.setattr(gensim_data, "planned_parts", lambda name, entry: [("url", "md5")])
    monkeypatch.setattr(gensim_data, "fetch", lambda url, out, *rest: out.write(b"data"))
    downloaded = run("vectors", "download", "glove-test-50", "--json")
    assert downloaded.exit_code == 0 and downloaded.stderr == "" and json.loads(downloaded.stdout)["bytes"] == 4
    assert not any(path.exists() for path in old)
    assert all(path.exists() for path in recent + others)


KILLED = {  # what a process does while it is killed: a leftover appears, then it waits to be killed
    "import": ("from attn_cli.vectors import load_vectors; load_vectors(sys.argv[1])", "v1/.tmp-*/matrix.npy"),
    "download": ("import os\nfrom attn_cli.vectors import gensim_data as g\n"
                 "g.catalogue = lambda deadline: {'glove-test-50': {}}\n"
                 "g.planned_parts = lambda name, entry: [('url', 'md5')]\n"
                 "g.fetch = lambda url, out, *rest: (out.write(b'part'), out.flush(), threading.Event().wait())\n"
                 "g.download('glove-test-50')", "glove-test-50/.glove-test-50-*.part"),
    "fastText .bin.gz": ("from attn_cli.vectors.fasttext import checked_model\n"
                         "with checked_model(Path(sys.argv[2])):\n    threading.Event().wait()", "attn-cli-*.bin"),
}


@pytest.mark.parametrize("kind", KILLED)
def test_what_a_killed_process_leaves_is_listed_and_removed(run, tmp_path, private_cache, scratch, gensim_sample,
                                                            kind):
    """SIGKILL leaves no chance to clean up: the leftover is found by its name, and removed once stale."""
    big = tmp_path / "big.txt"
    big.write_text("".join(f"w{i} {' '.join(['0.5'] * 50)}\n" for i in range(300_000)))
    packed = tmp_path / "model.bin.gz"
    packed.write_bytes(gzip.compress(Path(gensim_sample("lee_fasttext.bin")).read_bytes()))
    code, pattern = KILLED[kind]
    where = {"import": private_cache, "download": Path(os.environ["GENSIM_DATA_DIR"])}.get(kind, scratch)
    process = subprocess.Popen([sys.executable, "-c", f"import sys, threading\nfrom pathlib import Path\n{code}",
                                str(big), str(packed)], env=os.environ.copy())
    while not any(p.stat().st_size for p in where.glob(pattern)):  # until the leftover holds something
        assert process.poll() is None, "the process ended before it could be killed"
        time.sleep(0.01)
    process.kill()
    process.wait()
    [left] = [p.parent if kind == "import" else p for p in where.glob(pattern)]
    listed = json.loads(run("vectors", "list", "--json").stdout)["leftovers"]
    assert [(item["path"], item["stale"]) for item in listed] == [(str(left), False)]
    assert listed[0]["bytes"] > 0
    aged(left, STALE)
    removed = run("vectors", "remove", "--leftovers")
    assert removed.exit_code == 0 and removed.stderr == ""
    assert removed.stdout.startswith(f"removed {left} (")
    assert not left.exists() and packed.is_file() and big.is_file()


def damaged_set(file: str, private_cache: Path, metadata: str) -> None:
    """`file` imported afresh, its cache's meta.json then replaced by `metadata`."""
    shutil.rmtree(private_cache / "v1", ignore_errors=True)
    load_vectors(file)
    [meta] = (private_cache / "v1").glob("*/meta.json")
    meta.write_text(metadata)


@pytest.mark.parametrize("arguments", [["explain", "money", "--vectors", "{file}"], ["vectors", "list"],
                                       ["vectors", "info", "{file}"], ["vectors", "remove", "{file}"],
                                       ["vectors", "remove", "--all"], ["vectors", "import", "{file}"]])
def test_metadata_nested_too_deep_to_parse_is_damaged_metadata(run, user, private_cache, arguments):
    """meta.json of 100,000 nested arrays made json raise RecursionError: exit 1 for every command that reads
    the cache. It is unreadable metadata like any other (here, text that is not JSON): the same exit code and
    messages, explain and import rebuild with the warning, and the Python listing shows the set as corrupt."""
    file = str(user / "vectors.txt")
    command = [part.format(file=file) for part in arguments]
    damaged_set(file, private_cache, "not json")
    garbage = run(*command)
    damaged_set(file, private_cache, "[" * 100_000 + "]" * 100_000)
    assert [found.corrupt for found in attn_cli.cached_vector_sets()] == [True]
    nested = run(*command)
    assert "internal error" not in nested.stderr
    sizes = re.compile(r"[\d.]+ MB")  # the nested metadata is 200 kB
    assert (nested.exit_code, sizes.sub("", nested.stdout)) == (garbage.exit_code, sizes.sub("", garbage.stdout))
    if arguments[0] == "explain" or arguments[1] == "import":
        assert "meta.json" in one_line(nested.stderr, "warning") and "rebuilding it" in nested.stderr


def cache_a_file(root: Path, user: Path) -> str:
    blocker = user / "a-file"
    blocker.write_text("no folder can be made under a file, even by root")
    return str(blocker)


def cache_linked_layout(root: Path, user: Path) -> str:
    root.mkdir(parents=True, exist_ok=True)
    (root / "v1").symlink_to(user / "important")
    return str(root)


def cache_full_disk(root: Path, user: Path, monkeypatch: pytest.MonkeyPatch, number: int) -> str:
    """A cache folder whose disk is full (ENOSPC) or past the file size limit (EFBIG): its writes fail, while
    $TMPDIR still has room."""
    from attn_cli.vectors.cache import CacheWriter

    real = CacheWriter.finish

    def finish(self, *args, **kwargs):
        if str(self.folder).startswith(str(root)):
            raise OSError(number, os.strerror(number))
        return real(self, *args, **kwargs)
    monkeypatch.setattr(CacheWriter, "finish", finish)
    return str(root)


UNWRITABLE_CACHES = {
    "a file": cache_a_file, "/dev/null": lambda root, user: "/dev/null", "a linked v1": cache_linked_layout,
    "a full disk": lambda root, user, patch: cache_full_disk(root, user, patch, errno.ENOSPC),
    "the file size limit": lambda root, user, patch: cache_full_disk(root, user, patch, errno.EFBIG),
}


def unwritable_cache(name: str, root: Path, user: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    make = UNWRITABLE_CACHES[name]
    return make(root, user, monkeypatch) if name in ("a full disk", "the file size limit") else make(root, user)


@pytest.mark.parametrize("name", UNWRITABLE_CACHES)
def test_an_import_into_a_cache_that_cannot_be_written_fails(run, user, tmp_path, monkeypatch, name):
    """vectors import, whose whole job is to cache, printed its summary and a warning and ended with exit 0
    when the cache could not be written: it fails (exit 4) naming the cache folder and the variables that move
    it. A run that only reads the vectors carries on without the cache, with one warning, even when the cache's
    disk fills up mid-import (it ended with exit 4, "free some space")."""
    cache = unwritable_cache(name, tmp_path / "cache", user, monkeypatch)
    env = {"ATTN_CLI_CACHE": cache}
    result = run("vectors", "import", str(user / "vectors.txt"), env=env)
    assert result.exit_code == 4 and result.stdout == "", (result.stdout, result.stderr)
    line = one_line(result.stderr, "error")
    assert "cannot write the cache" in line and cache in line and "ATTN_CLI_CACHE" in line, line
    assert "XDG_CACHE_HOME" in line or "free some space" in line, line
    explained = run("explain", "money bank grows", "--vectors", str(user / "vectors.txt"), "--json", env=env)
    assert explained.exit_code == 0, explained.stderr
    assert "without a cache" in one_line(explained.stderr, "warning")
    assert [t["key"] for t in json.loads(explained.stdout)["tokens"]] == ["money", "bank", "grows"]
    read_from = Path(json.loads(explained.stdout)["vectors"]["cache"])  # a set's folder, named as in a cache
    assert read_from.name.startswith("vectors.txt-") and read_from.parent.name.startswith("attn-cli-"), read_from
    assert not list((user / "important").iterdir()) or (user / "important" / "data.txt").read_text() == "keep me"


@pytest.mark.parametrize("name", ["matrix.npy", "norms.npy", "offsets.npy", "index.npy"])
def test_a_cached_array_whose_header_holds_an_odd_escape_leaks_no_warning(run, user, private_cache, name):
    """numpy reads a .npy header with ast.literal_eval, and Python warns of an invalid escape in it (a
    DeprecationWarning, a SyntaxWarning shown by default from Python 3.12): the damaged file is a damaged cache,
    said in one line, and nothing else reaches stderr."""
    source = user / "warned.txt"
    source.write_text("money 0.1 0.2\nbank 0.2 0.1\ngrows 0.3 0.1\n", encoding="utf-8")
    assert run("vectors", "import", str(source)).exit_code == 0
    [folder] = (private_cache / "v1").iterdir()
    data = bytearray((folder / name).read_bytes())
    brace = data.index(b"{")
    data[brace + 1:brace + 1] = b"'\\L'"
    (folder / name).write_bytes(bytes(data))
    code = ("import sys, warnings; warnings.simplefilter('default'); from attn_cli.cli import run; "
            "sys.argv = ['attn-cli', 'explain', 'money bank', '--vectors', sys.argv[1], '--json']; run()")
    finished = subprocess.run([sys.executable, "-c", code, str(source)], capture_output=True, text=True,
                              timeout=HANG_SECONDS, env={**os.environ, "ATTN_CLI_CACHE": str(private_cache)})
    assert "Warning" not in finished.stderr and "internal error" not in finished.stderr, finished.stderr
    assert finished.returncode in (0, 4), finished.stderr


def test_reading_a_cached_array_hides_its_header_warnings_and_no_other():
    """Only numpy's header warnings go (a SyntaxWarning or DeprecationWarning): one of the caller's own, said while
    a cache loads, still reaches them; and the context manager runs on Python 3.10, which catch_warnings(action=)
    does not."""
    from attn_cli.files import quiet_npy_headers

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with quiet_npy_headers():
            for category in (SyntaxWarning, DeprecationWarning, UserWarning):
                warnings.warn("a warning", category, stacklevel=1)
    assert [warning.category for warning in seen] == [UserWarning]
