"""Recognise a vector file's format from its first bytes, and read the formats only gensim reads."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from attn_cli.errors import Option, VectorsError
from attn_cli.vectors.store import MAX_WORD_BYTES, Vectors

VECTOR_FORMATS = ("glove", "word2vec", "word2vec-binary", "fasttext-bin", "gensim-pickle")
_PROBE_BYTES = 4096
_BODY_PROBE_BYTES = 1 << 16  # room for a few records of 4,096 dims
_PROBE_LINES = 20
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
    """One of VECTOR_FORMATS, from the magic numbers, the header line and the structure of the records after it."""
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
    header = header_of(first_line)
    if header is None:
        # old fastText .bin files have no magic number: binary bytes where a text line should be
        return "fasttext-bin" if ".bin" in path.suffixes and not _mostly_text(head) else "glove"
    count, dims = header
    return "word2vec-binary" if _holds_binary_records(body, count, dims) else "word2vec"


def header_of(line: bytes) -> tuple[int, int] | None:
    """'COUNT DIMS' of a word2vec header line, or None."""
    fields = line.split()
    return (int(fields[0]), int(fields[1])) if len(fields) == 2 and all(f.isdigit() for f in fields) else None


def _holds_binary_records(body: bytes, count: int, dims: int) -> bool:
    """True when the bytes after a header are word2vec binary records, judged by structure (word2vec.c cuts words
    mid-character): no line ends in `dims` numbers, and each record the probe holds is a word, a space and
    4 x dims bytes that are not text."""
    if not 1 <= dims <= len(body):  # judged as text: the importer names a header that cannot be right
        return False
    lines = body.split(b"\n")[:-1][:_PROBE_LINES]  # complete lines only
    if any(_ends_in_numbers(line, dims) for line in lines):
        return False
    words, rows, _ = split_records(body, dims)  # a record longer than the probe: judged by those before it
    probe = words[:count]
    return bool(probe) and all(word and not _mostly_text(row.tobytes()) for word, row in zip(probe, rows))


def split_records(buffer: bytes, dims: int) -> tuple[list[bytes], np.ndarray, int]:
    """The complete word2vec binary records at the start of `buffer`: their words, rows [n, dims] float32, and
    bytes used."""
    record = dims * 4
    words, rows, position = [], [], 0
    while True:
        space = buffer.find(b" ", position, position + MAX_WORD_BYTES + 2)  # after a newline and the word
        if space < 0 or space + 1 + record > len(buffer):
            break
        words.append(buffer[position:space].lstrip(b"\n"))
        rows.append(buffer[space + 1:space + 1 + record])
        position = space + 1 + record
    return words, np.frombuffer(b"".join(rows), dtype="<f4").reshape(-1, dims), position


def _mostly_text(data: bytes) -> bool:
    """Nine bytes in ten printable ASCII or white space: text. float32 bytes are about half that."""
    return len(data.translate(None, _TEXT_BYTES)) < len(data) / 10


def _ends_in_numbers(line: bytes, dims: int) -> bool:
    """A text record: a word and then exactly `dims` whitespace-separated numbers."""
    fields = line.rsplit(None, dims)
    return len(fields) == dims + 1 and all(is_number(field) for field in fields[1:])


def is_number(field: bytes) -> bool:
    """Whether float() reads the field (nan and inf too)."""
    try:
        float(field)
    except ValueError:
        return False
    return True


def read_gensim_pickle(path: Path, trusted: bool, limit: int | None = None) -> Vectors:
    """gensim's own KeyedVectors.save() file: a pickle, so loading it can run code. Opt-in only."""
    if not trusted:
        raise VectorsError(f"{path} is a gensim pickle (.kv/.model): loading it can run any code stored in it; "
                           "pass ", Option("trust_pickle", True), " if you trust its origin, or export it with "
                           "save_word2vec_format and use that file")
    from gensim.models import KeyedVectors

    try:
        loaded = KeyedVectors.load(str(path), mmap="r")
    except Exception as exc:  # an arbitrary pickle can fail in arbitrary ways
        raise VectorsError(f"cannot load {path} as gensim KeyedVectors: {exc}") from exc
    keyed = getattr(loaded, "wv", loaded)  # a full .model carries its vectors in .wv
    if not hasattr(keyed, "index_to_key"):
        raise VectorsError(f"{path} holds a {type(loaded).__name__}, not word vectors; pass a KeyedVectors file")
    return Vectors.of_keyed(keyed, str(path), "gensim-pickle", limit)

