"""Vector sources: turn what the user names (nothing, a path, a gensim-data name) into `Vectors`. The embedded
default set (`default.npy`, `default.vocab.txt`, `default.json`, built by `scripts/build_default_vectors.py`) is in
`attn_cli/data/` (a wheel) or `data/` (a checkout)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np

from attn_cli.errors import Option, VectorsError, shown_path
from attn_cli.vectors.store import Vectors, row_norms

__all__ = ["DEFAULT_NAME", "Vectors", "load_default_vectors", "load_vectors", "resolve_source"]
DEFAULT_NAME = "default"
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def default_data_dir() -> Path:
    """Where the default set lives: inside the installed package, else the checkout's data/."""
    for candidate in (_PACKAGE_ROOT / "data", _PACKAGE_ROOT.parent / "data"):
        if (candidate / "default.npy").is_file():
            return candidate
    raise VectorsError("the embedded default vectors are missing from this installation; "
                       "reinstall attn-cli (pip install --force-reinstall attn-cli) or pass ",
                       Option("vectors", "PATH"))


def load_default_vectors() -> Vectors:
    """Read the default set: a memory-mapped matrix, a word list and its metadata."""
    folder = default_data_dir()
    metadata = json.loads((folder / "default.json").read_text(encoding="utf-8"))
    matrix = np.load(folder / "default.npy", mmap_mode="r", allow_pickle=False)  # [N, 128] float16
    words = (folder / "default.vocab.txt").read_text(encoding="utf-8").splitlines()
    details = {"source": metadata.get("source", ""), "licence": metadata.get("licence", "")}
    return Vectors(name=f"{DEFAULT_NAME} ({metadata.get('name', 'embedded')})", words=words, matrix=matrix,
                   lowercase=bool(metadata.get("lowercase", True)), details=details,
                   norms=row_norms(matrix))  # [N]: as a cache or a KeyedVectors gets them, so neighbours agree


def load_vectors(source: str, options=None) -> Vectors:
    """A file or gensim-data name through the cache (`options`: a cache.LoadOptions; api.load_vectors serves the
    embedded set and checks the format). The importer loads only when the cache has no sound set of the file."""
    if source == "":  # `--vectors "$VEC"` with VEC unset: never the embedded set in place of the one meant
        raise VectorsError("the vector source is empty; name a vector file or a gensim-data name, or leave it out "
                           "for the embedded set")
    from attn_cli.vectors.formats import detect_format, read_gensim_pickle
    from attn_cli.vectors.cache import CorruptCache, Fingerprint, LoadOptions, Wanted, layout_folder, serve

    options = options or LoadOptions()
    path, name = resolve_source(source)
    file_format = options.file_format or detect_format(path)
    if file_format == "fasttext-bin":
        from attn_cli.vectors.fasttext import read_fasttext_bin

        return read_fasttext_bin(path, options.limit)
    if file_format == "gensim-pickle":
        return read_gensim_pickle(path, options.trust_pickle, options.limit)
    wanted = Wanted(path, Fingerprint.of(path), file_format, options, name)
    try:
        return serve(layout_folder() / wanted.key, wanted)
    except (OSError, CorruptCache):  # the importer says why, and rebuilds or reads around it
        from attn_cli.vectors.importer import cached_vectors

        return cached_vectors(wanted)


def resolve_source(source: str) -> tuple[Path, str | None]:
    """(the data file, a display name): a path as given, or a downloaded gensim-data set. Only a regular file: a
    pipe can be read only once, while a vector file is read twice and cached by its path; a device never ends."""
    path = Path(source).expanduser()
    try:
        if path.is_dir():
            raise VectorsError(f"{source} is a directory; pass the vector file inside it")
        if path.exists() and not stat.S_ISREG(os.stat(path).st_mode):
            raise VectorsError(f"{source} is not a regular file (a pipe or a device): vector files are read more "
                               f"than once and cached by their path; save it to a file first, e.g. "
                               f"cat ... > vectors.txt, and pass that")
        if path.exists():
            return path, None
    except OSError as exc:
        raise unreachable(source, exc) from None
    from attn_cli.vectors import gensim_data

    if gensim_data.looks_like_name(source):
        return gensim_data.resolve(source), source
    raise VectorsError(f"no such vector file: {shown_path(source)}; pass an existing GloVe, word2vec or fastText "
                       "file, a gensim-data name, or ", Option("vectors", python_text="leave out vectors=",
                                                                typed_text="leave out --vectors"),
                       " for the embedded default")


def unreachable(source: str, exc: OSError) -> VectorsError:
    """A vector file name that cannot even be looked up (too long, a folder on the way that cannot be searched)."""
    return VectorsError(f"vector file {shown_path(source)}: {exc.strerror}; pass an existing vector file by a name "
                        "it can be opened by")
