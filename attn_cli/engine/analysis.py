"""What attention did to each word: shifts, contributions, neighbours, diagnostics; pure numpy, no CLI."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

try:  # CPython's own blake2b, which hashlib wraps: this module alone does not load OpenSSL
    from _blake2 import blake2b
except ImportError:  # another Python
    from hashlib import blake2b

from attn_cli.engine.attention import (AttentionConfig, AttentionResult, as_stack, output_shares, row_blocks, row_norms,
                                       scaled_logits, shift_shares, similarity_scores, softmax, static_outputs,
                                       unit_rows, value_space)
from attn_cli.engine.attention import rerun as attention_rerun
from attn_cli.vectors.store import Vectors

MAX_ANSWERS = 100_000  # neighbour answers remembered per search (~50 MB at most with 5 neighbours each)
QUERY_BLOCK = 256  # neighbour queries per matrix product: bounds the [N, block] cosines (22 MB at N = 21,745)
GROUP_COLUMNS = 64  # the neighbour search's first bound partitions the maxima of groups of about this many words
MAX_CONTRIBUTIONS = 10  # context words listed per token (the full weights are in the matrices)
SATURATION_LEVEL = 0.95  # a row "saturates" when one key takes at least this much weight
FLATNESS_LEVEL = 0.98  # a row is "flat" when its entropy is at least this share of the maximum
POSITION_DOMINANCE = 2.0  # warn when the position codes are this many times as long as the words (mean norms)
UNTRAINED_NOTE = ("; the projections are random and untrained: random W_Q and W_K give scores close together "
                  "(nearly uniform weights), and training, not a setting, is what sharpens them")
PULL_SHARE = 0.05  # a context word "pulls" when its term supplies at least this share of the shift
MAX_PULLS = 3  # at most this many pulling words per token


@dataclass(frozen=True)
class Contribution:
    index: int  # key position among the tokens
    weight: float  # w_ij, averaged over heads
    share: float  # (w_ij v_j) . y_i / |y_i|^2: the part of y_i this term supplies (shares sum to 1)
    shift_share: float  # w_ij (v_j - s_i) . d_i / |d_i|^2, d_i = y_i - s_i: the part of the shift (a row's sum to 1)
    token: str = ""  # the key token as typed (when the shifts were computed with the sentence's texts)


@dataclass(frozen=True)
class Neighbor:
    word: str
    cosine: float


@dataclass(frozen=True)
class Shift:
    """How token i moved: static s_i (own value) versus contextual y_i."""

    index: int
    self_weight: float | None  # w_ii averaged over heads: what the token kept of itself (None in cross-attention)
    cosine: float  # cosine(s_i, y_i)
    delta_norm: float  # |y_i - s_i|
    static_norm: float
    contextual_norm: float
    contributions: list[Contribution]  # the MAX_CONTRIBUTIONS heaviest keys, largest weight first
    pulled_by: list[Contribution]  # the keys that moved it most: shift_share >= PULL_SHARE, MAX_PULLS at most
    neighbors_before: list[Neighbor]
    neighbors_after: list[Neighbor]
    token: str = ""  # the token as typed (when the shifts were computed with the sentence's texts)


@dataclass(frozen=True)
class RowDiagnostic:
    entropy_bits: float
    max_weight: float
    argmax: int
    visible_keys: int  # the keys the row may see under the mask: its entropy is at most log2 of this
    token: str = ""  # the query token and the key it puts most weight on, as typed (a result's records name them)
    argmax_token: str = ""


@dataclass(frozen=True)
class Remedy:
    """A setting to try, as AttentionConfig keywords (not flags: each front end spells them its own way)."""

    settings: dict[str, Any]  # e.g. {"scale": "sqrt"}, {"similarity": "cosine"}, {"temperature": 0.25}
    largest_weights: tuple[float, float]  # the smallest and largest row maximum under these settings, over the rows
    # with a choice (two or more visible keys) of the heads the advice names


@dataclass(frozen=True)
class Advice:
    """A computed warning: what happened, and what concrete settings would change."""

    code: str  # "saturated", "flat" or "positions"
    head: int | None  # the first of `heads`; None: the whole layer (positions)
    message: str
    remedies: list[Remedy]
    larger_scale: bool  # flat at a scale factor >= 1: a larger scale multiplier (no value computed) would sharpen too
    rows: list[int] = field(default_factory=list)  # the query rows it concerns (every row with a choice when flat)
    eligible_rows: int = 0  # the rows that could spread their weight at all (at least two visible keys)
    heads: list[int] = field(default_factory=list)  # every head it names: the flat heads are named in one warning


@dataclass(frozen=True)
class Diagnosis:
    """One sentence's softmax at a glance: each head's query rows, and the warnings they call for."""

    rows: list[list[RowDiagnostic]]  # [head][query row]
    advice: list[Advice]


class NeighborSearch:
    """Cosine nearest neighbours among the most frequent words, in the outputs' space, as float32 rows [N, d_out]."""

    def __init__(self, vectors: Vectors, result: AttentionResult, vocabulary_size: int | None) -> None:
        size = vectors.count if vocabulary_size is None else min(vocabulary_size, vectors.count)
        self.vectors, self.words = vectors, vectors.words[:size]
        embeddings = np.asarray(vectors.matrix[:size], dtype=np.float32)  # [N, d]
        self.inverse_norms: np.ndarray | None  # None when the rows are already unit length
        self.unusable = np.zeros(0, dtype=np.int64)  # columns that are never neighbours
        if result.projections is None and vectors.norms is not None:  # raw mode on a cached set: reuse its norms
            norms = np.asarray(vectors.norms[:size], dtype=np.float32)
            # rows longer than float32 holds would overflow their products, rows shorter than its smallest normal
            # number (1e-45, say) their 1 / norm: neither is ever a neighbour
            usable = np.isfinite(norms) & (norms >= np.finfo(np.float32).tiny)  # [N]
            if not usable.all():
                embeddings = np.where(usable[:, None], embeddings, np.float32(0))
                self.unusable = np.flatnonzero(~usable)
            self.rows, self.inverse_norms = embeddings, np.divide(1.0, norms, out=np.zeros_like(norms),
                                                                  where=usable)  # [N]
        else:  # kept between runs where the vectors keep rows and a digest names the weights
            digest, build = result.config.weights_digest, lambda: mapped_unit_rows(embeddings, result)
            self.rows, self.inverse_norms = build() if vectors.keep_rows is None or digest is None else (
                vectors.keep_rows(f"mapped-{digest}-{size}", (size, result.outputs.shape[-1]), build)), None
        self.letters = letter_columns(self.words)  # columns of one-letter words
        self.answers: dict[tuple[bytes, str | None, int], list[Neighbor]] = {}  # see nearest()
        # |float32 cosine - float64 cosine| <= (d + 3) unit roundoffs for a unit query and a row as long as its norm
        # says (each term's rounding, the query's, the product's); 4 x that for norms stored a little short
        self.rounding = 4 * (self.rows.shape[1] + 3) * float(np.finfo(np.float32).eps) / 2

    @classmethod
    def shared(cls, vectors: Vectors, result: AttentionResult, vocabulary_size: int | None) -> "NeighborSearch":
        """The search for this vector set, vocabulary size and configuration, built once per run."""
        key = (id(vectors), vocabulary_size, result.config)
        found = _SEARCHES.get(key)
        if found is None or found[0] is not vectors:
            _SEARCHES.clear()  # one vocabulary's rows in memory at a time
            found = _SEARCHES[key] = (vectors, cls(vectors, result, vocabulary_size))
        return found[1]

    def nearest(self, queries: np.ndarray, k: int, exclude: list[str | None]) -> list[list[Neighbor]]:
        """For each query row [m, d_out], the k closest words but exclude[row], remembered: a batch repeats them."""
        unit_queries = unit_rows(np.asarray(queries, dtype=np.float64))  # [m, d_out]
        keys = [(blake2b(row.tobytes(), digest_size=16).digest(), word, k)
                for row, word in zip(unit_queries, exclude)]  # 16 bytes stand for the vector, not 8 x d_out
        if len(self.answers) + len(keys) > MAX_ANSWERS:
            self.answers.clear()  # bounded memory over an endless batch (before this call counts on any answer)
        new = {key: row for row, key in enumerate(keys) if key not in self.answers}  # [u]: a query of each new key
        missing, rows = list(new), list(new.values())
        for start in range(0, len(rows), QUERY_BLOCK):
            block = rows[start:start + QUERY_BLOCK]
            self.answers.update(zip(missing[start:start + QUERY_BLOCK],
                                    self._nearest_block(unit_queries[block], k, [exclude[row] for row in block])))
        return [self.answers[key] for key in keys]

    def _nearest_block(self, unit_queries: np.ndarray, k: int, exclude: list[str | None]) -> list[list[Neighbor]]:
        """A float32 product ranks every word, those within its rounding of the best are scored again in float64:
        a full float64 sort's answer, ties by column."""
        cosines = unit_queries.astype(np.float32) @ self.rows.T  # [b, d_out] x [d_out, N] -> [b, N]
        if self.inverse_norms is not None:
            cosines *= self.inverse_norms[None, :]
        # a row holding NaN or infinity (a cache damaged since its import) is never a neighbour: a sum per query
        # finds any such cosine, and only those queries are rewritten
        broken = ~np.isfinite(cosines.sum(axis=1))  # [b]
        cosines[broken] = np.nan_to_num(cosines[broken], nan=-np.inf, posinf=-np.inf)
        asked = np.array([is_letter(word) for word in exclude], dtype=bool)  # [b] the token is a letter itself
        cosines[np.ix_(~asked, self.letters)] = -np.inf  # single letters (s, d, t: fragments) are no neighbours
        cosines[:, self.unusable] = -np.inf
        cosines[~unit_queries.any(axis=1)] = -np.inf  # a zero vector (an OOV word as zeros) has no direction
        wanted = min(k + 1, len(self.words))
        floor = np.maximum(at_most_kth(cosines, wanted) - 2 * self.rounding, -2.0)  # [b, 1]; cosines lie in [-1, 1]
        queries, columns = np.divmod(np.flatnonzero(cosines >= floor), cosines.shape[1])  # [c] each, row by row
        exact = self._cosines(unit_queries, queries, columns)  # [c]
        order = np.lexsort((columns, -exact, queries))  # by query, then cosine down, then column
        bounds = np.searchsorted(queries, np.arange(len(cosines) + 1)).tolist()  # each query's part of `order`
        best = [order[start:stop][:wanted] for start, stop in zip(bounds, bounds[1:])]
        if self.inverse_norms is not None:  # the stored lengths these cosines divided by: a damaged one floats up
            self.vectors.check_norms(sorted(set(columns[np.concatenate(best)].tolist())))  # (np.unique loads np.ma)
        return [[Neighbor(self.words[column], cosine) for column, cosine in zip(columns[top].tolist(),
                                                                               exact[top].tolist())
                 if self.words[column] != word_to_skip][:k] for top, word_to_skip in zip(best, exclude)]

    def _cosines(self, unit_queries: np.ndarray, queries: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """The float64 cosines of queries[i] with the words columns[i], [c], a block at a time: duplicated vectors
        can tie by the million."""
        exact = np.empty(len(columns))  # [c]
        for part in row_blocks(len(columns), self.rows.shape[1]):
            rows = self.rows[columns[part]].astype(np.float64)  # [block, d_out]
            exact[part] = np.einsum("cd,cd->c", unit_queries[queries[part]], rows)
        if self.inverse_norms is not None:
            exact *= self.inverse_norms[columns]
        return exact


def at_most_kth(rows: np.ndarray, k: int) -> np.ndarray:
    """[b, n] -> [b, 1] (1 <= k <= n), at most each row's k-th largest entry: the k-th largest maximum of k or
    more groups of columns (c, c + g, ...), k of which hold an entry that large; partitioning those n / GROUP_COLUMNS
    maxima, not the n entries, is what makes it fast."""
    m, n = rows.shape
    width = max(k, n // GROUP_COLUMNS)  # g groups: column c is in group c % g
    whole = n // width * width
    maxima = rows[:, :whole].reshape(m, -1, width).max(axis=1)  # [b, g]
    np.maximum(maxima[:, :n - whole], rows[:, whole:], out=maxima[:, :n - whole])  # the columns past the last row
    return np.partition(maxima, width - k, axis=-1)[:, width - k:width - k + 1]


def is_letter(word: str | None) -> bool:
    """A one-letter word (a, s, t): a neighbour only of a one-letter token."""
    return word is not None and len(word) == 1 and word.isalpha()


def letter_columns(words: Sequence[str]) -> np.ndarray:
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))  # [N]
    return np.array([column for column in np.flatnonzero(lengths == 1).tolist() if is_letter(words[column])],
                    dtype=np.int64)


_SEARCHES: dict[tuple, tuple[Vectors, NeighborSearch]] = {}


def mapped_unit_rows(embeddings: np.ndarray, result: AttentionResult, block: int = 4096) -> np.ndarray:
    """The vocabulary in the outputs' space as float32 unit rows [N, d_out], a block at a time: no float64 copy."""
    rows = np.empty((len(embeddings), result.outputs.shape[-1]), dtype=np.float32)  # [N, d_out]
    mapped = _fused(result)
    for start in range(0, len(embeddings), block):
        rows[start:start + block] = unit_rows(value_space(embeddings[start:start + block], mapped))
    return rows


def _fused(result: AttentionResult) -> AttentionResult:
    """A pretrained layer's W_V W_O (+ b_V W_O + b_O) as one float32 map: one product over the vocabulary."""
    p = result.projections
    if p is None or p.w_o is None or p.b_v is None:
        return result
    b_o = p.b_v @ p.w_o + (0.0 if p.b_o is None else p.b_o)  # [d]
    fused = (p.w_v @ p.w_o).astype(np.float32)  # float32 like the rows: BLAS multiplies float32 faster
    return replace(result, projections=replace(p, w_v=fused, b_v=b_o.astype(np.float32), w_o=None, b_o=None))


def shift_queries(stack: AttentionResult) -> np.ndarray:
    """Per sentence of a stack, each token's own value, then its output: [B, n, d_out] twice -> [B * 2 n, d_out]."""
    both = np.concatenate([static_outputs(stack), stack.outputs], axis=-2)  # [B, 2 n, d_out]
    return both.reshape(-1, both.shape[-1])


class StackShifts:
    """How each token of a stack moved, as arrays [B, n_q]; `nearest` in `shift_queries(stack)`'s order."""

    def __init__(self, stack: AttentionResult, nearest: list[list[Neighbor]] | None = None,
                 texts: list[tuple[list[str], list[str]]] | None = None) -> None:
        count, n = stack.outputs.shape[:2]
        self.stack = stack
        self.searched = any(nearest or ())  # any neighbours to write
        self.nearest = nearest or [[] for _ in range(2 * n * count)]  # per sentence: its n before, then its n after
        self.texts = texts or [([""] * n, [""] * stack.weights.shape[-1])] * count
        self.columns: dict[str, list] = {}  # see column()
        self.static = static_outputs(stack)  # [B, n, d_out]
        self.cosine = np.einsum("...d,...d->...", unit_rows(self.static), unit_rows(stack.outputs))  # [B, n]
        self.delta_norm = np.linalg.norm(stack.outputs - self.static, axis=-1)  # [B, n]
        self.static_norm = np.linalg.norm(self.static, axis=-1)  # [B, n]
        self.contextual_norm = np.linalg.norm(stack.outputs, axis=-1)  # [B, n]

    @cached_property
    def mean_weights(self) -> np.ndarray:
        weights = self.stack.weights  # [B, H, n_q, n_k] -> [B, n_q, n_k], a single head's without a copy
        return weights[..., 0, :, :] if weights.shape[-3] == 1 else weights.mean(axis=-3)

    @cached_property
    def self_weight(self) -> np.ndarray | None:
        return np.diagonal(self.mean_weights, axis1=-2, axis2=-1) if self.stack.self_attention else None  # [B, n]

    @cached_property
    def output_shares(self) -> np.ndarray:
        return output_shares(self.stack)  # [B, n_q, n_k]

    @cached_property
    def shift_shares(self) -> np.ndarray:
        return shift_shares(self.stack)  # [B, n_q, n_k]

    @cached_property
    def pulls(self) -> np.ndarray:
        return top_indices(self.shift_shares, MAX_PULLS)  # [B, n_q, MAX_PULLS]

    @cached_property
    def pull_weights(self) -> np.ndarray:
        return np.take_along_axis(self.mean_weights, self.pulls, axis=-1)  # [B, n_q, MAX_PULLS]

    @cached_property
    def pull_shares(self) -> np.ndarray:
        return np.take_along_axis(self.shift_shares, self.pulls, axis=-1)  # [B, n_q, MAX_PULLS]

    def column(self, name: str) -> list:
        """A measure as Python lists [B][n] (pulls [B][n][MAX_PULLS]), made once, when a document first reads it."""
        if name not in self.columns:
            array, (count, n) = getattr(self, name), self.stack.outputs.shape[:2]
            self.columns[name] = [[None] * n] * count if array is None else array.tolist()

        return self.columns[name]

    def document(self, b: int, fields: Collection[str] | None = None) -> list[dict]:
        """Sentence b's `shifts` as the JSON document writes them (only `fields` of each when named)."""
        texts, key_texts = self.texts[b]
        if fields is not None:
            wanted = [name for name in MEASURES if name in fields]
            columns = [self.column(name)[b] for name in wanted]
            return [{"token": text, "index": i, **{name: column[i] for name, column in zip(wanted, columns)}}
                    for i, text in enumerate(texts)]
        cosine, delta, static, contextual, self_weight, pulls, weights, shares = (
            self.column(name)[b] for name in (*MEASURES, "pulls", "pull_weights", "pull_shares"))
        n = len(texts)
        nearest = [[{"word": near.word, "cosine": near.cosine} for near in found]
                   for found in self.nearest[2 * n * b:2 * n * (b + 1)]] if self.searched else [[]] * (2 * n)
        return [{"token": text, "index": i, "cosine": cosine[i], "delta_norm": delta[i], "static_norm": static[i],
                 "contextual_norm": contextual[i], "self_weight": self_weight[i],
                 "pulled_by": [{"token": key_texts[j], "index": j, "weight": w, "shift_share": share}
                               for j, w, share in zip(pulls[i], weights[i], shares[i]) if share >= PULL_SHARE],
                 "neighbors_before": nearest[i], "neighbors_after": nearest[n + i]}
                for i, text in enumerate(texts)]

    def records(self, b: int) -> list[Shift]:
        """Sentence b's `Shift` records, with their contributions: the MAX_CONTRIBUTIONS heaviest keys."""
        cosine, delta, static, contextual, self_weight = (self.column(name)[b] for name in MEASURES)
        texts, key_texts = self.texts[b]
        n = len(texts)
        heaviest = top_indices(self.mean_weights[b], MAX_CONTRIBUTIONS)  # [n_q, k]
        listed = np.concatenate([heaviest, self.pulls[b]], axis=-1)  # [n_q, k + MAX_PULLS]
        rows = [list(map(Contribution, *columns)) for columns in zip(
            listed.tolist(), *(np.take_along_axis(matrix[b], listed, axis=-1).tolist()
                               for matrix in (self.mean_weights, self.output_shares, self.shift_shares)),
            [[key_texts[key] for key in row] for row in listed.tolist()])]
        cut = heaviest.shape[-1]
        nearest = self.nearest[2 * n * b:2 * n * (b + 1)]
        return [Shift(i, self_weight[i], cosine[i], delta[i], static[i], contextual[i], rows[i][:cut],
                      [c for c in rows[i][cut:] if c.shift_share >= PULL_SHARE], nearest[i], nearest[n + i], texts[i])
                for i in range(n)]


MEASURES = ("cosine", "delta_norm", "static_norm", "contextual_norm", "self_weight")  # a shift's numbers


def top_indices(rows: np.ndarray, k: int) -> np.ndarray:
    """Per row, the indices of the k largest entries, largest first, ties in index order: [..., n] -> [..., k]; no
    NaN. A block of rows at a time (no [n, n] temporaries): a partition finds each row's k-th largest, then its k
    places are the entries above it and the first ties."""
    n = rows.shape[-1]
    k = min(k, n)
    flat = rows.reshape(-1, n)  # [m, n]
    top = np.empty((len(flat), k), dtype=np.intp)  # [m, k]
    for block in row_blocks(len(flat), n):
        part = flat[block]  # [b, n]
        kth = np.partition(part, n - k, axis=-1)[:, n - k:n - k + 1]  # [b, 1]
        above, ties = part > kth, part == kth  # [b, n] each
        kept = above | (ties & (np.cumsum(ties, axis=-1) <= k - above.sum(axis=-1, keepdims=True)))  # k a row
        candidates = (np.flatnonzero(kept) % n).reshape(-1, k)  # [b, k], in index order
        order = np.argsort(-np.take_along_axis(part, candidates, axis=-1), axis=-1, kind="stable")
        top[block] = np.take_along_axis(candidates, order, axis=-1)
    return top.reshape(rows.shape[:-1] + (k,))


def entropy_bits(weights: np.ndarray) -> np.ndarray | float:
    """-sum w log2 w over the non-zero weights of each row: 0 for one-hot, log2(n) for uniform."""
    positive = weights > 0
    logs = np.log2(weights, out=np.zeros(weights.shape), where=positive)
    entropy = -(np.where(positive, weights, 0.0) * logs).sum(axis=-1) + 0.0  # + 0.0: never -0.0
    return float(entropy) if np.ndim(entropy) == 0 else entropy


@dataclass(frozen=True)
class StackDiagnosis:
    """The softmax of a stack of sentences at a glance, as arrays, and each sentence's warnings."""

    entropy_bits: np.ndarray  # [B, H, n_q]
    max_weight: np.ndarray  # [B, H, n_q]
    argmax: np.ndarray  # [B, H, n_q]
    visible_keys: np.ndarray  # [B, n_q]
    advice: list[list[Advice]]  # per sentence

    @classmethod
    def of(cls, stack: AttentionResult) -> StackDiagnosis:
        """A warning per head with saturated rows, one naming every all-flat head; only rows with a choice count."""
        count, heads, n_q, n_k = stack.weights.shape
        flat = stack.weights.reshape(-1, n_k)  # [m, n_k]
        entropy = np.concatenate([entropy_bits(flat[rows]) for rows in row_blocks(*flat.shape)]).reshape(
            count, heads, n_q)
        maxima, argmax = stack.weights.max(axis=-1), stack.weights.argmax(axis=-1)  # [B, H, n_q] each
        keys = np.broadcast_to(np.count_nonzero(stack.visible, axis=-1), (count, n_q))  # [B, n_q]
        eligible = keys > 1  # [B, n_q]
        saturated = (maxima >= SATURATION_LEVEL) & eligible[:, None, :]  # [B, H, n_q]
        flat_rows = entropy >= FLATNESS_LEVEL * np.log2(np.maximum(keys, 1))[:, None, :]  # [B, H, n_q]
        flat_heads = ~saturated.any(axis=-1) & eligible.all(axis=-1, keepdims=True) & flat_rows.all(axis=-1)  # [B, H]
        warned = saturated.any(axis=(1, 2)) | flat_heads.any(axis=-1)  # [B]
        remedies = StackRemedies(stack, eligible, warned)
        advice = _positions_advice(stack)
        flagged = np.flatnonzero(warned)
        for b, choices, rows_saturated, flat, largest, top in zip(  # the messages of the flagged sentences
                flagged.tolist(), *(array[flagged].tolist() for array in (eligible, saturated, flat_heads, maxima,
                                                                           argmax))):
            rows = [i for i, choice in enumerate(choices) if choice]
            for head, head_rows in enumerate(rows_saturated):
                chosen = [i for i in rows if head_rows[i]]
                if chosen:
                    advice[b].append(_saturation_advice(stack, head, largest[head], top[head], chosen, len(rows),
                                                        remedies.of(b, [head], "saturated")))
            flat_list = [head for head, is_flat in enumerate(flat) if is_flat]
            if flat_list:
                advice[b].append(_flatness_advice(stack, flat_list, max(max(largest[h]) for h in flat_list), n_q,
                                                  remedies.of(b, flat_list, "flat")))
        return cls(entropy, maxima, argmax, keys, advice)

    def sentence(self, b: int) -> Diagnosis:
        """Sentence b's `Diagnosis`, its rows as records."""
        seen = self.visible_keys[b].tolist()
        return Diagnosis([list(map(RowDiagnostic, entropy, largest, argmax, seen)) for entropy, largest, argmax
                          in zip(self.entropy_bits[b].tolist(), self.max_weight[b].tolist(), self.argmax[b].tolist())],
                         self.advice[b])


def heads_text(heads: list[int]) -> str:
    """'head 2', 'heads 1 and 3', 'heads 1, 2 and 4', or 'heads 1-4' for three or more in a row (numbered from 1)."""
    numbers = [str(head + 1) for head in heads]
    if len(heads) > 2 and heads == list(range(heads[0], heads[-1] + 1)):
        return f"heads {numbers[0]}-{numbers[-1]}"
    return f"head {numbers[0]}" if len(heads) == 1 else f"heads {', '.join(numbers[:-1])} and {numbers[-1]}"


def position_norms(result: AttentionResult) -> tuple[float, float] | None:
    """(mean |word|, mean |code|) over the rows that entered the layer; None without positions."""
    norms = stack_position_norms(as_stack(result))
    return None if norms is None else (float(norms[0][0]), float(norms[1][0]))


def stack_position_norms(stack: AttentionResult) -> tuple[np.ndarray, np.ndarray] | None:
    """Per sentence of a stack, the mean |word| and mean |code| [B] each; None without positions."""
    if stack.query_codes is None or stack.context_codes is None:
        return None
    codes = [stack.query_codes] + ([] if stack.self_attention else [stack.context_codes])
    inputs = [stack.query_inputs] + ([] if stack.self_attention else [stack.context_inputs])
    words = np.concatenate([row_norms(x - c) for x, c in zip(inputs, codes)], axis=-1)  # [B, rows]
    code_norms = np.concatenate([np.broadcast_to(row_norms(c), x.shape[:-1]) for x, c in zip(inputs, codes)], axis=-1)
    return words.mean(axis=-1), code_norms.mean(axis=-1)


def _positions_advice(stack: AttentionResult) -> list[list[Advice]]:
    """Per sentence, a warning when its codes outgrow its words by POSITION_DOMINANCE, with "auto"'s weights."""
    count = len(stack.outputs)
    norms = stack_position_norms(stack)
    found: list[list[Advice]] = [[] for _ in range(count)]
    if norms is None or not (dominated := np.flatnonzero(norms[1] > POSITION_DOMINANCE * norms[0])).size:
        return found
    words = stack.query_inputs - stack.query_codes
    context = None if stack.self_attention else (stack.context_inputs - stack.context_codes)[dominated]
    maxima = attention_rerun(stack, words[dominated], context, position_scale="auto").weights.max(axis=-1)
    for b, word_norm, code_norm, low, high in zip(dominated.tolist(), norms[0][dominated].tolist(),
                                                  norms[1][dominated].tolist(), maxima.min(axis=(1, 2)).tolist(),
                                                  maxima.max(axis=(1, 2)).tolist()):
        ratio = f"{code_norm / word_norm:.3g} times" if word_norm > 0 else "infinitely"
        found[b].append(Advice("positions", None, f"the position codes (mean norm {code_norm:.3g}) are {ratio} as "
                               f"long as the word vectors (mean norm {word_norm:.3g}): word order swamps the words' "
                               "meaning", [Remedy({"position_scale": "auto"}, (low, high))], False))
    return found


def _saturation_advice(result: AttentionResult, head: int, maxima: list[float], argmax: list[int],
                       saturated: list[int], eligible: int, remedies: list[Remedy]) -> Advice:
    lowest = min(maxima[i] for i in saturated)
    on_self = result.self_attention and all(argmax[i] == i for i in saturated)
    if len(saturated) == eligible:
        what, whose, target, where = "every row puts", "its", "itself" if on_self else "one token", ""
    else:
        what, whose, where = f"{len(saturated)} of {eligible} rows put", "their", " in those rows"
        target = "themselves" if on_self else "one token"
    return Advice("saturated", head, f"{heads_text([head])}: {what} >= {SATURATION_LEVEL:.2f} of {whose} weight on "
                  f"{target} (lowest such weight {lowest:.3f}): the scores{where} are so far apart that the softmax "
                  "is one-hot", remedies, False, saturated, eligible, [head])


def _flatness_advice(result: AttentionResult, heads: list[int], highest: float, n_q: int,
                     remedies: list[Remedy]) -> Advice:
    return Advice("flat", heads[0], f"{heads_text(heads)}: every row is nearly uniform (largest weight {highest:.3f}):"
                  " the scaled scores are too close together to prefer any word"
                  + UNTRAINED_NOTE * (result.config.mode == "projected"), remedies,
                  result.scale_factor >= 1 and result.config.mode != "trained", list(range(n_q)), n_q, heads)


def remedy_settings(code: str, config: AttentionConfig, scale_factor: float,
                    temperature: float | None) -> list[dict[str, Any]]:
    """The keywords that undo a "saturated" or "flat" softmax, for warnings and trace notes (`temperature`: solved)."""
    solved = [] if temperature is None else [{"temperature": temperature}]
    if code == "saturated":
        named = [{"scale": "sqrt"}] if config.scale != "sqrt" else []
        named += [{"similarity": "cosine"}] if config.similarity != "cosine" else []
        return named + solved
    return solved + ([{"scale": "none"}] if scale_factor < 1 else [])


HINTED_OCTAVES = (-19, 19)  # hints lie within 2^-19 and 2^19: temperatures the settings take (MIN_TEMPERATURE up)
TEMPERATURE_STEPS = 12  # bisection steps on log2 T: the 38 octaves to within 1 % of T


def fixing_temperatures(scores: np.ndarray, visible: np.ndarray, scale_factor: float) -> np.ndarray:
    """Per sentence of scores [S, G, r, n_k], the shortest temperature near the geometric mean of the bisected
    lowest one where no row saturates and highest where no group is all flat: [S], NaN where none clears both."""
    if scale_factor == 0:  # every logit is 0 at any temperature: uniform rows, which no temperature sharpens
        return np.full(len(scores), math.nan)
    visible = np.broadcast_to(visible, scores.shape)
    keys = np.count_nonzero(visible, axis=-1)  # [S, G, r]: a row of one key has no choice (and counts as flat)
    flat_entropy = FLATNESS_LEVEL * np.log2(keys)
    base = np.where(visible, scores, -np.inf)  # [S, G, r, n_k], then in place: no second copy of the rows
    base -= base.max(axis=-1, keepdims=True)
    base *= scale_factor  # <= 0, with a 0 at each row's top

    def sums(temperatures: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # [S] -> Z and sum e x, [S, G, r] each
        x = base / temperatures.reshape(-1, 1, 1, 1)  # a row's logits less its top: e = exp(x) <= 1, one 1 a row
        e = np.exp(x)
        np.multiply(e, x, out=x, where=visible)
        return e.sum(axis=-1), np.sum(x, axis=-1, where=visible)

    def fine(temperatures: np.ndarray) -> np.ndarray:  # [S] -> [S]: no row saturates (its top weight is 1 / Z)
        return np.all((1 / sums(temperatures)[0] < SATURATION_LEVEL) | (keys == 1), axis=(1, 2))

    def flat(temperatures: np.ndarray) -> np.ndarray:  # [S] -> [S]: every row of some group is flat
        z, ex = sums(temperatures)
        return ((np.log(z) - ex / z) / math.log(2) >= flat_entropy).all(axis=-1).any(axis=-1)  # H = ln Z - E[x]

    lowest, highest = _root(fine, len(scores))[1], _root(flat, len(scores))[0]  # [S] each
    found = np.array([_shortest_between(math.sqrt(low * high), low, high) if low <= high else math.nan
                      for low, high in zip(lowest.tolist(), highest.tolist())])
    tried = np.where(np.isnan(found), 1.0, found).reshape(-1, 1, 1, 1)
    weights = softmax(scaled_logits(scores, scale_factor / tried, visible))  # the check: the engine's own weights
    cleared = ((weights.max(axis=-1) < SATURATION_LEVEL) | (keys == 1)).all(axis=(1, 2))
    spoilt = (entropy_bits(weights) >= flat_entropy).all(axis=-1).any(axis=-1)
    return np.where(cleared & ~spoilt, found, math.nan)


def _root(test: Callable[[np.ndarray], np.ndarray], count: int) -> tuple[np.ndarray, np.ndarray]:
    low, high = np.full(count, float(HINTED_OCTAVES[0])), np.full(count, float(HINTED_OCTAVES[1]))
    for _ in range(TEMPERATURE_STEPS):
        middle = (low + high) / 2
        passed = test(np.exp2(middle))
        low, high = np.where(passed, low, middle), np.where(passed, middle, high)
    return np.exp2(low), np.exp2(high)


def _shortest_between(value: float, low: float, high: float) -> float:
    """`value` with the fewest significant digits that stays within [low, high]."""
    for digits in range(1, 17):
        rounded = float(f"{value:.{digits}g}")
        if low <= rounded <= high:
            return rounded
    return value


class StackRemedies:
    """The remedies of a stack's warnings with the largest weights each gives; none for a trained layer."""

    def __init__(self, stack: AttentionResult, eligible: np.ndarray, warned: np.ndarray) -> None:
        self.stack, self.eligible = stack, eligible
        self.ranges: dict[object, tuple[list, list]] = {}  # remedy -> per sentence, per head: (lowest, highest)
        self.temperatures = np.full(len(eligible), np.nan)  # [B]: each warned sentence's solved one
        if stack.config.mode != "trained" and warned.any():
            chosen = np.flatnonzero(warned)
            visible = np.broadcast_to(np.expand_dims(stack.visible, -3), stack.scores.shape)[chosen]
            self.temperatures[chosen] = fixing_temperatures(stack.scores[chosen], visible, stack.scale_factor)

    def of(self, b: int, heads: list[int], code: str) -> list[Remedy]:
        """The remedies for `code` ("saturated" or "flat") of some heads of sentence b."""
        if self.stack.config.mode == "trained":
            return []
        found = []
        solved = None if math.isnan(self.temperatures[b]) else float(self.temperatures[b])
        for settings in remedy_settings(code, self.stack.config, self.stack.scale_factor, solved):
            key = "temperature" if "temperature" in settings else tuple(settings.items())
            if key not in self.ranges:
                temperatures = np.where(np.isnan(self.temperatures), 1.0, self.temperatures)  # [B]
                self.ranges[key] = self._ranges(_row_maxima(
                    self.stack, {"temperature": temperatures} if key == "temperature" else settings))
            lowest, highest = self.ranges[key][0][b], self.ranges[key][1][b]
            found.append(Remedy(settings, (min(lowest[h] for h in heads), max(highest[h] for h in heads))))
        return found

    def _ranges(self, maxima: np.ndarray) -> tuple[list, list]:
        eligible = self.eligible[:, None, :]
        return (np.where(eligible, maxima, np.inf).min(axis=-1).tolist(),
                np.where(eligible, maxima, -np.inf).max(axis=-1).tolist())


def _row_maxima(stack: AttentionResult, settings: dict[str, Any]) -> np.ndarray:
    """Each row's largest weight [B, H, n_q] under `settings` (temperature: one per sentence)."""
    config = stack.config
    similarity = settings.get("similarity", config.similarity)
    scores = stack.scores if similarity == config.similarity else similarity_scores(
        stack.queries, stack.keys, similarity)  # [B, H, n_q, n_k]
    scale = replace(config, scale=settings.get("scale", config.scale)).scale_factor(stack.d_head)
    factor = np.reshape(scale / np.asarray(settings.get("temperature", config.temperature)), (-1, 1, 1, 1))
    visible = np.expand_dims(stack.visible, -3)

    return np.concatenate([softmax(scaled_logits(scores[..., rows, :], factor, visible[..., rows, :])).max(axis=-1)
                           for rows in row_blocks(scores.shape[-2], scores[..., 0, :].size)],
                          axis=-1)  # [B, H, n_q], without [n, n] logits and weights of every head at once
