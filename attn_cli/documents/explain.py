"""The one document every renderer draws from (the JSON contract): plain data, matrices kept as numpy arrays, so
the tables and the JSON cannot disagree."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Callable, Collection, cast

import numpy as np

from attn_cli.version import __version__
from attn_cli.engine.analysis import MAX_PULLS, MEASURES, PULL_SHARE, Contribution, StackDiagnosis, position_norms
from attn_cli.engine.attention import AttentionResult, as_stack, merge_heads, reattend
from attn_cli.engine.sentences import Row, Stack
from attn_cli.errors import InputError, Option
from attn_cli.engine.tokenize import TokenizedSentence
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:
    from attn_cli.models import PretrainedLayer
    from attn_cli.training.weights import TrainedLayer

SCHEMA_VERSION = 3  # 3: lean shifts, their shares as two n x n matrices (`shares`); 2: advice as settings
INCLUDABLE = ("embeddings", "qkv", "outputs", "projections", "inputs", "layer")
PROJECTION_INIT = "W_Q, W_K, W_V (then W_O) drawn in that order from numpy.random.default_rng(seed), N(0, 1/fan_in)"


@dataclass(frozen=True)
class ReportOptions:
    """What a document holds beyond the attention itself; neighbor_vocab None searches all words."""

    neighbors: int = 5
    neighbor_vocab: int | None = 50_000
    include: tuple[str, ...] = ()
    # trained mode: the layer, shown with the random weights it started from (a trained one) or with its model
    layer: TrainedLayer | PretrainedLayer | None = None


def explain_document(sentence: str, tokenized: TokenizedSentence, vectors: Vectors, row: Row,
                     options: ReportOptions, wanted: Collection[str] | None = None) -> dict:
    """`wanted` names the blocks to build (None: all)."""
    report = {
        **document_header("explain"),
        "sentence": sentence,
        **tokens_block(tokenized),
        **attention_blocks(row, vectors, options, wanted),
    }
    if options.include:
        report.update(included_matrices(row[0].sentence(row[1]), tokenized.embeddings, options.include,
                                        options.layer))
    return report


def trace_document(sentence: str, tokenized: TokenizedSentence, vectors: Vectors, row: Row,
                   options: ReportOptions, traces: dict[int, dict], *, dims: int) -> dict:
    """`traces`: engine.tracing's steps by token index."""
    from attn_cli.engine.tracing import vector_summary  # only trace pays for its import

    stack, b = row
    result = stack.sentence(b)
    positioned = result.config.positions != "none"
    shifts = stack.shifts.document(b)
    steps = layer_steps(result, options.layer)  # a pretrained layer's steps after attention, else None
    report = {
        **document_header("trace"),
        "sentence": sentence,
        **tokens_block(tokenized),
        **attention_blocks(row, vectors, options, ("vectors", "settings")),
        "dims_shown": dims,
        "static_vectors": [vector_summary(row, dims) for row in tokenized.embeddings],
        "inputs": [vector_summary(row, dims) for row in result.query_inputs] if positioned else None,
        "projections": projections_block(result, options.layer, dims),
        "after_attention": None if steps is None else {name: [vector_summary(row, dims) for row in steps[name]]
                                                        for name in ("residual", "normed", "feed_forward", "outputs")},
        **trained_blocks(row, options),
        "traces": [{**steps, "shift": shifts[i]} for i, steps in traces.items()],
    }
    report.update(included_matrices(result, tokenized.embeddings, options.include, options.layer))
    return report


def traced_indices(tokenized: TokenizedSentence, word: str | None) -> list[int]:
    """Every token, or each occurrence of `word` matched as typed or by vocabulary key."""
    if word is None:
        return list(range(len(tokenized.tokens)))
    wanted = word.strip().casefold()
    found = [i for i, token in enumerate(tokenized.tokens)
             if wanted in (token.text.casefold(), (token.key or "").casefold())]
    if not found:
        words = ", ".join(dict.fromkeys(token.text for token in tokenized.tokens))
        raise InputError(Option("word"), f" {word!r} is not among the sentence's words; choose one of: {words}")
    return found


def projections_block(result: AttentionResult, layer: TrainedLayer | PretrainedLayer | None, dims: int) -> dict | None:
    """The numbers the trace multiplies by (None: raw)."""
    from attn_cli.engine.tracing import vector_summary

    if result.projections is None:
        return None
    d_model, width = result.projections.w_q.shape
    w_o = result.projections.w_o
    return {
        "seed": result.config.seed,
        "init": PROJECTION_INIT,
        "trained": None if layer is None else layer.source or "in memory",
        "w_q": [d_model, width], "w_k": [d_model, width], "w_v": [d_model, width],
        "w_o": None if w_o is None else list(w_o.shape),
        "std": [1 / math.sqrt(d_model), None if w_o is None else 1 / math.sqrt(width)],
        "rows": {name: [vector_summary(row, dims) for row in matrix[:dims]]
                 for name, matrix in vars(result.projections).items() if matrix is not None and matrix.ndim == 2},
    }


def attention_blocks(row: Row, vectors: Vectors, options: ReportOptions, wanted: Collection[str] | None = None
                     ) -> dict:
    """Rows name query tokens, columns key tokens (another sentence's in cross-attention)."""
    stack, b = row
    texts, key_texts = stack.shifts.texts[b]
    blocks: dict[str, Callable[[], object]] = {
        "vectors": vectors.describe,
        "settings": lambda: settings_block(stack.attention, options, None if stack.attention.query_codes is None
                                           else position_norms(stack.sentence(b))),  # only positions pay for it
        "heads": lambda: heads_block(stack.attention, b),
        "shares": lambda: {"output": stack.shifts.output_shares[b], "shift": stack.shifts.shift_shares[b]},
        "shifts": lambda: shifts_block(stack, b, wanted),
        "diagnostics": lambda: diagnostics_block(stack.diagnosis(), b, texts, key_texts),
    }
    # the n x n work first (a trained layer's starting pass, the diagnosis): its temporaries come and go before any
    # other block is held
    trained = trained_blocks(row, options) if wanted is None or {"weights", "initial", "model"} & set(wanted) else {}
    built = {name: blocks[name]() for name in sorted(blocks, key=lambda name: name != "diagnostics")
             if wanted is None or name in wanted}
    return {**{name: built[name] for name in blocks if name in built}, **trained}  # the document's order


def trained_blocks(row: Row, options: ReportOptions) -> dict:
    """A trained layer's `weights` and the pass through the weights training started from (`initial`), or a
    pretrained `model`; nothing in the other modes."""
    if getattr(options.layer, "pretrained", False):  # no isinstance: explain's start-up never loads models/
        return {"model": options.layer.describe()}  # type: ignore[union-attr]
    layer = cast("TrainedLayer | None", options.layer)
    if layer is None:
        return {}
    stack, b = row
    initial = as_stack(reattend(stack.sentence(b), layer.initial()))
    return {"weights": layer.describe(),
            "initial": {"heads": heads_block(initial, 0),
                        "diagnostics": diagnostics_block(StackDiagnosis.of(initial), 0, *stack.shifts.texts[b])}}


def document_header(command: str) -> dict:
    """The keys every JSON document of attn-cli starts with, for records a program writes beside them."""
    return {"schema_version": SCHEMA_VERSION, "command": command, "attn_cli_version": __version__}


def tokens_block(tokenized: TokenizedSentence) -> dict:
    return {
        "tokens": [{"text": t.text, "key": t.key, "oov": t.oov, "position": t.position} for t in tokenized.tokens],
        "dropped_tokens": [{"text": d.text, "position": d.position, "reason": d.reason,
                            "suggestions": list(d.suggestions)} for d in tokenized.dropped],
    }


def settings_block(result: AttentionResult, options: ReportOptions, norms: tuple[float, float] | None) -> dict:
    """The settings as given and what they came to for these inputs; `norms`: (mean |word|, mean |code|)."""
    settings = dict(vars(result.config))  # its fields in order, without asdict's deep copy
    del settings["weights_digest"]  # a trained layer's digest is in the document's own `weights` block
    settings.update({
        "d_model": result.query_inputs.shape[-1],
        "d_head": result.d_head,
        "scale_factor": result.scale_factor,
        "neighbors": options.neighbors,
        "neighbor_vocab": options.neighbor_vocab,
        "projection_init": None if result.projections is None or getattr(options.layer, "pretrained", False)
        else PROJECTION_INIT,  # a pretrained layer's weights were learnt from no draw this tool knows
        "position_norms": None if norms is None else {"words": norms[0], "codes": norms[1]},
        "pull_share": PULL_SHARE,
        "max_pulls": MAX_PULLS,
    })
    return settings


def shifts_block(stack: Stack, b: int, wanted: Collection[str] | None) -> list[dict]:
    """Only the measures `wanted` names (`shifts.cosine`) when it names nothing else."""
    parts = {name.removeprefix("shifts.") for name in wanted or () if name.startswith("shifts.")}
    return stack.shifts.document(b, parts if parts and parts <= set(MEASURES) else None)


def heads_block(result: AttentionResult, b: int) -> list[dict]:
    """Per head: scores, logits (-inf where masked) and weights, [n_q, n_k] arrays each."""
    return [{"index": head, "scores": result.scores[b, head], "logits": result.logits[b, head],
             "weights": result.weights[b, head]} for head in range(result.n_heads)]


def contribution_blocks(contributions: list[Contribution], key_texts: list[str]) -> list[dict]:
    return [{"token": key_texts[c.index], "index": c.index, "weight": c.weight, "shift_share": c.shift_share}
            for c in contributions]


def diagnostics_block(diagnosis: StackDiagnosis, b: int, texts: list[str], key_texts: list[str]) -> dict:
    seen = diagnosis.visible_keys[b].tolist()
    heads = [{"index": head, "rows": [
        {"token": token, "entropy_bits": entropy, "max_weight": largest, "argmax": argmax,
         "argmax_token": key_texts[argmax], "visible_keys": keys}
        for token, entropy, largest, argmax, keys in zip(texts, entropies, maxima, argmaxes, seen)
    ]} for head, (entropies, maxima, argmaxes) in enumerate(zip(diagnosis.entropy_bits[b].tolist(),
                                                                 diagnosis.max_weight[b].tolist(),
                                                                 diagnosis.argmax[b].tolist()))]
    return {"heads": heads, "warnings": list(map(asdict, diagnosis.advice[b]))}


def included_matrices(result: AttentionResult, embeddings: np.ndarray, include: tuple[str, ...],
                      layer: TrainedLayer | PretrainedLayer | None = None) -> dict:
    """The opt-in matrices that let anyone recompute every number elsewhere."""
    extra: dict[str, object] = {}
    if "embeddings" in include:
        extra["embeddings"] = embeddings
    if "qkv" in include:
        extra.update(queries=result.queries, keys=result.keys, values=result.values)
    if "outputs" in include:
        extra.update(outputs=result.outputs, head_outputs=merge_heads(result.head_outputs))
    if "projections" in include:
        p = result.projections
        extra["projection_weights"] = None if p is None else {  # W_O null without it; a bias only where there is one
            name: matrix for name, matrix in vars(p).items() if name.startswith("w_") or matrix is not None}
    if "inputs" in include:
        extra["input_vectors"] = result.query_inputs
    if "layer" in include:
        extra["layer_steps"] = layer_steps(result, layer)
    return extra


def layer_steps(result: AttentionResult, layer: TrainedLayer | PretrainedLayer | None) -> dict | None:
    """Each [n, d] (hidden [n, d_ff]); None for layers that are not pretrained."""
    if not getattr(layer, "pretrained", False):
        return None
    steps = layer.finish(result)  # type: ignore[union-attr]
    return {"residual": steps.residual, "normed": steps.normed, "hidden": steps.hidden,
            "feed_forward": steps.feed_forward, "outputs": steps.outputs}
