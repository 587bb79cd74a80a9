"""A real pretrained layer (--model minilm) against raw mode on the default set, side by side (issue 34, item 6).

Two measures, each as a ratio to raw mode on the embedded default set:

1. explain: a 12-word sentence, `attn-cli explain SENTENCE --model minilm` (layer 1; the tables) against
   `attn-cli explain SENTENCE`, each a whole process, warm (the file cache and bytecode warmed by a first run),
   interleaved so that drift hits both alike; medians of --runs. Target: at most 2 x.
2. senses: a generated corpus (benchmarks/bench_senses.py's: --sentences lines of 12-25 words of the default set,
   --with-word of them holding "bank"), `attn_cli.senses("bank", lines, model="minilm")` (layer 1) against
   `attn_cli.senses("bank", lines)`, in-process after a warm-up of each; medians of --runs. Target: at most 3 x.

Needs the model in the cache (`attn-cli vectors import minilm`); without it the run says so and stops (exit 1;
--smoke exits 0 after saying it, so a machine without the model still runs the other benchmarks).

    python benchmarks/bench_minilm.py [--runs 5] [--sentences 100000] [--with-word 2000] [--smoke]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_senses import WORD, corpus, timed  # noqa: E402  (the same corpus as the senses benchmark)

SENTENCE = "I sat on the bank of the river and watched the boats go"  # 12 words
TARGETS = {"explain": 2.0, "senses": 3.0}


def explain_seconds(runs: int) -> dict[str, list[float]]:
    """Whole-process seconds of each explain, interleaved, after one warm run each."""
    commands = {"raw mode, default set": [sys.executable, "-m", "attn_cli", "explain", SENTENCE],
                "--model minilm (layer 1)": [sys.executable, "-m", "attn_cli", "explain", SENTENCE, "--model",
                                             "minilm"]}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory(prefix="attn-bench-minilm-") as scratch:  # not a checkout: see bench_startup
        for round_number in range(runs + 1):
            for name, command in commands.items():
                start = time.perf_counter()
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=scratch)
                if round_number:  # the first round warms the file cache and the bytecode
                    samples[name].append(time.perf_counter() - start)
    return samples


def report(measure: str, samples: dict[str, list[float]]) -> None:
    (base_name, base), (model_name, model) = samples.items()
    ratio = statistics.median(model) / statistics.median(base)
    for name, seconds in samples.items():
        print(f"  {name:<28} median {statistics.median(seconds):7.3f} s  runs {', '.join(f'{s:.3f}' for s in seconds)}")
    verdict = "met" if ratio <= TARGETS[measure] else "NOT met"
    print(f"  ratio {ratio:.2f} x (target at most {TARGETS[measure]:g} x: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--with-word", type=int, default=2_000)
    parser.add_argument("--smoke", action="store_true", help="seconds, for CI: 1,000 lines, 60 with the word, 1 run")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.sentences, args.with_word = 1, 1_000, 60
    import attn_cli

    if not attn_cli.imported_models():
        print(f"all-MiniLM-L6-v2 is not imported into {attn_cli.cache_folder()}: run attn-cli vectors import minilm")
        sys.exit(0 if args.smoke else 1)
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"explain, a 12-word sentence, whole processes ({args.runs} runs each):")
    report("explain", explain_seconds(args.runs))

    lines = corpus(args.sentences, args.with_word)
    attn_cli.senses(WORD, lines[:5_000])  # warm-up: scikit-learn's import, the neighbour search's rows
    attn_cli.senses(WORD, lines[:5_000], model="minilm")
    raw, model = (timed(lambda changes=changes: attn_cli.senses(WORD, lines, **changes), args.runs)[0]
                  for changes in ({}, {"model": "minilm"}))
    print(f"senses over {args.sentences:,} lines, {args.with_word:,} with {WORD!r} ({args.runs} runs each):")
    report("senses", {"raw mode, default set": raw, "--model minilm (layer 1)": model})


if __name__ == "__main__":
    main()
