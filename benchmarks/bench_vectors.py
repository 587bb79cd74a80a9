"""Vector import and warm-run speed and memory, against gensim and `import numpy`, side by side.

Synthetic files of the real shapes in a temporary folder (values do not change
parse cost): a 400,000 x 300 GloVe text file (about 1 GB) for the first import,
and caches of 400,000 x 300 and 2,196,017 x 300 words for the warm runs (the
2.2 M cache is written directly, the same layout an import writes, to spare
5.6 GB of text). Every figure is a whole process; peak RSS comes from wait4.

    python benchmarks/bench_vectors.py [--runs 7] [--import-runs 1] [--words 400000] [--big 2196017] [--smoke]
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

import numpy as np

from attn_cli.vectors.cache import Fingerprint, cache_root

PYTHON = sys.executable
SENTENCE = "money bank grows"
GENSIM_WARM = """
import sys, numpy as np
from gensim.models import KeyedVectors
kv = KeyedVectors.load(sys.argv[1], mmap="r")
x = np.vstack([kv[w] for w in "money bank grows".split()]).astype(np.float64)   # the same arithmetic:
s = x @ x.T; w = np.exp(s - s.max(1, keepdims=True)); w /= w.sum(1, keepdims=True); y = w @ x
m = np.asarray(kv.vectors[:50000]); n = np.linalg.norm(m, axis=1)
c = (m @ np.vstack([x, y]).T.astype(np.float32)) / n[:, None]; np.argsort(-c, axis=0)[:6]
"""


def run(command: list[str], env: dict | None = None, cwd: str | None = None) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one whole process, in the folder `cwd` (default: this one)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed ({status}): {' '.join(command)}")
    return elapsed, usage.ru_maxrss / 1024


def glove_text(path: str, words: str, dims: str) -> None:
    words, dims = int(words), int(dims)
    rng = np.random.default_rng(0)
    bodies = [" ".join(f"{v:.6g}" for v in row) for row in rng.normal(0, 0.4, (997, dims))]
    with open(path, "w") as out:
        out.write(f"money {bodies[1]}\nbank {bodies[2]}\ngrows {bodies[3]}\n")
        for start in range(3, words, 10_000):
            out.write("".join(f"w{i} {bodies[i % 997]}\n" for i in range(start, min(words, start + 10_000))))


def direct_cache(folder: Path, words: int, dims: int, source: Path) -> None:
    """A cache folder of random float32 rows, written straight in the importer's layout, with the metadata an
    import of `source` writes (a cache serves only the file its meta.json records)."""
    from attn_cli.vectors.cache import LAYOUT
    from attn_cli.vectors.cache import write_vocabulary
    import dataclasses
    import json

    folder.mkdir(parents=True)
    matrix = np.lib.format.open_memmap(folder / "matrix.npy", mode="w+", dtype=np.float32, shape=(words, dims))
    norms = np.empty(words, dtype=np.float32)
    rng = np.random.default_rng(0)
    for start in range(0, words, 100_000):
        block = rng.normal(0, 0.4, (min(100_000, words - start), dims)).astype(np.float32)
        matrix[start:start + len(block)] = block
        norms[start:start + len(block)] = np.linalg.norm(block, axis=1)
    matrix.flush()
    del matrix
    np.save(folder / "norms.npy", norms)
    write_vocabulary(folder, [b"money", b"bank", b"grows"] + [f"w{i}".encode() for i in range(3, words)])
    (folder / "meta.json").write_text(json.dumps({
        "layout": LAYOUT, "name": f"synthetic {words} x {dims}", "format": "glove", "limit": None, "count": words,
        "dims": dims, "lowercase": True, "source": dataclasses.asdict(Fingerprint.of(source)), "header_count": None,
        "duplicates": 0, "first_duplicates": [], "bad_lines": 0, "first_bad_lines": [], "invalid_utf8_words": 0}))


def synthetic_set(scratch: Path, words: int, dims: int, name: str = "synthetic.txt") -> Path:
    """A small stand-in file in `scratch` whose cache (under $ATTN_CLI_CACHE, which the caller sets) holds a
    random `words` x `dims` set: `--vectors STAND_IN` then serves it warm. Written by a child process, so the
    caller stays small (a child's peak RSS starts at its parent's)."""
    stand_in = scratch / name
    stand_in.write_text("money 1 2\n")
    folder = cache_root() / "v1" / Fingerprint.of(stand_in).key("glove", None)
    subprocess.run([PYTHON, str(Path(__file__).resolve()), "--make-cache", str(folder), str(words), str(dims),
                    str(stand_in)], check=True)
    return stand_in


def table(title: str, samples: dict[str, list[tuple[float, float]]], baseline: str) -> None:
    base = statistics.median(t for t, _ in samples[baseline])
    print(f"\n{title}\n")
    print(f"| {'command':<46} | median s | min s  | max s  | x {'baseline':<9}| peak RSS MB |")
    print(f"|{'-' * 48}|----------|--------|--------|------------|-------------|")
    for name, values in samples.items():
        times = [t for t, _ in values]
        median = statistics.median(times)
        print(f"| {name:<46} | {median:8.3f} | {min(times):6.3f} | {max(times):6.3f} | {median / base:10.2f} | "
              f"{max(r for _, r in values):11.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--import-runs", type=int, default=1)
    parser.add_argument("--words", type=int, default=400_000)
    parser.add_argument("--big", type=int, default=2_196_017)
    parser.add_argument("--dims", type=int, default=300)
    parser.add_argument("--make-cache", metavar="FOLDER", help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="20,000 x 50 and 40,000 x 50, 2 runs: seconds, for CI")
    args, rest = parser.parse_known_args()
    if args.smoke:
        args.runs, args.import_runs, args.words, args.big, args.dims = 2, 1, 20_000, 40_000, 50
    if args.make_cache:
        direct_cache(Path(args.make_cache), int(rest[0]), int(rest[1]), Path(rest[2]))
        return
    with tempfile.TemporaryDirectory(prefix="attn-bench-") as scratch:
        scratch = Path(scratch)
        env = {**os.environ, "ATTN_CLI_CACHE": str(scratch / "cache")}
        text = scratch / "glove.txt"
        subprocess.run([PYTHON, "-c", f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                        "import bench_vectors as b; b.glove_text(*sys.argv[1:])", str(text), str(args.words),
                        str(args.dims)], check=True)
        print(f"{args.words:,} x {args.dims} GloVe text: {text.stat().st_size / 1e9:.2f} GB; "
              f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")

        imports: dict[str, list[tuple[float, float]]] = {"gensim load_word2vec_format(no_header=True)": [],
                                                         "attn-cli vectors import (first run)": []}
        gensim_import = ("from gensim.models import KeyedVectors; import sys; "
                         "KeyedVectors.load_word2vec_format(sys.argv[1], no_header=True)")
        for _ in range(args.import_runs):
            imports["gensim load_word2vec_format(no_header=True)"].append(run([PYTHON, "-c", gensim_import, str(text)]))
            subprocess.run([PYTHON, "-m", "attn_cli", "vectors", "remove", "--all"], env=env, capture_output=True)
            imports["attn-cli vectors import (first run)"].append(
                run([PYTHON, "-m", "attn_cli", "vectors", "import", str(text), "--json"], env))
        table(f"First import of {args.words:,} x {args.dims} GloVe text", imports,
              "gensim load_word2vec_format(no_header=True)")
        print(f"float32 matrix: {args.words * args.dims * 4 / 2**20:,.0f} MB")

        kv = scratch / "glove.kv"
        subprocess.run([PYTHON, "-c", "from gensim.models import KeyedVectors; import sys, numpy as np; "
                        "from attn_cli.vectors import load_vectors; v = load_vectors(sys.argv[1]); "
                        "kv = KeyedVectors(v.dims); kv.add_vectors(list(v.words), np.asarray(v.matrix)); "
                        "kv.save(sys.argv[2])", str(text), str(kv)], check=True, env=env)
        big_env = {**os.environ, "ATTN_CLI_CACHE": str(scratch / "big")}
        os.environ["ATTN_CLI_CACHE"] = big_env["ATTN_CLI_CACHE"]
        stand_in = synthetic_set(scratch, args.big, args.dims, "glove.840B.stand-in.txt")
        explain = [PYTHON, "-m", "attn_cli", "explain", SENTENCE, "--json", "--vectors"]
        commands = {
            'python -c "import numpy" (baseline)': ([PYTHON, "-c", "import numpy"], None),
            f"explain --json, cached {args.words // 1000}k x {args.dims}": (explain + [str(text)], env),
            "gensim KeyedVectors.load(mmap='r') + same maths": ([PYTHON, "-c", GENSIM_WARM, str(kv)], None),
            f"explain --json, cached {args.big / 1e6:.1f}M x {args.dims}": (explain + [str(stand_in)], big_env),
        }
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for command, command_env in commands.values():
            run(command, command_env)  # warm the page cache once
        for _ in range(args.runs):
            for name, (command, command_env) in commands.items():
                samples[name].append(run(command, command_env))
        table(f"Warm runs ({args.runs} each, interleaved)", samples, 'python -c "import numpy" (baseline)')


if __name__ == "__main__":
    main()
