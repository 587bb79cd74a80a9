"""A trained layer's weights file: `.npz` without pickle (W_Q, W_K, W_V, W_O float64, a JSON `metadata`), safe to
share: every member is checked against the metadata's shapes before it is decompressed."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import zipfile
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any

import numpy as np

from attn_cli.engine.attention import MAX_D_K, AttentionConfig, Projections, draw_projections
from attn_cli.errors import LONGEST_WORD, Option, SettingsError, WeightsError, path_argument, shorten
from attn_cli.files import quiet_npy_headers, write_file
from attn_cli.vectors.store import Vectors

FORMAT = "attn-cli-weights"
FORMAT_VERSION = 1
MATRICES = ("w_q", "w_k", "w_v", "w_o")
METADATA_FIELDS = {  # what the loader and the renderers read, with its kind (see _fits)
    "layer": "dict", "layer.heads": "count", "layer.d_k": "count", "layer.seed": "size", "layer.objective": "text",
    "vectors": "dict", "vectors.name": "text", "vectors.fingerprint": "text", "vectors.count": "count",
    "vectors.dims": "count", "corpus": "dict", "corpus.name": "text", "corpus.train_sentences": "size",
    "training": "dict", "training.epochs": "size", "training.held_out_loss": "number",
}
TRAINED_SETTINGS = {"scale": "sqrt", "similarity": "dot", "temperature": 1.0}  # what every trained layer has
TRAINED = {"masked-word": {**TRAINED_SETTINGS, "mask": "others"}, "next-word": {**TRAINED_SETTINGS, "mask": "causal"}}
LAYER_KEYS = ("objective", "heads", "d_k", "mask", "positions", "position_scale", "seed", "scale",
              "similarity", "temperature")
MAX_METADATA_BYTES = 1 << 20  # the metadata is a few KB; a larger member is not ours
MAX_METADATA_DEPTH = 16  # a layer's metadata nests 4 deep
MAX_MEMBERS = 16  # a layer's file holds 5 members (the metadata and four matrices)
MAX_DIRECTORY_BYTES = 1 << 16  # zipfile parses the whole member list first: a layer's takes a few hundred bytes
END_RECORD, ZIP64_LOCATOR = b"PK\x05\x06", b"PK\x06\x07"
END_SEARCH = 22 + 0xFFFF  # the end record and the longest comment it may carry
MAX_D_MODEL = 8_192  # wider than any word vectors: with MAX_D_K, a file decompresses to at most 1 GiB
ARRAY_HEADER_BYTES = 4096  # room for an .npy member's header beyond its float64 data
# Trained weights are a few units. Entries up to 1e6 on vectors up to float32's 3.4e38 keep every score, output and
# their squares far inside float64's range in the widest layer (d 8,192, d_k 4,096): no NaN or infinity can arise.
MAX_WEIGHT = 1e6
MAX_COUNT = 2**63 - 1  # the largest whole number the metadata may give (see _fits)


shown_set = partial(shorten, limit=LONGEST_WORD)  # a set's name, cut only when longer than a real path


@dataclass(frozen=True, eq=False)
class TrainedLayer:
    """A learned layer: `layer` its settings (LAYER_KEYS), `provenance` what made it, `source` the file read."""

    projections: Projections
    layer: dict[str, Any]
    provenance: dict[str, Any]
    source: str | None = None

    @property
    def d_model(self) -> int:
        return self.projections.w_q.shape[0]

    def __repr__(self) -> str:
        layer = self.layer
        return (f"<TrainedLayer {self.provenance.get('training', {}).get('epochs', '?')} epoch(s), "
                f"{layer.get('heads')} head(s), d_k {layer.get('d_k')}, {layer.get('objective')}, "
                f"{self.source or 'not saved'}>")

    @cached_property
    def digest(self) -> str:
        """Names these weights in documents and in the neighbour cache."""
        digest = hashlib.blake2b(digest_size=16)
        for name in MATRICES:
            digest.update(np.ascontiguousarray(getattr(self.projections, name), dtype="<f8").tobytes())
        return digest.hexdigest()

    def settings(self) -> dict[str, Any]:
        """The layer as `Settings` keywords: what `explain(..., weights=...)` adopts."""
        kept = ("scale", "temperature", "similarity", "heads", "d_k", "seed", "mask", "positions", "position_scale")
        return {"mode": "trained", "output_projection": True, **{name: self.layer[name] for name in kept}}

    def config(self) -> AttentionConfig:
        return AttentionConfig(**self.settings(), weights_digest=self.digest)

    def initial(self) -> Projections:
        """The seeded random weights training started from: what `--mode projected` shows for this layer."""
        start = AttentionConfig(mode="projected", heads=self.layer["heads"], d_k=self.layer["d_k"],
                                seed=self.layer["seed"], output_projection=True)
        return draw_projections(self.d_model, start)

    def check_vectors(self, vectors: Vectors) -> None:
        trained_on = self.provenance["vectors"]
        if vectors.fingerprint == trained_on["fingerprint"] and vectors.dims == trained_on["dims"]:
            return
        options = [] if trained_on.get("default") else [Option("vectors", shown_set(trained_on["name"]))]
        if _fits(trained_on, "limit", "count"):
            options.append(Option("limit", trained_on["limit"]))
        fix = ["pass ", *[part for option in options for part in (option, " ")], "(the set it was trained on), "] \
            if options else ["use the embedded set (leave out ", Option("vectors"), "), "]
        raise WeightsError(f"{self.name} was trained on the vector set {shown_set(trained_on['name'])!r} "
                           f"({trained_on['count']:,} words x {trained_on['dims']} dims), not on "
                           f"{shown_set(vectors.name)!r} ({vectors.count:,} x {vectors.dims}); ", *fix,
                           "or train a layer for these vectors")

    @property
    def name(self) -> str:
        return "the weights" if self.source is None else f"weights file {self.source}"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the layer atomically: what `--weights FILE` and load_layer read."""
        write_file(path, self.to_bytes())

    def to_bytes(self) -> bytes:
        metadata = {"format": FORMAT, "format_version": FORMAT_VERSION, "layer": self.layer, **self.provenance}
        arrays: dict[str, Any] = {name: np.asarray(getattr(self.projections, name), np.float64) for name in MATRICES}
        buffer = io.BytesIO()
        np.savez(buffer, **arrays, metadata=np.array(json.dumps(metadata, allow_nan=False)))
        return buffer.getvalue()

    def describe(self) -> dict[str, Any]:
        """The JSON block naming the weights, so any output can be traced to the file and its training."""
        return {"file": self.source, "digest": self.digest, "layer": dict(self.layer), **self.provenance}


def load_layer(path: str | os.PathLike[str]) -> TrainedLayer:
    """Read a weights file, checking it before trusting it; any problem is a WeightsError naming the fix."""
    source = path_argument("path", path)
    if not os.path.exists(source):
        raise WeightsError(f"weights file {source} does not exist; train one with attn-cli train CORPUS "
                           f"--out {source} (or attn-cli train --demo --out {source})")
    if not os.path.isfile(source):  # a device or FIFO could be read for ever
        raise WeightsError(f"weights file {source} is not a regular file; pass the .npz file attn-cli train wrote")
    try:
        _check_zip(source)
        with quiet_npy_headers(), zipfile.ZipFile(source) as archive:
            _check_count(source, len(archive.infolist()))
            sizes = {info.filename: info.file_size for info in archive.infolist()}
            metadata = _metadata(source, archive, sizes)
            projections = _projections(source, metadata, archive, sizes)
    except WeightsError:
        raise
    except (OSError, ValueError, KeyError, EOFError, RecursionError, zipfile.BadZipFile, zipfile.LargeZipFile,
            RuntimeError, NotImplementedError) as exc:  # the last two: an encrypted member, an unknown compression
        raise _not_ours(source, shorten(f"{type(exc).__name__}: {exc}", 200)) from None  # numpy quotes a header
    layer = TrainedLayer(projections=projections, layer=metadata["layer"],
                         provenance={key: value for key, value in metadata.items()
                                     if key not in ("format", "format_version", "layer")},
                         source=source)
    try:  # the engine checks every setting and the heads' split: a file must not name an option never given
        layer.config().check_width(layer.d_model)
    except SettingsError as exc:
        raise _not_ours(source, f"its layer settings are invalid: {shorten(exc.message, 200)}") from None
    return layer


def _depth(value: Any) -> int:
    # how deep lists and objects nest (a RecursionError, caught as damage, past Python's limit)
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    return 0 if children is None else 1 + max(map(_depth, children), default=0)


def _check_zip(source: str) -> None:
    """From the end record alone: a file numpy reads as one .npy, a member list too long for zipfile to read."""
    with open(source, "rb") as stream:
        start = stream.read(4)
        stream.seek(max(0, stream.seek(0, os.SEEK_END) - END_SEARCH))
        tail = stream.read()
    if start != b"PK\x03\x04":
        raise _not_ours(source, "it does not start as a zip archive")
    end = tail.rfind(END_RECORD)
    if end < 0 or len(tail) < end + 22:
        raise _not_ours(source, "it has no zip end record: it is cut short")
    _check_count(source, int.from_bytes(tail[end + 10:end + 12], "little"))
    if int.from_bytes(tail[end + 12:end + 16], "little") > MAX_DIRECTORY_BYTES \
            or tail[max(0, end - 20):end - 16] == ZIP64_LOCATOR:
        raise _not_ours(source, f"its member list is longer than a layer's file of at most {MAX_MEMBERS} members")


def _check_count(source: str, members: int) -> None:
    if members > MAX_MEMBERS:
        raise _not_ours(source, f"it holds {members:,} members, and a layer's file at most {MAX_MEMBERS}")


def _metadata(source: str, archive: zipfile.ZipFile, sizes: dict[str, int]) -> dict[str, Any]:
    if sizes.get("metadata.npy", MAX_METADATA_BYTES + 1) > MAX_METADATA_BYTES:
        raise _not_ours(source, "no metadata")
    metadata = json.loads(str(_member(source, archive, "metadata", None)), parse_constant=_refuse_constant)
    if _depth(metadata) > MAX_METADATA_DEPTH:  # Python 3.12 and later parse 5,000 levels; reading them later recurses
        raise _not_ours(source, f"its metadata nests deeper than {MAX_METADATA_DEPTH} levels")
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise _not_ours(source, "another format")
    if not _fits(metadata, "format_version", "count"):
        raise _not_ours(source, "no format version")
    if metadata["format_version"] > FORMAT_VERSION:
        raise WeightsError(f"weights file {source} was written by a newer attn-cli (format "
                           f"{metadata['format_version']}); upgrade attn-cli to read it")
    if not all(_fits(metadata, path, kind) for path, kind in METADATA_FIELDS.items()):
        raise _not_ours(source, "its metadata lacks the layer, the vector set, the corpus or the training")
    layer = metadata["layer"]
    if not (all(key in layer for key in LAYER_KEYS) and layer["d_k"] <= MAX_D_K
            and metadata["vectors"]["dims"] <= MAX_D_MODEL):
        raise _not_ours(source, "its layer settings are incomplete")
    expected = TRAINED.get(layer["objective"])
    if expected is None or any(layer[key] != value for key, value in expected.items()):
        raise _not_ours(source, "its layer settings are not what attn-cli train writes")
    return metadata


def _fits(metadata: dict[str, Any], path: str, kind: str) -> bool:
    """Whether metadata["a"]["b"] (path "a.b") is a dict, text, count >= 1, size >= 0 or finite number (at most
    int64: thousands of digits would lengthen every message naming it)."""
    value: Any = metadata
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    whole = isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_COUNT
    return {"dict": isinstance(value, dict), "text": isinstance(value, str), "count": whole and value >= 1,
            "size": whole and value >= 0, "number": whole or isinstance(value, float) and math.isfinite(value)}[kind]


def _projections(source: str, metadata: dict[str, Any], archive: zipfile.ZipFile,
                 sizes: dict[str, int]) -> Projections:
    """Each matrix, its member no larger than its declared shape needs (no file makes us decompress more), finite
    and within MAX_WEIGHT."""
    d_model, width = metadata["vectors"]["dims"], metadata["layer"]["d_k"]
    matrices = {}
    for name, (rows, columns) in {"w_q": (d_model, width), "w_k": (d_model, width), "w_v": (d_model, width),
                                  "w_o": (width, d_model)}.items():
        if sizes.get(f"{name}.npy", math.inf) > 8 * rows * columns + ARRAY_HEADER_BYTES:
            raise _not_ours(source, f"{name} is missing or larger than its {rows} x {columns} shape")
        matrix = matrices[name] = _member(source, archive, name, (rows, columns))
        if not np.isfinite(matrix).all():
            raise _not_ours(source, f"{name} is not a finite float64 {rows} x {columns} matrix")
        largest = float(matrix.flat[np.argmax(np.abs(matrix))])  # no matrix is empty: _fits counts its sides
        if abs(largest) > MAX_WEIGHT:
            raise _not_ours(source, f"{name} holds {largest:.3g}, beyond the ±{MAX_WEIGHT:.0e} a trained layer's "
                                    "weights may hold")
    return Projections(**matrices)


def _member(source: str, archive: zipfile.ZipFile, name: str, shape: tuple[int, int] | None) -> np.ndarray:
    """A text (shape None) or float64 matrix, by its header before numpy allocates what it asks (10^12 texts)."""
    with archive.open(f"{name}.npy") as member:
        version = np.lib.format.read_magic(member)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        found, _, dtype = read(member)
    if shape is None and not (dtype.kind == "U" and found == () and dtype.itemsize <= MAX_METADATA_BYTES):
        raise _not_ours(source, "the metadata is not text")
    if shape is not None and (found, dtype) != (shape, np.float64):
        raise _not_ours(source, f"{name} is not a float64 {shape[0]} x {shape[1]} matrix")
    with archive.open(f"{name}.npy") as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def _not_ours(source: str, problem: str) -> WeightsError:
    return WeightsError(f"weights file {source} is damaged or was not written by attn-cli train ({problem}); "
                        "train it again with attn-cli train CORPUS --out FILE")


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} in the metadata")
