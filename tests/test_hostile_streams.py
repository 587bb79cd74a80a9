"""The standard streams and output paths a careless or hostile command line can tangle (second adversarial pass on
issue 25): an output that is also an input, a descriptor open only for reading, a picture over stdout's file,
stderr that cannot be written, an encoding that cannot hold the output, odd widths and names.

Each case runs the program on the descriptors a shell would give it (conftest's `attn`: in this process, or a real
one where the interpreter's exit is the point) or the CLI runner, and must end with its documented exit code, one
stderr line and the user's files as they were.
"""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HANG_SECONDS, attn, stand_in_layer

SENTENCES = b"money bank\n" * 600


@pytest.fixture
def sentences(tmp_path) -> Path:
    path = tmp_path / "f.txt"
    path.write_bytes(SENTENCES)
    return path


@pytest.mark.parametrize("style", ["--plain", "--json"])
@pytest.mark.parametrize("where", ["--file", "stdin"])
def test_an_input_that_is_also_stdout_is_refused(sentences, style, where):
    """`attn-cli explain --file f.txt --plain >> f.txt` read its own output back and grew f.txt without end: refused
    as GNU cat refuses it ("input file is output file"), before a byte is written."""
    args = ["explain", *(["--file", str(sentences)] if where == "--file" else ["-"]), style]
    with sentences.open("rb") as stdin, sentences.open("ab") as stdout:
        finished = attn(args, stdin=stdin if where == "stdin" else None, stdout=stdout)
    name = f"--file {sentences}" if where == "--file" else "stdin"
    assert finished.returncode == 3 and len(finished.stderr.splitlines()) == 1
    assert finished.stderr.decode().startswith(f"attn-cli: error: {name} is also stdout (input file is output file)")
    assert sentences.read_bytes() == SENTENCES


KEPT = b"kept\n"  # what the file behind stdout held before a `>>` run
CORPUS = Path(__file__).resolve().parent.parent / "data" / "senses" / "bank.txt"
MODES = pytest.mark.parametrize("mode", ["wb", "ab"], ids=[">", ">>"])


def stdout_into(path: Path, mode: str, args: list[str], **extra) -> subprocess.CompletedProcess:
    """The program run with `path` as its stdout, opened as `>` ("wb") or `>>` ("ab") opens it; before a `>>` run
    the file holds KEPT."""
    if mode == "ab":
        path.write_bytes(KEPT)
    with path.open(mode) as stdout:
        return attn(args, stdout=stdout, **extra)


@MODES
@pytest.mark.parametrize("flag, args", [
    ("--html", ["explain", "the bank of the river", "--json"]),
    ("--svg", ["explain", "the bank of the river", "--json"]),
    ("--html", ["explain", "-", "--json"]),
    ("--html", ["compare", "the river bank", "the money bank", "--json"]),
    ("--html", ["senses", "bank", "--file", str(CORPUS), "--json"])],
    ids=["explain --html", "explain --svg", "explain - --html", "compare --html", "senses --html"])
def test_a_picture_to_stdouts_own_file_is_written_through_stdout_in_order(tmp_path, mode, flag, args):
    """Issue 32.1: `explain ... --json --html /dev/stdout > x.out` wrote the page through a second descriptor,
    appending, while stdout's own wrote at offset 0: the JSON overwrote the start of the page, exit 0."""
    out = tmp_path / "x.out"
    finished = stdout_into(out, mode, [*args, flag, "/dev/stdout"], input=b"money bank grows\nriver bank\n")
    assert finished.returncode == 0, finished.stderr
    written = out.read_bytes()
    assert written.startswith(KEPT) == (mode == "ab")
    written = written.removeprefix(KEPT if mode == "ab" else b"")
    start, end = (b"<svg", b"</svg>\n") if flag == "--svg" else (b"<!DOCTYPE html>", b"</html>\n")
    begins, ends = written.index(start), written.rindex(end) + len(end)
    batch = args[1] == "-"  # a run of one document writes its picture first, a batch its documents
    assert (ends == len(written)) if batch else (begins == 0)
    documents = (written[:begins] + written[ends:]).splitlines()
    assert [json.loads(line)["command"] for line in documents] == [args[0]] * (2 if batch else 1)


@MODES
@pytest.mark.parametrize("flag, args", [
    ("--parquet", ["explain", "the bank of the river", "--json"]),
    ("--parquet", ["senses", "bank", "--file", str(CORPUS), "--json"]),
    ("--out", ["train", "--demo", "--epochs", "1", "--json"])], ids=["explain", "senses", "train"])
def test_a_binary_file_to_stdouts_own_file_is_refused(tmp_path, mode, flag, args):
    """Issue 32.1: `senses --json --parquet /dev/stdout > t.parquet` (and train's --out) mixed the binary file
    with the report, each through its own descriptor: an unreadable table, exit 0. They cannot share a file."""
    out = tmp_path / "x.out"
    finished = stdout_into(out, mode, [*args, flag, "/dev/stdout"])
    assert finished.returncode == 2
    assert finished.stderr.decode().startswith(f"attn-cli: error: {flag} /dev/stdout is stdout")
    assert out.read_bytes() == (KEPT if mode == "ab" else b"")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["x.out"]


def an_input(option: str, tmp_path: Path, glove_file: str) -> bytes:
    """The bytes of a real input for `option` (a run without the refusal would read it and succeed)."""
    import attn_cli

    if option == "--vectors":
        return Path(glove_file).read_bytes()
    if option == "--weights":
        return stand_in_layer(attn_cli.load_vectors()).to_bytes()
    if option == "--occurrences":
        pytest.importorskip("pyarrow")
        attn_cli.occurrences("bank", CORPUS.read_text(encoding="utf-8").splitlines()).write_parquet(tmp_path / "t")
        return (tmp_path / "t").read_bytes()
    return (b"river\n" * 40) if option == "--labels" else CORPUS.read_bytes()


@MODES
@pytest.mark.parametrize("option, args", [
    ("--vectors", ["explain", "the of and"]), ("--vectors", ["train", str(CORPUS), "--out", "{out}"]),
    ("--weights", ["explain", "money bank grows"]), ("--occurrences", ["senses", "bank"]),
    ("--labels", ["senses", "bank", "--file", str(CORPUS)]), ("--file", ["senses", "bank"]),
    ("--file", ["compare"])], ids=lambda value: value if isinstance(value, str) else value[0])
def test_an_input_that_is_stdouts_file_is_refused(tmp_path, mode, option, args, glove_file):
    """Issue 32.2: `senses bank --occurrences t.parquet >> t.parquet` and `explain ... --vectors v.txt >> v.txt`
    wrote the results into their input, exit 0. Every input that is stdout's file is refused, as --file was."""
    path = tmp_path / "input"
    content = an_input(option, tmp_path, glove_file)
    path.write_bytes(content)
    args = [argument.format(out=tmp_path / "layer.npz") for argument in args]
    with path.open(mode) as stdout:
        finished = attn([*args, option, str(path), "--json"], stdout=stdout)
    assert finished.returncode == 3
    assert finished.stderr.decode().startswith(f"attn-cli: error: {option} {path} is also stdout")
    assert path.read_bytes() == (content if mode == "ab" else b"")
    assert not (tmp_path / "layer.npz").exists()


@pytest.mark.parametrize("args, readers", [
    (["senses", "bank", "-", "--labels", "/dev/stdin"], ["-", "--labels /dev/stdin"]),
    (["senses", "bank", "--file", "/dev/fd/0", "--labels", "/proc/self/fd/0"], ["--file /dev/fd/0",
                                                                                 "--labels /proc/self/fd/0"]),
    (["compare", "-", "--file", "/dev/stdin"], ["-", "--file /dev/stdin"])])
def test_two_inputs_that_read_stdin_are_refused_naming_both(args, readers):
    """Issue 32.12: `cat b.txt | senses bank - --labels /dev/stdin` said "no sentence on stdin": the labels had
    read the pipe empty."""
    finished = attn(args, input=CORPUS.read_bytes())
    stderr = finished.stderr.decode()
    assert finished.returncode == 2 and finished.stdout == b"" and len(stderr.splitlines()) == 1
    assert all(f"{reader} " in stderr for reader in readers) and "stdin" in stderr


def test_a_training_corpus_that_is_also_stdout_is_refused(tmp_path, sentences):
    with sentences.open("ab") as stdout:
        finished = attn(["train", str(sentences), "--out", str(tmp_path / "layer.npz")], stdout=stdout)
    assert finished.returncode == 3 and b"is also stdout (input file is output file)" in finished.stderr
    assert sentences.read_bytes() == SENTENCES and not (tmp_path / "layer.npz").exists()


MINE = b"mine, given only for reading\n"


@pytest.mark.parametrize("flag, target", [
    ("--html", "/dev/stdin"), ("--svg", "/dev/fd/0"), ("--html", "/proc/self/fd/0"), ("--html", "/dev/fd/{n}"),
    ("--svg", "/proc/self/fd/{n}")])
def test_a_stream_path_open_only_for_reading_is_refused(tmp_path, flag, target):
    """`--html /dev/stdin < mine.txt` (or `--html /dev/fd/3 3< mine.txt`) appended the page to mine.txt, a file
    given only for reading."""
    mine = tmp_path / "mine.txt"
    mine.write_bytes(MINE)
    with mine.open("rb") as given:
        target = target.format(n=given.fileno())  # the descriptor the child inherits, as `3<` would give it
        finished = attn(["explain", "money", "bank", flag, target], stdin=given, pass_fds=(given.fileno(),))
    assert finished.returncode == 2 and finished.stdout == b""
    assert finished.stderr.decode() == (f"attn-cli: error: {flag} {target} is open for reading only; give a file "
                                        f"name, or a descriptor open for writing (e.g. {flag} /dev/stdout)\n")
    assert mine.read_bytes() == MINE and sorted(path.name for path in tmp_path.iterdir()) == ["mine.txt"]


@pytest.mark.parametrize("mode", ["wb", "ab"], ids=[">", ">>"])
@pytest.mark.parametrize("flag, args", [
    ("--html", ["explain", "money", "bank", "grows", "--json"]),
    ("--svg", ["explain", "money", "bank", "grows", "--json"]),
    ("--out", ["train", "--demo"])])
def test_a_file_output_that_is_the_file_behind_stdout_is_refused(tmp_path, mode, flag, args):
    """`--json > o.json --html o.json` was exit 0 and the JSON lost: the page replaced the file stdout wrote."""
    out = tmp_path / "o.json"
    out.write_bytes(b"kept\n")
    with out.open(mode) as stdout:
        finished = attn([*args, flag, str(out)], stdout=stdout)
    assert finished.returncode == 2
    hint = f" (or {flag} /dev/stdout to add it to stdout)" if flag != "--out" else ""  # a binary file: never
    assert finished.stderr.decode() == (f"attn-cli: error: {flag} {out} is the file stdout writes into; writing it "
                                        f"would replace what stdout wrote, so give {flag} another file name{hint}\n")
    assert out.read_bytes() == (b"kept\n" if mode == "ab" else b"")


def test_a_file_output_that_is_the_file_behind_stderr_is_refused(tmp_path):
    log = tmp_path / "log.txt"
    with log.open("ab") as stderr:
        finished = attn(["explain", "money", "bank", "--svg", str(log)], stderr=stderr)
    assert finished.returncode == 2 and finished.stdout == b""
    assert log.read_text(encoding="utf-8").startswith(f"attn-cli: error: --svg {log} is the file stderr writes into")


def closed_pipe() -> int:
    """The writing end of a pipe whose reader has gone: every write to it fails with EPIPE, as after `| head`."""
    reader, writer = os.pipe()
    os.close(reader)
    return writer


@pytest.mark.real_process  # the interpreter's exit: its last flush of a failing stream
@pytest.mark.parametrize("stderr", ["/dev/full", "pipe"], ids=["2>/dev/full", "stderr a broken pipe"])
@pytest.mark.parametrize("args, code", [
    (["explain", "zzqqxx", "bank", "--json"], 0), (["explain", "zzqqxx", "bank", "--plain"], 0),
    (["explain", "zzqqxx", "qqzzyy"], 3), (["explain", "money", "bank", "--heads", "0"], 2)])
def test_stderr_that_cannot_be_written_loses_neither_data_nor_the_exit_code(args, code, stderr):
    """`explain zzqqxx bank 2>/dev/full` was exit 1 with nothing on stdout: the warning's failed write ended the
    run. Messages are best effort; the exit code still tells."""
    target = os.open(stderr, os.O_WRONLY) if stderr == "/dev/full" else closed_pipe()
    try:
        finished = attn(args, stderr=target)
    finally:
        os.close(target)
    assert finished.returncode == code
    assert (b"bank" in finished.stdout) == (code == 0)


@pytest.mark.real_process  # the interpreter's exit: its last flush of a failing stream
def test_training_with_stderr_full_writes_its_weights(tmp_path):
    full = os.open("/dev/full", os.O_WRONLY)
    try:
        finished = attn(["train", "--demo", "--epochs", "1", "--out", str(tmp_path / "layer.npz"), "--json"],
                        stderr=full)
    finally:
        os.close(full)
    assert finished.returncode == 0 and b'"command":"train"' in finished.stdout
    assert (tmp_path / "layer.npz").stat().st_size > 0


@pytest.mark.parametrize("encoding, args, character", [
    ("ascii", ["explain", "money", "bank"], "\\u201c"),
    ("latin-1", ["explain", "money", "bank", "grows"], "\\u201c"),
    ("ascii", ["explain", "café", "bank", "--plain"], "\\xe9")])
def test_an_output_encoding_that_cannot_hold_the_text_names_the_fix(tmp_path, encoding, args, character):
    """`PYTHONIOENCODING=ascii attn-cli explain money bank` was exit 1, "internal error: UnicodeEncodeError ... this is
    a bug": an output failure, exit 2, one line naming the fix, and no cut document in the file behind stdout."""
    out = tmp_path / "out.txt"
    named = codecs.lookup(encoding).name  # Python's name for it: latin-1 is iso8859-1
    with out.open("wb") as stdout:
        finished = attn(args, stdout=stdout, env={"PYTHONIOENCODING": encoding})
    assert finished.returncode == 2 and out.read_bytes() == b""
    assert finished.stderr.decode() == (f"attn-cli: error: cannot write to stdout: its encoding ({named}) has no "
                                        f"{character}; set PYTHONIOENCODING=utf-8 or a UTF-8 locale (LC_ALL=C.UTF-8)\n")


def test_a_listing_that_its_output_encoding_cannot_hold_names_the_fix(run, tmp_path):
    """`vectors list` and `vectors info` print their lines: a set named café under PYTHONIOENCODING=ascii was exit
    1, "this is a bug", as the tables were before; now the same one line and exit 2."""
    vectors = tmp_path / "café.txt"
    vectors.write_text("bank 0.1 0.2 0.3\nmoney 0.2 0.1 0.0\nriver 0.3 0.3 0.1\n", encoding="utf-8")
    assert run("vectors", "import", str(vectors)).exit_code == 0
    for args in (["vectors", "list"], ["vectors", "info", str(vectors)]):
        finished = attn(args, env={"PYTHONIOENCODING": "ascii"})
        assert finished.returncode == 2, finished.stderr
        assert finished.stderr.decode().endswith("cannot write to stdout: its encoding (ascii) has no \\xe9; set "
                                                 "PYTHONIOENCODING=utf-8 or a UTF-8 locale (LC_ALL=C.UTF-8)\n")


def test_a_batch_stops_at_the_line_its_output_encoding_cannot_hold(tmp_path):
    out = tmp_path / "out.txt"
    with out.open("wb") as stdout:
        finished = attn(["explain", "-", "--plain"], stdout=stdout, env={"PYTHONIOENCODING": "ascii"},
                        input=b"money bank\ncaf\xc3\xa9 bank\n")
    assert finished.returncode == 2 and finished.stderr.decode().startswith(
        "attn-cli: error: line 2 of stdin: cannot write to stdout: its encoding (ascii) has no \\xe9")
    assert [line.split(b"\t")[0] for line in out.read_bytes().splitlines()] == [b"#line", b"1", b"1"]


@pytest.mark.parametrize("columns", ["0", "1", "10", "59"])
def test_a_tiny_width_draws_the_tables_at_the_narrowest_legible_one(run, columns):
    """`COLUMNS=0 attn-cli explain money bank grows` wrote nothing (exit 0), and 1 to 10 filled every cell with "…":
    the tables are drawn at least 60 columns wide."""
    narrowest = run("explain", "money bank grows", env={"COLUMNS": "60"})
    result = run("explain", "money bank grows", env={"COLUMNS": columns})
    assert result.exit_code == 0 and result.stdout == narrowest.stdout
    assert "money" in result.stdout and max(map(len, result.stdout.splitlines())) <= 60


LONG = "a" * 300  # longer than any file system's NAME_MAX (255 bytes)


@pytest.mark.parametrize("args, code", [
    (["explain", "money bank", "--html", LONG], 2), (["explain", "money bank", "--svg", f"{LONG}.svg"], 2),
    (["train", "--demo", "--out", LONG], 2), (["explain", "money bank", "--vectors", LONG], 4),
    (["explain", "money bank", "--vectors", f"/tmp/{LONG}.txt"], 4), (["vectors", "import", LONG], 4)],
    ids=["--html", "--svg", "train --out", "--vectors", "--vectors in a folder", "vectors import"])
def test_a_file_name_too_long_is_one_short_line(run, args, code):
    """A 300-byte name was exit 1, "internal error: OSError: [Errno 36] File name too long" echoing all of it."""
    result = run(*args)
    assert result.exit_code == code and result.stdout == ""
    assert "File name too long" in result.stderr and "bug" not in result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.count("a") < 100  # the name shortened


@pytest.mark.parametrize("length", [251, 255])
def test_a_page_with_the_longest_name_a_folder_holds_is_written(run, tmp_path, length):
    """A 251 to 255-byte --html name failed: the temporary file beside it (".NAME.xxxxxxxx.tmp") was too long."""
    page = tmp_path / ("p" * (length - len(".html")) + ".html")
    assert run("explain", "money bank", "--html", str(page)).exit_code == 0
    assert [path.name for path in tmp_path.iterdir()] == [page.name] and page.read_text().startswith("<!DOCTYPE")


@pytest.mark.parametrize("args, message", [
    (["explain", "money bank", "--html", ""], "--html needs a file name, not '' or . (a folder); give one, e.g. --html "
                                              "report.html"),
    (["explain", "money bank", "--html", "-"], "--html - would write a file named -; give a file name (./- if you "
                                               "mean one), or --html /dev/stdout to add it to stdout"),
    (["explain", "money bank", "--svg", "--"], "--svg -- would write a file named --; give a file name (./-- if you "
                                               "mean one), or --svg /dev/stdout to add it to stdout"),
    (["train", "--demo", "--out", "-"], "--out - would write a file named -; give a file name (./- if you mean "
                                        "one)"),
    (["senses", "bank", "--example", "--parquet", "-"], "--parquet - would write a file named -; give a file name "
                                                        "(./- if you mean one)"),
    (["vectors", "export", "default", "-"], "FILE - would write a file named -; give a file name (./- if you mean "
                                            "one)"),
    (["vectors", "info", ""], "vectors info needs a SOURCE: a cache id (attn-cli vectors list shows them), a vector "
                              "file or a gensim-data name")])
def test_empty_and_dash_names_are_refused_in_words_that_fit(run, args, message):
    """`--html ""` said ". is a directory", `--html -` and `--html --` wrote files named - and --, `vectors info ''`
    said "error:  is not cached"."""
    result = run(*args)
    assert result.exit_code == 2 and result.stderr == f"attn-cli: error: {message}\n"


def test_a_picture_in_a_folder_that_is_a_file_says_so(run, tmp_path):
    """`--svg file/x.svg` with a regular file `file` said the folder "does not exist"."""
    (tmp_path / "file").write_text("x")
    result = run("explain", "money bank", "--svg", str(tmp_path / "file" / "x.svg"))
    assert result.exit_code == 2
    assert result.stderr == (f"attn-cli: error: --svg {tmp_path}/file/x.svg: {tmp_path}/file is a file, not a "
                             "folder; give a file name in an existing folder\n")


@pytest.mark.parametrize("flag, args", [
    ("--parquet", ["explain", "the bank of the river"]), ("--parquet", ["senses", "bank", "--example", "--json"]),
    ("--out", ["train", "--demo", "--epochs", "1"]), ("FILE", ["vectors", "export", "default"]),
    ("FILE", ["vectors", "export", "default", "--format", "word2vec-binary"])],
    ids=["explain", "senses", "train", "export", "export binary"])
@pytest.mark.parametrize("target", ["/dev/stdout", "/dev/fd/1"])
def test_a_binary_file_to_stdout_through_a_pipe_is_refused(tmp_path, flag, args, target):
    """Issue 32 audit 6-8: `vectors export v /dev/stdout | cat > v.w2v` put the report after the vectors and
    `senses --parquet /dev/stdout | cat` the report after the table, exit 0; into a closed pipe export was exit 1,
    said nothing. A binary file cannot share stdout with the report, whatever stdout is: refused before a byte."""
    command = [*args[:3], target, *args[3:]] if flag == "FILE" else [*args, flag, target]
    finished = attn(command, cwd=tmp_path)
    assert (finished.returncode, finished.stdout) == (2, b""), finished.stderr[-300:]
    assert finished.stderr.decode().startswith(f"attn-cli: error: {flag} {target} is ")  # train: not a regular file
    assert list(tmp_path.iterdir()) == []


@pytest.mark.real_process  # the interpreter's exit: its last flush of a failing stream
def test_a_picture_to_stdout_into_a_closed_pipe_ends_quietly_with_141():
    """Issue 32 audit 8: a file written to /dev/stdout meeting a closed pipe (EPIPE as the OutputError of its file)
    was exit 1 with nothing said, click's handler; it ends as a closed stdout does."""
    stdout = closed_pipe()
    try:
        finished = attn(["explain", "money bank grows", "--json", "--html", "/dev/stdout"], stdout=stdout)
    finally:
        os.close(stdout)
    assert (finished.returncode, finished.stderr) == (141, b"")


@pytest.mark.real_process  # the interpreter's exit: its last flush of a failing stream
@pytest.mark.parametrize("args", [["--help"], ["-h"], ["explain", "--help"], ["train", "--help"], ["vectors", "--help"],
                                  ["vectors", "import", "-h"], ["--version"]])
def test_help_into_a_closed_pipe_ends_quietly_with_141(args):
    """`attn-cli explain --help | head -c 1` was exit 1 with nothing said: Rich's own broken-pipe handler."""
    stdout = closed_pipe()
    try:
        finished = attn(args, stdout=stdout)
    finally:
        os.close(stdout)
    assert (finished.returncode, finished.stderr) == (141, b"")


INTERRUPTED_IMPORT = """
import builtins, sys
real_import = builtins.__import__

def interrupted(name, *args, **kwargs):
    if name == {module!r}:  # Ctrl-C arriving while the command line's modules load
        raise KeyboardInterrupt
    return real_import(name, *args, **kwargs)

builtins.__import__ = interrupted
sys.argv = ["attn-cli", "explain", "money bank"]
from attn_cli.cli import run
run()
"""


@pytest.mark.parametrize("module", ["typer", "attn_cli.cli.app", "numpy"])
def test_ctrl_c_while_the_modules_load_exits_130_quietly(module):
    """Ctrl-C in the first half second, as the modules load, printed a KeyboardInterrupt traceback."""
    finished = subprocess.run([sys.executable, "-c", INTERRUPTED_IMPORT.format(module=module)], capture_output=True,
                              timeout=HANG_SECONDS)
    assert (finished.returncode, finished.stderr) == (130, b"")


def test_a_full_temporary_folder_is_named_not_stdout(run, monkeypatch, tmp_path):
    """A large JSON document spilling to a full $TMPDIR said "cannot write to stdout: No space left on device"."""
    import tempfile

    from attn_cli.render import json_out

    monkeypatch.setattr(json_out, "STREAM_ABOVE", 0)  # every document is large, and spills past 16 bytes
    monkeypatch.setattr(json_out, "BUFFER_BYTES", 16)
    monkeypatch.setattr(tempfile, "TemporaryFile", lambda *args, **kwargs: open("/dev/full", "w+b"))  # a full disk
    result = run("explain", "money bank grows", "--json")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"attn-cli: error: cannot hold the JSON in the temporary folder {tempfile.gettempdir()}: "
                             "No space left on device; set TMPDIR to a folder with room for it\n")


@MODES
@pytest.mark.parametrize("args, name", [
    (["vectors", "export", "{input}", "{out}"], "NAME"), (["vectors", "export", "{input}", "{out}", "--json"], "NAME"),
    (["vectors", "import", "{input}"], "SOURCE"), (["vectors", "info", "{input}"], "SOURCE")],
    ids=["export", "export --json", "import", "info"])
def test_a_vector_file_that_is_stdouts_file_is_refused(tmp_path, mode, args, name, glove_file):
    """Issue 32 audit 1: `vectors export v.txt o.txt >> v.txt` (import, info too) appended the report to the vector
    file, exit 0: refused as --vectors is."""
    path = tmp_path / "v.txt"
    path.write_bytes(Path(glove_file).read_bytes())
    before = path.read_bytes()
    with path.open(mode) as stdout:
        finished = attn([arg.format(input=path, out=tmp_path / "o.txt") for arg in args], stdout=stdout)
    assert finished.returncode == 3
    assert finished.stderr.decode().startswith(f"attn-cli: error: {name} {path} is also stdout")
    assert path.read_bytes() == (before if mode == "ab" else b"")
    assert not (tmp_path / "o.txt").exists()


LONG_PATH = "d/" * 2000 + "x"


@pytest.mark.parametrize("args, code, culprit", [
    (["senses", "bank", "--file", LONG_PATH], 2, "--file d/d/"),
    (["senses", "bank", "--file", str(CORPUS), "--labels", LONG_PATH], 2, "--labels d/d/"),
    (["vectors", "export", "default", LONG_PATH], 2, "FILE d/d/"),
    (["senses", "bank", "--example", "--html", LONG_PATH + ".html"], 2, "--html d/d/"),
    (["vectors", "export", "default", "x.txt", "--format", "q" * 5000], 2, "'--format'"),
    (["senses", "bank", "--example", "--cluster-seed", "q" * 5000], 2, "'--cluster-seed'")],
    ids=["--file", "--labels", "export FILE", "--html", "--format", "--cluster-seed"])
def test_every_message_shortens_a_long_path_or_value(run, tmp_path, monkeypatch, args, code, culprit):
    """Issue 32 audit 9: messages quoted a 4 KB path (twice in "folder ... does not exist") or click's "Invalid
    value" a 5 KB value; every message is cut where it is said (messages.fail), the parser's too."""
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == code and culprit in result.stderr, result.stderr[:300]
    assert len(result.stderr) < 1000 and "characters)" in result.stderr and len(result.stderr.splitlines()) == 1
