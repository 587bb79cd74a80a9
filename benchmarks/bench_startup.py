"""Whole-process start-up of attn-cli, on the embedded default and a cached 400,000 x 300 set, against baselines.

Absolute times drift on shared machines, so every command runs interleaved with
the baselines (`python -c pass`, `python -c "import numpy"`) in the same loop,
and the table reports medians and ratios. Compiled bytecode is kept (in a temporary
PYTHONPYCACHEPREFIX, even where PYTHONDONTWRITEBYTECODE is set), as an installed
package has it: compiling attn-cli's modules from source costs ~0.1 s a run, no user's.

The cached set is synthetic, written straight in the importer's layout by
bench_vectors.py --make-cache (as bench_batch.py does), keyed to a small stand-in
file in a temporary folder. Issue 15's target 3: `explain "money bank grows" --json`
within 2.0 x `import numpy` on it, and 2.2 x on the embedded default.

`--baseline-tree PATH` runs every attn-cli command of another checkout too
(PYTHONPATH=PATH, e.g. `git worktree add /tmp/base COMMIT`), interleaved run by run
with this tree's, and adds its median and "x baseline tree". `--smoke` takes seconds,
for CI: a 5,000 x 50 set, 2 runs.

    python benchmarks/bench_startup.py [--runs 15] [--words 400000] [--dims 300] [--baseline-tree PATH] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

THIS_TREE = str(Path(__file__).resolve().parent.parent)
sys.path.insert(0, THIS_TREE)  # this checkout's attn_cli, whatever is installed
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vectors import synthetic_set  # noqa: E402  (same folder: the cached synthetic set)

PYTHON = sys.executable
BASELINE = 'python -c "import numpy" (baseline)'
SENTENCE = "money bank grows"


def baselines() -> dict[str, list[str]]:
    return {"python -c pass (interpreter floor)": [PYTHON, "-c", "pass"], BASELINE: [PYTHON, "-c", "import numpy"]}


def attn_commands(vectors: str, words: int, dims: int) -> dict[str, list[str]]:
    """The attn-cli commands timed in each tree (the cached set named by `vectors`)."""
    explain = [PYTHON, "-m", "attn_cli", "explain", SENTENCE]
    return {
        "load the default set (+ word index)": [
            PYTHON, "-c", "from attn_cli.vectors import load_default_vectors; load_default_vectors().index"],
        "explain --json --neighbors 0": [*explain, "--json", "--neighbors", "0"],
        "explain --json": [*explain, "--json"],
        "explain (tables)": explain,
        f"explain --json, cached {words:,} x {dims}": [*explain, "--json", "--vectors", vectors],
    }


def time_once(command: list[str], env: dict[str, str], cwd: str) -> float:
    """Seconds of one whole process, run in `cwd`: never a checkout, whose attn_cli `python -m` and `-c` would
    import (they put the working folder first on sys.path) whatever PYTHONPATH says."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--words", type=int, default=400_000)
    parser.add_argument("--dims", type=int, default=300)
    parser.add_argument("--baseline-tree", metavar="PATH", help="another checkout, run side by side")
    parser.add_argument("--smoke", action="store_true", help="seconds, for CI: a 5,000 x 50 set, 2 runs")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.words, args.dims = 2, 5_000, 50
    trees = {"this tree": THIS_TREE}
    if args.baseline_tree:
        trees["baseline tree"] = str(Path(args.baseline_tree).resolve())
    with tempfile.TemporaryDirectory(prefix="attn-bench-startup-") as scratch:
        scratch_path = Path(scratch)
        env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(scratch_path / "pycache")  # one per source path: trees do not collide
        env["ATTN_CLI_CACHE"] = os.environ["ATTN_CLI_CACHE"] = str(scratch_path / "cache")
        stand_in = synthetic_set(scratch_path, args.words, args.dims)

        commands: dict[tuple[str, str], tuple[list[str], dict[str, str]]] = {
            (name, ""): (command, env) for name, command in baselines().items()}
        for name, command in attn_commands(str(stand_in), args.words, args.dims).items():
            for label, tree in trees.items():
                commands[name, label] = (command, {**env, "PYTHONPATH": tree})
        for command, command_env in commands.values():  # warm the file cache and compile the bytecode once
            time_once(command, command_env, scratch)
        samples: dict[tuple[str, str], list[float]] = {key: [] for key in commands}
        loads = [os.getloadavg()[0]]
        for _ in range(args.runs):  # interleaved, so drift hits every command (and both trees) alike
            for key, (command, command_env) in commands.items():
                samples[key].append(time_once(command, command_env, scratch))
            loads.append(os.getloadavg()[0])

    baseline = statistics.median(samples[BASELINE, ""])
    print(f"{args.runs} runs each, interleaved; times in seconds; {os.cpu_count()} cores, load average "
          f"{min(loads):.1f} to {max(loads):.1f} during the runs")
    if args.baseline_tree:
        print(f"this tree: {THIS_TREE}; baseline tree: {trees['baseline tree']}")
    print()
    other = " baseline tree | its x import numpy | x baseline tree |" if args.baseline_tree else ""
    print(f"| {'command':<40} | median | min    | max    | x import numpy |{other}")
    print(f"|{'-' * 42}|--------|--------|--------|----------------|" +
          ("---------------|--------------------|-----------------|" if args.baseline_tree else ""))
    for (name, label), values in samples.items():
        if label == "baseline tree":
            continue
        median = statistics.median(values)
        cells = f"| {name:<40} | {median:.3f}  | {min(values):.3f}  | {max(values):.3f}  | {median / baseline:14.2f} |"
        if args.baseline_tree:
            base = statistics.median(samples[name, "baseline tree"]) if label else None
            cells += (f" {base:13.3f} | {base / baseline:18.2f} | {median / base:15.2f} |" if base is not None
                      else f" {'':13} | {'':18} | {'':15} |")
        print(cells)

if __name__ == "__main__":
    main()
