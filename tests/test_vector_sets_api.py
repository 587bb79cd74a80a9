"""The vector-set operations as library functions: what `attn-cli vectors list|info|remove` are thin clients of."""

from __future__ import annotations

import os

import pytest

import attn_cli


def test_an_imported_set_is_listed_found_described_and_removed(glove_file, private_cache):
    assert attn_cli.cached_vector_sets() == [] and attn_cli.cache_folder() == private_cache
    vectors = attn_cli.load_vectors(glove_file)  # imports it into the cache
    [cached] = attn_cli.cached_vector_sets()
    assert cached.describe()["count"] == vectors.count == 76 and not cached.corrupt and cached.bytes > 0
    assert attn_cli.find_cached(glove_file) == [cached] == attn_cli.find_cached(cached.id)
    assert attn_cli.find_cached("no-such-set") == [] and attn_cli.find_cached("..") == []
    described = attn_cli.describe_vectors(cached.load())
    assert (described["count"], described["dims"], described["cache"]["path"]) == (76, 50, str(cached.folder))
    assert repr(cached).startswith(f"<CachedSet {cached.id}: ") and "\n" not in repr(cached)
    assert attn_cli.remove_cached([cached]) == [cached.folder]
    assert not cached.folder.exists() and attn_cli.cached_vector_sets() == []
    assert os.path.exists(glove_file)  # the source file is never touched


def test_a_folder_without_metadata_is_left_alone(glove_file):
    attn_cli.load_vectors(glove_file)
    [cached] = attn_cli.cached_vector_sets()
    (cached.folder / "meta.json").unlink()
    [broken] = attn_cli.cached_vector_sets()
    assert broken.corrupt
    said = []
    assert attn_cli.remove_cached([broken], said.append) == [] and broken.folder.exists()
    assert "left alone" in said[0]
    with pytest.raises(attn_cli.VectorsError, match="left alone"):
        attn_cli.remove_cached([broken], named=True)
    with pytest.raises(attn_cli.VectorsError, match="corrupt"):
        broken.load()


def test_no_leftovers_in_a_fresh_cache():
    assert attn_cli.vector_leftovers() == [] and attn_cli.remove_leftovers() == []


def test_a_relative_xdg_cache_home_is_ignored(monkeypatch, tmp_path):
    """The XDG spec says a relative $XDG_CACHE_HOME is invalid and to be ignored: it put the cache under whatever
    folder a run started in."""
    monkeypatch.delenv("ATTN_CLI_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative-cache")
    assert attn_cli.cache_folder() == tmp_path / ".cache" / "attn-cli"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "absolute"))
    assert attn_cli.cache_folder() == tmp_path / "absolute" / "attn-cli"
