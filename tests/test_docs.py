"""The documentation (README.md and docs/*.md) against the program it documents.

Every command and option of the CLI is named somewhere in the docs, every relative
link (and its #anchor) leads somewhere, the README stays a short front door, and
its short examples are the program's real output. The examples in the pages are
checked where the behaviour is tested: the trace worked example (docs/trace.md) in
test_cli_trace.py, the exit code table (docs/limits.md) in test_errors.py.
"""

from __future__ import annotations

import importlib
import os
import re
import unicodedata
from pathlib import Path

import pytest
import typer
from conftest import HANG_SECONDS, demo_tables

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 250  # 230, then the real trained layer's section (issue 34)

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks and inline code, where links and headings live."""
    lines, inside = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            lines.append(re.sub(r"`[^`]*`", "``", line))
    return "\n".join(lines)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    """The anchors of a page's headings (outside code blocks), numbered as GitHub numbers repeats."""
    anchors: set[str] = set()
    inside = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        match = None if inside else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug = _slug(match.group(1).replace("`", ""))
            n = 0
            while slug in anchors:
                n += 1
                slug = f"{base}-{n}"
            anchors.add(slug)
    return anchors


def _docs_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in PAGES)


def _commands():
    """(path of words, click command) for the app and every command and sub-command under it."""
    app = importlib.import_module("attn_cli.cli.app").app
    todo = [((), typer.main.get_command(app))]
    while todo:
        path, command = todo.pop()
        yield path, command
        if hasattr(command, "list_commands"):  # a group: its commands as click finds them (some are built then)
            context = typer.Context(command)
            todo += [((*path, name), command.get_command(context, name))
                     for name in sorted(command.list_commands(context))]


def test_the_docs_exist():
    names = {path.name for path in PAGES}
    for page in ("index.md", "explain.md", "compare.md", "trace.md", "options.md", "python-api.md", "json.md",
                 "batch.md", "pictures.md", "vectors.md", "limits.md", "benchmarks.md", "development.md"):
        assert page in names


def test_every_command_is_in_the_docs():
    text = _docs_text()
    paths = [path for path, _ in _commands() if path]
    assert {("explain",), ("compare",), ("trace",), ("vectors",), ("vectors", "import")} <= set(paths)
    missing = [" ".join(path) for path in paths if f"attn-cli {' '.join(path)}" not in text]
    assert not missing, f"commands named nowhere in README.md or docs/*.md: {missing}"


def test_every_option_is_in_the_docs():
    text = _docs_text()
    options = {}
    for path, command in _commands():
        for param in command.params:
            for opt in [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]:
                if opt.startswith("--") and opt != "--help":
                    options.setdefault(opt, " ".join(path) or "attn-cli")
    assert "--vectors" in options and "--shuffle-check" in options and "--all" in options
    missing = {opt: where for opt, where in options.items()
               if not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text)}
    assert not missing, f"options (and a command taking them) named nowhere in the docs: {missing}"


def _links():
    for page in PAGES:
        for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            yield page, target


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(page):
    for source, target in _links():
        if source != page:
            continue
        file_part, _, anchor = target.partition("#")
        destination = (source.parent / file_part).resolve() if file_part else source
        assert destination.exists(), f"{source.relative_to(ROOT)} links to {target}: no such file"
        if anchor and destination.suffix == ".md":
            assert anchor in _anchors(destination), (f"{source.relative_to(ROOT)} links to {target}: "
                                                     f"no heading with that anchor in {destination.relative_to(ROOT)}")


def test_the_links_were_found():
    targets = {target for _, target in _links()}
    assert "docs/explain.md" in targets and "explain.png" in targets and "../schemas/explain.schema.json" in targets


def test_the_readme_is_a_short_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "attn-cli explain" in text and "import attn_cli" in text
    # the two set-up commands CI runs (.ci/run), byte for byte
    assert ('python3 -m venv .venv && . .venv/bin/activate && pip install . && attn-cli explain "money bank grows"'
            in text)
    assert '. .venv/bin/activate && pip install ".[test]" && pytest' in text
    for page in PAGES[1:]:
        assert f"(docs/{page.name})" in text, f"the README does not link to docs/{page.name}"


SELF_CONTAINED = re.compile(r"--file|--vectors|vectors (import|list)")  # these need files the docs have


def console_examples() -> list[tuple[str, str, list[str]]]:
    """(page, command, the lines shown under it) for each `$ attn-cli ...` in a console block of the docs
    that runs on the embedded vectors alone."""
    examples = []
    for page in PAGES:
        for block in re.findall(r"```console\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for command, shown in re.findall(r"^\$ (attn-cli .*)\n((?:(?!\$ ).*\n)*)", block, re.M):
                if not SELF_CONTAINED.search(command):
                    examples.append((page.name, command, shown.rstrip("\n").splitlines()))
    return examples


def _same_line(shown: str, printed: str) -> bool:
    """Equal text; a JSON line (jq's output) as equal values, floats to 12 digits (jq rounds its own way)."""
    import json

    def rounded(value):
        if isinstance(value, float):
            return round(value, 12)
        if isinstance(value, list):
            return [rounded(item) for item in value]
        return {key: rounded(item) for key, item in value.items()} if isinstance(value, dict) else value

    if shown.startswith("{") or shown.startswith("["):
        return rounded(json.loads(shown)) == rounded(json.loads(printed))
    return shown == printed


@pytest.mark.parametrize(("page", "command", "shown"), console_examples(), ids=lambda x: str(x)[:60])
def test_every_console_example_is_the_real_output(page, command, shown, tmp_path, request):
    """Each example's lines are what the command prints (stdout, then stderr): whole, or the parts between
    `...` in order, the first part at the start and the last at the end unless `...` stands there.

    `train --demo` is the session's one demo run (conftest.demo_run), drawn by the command's own renderer at 80
    columns: the demo is trained once per test run."""
    import subprocess
    import sys

    if command.startswith("attn-cli train --demo "):
        printed = demo_tables(request.getfixturevalue("demo_run")[0], width=80)
    else:
        cache = str(tmp_path / "cache")
        if "--model minilm" in command:  # the imported model, linked into this test's cache (or skipped/required)
            request.getfixturevalue("minilm")
            cache = os.environ["ATTN_CLI_CACHE"]
        shell = f'attn-cli() {{ "{sys.executable}" -m attn_cli "$@"; }}; {command}'
        result = subprocess.run(["bash", "-c", shell], cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=HANG_SECONDS,
                                env={**os.environ, "COLUMNS": "80", "ATTN_CLI_CACHE": cache})
        printed = result.stdout.rstrip("\n").splitlines()
    parts: list[list[str]] = [[]]
    for line in shown:
        parts.append([]) if line == "..." else parts[-1].append(line)

    def matches(lines: list[str], start: int) -> bool:
        return 0 <= start <= len(printed) - len(lines) and all(
            _same_line(a, b) for a, b in zip(lines, printed[start:start + len(lines)]))

    position = 0
    for number, lines in enumerate(parts):
        if not lines:
            continue
        found = next((i for i in range(position, len(printed)) if matches(lines, i)), None)
        assert found is not None, f"{page}: `{command}` no longer prints:\n" + "\n".join(lines)
        assert number > 0 or found == 0, f"{page}: `{command}` prints more before:\n{lines[0]}"
        last = number == len(parts) - 1
        assert not last or matches(lines, len(printed) - len(lines)), f"{page}: `{command}` prints more after"
        position = found + len(lines)
