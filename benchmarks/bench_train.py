"""Training speed of one attention layer (issue 16's target: 10,000 ~12-word sentences, 3 epochs, <= 60 s).

In-process, on the embedded default set (21,745 x 128, so the softmax runs over every word): a seeded
corpus of random 10-14-word sentences drawn from its 20,000 most frequent words. Epoch times are read
through the progress callback; the validation check after each epoch (and once before training) is
timed apart (the held-out table, scored once after training, is not part of a run here). The baseline,
run in the same process first: one epoch over the first --baseline-sentences sentences with one
sentence per step (batch size 1), the same arithmetic without the batching; the last column is each
row's sentences/s over the baseline's. --smoke runs a tiny corpus for one epoch, for CI.

    python benchmarks/bench_train.py [--sentences 10000] [--epochs 3] [--runs 1] [--batch-size 32]
                                     [--baseline-sentences 1000] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

import attn_cli
from attn_cli.training.corpus import read_corpus
from attn_cli.training.settings import TrainingSettings
from attn_cli.training.trainer import Trainer

VOCABULARY_DRAWN = 20_000


def sentences(vectors: attn_cli.Vectors, count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    words = [word for word in vectors.words[:VOCABULARY_DRAWN] if word.isalpha()]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(10, 14))) for _ in range(count)]


def timed_run(vectors: attn_cli.Vectors, lines: list[str],
              settings: TrainingSettings) -> tuple[float, list[float], float, int, int]:
    """(seconds reading the corpus, seconds of each epoch's steps, seconds of validation checks, training sentences,
    validation sentences)."""
    start = time.perf_counter()
    corpus = read_corpus(lines, vectors, settings.max_words)
    read = time.perf_counter() - start
    trainer = Trainer(vectors, corpus, settings)
    begin = time.perf_counter()
    trainer.run()
    whole = time.perf_counter() - begin
    steps = [report.seconds for report in trainer.history[1:]]
    return read, steps, whole - sum(steps), len(corpus.training), len(corpus.validation)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=10_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--baseline-sentences", type=int, default=1_000)
    parser.add_argument("--smoke", action="store_true", help="200 sentences, 1 epoch: a few seconds")
    args = parser.parse_args()
    if args.smoke:
        args.sentences, args.epochs, args.runs, args.baseline_sentences = 200, 1, 1, 100
    vectors = attn_cli.load_vectors()
    lines = sentences(vectors, args.sentences)
    settings = TrainingSettings(epochs=args.epochs, batch_size=args.batch_size)
    print(f"{vectors!r}; {args.sentences:,} sentences of 10-14 words, {args.epochs} epoch(s), batches of "
          f"{args.batch_size}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
          f"{args.runs} run(s), medians\n")
    single = TrainingSettings(epochs=1, batch_size=1)
    baselines = [timed_run(vectors, lines[:args.baseline_sentences], single) for _ in range(args.runs)]
    base_rate = statistics.median(run[3] / run[1][0] for run in baselines)  # sentences/s of one epoch's steps
    runs = [timed_run(vectors, lines, settings) for _ in range(args.runs)]
    trained = runs[0][3]
    epoch = statistics.median(seconds for run in runs for seconds in run[1])
    steps = statistics.median(sum(run[1]) for run in runs)
    checks = statistics.median(run[2] for run in runs)
    read = statistics.median(run[0] for run in runs)
    whole = read + steps + checks
    print("| step | seconds | sentences/s | x baseline |")
    print("|------|---------|-------------|------------|")
    print(f"| baseline: one epoch, one sentence per step ({baselines[0][3]:,} sentences) | "
          f"{baselines[0][3] / base_rate:.2f} | {base_rate:,.0f} | 1.00 |")
    print(f"| read the corpus ({args.sentences:,} lines) | {read:.2f} | {args.sentences / read:,.0f} | |")
    for name, seconds, count in ((f"one epoch of training steps ({trained:,} sentences)", epoch, trained),
                                 (f"{args.epochs} epochs of steps", steps, trained * args.epochs),
                                 ("whole run: read, steps and checks", whole, trained * args.epochs)):
        print(f"| {name} | {seconds:.2f} | {count / seconds:,.0f} | {count / seconds / base_rate:.2f} |")
    print(f"| validation checks ({args.epochs + 1}, {runs[0][4]:,} sentences each) | {checks:.2f} | | |")


if __name__ == "__main__":
    main()
