"""The embedded default vector set (`default.npy`, `default.vocab.txt`, `default.json`, built by
`scripts/build_default_vectors.py`), in `attn_cli/data/` (a wheel) or `data/` (a checkout)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from attn_cli.errors import Option, VectorsError
from attn_cli.vectors.store import Vectors, row_norms

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
