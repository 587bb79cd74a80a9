"""`attn-cli vectors export NAME FILE` and attn_cli.export_vectors (issue 32 item 16): any set as a word2vec file,
text or binary, that gensim reads back word for word and value for value, written whole or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import attn_cli

FORMATS = [("word2vec", False), ("word2vec-binary", True)]


def read_back(path: Path, binary: bool):
    from gensim.models import KeyedVectors

    return KeyedVectors.load_word2vec_format(str(path), binary=binary)


@pytest.mark.parametrize("format, binary", FORMATS)
def test_the_embedded_set_is_exported_as_gensim_reads_it(run, tmp_path, schema_validator, format, binary):
    path = tmp_path / f"default.{format}"
    result = run("vectors", "export", "default", str(path), "--format", format, "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    schema_validator("vectors").validate(document)
    vectors = attn_cli.load_vectors()
    assert (document["count"], document["dims"], document["format"]) == (vectors.count, vectors.dims, format)
    keyed = read_back(path, binary)
    assert keyed.index_to_key == list(vectors.words)
    assert np.array_equal(keyed.vectors, np.asarray(vectors.matrix, dtype=np.float32))  # float16 widened exactly


def test_a_cached_set_is_exported_by_its_id_and_by_its_file(run, tmp_path, word2vec_text_file):
    imported = json.loads(run("vectors", "import", word2vec_text_file, "--json").stdout)
    cached = json.loads(run("vectors", "list", "--json").stdout)["sets"][0]["id"]
    original = read_back(Path(word2vec_text_file), False)
    for name in (cached, word2vec_text_file):
        path = tmp_path / "out.bin"
        result = run("vectors", "export", name, str(path), "--format", "word2vec-binary")
        assert result.exit_code == 0, result.stderr
        assert f"{imported['count']:,} words" in result.stdout
        keyed = read_back(path, True)
        assert keyed.index_to_key == original.index_to_key and np.array_equal(keyed.vectors, original.vectors)


@pytest.mark.parametrize("name, binary", [("vectors.bin", True), ("vectors.txt", False), ("vectors", False)])
def test_without_format_a_bin_file_is_binary_and_any_other_text(run, tmp_path, word2vec_text_file, name, binary):
    path = tmp_path / name
    result = run("vectors", "export", word2vec_text_file, str(path), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["format"] == ("word2vec-binary" if binary else "word2vec")
    assert read_back(path, binary).index_to_key == read_back(Path(word2vec_text_file), False).index_to_key


def test_a_write_that_fails_is_exit_2_and_the_vector_file_is_never_replaced(run, tmp_path, word2vec_text_file):
    failed = run("vectors", "export", "default", "/dev/full")
    assert failed.exit_code == 2 and "/dev/full" in failed.stderr and failed.stdout == ""
    source = tmp_path / "vectors.txt"
    before = Path(word2vec_text_file).read_bytes()
    source.write_bytes(before)
    same = run("vectors", "export", str(source), str(source))
    assert same.exit_code == 2 and "FILE" in same.stderr and source.read_bytes() == before
    missing = run("vectors", "export", "default", str(tmp_path / "no" / "out.txt"))
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


def test_a_word_with_whitespace_is_refused_by_name_and_the_file_left_as_it_was(tmp_path):
    from attn_cli.errors import VectorsError

    words = [f"w{i}" for i in range(5000)] + ["new york"]  # past the first block of rows written
    vectors = attn_cli.Vectors(name="phrases", words=words, matrix=np.ones((len(words), 3), dtype=np.float32),
                               lowercase=True)
    path = tmp_path / "out.txt"
    path.write_text("mine\n", encoding="utf-8")
    with pytest.raises(VectorsError, match="'new york'"):
        attn_cli.export_vectors(vectors, path)
    assert path.read_text(encoding="utf-8") == "mine\n" and sorted(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("arguments, setting", [
    ((42, "out.txt"), "vectors"),
    ((None, 42), "path"),
    ((None, "out.txt", "glove"), "format"),
])
def test_wrong_arguments_name_themselves(tmp_path, monkeypatch, arguments, setting):
    monkeypatch.chdir(tmp_path)
    vectors, path, *format = arguments
    with pytest.raises(attn_cli.SettingsError) as raised:
        attn_cli.export_vectors(attn_cli.load_vectors() if vectors is None else vectors, path,
                                **({"format": format[0]} if format else {}))
    assert raised.value.setting == setting and not (tmp_path / "out.txt").exists()


@pytest.mark.parametrize("command", [["export", "{name}", "x.txt"], ["info", "{name}"], ["import", "{name}"]])
def test_a_name_too_long_for_the_file_system_is_a_vectors_error_shortened(run, command):
    """Issue 32 audit 5: `vectors export <5,000 q> x.txt` and `vectors info` were exit 1, "internal error:
    OSError: File name too long", quoting the whole name."""
    name = "q" * 5000
    result = run("vectors", *[part.format(name=name) for part in command])
    assert result.exit_code == 4, result.stderr
    assert "qqqq" in result.stderr and len(result.stderr) < 500 and "5,000 characters" in result.stderr


def test_a_missing_name_points_to_default_not_to_an_option_export_lacks(run, tmp_path):
    """Issue 32 audit 12: `vectors export nosuch x.txt` advised "or leave out --vectors", which export does not
    have; its embedded set is NAME default."""
    result = run("vectors", "export", "nosuch", str(tmp_path / "x.txt"))
    assert result.exit_code == 4 and "nosuch" in result.stderr and "NAME default" in result.stderr
    assert "--vectors" not in result.stderr and not (tmp_path / "x.txt").exists()
