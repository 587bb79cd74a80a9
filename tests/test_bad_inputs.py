"""The catalogue of bad input: every case one stderr line naming the fix, its documented exit code,
no traceback, nothing on stdout (the commands run with --json), and no file of the user's changed.

First what a person types (sentences and options, through every command), then what they
have on disk (vector files) and what the tool keeps (the cache).
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import attn_cli

from attn_cli.errors import EXIT_CODES
from attn_cli.vectors import load_vectors
from conftest import HANG_SECONDS, at_most

LONG_WORD = "q" * 100_000
TEN_THOUSAND_WORDS = " ".join(["bank"] * 10_000)

# (case name, arguments, stdin or None, exit code, words the one stderr line must contain)
CATALOGUE = [
    # sentences
    ("empty sentence", ["explain", ""], None, 3, "sentence is empty"),
    ("whitespace only", ["explain", " \t  "], None, 3, "sentence is empty"),
    ("only punctuation", ["explain", "?! ... ,;"], None, 3, "no word of the sentence"),
    ("every word out of vocabulary", ["explain", "qqqzzz jjjxxx"], None, 3, '"qqqzzz", "jjjxxx"'),
    ("10,000 words", ["explain", TEN_THOUSAND_WORDS], None, 3, "--max-tokens 1000"),
    ("one 100,000-character word", ["explain", LONG_WORD], None, 3, "(100,000 characters)"),
    ("emoji only", ["explain", "🏦 💸 🌊"], None, 3, "no word of the sentence"),
    ("right-to-left text only", ["explain", "בנק כסף"], None, 3, '"בנק", "כסף"'),
    ("mixed scripts, nothing known", ["explain", "банк 銀行 bänkzq"], None, 3, "no word of the sentence"),
    ("empty stdin", ["explain", "-"], "", 3, "no sentence on stdin"),
    ("blank stdin", ["explain", "-"], "\n \n\t\n", 3, "no sentence on stdin"),
    ("invalid UTF-8 on stdin", ["explain", "-"], b"caf\xe9 bank\n", 3, "line 1 of stdin: not valid UTF-8"),
    ("NUL bytes only on stdin", ["explain", "-"], "\x00\x00\n", 3, "line 1 of stdin: holds NUL bytes: UTF-16"),
    ("a UTF-16 byte order mark before ASCII", ["explain", "-"], b"\xff\xfe bank\n", 3, "no word of the sentence"),
    ("every word unknown with --oov error", ["explain", "money bnak", "--oov", "error"], None, 3,
     "did you mean bank"),
    # options
    ("zero heads", ["explain", "money bank", "--heads", "0"], None, 2, "--heads must be at least 1"),
    ("negative heads", ["explain", "money bank", "--heads", "-2"], None, 2, "--heads must be at least 1"),
    ("heads that do not divide the width", ["explain", "money bank", "--heads", "5"], None, 2,
     "does not divide the width 128"),
    ("heads that do not divide d_k", ["explain", "money bank", "--mode", "projected", "--d-k", "30", "--heads",
                                      "4"], None, 2, "does not divide the width 30"),
    ("d_k zero", ["explain", "money bank", "--mode", "projected", "--d-k", "0"], None, 2, "--d-k must be"),
    ("d_k without projected mode", ["explain", "money bank", "--d-k", "8"], None, 2, "add --mode projected"),
    ("scale NaN", ["explain", "money bank", "--scale", "nan"], None, 2, "--scale must be"),
    ("scale inf", ["explain", "money bank", "--scale", "inf"], None, 2, "--scale must be"),
    ("scale negative", ["explain", "money bank", "--scale", "-0.5"], None, 2, "--scale must be"),
    ("scale a word", ["explain", "money bank", "--scale", "huge"], None, 2, "--scale must be"),
    ("temperature zero", ["explain", "money bank", "--temperature", "0"], None, 2, "--temperature must be"),
    ("temperature negative", ["explain", "money bank", "--temperature", "-1"], None, 2, "--temperature must be"),
    ("temperature inf", ["explain", "money bank", "--temperature", "inf"], None, 2, "--temperature must be"),
    # a position scale whose codes' squares overflow made nan inside the engine (exit 1 mid-table, "at most nan")
    ("position scale 1e200", ["explain", "money bank", "--positions", "sinusoidal", "--position-scale", "1e200"],
     None, 2, "--position-scale must be 'auto' or a finite number from 0 to 1,000,000"),
    ("position scale 1e7 in compare", ["compare", "river bank", "money bank", "--positions", "sinusoidal",
                                       "--position-scale", "1e7"], None, 2, "--position-scale must be"),
    ("position scale 1e200 in trace", ["trace", "money bank", "--positions", "sinusoidal", "--position-scale",
                                       "1e200"], None, 2, "--position-scale must be"),
    ("unknown mask", ["explain", "money bank", "--mask", "future"], None, 2, "'--mask'"),
    ("unknown mode", ["explain", "money bank", "--mode", "learned"], None, 2, "'--mode'"),
    ("unknown similarity", ["explain", "money bank", "--similarity", "l2"], None, 2, "'--similarity'"),
    ("heads not a number", ["explain", "money bank", "--heads", "many"], None, 2, "'--heads'"),
    ("negative neighbours", ["explain", "money bank", "--neighbors", "-3"], None, 2, "--neighbors must be"),
    ("a billion neighbours", ["explain", "money bank", "--neighbors", "1000000000"], None, 2,
     "--neighbors must be 0 (off) to 100"),
    ("max tokens zero", ["explain", "money bank", "--max-tokens", "0"], None, 2, "--max-tokens must be"),
    ("unknown include", ["explain", "money bank", "--include", "gradients"], None, 2, "choose from"),
    ("unknown option", ["explain", "money bank", "--colour"], None, 2, "--colour"),
    ("trace --word not in the sentence", ["trace", "money bank grows", "--word", "river"], None, 3, "river"),
    ("trace --dims zero", ["trace", "money bank grows", "--dims", "0"], None, 2, "'--dims'"),
    ("compare --word missing from a sentence", ["compare", "river bank flows", "money bank grows", "--word",
                                                "river"], None, 3, "sentence 2"),
    ("compare with no shared word", ["compare", "river flows", "money grows"], None, 3, "--word"),
    ("compare with one sentence", ["compare", "money bank grows"], None, 3, "at least two sentences"),
    ("compare --cross with three sentences", ["compare", "a bank", "the bank", "my bank", "--cross"], None, 3,
     "exactly two sentences"),
    ("compare --file missing", ["compare", "--file", "/no/such/sentences.txt"], None, 2, "no such file"),
    ("vectors file missing", ["explain", "money bank", "--vectors", "/no/such/glove.txt"], None, 4,
     "no such vector file"),
]


@pytest.mark.quick
@pytest.mark.parametrize("name, args, stdin, code, words", CATALOGUE, ids=[case[0] for case in CATALOGUE])
def test_bad_input_is_one_clear_line(run, name, args, stdin, code, words):
    result = run(*args, "--json", input=stdin)
    assert result.exit_code == code, (result.stdout[:200], result.stderr[:500])
    assert code in EXIT_CODES
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if not line.startswith("attn-cli: warning:")]
    assert len(errors) == 1, result.stderr[:500]
    assert errors[0].startswith("attn-cli: error: ")
    assert words in errors[0]
    assert len(errors[0]) < 400  # one readable line, even for a 100,000-character word
    assert "Traceback" not in result.stderr


@pytest.mark.quick
def test_a_user_file_is_never_changed(run, tmp_path):
    """Failures that name a file of the user's leave it byte for byte as it was."""
    sentences = tmp_path / "sentences.txt"
    sentences.write_bytes(b"river flows\nmoney grows\n")
    vectors = tmp_path / "vectors.txt"
    vectors.write_bytes(b"money 0.1 0.2\nbank 0.3 nope\n")
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in (sentences, vectors)}
    assert run("compare", "--file", str(sentences), "--json").exit_code == 3
    assert run("explain", "money bank", "--vectors", str(vectors), "--json").exit_code == 4
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in before} == before


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1e"])
def test_line_separators_in_a_sentence_never_split_a_json_line(run, separator):
    """Found by fuzzing: U+0085 written raw made str.splitlines() cut one document in two."""
    result = run("explain", f"money{separator}bank", "--json")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["sentence"] == f"money{separator}bank"


# --- vector files and the cache ---------------------------------------------------------------
# Each builder writes what the user has on disk into `folder` and returns the --vectors path;
# `patch` (optional) simulates what a test cannot make for real as root (permissions, a full disk,
# a file that grows during the import).

GOOD = "money 0.1 0.2 0.3\nbank 0.2 0.1 0.0\ngrows 0.0 0.3 0.1\n"


def text_file(content: str | bytes, name: str = "vectors.txt"):
    def build(folder):
        path = folder / name
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path
    return build


def truncated_binary(folder):
    from gensim.models import KeyedVectors

    keyed = KeyedVectors(vector_size=3)
    keyed.add_vectors(["money", "bank", "grows"], np.eye(3, dtype=np.float32))
    path = folder / "vectors.bin"
    keyed.save_word2vec_format(str(path), binary=True)
    path.write_bytes(path.read_bytes()[:-10])
    return path


def binary_vectors(folder):
    """word2vec binary whose float bytes are mostly not text (values like 1.7e-21 and -3.1e+38)."""
    from gensim.models import KeyedVectors

    keyed = KeyedVectors(vector_size=40)
    keyed.add_vectors(["money", "bank", "grows"], np.random.default_rng(0).normal(size=(3, 40)).astype(np.float32))
    path = folder / "vectors.bin"
    keyed.save_word2vec_format(str(path), binary=True)
    return path


def binary_with_a_long_word(folder):
    """word2vec binary whose second word is 5 MB long: every later run once mapped it, 5 s and 1.5 GB each."""
    record = b" " + np.ones(3, dtype="<f4").tobytes() + b"\n"
    path = folder / "vectors.bin"
    path.write_bytes(b"2 3\nmoney" + record + b"w" * (5 << 20) + record)
    return path


def gensim_pickle(folder):
    from gensim.models import KeyedVectors

    keyed = KeyedVectors(vector_size=3)
    keyed.add_vectors(["money", "bank"], np.eye(2, 3, dtype=np.float32))
    path = folder / "vectors.kv"
    keyed.save(str(path))
    return path


def cached_then(damage, content: str = GOOD):
    """A GloVe file imported once (so its cache exists), then the cache damaged by `damage(folder)`."""
    def build(folder):
        path = text_file(content)(folder)
        load_vectors(str(path))
        damage(the_cache())
        return path
    return build


def the_cache() -> Path:
    """The one cached set of the test's private cache."""
    [cache] = [p for p in (Path(os.environ["ATTN_CLI_CACHE"]) / "v1").iterdir() if p.is_dir()]
    return cache


def key_of(path: Path) -> str:
    from attn_cli.vectors.cache import Fingerprint

    return Fingerprint.of(path).key("glove", None)


def planted_from_another_file(folder):
    """Another file's cache copied under this file's key, as anyone who can write a shared cache could."""
    load_vectors(str(text_file(GOOD.replace("0.1", "0.9"), "other.txt")(folder)))
    path = text_file(GOOD)(folder)
    shutil.copytree(the_cache(), the_cache().parent / key_of(path))
    return path


def a_file_at_the_key(folder):
    path = text_file(GOOD)(folder)
    (Path(os.environ["ATTN_CLI_CACHE"]) / "v1").mkdir(parents=True)
    (Path(os.environ["ATTN_CLI_CACHE"]) / "v1" / key_of(path)).write_text("not a folder")
    return path


def a_link_at_the_key(folder):
    """The set's own place a symbolic link to a copy of it among the user's files (which must stay untouched)."""
    path = text_file(GOOD)(folder)
    load_vectors(str(path))
    cache = the_cache()
    shutil.move(cache, folder / "copy-of-the-cache")
    cache.symlink_to(folder / "copy-of-the-cache")
    return path


def zero_index(cache):
    np.save(cache / "index.npy", np.zeros_like(np.load(cache / "index.npy")))


def index_entry_beyond_the_vocabulary(cache):
    """The slot of "bank" (not the first or last word, which a load checks) points past the last row."""
    table = np.load(cache / "index.npy")
    table[zlib.crc32(b"bank") & (len(table) - 1)] = 1_000_000
    np.save(cache / "index.npy", table)


def nan_in_row(row):
    def damage(cache):
        matrix = np.load(cache / "matrix.npy", mmap_mode="r+")
        matrix[row, 1] = np.nan
        matrix.flush()
    return damage


def byte_ff_in(word: str):
    """A byte 0xff (never UTF-8) written over the first letter of a cached word (a damaged disk)."""
    def damage(cache):
        vocabulary = bytearray((cache / "vocab.txt").read_bytes())
        vocabulary[vocabulary.index(word.encode() + b"\n")] = 0xFF
        (cache / "vocab.txt").write_bytes(bytes(vocabulary))
    return damage


def stored(file: str, row: int, value: float):
    """One entry of a cached array replaced by `value` (a row's stored length, which a cosine divides by; a
    word's offset in vocab.txt)."""
    def damage(cache):
        values = np.load(cache / file)
        values[row] = value
        np.save(cache / file, values)
    return damage


def retyped(file: str, dtype: str):
    """A cached array saved again with another dtype, its values converted."""
    def damage(cache):
        np.save(cache / file, np.load(cache / file).astype(dtype))
    return damage




def edited_meta(**changes):
    def damage(cache):
        meta = json.loads((cache / "meta.json").read_text())
        (cache / "meta.json").write_text(json.dumps({**meta, **changes}))
    return damage


def chown_to_nobody(cache):
    if os.geteuid() != 0:
        pytest.skip("only root can give a folder to another user")
    os.chown(cache, 65534, 65534)


def truncate_matrix(cache):
    with open(cache / "matrix.npy", "r+b") as handle:
        handle.truncate(100)


def future_metadata(cache):
    meta = json.loads((cache / "meta.json").read_text())
    (cache / "meta.json").write_text(json.dumps({**meta, "layout": "attn-cli-cache/99"}))


def unreadable(monkeypatch, path):
    real_open = open

    def refusing_open(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)
    monkeypatch.setattr("builtins.open", refusing_open)


def disk_full(monkeypatch, path):
    from attn_cli.vectors.cache import CacheWriter

    def no_space(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(CacheWriter, "finish", no_space)


def grows_during_import(monkeypatch, path):
    from attn_cli.vectors import readers

    real_read = readers.read_vectors

    def read_then_append(*args, **kwargs):
        result = real_read(*args, **kwargs)
        with open(path, "a") as handle:
            handle.write("late 1 2 3\n")
        return result
    monkeypatch.setattr(readers, "read_vectors", read_then_append)


def read_only_cache(monkeypatch, path):
    blocker = path.parent / "a-file-not-a-folder"
    blocker.write_text("the cache folder cannot be made under a file, even by root")
    monkeypatch.setenv("ATTN_CLI_CACHE", str(blocker / "cache"))


# (case name, builder, patch or None, extra options, exit code, words stderr must contain)
VECTOR_CATALOGUE = [
    ("a directory", lambda folder: folder, None, [], 4, "is a directory"),
    ("unreadable", text_file(GOOD), unreadable, [], 4, "Permission denied"),
    ("empty", text_file(""), None, [], 4, "empty"),
    ("only blank lines", text_file("\n\n \n"), None, [], 4, "vector"),
    ("truncated binary", truncated_binary, None, [], 4, "truncated"),
    ("binary vectors forced to be read as GloVe text", binary_vectors, None, ["--format", "glove"], 4,
     "binary data, not text; leave out --format"),
    ("header larger than the body", text_file("5 3\n" + GOOD), None, [], 0, "header"),
    ("header smaller than the body", text_file("2 3\n" + GOOD), None, [], 0, "header"),
    ("a line with too few fields", text_file(GOOD + "river 0.1 0.2\n"), None, [], 4, "line 4"),
    ("a line with too many fields", text_file(GOOD + "river 0.1 0.2 0.3 0.4 0.5\n"), None, [], 4, "line 4"),
    ("a bad float", text_file(GOOD + "river 0.1 zero 0.3\n"), None, [], 4, "'zero' is not a number"),
    ("a NaN value", text_file(GOOD + "river 0.1 nan 0.3\n"), None, [], 4, "NaN or infinite"),
    ("an infinite value", text_file(GOOD + "river 0.1 -inf 0.3\n"), None, [], 4, "NaN or infinite"),
    ("a value beyond float32", text_file(GOOD + "river 0.1 1e40 0.3\n"), None, [], 4, "float32 range"),
    ("bad lines skipped on request", text_file(GOOD + "river 0.1 nan 0.3\n"), None, ["--skip-bad-lines"], 0,
     "1 bad line"),
    ("a zero vector", text_file(GOOD.replace("bank 0.2 0.1 0.0", "bank 0 0 0")), None, [], 0, ""),
    ("duplicate words", text_file(GOOD + "bank 9 9 9\n"), None, [], 0, "duplicate"),
    ("invalid UTF-8 in a word", text_file(GOOD.encode() + b"caf\xe9 0.1 0.2 0.3\n"), None, [], 0, "UTF-8"),
    ("a word of 2,000 bytes", text_file(GOOD + "w" * 2000 + " 0.1 0.2 0.3\n"), None, [], 4,
     "line 4: a word of 2,000 bytes, longer than the 1,000"),
    ("a word of 2,000 bytes skipped on request", text_file(GOOD + "w" * 2000 + " 0.1 0.2 0.3\n"), None,
     ["--skip-bad-lines"], 0, "1 bad line"),
    ("a 5 MB word in word2vec binary", binary_with_a_long_word, None, [], 4,
     "the word of record 2 is longer than 1,000 bytes"),
    ("a word2vec binary header of 0 dims", text_file(b"2 0\nmoney \nbank \n", "vectors.bin"), None,
     ["--format", "word2vec-binary"], 4, "announces 0 dimensions"),
    ("a header of 10^20 dims", text_file("3 100000000000000000000\n" + GOOD), None, [], 4,
     "announces 100,000,000,000,000,000,000 dimensions"),
    ("a header of 10^20 words", text_file("100000000000000000000 3\n" + GOOD), None, [], 0,
     "announces 100,000,000,000,000,000,000 words"),
    ("a .gz name on plain text", text_file(GOOD, "vectors.txt.gz"), None, [], 0, ""),
    ("gzip magic, broken body", text_file(b"\x1f\x8b\x08\x00broken", "vectors.txt.gz"), None, [], 4, "cannot read"),
    ("bzip2 magic, broken body", text_file(b"BZh9broken", "vectors.txt.bz2"), None, [], 4, "cannot read"),
    ("a gensim pickle", gensim_pickle, None, [], 4, "--trust-pickle"),
    ("a file growing during the import", text_file(GOOD), grows_during_import, [], 4, "changed while"),
    ("a corrupt cached matrix", cached_then(truncate_matrix), None, [], 0, "corrupt"),
    ("cache metadata from a future version", cached_then(future_metadata), None, [], 0, "rebuilding"),
    # issue 14.3: a cache written by someone else (a shared cache, a copied folder, a damaged disk)
    ("a cache planted under another file's key", planted_from_another_file, None, [], 0,
     "records another source"),
    ("cache metadata whose source is not an object", cached_then(edited_meta(source="elsewhere")), None, [], 0,
     "no valid 'source'"),
    ("cache metadata whose lower-case flag is text", cached_then(edited_meta(lowercase="no")), None, [], 0,
     "no valid 'lowercase'"),
    ("cache metadata counting bad lines it does not name", cached_then(edited_meta(bad_lines=2)), None, [], 0,
     "contradicts itself"),
    ("a cache index of zeros", cached_then(zero_index), None, [], 0, "rebuilding"),
    ("a cache index entry beyond the vocabulary", cached_then(index_entry_beyond_the_vocabulary), None, [], 4,
     "index.npy points to row 1000000 of 3); remove it with attn-cli vectors remove"),
    ("NaN in a cached row the sentence uses", cached_then(nan_in_row(1)), None, [], 4,
     "the vector of 'bank' holds NaN"),
    ("NaN in a cached row only the neighbour search reads", cached_then(nan_in_row(3), GOOD + "river 1 2 3\n"),
     None, [], 0, ""),
    # issue 25.8: damaged caches are damaged sources, never exit 1 nor a cosine above 1
    ("a byte 0xff in a cached word the sentence uses", cached_then(byte_ff_in("bank")), None, [], 4,
     "(vocab.txt is not UTF-8 at row 1); remove it with attn-cli vectors remove"),
    ("a byte 0xff in a cached word only the neighbour search reads",
     cached_then(byte_ff_in("river"), GOOD + "river 1 2 3\nflows 3 2 1\n"), None, [], 4,
     "(vocab.txt is not UTF-8 at row 3)"),  # not the last word: the first and the last are read at load
    ("a cached norm of 1e-30 for a word the sentence uses", cached_then(stored("norms.npy", 1, 1e-30)), None, [], 4,
     "(norms.npy gives 'bank' a length of 1e-30, its row 0.224); remove it"),
    ("a cached norm of 0 for a word the sentence uses", cached_then(stored("norms.npy", 2, 0)), None, [], 4,
     "(norms.npy gives 'grows' a length of 0, its row 0.316)"),
    ("a cached norm of 1e-30 for a word only the neighbour search reads",
     cached_then(stored("norms.npy", 3, 1e-30), GOOD + "river 1 2 3\n"), None, [], 4,
     "(norms.npy gives 'river' a length of 1e-30, its row 3.74)"),
    ("a cached offset pointing inside a word", cached_then(stored("offsets.npy", 2, 3), GOOD + "river 1 2 3\n"),
     None, [], 4,
     "(offsets.npy does not point to the word of row 1); remove it"),  # today "bank" was called unknown, exit 0
    ("cached norms stored as integers", cached_then(retyped("norms.npy", "int32")), None, [], 0,
     "(norms.npy is not 3 float32); rebuilding it"),
    ("cached offsets stored as floats", cached_then(retyped("offsets.npy", "float64")), None, [], 0,
     "(offsets.npy is not 4 int64); rebuilding it"),
    ("a cached index stored as floats", cached_then(retyped("index.npy", "float64")), None, [], 0,
     "(index.npy is malformed); rebuilding it"),
    ("a cached matrix stored as float64", cached_then(retyped("matrix.npy", "float64")), None, [], 0,
     "(matrix.npy is not 3 x 3 float32); rebuilding it"),
    ("a file where a cache folder should be", a_file_at_the_key, None, [], 0, "is not a folder); rebuilding"),
    ("a link where a cache folder should be", a_link_at_the_key, None, [], 0,
     "is a symbolic link, not a folder); rebuilding"),
    ("a cache folder writable by everyone", cached_then(lambda cache: cache.chmod(0o777)), None, [], 0,
     "is writable by others (mode 777)"),
    ("a cache folder of another user", cached_then(chown_to_nobody), None, [], 0,
     "is owned by another user (uid 65534)"),
    ("a cache folder that cannot be written", text_file(GOOD), read_only_cache, [], 0, "without a cache"),
    ("a full disk while caching", text_file(GOOD), disk_full, [], 4, "free some space"),
]


@pytest.mark.parametrize("name, build, patch, options, code, words", VECTOR_CATALOGUE,
                         ids=[case[0] for case in VECTOR_CATALOGUE])
def test_bad_vector_files_and_caches(run, tmp_path, name, build, patch, options, code, words):
    user = tmp_path / "user"
    user.mkdir()
    path = build(user)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in user.rglob("*") if p.is_file()}
    with pytest.MonkeyPatch.context() as simulated, at_most(HANG_SECONDS):  # undone before the checks read any file
        if patch is not None:
            patch(simulated, path)
        result = run("explain", "money bank grows", "--vectors", str(path), "--json", *options)
    assert result.exit_code == code, (result.stdout[:200], result.stderr[:500])
    assert "Traceback" not in result.stderr and words in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("attn-cli: error: ")]
    if code:
        assert result.stdout == "" and len(errors) == 1
    else:
        report = json.loads(result.stdout)
        assert not errors and all(np.isfinite(row).all() for row in np.array(report["heads"][0]["weights"]))
        assert [t["key"] for t in report["tokens"]] == ["money", "bank", "grows"]
    cache = Path(os.environ["ATTN_CLI_CACHE"])
    assert not [p for p in cache.rglob("*") if ".tmp" in p.name or p.name.startswith(".")], "a partial cache is left"
    if name != "a file growing during the import":
        assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in before} == before  # nothing of the user's changed


def test_the_whole_catalogue_has_at_least_forty_cases():
    assert len(CATALOGUE) + len(VECTOR_CATALOGUE) >= 40


def default_signals() -> None:
    """The signals' default dispositions in the child, as a terminal's command has them: a run under nohup (as CI
    may be) ignores SIGHUP, and so, rightly, would the command."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL if number != signal.SIGINT else signal.default_int_handler)


@pytest.mark.parametrize("signal_number, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_during_an_import_leaves_nothing_behind(tmp_path, private_cache, signal_number, code):
    """Ctrl-C, kill (SIGTERM) or a closed terminal (SIGHUP) mid-import: the documented exit code, no cache, no
    temporary folder, nothing on stdout (issue 25.11: SIGTERM and SIGHUP used to leave the .tmp folder)."""
    numbers = " ".join(f"{v:.5f}" for v in np.linspace(-1, 1, 50))
    path = tmp_path / "big.txt"
    path.write_text("".join(f"w{i} {numbers}\n" for i in range(300_000)))
    process = subprocess.Popen([sys.executable, "-m", "attn_cli", "explain", "w1 w2", "--vectors", str(path),
                                "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "ATTN_CLI_CACHE": str(private_cache)},
                               preexec_fn=default_signals)
    while not list((private_cache / "v1").glob(".tmp-*/matrix.npy")):  # until the import is under way
        assert process.poll() is None, "the import ended before it could be interrupted"
        time.sleep(0.01)
    process.send_signal(signal_number)
    stdout, stderr = process.communicate(timeout=HANG_SECONDS)
    assert process.returncode == code, stderr
    assert stdout == "" and "Traceback" not in stderr
    assert list((private_cache / "v1").iterdir()) == []  # neither a cache nor a temporary folder


@pytest.mark.parametrize("mode", ["raw", "projected"])
@pytest.mark.parametrize("temperature", ["1", "1e-06"])
def test_huge_values_at_the_smallest_temperature_give_the_hard_max(run, tmp_path, mode, temperature):
    """Values near 1e30 make scores near 1e60; at the smallest temperature the weights are the hard max (all
    weight on each row's top visible score, never NaN) and the logits finite, so no JSON null reads as masked."""
    rng = np.random.default_rng(1)
    path = tmp_path / "huge.txt"
    path.write_text("".join(f"{word} {' '.join(f'{x:.3e}' for x in rng.normal(size=8) * 1e30)}\n"
                            for word in ["money", "bank", "grows", "river", "flows"]), encoding="utf-8")
    env = {"ATTN_CLI_CACHE": str(tmp_path / "cache")}
    for seed in range(4 if mode == "projected" else 1):
        args = ["explain", "money bank grows river flows", "--vectors", str(path), "--mode", mode,
                "--temperature", temperature, "--mask", "causal", *(["--seed", str(seed)] if seed else [])]
        result = run(*args, "--json", env=env)
        assert result.exit_code == 0, result.stderr
        head = json.loads(result.stdout)["heads"][0]
        for i, (scores, logits, weights) in enumerate(zip(head["scores"], head["logits"], head["weights"])):
            assert all(logit is not None for logit in logits[:i + 1]) and logits[i + 1:] == [None] * (4 - i)
            assert math.isclose(sum(weights), 1.0) and all(math.isfinite(w) for w in weights)
            top = max(scores[:i + 1])
            if temperature != "1":
                assert weights == [1.0 if j <= i and s == top else 0.0 for j, s in enumerate(scores)]
        assert run(*args, env=env).exit_code == 0


@pytest.mark.parametrize("args", [["--scale", "1e6"], ["--scale", "1e6", "--similarity", "cosine"],
                                  ["--scale", "1e6", "--temperature", "1e-6"], ["--temperature", "1e308"],
                                  ["--temperature", "1e-6"], ["--positions", "sinusoidal", "--position-scale", "1e6"],
                                  ["--mode", "projected", "--scale", "1e6"]])
def test_extreme_scales_and_temperatures_leak_no_numpy_warning(run, args):
    """A scale of 1e308 overflowed the flatness search's ceiling and numpy's RuntimeWarning reached stderr. Every
    extreme the settings allow gives a result and no raw warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for output in ([], ["--json"]):
            result = run("explain", "money bank grows", *args, *output)
            assert result.exit_code == 0, result.stderr
            assert "Warning" not in result.stderr and not re.search(r"\b(nan|inf)\b", result.stdout.lower())


@pytest.mark.parametrize("args, culprit", [(["--scale", "1e308"], "--scale"), (["--temperature", "5e-324"],
                                                                                "--temperature")])
def test_scales_and_temperatures_that_could_overflow_a_logit_are_refused(run, args, culprit):
    result = run("explain", "money bank grows", *args)
    assert result.exit_code == 2 and f"{culprit} must be" in result.stderr


def test_the_api_refuses_a_position_scale_whose_squares_overflow():
    with pytest.raises(attn_cli.SettingsError, match="position_scale must be 'auto' or a finite number from 0"):
        attn_cli.explain("money bank grows", positions="sinusoidal", position_scale=1e200)


@pytest.mark.parametrize("command", [["explain", "money bank grows river"], ["trace", "money bank grows river"],
                                     ["compare", "money bank", "river bank"]])
@pytest.mark.parametrize("args", [["--scale", "1e6"], ["--temperature", "1e-6"],
                                  ["--mode", "projected", "--scale", "1e6"]])
def test_huge_logits_never_show_inf_or_nan_in_a_table(run, tmp_path, command, args):
    """Values near 1e30 at the largest scale or smallest temperature make logits near 1e66; trace's note once said
    the top score "beats the next by inf, and exp(inf) ≈ 1.01e+304". No table shows an infinity or NaN."""
    rng = np.random.default_rng(1)
    path = tmp_path / "huge.txt"
    path.write_text("".join(f"{word} {' '.join(f'{x:.3e}' for x in rng.normal(size=8) * 1e30)}\n"
                            for word in ["money", "bank", "grows", "river", "flows"]), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run(*command, "--vectors", str(path), *args, env={"ATTN_CLI_CACHE": str(tmp_path / "cache")})
    assert result.exit_code == 0, result.stderr
    assert not re.search(r"\b(nan|inf)\b", result.stdout.lower()), result.stdout
