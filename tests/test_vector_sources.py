"""Vector sources: every format agrees with gensim, each real-world quirk, the cache's safety, gensim-data names."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import attn_cli
from attn_cli.errors import VectorsError
from attn_cli.vectors import load_vectors
from attn_cli.vectors.importer import LoadOptions
from conftest import HANG_SECONDS

ROOT = Path(__file__).resolve().parent.parent


def gensim_vectors(path, **kwargs):
    from gensim.models import KeyedVectors

    return KeyedVectors.load_word2vec_format(str(path), **kwargs)


def assert_same_as(vectors, keyed):
    assert list(vectors.words) == list(keyed.index_to_key)
    np.testing.assert_array_max_ulp(np.asarray(vectors.matrix), keyed.vectors, maxulp=1)
    for row, word in enumerate(keyed.index_to_key[:50]):
        assert vectors.index.get(word) == row


def test_glove_text_matches_gensim(glove_file):
    assert_same_as(load_vectors(glove_file), gensim_vectors(glove_file, no_header=True))


def test_word2vec_text_and_binary_match_gensim(word2vec_text_file, word2vec_binary_file):
    keyed = gensim_vectors(word2vec_text_file)
    assert_same_as(load_vectors(word2vec_text_file), keyed)
    binary = load_vectors(word2vec_binary_file)
    assert binary.details["format"] == "word2vec-binary"
    assert_same_as(binary, keyed)


@pytest.mark.parametrize("opener, suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2")])
def test_compressed_files_are_read_through(tmp_path, glove_file, opener, suffix):
    packed = tmp_path / f"glove{suffix}"
    with opener(packed, "wb") as out:
        out.write(Path(glove_file).read_bytes())
    assert_same_as(load_vectors(str(packed)), gensim_vectors(glove_file, no_header=True))


def test_fasttext_vec_and_bin(gensim_sample, run):
    vec = load_vectors(gensim_sample("lee_fasttext.vec"))
    assert vec.details["format"] == "word2vec" and vec.count > 1000
    result = run("explain", "the zzyzxq", "--vectors", gensim_sample("lee_fasttext.bin"), "--json")
    assert result.exit_code == 0, result.stderr
    tokens = json.loads(result.stdout)["tokens"]
    assert [t["oov"] for t in tokens] == [False, True]  # the unknown word kept, with its subword vector
    assert any(abs(v) > 0 for v in json.loads(run("explain", "zzyzxq", "--vectors", gensim_sample("lee_fasttext.bin"),
                                                   "--json", "--include", "embeddings").stdout)["embeddings"][0])


def test_gensim_pickles_need_trust(tmp_path, glove_file, run):
    keyed = gensim_vectors(glove_file, no_header=True)
    path = tmp_path / "vectors.kv"
    keyed.save(str(path))
    refused = run("explain", "the", "--vectors", str(path))
    assert refused.exit_code == 4 and "--trust-pickle" in refused.stderr and "run any code" in refused.stderr
    trusted = run("explain", "the of", "--vectors", str(path), "--trust-pickle", "--json")
    assert trusted.exit_code == 0, trusted.stderr


# --- quirks -------------------------------------------------------------------------------------------

def write(tmp_path, text: bytes | str, name="v.txt") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return str(path)


def options(**kwargs):
    messages = []
    return LoadOptions(warn=messages.append, **kwargs), messages


def test_tokens_with_nbsp_and_ascii_spaces_keep_them(tmp_path):
    path = write(tmp_path, "a\u00a0b 1.0 2.0\nnew york 3.5 -4.25\nplain 5 6e-1\n")
    vectors = load_vectors(path)
    assert list(vectors.words) == ["a\u00a0b", "new york", "plain"]
    np.testing.assert_array_equal(vectors.rows([1, 2]), [[3.5, -4.25], [5.0, 0.6000000238418579]])
    assert vectors.index.get("new york") == 1 and vectors.index.get("new") is None


def test_duplicates_keep_the_first_and_are_reported(tmp_path):
    path = write(tmp_path, "bank 1.0 0.0\nriver 0.0 1.0\nbank 9.0 9.0\n")
    opts, messages = options()
    vectors = load_vectors(path, opts)
    assert list(vectors.words) == ["bank", "river"] and vectors.count == 2
    np.testing.assert_array_equal(vectors.rows([0]), [[1.0, 0.0]])
    assert any("1 duplicate word kept the first vector" in m and "'bank'" in m for m in messages)


@pytest.mark.parametrize("line, reason", [
    ("bank 0.1 0.2 0.3", "expected a word and 2 numbers, found 3 numbers"),
    ("bank 0.1", "expected a word and 2 numbers, found 1 number"),
    ("bank 0.1 x.5", "'x.5' is not a number"),
    ("bank nan 0.5", "NaN or infinite value"),
    ("bank 0.5 -inf", "NaN or infinite value"),
])
def test_a_bad_line_names_file_line_and_snippet(tmp_path, run, line, reason):
    path = write(tmp_path, f"money 0.5 0.5\nriver 0.1 0.9\n{line}\ngrows 1 2\n")
    result = run("explain", "money", "--vectors", path)
    assert result.exit_code == 4 and result.stdout == ""
    assert result.stderr.strip() == (f"attn-cli: error: {path}, line 3: {reason}: {line!r}; fix the line or pass "
                                     "--skip-bad-lines to leave such lines out")
    skipped = run("explain", "money grows", "--vectors", path, "--skip-bad-lines", "--json")
    assert skipped.exit_code == 0
    assert "skipped 1 bad line (first:" in skipped.stderr
    assert [t["key"] for t in json.loads(skipped.stdout)["tokens"]] == ["money", "grows"]


def test_invalid_utf8_crlf_and_blank_lines(tmp_path):
    path = write(tmp_path, b"caf\xe9 1 2\r\nriver 3 4\r\n\r\nlast 5 6\r\n\r\n")
    opts, messages = options()
    vectors = load_vectors(path, opts)
    assert list(vectors.words) == ["caf\ufffd", "river", "last"]
    np.testing.assert_array_equal(vectors.rows([2]), [[5, 6]])
    assert any("not valid UTF-8" in m for m in messages)


def test_a_header_disagreeing_with_the_body_is_reported(tmp_path):
    path = write(tmp_path, "5 2\nmoney 1 2\nbank 3 4\n")
    opts, messages = options()
    assert load_vectors(path, opts).count == 2
    assert any("announces 5 words but the file holds 2" in m for m in messages)


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_an_empty_file_is_an_error(tmp_path, content):
    with pytest.raises(VectorsError, match="is empty"):
        load_vectors(write(tmp_path, content))


def test_limit_keeps_the_most_frequent_words(glove_file):
    vectors = load_vectors(glove_file, LoadOptions(limit=10))
    assert list(vectors.words) == gensim_vectors(glove_file, no_header=True).index_to_key[:10]


def test_the_long_tail_of_the_fast_parser(tmp_path):
    """Many lines with every number shape the fast path must refuse or accept, against float()."""
    rng = np.random.default_rng(7)
    shapes = ["{:.6f}", "{:.3g}", "{:e}", "{:.0f}", "{:.17g}", "{:.9f}"]
    lines, expected = [], []
    for i in range(3000):
        row = rng.normal(0, 10.0 ** rng.integers(-6, 4), 4)
        fields = [shapes[(i + j) % len(shapes)].format(v) for j, v in enumerate(row)]
        lines.append(f"w{i} " + " ".join(fields))
        expected.append([float(f) for f in fields])
    vectors = load_vectors(write(tmp_path, "\n".join(lines)))
    np.testing.assert_array_max_ulp(np.asarray(vectors.matrix), np.asarray(expected, dtype=np.float32), maxulp=1)


# --- the cache --------------------------------------------------------------------------------------

def cache_folders(root: Path) -> list[Path]:
    return [f for f in (root / "v1").iterdir() if not f.name.startswith(".tmp-")]


def test_a_second_run_maps_the_cache_and_an_edit_reimports(tmp_path, private_cache):
    path = write(tmp_path, "money 1 2\nbank 3 4\n")
    load_vectors(path)
    [folder] = cache_folders(private_cache)
    stamp = (folder / "meta.json").stat().st_mtime_ns
    again = load_vectors(path)
    assert isinstance(again.matrix, np.memmap) and (folder / "meta.json").stat().st_mtime_ns == stamp
    write(tmp_path, "money 1 2\nbank 3 5\n")
    assert load_vectors(path).rows([1]).tolist() == [[3, 5]]
    [renewed] = cache_folders(private_cache)  # the stale import of the old content is gone
    assert renewed != folder


def test_a_corrupt_cache_is_reported_and_rebuilt(tmp_path, private_cache):
    path = write(tmp_path, "money 1 2\nbank 3 4\n")
    load_vectors(path)
    [folder] = cache_folders(private_cache)
    with open(folder / "matrix.npy", "r+b") as handle:
        handle.truncate(100)
    opts, messages = options()
    assert load_vectors(path, opts).rows([1]).tolist() == [[3, 4]]
    assert any("is corrupt" in m and "rebuilding" in m for m in messages)


def test_an_unwritable_cache_falls_back_to_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")  # fails even for root, unlike chmod
    monkeypatch.setenv("ATTN_CLI_CACHE", str(blocker / "cache"))
    opts, messages = options()
    assert load_vectors(write(tmp_path, "money 1 2\n"), opts).rows([0]).tolist() == [[1, 2]]
    assert any("cannot write the cache" in m and "without a cache" in m for m in messages)


IMPORT = "from attn_cli.vectors import load_vectors; import sys; print(load_vectors(sys.argv[1]).count)"


def big_glove(tmp_path, lines=200_000, dims=50) -> Path:
    numbers = " ".join(f"{v:.5f}" for v in np.linspace(-1, 1, dims))
    path = tmp_path / "big.txt"
    path.write_text("".join(f"w{i} {numbers}\n" for i in range(lines)))
    return path


def test_eight_concurrent_imports_all_succeed_and_leave_one_cache(tmp_path, private_cache):
    path = big_glove(tmp_path, lines=20_000)
    processes = [subprocess.Popen([sys.executable, "-c", IMPORT, str(path)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outputs = [process.communicate(timeout=HANG_SECONDS) for process in processes]
    assert [p.returncode for p in processes] == [0] * 8, outputs
    assert all(out.strip() == "20000" for out, _ in outputs)
    assert len(cache_folders(private_cache)) == 1
    assert not list((private_cache / "v1").glob(".tmp-*"))


def test_a_killed_import_leaves_no_cache(tmp_path, private_cache):
    path = big_glove(tmp_path)
    process = subprocess.Popen([sys.executable, "-c", IMPORT, str(path)])
    while not list((private_cache / "v1").glob(".tmp-*/matrix.npy")):  # until the import is under way
        assert process.poll() is None, "the import ended before it could be killed"
        time.sleep(0.02)
    process.kill()
    process.wait()
    assert cache_folders(private_cache) == []  # only the abandoned temporary folder, never a cache
    [left] = (private_cache / "v1").glob(".tmp-*")
    for touched in [left, *left.iterdir()]:  # as if killed 11 minutes ago (a recent one may be another machine's)
        os.utime(touched, (time.time() - 660, time.time() - 660))
    assert load_vectors(str(path)).count == 200_000
    assert not list((private_cache / "v1").glob(".tmp-*"))  # swept by the next import


def test_the_cached_path_never_imports_gensim_nor_the_importer(tmp_path, glove_file):
    """A warm run maps the cache (cache.serve) and loads none of the import life cycle: its writers, the
    leftovers sweep, tempfile."""
    load_vectors(glove_file)
    code = ("import sys; from attn_cli.cli.app import main; sys.argv = ['attn-cli', 'explain', 'the of', '--json', "
            f"'--vectors', {glove_file!r}]\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "assert 'gensim' not in sys.modules, 'gensim imported'\n"
            "loaded = {'attn_cli.vectors.importer', 'tempfile'} & set(sys.modules)\n"
            "assert not loaded, loaded")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    assert result.returncode == 0, result.stderr


def test_stored_index_and_word_list_behave_like_a_list_and_a_dict(tmp_path):
    words = ["the", "a\u00a0b", "x\u2028y", "日本", "new york", "Bank", "bank"] + [f"w{i}" for i in range(500)]
    path = write(tmp_path, "".join(f"{w} {i} 1\n" for i, w in enumerate(words)))
    vectors = load_vectors(path)
    assert list(vectors.words) == words and vectors.words[2:5] == words[2:5] and vectors.words[-1] == words[-1]
    assert all(vectors.index.get(w) == i for i, w in enumerate(words))
    assert vectors.index.get("BANK") is None and vectors.index.get("Bank") == 5


# --- the vectors command and gensim-data ------------------------------------------------------------

@pytest.fixture(scope="module")
def vectors_schema() -> dict:
    return json.loads((ROOT / "schemas" / "vectors.schema.json").read_text(encoding="utf-8"))


def test_vectors_import_info_list_remove(tmp_path, run, glove_file, vectors_schema):
    import jsonschema

    def document(*args):
        result = run("vectors", *args, "--json")
        assert result.exit_code == 0, result.stderr
        jsonschema.validate(json.loads(result.stdout), vectors_schema)
        return json.loads(result.stdout)

    assert document("import", glove_file, "--limit", "70")["count"] == 70
    assert document("import", glove_file)["count"] == 76
    listed = document("list")["sets"]
    assert sorted(entry["count"] for entry in listed) == [70, 76]
    info = document("info", listed[0]["id"])
    assert info["source"]["path"] == str(Path(glove_file).resolve()) and info["dims"] == 50
    assert len(document("remove", glove_file)["removed"]) == 2
    assert document("list")["sets"] == []
    assert Path(glove_file).is_file()


def test_gensim_data_names_resolve_offline_without_running_code(tmp_path, run, word2vec_binary_file):
    folder = Path(os.environ["GENSIM_DATA_DIR"]) / "tiny-vectors-10"
    folder.mkdir()
    shutil.copyfile(word2vec_binary_file, folder / "tiny-vectors-10.gz")
    (folder / "__init__.py").write_text("raise SystemExit('this must never run')\n")
    result = run("explain", "the of", "--vectors", "tiny-vectors-10", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["vectors"]["name"] == "tiny-vectors-10"
    missing = run("explain", "the", "--vectors", "glove-wiki-gigaword-100")
    assert missing.exit_code == 4 and "attn-cli vectors download glove-wiki-gigaword-100" in missing.stderr


@pytest.fixture
def gensim_data_server(tmp_path, monkeypatch, glove_file):
    """A local stand-in for GitHub: list.json and release files under http://127.0.0.1:PORT/."""
    served = tmp_path / "served"
    payload = gzip.compress(Path(glove_file).read_bytes())
    (served / "glove-test-50").mkdir(parents=True)
    (served / "glove-test-50" / "glove-test-50.gz").write_bytes(payload)
    (served / "glove-test-50" / "__init__.py").write_text("raise SystemExit('never run')\n")
    (served / "broken-test-50").mkdir()
    (served / "broken-test-50" / "broken-test-50.gz").write_bytes(payload[:-10] + b"0" * 10)
    md5 = hashlib.md5(payload).hexdigest()
    (served / "list.json").write_text(json.dumps({"models": {
        "glove-test-50": {"file_name": "glove-test-50.gz", "parts": 1, "checksum": md5},
        "broken-test-50": {"file_name": "broken-test-50.gz", "parts": 1, "checksum": md5},
        "unlisted-md5-50": {"file_name": "unlisted-md5-50.gz", "parts": 1}}}))
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(served), **k)  # noqa: E731
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()  # fast shutdown
    base = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("ATTN_CLI_GENSIM_DATA_LIST", f"{base}/list.json")
    monkeypatch.setenv("ATTN_CLI_GENSIM_DATA_URL", base)
    yield base
    server.shutdown()


def test_download_verifies_and_stores_without_running_code(run, gensim_data_server, vectors_schema):
    import jsonschema

    result = run("vectors", "download", "glove-test-50", "--json")
    assert result.exit_code == 0, result.stderr
    jsonschema.validate(json.loads(result.stdout), vectors_schema)
    stored = Path(json.loads(result.stdout)["path"])
    assert stored == Path(os.environ["GENSIM_DATA_DIR"]) / "glove-test-50" / "glove-test-50.gz"
    assert sorted(p.name for p in stored.parent.iterdir()) == ["glove-test-50.gz"]  # no __init__.py fetched
    assert run("explain", "the of", "--vectors", "glove-test-50", "--json").exit_code == 0
    damaged = run("vectors", "download", "broken-test-50")
    assert damaged.exit_code == 4 and "MD5" in damaged.stderr and "damaged" in damaged.stderr
    assert not (Path(os.environ["GENSIM_DATA_DIR"]) / "broken-test-50" / "broken-test-50.gz").exists()
    unknown = run("vectors", "download", "no-such-model")
    assert unknown.exit_code == 4 and "no model named" in unknown.stderr
    assert "its models are: broken-test-50, glove-test-50, unlisted-md5-50" in unknown.stderr
    unverified = run("vectors", "download", "unlisted-md5-50")
    assert unverified.exit_code == 4 and "lists no MD5" in unverified.stderr
    assert not (Path(os.environ["GENSIM_DATA_DIR"]) / "unlisted-md5-50" / "unlisted-md5-50.gz").exists()
    assert stored.stat().st_mode & 0o044 == 0o044 & ~current_umask()  # readable like any downloaded file


def test_a_download_replaces_a_link_at_its_place_and_writes_nothing_through_it(run, gensim_data_server, tmp_path):
    """The model's file in GENSIM_DATA_DIR is this tool's to write: a link there (dangling, or to a device) is
    replaced by the whole download, never written through to wherever it points."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    place = Path(os.environ["GENSIM_DATA_DIR"]) / "glove-test-50" / "glove-test-50.gz"
    place.parent.mkdir(parents=True)
    place.symlink_to(elsewhere / "real.gz")
    result = run("vectors", "download", "glove-test-50", "--json")
    assert result.exit_code == 0, result.stderr
    assert not place.is_symlink() and place.stat().st_size == json.loads(result.stdout)["bytes"] > 0
    assert list(elsewhere.iterdir()) == []


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# --- gensim-read formats, damaged files, cache upkeep -------------------------------------------------

def test_gensim_formats_honour_limit_and_refuse_nan(tmp_path, gensim_sample, run):
    from gensim.models import KeyedVectors

    limited = run("explain", "the of", "--vectors", gensim_sample("lee_fasttext.bin"), "--limit", "5", "--json")
    assert limited.exit_code == 0 and json.loads(limited.stdout)["vectors"]["count"] == 5
    keyed = KeyedVectors(vector_size=3)
    keyed.add_vectors(["money", "bank"], np.array([[1, np.nan, 0], [0, 1, 0]], dtype=np.float32))
    keyed.save(str(tmp_path / "nan.kv"))
    refused = run("explain", "money bank", "--vectors", str(tmp_path / "nan.kv"), "--trust-pickle", "--json")
    assert refused.exit_code == 4 and refused.stdout == ""
    assert "the vector of 'money' holds NaN, infinity" in refused.stderr


@pytest.mark.parametrize("opener, suffix", [(gzip.open, ".bin.gz"), (bz2.open, ".bin.bz2")])
def test_a_compressed_fasttext_model_is_detected_and_read(tmp_path, gensim_sample, run, opener, suffix):
    packed = tmp_path / f"model{suffix}"
    with opener(packed, "wb") as out:
        out.write(Path(gensim_sample("lee_fasttext.bin")).read_bytes())
    plain = run("explain", "the zzyzxq", "--vectors", gensim_sample("lee_fasttext.bin"), "--json",
                "--include", "embeddings")
    unpacked = run("explain", "the zzyzxq", "--vectors", str(packed), "--json", "--include", "embeddings")
    assert unpacked.exit_code == 0, unpacked.stderr
    assert json.loads(unpacked.stdout)["embeddings"] == json.loads(plain.stdout)["embeddings"]
    assert json.loads(unpacked.stdout)["vectors"]["format"] == "fasttext-bin"
    assert "zzyzxq (oov: subword vector)" in run("explain", "the zzyzxq", "--vectors", str(packed)).stdout


@pytest.mark.parametrize("command", [["explain", "the"], ["vectors", "import"]])
def test_a_damaged_gzip_is_a_clear_error(tmp_path, glove_file, run, command):
    packed = bytearray(gzip.compress(Path(glove_file).read_bytes()))
    middle = len(packed) // 2
    packed[middle:middle + 40] = bytes(b ^ 0x55 for b in packed[middle:middle + 40])
    path = tmp_path / "glove.txt.gz"
    path.write_bytes(bytes(packed))
    result = run(*command, *(["--vectors"] if command[0] == "explain" else []), str(path))
    assert result.exit_code == 4 and result.stderr.startswith("attn-cli: error: cannot read")
    assert "check the file is complete" in result.stderr and "internal error" not in result.stderr


def test_a_cache_with_skipped_lines_needs_the_flag_again(tmp_path, run):
    path = write(tmp_path, "money 1 2\nbank nan 4\ngrows 5 6\n")
    assert run("explain", "money grows", "--vectors", path, "--skip-bad-lines", "--json").exit_code == 0
    again = run("explain", "money grows", "--vectors", path, "--json")  # the cache exists, the line is still bad
    assert again.exit_code == 4 and again.stdout == ""
    assert "line 2: NaN or infinite value" in again.stderr and "--skip-bad-lines" in again.stderr


def test_a_byte_order_mark_is_not_part_of_the_first_word(tmp_path):
    vectors = load_vectors(write(tmp_path, b"\xef\xbb\xbfmoney 1 2\nbank 3 4\n"))
    assert list(vectors.words) == ["money", "bank"] and vectors.lookup("money") == ("money", 0)


def test_removing_everything_from_an_empty_cache_says_so(run):
    result = run("vectors", "remove", "--all")
    assert result.exit_code == 0 and result.stdout == "the cache is empty\n"


def test_a_row_longer_than_float32_holds_is_read_without_warnings(tmp_path, run):
    """Values up to 3.4e38 are legal, but such a row's length is not a float32: it is never a neighbour."""
    import warnings

    path = write(tmp_path, "money " + " ".join(["3e38"] * 5) + "\nbank 1 2 3 4 5\ngrows 0 1 0 1 0\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in the norms or the neighbour product would be exit 1
        result = run("explain", "money bank grows", "--vectors", path, "--json")
    assert result.exit_code == 0, result.stderr
    shifts = json.loads(result.stdout)["shifts"]
    assert all(np.isfinite(n["cosine"]) for s in shifts for n in s["neighbors_after"] + s["neighbors_before"])
    assert [n["word"] for n in shifts[1]["neighbors_before"]] == ["grows"]  # money is never a neighbour


def test_a_row_shorter_than_float32_resolves_is_never_a_neighbour_and_never_a_crash(tmp_path, run):
    """Issue 14.9: a value of 1e-45 (a subnormal) made 1 / norm overflow: every --json run exited 1."""
    import warnings

    path = write(tmp_path, "money 1e-45 0\nbank 0.5 0.5\ngrows 0.1 0.9\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run("explain", "money bank grows", "--vectors", path, "--json")
    assert result.exit_code == 0, result.stderr
    shifts = json.loads(result.stdout)["shifts"]
    assert all(n["word"] != "money" for s in shifts for n in s["neighbors_after"] + s["neighbors_before"])
    assert [n["word"] for n in shifts[0]["neighbors_after"]] == ["grows", "bank"]  # its own search still works


def test_vectors_info_describes_cached_sets_only(run, glove_file, private_cache):
    """info never imports: a file not cached is one line saying how to import it (exit 4), with no --vectors."""
    result = run("vectors", "info", glove_file)
    assert result.exit_code == 4 and result.stdout == ""
    assert result.stderr == (f"attn-cli: error: {glove_file} is not cached (attn-cli vectors list shows what is); "
                             f"import it first: attn-cli vectors import {glove_file}\n")
    assert not list(private_cache.rglob("*.npy"))  # nothing was imported
    missing = run("vectors", "info", "no-such-file.txt")
    assert missing.exit_code == 4 and "--vectors" not in missing.stderr
    assert "attn-cli vectors import no-such-file.txt" in missing.stderr
    assert run("vectors", "import", glove_file).exit_code == 0
    described = run("vectors", "info", glove_file, "--json")
    assert described.exit_code == 0 and json.loads(described.stdout)["count"] == 76


@pytest.mark.parametrize("content, line", [
    (b"money 1 2\nbank 3 4\n" + b"x" * (3 << 20) + b" 1 2\n", 3),  # GloVe: in the sample read ahead
    (b"3 2\nmoney 1 2\nbank 3 4\n" + b"y" * (3 << 20) + b" 1 2\n", 4),  # word2vec: inside one block
    (b"money 1 2\n" * 1000 + b"z" * (20 << 20) + b" 1 2\n", 1001),  # across several reads
])
def test_a_line_longer_than_the_cap_is_one_clear_error(tmp_path, run, content, line):
    """Issue 14.6: one huge line was re-joined at every read (quadratic); now it is read once, up to 1 MiB."""
    path = tmp_path / "long.txt"
    path.write_bytes(content)
    result = run("explain", "money bank", "--vectors", str(path))
    assert result.exit_code == 4 and result.stdout == ""
    assert result.stderr == (f"attn-cli: error: {path}, line {line:,}: longer than 1 MiB, which no vector line is; "
                             "this is not a vector file, or it is damaged\n")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_beyond_float32_are_refused_naming_the_word(tmp_path, run, dtype):
    """Issue 25.3: a KeyedVectors (in memory or a gensim pickle) whose float64 values overflow float32 (1e300) is
    a VectorsError / exit 4 naming the word, before the engine squares them into infinity."""
    from gensim.models import KeyedVectors

    keyed = KeyedVectors(vector_size=3, dtype=np.float64)
    keyed.add_vectors(["money", "bank", "grows"], np.array([[1, 2, 0], [0, 1e300, 0], [0, 1, 1]], dtype=np.float64))
    if dtype == "float32":  # the largest float32 passes
        keyed.vectors[1, 1] = np.finfo(np.float32).max
        assert attn_cli.Vectors.from_keyedvectors(keyed).count == 3
        return
    with pytest.raises(attn_cli.VectorsError, match="the vector of 'bank' holds NaN, infinity or a value beyond"):
        attn_cli.Vectors.from_keyedvectors(keyed)
    keyed.save(str(tmp_path / "huge.kv"))
    refused = run("explain", "money bank grows", "--vectors", str(tmp_path / "huge.kv"), "--trust-pickle", "--json")
    assert refused.exit_code == 4 and refused.stdout == "" and len(refused.stderr.splitlines()) == 1
    assert "the vector of 'bank' holds NaN, infinity or a value beyond float32's range" in refused.stderr


def test_a_hand_made_set_with_values_beyond_float32_is_refused_where_a_sentence_reads_them():
    """Vectors built by hand are not read whole: the rows a sentence uses are checked (exit 4 / VectorsError)."""
    vectors = attn_cli.Vectors(name="by hand", words=["money", "bank", "grows"], lowercase=True,
                               matrix=np.array([[1.0, 0], [1e300, 0], [0, 1]]))
    with pytest.raises(attn_cli.VectorsError, match="by hand: the vector of 'bank' holds NaN, infinity"):
        attn_cli.explain("money bank grows", vectors=vectors)


@pytest.mark.parametrize("arguments", [["explain", "money bank", "--vectors", ""], ["vectors", "import", ""],
                                       ["train", "--demo", "--out", "{out}", "--vectors", ""]])
def test_an_empty_vector_source_is_refused(run, tmp_path, arguments):
    """`--vectors "$VEC"` with VEC unset used the embedded set, even with $ATTN_CLI_VECTORS naming another: a
    script got the default set's results for the set it meant. An empty name names no source (exit 4)."""
    path = write(tmp_path, "money 1 2\nbank 3 4\n")
    result = run(*[part.format(out=tmp_path / "layer.npz") for part in arguments], env={"ATTN_CLI_VECTORS": path})
    assert result.exit_code == 4 and result.stdout == "", (result.stdout[:300], result.stderr)
    assert "empty" in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr
    with pytest.raises(attn_cli.VectorsError, match="empty"):
        attn_cli.load_vectors("")
    with pytest.raises(attn_cli.VectorsError, match="empty"):
        attn_cli.explain("money bank", vectors="")
