"""The documentation (README.md and docs/*.md) against the program it documents.

Every command and option of the CLI is named somewhere in the docs, every relative
link (and its #anchor) leads somewhere, the README stays a short front door, and
its short examples are the program's real output. The examples in the pages are
checked where the behaviour is tested: the trace worked example (docs/trace.md) in
test_cli_trace.py, the exit code table (docs/limits.md) in test_errors.py.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from pathlib import Path

import pytest
import typer

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 230

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
        for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
            todo.append(((*path, name), sub))


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


def _readme_block(command_line: str) -> list[str]:
    """The lines the README shows under `$ COMMAND_LINE`, up to the end of the code block."""
    text = README.read_text(encoding="utf-8")
    assert f"$ {command_line}\n" in text, f"the README no longer shows {command_line!r}"
    return text.split(f"$ {command_line}\n", 1)[1].split("\n```", 1)[0].splitlines()


def _printed(result) -> list[str]:
    assert result.exit_code == 0, result.stderr
    return [line.rstrip() for line in result.stdout.rstrip("\n").splitlines()]


def test_the_readme_compare_example_is_the_real_output(run):
    printed = _printed(run("compare", "river bank flows", "money bank grows"))
    assert _readme_block('attn-cli compare "river bank flows" "money bank grows" | tail -4') == printed[-4:]


def test_the_readme_trace_example_is_the_real_output(run):
    printed = _printed(run("trace", "money bank grows", "--word", "bank"))
    start = next(i for i, line in enumerate(printed) if line.startswith("Step 4"))
    end = next(i for i in range(start, len(printed)) if printed[i].startswith(" Σ  "))
    block = _readme_block("attn-cli trace \"money bank grows\" --word bank | sed -n '/Step 4/,/Σ  /p'")
    assert block == printed[start:end + 1]


def test_the_readme_explain_examples_are_the_real_output(run):
    printed = _printed(run("explain", "river bank flows"))
    start = printed.index("Shift: own value s → contextual output y")
    assert _readme_block("attn-cli explain \"river bank flows\" | grep -A6 '^Shift'") == printed[start:start + 7]
    printed = _printed(run("explain", "money bank grows"))
    block = _readme_block('attn-cli explain "money bank grows"')
    cut = block.index("...")  # the README elides the scores, then the tables after the shift
    header, middle = block[:cut], block[cut + 1:block.index("...", cut + 1)]
    assert header == printed[:len(header)]
    start = printed.index(middle[0])
    assert middle == printed[start:start + len(middle)]


def test_the_readme_json_example_is_the_real_output(run):
    import json

    document = json.loads(run("explain", "money bank grows", "--json").stdout)
    bank = document["shifts"][1]
    expected = {"token": bank["token"], "cosine": bank["cosine"], "pulled_by": bank["pulled_by"][0]["token"],
                "after": [neighbor["word"] for neighbor in bank["neighbors_after"]]}
    command = ("attn-cli explain \"money bank grows\" --json | jq -c '{token: .shifts[1].token, cosine: "
               ".shifts[1].cosine, pulled_by: .shifts[1].pulled_by[0].token, after: "
               "[.shifts[1].neighbors_after[].word]}'")
    assert json.loads(_readme_block(command)[0]) == expected
