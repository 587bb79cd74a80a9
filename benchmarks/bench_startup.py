"""Whole-process start-up of attn-cli on the embedded default, against baselines run side by side.

Absolute times drift on shared machines, so every command runs interleaved with
the baselines (`python -c pass`, `python -c "import numpy"`) in the same loop,
and the table reports medians and ratios. Compiled bytecode is kept (in a temporary
PYTHONPYCACHEPREFIX, even where PYTHONDONTWRITEBYTECODE is set), as an installed
package has it: compiling attn-cli's modules from source costs ~0.1 s a run, no user's.
Run: python benchmarks/bench_startup.py [--runs N] [--smoke]
"""

from __future__ import annotations

import argparse
import statistics
import os
import subprocess
import sys
import tempfile
import time

PYTHON = sys.executable
COMMANDS = {
    "python -c pass (interpreter floor)": [PYTHON, "-c", "pass"],
    'python -c "import numpy" (baseline)': [PYTHON, "-c", "import numpy"],
    "load the default set (+ word index)": [
        PYTHON, "-c", "from attn_cli.vectors.default import load_default_vectors; load_default_vectors().index"],
    "explain --json --neighbors 0": [PYTHON, "-m", "attn_cli", "explain", "money bank grows", "--json",
                                     "--neighbors", "0"],
    "explain --json": [PYTHON, "-m", "attn_cli", "explain", "money bank grows", "--json"],
    "explain (tables)": [PYTHON, "-m", "attn_cli", "explain", "money bank grows"],
}
BASELINE = 'python -c "import numpy" (baseline)'


def time_once(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--smoke", action="store_true", help="2 runs: seconds, for CI")
    args = parser.parse_args()
    runs = 2 if args.smoke else args.runs
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory(prefix="attn-bench-pyc-") as pycache:
        env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pycache
        for command in COMMANDS.values():  # warm the file cache and compile the bytecode once
            time_once(command, env)
        for _ in range(runs):  # interleaved, so drift hits every command alike
            for name, command in COMMANDS.items():
                samples[name].append(time_once(command, env))
    baseline = statistics.median(samples[BASELINE])
    print(f"{runs} runs each, interleaved; times in seconds\n")
    print(f"| {'command':<40} | median | min    | max    | x baseline |")
    print(f"|{'-' * 42}|--------|--------|--------|------------|")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"| {name:<40} | {median:.3f}  | {min(values):.3f}  | {max(values):.3f}  | {median / baseline:10.2f} |")


if __name__ == "__main__":
    main()
