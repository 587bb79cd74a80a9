"""What attention did to each word: shifts, contributions, neighbours, diagnostics.

Pure numpy on top of an `AttentionResult`; nothing here knows about the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

try:  # CPython's own blake2b, which hashlib wraps: this module alone does not load OpenSSL
    from _blake2 import blake2b
except ImportError:  # another Python
    from hashlib import blake2b

from attn_cli.engine.attention import (AttentionConfig, AttentionResult, as_stack, row_blocks, row_norms, scaled,
                                       shift_shares, similarity_scores, static_outputs, term_shares, unit_rows,
                                       unstack, value_space)
from attn_cli.engine.attention import rerun as attention_rerun
from attn_cli.vectors.store import Vectors

MAX_ANSWERS = 100_000  # neighbour answers remembered per search (~50 MB at most with 5 neighbours each)
QUERY_BLOCK = 256  # neighbour queries per matrix product: bounds the [N, block] cosines (22 MB at N = 21,745)
RESCORED_SLACK = 8  # words ranked past the wanted ones and scored in float64 too: float32's near-ties (see _exact_top)
GROUP_COLUMNS = 64  # a wide row's top k lies in its k groups of this many columns with the largest maxima
WIDE_GROUPS = 16  # rows of at least this many x k groups are searched that way (see _top_of_wide_rows)
WIDE_ROWS = 16  # wide rows searched at a time
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
    """Cosine nearest neighbours among the most frequent words, in the outputs' space.

    The vocabulary is held as float32 unit rows [N, d_out]; queries are answered
    by matrix products of QUERY_BLOCK queries at a time, so the [N, m] cosines
    stay small however long the sentence.
    """

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
        else:
            self.rows, self.inverse_norms = mapped_unit_rows(embeddings, result), None
        self.letters = letter_columns(self.words)  # columns of one-letter words
        self.answers: dict[tuple[bytes, str | None, int], list[Neighbor]] = {}  # see nearest()
        # |float32 cosine - float64 cosine| <= (d + 3) unit roundoffs for a unit query and a row as long as its norm
        # says (each term's rounding, the query's, the product's); 4 x that for norms stored a little short
        self.rounding = 4 * (self.rows.shape[1] + 3) * float(np.finfo(np.float32).eps) / 2

    @classmethod
    def shared(cls, vectors: Vectors, result: AttentionResult, vocabulary_size: int | None) -> "NeighborSearch":
        """The search for this vector set, vocabulary size and configuration, built once per run.

        Its rows depend only on those three (projections are drawn from the config and d), so
        every sentence of a batch reuses them instead of converting N x d numbers again.
        """
        key = (id(vectors), vocabulary_size, result.config)
        found = _SEARCHES.get(key)
        if found is None or found[0] is not vectors:
            _SEARCHES.clear()  # one vocabulary's rows in memory at a time
            found = _SEARCHES[key] = (vectors, cls(vectors, result, vocabulary_size))
        return found[1]

    def nearest(self, queries: np.ndarray, k: int, exclude: list[str | None]) -> list[list[Neighbor]]:
        """For each query row [m, d_out], the k closest words, leaving out exclude[row] (the token itself).

        A query asked before (the same vector, word left out and k) is answered from memory: a word's own
        value does not depend on its sentence (without positions), so across a batch most static queries
        repeat and only the contextual outputs need the matrix product. Answers never depend on which
        other queries share a block, so a remembered one is exactly what a new search would give.
        """
        unit_queries = unit_rows(np.asarray(queries, dtype=np.float64))  # [m, d_out]
        keys = [(blake2b(row.tobytes(), digest_size=16).digest(), word, k)
                for row, word in zip(unit_queries, exclude)]  # 16 bytes stand for the vector, not 8 x d_out
        if len(self.answers) + len(keys) > MAX_ANSWERS:
            self.answers.clear()  # bounded memory over an endless batch (before this call counts on any answer)
        first: dict[tuple[bytes, str | None, int], int] = {}
        for row, key in enumerate(keys):
            if key not in self.answers:
                first.setdefault(key, row)
        missing, rows = list(first), list(first.values())  # [u]: each new key and its first query
        for start in range(0, len(rows), QUERY_BLOCK):
            block = rows[start:start + QUERY_BLOCK]
            found = self._nearest_block(unit_queries[block], k, [exclude[row] for row in block])
            self.answers.update(zip(missing[start:start + QUERY_BLOCK], found))
        return [self.answers[key] for key in keys]

    def _nearest_block(self, unit_queries: np.ndarray, k: int, exclude: list[str | None]) -> list[list[Neighbor]]:
        """One float32 matrix product for the block ranks every word; the few best (and every word within float32's
        rounding of them) are then scored in float64, so the answer is a full float64 sort's.

        The float64 cosines do not depend on which other queries shared the product (BLAS rounds a
        float32 product differently by its shape), so a sentence reads the same alone or in a batch.
        """
        cosines = unit_queries.astype(np.float32) @ self.rows.T  # [b, d_out] x [d_out, N] -> [b, N]
        if self.inverse_norms is not None:
            cosines *= self.inverse_norms[None, :]
        # a row holding NaN or infinity (a cache damaged since its import, which refused such values) is never
        # a neighbour: one read-only pass (a sum per query) finds any such cosine, and only the queries that
        # meet one are rewritten, not the N x d rows on every run nor every cosine of every block
        broken = ~np.isfinite(cosines.sum(axis=1))  # [b]
        if broken.any():
            damaged = cosines[broken]
            np.putmask(damaged, ~np.isfinite(damaged), -np.inf)
            cosines[broken] = damaged
        asked = np.array([is_letter(word) for word in exclude], dtype=bool)  # [b] the token is a letter itself
        cosines[np.ix_(~asked, self.letters)] = -np.inf  # single letters (s, d, t: fragments) are no neighbours
        cosines[:, self.unusable] = -np.inf
        ranked, exact = self._exact_top(cosines, unit_queries, min(k + 1, len(self.words)))  # [b, k + 1] each
        if self.inverse_norms is not None:  # the stored lengths these cosines divided by: a damaged one floats up
            self.vectors.check_norms(sorted(set(ranked[np.isfinite(exact)].tolist())))  # (np.unique loads np.ma)
        found = []
        for rows, row_cosines, word_to_skip, zero in zip(ranked.tolist(), exact.tolist(), exclude,
                                                         np.logical_not(unit_queries.any(axis=1)).tolist()):
            neighbors = [Neighbor(self.words[row], value) for row, value in zip(rows, row_cosines)
                         if self.words[row] != word_to_skip and value != -np.inf]
            found.append([] if zero else neighbors[:k])  # a zero vector (an OOV word as zeros) has no direction
        return found

    def _exact_top(self, cosines: np.ndarray, unit_queries: np.ndarray, wanted: int) -> tuple[np.ndarray, np.ndarray]:
        """Per query, the `wanted` best columns by float64 cosine and those cosines, best first, ties by column:
        exactly a full float64 sort's first `wanted` (-inf where fewer words qualify).

        The float32 cosines [b, N] rank the words, but words whose cosines differ by less than their
        rounding (`self.rounding`, a few parts in 10^5 at 300 dims) can come out in the wrong order.
        So every word within twice that of the wanted-th best is scored again in float64: any word of
        the true top lies there. Usually the RESCORED_SLACK words ranked next reach past that
        margin; a query with more near-ties than that takes every word within it.
        """
        b, n = cosines.shape
        ranked = top_indices(cosines, min(wanted + RESCORED_SLACK, n))  # [b, s]: by float32 cosine, ties by column
        approximate = np.take_along_axis(cosines, ranked, axis=1)  # [b, s]
        floor = approximate[:, wanted - 1] - 2 * self.rounding  # [b]
        crowded = ((approximate[:, -1] >= floor) & (ranked.shape[1] < n) & np.isfinite(floor)
                   & unit_queries.any(axis=1))  # [b]; a zero query (no direction) ties with every word: no answer
        ranked, exact = ranked[~crowded], self._cosines(unit_queries[~crowded], ranked[~crowded], approximate[~crowded])
        picked = np.empty((b, wanted), dtype=np.intp), np.empty((b, wanted))
        order = np.lexsort((ranked, -exact), axis=-1)[:, :wanted]  # by cosine down, then column
        picked[0][~crowded], picked[1][~crowded] = (np.take_along_axis(ranked, order, axis=-1),
                                                    np.take_along_axis(exact, order, axis=-1))
        for row in np.flatnonzero(crowded).tolist():
            columns = np.flatnonzero(cosines[row] >= floor[row])  # [c]
            scores = np.concatenate([  # [c], a block of rows at a time (duplicated vectors can tie by the million)
                self._cosines(unit_queries[row:row + 1], columns[None, block], cosines[row:row + 1, columns[block]])[0]
                for block in row_blocks(len(columns), self.rows.shape[1])])
            order = np.lexsort((columns, -scores))[:wanted]
            picked[0][row], picked[1][row] = columns[order], scores[order]
        return picked

    def _cosines(self, unit_queries: np.ndarray, columns: np.ndarray, approximate: np.ndarray) -> np.ndarray:
        """The float64 cosines of queries [b, d_out] with their listed columns [b, c]: -inf where the float32 ones
        were (words left out: single letters, unusable rows)."""
        exact = np.einsum("bd,bkd->bk", unit_queries, self.rows[columns].astype(np.float64))  # [b, c]
        if self.inverse_norms is not None:
            exact *= self.inverse_norms[columns]
        exact[np.isneginf(approximate)] = -np.inf
        return exact


def is_letter(word: str | None) -> bool:
    """A one-letter word (a, i, s, t...): listed as a neighbour only of a one-letter token."""
    return word is not None and len(word) == 1 and word.isalpha()


def letter_columns(words: Sequence[str]) -> np.ndarray:
    """The positions of the one-letter words (`is_letter`), found by length at C speed: a call per word over the
    50,000 searched took 15 ms of a warm run."""
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))  # [N]
    return np.array([column for column in np.flatnonzero(lengths == 1).tolist() if is_letter(words[column])],
                    dtype=np.int64)


_SEARCHES: dict[tuple, tuple[Vectors, NeighborSearch]] = {}


def mapped_unit_rows(embeddings: np.ndarray, result: AttentionResult, block: int = 4096) -> np.ndarray:
    """The vocabulary mapped into the outputs' space, as float32 unit rows: [N, d] -> [N, d_out].

    Mapped a block of rows at a time, so memory peaks at the float32 result, not at a float64
    copy of it (at d_k = 4096 over 50,000 words: 0.8 GB instead of about 4 GB).
    """
    width = value_space(embeddings[:1], result).shape[1]
    rows = np.empty((len(embeddings), width), dtype=np.float32)  # [N, d_out]
    mapped = _fused(result)
    for start in range(0, len(embeddings), block):
        rows[start:start + block] = unit_rows(value_space(embeddings[start:start + block], mapped))
    return rows


def _fused(result: AttentionResult) -> AttentionResult:
    """The result with W_V and W_O (and their biases) made one map, W_V W_O (+ b_V W_O + b_O), when it has a
    pretrained layer's biases: one product over the vocabulary instead of two (a 22,531 x 384 vocabulary through
    two 384 x 384 products was most of a run), in float32 as the rows it fills are."""
    p = result.projections
    if p is None or p.w_o is None or p.b_v is None:
        return result
    b_o = p.b_v @ p.w_o + (0.0 if p.b_o is None else p.b_o)  # [d]
    fused = (p.w_v @ p.w_o).astype(np.float32)  # float32 like the rows: BLAS's float32 product is twice as fast
    return replace(result, projections=replace(p, w_v=fused, b_v=b_o.astype(np.float32), w_o=None, b_o=None))


def shift_queries(stack: AttentionResult) -> np.ndarray:
    """What the shifts search neighbours for: per sentence of a stack, each token's own value, then its output:
    [B, n, d_out] twice -> [B * 2 n, d_out]."""
    both = np.concatenate([static_outputs(stack), stack.outputs], axis=-2)  # [B, 2 n, d_out]
    return both.reshape(-1, both.shape[-1])


def token_shifts(result: AttentionResult, nearest: list[list[Neighbor]] | None = None,
                 texts: tuple[list[str], list[str]] | None = None) -> list[Shift]:
    """One `Shift` per query token of one sentence; `nearest` and `texts` as `stack_shifts` takes them."""
    return stack_shifts(as_stack(result), nearest, None if texts is None else [texts])[0]


def stack_shifts(stack: AttentionResult, nearest: list[list[Neighbor]] | None = None,
                 texts: list[tuple[list[str], list[str]]] | None = None) -> list[list[Shift]]:
    """The `Shift`s of each sentence of a stack (arrays led by B); `nearest` holds the neighbours of
    `shift_queries(stack)` in its order, if searched; `texts` each sentence's (query tokens, key tokens), which
    the records then carry beside their indices.

    Every measure is computed for all sentences and tokens at once (a batch of short sentences spends
    its time here, so no numpy call runs per sentence or token); the loops only pack the numbers.
    """
    static = static_outputs(stack)  # [B, n, d_out]
    outputs = stack.outputs  # [B, n, d_out]
    mean_weights = head_mean(stack.weights)  # [B, n_q, n_k]
    count, n = outputs.shape[:2]
    nearest = nearest or [[] for _ in range(2 * n * count)]  # per sentence: its n before, then its n after
    cosines = row_cosines(static, outputs).tolist()  # [B][n]
    delta_norms = np.linalg.norm(outputs - static, axis=-1).tolist()
    static_norms, contextual_norms = np.linalg.norm(static, axis=-1).tolist(), np.linalg.norm(outputs, axis=-1).tolist()
    self_weights = (np.diagonal(mean_weights, axis1=-2, axis2=-1).tolist() if stack.self_attention
                    else [[None] * n] * count)
    shares = shift_shares(stack)  # [B, n_q, n_k]
    heaviest, strongest = top_indices(mean_weights, MAX_CONTRIBUTIONS), top_indices(shares, MAX_PULLS)
    texts = texts or [([""] * n, [""] * stack.weights.shape[-1])] * count
    listed = contributions_of(stack, mean_weights, shares, np.concatenate([heaviest, strongest], axis=-1),
                              [keys for _, keys in texts])
    cut = heaviest.shape[-1]
    return [[  # positional, each sentence's lists read once: the packing is most of a short sentence's shifts
        Shift(i, weights[i], cosine[i], delta[i], static_norm[i], contextual_norm[i], rows[i][:cut],
              [c for c in rows[i][cut:] if c.shift_share >= PULL_SHARE],
              nearest[2 * n * b + i], nearest[2 * n * b + n + i], queries[i])
        for i in range(n)
    ] for b, (weights, cosine, delta, static_norm, contextual_norm, rows, (queries, _))
        in enumerate(zip(self_weights, cosines, delta_norms, static_norms, contextual_norms, listed, texts))]


def contributions_of(stack: AttentionResult, mean_weights: np.ndarray, shares: np.ndarray, keys: np.ndarray,
                     key_texts: list[list[str]]) -> list[list[list[Contribution]]]:
    """The `Contribution`s of the keys [B, n_q, k] listed for each row of a stack, in their order: [B][n_q][k]."""
    indices = keys.tolist()
    columns = (indices, np.take_along_axis(mean_weights, keys, axis=-1).tolist(),
               term_shares(stack, keys).tolist(), np.take_along_axis(shares, keys, axis=-1).tolist(),
               [[[texts[key] for key in row] for row in rows] for rows, texts in zip(indices, key_texts)])
    return [[list(map(Contribution, *row)) for row in zip(*sentence)] for sentence in zip(*columns)]


def head_mean(weights: np.ndarray) -> np.ndarray:
    """The weights averaged over heads: [.., H, n_q, n_k] -> [.., n_q, n_k]; one head's are their own mean (x / 1 is
    x), so the default single head needs no [n, n] copy."""
    return weights[..., 0, :, :] if weights.shape[-3] == 1 else weights.mean(axis=-3)


def top_indices(rows: np.ndarray, k: int) -> np.ndarray:
    """Per row, the indices of the k largest entries, largest first, ties in index order: [..., n] -> [..., k].

    O(n) per row (a partition, then a sort of the k survivors), not a full sort; rows far wider
    than k (a neighbour search's) partition only the few groups of columns that can hold the top
    (_top_of_wide_rows). A partition keeps an arbitrary few of the entries tied at the k-th
    value; the rows where that happened take their earliest ties instead. No NaN.
    """
    n = rows.shape[-1]
    flat = rows.reshape(-1, n)  # [m, n]
    wide = n >= WIDE_GROUPS * k * GROUP_COLUMNS
    top = np.empty((len(flat), min(k, n)), dtype=np.intp)  # [m, k]
    # a 5,000-token sentence's rows a few at a time: no [n, n] temporaries; wide rows WIDE_ROWS at a time, which
    # the cache holds while their chosen groups are read again
    blocks = [slice(start, start + WIDE_ROWS) for start in range(0, len(flat), WIDE_ROWS)] if wide else row_blocks(
        len(flat), n)
    for block in blocks:
        top[block] = (_top_of_wide_rows if wide else _partitioned)(flat[block], k)
    return top.reshape(rows.shape[:-1] + top.shape[1:])


def _partitioned(flat: np.ndarray, k: int) -> np.ndarray:
    """top_indices of the rows of a matrix by a partition of each whole row: [m, n] -> [m, min(k, n)]."""
    m, n = flat.shape
    if k < n:
        candidates = np.sort(np.argpartition(flat, n - k, axis=-1)[:, n - k:], axis=-1)  # [m, k], no negated copy
        kth = np.take_along_axis(flat, candidates, axis=-1).min(axis=-1, keepdims=True)  # [m, 1]: k-th largest
        crowded = np.flatnonzero((flat >= kth).sum(axis=-1) > k)  # rows with more ties at kth than places
        if len(crowded):
            sub, level = flat[crowded], kth[crowded]  # [c, n], [c, 1]
            above, ties = sub > level, sub == level
            room = k - above.sum(axis=-1, keepdims=True)  # [c, 1]: places left for ties
            keep = above | (ties & (np.cumsum(ties, axis=-1) <= room))  # exactly k per row
            candidates[crowded] = np.nonzero(keep)[1].reshape(len(crowded), k)
    else:
        candidates = np.broadcast_to(np.arange(n), (m, n))
    order = np.argsort(-np.take_along_axis(flat, candidates, axis=-1), axis=-1, kind="stable")
    return np.take_along_axis(candidates, order, axis=-1)


def _top_of_wide_rows(flat: np.ndarray, k: int) -> np.ndarray:
    """top_indices of rows far wider than k (a search's cosines over the vocabulary): [m, n] -> [m, k].

    A partition of a whole row costs several passes over it; one pass finds the largest entry of
    each group of columns (group c: columns c, c + g, c + 2g, ... for g groups), and the k-th
    largest of those maxima is at most the row's k-th largest entry, since k groups hold an
    entry at least that large. So every entry of the top k, ties at the k-th included, lies in a
    group whose maximum reaches it: only those k groups (and the columns past the last whole
    group) are partitioned. Rows where more than k group maxima tie take the general way.
    """
    m, n = flat.shape
    width = n // GROUP_COLUMNS  # g groups of GROUP_COLUMNS columns; the n - g * GROUP_COLUMNS last are always kept
    maxima = flat[:, :width * GROUP_COLUMNS].reshape(m, GROUP_COLUMNS, width).max(axis=1)  # [m, g]
    level = np.partition(maxima, width - k, axis=-1)[:, width - k:width - k + 1]  # [m, 1]: k-th largest maximum
    chosen = maxima >= level  # [m, g]
    plain = chosen.sum(axis=-1) == k  # [m]
    top = np.empty((m, k), dtype=np.intp)
    if not plain.all():
        top[~plain] = _partitioned(flat[~plain], k)
    if not plain.any():
        return top
    groups = np.nonzero(chosen[plain])[1].reshape(-1, k)  # [p, k], ascending
    # group c's j-th column is c + j g: ordered by j, then c, the candidates stay in column order, so the
    # general way's ties by position are ties by column
    columns = (groups[:, None, :] + width * np.arange(GROUP_COLUMNS)[None, :, None]).reshape(len(groups), -1)
    rest = np.arange(width * GROUP_COLUMNS, n)
    columns = np.concatenate([columns, np.broadcast_to(rest, (len(groups), len(rest)))], axis=-1)  # [p, c]
    picked = _partitioned(flat[np.flatnonzero(plain)[:, None], columns], k)  # [p, k], no copy of whole rows
    top[plain] = np.take_along_axis(columns, picked, axis=-1)
    return top


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """cos(a_i, b_i) for each row pair, 0.0 where either row is zero: [.., n, d] x [.., n, d] -> [.., n]."""
    return np.einsum("...d,...d->...", unit_rows(a), unit_rows(b))


def matrix_diagnostics(weights: np.ndarray, visible: np.ndarray) -> list[list[RowDiagnostic]]:
    """Entropy (bits), largest weight, its key and the visible keys of every row of each [n_q, n_k] matrix of
    weights [.., n_q, n_k] (visible: [.., n_q, n_k] bool, broadcast to them), in order, from a few numpy calls."""
    flat = weights.reshape(-1, weights.shape[-1])  # [m, n_k]
    entropies = np.concatenate([entropy_bits(flat[rows]) for rows in row_blocks(*flat.shape)]).tolist()  # [m]
    seen = np.broadcast_to(np.count_nonzero(visible, axis=-1)[..., None, :], weights.shape[:-1]).ravel().tolist()
    rows = list(map(RowDiagnostic, entropies, flat.max(axis=-1).tolist(), flat.argmax(axis=-1).tolist(), seen))
    n_q = weights.shape[-2]
    return [rows[start:start + n_q] for start in range(0, len(rows), n_q)]


def entropy_bits(weights: np.ndarray) -> np.ndarray | float:
    """-sum w log2 w over the non-zero weights of each row: 0 for one-hot, log2(n) for uniform."""
    positive = weights > 0
    logs = np.log2(weights, out=np.zeros(weights.shape), where=positive)
    entropy = -(np.where(positive, weights, 0.0) * logs).sum(axis=-1) + 0.0  # + 0.0: never -0.0
    return float(entropy) if np.ndim(entropy) == 0 else entropy


def diagnose(result: AttentionResult) -> Diagnosis:
    """One sentence's `Diagnosis`."""
    return diagnose_stack(as_stack(result))[0]


def diagnose_stack(stack: AttentionResult) -> list[Diagnosis]:
    """Each sentence's rows, a warning for each head with saturated rows (even one), and one warning naming every
    head whose every row is flat (random projections flatten them all alike: said once, not once per head), with
    computed remedies.

    Only rows that see at least two keys count: a row with one visible key (the first under the
    causal mask, or a one-word sentence) has no choice, so its weight of 1 says nothing.
    """
    count, heads, n_q = stack.weights.shape[:3]
    matrices = matrix_diagnostics(stack.weights, stack.visible)  # [B * H][n_q]
    remedies = StackRemedies(stack)
    parts = unstack(stack) if stack.query_codes is not None else []  # the positions advice reruns a sentence
    found = []
    for b in range(count):
        rows = matrices[b * heads:(b + 1) * heads]
        eligible = [i for i, row in enumerate(rows[0]) if row.visible_keys > 1]
        advice = _positions_advice(parts[b]) if parts else []
        flat = []
        for head, head_rows in enumerate(rows):
            saturated = [i for i in eligible if head_rows[i].max_weight >= SATURATION_LEVEL]
            if saturated:
                advice.append(_saturation_advice(stack, head, head_rows, saturated, len(eligible),
                                                 remedies.of(b, [head], eligible, "saturated")))
            elif eligible and len(eligible) == n_q and all(is_flat(head_rows[i]) for i in eligible):
                flat.append(head)
        if flat:
            advice.append(_flatness_advice(stack, flat, rows, remedies.of(b, flat, eligible, "flat")))
        found.append(Diagnosis(rows, advice))
    return found


def is_flat(row: RowDiagnostic) -> bool:
    """Whether a row's entropy is at least FLATNESS_LEVEL of the most its visible keys allow."""
    return row.entropy_bits >= FLATNESS_LEVEL * math.log2(row.visible_keys)


def heads_text(heads: list[int]) -> str:
    """'head 2', 'heads 1 and 3', 'heads 1, 2 and 4', or 'heads 1-4' for three or more in a row (numbered from 1)."""
    numbers = [str(head + 1) for head in heads]
    if len(heads) > 2 and heads == list(range(heads[0], heads[-1] + 1)):
        return f"heads {numbers[0]}-{numbers[-1]}"
    return f"head {numbers[0]}" if len(heads) == 1 else f"heads {', '.join(numbers[:-1])} and {numbers[-1]}"


def position_norms(result: AttentionResult) -> tuple[float, float] | None:
    """(mean |word|, mean |code|) over the rows that entered the layer (queries, then other keys); None without
    positions."""
    if result.query_codes is None or result.context_codes is None:
        return None
    codes = [result.query_codes] + ([] if result.self_attention else [result.context_codes])
    inputs = [result.query_inputs] + ([] if result.self_attention else [result.context_inputs])
    words = np.concatenate([row_norms(x - c) for x, c in zip(inputs, codes)])
    return float(words.mean()), float(np.concatenate([row_norms(c) for c in codes]).mean())


def _positions_advice(result: AttentionResult) -> list[Advice]:
    """A warning when the position codes are more than POSITION_DOMINANCE times as long as the words."""
    norms = position_norms(result)
    if norms is None or not norms[1] > POSITION_DOMINANCE * norms[0]:
        return []
    words, codes = norms
    embeddings = [result.query_inputs - result.query_codes,
                  None if result.self_attention else result.context_inputs - result.context_codes]
    rerun = attention_rerun(result, embeddings[0], embeddings[1], position_scale="auto")
    maxima = rerun.weights.max(axis=2)  # [H, n_q]
    ratio = f"{codes / words:.3g} times" if words > 0 else "infinitely"
    return [Advice(
        code="positions", head=None,
        message=(f"the position codes (mean norm {codes:.3g}) are {ratio} as long as the word vectors (mean norm "
                 f"{words:.3g}): word order swamps the words' meaning"),
        remedies=[Remedy({"position_scale": "auto"}, (float(maxima.min()), float(maxima.max())))],
        larger_scale=False,
        rows=[], eligible_rows=0,
    )]


def _saturation_advice(result: AttentionResult, head: int, rows: list[RowDiagnostic], saturated: list[int],
                       eligible: int, remedies: list[Remedy]) -> Advice:
    """Saturated rows of one head: all of them ("every row") or a count ("7 of 10 rows"), on themselves or not."""
    lowest = min(rows[i].max_weight for i in saturated)
    on_self = result.self_attention and all(rows[i].argmax == i for i in saturated)
    if len(saturated) == eligible:
        what, whose, target, where = "every row puts", "its", "itself" if on_self else "one token", ""
    else:
        what, whose, where = f"{len(saturated)} of {eligible} rows put", "their", " in those rows"
        target = "themselves" if on_self else "one token"
    return Advice(
        code="saturated", head=head,
        message=(f"{heads_text([head])}: {what} >= {SATURATION_LEVEL:.2f} of {whose} weight on {target} "
                 f"(lowest such weight {lowest:.3f}): the scores{where} are so far apart that the softmax is "
                 "one-hot"),
        remedies=remedies, larger_scale=False,
        rows=saturated, eligible_rows=eligible, heads=[head],
    )


def _flatness_advice(result: AttentionResult, heads: list[int], rows: list[list[RowDiagnostic]],
                     remedies: list[Remedy]) -> Advice:
    """The flat `heads` (rows: [head][row] of every head) in one warning. At a scale factor >= 1 no named scale is
    larger, so the advice can only say "a larger scale"."""
    highest = max(row.max_weight for head in heads for row in rows[head])
    projected = result.config.mode == "projected"
    n_q = len(rows[0])
    return Advice(
        code="flat", head=heads[0],
        message=(f"{heads_text(heads)}: every row is nearly uniform (largest weight {highest:.3f}): "
                 "the scaled scores are too close together to prefer any word" + UNTRAINED_NOTE * projected),
        remedies=remedies,
        larger_scale=result.scale_factor >= 1 and result.config.mode != "trained",
        rows=list(range(n_q)), eligible_rows=n_q, heads=heads,
    )


def remedy_settings(code: str, config: AttentionConfig, scale_factor: float,
                    temperature: float | None) -> list[dict[str, Any]]:
    """The settings that undo a "saturated" or "flat" softmax, as AttentionConfig keywords.

    The one list both the warnings and the trace notes offer. Saturated: the 1/sqrt(d_head) scale,
    cosine similarity and `temperature`, the one `fixing_temperature` solved for the rows (None: no
    temperature changes them). Flat: that temperature and no scale (when the scale shrinks the scores).
    """
    solved = [] if temperature is None else [{"temperature": temperature}]
    if code == "saturated":
        named = [{"scale": "sqrt"}] if config.scale != "sqrt" else []
        named += [{"similarity": "cosine"}] if config.similarity != "cosine" else []
        return named + solved
    return solved + ([{"scale": "none"}] if scale_factor < 1 else [])


TEMPERATURE_STEPS = 10  # bisection steps per bound: a bracket of a few octaves to within 1 % of T (the answer is
# the geometric mean of two bounds each on its own safe side, so their precision only narrows its margin)
NORMAL_OCTAVES = (-1022, 1023)  # temperatures searched stay within float64's normal numbers, 2^-1022 to 2^1023
SATURATION_ODDS = 1 / SATURATION_LEVEL - 1  # a row saturates when its other weights sum to at most this x the top's


def fixing_temperature(scores: np.ndarray, visible: np.ndarray, scale_factor: float) -> float | None:
    """A temperature at which no row saturates and no group's rows are all flat: following the hint clears the
    warning it was given for without earning the opposite one.

    scores [G, r, n_k] are the rows to clear: every head's rows with a choice (the temperature is the whole
    layer's, so a hint for one head must not spoil another), or the one row a trace note is about; visible
    [G, r, n_k] their keys. A row's largest weight falls and its entropy rises as T grows, so "some row
    saturates" holds below one temperature and "every row of a group is flat" above another, and a saturated
    row is never flat (its entropy is at most h(0.95) + 0.05 log2(k - 1), below 0.98 log2 k), so for one group
    the first bound lies below the second. Both are bisected on log T; the answer is their geometric mean,
    written with the fewest significant digits that keep it between them. None when no temperature clears
    them all: groups whose spans do not meet (one head saturates wherever another is flat), or a group whose
    visible scores tie in every row (uniform at any temperature, as with a scale of 0).
    """
    if scale_factor == 0:  # every logit is 0 at any temperature
        return None
    seen = None if visible.all() else visible  # no [G, r, n_k] passes for a mask that hides nothing
    with np.errstate(over="ignore"):
        shown = scores if seen is None else np.where(seen, scores, -np.inf)
        base = (shown - shown.max(axis=-1, keepdims=True)) * scale_factor  # [G, r, n_k]: <= 0, 0 at each row's top
    keys = np.count_nonzero(visible, axis=-1)  # [G, r]
    spreads = -(base if seen is None else np.where(seen, base, 0.0)).min(axis=-1)  # [G, r]: each row's range
    if not (np.isfinite(spreads).all() and spreads.max(axis=-1).all()):  # overflowed, or a group flat at any T
        return None
    lowest = _saturation_bound(base.reshape(-1, base.shape[-1]), keys.ravel())
    highest = min(_flatness_bound(rows, seen, spread, lowest) for rows, seen, spread in zip(base, keys, spreads))
    if lowest > highest:
        return None
    return _shortest_between(math.exp((math.log(lowest) + math.log(highest)) / 2), lowest, highest)


def _saturation_bound(base: np.ndarray, keys: np.ndarray) -> float:
    """The lowest temperature (to within the bisection) at which none of the rows base [m, n_k] (scaled scores
    less each row's top, -inf where hidden; `keys` [m] visible each) saturates.

    A row saturates while its other weights, each exp(-gap_j / T) of the top's, sum to at most SATURATION_ODDS;
    that sum lies between exp(-g / T) and (k - 1) exp(-g / T) for the gap g to the runner-up, so the row's bound
    lies between g / ln((k - 1) / odds) and g / ln(1 / odds), a factor of at most 3.4 for k <= 1000 apart: the
    search starts there, among the rows whose bracket reaches the highest lower end.
    """
    gaps = -np.partition(base, -2, axis=-1)[:, -2]  # [m]: to the runner-up, 0 where the top ties (never saturated)
    gaps[~np.isfinite(gaps)] = 0.0  # a runner-up beyond float64 (an overflowed gap): left to the other remedies
    below = gaps / np.log(np.maximum(keys - 1, 1) / SATURATION_ODDS)  # [m]
    above = gaps / math.log(1 / SATURATION_ODDS)  # [m]
    if not gaps.any():
        return 2.0 ** NORMAL_OCTAVES[0]  # no row can saturate
    start = below.max()
    rows = np.flatnonzero(above >= start)
    return _last_root(lambda chosen, t: _weights_at(base[rows[chosen]], t).max(axis=-1) < SATURATION_LEVEL,
                      len(rows), start, float(above.max()))[1]


def _flatness_bound(base: np.ndarray, keys: np.ndarray, spreads: np.ndarray, lowest: float) -> float:
    """The highest temperature (to within the bisection) at which not every row of one group base [r, n_k] is flat,
    searched from `lowest` up, the temperature no row saturates from: 0 when the group is flat there already
    (no temperature then clears both).

    A row is flat when its entropy lacks at most 2 % of log2 k, 0.02 ln k nats; the lack (the divergence
    from uniform) is at most range^2 / 8 for logits spanning `range` (Hoeffding's lemma), so every row is flat
    from T = spread / sqrt(0.16 ln k) on: the search's top.
    """
    def flat(chosen: np.ndarray, temperature: float) -> np.ndarray:
        return entropy_bits(_weights_at(base[chosen], temperature)) >= FLATNESS_LEVEL * np.log2(keys[chosen])

    with np.errstate(over="ignore"):  # a spread near float64's largest overflows to inf: _last_root clips it
        ceiling = float((spreads / np.sqrt(0.16 * np.log(np.maximum(keys, 2)))).max())
    highest = _last_root(flat, len(base), lowest, max(ceiling, lowest))[0]
    return 0.0 if highest == lowest and flat(np.arange(len(base)), lowest).all() else highest


def _weights_at(base: np.ndarray, temperature: float) -> np.ndarray:
    """The row softmax of base [m, n_k] (scaled scores less each row's top, -inf where hidden) at a temperature.

    base / T <= 0 with a 0 in every row, so exp stays in [0, 1] and each row sums to at least 1: no
    shift, no overflow (a quotient too large is -inf, a weight of 0), unlike a general softmax.
    """
    with np.errstate(over="ignore"):
        weights = np.exp(base / temperature)
    return weights / weights.sum(axis=-1, keepdims=True)


def _last_root(test: Callable[[np.ndarray, float], np.ndarray], count: int, low: float,
               high: float) -> tuple[float, float]:
    """Temperatures (below, above) bracketing the last of `count` rows to pass `test` (rows [c] of them, T ->
    [c] bool, each row False below its own root and True above it), by bisection on log2 T from [low, high]
    (low <= high), both kept within float64's normal numbers (a temperature of 0 would divide 0 by 0).

    A row that passes while another still fails has its root below the last one: it is dropped, so after
    the first steps only the few rows that decide are softmaxed again.
    """
    rows = np.arange(count)
    low_octave, high_octave = (min(max(math.log2(bound) if bound > 0 else -math.inf, NORMAL_OCTAVES[0]),
                                   NORMAL_OCTAVES[1]) for bound in (low, high))  # both within the normal numbers
    for _ in range(TEMPERATURE_STEPS):
        middle = (low_octave + high_octave) / 2
        passed = test(rows, 2.0 ** middle)
        if passed.all():
            high_octave = middle
        else:
            low_octave, rows = middle, rows[~passed]
    return 2.0 ** low_octave, 2.0 ** high_octave


def _shortest_between(value: float, low: float, high: float) -> float:
    """`value` with the fewest significant digits (0.2 rather than 0.2137) that stays within [low, high]."""
    for digits in range(1, 17):
        rounded = float(f"{value:.{digits}g}")
        if low <= rounded <= high:
            return rounded
    return value


class StackRemedies:
    """The remedies for the heads each warning of a stack names, with the largest weights each would give.

    A named setting's weights are computed once for the whole stack, when a warning first needs it; the
    temperature once per sentence, solved for all its heads. None for a trained layer, whose settings are
    fixed by its weights file.
    """

    def __init__(self, stack: AttentionResult) -> None:
        self.stack = stack
        self.maxima: dict[tuple, np.ndarray] = {}  # remedy -> [B, H, n_q] each row's largest weight under it
        self.solved: dict[int, tuple[float, np.ndarray] | None] = {}  # sentence -> temperature, maxima [H, r]
        count, _, n_q, n_k = stack.scores.shape
        self.visible = np.broadcast_to(stack.visible, (count, n_q, n_k))  # [B, n_q, n_k]

    def of(self, sentence: int, heads: list[int], rows: list[int], code: str) -> list[Remedy]:
        """The remedies for `code` ("saturated" or "flat") of some heads of one sentence, judged on `rows` (the
        rows with a choice, the same for every warning of the sentence)."""
        if self.stack.config.mode == "trained":
            return []
        if sentence not in self.solved:
            self.solved[sentence] = self._solve(sentence, rows)
        solved = self.solved[sentence]
        found = []
        for settings in remedy_settings(code, self.stack.config, self.stack.scale_factor,
                                        None if solved is None else solved[0]):
            if "temperature" in settings:
                maxima = solved[1][heads]  # type: ignore[index]  # [G, r]
            else:
                key = tuple(settings.items())
                if key not in self.maxima:
                    self.maxima[key] = _row_maxima(self.stack, settings)
                maxima = self.maxima[key][sentence][heads][:, rows]  # [G, r]
            found.append(Remedy(settings, (float(maxima.min()), float(maxima.max()))))
        return found

    def _solve(self, sentence: int, rows: list[int]) -> tuple[float, np.ndarray] | None:
        """The sentence's `fixing_temperature`, solved for every head (one temperature sets them all), and each
        of the rows' largest weight under it [H, r]; None when no temperature clears them."""
        scores, visible = self.stack.scores[sentence], self.visible[sentence]  # [H, n_q, n_k], [n_q, n_k]
        if len(rows) < scores.shape[1]:  # a mask left rows without a choice (else no [H, n, n] copy)
            scores, visible = scores[:, rows], visible[rows]
        visible = np.broadcast_to(visible, scores.shape)  # [H, r, n_k]
        temperature = fixing_temperature(scores, visible, self.stack.scale_factor)
        if temperature is None:
            return None
        return temperature, scaled(scores, self.stack.scale_factor, temperature, visible)[1].max(axis=-1)


def _row_maxima(stack: AttentionResult, settings: dict[str, Any]) -> np.ndarray:
    """Each row's largest weight [B, H, n_q] if the stack ran under `settings` (a scale or a similarity).

    Recomputed from the heads' own queries and keys, scaled as the engine scales (an overflowing
    factor / temperature is the hard-max limit), so the advice is never NaN.
    """
    config = stack.config
    similarity = settings.get("similarity", config.similarity)
    scores = stack.scores if similarity == config.similarity else similarity_scores(
        stack.queries, stack.keys, similarity)  # [B, H, n_q, n_k]
    factor = stack.scale_factor
    if "scale" in settings:
        factor = replace(config, scale=settings["scale"]).scale_factor(stack.d_head)
    visible = np.expand_dims(stack.visible, -3)
    return np.concatenate([scaled(scores[..., rows, :], factor, config.temperature, visible[..., rows, :])[1]
                           .max(axis=-1) for rows in row_blocks(scores.shape[-2], scores[..., 0, :].size)],
                          axis=-1)  # [B, H, n_q], without [n, n] logits and weights of every head at once


def weight_pulls(shift: Shift, self_attention: bool) -> list[Contribution]:
    """The words `pulled_by` named before it ranked by the shift, kept for programs that read them (the JSON's
    `pulled_by_weight`): keys supplying at least PULL_SHARE of y, at most MAX_PULLS, largest weight first; in
    self-attention the token itself is no context word (in cross-attention index i is another token)."""
    others = [c for c in shift.contributions
              if c.share >= PULL_SHARE and not (self_attention and c.index == shift.index)]
    return others[:MAX_PULLS]
