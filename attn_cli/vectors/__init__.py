"""Vector sources: turn what the user names (nothing, or a path) into `Vectors`."""

from __future__ import annotations

from pathlib import Path

from attn_cli.errors import VectorsError
from attn_cli.vectors.default import DEFAULT_NAME, load_default_vectors
from attn_cli.vectors.formats import detect_format, read_with_gensim
from attn_cli.vectors.store import Vectors

__all__ = ["Vectors", "load_vectors"]


def load_vectors(source: str | None) -> Vectors:
    """The embedded default for None or 'default', otherwise the file at `source`."""
    if source in (None, "", DEFAULT_NAME):
        return load_default_vectors()
    path = Path(source).expanduser()
    if not path.exists():
        raise VectorsError(f"no such vector file: {source}; pass an existing GloVe or word2vec file, "
                           "or leave out --vectors for the embedded default")
    if path.is_dir():
        raise VectorsError(f"{source} is a directory; pass the vector file inside it")
    return read_with_gensim(path, detect_format(path))
