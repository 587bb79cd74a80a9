"""--html and --svg never replace what they should not (issue 14.4): an input, a device, a FIFO, a link.

Each case ends with its documented exit code and leaves the user's files as they were.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from conftest import HANG_SECONDS, NO_BYTECODE, attn

SENTENCES = "money bank grows\nriver bank flows\n"


@pytest.fixture
def sentences(tmp_path) -> Path:
    path = tmp_path / "sentences.txt"
    path.write_text(SENTENCES, encoding="utf-8")
    return path


@pytest.mark.parametrize("flag", ["--html", "--svg"])
def test_a_picture_pointed_at_the_file_input_is_refused(run, sentences, flag):
    result = run("explain", "--file", str(sentences), flag, str(sentences))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"attn-cli: error: {flag} {sentences} is the --file input; writing it would replace "
                             f"it, so give {flag} another file name\n")
    assert sentences.read_text(encoding="utf-8") == SENTENCES


def test_a_picture_pointed_at_the_vectors_file_through_a_link_is_refused(run, tmp_path, glove_file):
    vectors = tmp_path / "vectors.txt"
    vectors.write_bytes(Path(glove_file).read_bytes())
    link = tmp_path / "report.svg"
    link.symlink_to(vectors)
    result = run("compare", "the people said", "the people say", "--vectors", str(vectors), "--svg", str(link),
                 env={"ATTN_CLI_CACHE": str(tmp_path / "cache")})
    assert result.exit_code == 2 and "is the --vectors input" in result.stderr
    assert vectors.read_bytes() == Path(glove_file).read_bytes() and link.is_symlink()


def test_a_linked_output_replaces_the_file_it_names_and_the_link_stays(run, tmp_path):
    target = tmp_path / "pictures" / "report.html"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    os.chmod(target, 0o640)
    link = tmp_path / "latest.html"
    link.symlink_to(target)
    assert run("explain", "money bank grows", "--html", str(link)).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the file keeps its permissions


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_is_written_into_never_replaced(run, tmp_path):
    """A private copy of /dev/null: the old rename would have put a regular file in its place."""
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    assert run("explain", "money bank grows", "--svg", str(null), "--html", str(tmp_path / "r.html")).exit_code == 0
    assert stat.S_ISCHR(null.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_a_fifo_receives_the_page_and_stays_a_fifo(run, tmp_path):
    fifo = tmp_path / "page.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = run("explain", "money bank grows", "--html", str(fifo))
    reader.join(timeout=HANG_SECONDS)
    assert result.exit_code == 0 and stat.S_ISFIFO(fifo.stat().st_mode)
    assert received and received[0].startswith(b"<!DOCTYPE html>")


def test_a_picture_pointed_at_the_file_on_stdin_is_refused(sentences):
    """`explain - --html FILE < FILE` would have read the sentences and then replaced them with the page."""
    with sentences.open("rb") as stdin:
        result = attn(["explain", "-", "--html", str(sentences)], stdin=stdin, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"attn-cli: error: --html {sentences} is the stdin input; writing it would replace "
                             "it, so give --html another file name\n")
    assert sentences.read_text(encoding="utf-8") == SENTENCES


def limited_run(args: list[str], stdout, limit_bytes: int | None = None, stdin: bytes | None = None):
    """`python -m attn_cli ARGS` with stdout on `stdout` (an open file) and every file it writes capped at
    `limit_bytes` (RLIMIT_FSIZE, what `ulimit -f` sets, in a process of its own): (exit code, stderr)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    finished = attn(args, stdout=stdout, input=stdin, **({"preexec_fn": limit} if limit_bytes is not None else {}))
    return finished.returncode, finished.stderr.decode()


def test_a_write_past_the_file_size_limit_is_exit_2_and_leaves_no_cut_document(tmp_path):
    """Issue 25.1: `( ulimit -f 8; attn-cli explain ... --json > out.json )` was exit 0 with 8,192 bytes of JSON."""
    import json

    out = tmp_path / "out.json"
    with out.open("wb") as stdout:
        code, stderr = limited_run(["explain", "money bank grows over the river bank", "--json"], stdout, 8192)
    assert code == 2 and stderr == ("attn-cli: error: cannot write to stdout: File too large; redirect it to a file "
                                    "on a disk with room\n")
    assert out.read_bytes() == b""  # absent, not cut
    lines = b"money bank grows\nriver bank flows\nmoney bank grows over the river bank the river flows\n"
    with out.open("wb") as stdout:  # a batch: the documents before the failure stay whole, the failed one goes
        code, _ = limited_run(["explain", "-", "--json", "--neighbors", "0"], stdout, 16_384, stdin=lines)
    written = out.read_bytes().splitlines(keepends=True)
    assert code == 2 and written and all(line.endswith(b"\n") for line in written)
    assert [json.loads(line)["line"] for line in written] == list(range(1, len(written) + 1))


def test_a_picture_past_the_file_size_limit_is_absent_and_exit_2(tmp_path):
    page = tmp_path / "page.html"
    code, stderr = limited_run(["explain", "money bank grows", "--html", str(page), "--json"],
                               (tmp_path / "out.json").open("wb"), 8192)
    assert code == 2 and f"cannot write --html {page}: File too large" in stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.json"]  # no page, no temporary file


@pytest.mark.parametrize("target", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_a_page_written_to_stdout_appends_to_what_the_log_held(tmp_path, target):
    """Issue 25.2: `--html /dev/stdout >> log` replaced the log with the page (a rename onto the file behind)."""
    log = tmp_path / "log.txt"
    log.write_bytes(b"previous line\n")
    with log.open("ab") as stdout:
        code, stderr = limited_run(["explain", "money bank grows", "--html", target, "--json"], stdout)
    assert code == 0, stderr
    text = log.read_bytes()
    assert text.startswith(b"previous line\n<!DOCTYPE html>")  # a run of one document writes its page first
    assert text.endswith(b"}\n") and b'\n{"' in text
    assert sorted(path.name for path in tmp_path.iterdir()) == ["log.txt"]


def test_stdout_failing_mid_group_says_what_the_batch_left_unread(tmp_path):
    """Issue 25 item 7 without --strict: a write failure that ends a batch said nothing of the lines of its group
    read but never run, nor of the input after them."""
    import json
    import re
    import subprocess
    import sys

    sentences = tmp_path / "sentences.txt"
    sentences.write_text("money bank grows\n" * 10, encoding="utf-8")
    out = tmp_path / "out.json"

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    with sentences.open("rb") as stdin, out.open("wb") as stdout:  # a file on stdin: one group of all ten lines
        finished = subprocess.run([sys.executable, "-m", "attn_cli", "explain", "-", "--json", "--neighbors", "0"],
                                  stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, preexec_fn=limit,
                                  env={**os.environ, **NO_BYTECODE}, timeout=HANG_SECONDS)
    stderr = finished.stderr.decode()
    written = [json.loads(line)["line"] for line in out.read_bytes().splitlines()]
    failed = len(written) + 1
    assert finished.returncode == 2 and 1 < failed < 10 and written == list(range(1, failed))
    assert stderr == (f"attn-cli: error: line {failed} of stdin: cannot write to stdout: File too large; redirect it "
                      f"to a file on a disk with room (the run stopped at line {failed}: lines {failed + 1} to 10 were "
                      "read but not run, and no line after line 10 was read)\n"), stderr
    assert re.search("bug|Traceback", stderr) is None


@pytest.mark.parametrize("args", [
    ["explain", "money bank grows", "--html", "/dev/full"],
    ["explain", "money bank grows", "--svg", "/dev/full"],
    ["explain", "money bank grows", "--json", "--svg", "/dev/full"],
    ["trace", "money bank grows", "--word", "bank", "--plain", "--html", "/dev/full"],
    ["compare", "river bank flows", "money bank grows", "--html", "/dev/full"],
], ids=["explain html", "explain svg", "json svg", "trace plain html", "compare html"])
def test_a_picture_that_cannot_be_written_leaves_stdout_empty(run, args):
    """Issue 25 items 1 and 12: `--html /dev/full` printed the tables, then failed with exit 2; a run of one
    document now writes its pictures first, so nothing on stdout precedes the error."""
    result = run(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("attn-cli: error: cannot write --") and len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("style", ["--plain", "--tables"])
def test_a_batch_cut_by_the_file_size_limit_keeps_whole_documents_only(run, tmp_path, monkeypatch, style):
    """Issue 25 item 1 for records and tables (JSON already was): a write past `ulimit -f` left the document it
    cut half-written in the file behind stdout."""
    monkeypatch.setenv("COLUMNS", "80")  # the tables' width in the child, as the runner's
    lines = ["money bank grows", "river bank flows", "money bank grows over the river bank the river flows",
             "the bank of the river"]
    options = ["--neighbors", "0", *([style] if style == "--plain" else [])]
    expected = [run("explain", "-", *options, input="".join(f"{line}\n" for line in lines[:count])).stdout.encode()
                for count in range(len(lines) + 1)]
    out = tmp_path / "out.txt"
    with out.open("wb") as stdout:
        code, stderr = limited_run(["explain", "-", *options], stdout, len(expected[-1]) // 2,
                                   stdin="".join(f"{line}\n" for line in lines).encode())
    assert code == 2 and "File too large" in stderr
    assert out.read_bytes() in expected[1:-1]  # whole documents, the cut one absent


@pytest.mark.parametrize("picture", ["--html", "--svg"])
def test_an_endless_batch_with_a_picture_stops_at_its_bound(run, tmp_path, monkeypatch, picture):
    """A batch's pictures hold every document until the run ends, so an endless stdin (`yes | explain -
    --html page.html`) grew without bound: the pictures stop at MAX_PICTURED sentences, saying how to go on,
    and the page is absent, never cut."""
    import attn_cli.cli.outputs as outputs

    monkeypatch.setattr(outputs, "MAX_PICTURED", 3)
    target = tmp_path / f"page.{picture[2:]}"
    result = run("explain", "-", "--json", picture, str(target), input="money bank grows\n" * 10)
    assert result.exit_code == 2 and not target.exists()
    assert f"{picture} holds at most 3 sentences" in result.stderr and "split -l 3" in result.stderr
    assert "the run stopped at line 4" in result.stderr
    assert [json.loads(line)["line"] for line in result.stdout.splitlines()] == [1, 2, 3]


@pytest.mark.parametrize("existing", [0o600, None])
def test_a_file_being_written_is_readable_by_no_one_else(tmp_path, existing):
    from attn_cli.files import AtomicFile

    target = tmp_path / "report.html"
    if existing is not None:
        target.write_text("private", encoding="utf-8")
        target.chmod(existing)
    writer = AtomicFile(target)
    writer.stream.write(b"<html>")
    (temporary,) = [path for path in tmp_path.iterdir() if path.name.endswith(".tmp")]
    assert temporary.stat().st_mode & 0o077 == 0  # while it is written
    writer.close()
    umask = os.umask(0o022)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == (existing if existing is not None else 0o666 & ~umask)
