"""Recognise a vector file's format from its first bytes and read it through gensim.

GloVe text has no header; word2vec text and binary start with "COUNT DIMS".
Binary is told from text by the bytes after the header. gzip and bzip2 files
are recognised by their magic numbers. gensim is imported only here, and only
when a file is actually read (it costs about a second to import).
"""

from __future__ import annotations

import bz2
import gzip
import re
from pathlib import Path

from attn_cli.errors import VectorsError
from attn_cli.vectors.store import Vectors, is_lowercase_vocabulary

FORMATS = ("glove", "word2vec", "word2vec-binary")
_HEADER = re.compile(rb"^\s*\d+\s+\d+\s*$")
_PROBE_BYTES = 4096


def open_maybe_compressed(path: Path):
    """A binary file object that transparently decompresses gzip and bzip2 content."""
    with open(path, "rb") as raw:
        magic = raw.read(3)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if magic == b"BZh":
        return bz2.open(path, "rb")
    return open(path, "rb")


def detect_format(path: Path) -> str:
    """'glove', 'word2vec' or 'word2vec-binary', from the header line and the bytes after it."""
    try:
        with open_maybe_compressed(path) as handle:
            first_line = handle.readline(_PROBE_BYTES)
            body = handle.read(_PROBE_BYTES)
    except (OSError, EOFError) as exc:
        raise VectorsError(f"cannot read {path}: {exc}; check the file is a complete vector file") from exc
    if not first_line.strip():
        raise VectorsError(f"{path} is empty; pass a GloVe or word2vec vector file")
    if not _HEADER.match(first_line):
        return "glove"
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


def read_with_gensim(path: Path, file_format: str) -> Vectors:
    """Load a GloVe or word2vec file with gensim's reader and wrap it as `Vectors`."""
    from gensim.models import KeyedVectors  # deferred: importing gensim costs ~1 s

    try:
        keyed = KeyedVectors.load_word2vec_format(
            str(path), binary=file_format == "word2vec-binary", no_header=file_format == "glove",
            unicode_errors="replace",
        )
    except (ValueError, EOFError, UnicodeDecodeError, OSError) as exc:
        raise VectorsError(f"cannot read {path} as {file_format}: {exc}; "
                           "check the file is a complete GloVe or word2vec file") from exc
    words = list(keyed.index_to_key)
    return Vectors(name=str(path), words=words, matrix=keyed.vectors,
                   lowercase=is_lowercase_vocabulary(words), details={"format": file_format})
