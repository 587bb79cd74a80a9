"""The help screens: printed once, readable at 80 columns, and every example in them runs."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("words", [(), ("vectors",)], ids=["attn-cli", "vectors"])
def test_a_bare_command_prints_its_help_once(run, words):
    bare, asked = run(*words), run(*words, "--help")
    assert bare.stdout.count("Usage:") == 1 and not bare.stderr.strip()
    assert bare.stdout.rstrip() == asked.stdout.rstrip()


def _commands():
    """(words, click command) for attn-cli and every command and sub-command under it."""
    import typer

    from attn_cli.cli.app import app

    todo = [((), typer.main.get_command(app))]
    while todo:
        words, command = todo.pop(0)
        yield words, command
        if hasattr(command, "list_commands"):  # a group: its commands as click finds them (some are built then)
            context = typer.Context(command)
            todo += [((*words, name), command.get_command(context, name))
                     for name in sorted(command.list_commands(context))]


COMMANDS = list(_commands())


def test_explain_loads_neither_the_training_run_nor_gensim():
    """explain's start-up holds only what it uses: the trainer, its optimiser, gensim, and the senses library
    with scikit-learn and pyarrow load when asked for."""
    import subprocess
    import sys

    code = ("import sys; from attn_cli.cli.app import main; sys.argv = ['attn-cli', 'explain', 'bank', '--json']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "loaded = {'attn_cli.training.trainer', 'attn_cli.training.run', 'attn_cli.training.demo',\n"
            "          'attn_cli.training.learning', 'gensim',\n"
            "          'attn_cli.contexts', 'attn_cli.parquet', 'sklearn', 'pyarrow'}\n"
            "loaded &= set(sys.modules)\nassert not loaded, loaded")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr



BOX = str.maketrans({character: " " for character in "│╭╮╰╯─"})


def _help(run, words, columns: int = 80) -> str:
    result = run(*words, "--help", env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("columns", [80, 60])
@pytest.mark.parametrize("words, command", COMMANDS, ids=[" ".join(words) or "attn-cli" for words, _ in COMMANDS])
def test_every_help_screen_is_readable_at_80_and_60_columns(run, words, command, columns):
    """No cut word: no ellipsis, and every option name, placeholder and help word stands whole on a line."""
    text = _help(run, words, columns)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= columns
    shown = set(text.translate(BOX).split())
    for param in command.params:
        names = [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]
        assert not any(name.startswith("--no-") for name in names), f"{names}: a flag that defaults off needs no twin"
        whole = [name for name in names if name.startswith("--")]
        if param.param_type_name == "option" and not getattr(param, "is_flag", False):
            assert param.metavar and "<" not in param.metavar, f"{names}: give a placeholder in the one style"
            whole.append(param.metavar)
        if param.param_type_name == "argument":
            whole.append(param.metavar or param.name.upper())
        whole += (param.help or "").split()
        cut = [word for word in whole if word not in shown]
        assert not cut, f"attn-cli {' '.join(words)} --help: cut or missing at {columns} columns: {cut}"
    for word in (command.help or "").split():
        assert word in shown, f"attn-cli {' '.join(words)} --help: the description's {word!r} is cut"
    assert "\n Examples:" in text, "every help screen shows an example"
    lines = [line.strip() for line in text.splitlines()]
    for example in _examples(command.epilog or ""):
        assert example in lines, f"attn-cli {' '.join(words)} --help: {example!r} breaks at {columns} columns"
    usage = next(line for line in lines if line.startswith("Usage:"))
    assert "{" not in usage, f"a placeholder in the usage line, as man pages write it: {usage}"


@pytest.mark.parametrize("words, command", COMMANDS, ids=[" ".join(words) or "attn-cli" for words, _ in COMMANDS])
def test_help_speaks_words_not_code(run, words, command):
    """Defaults are values, not names in the code, and a placeholder is read as a word ('times X', not 'x X')."""
    import re

    text = " ".join(_help(run, words).translate(BOX).split())
    assert "attn_cli." not in text and not re.search(r"\bx [A-Z]\b", text), text


def test_the_senses_help_shows_the_librarys_bound_on_occurrences(run):
    import inspect

    import attn_cli

    bound = inspect.signature(attn_cli.occurrences).parameters["max_occurrences"].default
    text = _help(run, ("senses",)).translate(BOX)
    option = text[text.index("--max-occurrences"):text.index("--occurrences")]
    assert f"[default: {bound}]" in " ".join(option.split())


def test_a_narrow_help_stacks_each_option_over_its_help(run):
    """Where the columns cannot fit, an option's name and placeholder take a line and its help the lines below,
    indented under it; where they fit (80 columns) the table stays."""
    def line_of(text: str, option: str) -> str:
        return next(line for line in text.translate(BOX).splitlines() if option in line.split())

    narrow, wide = _help(run, ("explain",), 60), _help(run, ("explain",), 80)
    stacked = narrow.translate(BOX).splitlines()
    name = stacked.index(line_of(narrow, "--output-projection"))
    assert stacked[name].split() == ["--output-projection"]
    assert stacked[name + 1].split()[:2] == ["Projected", "mode:"]
    assert stacked[name + 1].index("Projected") > stacked[name].index("--output-projection")
    assert line_of(narrow, "--neighbor-vocab").split() == ["--neighbor-vocab", "N|all"]
    assert "Search" in line_of(wide, "--neighbor-vocab").split()
    # a panel of short names that would fit as a table stacks like the panels before it: one layout a screen
    assert line_of(narrow, "--input-format").split() == ["--input-format", "text|jsonl"]
    assert line_of(narrow, "--help").split() == ["--help", "-h"]
    assert "Input" in line_of(wide, "--input-format").split()


def test_the_attention_options_come_first(run):
    for command in ("explain", "trace", "compare"):
        panels = [line.split("─ ")[1].split(" ─")[0] for line in _help(run, (command,)).splitlines()
                  if line.startswith("╭─ ")]
        assert panels[:2] == ["Arguments", "Attention"] and panels[-1] == "Help", panels


def test_the_vectors_help_names_the_cache_folder(run):
    assert "$ATTN_CLI_CACHE" in _help(run, ("vectors",))


DEMO = "attn-cli train --demo --out "  # an example that trains the demo, as conftest.demo_run does with --json


def _examples(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("attn-cli ")]


@pytest.mark.parametrize("words", [words for words, _ in COMMANDS],
                         ids=[" ".join(words) or "attn-cli" for words, _ in COMMANDS])
def test_every_example_in_the_help_runs(run, words, tmp_path, monkeypatch, request):
    """Each `attn-cli ...` line of a help screen exits 0 as written; option help holds no other example.
    `train --demo --out FILE` is the session's one demo run (conftest.demo_run, which checks its exit), its file
    copied to FILE: the demo is trained once per test run."""
    import shlex
    import shutil

    from attn_cli.vectors import gensim_data

    text = _help(run, words)
    assert "e.g. --" not in " ".join(text.translate(BOX).split()), "examples belong in Examples, where they run"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vectors.txt").write_text("money 1 0 0 1\nbank 0 1 0 1\ngrows 0 0 1 1\nriver 1 1 0 0\n")
    (tmp_path / "corpus.txt").write_text("".join(f"the river bank {word} flows past the old mill\n"
                                                 for word in ("slowly", "quickly", "gently", "again", "today",
                                                              "north", "south", "east", "west", "home", "away",
                                                              "down", "up", "there", "here", "now", "late", "early",
                                                              "once", "twice", "often", "never", "always", "soon",
                                                              "still", "yet", "far", "near", "again and again")))
    fetched = tmp_path / "model.gz"
    fetched.write_bytes(b"")
    monkeypatch.setattr(gensim_data, "download", lambda name, show_progress=True: fetched)  # no network here
    assert run("vectors", "import", "vectors.txt", "--json").exit_code == 0  # for info and remove
    examples = _examples(text)
    assert examples
    for example in examples:
        if example.startswith(DEMO) and " " not in example.removeprefix(DEMO):
            shutil.copy(request.getfixturevalue("demo_run")[1], example.removeprefix(DEMO))
            continue
        result = run(*shlex.split(example)[1:])
        assert result.exit_code == 0, f"{example}: exit {result.exit_code}: {result.stderr}"


def test_the_private_typer_function_help_wraps_is_still_there():
    """cli/help.py wraps Typer's private console maker (no public hook makes the help screen's console): this
    fails first, and says why, when a Typer release changes it or draws help without it."""
    import inspect

    from typer import rich_utils

    assert list(inspect.signature(rich_utils._get_rich_console).parameters) == ["stderr"]
    assert "_get_rich_console" in rich_utils.rich_format_help.__code__.co_names
