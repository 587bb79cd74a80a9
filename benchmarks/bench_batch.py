"""Batch throughput and memory of `explain -`, against a loop of one process per sentence, side by side.

A cached synthetic 400,000 x 300 set (written straight in the importer's layout,
as bench_vectors.py does) and files of random ~12-word sentences drawn from its
20,000 most frequent words. The baseline runs `attn-cli explain SENTENCE --json
--neighbors 0` once per sentence on a sample of --sample calls; its per-sentence
time is extrapolated to the batch size (the table says so). Every figure is a
whole process (start-up included); peak RSS comes from wait4.

`--baseline-tree PATH` runs every batch case with PYTHONPATH=PATH too (another
checkout, e.g. `git worktree add /tmp/base COMMIT`), interleaved run by run with
this tree so both see the same load, and adds its rate and "x baseline tree".
`--smoke` is a few-second run for CI: a 5,000 x 50 set, 300 lines, one run each.
The sgemm line measures this machine's float32 matrix product at the neighbour
search's shape, the ceiling of `--neighbors 5`; each tree's `--neighbors 5` rate is
then given as a share of it. The floor line gives the best any code could do for full
documents: start-up (a one-line batch) plus orjson alone writing the same documents again
(parsed from one run's output), no tokenizing, attention or document building.

    python benchmarks/bench_batch.py [--runs 3] [--sentences 10000] [--neighbor-sentences 1000]
                                     [--memory 1000,100000] [--sample 50] [--words 400000] [--dims 300]
                                     [--baseline-tree PATH] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vectors import PYTHON, run, synthetic_set  # noqa: E402  (same folder: the process timer, the set)

VOCABULARY_DRAWN = 20_000
THIS_TREE = str(Path(__file__).resolve().parent.parent)


def sentence_file(path: Path, count: int, seed: int = 0, vocabulary: int = VOCABULARY_DRAWN) -> None:
    rng = random.Random(seed)
    with path.open("w") as out:
        for _ in range(count):
            out.write(" ".join(f"w{rng.randrange(3, vocabulary)}" for _ in range(rng.randint(10, 14))) + "\n")


def timed_batch(args: list[str], lines: Path, env: dict, tree: str = THIS_TREE) -> tuple[float, float]:
    """(seconds, peak MB) of one `attn-cli explain - ...` of the checkout `tree` reading `lines` on stdin."""
    with lines.open("rb") as stdin:
        return run_with_stdin([PYTHON, "-m", "attn_cli", "explain", "-", *args], stdin, {**env, "PYTHONPATH": tree})


def sgemm_gflops(queries: int, words: int, dims: int, repeats: int = 5) -> float:
    """The best float32 [queries, dims] x [dims, words] product of `repeats`, in GFLOP/s: the neighbour
    search's own shape (a group's contextual queries against the vocabulary's unit rows)."""
    import time

    import numpy as np

    rng = np.random.default_rng(0)
    left = rng.standard_normal((queries, dims), dtype=np.float32)
    right = rng.standard_normal((words, dims), dtype=np.float32)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        left @ right.T
        best = min(best, time.perf_counter() - start)
    return 2 * queries * words * dims / best / 1e9


def run_with_stdin(command: list[str], stdin, env: dict) -> tuple[float, float]:
    import time

    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        raise SystemExit(f"failed ({status}): {' '.join(command)}")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--neighbor-sentences", type=int, default=1_000)
    parser.add_argument("--memory", default="1000,100000")
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--words", type=int, default=400_000)
    parser.add_argument("--dims", type=int, default=300)
    parser.add_argument("--baseline-tree", metavar="PATH", help="another checkout, run side by side")
    parser.add_argument("--smoke", action="store_true", help="a few seconds: tiny set, few lines, one run")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.sentences, args.neighbor_sentences, args.memory = 1, 200, 50, "50,200"
        args.sample, args.words, args.dims = 1, 5_000, 50
    with tempfile.TemporaryDirectory(prefix="attn-batch-") as scratch:
        scratch = Path(scratch)
        # the children run here, never in a checkout: `python -m attn_cli` puts the working folder first on
        # sys.path, so from a checkout both trees would run its attn_cli whatever PYTHONPATH says
        os.chdir(scratch)
        env = {**os.environ, "ATTN_CLI_CACHE": str(scratch / "cache")}
        os.environ["ATTN_CLI_CACHE"] = env["ATTN_CLI_CACHE"]
        stand_in = synthetic_set(scratch, args.words, args.dims)
        vectors = ["--vectors", str(stand_in)]
        batch = scratch / "batch.txt"
        drawn = min(VOCABULARY_DRAWN, args.words)
        sentence_file(batch, args.sentences, vocabulary=drawn)
        few = scratch / "few.txt"
        sentence_file(few, args.neighbor_sentences, seed=1, vocabulary=drawn)
        sample = few.read_text().splitlines()[: args.sample]
        print(f"cached {args.words:,} x {args.dims} synthetic set; {os.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.1f}; {args.runs} run(s) each, medians\n")

        baseline = []
        for _ in range(args.runs):
            times = [run([PYTHON, "-m", "attn_cli", "explain", text, "--json", "--neighbors", "0", *vectors],
                         {**env, "PYTHONPATH": THIS_TREE})[0] for text in sample]
            baseline.append(sum(times) / len(times))
        per_call = statistics.median(baseline)
        rows: list[tuple] = [(f"baseline: one `explain --json --neighbors 0` per sentence ({args.sample} calls, "
                              "extrapolated)", 1, (per_call, None))]
        cases = [
            (f"explain - --json --neighbors 0 ({args.sentences:,} lines)", ["--json", "--neighbors", "0"], batch,
             args.sentences),
            ("explain - --json --neighbors 0 --fields tokens,shifts.cosine",
             ["--json", "--neighbors", "0", "--fields", "tokens,shifts.cosine"], batch, args.sentences),
            ("explain - --plain --neighbors 0", ["--plain", "--neighbors", "0"], batch, args.sentences),
            (f"explain - --json --neighbors 5 over {min(50_000, args.words):,} words "
             f"({args.neighbor_sentences:,} lines)",
             ["--json", "--neighbors", "5"], few, args.neighbor_sentences),
        ]
        trees = [THIS_TREE] + ([args.baseline_tree] if args.baseline_tree else [])
        for name, options, lines, count in cases:
            samples: dict[str, list[tuple[float, float]]] = {tree: [] for tree in trees}
            for _ in range(args.runs):  # interleaved: both trees see the same load
                for tree in trees:
                    samples[tree].append(timed_batch([*options, *vectors], lines, env, tree))
            rows.append((name, count, *(summary(samples[tree]) for tree in trees)))
        other = "| baseline tree /s | x baseline tree | baseline tree RSS MB " if args.baseline_tree else ""
        print(f"| {'command':<92} | sentences/s | x baseline | peak RSS MB {other}|")
        print(f"|{'-' * 94}|-------------|------------|-------------" +
              ("|------------------|-----------------|----------------------" if args.baseline_tree else "") + "|")
        for name, count, (seconds, peak), *base in rows:
            rate = count / seconds
            peak_cell = "" if peak is None else f"{peak:.0f}"
            cells = f"| {name:<92} | {rate:11,.0f} | {rate * per_call:10.1f} | {peak_cell:>11} "
            if base:
                base_rate = count / base[0][0]
                cells += f"| {base_rate:16,.0f} | {rate / base_rate:15.2f} | {base[0][1]:20.0f} "
            print(cells + "|")

        print("\nPeak memory against the number of lines (explain - --json --neighbors 0)\n")
        print("| lines | seconds | sentences/s | peak RSS MB |")
        print("|-------|---------|-------------|-------------|")
        for count in (int(item) for item in args.memory.split(",")):
            lines = scratch / f"memory-{count}.txt"
            sentence_file(lines, count, seed=2, vocabulary=drawn)
            seconds, peak = timed_batch(["--json", "--neighbors", "0", *vectors], lines, env)
            print(f"| {count:,} | {seconds:.1f} | {count / seconds:,.0f} | {peak:.0f} |")
        print_floor(batch, args.sentences, [*vectors], env)
        # last: its arrays would count in the peak RSS of every child forked after it
        words = min(50_000, args.words)
        gflops = sgemm_gflops(16 * 12, words, args.dims)
        limit = gflops * 1e9 / (2 * 12 * words * args.dims)
        print(f"\nsgemm ceiling: [192, {args.dims}] x [{args.dims}, {words:,}] float32 at {gflops:,.0f} GFLOP/s; "
              f"12 contextual queries a sentence allow at most {limit:,.0f} sentences/s with --neighbors")
        name, count, *timed = rows[-1]  # the --neighbors 5 case
        for tree, (seconds, _) in zip(trees, timed):
            print(f"--neighbors 5, {'this' if tree == THIS_TREE else 'baseline'} tree: {count / seconds:,.0f} "
                  f"sentences/s, {count / seconds / limit:.2f} x the ceiling")


def print_floor(lines: Path, count: int, vectors: list[str], env: dict) -> None:
    """Start-up plus orjson alone re-encoding the documents of one full run: the rate no code can beat."""
    import time

    import orjson

    one = lines.parent / "one.txt"
    one.write_text(lines.read_text().split("\n", 1)[0] + "\n")
    start_up = min(timed_batch(["--json", "--neighbors", "0", *vectors], one, env)[0] for _ in range(3))
    with lines.open("rb") as stdin:
        output = subprocess.run([PYTHON, "-m", "attn_cli", "explain", "-", "--json", "--neighbors", "0", *vectors],
                                stdin=stdin, capture_output=True, check=True, env={**env, "PYTHONPATH": THIS_TREE})
    documents = [orjson.loads(line) for line in output.stdout.splitlines()]
    begin = time.perf_counter()
    for document in documents:
        orjson.dumps(document)
    encoding = time.perf_counter() - begin
    size = len(output.stdout) / len(documents) / 1024
    print(f"\nfloor, full documents ({size:.1f} KB each): start-up {start_up:.2f} s + orjson alone {encoding:.2f} s "
          f"= at most {count / (start_up + encoding):,.0f} sentences/s for {count:,} lines "
          f"({count / encoding:,.0f}/s without start-up)")


def summary(samples: list[tuple[float, float]]) -> tuple[float, float]:
    """(median seconds, largest peak RSS MB) of a case's runs."""
    return statistics.median(t for t, _ in samples), max(m for _, m in samples)


if __name__ == "__main__":
    main()
