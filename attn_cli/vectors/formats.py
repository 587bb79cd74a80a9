"""Recognise a vector file's format from its first bytes, and the formats only gensim reads.

GloVe text has no header; word2vec text (and fastText .vec) and word2vec binary
start with "COUNT DIMS"; binary is told from text by the bytes after the header.
fastText .bin starts with its magic number, gensim's own .kv/.model files are
pickles. gzip and bzip2 are recognised by their magic numbers. gensim is
imported only in `read_fasttext_bin` and `read_gensim_pickle`, never on the
cached path (importing it costs about a second).
"""

from __future__ import annotations

import io
import re
import shutil
import tempfile
import warnings
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from attn_cli.errors import VectorsError
from attn_cli.vectors.store import Vectors, is_lowercase_vocabulary

CACHEABLE = ("glove", "word2vec", "word2vec-binary")
FORMATS = CACHEABLE + ("fasttext-bin", "gensim-pickle")
_HEADER = re.compile(rb"^\s*\d+\s+\d+\s*$")
_PROBE_BYTES = 4096
_FASTTEXT_MAGIC = (793712314).to_bytes(4, "little")


def open_maybe_compressed(path: Path):
    """A binary file object that transparently decompresses gzip and bzip2 content."""
    with open(path, "rb") as raw:
        magic = raw.read(3)
    if magic[:2] == b"\x1f\x8b":
        import gzip

        return gzip.open(path, "rb")
    if magic == b"BZh":
        import bz2

        return bz2.open(path, "rb")
    return open(path, "rb")


def detect_format(path: Path) -> str:
    """One of FORMATS, from the magic numbers, the header line and the bytes after it."""
    try:
        with open_maybe_compressed(path) as handle:  # a .bin.gz is a fastText model too
            head = handle.peek(64)[:64]
            first_line = handle.readline(_PROBE_BYTES)
            body = handle.read(_PROBE_BYTES)
        magic = head[:4]
        if magic == _FASTTEXT_MAGIC:
            return "fasttext-bin"
        if magic[:1] == b"\x80":  # pickle protocol 2+: gensim's KeyedVectors.save()
            return "gensim-pickle"
    except (OSError, EOFError, zlib.error) as exc:
        raise VectorsError(f"cannot read {path}: {exc}; check the file is a complete vector file") from exc
    if not first_line.strip() and not body.strip():
        raise VectorsError(f"{path} is empty; pass a GloVe or word2vec vector file")
    if not _HEADER.match(first_line):
        # old fastText .bin files have no magic number: binary bytes where a text line should be
        return "fasttext-bin" if ".bin" in path.suffixes and not _looks_like_text(head) else "glove"
    return "word2vec" if _looks_like_text(body) else "word2vec-binary"


def _looks_like_text(chunk: bytes) -> bool:
    """Text vectors decode as UTF-8 and hold no control bytes but tab, CR and LF."""
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a multi-byte character cut at the end of the probe is still text
        if exc.start < len(chunk) - 4:
            return False
        text = chunk[: exc.start].decode("utf-8")
    return not any(ord(char) < 32 and char not in "\t\r\n" for char in text)


def read_fasttext_bin(path: Path, limit: int | None = None) -> Vectors:
    """A fastText .bin model through gensim: any word gets a vector from its character n-grams."""
    from gensim.models.fasttext import load_facebook_vectors  # deferred: importing gensim costs ~1 s

    try:
        with decompressed(path) as plain, warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # gensim's overflow warnings: the values are checked below
            keyed = load_facebook_vectors(str(plain))
    except (ValueError, EOFError, OSError, AssertionError, zlib.error) as exc:
        raise VectorsError(f"cannot read {path} as a fastText .bin model: {exc}; "
                           "check the file is complete, or pass its .vec text file instead") from exc
    return _from_keyed(path, keyed, "fasttext-bin", limit, subword=lambda word: finite(path, keyed[word]))


@contextmanager
def decompressed(path: Path) -> Iterator[Path]:
    """The file itself, or a temporary plain copy of a .gz/.bz2 one: gensim reads a compressed
    fastText model as garbage (NaN vectors) instead of decompressing it."""
    with open_maybe_compressed(path) as stream:
        if isinstance(stream, io.BufferedReader):  # a plain file
            yield path
            return
        with tempfile.NamedTemporaryFile(prefix="attn-cli-", suffix=".bin") as plain:
            shutil.copyfileobj(stream, plain, 1 << 20)
            plain.flush()
            yield Path(plain.name)


def read_gensim_pickle(path: Path, trusted: bool, limit: int | None = None) -> Vectors:
    """gensim's own KeyedVectors.save() file: a pickle, so loading it can run code. Opt-in only."""
    if not trusted:
        raise VectorsError(f"{path} is a gensim pickle (.kv/.model): loading it can run any code stored in it; "
                           "pass --trust-pickle if you trust its origin, or export it with "
                           "save_word2vec_format and use that file")
    from gensim.models import KeyedVectors  # deferred: importing gensim costs ~1 s

    try:
        loaded = KeyedVectors.load(str(path), mmap="r")
    except Exception as exc:  # an arbitrary pickle can fail in arbitrary ways
        raise VectorsError(f"cannot load {path} as gensim KeyedVectors: {exc}") from exc
    keyed = getattr(loaded, "wv", loaded)  # a full .model carries its vectors in .wv
    if not hasattr(keyed, "index_to_key"):
        raise VectorsError(f"{path} holds a {type(loaded).__name__}, not word vectors; pass a KeyedVectors file")
    return _from_keyed(path, keyed, "gensim-pickle", limit)


def _from_keyed(path: Path, keyed, file_format: str, limit: int | None, subword=None) -> Vectors:
    """gensim's vectors as `Vectors`: the first `limit` words, refused if any value is NaN or infinite."""
    words = list(keyed.index_to_key)[:limit]
    matrix = keyed.vectors[:limit]
    for start in range(0, len(matrix), 8192):  # a block at a time: no float64 copy of 2 M x 300
        finite(path, matrix[start:start + 8192])
    return Vectors(name=str(path), words=words, matrix=matrix, lowercase=is_lowercase_vocabulary(words),
                   details={"format": file_format}, subword=subword)


def finite(path: Path, values) -> np.ndarray:
    """The values as float64, or a VectorsError naming the file when one is NaN or infinite."""
    with np.errstate(all="ignore"):
        values = np.asarray(values, dtype=np.float64)
    if not np.isfinite(values).all():
        raise VectorsError(f"{path} holds NaN or infinite values; it cannot be attended: repair or re-export the "
                           "vectors (text files can leave such lines out with --skip-bad-lines)")
    return values
