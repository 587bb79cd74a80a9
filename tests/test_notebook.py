"""The tutorial notebook runs in a real Jupyter kernel, shows its reports inline, and agrees with the CLI."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from conftest import HANG_SECONDS

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "tutorial.ipynb"
BANK = Path(__file__).resolve().parent.parent / "data" / "senses"
# the results the notebook makes, and the command line that must print the same document
SAME_AS_CLI = {
    "money": ["explain", "money bank grows"],
    "river": ["explain", "river bank flows"],
    "projected": ["explain", "money bank grows", "--mode", "projected", "--heads", "4", "--scale", "sqrt"],
    "traced": ["trace", "money bank grows", "--word", "bank"],
    "compared": ["compare", "river bank flows", "money bank grows", "--word", "bank"],
    "senses": ["senses", "bank", "--file", str(BANK / "bank.txt"), "--labels", str(BANK / "bank.labels.txt")],
}


@pytest.fixture(scope="module")
def executed():
    """The notebook after a run in a fresh kernel, with one extra cell that prints its results as JSON."""
    import nbclient  # test extras: the README's test command installs them, so a missing one fails
    import nbformat
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    dump = "import json\nprint(json.dumps({" + ", ".join(f"{name!r}: {name}.to_json()" for name in SAME_AS_CLI) + "}))"
    notebook.cells.append(nbformat.v4.new_code_cell(dump))
    nbclient.NotebookClient(notebook, timeout=HANG_SECONDS, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    return notebook


def outputs(notebook, kind: str) -> list[dict]:
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
            if output.output_type == kind]


def test_every_cell_ran_without_an_error(executed):
    code = [cell for cell in executed.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code)
    assert outputs(executed, "error") == []


def test_the_reports_show_inline_and_fetch_nothing(executed):
    pages = [output.data["text/html"] for output in outputs(executed, "execute_result") if "text/html" in output.data]
    assert len(pages) == 5  # money, projected, traced, compared and senses; nothing else shows as HTML
    for cell in pages:
        assert "<iframe srcdoc=" in cell and "<table>" in cell.split("<iframe")[0]  # plain tables, then the report
        page = html.unescape(re.search(r'srcdoc="([^"]*)"', cell).group(1))
        assert "<script>" in page and "Content-Security-Policy" in page
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # no request to any other host
        assert "url(http" not in page and "@import" not in page


def test_the_numbers_equal_the_command_lines_json(executed, run):
    printed = outputs(executed, "stream")[-1]["text"]
    documents = {name: json.loads(text) for name, text in json.loads(printed).items()}
    for name, command in SAME_AS_CLI.items():
        result = run(*command, "--json")
        assert result.exit_code == 0, result.stderr
        assert documents[name] == json.loads(result.stdout), name
