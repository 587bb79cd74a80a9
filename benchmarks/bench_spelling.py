"""Unknown words in a batch: what their spelling suggestions cost per word, against the same batch without them.

A synthetic vocabulary of --words random lower-case words (3 to 12 letters, most
frequent first; 5 dimensions, which do not change the cost of spelling) is imported
once into a scratch cache. Two files of --lines lines of 12 words each: one of
known words drawn from the 20,000 most frequent, and one where every word is a
one-edit typo of such a word (a letter changed, added, dropped, or two swapped),
each typo different. The cost of a suggestion is the difference of the two
`explain - --json --neighbors 0` runs (whole processes, medians), divided by the
typos; "found" is the share whose first suggestion is the word the typo was made
from (another word one edit away may be more frequent).

`--baseline-tree PATH` runs another checkout (`git worktree add /tmp/base COMMIT`) side
by side, run by run, and prints the ratio. `--smoke`: 20,000 words, 20 lines, one run.

    python benchmarks/bench_spelling.py [--runs 3] [--words 400000] [--lines 100] [--baseline-tree PATH] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
THIS_TREE = str(Path(__file__).resolve().parent.parent)
DRAWN = 20_000  # typos are made of the most frequent words, as real ones are
WORDS_PER_LINE = 12


def vocabulary(count: int, rng: random.Random) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < count:
        words["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12)))] = None
    return list(words)


def typo(word: str, rng: random.Random) -> str:
    """`word` with one edit: a letter changed, added or dropped, or two neighbours swapped."""
    at = rng.randrange(len(word))
    letter = rng.choice(string.ascii_lowercase)
    kind = rng.choice(["change", "add", "drop", "swap"]) if len(word) > 3 else "add"
    if kind == "swap" and at < len(word) - 1 and word[at] != word[at + 1]:
        return word[:at] + word[at + 1] + word[at] + word[at + 2:]
    if kind == "drop":
        return word[:at] + word[at + 1:]
    if kind == "change" and letter != word[at]:
        return word[:at] + letter + word[at + 1:]
    return word[:at] + letter + word[at:]


def batches(words: list[str], lines: int, rng: random.Random) -> tuple[str, str, dict[str, str]]:
    """(known lines, typo lines, typo -> the word it was made from); every typo unknown and different."""
    known, typos, meant = [], [], {}
    vocabulary_set = set(words)
    for _ in range(lines):
        drawn = [words[rng.randrange(3, min(DRAWN, len(words)))] for _ in range(WORDS_PER_LINE)]
        known.append(" ".join(drawn))
        line = []
        for word in drawn:
            wrong = typo(word, rng)
            while wrong in vocabulary_set or wrong in meant:
                wrong = typo(word, rng)
            meant[wrong] = word
            line.append(wrong)
        typos.append(" ".join(["money", *line]))  # one known word: the line is attended, the typos dropped
    return "\n".join(known) + "\n", "\n".join(typos) + "\n", meant


def timed(tree: str, text: str, vectors: Path, env: dict) -> tuple[float, str]:
    """(seconds, stdout) of one whole `explain - --json --neighbors 0` of the checkout `tree`."""
    start = time.perf_counter()
    done = subprocess.run([PYTHON, "-m", "attn_cli", "explain", "-", "--json", "--neighbors", "0", "--vectors",
                           str(vectors)], input=text, capture_output=True, text=True,
                          env={**env, "PYTHONPATH": tree}, check=True)
    return time.perf_counter() - start, done.stdout


def found_share(stdout: str, meant: dict[str, str]) -> float:
    """The share of typos whose first suggestion is the word they were made from."""
    dropped = [item for line in stdout.splitlines() for item in json.loads(line)["dropped_tokens"]]
    return sum(bool(item["suggestions"]) and item["suggestions"][0] == meant[item["text"]]
               for item in dropped) / len(dropped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--words", type=int, default=400_000)
    parser.add_argument("--lines", type=int, default=100)
    parser.add_argument("--baseline-tree", metavar="PATH", help="another checkout, run side by side")
    parser.add_argument("--smoke", action="store_true", help="a few seconds: 20,000 words, 20 lines, one run")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.words, args.lines = 1, 20_000, 20
    rng = random.Random(0)
    words = ["money", *vocabulary(args.words - 1, rng)]
    known, typos, meant = batches(words, args.lines, rng)
    with tempfile.TemporaryDirectory(prefix="attn-spelling-") as scratch:
        folder = Path(scratch)
        os.chdir(folder)  # `python -m attn_cli` from a checkout would run that checkout, whatever PYTHONPATH says
        vectors = folder / "words.txt"
        vectors.write_text("".join(f"{word} 0.1 0.2 0.3 0.4 {i % 7 / 10}\n" for i, word in enumerate(words)))
        env = {**os.environ, "ATTN_CLI_CACHE": str(folder / "cache")}
        trees = {"this tree": THIS_TREE, **({"baseline tree": args.baseline_tree} if args.baseline_tree else {})}
        times: dict[str, dict[str, list[float]]] = {name: {"known": [], "typos": []} for name in trees}
        shares = {}
        for tree in trees.values():
            timed(tree, known, vectors, env)  # imports the set into the cache, then warms the page cache
        for _ in range(args.runs):  # interleaved: every tree sees the same load
            for name, tree in trees.items():
                times[name]["known"].append(timed(tree, known, vectors, env)[0])
                seconds, stdout = timed(tree, typos, vectors, env)
                times[name]["typos"].append(seconds)
                shares[name] = found_share(stdout, meant)
        count = len(meant)
        print(f"{args.words:,} words, {args.lines:,} lines of {WORDS_PER_LINE} one-edit typos ({count:,} distinct); "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; medians of {args.runs}\n")
        print("| tree | known words s | typos s | ms per unknown word | found | x baseline tree |")
        print("|---|---|---|---|---|---|")
        per_word = {name: max(0.0, statistics.median(t["typos"]) - statistics.median(t["known"])) / count * 1e3
                    for name, t in times.items()}
        for name in trees:
            ratio = (f"{per_word['baseline tree'] / per_word[name]:.0f}"
                     if args.baseline_tree and per_word[name] > 0 else "")
            print(f"| {name} | {statistics.median(times[name]['known']):.2f} | "
                  f"{statistics.median(times[name]['typos']):.2f} | {per_word[name]:.3f} | {shares[name]:.1%} | "
                  f"{ratio} |")


if __name__ == "__main__":
    main()
