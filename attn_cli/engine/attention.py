"""The attention engine: pure numpy, float64, no CLI concerns.

`multi_head_attention` returns one `AttentionResult` holding every intermediate, so renderers never recompute:
    scores  s_ij = q_i . k_j          (or cosine(q_i, k_j))
    logits  l_ij = s_ij * scale / temperature, -inf where masked
    weights w_ij = softmax_j(l_ij)
    output  y_i  = sum_j w_ij v_j     (per head; heads concatenated, then W_O)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from attn_cli.declared import CHOICE, NAMED_NUMBER, NUMBER, SWITCH, WHOLE, check_declared, setting
from attn_cli.errors import InputError, Option, SettingsError

MODES = ("raw", "projected")  # the modes a user picks; "trained" comes with a weights file instead
SIMILARITIES = ("dot", "cosine")
MASKS = ("none", "causal", "others")  # others: each query sees every key but its own (the masked-word view)
POSITIONS = ("none", "sinusoidal")
SCALE_NAMES = ("none", "sqrt")
MAX_D_K = 4096  # the widest projection: keeps W and the mapped neighbour vocabulary within a few GB
MAX_POSITION_SCALE = 1e6  # codes' entries stay within float32's range: no square or sum of them overflows
MAX_SCALE, MIN_TEMPERATURE = 1e6, 1e-6  # with scores below 3.3e100 (training/weights.py) every logit is finite


@dataclass(frozen=True)
class LayerSettings:
    """The knobs of one attention layer, each declared once (the API's keywords and the CLI's options derive
    from these declarations), validated on construction."""

    mode: str = setting("raw", "raw: Q = K = V = X. projected: seeded random W_Q, W_K, W_V. trained: a layer's "
                               "learned ones.", CHOICE, choices=MODES, also=("trained",))
    scale: str | float = setting("none", "Multiply scores by 1 (none), by 1/sqrt(d_head) (sqrt) or by X "
                                         f"(0 to {MAX_SCALE:,.0f}).", NAMED_NUMBER, choices=SCALE_NAMES,
                                 high=MAX_SCALE, metavar="none|sqrt|X")
    temperature: float = setting(1.0, f"Divide the scaled scores by T (at least {MIN_TEMPERATURE:g}).", NUMBER,
                                 low=MIN_TEMPERATURE, example="0.5 (sharper) or 10 (flatter)", metavar="T")
    similarity: str = setting("dot", "Score q.k (dot) or cos(q, k) (cosine).", CHOICE, choices=SIMILARITIES)
    heads: int = setting(1, "Number of heads; each gets width / H dimensions.", WHOLE, low=1, metavar="H")
    d_k: int | None = setting(None, "Projected mode: total width of Q, K, V (default: d).", WHOLE, low=1,
                              high=MAX_D_K, none="the vectors' dims", metavar="N",
                              says=f"from 1 to {MAX_D_K:,} (the widths of real layers; each vocabulary word searched "
                                   "for neighbours costs 4 bytes per dimension)")
    seed: int = setting(0, "Projected mode: seed of the random W_Q, W_K, W_V.", WHOLE, low=0, metavar="N")
    mask: str = setting("none", "causal: query i sees keys j <= i only; others: every key but its own.", CHOICE,
                        choices=MASKS)
    positions: str = setting("none", "Add sinusoidal position encodings to X.", CHOICE, choices=POSITIONS)
    position_scale: str | float = setting("auto", "With positions: codes as long as their words (auto), or times X "
                                                  f"(at most {MAX_POSITION_SCALE:,.0f}: larger codes only drown the "
                                                  "words, and from 1e154 their squares overflow).",
                                          NAMED_NUMBER, choices=("auto",), high=MAX_POSITION_SCALE, metavar="auto|X")
    output_projection: bool = setting(False, "Projected mode: map the heads back to d with W_O.", SWITCH)

    def __post_init__(self) -> None:
        check_declared(self)
        _require(self.position_scale == "auto" or self.positions != "none", "position_scale",
                 "applies only with position encodings", fix={"positions": "sinusoidal"})
        for name, value, unset in (("seed", self.seed, 0), ("d_k", self.d_k, None),
                                   ("output_projection", self.output_projection, False)):
            _require(value == unset or self.mode != "raw", name, "applies only to projected mode",
                     fix={"mode": "projected"})


@dataclass(frozen=True)
class AttentionConfig(LayerSettings):
    """The engine's configuration of one layer: its settings and, in trained mode, which learned weights."""

    weights_digest: str | None = None  # trained mode: names the learned weights passed with the inputs

    def __post_init__(self) -> None:
        super().__post_init__()
        _require(self.weights_digest is None or (self.mode == "trained" and isinstance(self.weights_digest, str)),
                 "weights_digest", "names learned weights, which only trained mode uses", fix={"mode": "trained"})

    def check_width(self, d_model: int) -> int:
        """The width of Q, K and V for inputs of `d_model` dims, which the heads must split evenly."""
        width = self.width(d_model)
        if width % self.heads:
            divisors = ", ".join(str(k) for k in range(1, min(width, 16) + 1) if width % k == 0)
            raise SettingsError("heads", f"{self.heads} does not divide the width {width}; choose a divisor of "
                                         f"{width} (e.g. {divisors})")
        return width

    def width(self, d_model: int) -> int:
        """Total width of Q, K and V over all heads: d_k, or d in raw mode."""
        return self.d_k if self.d_k is not None else d_model

    def output_width(self, d_model: int) -> int:
        return d_model if self.output_projection else self.width(d_model)

    def scale_factor(self, d_head: int) -> float:
        if self.scale == "none":
            return 1.0
        return 1.0 / math.sqrt(d_head) if self.scale == "sqrt" else float(self.scale)


def _require(condition: bool, setting: str, problem: str, fix: dict[str, object] | None = None) -> None:
    if not condition:
        raise SettingsError(setting, problem, fix)


@dataclass(frozen=True)
class Projections:
    """The weights of a projected layer: seeded random (the untrained starting point) or trained."""

    w_q: np.ndarray  # [d, d_k]
    w_k: np.ndarray  # [d, d_k]
    w_v: np.ndarray  # [d, d_k]
    w_o: np.ndarray | None  # [d_k, d] or None
    # a pretrained layer's biases (engine/bert.py), added after each product; this tool's own layers have none
    b_q: np.ndarray | None = None  # [d_k]
    b_k: np.ndarray | None = None  # [d_k]
    b_v: np.ndarray | None = None  # [d_k]
    b_o: np.ndarray | None = None  # [d]

    def output(self, concatenated: np.ndarray) -> np.ndarray:
        """The heads side by side [.., n, d_k] -> the layer's output, through W_O (+ b_O) when it has one."""
        return concatenated if self.w_o is None else affine(concatenated, self.w_o, self.b_o)


def affine(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """x W (+ b): [.., n, d_in] x [d_in, d_out] -> [.., n, d_out], in one precision: mixed ones skip BLAS."""
    x = np.asarray(x, dtype=np.result_type(x, w))
    return x @ w if b is None else x @ w + b


@dataclass(frozen=True)
class AttentionResult:
    """Every intermediate of one pass, so renderers never recompute; a stack of B sentences leads each with B."""

    config: AttentionConfig
    query_inputs: np.ndarray  # [n_q, d]  embeddings (+ positions) that make the queries
    context_inputs: np.ndarray  # [n_k, d]  embeddings (+ positions) that make keys and values
    queries: np.ndarray  # [H, n_q, d_head]
    keys: np.ndarray  # [H, n_k, d_head]
    values: np.ndarray  # [H, n_k, d_head]
    scores: np.ndarray  # [H, n_q, n_k]  similarity before scaling and masking
    logits: np.ndarray  # [H, n_q, n_k]  scaled scores, -inf where masked
    weights: np.ndarray  # [H, n_q, n_k]  softmax of the logits: rows sum to 1
    head_outputs: np.ndarray  # [H, n_q, d_head]
    outputs: np.ndarray  # [n_q, d_out]  heads concatenated (then W_O when enabled)
    scale_factor: float
    projections: Projections | None
    self_attention: bool  # keys are the queries' own tokens (no separate context was given)
    visible: np.ndarray  # [n_q, n_k] bool: the keys each query may see under the mask
    query_codes: np.ndarray | None = None  # [n_q, d] the position codes added to the queries' inputs (None: none)
    context_codes: np.ndarray | None = None  # [n_k, d] those added to the keys' and values' inputs

    @property
    def n_heads(self) -> int:
        return self.weights.shape[-3]

    @property
    def d_head(self) -> int:
        return self.queries.shape[-1]


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row softmax over the last axis; -inf (masked) entries get 0. Each row needs one finite entry."""
    weights = np.asarray(logits, dtype=np.float64) - np.max(logits, axis=-1, keepdims=True)  # [.., n], <= 0
    np.exp(weights, out=weights)  # in place: no second [n, n] temporary
    weights /= np.sum(weights, axis=-1, keepdims=True)
    return weights


def similarity_scores(q: np.ndarray, k: np.ndarray, similarity: str) -> np.ndarray:
    """Pairwise similarity of queries and keys: [.., n_q, d] x [.., n_k, d] -> [.., n_q, n_k]."""
    if similarity == "cosine":
        q, k = unit_rows(q), unit_rows(k)
    return q @ np.swapaxes(k, -1, -2)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero), each divided by its peak first: squares over/underflow."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype in (np.float32, np.float64) else np.float64
    peak = np.max(np.abs(x), axis=-1, keepdims=True, initial=0.0)  # [.., n, 1], 0 for a row of no dims
    scaled = np.divide(x, peak, out=np.zeros(x.shape, dtype=dtype), where=peak > 0)  # entries in [-1, 1]
    norms = np.linalg.norm(scaled, axis=-1, keepdims=True)
    return np.divide(scaled, norms, out=np.zeros(x.shape, dtype=dtype), where=norms > 0)


def row_norms(x: np.ndarray) -> np.ndarray:
    """|x_i| of each row [.., n, d] -> [.., n], divided by its peak first: a row of 1e-208 squares to 0."""
    peak = np.max(np.abs(x), axis=-1, initial=0.0)  # [.., n]
    scaled = np.divide(x, peak[..., None], out=np.zeros(x.shape), where=peak[..., None] > 0)
    return peak * np.linalg.norm(scaled, axis=-1)  # below float64's largest: loading refuses |x| > 3.4e38


def visible_matrix(mask: str, query_words: np.ndarray, key_words: np.ndarray) -> np.ndarray:
    """The keys each query may see, [.., n_q, n_k] bool, from word ids; "others" hides copies of the query's word."""
    n_q, n_k = query_words.shape[-1], key_words.shape[-1]
    if mask == "causal":
        return np.tril(np.ones((n_q, n_k), dtype=bool))
    if mask == "others":
        return query_words[..., :, None] != key_words[..., None, :]
    return np.ones((n_q, n_k), dtype=bool)


def position_codes(config: AttentionConfig, x: np.ndarray) -> np.ndarray | None:
    """The sinusoids added to x [.., n, d] times position_scale, or ("auto") each as long as its own word: order
    does not swamp the words, and no code looks at another word (a causal row still ignores the future)."""
    if config.positions != "sinusoidal":
        return None
    n, d = x.shape[-2:]
    rates = 1.0 / 10000.0 ** (np.arange(0, d, 2, dtype=np.float64) / d)  # [ceil(d/2)]
    angles = np.arange(n, dtype=np.float64)[:, None] * rates  # [n, ceil(d/2)]
    codes = np.zeros((n, d), dtype=np.float64)  # PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(...)
    codes[:, 0::2] = np.sin(angles)
    codes[:, 1::2] = np.cos(angles[:, : d // 2])
    if not isinstance(config.position_scale, str):
        return float(config.position_scale) * codes  # [n, d]: every sentence of a stack alike
    code_norms = row_norms(codes)  # [n]
    ratios = np.divide(row_norms(x), code_norms, out=np.zeros(x.shape[:-1]), where=code_norms > 0)  # [.., n]
    return codes * ratios[..., None]


def draw_projections(d_model: int, config: AttentionConfig) -> Projections:
    """W_Q, W_K, W_V (then W_O) from default_rng(seed), ~ N(0, 1/fan_in): outputs as long as the inputs."""
    width = config.width(d_model)
    rng = np.random.default_rng(config.seed)
    w_q, w_k, w_v = (rng.normal(0.0, 1.0 / math.sqrt(d_model), size=(d_model, width)) for _ in range(3))
    w_o = rng.normal(0.0, 1.0 / math.sqrt(width), size=(width, d_model)) if config.output_projection else None
    return Projections(w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o)


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """[.., n, H * d_head] -> [.., H, n, d_head]: head h takes columns h*d_head .. (h+1)*d_head - 1."""
    *lead, n, width = x.shape
    return np.swapaxes(x.reshape(*lead, n, heads, width // heads), -3, -2)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """[.., H, n, d_head] -> [.., n, H * d_head], the inverse of split_heads."""
    *lead, heads, n, d_head = x.shape
    return np.swapaxes(x, -3, -2).reshape(*lead, n, heads * d_head)


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, scale: float, temperature: float = 1.0,
           similarity: str = "dot", mask: np.ndarray | None = None):
    """q [.., n_q, d], k [.., n_k, d], v [.., n_k, d_v] -> (outputs, weights, logits, scores); mask True = visible."""
    scores = similarity_scores(q, k, similarity)  # [.., n_q, n_k]
    logits = scaled_logits(scores, scale / temperature, mask)  # [.., n_q, n_k]
    weights = softmax(logits)
    return weights @ v, weights, logits, scores  # [.., n_q, n_k] x [.., n_k, d_v] -> [.., n_q, d_v]


def scaled_logits(scores: np.ndarray, factor: float | np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """scores x factor (scale / temperature), -inf where the mask hides a key: [.., n_q, n_k]."""
    logits = scores * factor
    return logits if mask is None else np.where(mask, logits, -np.inf)


BLOCK_CELLS = 1 << 18  # cells of an [.., n_q, n_k] matrix worked on at a time: 2 MB of float64 per temporary


def row_blocks(rows: int, row_cells: int) -> list[slice]:
    """Consecutive row slices of about BLOCK_CELLS cells each (at least one row)."""
    step = max(1, BLOCK_CELLS // max(1, row_cells))
    return [slice(start, start + step) for start in range(0, rows, step)]


def multi_head_attention(query_embeddings: np.ndarray, context_embeddings: np.ndarray | None = None,
                         config: AttentionConfig = AttentionConfig(),
                         projections: Projections | None = None) -> AttentionResult:
    """Self-attention (context omitted) or cross-attention of queries [.., n_q, d] over a context [.., n_k, d]; a
    stack [B, n_q, d] gives one result led by B, the numbers of B calls."""
    x_q = np.asarray(query_embeddings, dtype=np.float64)  # [.., n_q, d]
    x_k = x_q if context_embeddings is None else np.asarray(context_embeddings, dtype=np.float64)  # [.., n_k, d]
    visible = visible_matrix(config.mask, *sentence_words(config.mask, x_q, None if context_embeddings is None
                                                          else x_k))  # [.., n_q, n_k], from the words themselves
    codes_q = position_codes(config, x_q)  # [.., n_q, d] or None
    codes_k = codes_q if context_embeddings is None else position_codes(config, x_k)  # [.., n_k, d] or None
    if codes_q is not None and codes_k is not None:
        x_q, x_k = x_q + codes_q, x_k + codes_k
    result = attend_inputs(x_q, x_k, config, layer_projections(x_q.shape[-1], config, projections), visible,
                           self_attention=context_embeddings is None)
    return replace(result, query_codes=codes_q, context_codes=codes_k)


def sentence_words(mask: str, x_q: np.ndarray, x_k: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """What `visible_matrix` compares: under "others" word ids (equal vectors, equal ids), else positions."""
    if mask != "others":
        return np.arange(x_q.shape[-2]), np.arange((x_q if x_k is None else x_k).shape[-2])
    rows = x_q if x_k is None else np.concatenate([x_q, x_k], axis=-2)  # [.., n_q (+ n_k), d]
    ids = np.unique(rows.reshape(-1, rows.shape[-1]), axis=0, return_inverse=True)[1].reshape(rows.shape[:-1])
    return ids[..., :x_q.shape[-2]], ids if x_k is None else ids[..., x_q.shape[-2]:]


def attention_stacks(embeddings: list[np.ndarray], config: AttentionConfig,
                     projections: Projections | None = None) -> list[tuple[list[int], AttentionResult]]:
    """Self-attention over each sentence [n_i, d], those of one length as one stack, with its sentences' indices."""
    return [(members, multi_head_attention(np.stack([embeddings[i] for i in members]), config=config,
                                           projections=projections))
            for members in same_length(embeddings, config.heads)]


STACK_CELLS = 1 << 20  # cells of a stack's [B, H, n, n] (plus [B, n, d]) arrays at most: 8 MB of float64 each


def same_length(embeddings: list[np.ndarray], heads: int = 1) -> list[list[int]]:
    """The sentences' indices grouped by length, each group cut to STACK_CELLS cells: long ones go alone."""
    groups: dict[int, list[int]] = {}
    for i, sentence in enumerate(embeddings):
        groups.setdefault(len(sentence), []).append(i)
    stacks = []
    for members in groups.values():
        size = max(1, STACK_CELLS // sentence_cells(embeddings[members[0]], heads))  # sentences per stack
        stacks += [members[start:start + size] for start in range(0, len(members), size)]
    return stacks


def sentence_cells(embeddings: np.ndarray, heads: int) -> int:
    """Cells of a sentence [n, d]: its [H, n, n] matrices and its [n, d] rows."""
    n, d = embeddings.shape
    return heads * n * n + n * d


STACKED = ("query_inputs", "context_inputs", "queries", "keys", "values", "scores", "logits", "weights",
           "head_outputs", "outputs")  # the arrays a stack leads with B (its mask and codes may be shared)


def as_stack(result: AttentionResult) -> AttentionResult:
    """One sentence's result as a stack of one (its mask and codes stay shared)."""
    return replace(result, **{name: getattr(result, name)[None] for name in STACKED})


def sentence_of(result: AttentionResult, i: int) -> AttentionResult:
    """Sentence i of a stacked result, its arrays views of the stack's (a shared mask or codes stay shared)."""
    def part(array: np.ndarray | None) -> np.ndarray | None:
        return array if array is None or array.ndim < 3 else array[i]  # shared (a mask of [n_q, n_k]) or own

    return replace(result, **{name: getattr(result, name)[i] for name in STACKED},
                   visible=part(result.visible), query_codes=part(result.query_codes),  # type: ignore[arg-type]
                   context_codes=part(result.context_codes))


def reattend(result: AttentionResult, projections: Projections) -> AttentionResult:
    """The same inputs (positions included) through other weights of the same shapes and settings."""
    d_model = result.query_inputs.shape[1]
    checked = layer_projections(d_model, replace(result.config, mode="trained"), projections)
    config = replace(result.config, weights_digest=None)  # not the weights the digest names
    return replace(attend_inputs(result.query_inputs, result.context_inputs, config, checked, result.visible,
                                 self_attention=result.self_attention),
                   query_codes=result.query_codes, context_codes=result.context_codes)


def attend_inputs(x_q: np.ndarray, x_k: np.ndarray, config: AttentionConfig, projections: Projections | None,
                  visible: np.ndarray, *, self_attention: bool) -> AttentionResult:
    """The layer over inputs that carry their positions, through `projections` (None: raw mode)."""
    width = config.check_width(x_q.shape[-1])
    if projections is None:
        q_all, k_all, v_all = x_q, x_k, x_k  # Q = K = V = X: the parameter-free form
    else:
        q_all = affine(x_q, projections.w_q, projections.b_q)  # [n, d] x [d, d_k] (+ [d_k]) -> [n, d_k]
        k_all, v_all = affine(x_k, projections.w_k, projections.b_k), affine(x_k, projections.w_v, projections.b_v)
    queries, keys, values = (split_heads(m, config.heads) for m in (q_all, k_all, v_all))  # [H, n, d_head]
    scale = config.scale_factor(width // config.heads)
    require_visible(visible, config)
    head_outputs, weights, logits, scores = attend(queries, keys, values, scale=scale, temperature=config.temperature,
                                                   similarity=config.similarity,
                                                   mask=visible[..., None, :, :])  # [.., 1, n_q, n_k]: heads alike
    outputs = merge_heads(head_outputs)  # [.., n_q, d_k]
    if projections is not None:
        outputs = projections.output(outputs)  # [n_q, d_k] x [d_k, d] -> [n_q, d] with W_O, else as it is
    return AttentionResult(config, x_q, x_k, queries, keys, values, scores, logits, weights, head_outputs, outputs,
                           scale, projections, self_attention, visible)


def require_visible(visible: np.ndarray, config: AttentionConfig) -> None:
    """An InputError unless each query sees a key: the "others" mask over a sentence of one word hides them all."""
    if not visible.any(axis=-1).all():
        fix = () if config.mode == "trained" else (" or pass ", Option("mask", "none"))  # a trained layer's is fixed
        raise InputError(f"the mask {config.mask!r} hides from each word its own copies, so a word with no other "
                         "word to see has nothing to attend to; give a sentence of at least two different words",
                         *fix)


def rerun(result: AttentionResult, query_embeddings: np.ndarray, context_embeddings: np.ndarray | None = None,
          **changes: object) -> AttentionResult:
    """The same layer over other inputs, its settings changed by `changes`: trained weights are kept, not redrawn."""
    config = replace(result.config, **changes)  # type: ignore[arg-type]
    return multi_head_attention(query_embeddings, context_embeddings, config,
                                result.projections if config.mode == "trained" else None)


def layer_projections(d_model: int, config: AttentionConfig, given: Projections | None) -> Projections | None:
    """The layer's weights: None in raw mode, drawn in projected mode, the given ones (checked) in trained mode."""
    if config.mode != "trained":
        _require(given is None, "projections", "apply only to trained mode", fix={"mode": "trained"})
        return draw_projections(d_model, config) if config.mode == "projected" else None
    _require(given is not None, "mode", "'trained' needs the trained weights: pass projections=")
    assert given is not None  # for mypy: _require raised otherwise
    width, has_w_o = config.width(d_model), given.w_o is not None
    _require(given.w_q.shape == given.w_k.shape == given.w_v.shape == (d_model, width), "d_k",
             f"must match the trained weights: W_Q is {given.w_q.shape[0]} x {given.w_q.shape[1]} for inputs of "
             f"{d_model} dims and a width of {width}")
    _require(config.output_projection == has_w_o, "output_projection",
             f"must be {has_w_o}, as the trained weights {'have' if has_w_o else 'lack'} W_O")
    _require(given.w_o is None or given.w_o.shape == (width, d_model), "projections",
             f"W_O must be {width} x {d_model}")
    return given


def static_outputs(result: AttentionResult) -> np.ndarray:
    """Each query token's output had it attended only to itself, [n, d_out]: the "before" of its shift."""
    return value_space(result.query_inputs, result)  # [n_q, d] -> [n_q, d_out]


def output_shares(result: AttentionResult) -> np.ndarray:
    """share[i, j] = term_ij . y_i / |y_i|^2 as sum_h w_ij (v_j . y_i W_O^T): O(H n^2) memory, not O(n^2 d)."""
    back = result.outputs
    if result.projections is not None and result.projections.w_o is not None:
        back = back @ result.projections.w_o.T  # [.., n_q, d] x [d, width] -> [.., n_q, width]
    dots = split_heads(back, result.n_heads) @ np.swapaxes(result.values, -1, -2)  # [.., H, n_q, n_k]: z_i . v_j
    along = np.sum(result.weights * dots, axis=-3)  # [.., n_q, n_k]
    squared = np.einsum("...id,...id->...i", result.outputs, result.outputs)[..., None]  # [.., n_q, 1]
    return np.divide(along, squared, out=np.zeros_like(along), where=squared > 0)


SHIFT_FLOOR = 1e-7  # a shift shorter than this part of the vectors that make it is rounding, not movement


def shift_shares(result: AttentionResult) -> np.ndarray:
    """share[i, j] = w_ij (v_j - s_i) . d_i / |d_i|^2, d_i = y_i - s_i, as sum_h w_ij (v_j - u_i) . z_i / |d_i|, a
    block of rows at a time: O(H n^2) memory; a row that did not move (`shift_basis`) has shares 0."""
    own = own_values(result)  # [.., n_q, width]
    z, length, moved = shift_basis(result.outputs, static_outputs(result), own, result.weights, result.context_inputs,
                                   result.projections)
    kept = None if result.self_attention else np.einsum("...hid,...hid->...hi", z, split_heads(own, result.n_heads))
    *lead, _, n_q, n_k = result.weights.shape
    shares = np.empty((*lead, n_q, n_k))
    keys_t = np.swapaxes(result.values, -1, -2)  # [.., H, d_head, n_k]
    for rows in row_blocks(n_q, result.weights[..., 0, :].size):
        dots = z[..., rows, :] @ keys_t  # [.., H, b, n_k]: z_i . v_j
        own_dots = (np.diagonal(dots, offset=rows.start, axis1=-2, axis2=-1).copy() if kept is None  # v_i = u_i:
                    else kept[..., rows])  # [.., H, b]: z_i . u_i, in self-attention the very numbers of v_i's column
        dots -= own_dots[..., None]
        dots *= result.weights[..., rows, :]
        part = np.sum(dots, axis=-3, out=shares[..., rows, :])  # [.., b, n_k], in place: no new n x n pages
        still = ~moved[..., rows, None]  # [.., b, 1]
        np.divide(part, length[..., rows, None], out=part, where=~still)  # a division: 1e-320 / 1e-320 is 1
        np.putmask(part, np.broadcast_to(still, part.shape), 0.0)
        part += 0.0  # never -0.0
    return shares


def shift_basis(outputs: np.ndarray, static: np.ndarray, own: np.ndarray, weights: np.ndarray, x_k: np.ndarray,
                projections: Projections | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """z_i [.., H, n_q, d_head], |d_i| [.., n_q] and whether row i moved: more than SHIFT_FLOOR of a bound on its
    rounding, |u_i| + sum_hj w_ij |v_j| (times |W_O|), taken from the inputs so one row needs no sentence's values."""
    shift = outputs - static
    direction = unit_rows(shift)  # d_i / |d_i|, 0 for no shift
    length = np.einsum("...d,...d->...", direction, shift)  # [.., n_q]: |d_i|, without squaring it
    heads = weights.shape[-3]
    w_o = None if projections is None else projections.w_o
    z = split_heads(direction if w_o is None else direction @ w_o.T, heads)  # [.., H, n_q, d_head]
    reached = weights @ value_bounds(x_k, projections, heads)[..., None]  # [.., H, n_q, 1]
    sizes = np.linalg.norm(own, axis=-1) + np.sum(reached, axis=(-3, -1))  # [.., n_q]
    return z, length, length > SHIFT_FLOOR * (sizes if w_o is None else sizes * np.linalg.norm(w_o))


def value_bounds(x_k: np.ndarray, projections: Projections | None, heads: int) -> np.ndarray:
    """[.., H, n_k]: each key's value length per head in raw mode, else its bound |x_j| |W_V^h| + |b_V^h|."""
    if projections is None:
        return np.linalg.norm(split_heads(x_k, heads), axis=-1)
    w_v = split_heads(projections.w_v, heads)  # [d, d_k] -> [H, d, d_head]
    bias = np.zeros(heads) if projections.b_v is None else np.linalg.norm(projections.b_v.reshape(heads, -1), axis=-1)
    return np.linalg.norm(x_k, axis=-1)[..., None, :] * np.linalg.norm(w_v, axis=(-2, -1))[:, None] + bias[:, None]


def own_values(result: AttentionResult, embeddings: np.ndarray | None = None) -> np.ndarray:
    """Embeddings [N, d] (default: the query inputs) through W_V, before W_O: [N, width]; unchanged in raw mode."""
    x, p = result.query_inputs if embeddings is None else embeddings, result.projections
    return x if p is None else affine(x, p.w_v, p.b_v)


def value_space(embeddings: np.ndarray, result: AttentionResult) -> np.ndarray:
    """Vocabulary embeddings [N, d] in the outputs' space [N, d_out]: through W_V (and W_O), unchanged in raw mode."""
    p = result.projections
    return embeddings if p is None else p.output(own_values(result, embeddings))
