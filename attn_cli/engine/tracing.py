"""One word through attention step by step as plain data, its sum added term by term to match the matrix form."""

from __future__ import annotations

import math

import numpy as np

from attn_cli.engine.analysis import (FLATNESS_LEVEL, SATURATION_LEVEL, UNTRAINED_NOTE, entropy_bits,
                                     fixing_temperatures, remedy_settings)
from attn_cli.engine.attention import AttentionConfig, AttentionResult, rerun, static_outputs

EXP_LIMIT = 700.0  # exp(l) overflows float64 above ~709: beyond this, shift by the row's largest logit


def vector_summary(vector: np.ndarray, dims: int) -> dict:
    """The first `dims` coordinates, the length and the dimension count of a vector."""
    vector = np.asarray(vector, dtype=np.float64)
    return {"first": vector[:dims].tolist(), "norm": float(np.linalg.norm(vector)), "dims": int(vector.shape[0])}


def trace_token(result: AttentionResult, embeddings: np.ndarray, index: int, texts: list[str], dims: int,
                shuffle_check: bool = False, learned_positions: bool = False) -> dict:
    """Every step of query `index` through every head, the result, and the notes that apply."""
    steps = [head_steps(result, head, index, texts, dims) for head in range(result.n_heads)]
    concatenated = np.concatenate([total for _, total in steps])  # [width]: the heads' own sums side by side
    p = result.projections
    per_query = concatenated if p is None else p.output(concatenated)  # [width] x [width, d] (+ b_O) -> [d]
    difference = max(float(np.max(np.abs(per_query - result.outputs[index]))),
                     float(np.max(np.abs(concatenated - np.concatenate(result.head_outputs[:, index, :])))))
    n_q, n_k = result.weights.shape[1:]
    return {
        "token": texts[index], "index": index, "heads": [block for block, _ in steps],
        "concatenation": vector_summary(concatenated, dims) if result.n_heads > 1 else None,
        "output_projection": None if p is None or p.w_o is None else {
            "shape": list(p.w_o.shape), "output": vector_summary(per_query, dims)},
        "output": vector_summary(result.outputs[index], dims),
        "matrix_form": {  # the shapes of softmax(Q K^T x scale / T) V, and the engine's row for this query
            "queries_shape": [n_q, result.d_head], "keys_shape": [n_k, result.d_head],
            "values_shape": [n_k, result.d_head], "weights_shape": [n_q, n_k], "heads": result.n_heads,
            "output": vector_summary(result.outputs[index], dims)},
        "matrix_form_max_abs_diff": difference,
        "notes": teaching_notes(result, embeddings, index, texts, shuffle_check, learned_positions),
    }


def head_steps(result: AttentionResult, head: int, index: int, texts: list[str],
               dims: int) -> tuple[dict, np.ndarray]:
    """One query's scores, exps, weights and terms in one head, and their sum [d_head] added term by term."""
    query, logits, weights = result.queries[head, index], result.logits[head, index], result.weights[head, index]
    peak = float(np.max(logits))
    shift = peak if peak > EXP_LIMIT else 0.0  # 0 unless exp would overflow
    exps = np.exp(logits - shift)  # [n_k], 0 where masked
    total = np.zeros(result.d_head)
    keys = []
    for j, text in enumerate(texts[: logits.shape[0]]):
        term = weights[j] * result.values[head, j]  # [d_head]
        total = total + term  # the per-query sum, one term at a time
        keys.append({
            "token": text, "index": j, "key": vector_summary(result.keys[head, j], dims),
            "value": vector_summary(result.values[head, j], dims), "dot": float(query @ result.keys[head, j]),
            "score": float(result.scores[head, index, j]), "masked": not result.visible[index, j],
            "logit": float(logits[j]) if np.isfinite(logits[j]) else None,  # None: masked
            "exp": float(exps[j]), "weight": float(weights[j]), "term": vector_summary(term, dims)})
    block = {"index": head, "columns": [head * result.d_head, (head + 1) * result.d_head],
             "query": vector_summary(query, dims), "keys": keys, "exp_shift": shift, "exp_sum": float(np.sum(exps)),
             "weight_sum": float(np.sum(weights)), "output": vector_summary(total, dims)}
    return block, total


def teaching_notes(result: AttentionResult, embeddings: np.ndarray, index: int, texts: list[str],
                   shuffle_check: bool, learned_positions: bool = False) -> list[dict]:
    """The notes whose condition holds for this query, each with the numbers that show it."""
    notes = [convexity_note(result, index)]
    for head in range(result.n_heads):
        said = any(note["code"] == "flat" for note in notes)  # random projections are said to be untrained once
        notes += row_shape_notes(result, embeddings, head, index, texts, untrained_said=said)
    if result.config.mask == "causal" and index < len(texts) - 1:
        future = list(range(index + 1, len(texts)))
        largest = max(float(result.weights[head, index, j]) for head in range(result.n_heads) for j in future)
        notes.append({"code": "causal", "future": future, "largest_future_weight": largest,
                      "message": f"causal mask: “{texts[index]}” may not look ahead, so "
                                 f"{', '.join(f'“{texts[j]}”' for j in future)} get score −∞ and weight "
                                 f"{largest:g} in every head"})
    if len(texts) > 1 and (shuffle_check or order_blind(result.config)):
        notes.append(permutation_note(result, embeddings, texts, shuffle_check, learned_positions))
    return notes


def convexity_note(result: AttentionResult, index: int) -> dict:
    """Each head's output lies in the range of the values it weighs; after W_O, how far it is from any mix."""
    visible = result.visible[index]
    inside = 0
    for head in range(result.n_heads):
        rows = result.values[head][visible]  # [n_visible, d_head]
        slack = 1e-12 * (1.0 + np.max(np.abs(rows), axis=0))  # up to rounding
        point = result.head_outputs[head, index]
        inside += int(np.sum((point >= rows.min(axis=0) - slack) & (point <= rows.max(axis=0) + slack)))
    dims = result.n_heads * result.d_head  # every head's coordinates
    note: dict = {"code": "convex", "inside": inside, "dims": dims, "after_projection": None,
                  "message": "the weights are ≥ 0 and sum to 1, so y is a convex combination of the values v_j: y "
                             f"lies within the values' range in {inside} of {dims} coordinates (checked)"}
    if result.projections is None or result.projections.w_o is None:
        note["message"] += "; an output projection W_O after several heads would break this"
        note["see_with"] = {"mode": "projected", "heads": 2, "output_projection": True}
        return note
    mapped = static_outputs(result)[visible]  # [n_visible, d]: each token's own value through W_O
    miss = affine_miss(result.outputs[index], mapped)
    outside = miss > 1e-9 * (1.0 + float(np.max(np.abs(mapped))))
    note["after_projection"] = {"miss": miss, "outside": bool(outside)}
    note["message"] += (f"; after W_O it is not: no mix of the mapped values v_j W_O with weights summing to 1 "
                        f"gives the final vector (the closest misses by {miss:.3g}), because each head mixed "
                        "with its own weights" if outside else
                        f"; after W_O it still is, of the mapped values v_j W_O (the closest mix misses by "
                        f"{miss:.1e}): a single head's y W_O = Σ w_j (v_j W_O)")
    return note


def affine_miss(point: np.ndarray, rows: np.ndarray) -> float:
    """Distance from `point` [d] to the affine hull of rows [n, d] by least squares: outside it is outside the mix."""
    anchor = rows[-1]
    directions = (rows[:-1] - anchor).T  # [d, n - 1]
    if directions.shape[1] == 0:
        return float(np.linalg.norm(point - anchor))
    mix, *_ = np.linalg.lstsq(directions, point - anchor, rcond=None)  # [n - 1]
    return float(np.linalg.norm(directions @ mix + anchor - point))


def row_shape_notes(result: AttentionResult, embeddings: np.ndarray, head: int, index: int,
                    texts: list[str], untrained_said: bool = False) -> list[dict]:
    """A saturated (one-hot) or flat (uniform) row, with the weights a suggested setting would give."""
    logits, weights = result.logits[head, index], result.weights[head, index]
    visible = np.flatnonzero(result.visible[index])
    if len(visible) < 2:
        return []
    top = int(np.argmax(weights))
    label = f"head {head + 1}: " if result.n_heads > 1 else ""
    if weights[top] >= SATURATION_LEVEL:
        ranked = sorted(visible, key=lambda j: -logits[j])
        gap = float(logits[ranked[0]]) - float(logits[ranked[1]])
        return [{
            "code": "saturated", "head": head, "max_weight": float(weights[top]), "argmax": top,
            "runner_up": int(ranked[1]), "logit_gap": gap,
            "message": (f"{label}the softmax saturates: “{texts[top]}” takes {weights[top]:.3f} of the weight, "
                        f"because its scaled score beats the next (“{texts[ranked[1]]}”) by {gap:.3g}, and "
                        f"exp({gap:.3g}) ≈ {math.exp(min(gap, EXP_LIMIT)):.3g}: the other words "
                        f"{'it sees ' if len(visible) < len(weights) else ''}barely count"),
            "alternatives": alternatives(result, embeddings, "saturated", head, index)}]
    entropy = entropy_bits(weights)
    if entropy < FLATNESS_LEVEL * math.log2(len(visible)):
        return []
    spread = float(logits[visible].max() - logits[visible].min())
    return [{
        "code": "flat", "head": head, "max_weight": float(weights[top]), "entropy_bits": entropy,
        "logit_spread": spread,
        "message": (f"{label}the softmax is nearly flat: the largest weight is {weights[top]:.3f} against "
                    f"1/{len(visible)} = {1 / len(visible):.3f} for uniform, because the scaled scores lie "
                    f"within {spread:.3g} of each other"
                    + UNTRAINED_NOTE * (result.config.mode == "projected" and not untrained_said)),
        "alternatives": alternatives(result, embeddings, "flat", head, index)}]


def alternatives(result: AttentionResult, embeddings: np.ndarray, code: str, head: int, index: int) -> list[dict]:
    """This row's weights under each remedy for `code`; none for a trained layer, whose weights fix its settings."""
    if result.config.mode == "trained":
        return []
    row = (head, slice(index, index + 1))  # [1, n_k] of the head: the row as a group of one
    [solved] = fixing_temperatures(result.scores[row][None, None], result.visible[None, None, index:index + 1],
                                   result.scale_factor).tolist()  # [S = 1, G = 1, r = 1, n_k]
    temperature = None if math.isnan(solved) else solved
    return [{"settings": settings, "weights": rerun(result, embeddings, **settings).weights[head, index].tolist()}
            for settings in remedy_settings(code, result.config, result.scale_factor, temperature)]


def permutation_note(result: AttentionResult, embeddings: np.ndarray, texts: list[str], check: bool,
                     learned_positions: bool = False) -> dict:
    """Whether attention sees word order; with `check`, proved by rotating the words and rerunning the engine."""
    note: dict = {"code": "permutation", "checked": check, "order": None, "max_abs_diff": None}
    config = result.config
    if learned_positions:
        note["message"] = ("the layer sees word order only through its inputs x, which carry the model's learned "
                           "positions: reordering the words changes x, while reordering x's rows only reorders "
                           "the outputs")
    elif order_blind(config):
        note["message"] = (f"no positional encodings and {'no' if config.mask == 'none' else 'the others'} "
                           "mask: word order is invisible, so shuffling the words only shuffles the outputs")
    else:
        reasons = [f"{config.positions} positions"] * (config.positions != "none")
        reasons += ["the causal mask"] * (config.mask == "causal")
        note["message"] = f"word order matters here because of {' and '.join(reasons)}"
    if not check:
        note["see_with"] = {"shuffle_check": True}
        return note
    n = len(texts)
    order = [(i + 1) % n for i in range(n)]  # shuffled[p] = original[order[p]]
    shuffled = rerun(result, embeddings[order])
    back = np.argsort(order)  # original i sits at shuffled position back[i]
    difference = max(float(np.max(np.abs(shuffled.outputs[back] - result.outputs))),
                     float(np.max(np.abs(shuffled.weights[:, back][:, :, back] - result.weights))))
    note.update(order=order, max_abs_diff=difference)
    note["message"] += (f"; checked: in the order “{' '.join(texts[j] for j in order)}” the outputs, put back in "
                        f"the original order, differ by at most {difference:.3g}")
    return note


def order_blind(config: AttentionConfig) -> bool:
    """True when attention cannot see word order: no position codes and a mask that moves with the words."""
    return config.positions == "none" and config.mask != "causal"
