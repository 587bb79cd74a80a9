"""Shared fixtures: a CLI runner that keeps stdout and stderr apart, the schema, gensim's sample files."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from contextlib import ExitStack, contextmanager
from pathlib import Path

# One BLAS thread for the suite and the programs it starts, unless the caller pins another count: two OpenBLAS
# threads spin waiting for each other when other work holds a core, and the training tests then crawl. The
# numbers are those of any run with a pinned thread count (docs/train.md).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# The programs the tests start import attn_cli afresh: they keep its compiled modules (__pycache__/, ignored by
# git) instead of compiling them again at each start, as PYTHONDONTWRITEBYTECODE=1 would have them do.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

import numpy as np  # after the thread count: OpenBLAS reads it as it loads
import pytest

import attn_cli
from typer.testing import CliRunner

from attn_cli.cli.app import app
from attn_cli.engine.attention import AttentionConfig, draw_projections
from attn_cli.training.weights import TrainedLayer

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
# A guard against a run that never ends, never a measure of speed: the slowest run here takes seconds, so a
# loaded machine cannot reach it; only a hang (a read of an endless input, a lost signal) does.
HANG_SECONDS = 600
SHORT_BASE = pytest.StashKey[str]()
ZYGOTE = Path(__file__).resolve().with_name("zygote.py")
ZYGOTE_SOCKET = str(Path(tempfile.mkdtemp(prefix="atz")) / "socket")
# For a program run under a file size limit (RLIMIT_FSIZE): CPython writes a module's .pyc with one write() and
# renames it whatever that wrote, so a limit below its size leaves a cut .pyc that every later import fails on
# ("marshal data too short"), in a fresh clone whose modules are not compiled yet.
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}
# `attn-cli ARGS` as a program of its own, forked from one that loaded the modules once (tests/zygote.py)
FORKED_CLI = [sys.executable, "-S", str(ZYGOTE), ZYGOTE_SOCKET]


@pytest.hookimpl(tryfirst=True)  # before pytest's own tmp_path factory reads --basetemp
def pytest_configure(config: pytest.Config) -> None:
    """Temporary folders under a short base of each process (/tmp/atXXXXXXXX, not /tmp/pytest-of-USER/pytest-N/,
    nor the controller's folder per pytest-xdist worker, one level deeper): messages name a path whole up to 80
    characters, and the tests that check the path a message names use tmp_path."""
    config.addinivalue_line("markers", "real_process: `attn` starts a real program, not a run in this process")
    if config.option.basetemp is None or getattr(config, "workerinput", {}).get("short_base"):
        config.option.basetemp = config.stash[SHORT_BASE] = tempfile.mkdtemp(prefix="at")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """A pytest-xdist worker makes its own short base too, unless the caller chose one (--basetemp)."""
    node.workerinput["short_base"] = SHORT_BASE in node.config.stash


def pytest_unconfigure(config: pytest.Config) -> None:
    if SHORT_BASE in config.stash:
        shutil.rmtree(config.stash[SHORT_BASE], ignore_errors=True)
    if ZYGOTE_SERVER:
        ZYGOTE_SERVER[0].kill()
        ZYGOTE_SERVER[0].wait()
    shutil.rmtree(Path(ZYGOTE_SOCKET).parent, ignore_errors=True)


ZYGOTE_SERVER: list[subprocess.Popen] = []


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """The zygote loads the modules while the tests are collected; FORKED_CLI waits for it. pytest-xdist's
    controller runs no test, so its workers start one each and it none."""
    if getattr(session.config.option, "numprocesses", None) and not hasattr(session.config, "workerinput"):
        return
    ZYGOTE_SERVER.append(subprocess.Popen([sys.executable, str(ZYGOTE), "--serve", ZYGOTE_SOCKET],
                                          stdin=subprocess.PIPE, stdout=subprocess.DEVNULL))  # see serve()


@contextmanager
def at_most(seconds: float = HANG_SECONDS):
    """Fail (as an exception inside the run: exit 1) instead of hanging, e.g. on a lookup that never ends."""
    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_real_process = [False]  # whether the running test is marked real_process


@pytest.fixture(autouse=True)
def real_process_marker(request):
    _real_process[0] = request.node.get_closest_marker("real_process") is not None


def attn(args: list[str], stdin=None, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env: dict | None = None,
         input: bytes | None = None, **extra) -> subprocess.CompletedProcess:
    """`python -m attn_cli ARGS` with the given standard streams (open files, descriptors, or PIPE: a real pipe), as
    subprocess.run takes them. It runs in this process on descriptors 0, 1 and 2 themselves, so what the shell would
    give it is what it finds; in a process of its own where that is the point: forked (FORKED_CLI) for a
    PYTHONIOENCODING or a locale (read at start-up) or a preexec_fn (limits), started afresh in a test marked
    real_process. A run here shares this process's once-per-process state (the default set's cache, warn-once)."""
    env = {**os.environ, "COLUMNS": "80", **(env or {})}
    started = [name for name in ("PYTHONIOENCODING", "PYTHONUTF8", "LANG", "LC_ALL", "LC_CTYPE")
               if env.get(name) != os.environ.get(name)]  # settings an interpreter reads as it starts
    if _real_process[0] or started or extra.keys() - {"cwd", "pass_fds", "text"}:
        command = [sys.executable, "-m", "attn_cli"] if _real_process[0] else FORKED_CLI
        return subprocess.run([*command, *args], stdin=stdin, stdout=stdout, stderr=stderr, env=env, input=input,
                              timeout=HANG_SECONDS, **extra)
    text = extra.get("text", False)
    with ExitStack() as stack:
        stack.enter_context(_environment(env, extra.get("cwd")))
        drained = [stack.enter_context(_descriptor(number, given, input.encode() if isinstance(input, str) else input))
                   for number, given in enumerate((subprocess.PIPE if input is not None else stdin, stdout, stderr))]
        code = _main(args)
    out, err = (None if got is None else got.decode() if text else bytes(got) for got in drained[1:])
    return subprocess.CompletedProcess(args, code, out, err)


@contextmanager
def _environment(env: dict, cwd: str | Path | None):
    saved, where = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd or where)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        os.chdir(where)


@contextmanager
def _descriptor(number: int, given, input: bytes | None):
    """Descriptor `number` on `given` (None: as it is; PIPE: a pipe a thread feeds with `input` or drains; DEVNULL;
    an open file or descriptor) and a new sys.stdin, stdout or stderr on it; yields what a drained pipe held."""
    kept, name, pump = os.dup(number), ("stdin", "stdout", "stderr")[number], None
    drained = bytearray() if given == subprocess.PIPE and number else None
    if given == subprocess.PIPE:
        reader, writer = os.pipe()
        ours, theirs = (writer, reader) if number == 0 else (reader, writer)
        pump = threading.Thread(target=_drain if number else _feed, args=(ours, drained if number else input or b""))
        pump.start()
    else:
        theirs = os.open(os.devnull, os.O_RDWR) if given == subprocess.DEVNULL else None
    if theirs is not None:
        os.dup2(theirs, number)
        os.close(theirs)  # descriptor `number` holds the pipe's end alone: closing it ends the pipe
    elif given is not None:
        os.dup2(given if isinstance(given, int) else given.fileno(), number)
    previous, mine = getattr(sys, name), _stream(number)
    setattr(sys, name, mine)
    try:
        yield drained
    finally:
        current, _ = getattr(sys, name), setattr(sys, name, previous)
        try:
            if current not in (mine, None) and not current.closed:  # a stream the run put in its place
                current.flush()
        finally:
            try:
                mine.close()  # the interpreter's last flush, then the descriptor closed, as at its exit
            finally:
                os.dup2(kept, number)
                os.close(kept)
                if pump is not None:
                    pump.join(HANG_SECONDS)


def _feed(writer: int, data: bytes) -> None:
    with open(writer, "wb") as pipe:
        try:
            pipe.write(data)
        except BrokenPipeError:  # the run stopped reading
            pass


def _drain(reader: int, drained: bytearray) -> None:
    with open(reader, "rb", buffering=0) as pipe:
        while chunk := pipe.read(1 << 16):
            drained += chunk


def _stream(number: int) -> io.TextIOWrapper:
    """sys.stdin, stdout or stderr on its descriptor as the interpreter makes them at start: its encoding and error
    handler, newline "\\n", buffered (by lines on a terminal and for stderr; writes unbuffered under -u)."""
    model = (sys.__stdin__, sys.__stdout__, sys.__stderr__)[number]
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED")) and number > 0  # as -u
    binary = open(number, "rb" if number == 0 else "wb", buffering=0 if unbuffered else -1)
    return io.TextIOWrapper(binary, encoding=model.encoding, errors=model.errors, newline="\n",
                            line_buffering=number == 2 or os.isatty(number), write_through=unbuffered)


def _main(args: list[str]) -> int:
    """The exit code of `attn_cli.cli.run` (the program's entry point) as the interpreter would end with it."""
    from attn_cli.cli import run

    saved, sys.argv = sys.argv, [str(Path(attn_cli.__file__).with_name("__main__.py")), *args]
    try:
        with at_most():
            run()
        return 0
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
        return exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        sys.argv = saved


def gensim_datapath(name: str) -> str:
    """A sample file that gensim installs with its tests (real GloVe, word2vec, ... data)."""
    from gensim.test.utils import datapath

    return datapath(name)


def contributions(document: dict, i: int, key_texts: list[str] | None = None) -> list[dict]:
    """Query token i's `contributions` as schema 2 listed them, from a schema 3 document's matrices: the 10 keys of
    largest weight (the mean over heads; ties by index), each with its weight and its shares of the output and of
    the shift. `key_texts`: the key tokens (default: the document's own)."""
    key_texts = key_texts or [token["text"] for token in document["tokens"]]
    row = np.mean([head["weights"][i] for head in document["heads"]], axis=0).tolist()
    heaviest = sorted(range(len(row)), key=lambda j: (-row[j], j))[:10]
    return [{"token": key_texts[j], "index": j, "weight": row[j], "share": document["shares"]["output"][i][j],
             "shift_share": document["shares"]["shift"][i][j]} for j in heaviest]


@pytest.fixture(scope="session")
def gensim_sample():
    """gensim_sample(name) -> path of a file gensim installs with its own tests."""
    return gensim_datapath


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own vector cache, gensim-data folder and $TMPDIR: nothing is written to the real home,
    and no leftover of a real run is swept from the real ones."""
    root = tmp_path_factory.mktemp("attn-cli-cache")
    monkeypatch.setenv("ATTN_CLI_CACHE", str(root))
    monkeypatch.setenv("GENSIM_DATA_DIR", str(tmp_path_factory.mktemp("gensim-data")))
    scratch = tmp_path_factory.mktemp("tmp")
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # tempfile remembers the folder it found first
    return root


@pytest.fixture(scope="session", autouse=True)
def command_built_once():
    """Typer builds the click command from the app's signatures at each call (most of a short run's time); the
    tests' runs in this process share the one it builds first. A private name of typer: a rename fails here."""
    import typer.main
    import typer.testing

    build, built = typer.main.get_command, typer.main.get_command(app)
    with pytest.MonkeyPatch.context() as patch:
        for module, name in ((typer.main, "get_command"), (typer.testing, "_get_command")):
            patch.setattr(module, name, lambda given: built if given is app else build(given))
        yield


@pytest.fixture
def run():
    """run(*args, input=None) -> Result with .exit_code, .stdout and .stderr kept apart, 80 columns."""
    runner = CliRunner()

    def invoke(*args: str, input: str | bytes | None = None, env: dict | None = None):
        return runner.invoke(app, list(args), input=input, env={"COLUMNS": "80", **(env or {})})

    return invoke


@pytest.fixture(scope="session")
def explain_schema() -> dict:
    return json.loads((SCHEMAS / "explain.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def trace_schema() -> dict:
    return json.loads((SCHEMAS / "trace.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def schema_validator():
    """schema_validator("trace") validates trace documents; a reference to explain.schema.json is found through
    its $id, as any validator would."""
    import jsonschema
    from referencing import Registry, Resource

    schemas = {path.name.split(".")[0]: json.loads(path.read_text(encoding="utf-8"))
               for path in SCHEMAS.glob("*.schema.json")}
    registry = Registry().with_resources((schema["$id"], Resource.from_contents(schema)) for schema in schemas.values())
    return lambda name: jsonschema.Draft202012Validator(schemas[name], registry=registry)


@pytest.fixture(scope="session")
def compare_validator(schema_validator):
    """Validates compare documents."""
    return schema_validator("compare")


@pytest.fixture(scope="session")
def glove_file() -> str:
    """76 real GloVe 6B 50-d vectors (the, and, of, ...), no header."""
    return gensim_datapath("test_glove.txt")


@pytest.fixture(scope="session")
def word2vec_text_file() -> str:
    """1,750 x 10 word2vec text vectors with a 'COUNT DIMS' header."""
    return gensim_datapath("word2vec_pre_kv_c")


@pytest.fixture
def word2vec_binary_file(tmp_path, word2vec_text_file) -> str:
    """The same vectors saved by gensim in word2vec's binary format."""
    from gensim.models import KeyedVectors

    keyed = KeyedVectors.load_word2vec_format(word2vec_text_file)
    path = tmp_path / "vectors.bin"
    keyed.save_word2vec_format(str(path), binary=True)
    return str(path)


LARGE_NORM_WORDS = ("the", "money", "bank", "river", "near", "put", "in", "my")


@pytest.fixture
def large_norm_file(tmp_path) -> str:
    """GloVe-like text vectors with GloVe 6B's norms (6) in 16 dims: unscaled dot scores saturate the softmax.

    Eight words with random directions, so a word's score with itself (36) beats its score with any
    other word by far more than 3; a word that occurs twice splits its weight between its two copies.
    """
    rng = np.random.default_rng(13)
    directions = rng.normal(size=(len(LARGE_NORM_WORDS), 16))
    rows = 6.0 * directions / np.linalg.norm(directions, axis=1, keepdims=True)
    path = tmp_path / "large-norms.txt"
    path.write_text("".join(f"{word} {' '.join(f'{x:.6f}' for x in row)}\n"
                            for word, row in zip(LARGE_NORM_WORDS, rows)), encoding="utf-8")
    return str(path)


def stand_in_layer(vectors, *, heads: int = 1, d_k: int | None = None, mask: str = "others", seed: int = 3,
                   draw_seed: int = 11) -> TrainedLayer:
    """A layer whose "learnt" weights are another seed's random draw: different from its own start, as training
    leaves them."""
    width = d_k or vectors.dims
    weights = draw_projections(vectors.dims, AttentionConfig(mode="projected", d_k=width, heads=heads, seed=draw_seed,
                                                             output_projection=True))
    layer = {"objective": "masked-word" if mask == "others" else "next-word", "heads": heads, "d_k": width,
             "mask": mask, "positions": "none", "position_scale": "auto", "seed": seed, "scale": "sqrt",
             "similarity": "dot", "temperature": 1.0}
    provenance = {
        "vectors": {"name": vectors.name, "fingerprint": vectors.fingerprint, "count": vectors.count,
                    "dims": vectors.dims, "default": True, "limit": None},
        "corpus": {"name": "corpus.txt", "fingerprint": "0" * 32, "sentences": 20, "train_sentences": 18,
                   "held_out_sentences": 2},
        "training": {"epochs": 1, "held_out_loss": 9.5},
        "evaluation": [{"layer": name, "loss": 9.9, "accuracy_at_1": 0.0, "accuracy_at_10": 0.1}
                       for name in ("raw", "random", "trained")],
        "attn_cli_version": attn_cli.__version__,
    }
    return TrainedLayer(projections=weights, layer=layer, provenance=provenance)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """The one `train --demo --json` run of the session (a few seconds): its report, weights file and stderr."""
    path = tmp_path_factory.mktemp("demo") / "demo.npz"
    result = CliRunner().invoke(app, ["train", "--demo", "--out", str(path), "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout), path, result.stderr


def demo_tables(report: dict, width: int) -> list[str]:
    """The tables `attn-cli train --demo` prints for `report`: the command's own renderer, at `width` columns."""
    import io

    from attn_cli.render.consoles import draw_literally, report_console, trimmed
    from attn_cli.render.train import render_train

    buffer = io.StringIO()
    draw_literally(render_train, report, report_console(file=trimmed(buffer), width=width))
    return buffer.getvalue().rstrip("\n").splitlines()


# all-MiniLM-L6-v2 as `attn-cli vectors import minilm` left it in the real cache, found before any test points
# ATTN_CLI_CACHE at its own folder. `.ci/run` imports it and sets ATTN_CLI_MODEL_TESTS=required, so there the
# tests that read it fail instead of skipping when it is missing.
from attn_cli.models import model_folder as _model_folder  # noqa: E402

MINILM_FOLDER = _model_folder("minilm")


@pytest.fixture(scope="session")
def minilm_files(tmp_path_factory) -> Path:
    """A folder of links to the imported model's own files, once per session: what a run keeps beside a model (a
    layer's mapped vocabulary) is written here, never into the user's real cache."""
    if not (MINILM_FOLDER / "meta.json").is_file():
        reason = f"all-MiniLM-L6-v2 is not imported into {MINILM_FOLDER.parent}; run: attn-cli vectors import minilm"
        if os.environ.get("ATTN_CLI_MODEL_TESTS") == "required":
            pytest.fail(reason)
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("minilm")
    for item in MINILM_FOLDER.iterdir():
        if not item.name.startswith(("mapped-", ".tmp")):  # the model's files, not what runs kept beside it
            (folder / item.name).symlink_to(item)
    return folder


@pytest.fixture
def minilm(private_cache, minilm_files) -> Path:
    """The imported model, linked into this test's private cache (`--model minilm` finds it there)."""
    linked = _model_folder("minilm")
    linked.parent.mkdir(parents=True, exist_ok=True)
    linked.symlink_to(minilm_files, target_is_directory=True)
    return MINILM_FOLDER


def tiny_bert(folder: Path, *, seed: int = 0, layers: int = 2, heads: int = 2, dims: int = 8) -> Path:
    """A random BERT-shaped model folder (config.json, vocab.txt, model.safetensors) of a few words, for the
    code paths that read and run a model; the real model's numbers are checked against the reference instead."""
    from safetensors.numpy import save_file

    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "money", "bank", "river", "grows", "flows", "the",
                  "of", "sat", "on", "i", "##s", "un", "##known", ".", ","]
    rng = np.random.default_rng(seed)

    def array(*shape: int) -> np.ndarray:
        return rng.normal(0.0, 0.3, size=shape).astype(np.float32)

    tensors = {"embeddings.word_embeddings.weight": array(len(vocabulary), dims),
               "embeddings.position_embeddings.weight": array(32, dims),
               "embeddings.token_type_embeddings.weight": array(2, dims),
               "embeddings.LayerNorm.weight": 1 + array(dims), "embeddings.LayerNorm.bias": array(dims)}
    for number in range(layers):
        at = f"encoder.layer.{number}"
        for name, shape in ((".attention.self.query", (dims, dims)), (".attention.self.key", (dims, dims)),
                            (".attention.self.value", (dims, dims)), (".attention.output.dense", (dims, dims)),
                            (".intermediate.dense", (4 * dims, dims)), (".output.dense", (dims, 4 * dims))):
            tensors[at + name + ".weight"], tensors[at + name + ".bias"] = array(*shape), array(shape[0])
        for name in (".attention.output.LayerNorm", ".output.LayerNorm"):
            tensors[at + name + ".weight"], tensors[at + name + ".bias"] = 1 + array(dims), array(dims)
    folder.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(folder / "model.safetensors"))
    (folder / "vocab.txt").write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    config = {"model_type": "bert", "hidden_size": dims, "num_attention_heads": heads, "num_hidden_layers": layers,
              "intermediate_size": 4 * dims, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
              "max_position_embeddings": 32, "type_vocab_size": 2, "vocab_size": len(vocabulary)}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    return tiny_bert(tmp_path_factory.mktemp("tiny-bert"))
