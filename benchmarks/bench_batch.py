"""Batch throughput and memory of `explain -`, against a loop of one process per sentence, side by side.

A cached synthetic 400,000 x 300 set (written straight in the importer's layout,
as bench_vectors.py does) and files of random ~12-word sentences drawn from its
20,000 most frequent words. The baseline runs `attn-cli explain SENTENCE --json
--neighbors 0` once per sentence on a sample of --sample calls; its per-sentence
time is extrapolated to the batch size (the table says so). Every figure is a
whole process (start-up included); peak RSS comes from wait4.

    python benchmarks/bench_batch.py [--runs 3] [--sentences 10000] [--neighbor-sentences 1000]
                                     [--memory 1000,100000] [--sample 50] [--words 400000] [--dims 300]
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
from bench_vectors import PYTHON, run  # noqa: E402  (same folder: the shared process timer)

from attn_cli.vectors.cache import Fingerprint, cache_root  # noqa: E402

VOCABULARY_DRAWN = 20_000


def sentence_file(path: Path, count: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("w") as out:
        for _ in range(count):
            out.write(" ".join(f"w{rng.randrange(3, VOCABULARY_DRAWN)}" for _ in range(rng.randint(10, 14))) + "\n")


def timed_batch(args: list[str], lines: Path, env: dict) -> tuple[float, float]:
    """(seconds, peak MB) of one `attn-cli explain - ...` reading `lines` on stdin."""
    with lines.open("rb") as stdin:
        return run_with_stdin([PYTHON, "-m", "attn_cli", "explain", "-", *args], stdin, env)


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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attn-batch-") as scratch:
        scratch = Path(scratch)
        env = {**os.environ, "ATTN_CLI_CACHE": str(scratch / "cache")}
        os.environ["ATTN_CLI_CACHE"] = env["ATTN_CLI_CACHE"]
        stand_in = scratch / "synthetic.txt"  # the cache is keyed to this small file
        stand_in.write_text("money 1 2\n")
        folder = cache_root() / "v1" / Fingerprint.of(stand_in).key("glove", None)
        subprocess.run([PYTHON, str(Path(__file__).parent / "bench_vectors.py"), "--make-cache", str(folder),
                        str(args.words), str(args.dims)], check=True)
        vectors = ["--vectors", str(stand_in)]
        batch = scratch / "batch.txt"
        sentence_file(batch, args.sentences)
        few = scratch / "few.txt"
        sentence_file(few, args.neighbor_sentences, seed=1)
        sample = few.read_text().splitlines()[: args.sample]
        print(f"cached {args.words:,} x {args.dims} synthetic set; {os.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.1f}; {args.runs} run(s) each, medians\n")

        baseline = []
        for _ in range(args.runs):
            times = [run([PYTHON, "-m", "attn_cli", "explain", text, "--json", "--neighbors", "0", *vectors], env)[0]
                     for text in sample]
            baseline.append(sum(times) / len(times))
        per_call = statistics.median(baseline)
        rows = [(f"baseline: one `explain --json --neighbors 0` per sentence ({args.sample} calls, extrapolated)",
                 1, per_call, None)]
        cases = [
            (f"explain - --json --neighbors 0 ({args.sentences:,} lines)", ["--json", "--neighbors", "0"], batch,
             args.sentences),
            ("explain - --json --neighbors 0 --fields tokens,shifts.cosine",
             ["--json", "--neighbors", "0", "--fields", "tokens,shifts.cosine"], batch, args.sentences),
            ("explain - --plain --neighbors 0", ["--plain", "--neighbors", "0"], batch, args.sentences),
            (f"explain - --json --neighbors 5 over 50,000 words ({args.neighbor_sentences:,} lines)",
             ["--json", "--neighbors", "5"], few, args.neighbor_sentences),
        ]
        for name, options, lines, count in cases:
            samples = [timed_batch([*options, *vectors], lines, env) for _ in range(args.runs)]
            rows.append((name, count, statistics.median(t for t, _ in samples), max(m for _, m in samples)))
        print(f"| {'command':<92} | sentences/s | x baseline | peak RSS MB |")
        print(f"|{'-' * 94}|-------------|------------|-------------|")
        for name, count, seconds, peak in rows:
            rate = count / seconds
            peak_cell = "" if peak is None else f"{peak:11.0f}"
            print(f"| {name:<92} | {rate:11,.0f} | {rate * per_call:10.1f} | {peak_cell} |")

        print("\nPeak memory against the number of lines (explain - --json --neighbors 0)\n")
        print("| lines | seconds | sentences/s | peak RSS MB |")
        print("|-------|---------|-------------|-------------|")
        for count in (int(item) for item in args.memory.split(",")):
            lines = scratch / f"memory-{count}.txt"
            sentence_file(lines, count, seed=2)
            seconds, peak = timed_batch(["--json", "--neighbors", "0", *vectors], lines, env)
            print(f"| {count:,} | {seconds:.1f} | {count / seconds:,.0f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
