"""Recognise a vector file's format from its first bytes, and the formats only gensim reads.

GloVe text has no header; word2vec text (and fastText .vec) and word2vec binary
start with "COUNT DIMS"; binary is told from text by the structure of the records after it.
fastText .bin starts with its magic number, gensim's own .kv/.model files are
pickles. gzip and bzip2 are recognised by their magic numbers. gensim is
imported only in `read_fasttext_bin` and `read_gensim_pickle`, never on the
cached path (importing it costs about a second).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tempfile
import warnings
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np

from attn_cli.errors import Option, VectorsError
from attn_cli.vectors.leftovers import SCRATCH, scratch_folder, sweep as sweep_leftovers
from attn_cli.vectors.store import Vectors, is_lowercase_vocabulary

CACHEABLE = ("glove", "word2vec", "word2vec-binary")
FORMATS = CACHEABLE + ("fasttext-bin", "gensim-pickle")
_HEADER = re.compile(rb"^\s*\d+\s+\d+\s*$")
_PROBE_BYTES = 4096
_BODY_PROBE_BYTES = 1 << 16  # room for a few records of 4,096 dims
_PROBE_LINES = 20
_MAX_WORD_BYTES = 1000  # a binary record's word is short; a text line read as one is not
UTF8_BOM = b"\xef\xbb\xbf"
_TEXT_BYTES = bytes(range(32, 127)) + b"\t\r\n"
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
    """One of FORMATS, from the magic numbers, the header line and the structure of the records after it."""
    try:
        with open_maybe_compressed(path) as handle:  # a .bin.gz is a fastText model too
            head = handle.peek(64)[:64]
            if head.startswith(UTF8_BOM):  # Windows editors start text with one: it is not the header's
                handle.read(len(UTF8_BOM))
            first_line = handle.readline(_PROBE_BYTES)
            body = handle.read(_BODY_PROBE_BYTES)
        magic = head[:4]
        if magic == _FASTTEXT_MAGIC:
            return "fasttext-bin"
        if magic[:1] == b"\x80":  # pickle protocol 2+: gensim's KeyedVectors.save()
            return "gensim-pickle"
    except (OSError, EOFError, zlib.error) as exc:
        raise VectorsError(f"cannot read {path}: {exc}; check the file is complete and a vector file") from exc
    if not first_line.strip() and not body.strip():
        raise VectorsError(f"{path} is empty; pass a GloVe or word2vec vector file")
    if not _HEADER.match(first_line):
        # old fastText .bin files have no magic number: binary bytes where a text line should be
        return "fasttext-bin" if ".bin" in path.suffixes and not _mostly_text(head) else "glove"
    count, dims = (int(field) for field in first_line.split())
    return "word2vec-binary" if _holds_binary_records(body, count, dims) else "word2vec"


def _holds_binary_records(body: bytes, count: int, dims: int) -> bool:
    """True when the bytes after a header are word2vec binary records, judged by structure, not encoding.

    A text line ends in `dims` numbers; binary records are `word<space>` and then
    exactly 4 x dims bytes of float32. Text is recognised first (word2vec.c cuts
    words mid-character, so text need not be valid UTF-8); otherwise the first
    records must each be a word, a space and `dims` float32s, as many as the
    header promises and the probe holds.
    """
    lines = body.split(b"\n")[:-1][:_PROBE_LINES]  # complete lines only
    if any(_ends_in_numbers(line, dims) for line in lines):
        return False
    position, records = 0, 0
    while records < count:
        space = body.find(b" ", position, position + _MAX_WORD_BYTES + 2)
        end = space + 1 + 4 * dims
        if space < 0 or end > len(body):
            break  # a record longer than the probe: judge by those read
        values = body[space + 1:end]
        if not body[position:space].lstrip(b"\n") or _mostly_text(values):
            return False  # no word, or text where the float32s should be
        position, records = end, records + 1
    return records > 0


def _mostly_text(data: bytes) -> bool:
    """Nine bytes in ten printable ASCII or white space: text. float32 bytes are about half that."""
    return len(data.translate(None, _TEXT_BYTES)) < len(data) / 10


def _ends_in_numbers(line: bytes, dims: int) -> bool:
    """A text record: a word and then exactly `dims` whitespace-separated numbers."""
    fields = line.rsplit(None, dims)
    if len(fields) != dims + 1:
        return False
    try:
        [float(field) for field in fields[1:]]
    except ValueError:
        return False
    return True


def read_fasttext_bin(path: Path, limit: int | None = None) -> Vectors:
    """A fastText .bin model through gensim: any word gets a vector from its character n-grams."""
    from gensim.models.fasttext import load_facebook_vectors  # deferred: importing gensim costs ~1 s

    try:
        with decompressed(path) as plain, warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # gensim's overflow warnings: the values are checked below
            keyed = load_facebook_vectors(str(plain))
    except NotImplementedError as exc:  # gensim reads unsupervised models only
        raise VectorsError(f"{path} is a supervised fastText model (a classifier), which gensim cannot read: "
                           "pass its .vec text file, or a skipgram/cbow model") from exc
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
        sweep_leftovers([(scratch_folder(), SCRATCH)])  # the copies of runs killed long ago
        # deleted when closed, whatever happens inside; named as leftovers.py finds it should the run be killed
        with tempfile.NamedTemporaryFile(prefix=f"attn-cli-{os.getpid()}-", suffix=".bin") as plain:
            shutil.copyfileobj(stream, plain, 1 << 20)
            plain.flush()
            yield Path(plain.name)


def read_gensim_pickle(path: Path, trusted: bool, limit: int | None = None) -> Vectors:
    """gensim's own KeyedVectors.save() file: a pickle, so loading it can run code. Opt-in only."""
    if not trusted:
        raise VectorsError(f"{path} is a gensim pickle (.kv/.model): loading it can run any code stored in it; "
                           "pass ", Option("trust_pickle", True), " if you trust its origin, or export it with "
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
                           "vectors (text files can leave such lines out with ", Option("skip_bad_lines", True), ")")
    return values
