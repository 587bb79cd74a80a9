"""`senses` over a large corpus against the full-matrix path, side by side in one run (issue 27, item 2).

A generated corpus of --sentences lines of 12-25 words drawn from the embedded set's most
frequent words (letters only, "bank" left out), --with-word of them holding "bank" at a random
place. `attn_cli.senses("bank", lines)` is timed as a whole (the scan: the pre-filter and one
attention row per occurrence; then the grouping: k-means for K = 2..8, silhouettes, neighbours),
and its scan alone. The baseline is what the issue measured before: `explain_many` over the same
corpus (neighbours and diagnostics off, its cheapest form) taking the word's rows, the whole
[n, n] matrix of every sentence. In-process timings, after one warm-up call of each (scikit-learn's
import, the neighbour search's rows); medians of --runs. Peak memory is not measured here: the
scan keeps only the occurrences (tests/test_senses.py checks that the table holds them alone).

    python benchmarks/bench_senses.py [--runs 3] [--baseline-runs 1] [--sentences 100000] [--with-word 2000]
                                      [--smoke]

There is no --baseline-tree: an older checkout has no `senses` to run; the baseline is the full-matrix
path in this tree.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

WORD = "bank"
VOCABULARY_DRAWN = 20_000


def corpus(count: int, with_word: int, seed: int = 0) -> list[str]:
    """`count` lines of 12-25 words of the embedded set; `with_word` of them (spread at random) hold WORD once."""
    import attn_cli

    vectors = attn_cli.load_vectors()
    words = [word for word in vectors.words[:VOCABULARY_DRAWN] if word.isalpha() and word != WORD]
    rng = random.Random(seed)
    holding = set(rng.sample(range(count), with_word))
    lines = []
    for number in range(count):
        line = [rng.choice(words) for _ in range(rng.randint(12, 25))]
        if number in holding:
            line[rng.randrange(len(line))] = WORD
        lines.append(" ".join(line))
    return lines


def full_matrix_rows(lines: list[str]) -> int:
    """The baseline: every line through explain_many (the whole matrix), the word's rows taken."""
    import attn_cli

    rows = 0
    for result in attn_cli.explain_many(lines, neighbors=0):
        if isinstance(result, attn_cli.LineError):
            continue
        taken = [i for i, token in enumerate(result.tokenized.tokens) if token.key == WORD]
        rows += len(result.outputs[taken])  # the rows a caller would take
    return rows


def timed(work: Callable[[], object], runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds of each run: on a busy machine the CPU time says what the work itself costs."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        work()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-runs", type=int, default=1)
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--with-word", type=int, default=2_000)
    parser.add_argument("--smoke", action="store_true", help="a few-second run for CI: 1,000 lines, 60 with the word")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.baseline_runs, args.sentences, args.with_word = 1, 1, 1_000, 60
    import attn_cli

    lines = corpus(args.sentences, args.with_word)
    attn_cli.senses(WORD, lines[:5_000])  # warm-up: scikit-learn's import, the neighbour search's rows
    full_matrix_rows(lines[:500])
    whole = timed(lambda: attn_cli.senses(WORD, lines), args.runs)
    scan = timed(lambda: attn_cli.occurrences(WORD, lines), args.runs)
    baseline = timed(lambda: full_matrix_rows(lines), args.baseline_runs)
    found = attn_cli.senses(WORD, lines)
    assert len(found.occurrences) == args.with_word
    print(f"corpus: {args.sentences:,} lines of 12-25 words, {args.with_word:,} with {WORD!r}; "
          f"{found.clusters} groups (silhouette {found.silhouette:.3f})")
    for name, (wall, cpu) in (("senses (scan + grouping)", whole), ("  its scan alone (occurrences)", scan),
                              ("baseline: explain_many, full matrix", baseline)):
        print(f"{name:<36} median {statistics.median(wall):7.3f} s (CPU {statistics.median(cpu):7.3f} s)  "
              f"runs {fmt(wall)}")
    ratio = statistics.median(baseline[0]) / statistics.median(scan[0])
    met = statistics.median(whole[0]) <= 3
    print(f"baseline / scan: {ratio:.1f} x; target: senses <= 3 s ({'met' if met else 'NOT met'})")


def fmt(seconds: list[float]) -> str:
    return ", ".join(f"{value:.3f}" for value in seconds)


if __name__ == "__main__":
    main()
