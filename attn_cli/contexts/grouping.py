"""A word's occurrences in k-means groups (scikit-learn) of their unit-length outputs (cosine geometry, as the
neighbour searches use); given labels, how well the groups and a nearest-neighbour probe recover them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from itertools import islice

import numpy as np

from attn_cli.contexts.result import Example, LabelsReport, Pull, SenseGroup, SensesResult
from attn_cli.contexts.scan import THREADS, word_entry
from attn_cli.contexts.table import Occurrences
from attn_cli.declared import is_whole
from attn_cli.engine.analysis import Neighbor, NeighborSearch
from attn_cli.engine.attention import AttentionResult, row_blocks, unit_rows
from attn_cli.errors import InputError, InputTypeError, Option, SettingsError, require_iterable, shorten

MIN_OCCURRENCES = 3  # two points make one distance: no grouping can be scored
MAX_SEED = 2**32 - 1  # the largest seed k-means takes (numpy's RandomState)
MAX_CLUSTERS = 8  # the largest K tried when none is given
SILHOUETTE_SAMPLE = 2000  # occurrences the silhouette is computed on at most (its cost grows with m^2)
EXAMPLES = 3  # sentences shown per group, those nearest its centre
TIE = 1e-12  # cosines this close to the best count as equally near in the probe


def group_senses(occurrences: Occurrences, *, clusters: int | None = None, labels: Sequence[str] | None = None,
                 seed: int = 0) -> SensesResult:
    """Groups of K = `clusters`, else the K in 2..8 of best silhouette; same seed, same groups. `labels` (one per
    corpus line read) add purity, the adjusted Rand index and the sense probe (`LabelsReport`)."""
    if not isinstance(occurrences, Occurrences):
        raise InputTypeError(f"occurrences must be an attn_cli.Occurrences, not {type(occurrences).__name__}")
    check_seed(seed)
    count = len(occurrences)
    _require_enough(occurrences)
    if clusters is not None and not (is_whole(clusters) and 1 <= clusters <= count):
        raise SettingsError("clusters", f"must be a whole number from 1 to the {count:,} occurrences (got "
                                        f"{clusters!r})")
    if labels is not None:  # read once, one past the lines read: an endless iterator ends, refused by the count
        labels = list(islice(require_iterable("labels", labels, "str, one per corpus line"),
                             occurrences.lines_read + 1))
    line_labels = None if labels is None else occurrence_labels(occurrences, labels)
    from threadpoolctl import threadpool_limits  # scikit-learn's own dependency

    with threadpool_limits(limits=THREADS):
        unit = unit_rows(occurrences.outputs)  # [m, d_out]
        assignments, silhouettes, samples = grouping(unit, clusters, seed)
        alone = word_entry(occurrences.word, occurrences.vectors, occurrences.settings)  # key, layer
        return SensesResult(
            word=occurrences.word, occurrences=occurrences,
            groups=tuple(_groups(occurrences, unit, assignments, samples, alone)), assignments=assignments,
            chosen_by="silhouette" if clusters is None else "given", silhouettes=silhouettes,
            silhouette=None if samples is None else float(np.nanmean(samples)),
            static_neighbors=tuple(_neighbors(occurrences, alone, occurrences.static[None, :])[0]),
            labels_report=None if labels is None or line_labels is None else labels_report(
                occurrences, assignments, line_labels, list(dict.fromkeys(labels))),  # labels in order first seen
            projection=projection(unit), layer=alone[1])


def check_seed(seed: object) -> None:  # a SettingsError, not scikit-learn's
    if not (is_whole(seed) and 0 <= seed <= MAX_SEED):  # type: ignore[operator]
        raise SettingsError("seed", f"must be a whole number from 0 to 2**32 - 1 (got {seed!r})")


def _require_enough(occurrences: Occurrences) -> None:
    """Else an InputError saying why: the first skipped line's own error names the setting that skipped it (a
    table read from a file keeps the count only, so the causes a scan can have are listed)."""
    count, word = len(occurrences), shorten(occurrences.word)  # a table's word: a file may hold any text
    if count >= MIN_OCCURRENCES:
        return
    found, remedy = ((f"found {count} occurrence{'s' * (count != 1)} of {word!r}; senses needs at least "
                      f"{MIN_OCCURRENCES}", ": give a larger corpus") if count else
                     (f"found no occurrence of {word!r} in {occurrences.lines_read:,} lines (a token is the word when "
                      "the vector set looks it up as the word's entry: case and accents as the set's vocabulary has "
                      "them)", "; give a corpus that contains it"))
    skipped, first = occurrences.skipped_lines, occurrences.first_skipped
    lines = f"; {skipped:,} line{'s' * (skipped != 1)} that may hold it {'were' if skipped != 1 else 'was'} skipped"
    why: tuple[str | Option, ...] = (
        (remedy,) if not skipped else
        (f"{lines}, the first (line {first.line:,}): ", *first.error.parts) if first is not None else
        (f"{lines} by the scan (too long for ", Option("max_tokens"), ", without a known word, or refused by ",
         Option("oov", "error"), " or ", Option("mask", "others"), ")", remedy))
    raise InputError(found, *why)


def grouping(unit: np.ndarray, clusters: int | None, seed: int
             ) -> tuple[np.ndarray, dict[int, float], np.ndarray | None]:
    """Assignments, each K's silhouette and each occurrence's, for the given K or the best (smallest among equals)
    of 2..8, at most the number of different outputs."""
    count, distinct = len(unit), len(np.unique(unit, axis=0))  # k-means finds at most as many groups as points
    if clusters is not None and clusters > distinct:
        outputs = f"{distinct:,} different output{'s' * (distinct != 1)}"
        raise SettingsError("clusters", f"must be at most the {outputs} among the {count:,} occurrences (got "
                                        f"{clusters!r}): copies of a context give the same output")
    # every output the same: one group, which no silhouette scores
    tried = [clusters] if clusters is not None else list(range(2, min(MAX_CLUSTERS, distinct, count - 1) + 1)) or [1]
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    silhouettes: dict[int, float] = {}
    scores, candidates = silhouette_scorer(unit, seed), []
    for k in tried:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # fewer distinct points than K: fewer groups
            assignments = numbered(KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(unit))
        samples = scores(assignments)
        if samples is not None:
            silhouettes[k] = float(np.nanmean(samples))
        candidates.append((silhouettes.get(k, -np.inf), assignments, samples))
    _, assignments, samples = max(candidates, key=lambda candidate: candidate[0])  # the first of the best: smallest K
    return assignments, silhouettes, samples


def numbered(labels: np.ndarray) -> np.ndarray:
    """The groups renumbered 0, 1, ... by size (largest first), ties by first occurrence."""
    found, first, sizes = np.unique(labels, return_index=True, return_counts=True)
    order = np.lexsort((first, -sizes))  # by size down, then first occurrence
    renumber = np.empty(len(found), dtype=np.int64)
    renumber[order] = np.arange(len(found))
    return renumber[np.searchsorted(found, labels)]


def silhouette_scorer(unit: np.ndarray, seed: int) -> Callable[[np.ndarray], np.ndarray | None]:
    """Each occurrence's silhouette under a grouping, NaN outside a sample whose distances serve every K; None for
    one group (or one each)."""
    from sklearn.metrics import silhouette_samples

    count = len(unit)
    sample = (np.arange(count) if count <= SILHOUETTE_SAMPLE
              else np.random.RandomState(seed).permutation(count)[:SILHOUETTE_SAMPLE])
    rows = unit[sample]  # [s, d_out], unit length (or zero)
    distances = np.clip(1.0 - rows @ rows.T, 0.0, 2.0)  # [s, s], as sklearn's cosine_distances
    np.fill_diagonal(distances, 0.0)

    def of(assignments: np.ndarray) -> np.ndarray | None:  # [m]
        if not 2 <= len(np.unique(assignments[sample])) <= len(sample) - 1:
            return None
        samples = np.full(count, np.nan)
        samples[sample] = silhouette_samples(distances, assignments[sample], metric="precomputed")
        return samples
    return of


def _neighbors(occurrences: Occurrences, alone: tuple[str, AttentionResult], queries: np.ndarray
               ) -> list[list[Neighbor]]:
    settings, (key, layer) = occurrences.settings, alone
    if settings.neighbors == 0:
        return [[] for _ in queries]
    search = NeighborSearch.shared(occurrences.vectors, layer, settings.neighbor_vocab)
    return search.nearest(queries, settings.neighbors, [key] * len(queries))


def _groups(occurrences: Occurrences, unit: np.ndarray, assignments: np.ndarray, samples: np.ndarray | None,
            alone: tuple[str, AttentionResult]) -> list[SenseGroup]:
    members = [np.flatnonzero(assignments == g) for g in range(int(assignments.max()) + 1)]
    centres = np.array([unit[rows].mean(axis=0) for rows in members])  # [K, d_out]
    neighbors = _neighbors(occurrences, alone, centres)
    return [SenseGroup(number=g + 1, members=rows, centre=centres[g],
                       silhouette=None if samples is None or np.isnan(samples[rows]).all()
                       else float(np.nanmean(samples[rows])),
                       neighbors=tuple(neighbors[g]), pulled_by=tuple(pulled_by(occurrences, rows)),
                       examples=tuple(examples(occurrences, unit, rows, centres[g])))
            for g, rows in enumerate(members)]


def pulled_by(occurrences: Occurrences, rows: np.ndarray) -> list[Pull]:
    """The `neighbors` (5 when 0) context words, case-folded, of largest mean share of the shift, first seen first."""
    totals: Counter[str] = Counter()
    for row in rows.tolist():
        for word, share in zip(occurrences.context_words[row], occurrences.context_shares[row].tolist()):
            totals[word.casefold()] += share
    ranked = totals.most_common(occurrences.settings.neighbors or 5)  # a stable sort: first seen first
    return [Pull(word, total / len(rows)) for word, total in ranked]


def examples(occurrences: Occurrences, unit: np.ndarray, rows: np.ndarray, centre: np.ndarray) -> list[Example]:
    """The EXAMPLES occurrences nearest the group's centre (cosine), nearest first, ties in corpus order."""
    cosines = unit[rows] @ unit_rows(centre)
    order = np.lexsort((rows, -cosines))[:EXAMPLES]
    return [Example(index=int(rows[i]), line=int(occurrences.line[rows[i]]),
                    position=int(occurrences.position[rows[i]]), sentence=occurrences.sentence[rows[i]],
                    cosine=float(cosines[i])) for i in order.tolist()]


def occurrence_labels(occurrences: Occurrences, labels: list[str]) -> list[str]:
    """Each occurrence's line's label, from one per line read or through the last line with an occurrence."""
    if not all(isinstance(label, str) for label in labels):
        raise InputTypeError("labels must be a sequence of str, one per corpus line")
    needed = int(occurrences.line[-1]) - occurrences.first_line + 1 if len(occurrences) else 0
    if not needed <= len(labels) <= occurrences.lines_read:
        raise InputError(f"the labels give {len(labels):,} labels for a corpus of {occurrences.lines_read:,} lines; "
                         "give one label per line")
    return [labels[number - occurrences.first_line] for number in occurrences.line.tolist()]


def labels_report(occurrences: Occurrences, assignments: np.ndarray, labels: list[str],
                  order: list[str]) -> LabelsReport:
    """Purity, adjusted Rand index, each group's commonest label, the probe of outputs and two baselines."""
    from sklearn.metrics import adjusted_rand_score

    codes = {label: code for code, label in enumerate(order)}
    truth = np.array([codes[label] for label in labels], dtype=np.int64)  # labels as codes, first seen first
    majority = []
    for g in range(int(assignments.max()) + 1):
        counts = np.bincount(truth[assignments == g], minlength=len(order))
        top = int(np.argmax(counts))  # the label first seen among the commonest
        majority.append((g + 1, order[top], float(counts[top] / counts.sum())))
    purity = sum(share * int(np.sum(assignments == g - 1)) for g, _, share in majority) / len(truth)
    static = np.broadcast_to(occurrences.static, occurrences.outputs.shape)  # blind to context: one vector for all
    group_labels = [label for _, label, _ in majority]
    return LabelsReport(
        purity=float(purity), adjusted_rand=float(adjusted_rand_score(truth, assignments)), groups=tuple(majority),
        probe={name: probe(vectors, truth, order) for name, vectors in
               (("outputs", occurrences.outputs), ("static", static), ("bag_of_words", occurrences.bags))},
        labels=tuple(labels), misgrouped=tuple(row for row, (label, group) in
                                               enumerate(zip(labels, assignments.tolist()))
                                               if label != group_labels[group]))


def probe(vectors: np.ndarray, truth: np.ndarray, order: list[str]) -> dict[str, float]:
    """Leave-one-out nearest neighbour by cosine: accuracy and macro-F1. Ties give their commonest label, so a vector
    shared by all (the static baseline) predicts the others' majority."""
    from sklearn.metrics import f1_score

    predicted = nearest_labels(unit_rows(vectors), truth, len(order))
    return {"accuracy": float(np.mean(predicted == truth)),
            "macro_f1": float(f1_score(truth, predicted, average="macro", labels=np.unique(truth)))}


def nearest_labels(unit: np.ndarray, truth: np.ndarray, labels: int) -> np.ndarray:
    """The probe's prediction for each row, never all [m, m] cosines at once."""
    count = len(unit)
    one_hot = np.zeros((count, labels))
    one_hot[np.arange(count), truth] = 1.0
    predicted = np.empty(count, dtype=np.int64)
    for rows in row_blocks(count, count):
        index = np.arange(count)[rows]  # [b]
        cosines = unit[index] @ unit.T  # [b, m]
        cosines[np.arange(len(index)), index] = -np.inf  # leave one out
        nearest = cosines >= cosines.max(axis=1, keepdims=True) - TIE  # [b, m]
        predicted[index] = np.argmax(nearest @ one_hot, axis=1)  # the first of the commonest: first seen
    return predicted


def projection(unit: np.ndarray) -> np.ndarray:
    """[m, 2] the outputs on their two main directions (PCA by SVD), signs fixed so one input gives one picture."""
    centred = unit - unit.mean(axis=0)
    _, _, directions = np.linalg.svd(centred, full_matrices=False)  # [r, d_out], r = min(m, d_out)
    directions = directions[:2]
    peaks = directions[np.arange(len(directions)), np.argmax(np.abs(directions), axis=1)]
    directions = directions * np.where(peaks < 0, -1.0, 1.0)[:, None]
    points = np.zeros((len(unit), 2))
    points[:, :len(directions)] = centred @ directions.T
    return points
