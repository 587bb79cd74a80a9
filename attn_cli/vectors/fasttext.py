"""fastText .bin models: their layout walked with bounded reads, then handed to gensim.

gensim trusts every count in the file (a vocabulary cut short makes it read(1) at the end for ever; a header
announcing 10^12 vectors makes it allocate them), so only a file whose every byte is where its header says reaches
it. A compressed model is inflated to a plain temporary file only once its walk has found it ends where it should.
"""

from __future__ import annotations

import io
import os
import struct
import tempfile
import warnings
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator

import numpy as np

from attn_cli.errors import VectorsError
from attn_cli.files import write_all
from attn_cli.vectors.formats import open_maybe_compressed
from attn_cli.vectors.store import MAX_WORD_BYTES, Vectors

MAGIC = 793712314  # fastText's file format signature (an int32); older files start with their dims instead
_NEW_ARGS = "<12id"  # dim ws epoch min_count neg word_ngrams loss model bucket minn maxn lr_update_rate t
_OLD_ARGS = "<10id"  # the same without dim and ws, which stand where the signature and version are


class _Walk:
    """Exact reads from the start of a model's stream, each byte written to `copy` (if any): a read past its end
    names the part of the layout it was in."""

    def __init__(self, path: Path, stream, copy: IO[bytes] | None = None) -> None:
        self.path, self.stream, self.copy, self.part = path, stream, copy, "header"

    def truncated(self) -> VectorsError:
        return VectorsError(f"{self.path} ends inside its {self.part}: it is truncated (an interrupted download?), "
                            "or not a fastText .bin model; download or copy it again")

    def take(self, size: int) -> bytes:
        if len(data := self.stream.read(size)) < size:
            raise self.truncated()
        if self.copy is not None:
            write_all(self.copy, data)
        return data

    def unpack(self, layout: str) -> tuple:
        return struct.unpack(layout, self.take(struct.calcsize(layout)))

    def word(self) -> bytes | None:
        """The next NUL-terminated word, or None when it is longer than MAX_WORD_BYTES."""
        word = b""
        while len(word) <= MAX_WORD_BYTES:
            if not (piece := self.stream.peek(1)[:MAX_WORD_BYTES + 1 - len(word)]):
                raise self.truncated()
            if (end := piece.find(b"\0")) >= 0:
                return word + self.take(end + 1)[:-1]
            word += self.take(len(piece))
        return None

    def skip(self, size: int) -> None:
        """Go past `size` bytes: sought on a plain file, read into the copy from a compressed one."""
        while self.copy is not None and size:
            size -= len(self.take(min(size, 1 << 20)))
        if size:
            try:
                self.stream.seek(size - 1, os.SEEK_CUR)
            except (ValueError, OSError):  # an offset beyond any file (or beyond what lseek takes)
                raise self.truncated() from None
            self.take(1)

    def at_end(self) -> bool:
        return not self.stream.read(1)


def walk(walker: _Walk) -> None:
    """Read the whole layout; a VectorsError when a count is impossible or the file has more or fewer bytes."""
    magic, _version = walker.unpack("<2i")
    new = magic == MAGIC
    args = walker.unpack(_NEW_ARGS if new else _OLD_ARGS)
    dims = args[0] if new else magic
    bucket, minn, maxn = args[-5:-2]
    if dims < 1 or bucket < 0 or minn < 0 or maxn < 0:
        raise damaged(walker.path, f"its header says {dims} dimensions, {bucket} buckets, n-grams of {minn} to "
                                   f"{maxn} characters")
    walker.part = "vocabulary"
    words = vocabulary(walker, new)
    for matrix, rows_expected in (("input", words + bucket), ("output", None)):
        walker.part = f"{matrix} matrix"
        if new and walker.take(1) != b"\0":
            raise damaged(walker.path, f"its {matrix} matrix is quantized (a .ftz model), which gensim cannot "
                                       "read; pass the unquantized .bin or its .vec text file")
        rows, columns = walker.unpack("<2q")
        if columns != dims or rows < 0 or rows_expected not in (None, rows):
            raise damaged(walker.path, f"its {matrix} matrix is {rows:,} x {columns:,} for {words:,} words, "
                                       f"{bucket:,} buckets and {dims:,} dimensions")
        walker.skip(rows * columns * 4)  # float32
    if not walker.at_end():
        raise damaged(walker.path, f"it goes on after the {walker.stream.tell() - 1:,} bytes its header accounts for")


def vocabulary(walker: _Walk, new: bool) -> int:
    """Go past the vocabulary (and the pruned-index table of newer files); returns its number of words."""
    size, words, labels = walker.unpack("<3i")
    counts = walker.unpack("<qq" if new else "<q")  # tokens seen in training (and the size of the pruned index)
    if not (words > 0 and labels >= 0 and words + labels == size):
        raise damaged(walker.path, f"its vocabulary of {size:,} entries holds {words:,} words and {labels:,} labels")
    if labels:
        raise VectorsError(f"{walker.path} is a supervised fastText model (a classifier), which gensim cannot read: "
                           "pass its .vec text file, or a skipgram/cbow model")
    for number in range(1, size + 1):
        if walker.word() is None:
            raise damaged(walker.path, f"word {number:,} is longer than {MAX_WORD_BYTES:,} bytes")
        if walker.take(9)[8] != 0:  # an int64 count, then the entry type: 0 for a word
            raise damaged(walker.path, f"entry {number:,} of the vocabulary is not a word")
    walker.skip(8 * max(counts[-1] if new else 0, 0))
    return words


def damaged(path: Path, problem: str) -> VectorsError:
    return VectorsError(f"{path} is not a fastText .bin model, or it is damaged: {problem}; check the file, or "
                        "pass its .vec text file instead")


def read_fasttext_bin(path: Path, limit: int | None = None) -> Vectors:
    """A fastText .bin model through gensim: any word gets a vector from its character n-grams."""
    try:
        with checked_model(path) as plain, warnings.catch_warnings(), np.errstate(all="ignore"):
            from gensim.models.fasttext import load_facebook_vectors

            warnings.simplefilter("ignore")  # gensim's overflow warnings: the values are checked below
            keyed = load_facebook_vectors(str(plain))
    except (ValueError, EOFError, OSError, AssertionError, zlib.error, struct.error) as exc:
        raise VectorsError(f"cannot read {path} as a fastText .bin model: {exc}; "
                           "check the file is complete, or pass its .vec text file instead") from exc
    return Vectors.of_keyed(keyed, str(path), "fasttext-bin", limit, subwords=True)


@contextmanager
def checked_model(path: Path) -> Iterator[Path]:
    """The model as a plain file whose layout holds: the file itself, or a temporary copy of a .gz/.bz2 one
    (gensim reads a compressed model as garbage), inflated once, by the walk, never past what its header claims."""
    with open_maybe_compressed(path) as stream:
        if isinstance(stream, io.BufferedReader):  # a plain file
            walk(_Walk(path, stream))
            yield path
            return
        from attn_cli.vectors.importer import SCRATCH_PREFIX, scratch_place, sweep

        sweep([scratch_place()])
        with tempfile.NamedTemporaryFile(prefix=SCRATCH_PREFIX, suffix=".bin") as copy:
            walk(_Walk(path, stream, copy))
            copy.flush()
            yield Path(copy.name)
