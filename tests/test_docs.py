"""The documentation (README.md and docs/*.md) against the program it documents.

Every command and option of the CLI is named somewhere in the docs, every relative
link (and its #anchor) leads somewhere, the README stays a short front door, and
every ```console block of the pages runs, each command's output the one shown (the
input files an example reads are made for it; SKIPPED lists what the suite cannot
run, and why). Other claims are checked where the behaviour is tested: the trace
worked example (docs/trace.md) in test_cli_trace.py, the exit code table
(docs/limits.md) in test_errors.py.
"""

from __future__ import annotations

import importlib
import os
import re
import unicodedata
from pathlib import Path

import pytest
import typer
from conftest import FORKED_CLI, HANG_SECONDS, demo_tables

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


def test_the_options_page_lists_the_help_panels_in_their_order(run):
    """docs/options.md names each help screen's panels in bold, in the order the screens show them."""
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    for path, _ in _commands():
        shown = run(*path, "--help").stdout
        panels = [line.split("─ ")[1].split(" ─")[0] for line in shown.splitlines() if line.startswith("╭─ ")]
        panels = [panel for panel in panels if panel not in ("Options", "Commands")]  # Typer's own, unordered
        places = [text.find(f"**{panel}**") for panel in panels]
        assert -1 not in places and places == sorted(places), f"attn-cli {' '.join(path)}: {panels}"


def test_the_readme_gives_a_quick_check_of_the_main_paths():
    """`pytest -m quick`, as the README says: a registered marker on tests of the CLI's main job, the JSON schemas,
    the engine against its reference and bad input."""
    assert "`pytest -m quick`" in README.read_text(encoding="utf-8")
    assert '"quick: ' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # registered: --strict-markers passes
    for area in ("test_cli_explain", "test_cli_trace", "test_cli_compare", "test_reference", "test_bad_inputs",
                 "test_api"):
        module = importlib.import_module(area)
        marked = [name for name, test in vars(module).items() if name.startswith("test_")
                  and any(mark.name == "quick" for mark in getattr(test, "pytestmark", []))]
        assert marked, f"tests/{area}.py: no test marked quick"


def test_the_docs_state_the_corpus_training_needs():
    """Every page that says how many usable sentences training needs says the number the corpus reader holds to."""
    from attn_cli.training.corpus import MIN_SENTENCES

    said = re.findall(r"(?:fewer than|at least) (\d+) usable\s+sentences", _docs_text(), re.I)
    assert said and {int(number) for number in said} == {MIN_SENTENCES}, said


def test_the_python_api_page_names_the_error_a_missing_pandas_raises(monkeypatch):
    """to_pandas() without pandas (in no extra) raises what docs/python-api.md says it does."""
    import sys

    import attn_cli

    result = attn_cli.senses("bank", attn_cli.example_corpus()[0][:6], clusters=2)
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(attn_cli.AttnError) as raised:
        result.to_pandas()
    text = " ".join((ROOT / "docs" / "python-api.md").read_text(encoding="utf-8").split())
    said = text[text.index("`to_pandas()` needs pandas"):][:300]
    assert f"raises `attn_cli.{type(raised.value).__name__}`" in said and "pip install pandas" in said


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


CONSOLE = re.compile(r"```console\n(.*?)```", re.S)
HOME = "/home/me"  # the docs' home folder: a run's own (a temporary folder, also its working folder) shows as this
DEMO = "attn-cli train --demo "  # the session's one demo run stands in for it (conftest.demo_run)
# The commands of the docs' console blocks the suite cannot run, and why; every other one runs, its output checked
SKIPPED = {'pip install "attn-cli[dask]"': "downloads from PyPI"}


def console_blocks() -> list[tuple[str, int, list[tuple[str, list[str]]]]]:
    """(page, block number, [(command, the lines shown under it)]) for each ```console block of the docs."""
    blocks = []
    for page in PAGES:
        for number, block in enumerate(CONSOLE.findall(page.read_text(encoding="utf-8")), 1):
            commands = re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.M)
            assert block.startswith("$ "), f"{page.name}: console block {number} holds text before its first '$ '"
            blocks.append((page.name, number, [(command, shown.rstrip("\n").splitlines())
                                               for command, shown in commands]))
    return blocks


def _inputs() -> dict[str, str]:
    """Shell lines making the files the docs' examples read, each keyed by a name the example uses: made only where
    a block names it, so `ls` shows what the block made and no more."""
    from shlex import quote

    from conftest import gensim_datapath

    data = quote(str(ROOT / "data"))
    return {
        "sentences.txt": "printf 'money bank grows\\nriver bank flows\\n\\nzzqx qqvv\\nthe bank is closed today\\n' "
                         "> sentences.txt",
        "data/senses/": f"ln -s {data} data",
        "glove.test.50d.txt": f"cp {quote(gensim_datapath('test_glove.txt'))} glove.test.50d.txt",
        "$LEE": f"LEE={quote(gensim_datapath('lee_background.cor'))}; "  # as docs/senses.md makes it
                """awk '{print (/West Bank/ ? "place" : "finance")}' "$LEE" > lee.labels.txt""",
        "bank-parts/": f"mkdir bank-parts && cp {data}/senses/bank.labels.txt labels.txt && attn-cli senses bank "
                       f"--file {data}/senses/bank.txt --parquet bank-parts/bank.parquet",  # the Dask recipe's table
    }


def test_every_console_block_runs():
    commands = [command for _, _, block in BLOCKS for command, _ in block]
    assert len(BLOCKS) >= 25 and all(block for _, _, block in BLOCKS)
    assert set(SKIPPED) <= set(commands), "a skipped command that the docs no longer show"
    assert {"cat sentences.txt", "attn-cli vectors list", "ls -C"} <= set(commands)


def _run_block(commands: list[tuple[str, list[str]]], folder: Path, demo_report, cache: str | None = None
               ) -> list[list[str]]:
    """What each command of a block prints (its stdout, then its stderr), run one after another in one shell, in
    `folder`, which is also $HOME (shown as /home/me), with the inputs it names made first; `cache`, if given, is
    the cache the commands use (one holding the imported model)."""
    import subprocess
    import sys
    from shlex import quote

    text = "\n".join(command for command, _ in commands)
    python = f'"{sys.executable}"'
    script = [f'attn-cli() {{ {" ".join(map(quote, FORKED_CLI))} "$@"; }}', f'python() {{ {python} "$@"; }}',
              f'python3() {{ {python} "$@"; }}']
    script += [f"{{ {make}; }} > /dev/null 2>&1" for name, make in _inputs().items() if name in text]
    for number, (command, _) in enumerate(commands):
        script += [f"printf '\\n\\036{number}\\n'; printf '\\n\\036{number}\\n' >&2"]
        script.append(": skipped" if command in SKIPPED else
                      f"cp {demo_report[1]} demo.npz" if command.startswith(DEMO) else command)
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("ATTN_CLI_CACHE", "XDG_CACHE_HOME", "GENSIM_DATA_DIR", "ATTN_CLI_VECTORS")}
    environment.update({"ATTN_CLI_CACHE": cache} if cache else {})
    result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, capture_output=True, text=True,
                            timeout=HANG_SECONDS, env={**environment, "HOME": str(folder), "COLUMNS": "80"})

    def parts(stream: str) -> list[list[str]]:
        for name in {str(folder), os.path.realpath(folder)}:
            stream = stream.replace(name, HOME)
        pieces = re.split(r"\n\x1e(\d+)\n", stream)[1:]
        found = {int(number): piece.rstrip("\n").splitlines() for number, piece in zip(pieces[::2], pieces[1::2])}
        return [found.get(number, []) for number in range(len(commands))]

    return [out + err for out, err in zip(parts(result.stdout), parts(result.stderr))]


BLOCKS = console_blocks()


@pytest.mark.parametrize(("page", "number", "commands"), BLOCKS, ids=[f"{page}#{number}" for page, number, _ in BLOCKS])
def test_every_console_example_is_the_real_output(page, number, commands, tmp_path, request):
    """Each command of each console block runs, in order, and prints the lines shown under it (stdout, then
    stderr): whole (nothing, where none are shown), or the parts between `...` in order, the first part at the
    start and the last at the end unless `...` stands there. The commands in SKIPPED are not run.

    `train --demo` is the session's one demo run (conftest.demo_run), drawn by the command's own renderer at 80
    columns, its file copied in: the demo is trained once per test run."""
    demo = request.getfixturevalue("demo_run") if any(c.startswith(DEMO) for c, _ in commands) else None
    cache = None
    if any("--model minilm" in command for command, _ in commands):  # the imported model (or skipped/required)
        request.getfixturevalue("minilm")
        cache = os.environ["ATTN_CLI_CACHE"]
    for (command, shown), printed in zip(commands, _run_block(commands, tmp_path, demo, cache)):
        if command not in SKIPPED:
            _check_output(page, command, shown, demo_tables(demo[0], width=80) if command.startswith(DEMO)
                          else printed)


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


def _check_output(page: str, command: str, shown: list[str], printed: list[str]) -> None:
    parts: list[list[str]] = [[]]
    for line in shown:
        parts.append([]) if line == "..." else parts[-1].append(line)
    assert shown or not printed, f"{page}: `{command}` prints, where the page shows nothing:\n" + "\n".join(printed)

    def matches(lines: list[str], start: int) -> bool:
        return 0 <= start <= len(printed) - len(lines) and all(
            _same_line(a, b) for a, b in zip(lines, printed[start:start + len(lines)]))

    position = 0
    for number, lines in enumerate(parts):
        if not lines:
            continue
        found = next((i for i in range(position, len(printed)) if matches(lines, i)), None)
        assert found is not None, (f"{page}: `{command}` no longer prints:\n" + "\n".join(lines) + "\n\nit prints:\n"
                                   + "\n".join(printed))
        assert number > 0 or found == 0, f"{page}: `{command}` prints more before:\n{lines[0]}"
        last = number == len(parts) - 1
        assert not last or matches(lines, len(printed) - len(lines)), f"{page}: `{command}` prints more after"
        position = found + len(lines)
