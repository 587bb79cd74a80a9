"""--html and --svg as files: what they hold, how they sit beside stdout, and how they fail."""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ElementTree

import jsonschema
import pytest

DATA_BLOCK = re.compile(r'<script type="application/json" id="attn-data">(.*?)</script>', re.DOTALL)


def page_parts(path) -> tuple[dict, str]:
    """The embedded data and the rest of the page (template, CSS, JS) as written."""
    text = path.read_text(encoding="utf-8")
    blocks = DATA_BLOCK.findall(text)
    assert len(blocks) == 1
    return json.loads(blocks[0]), DATA_BLOCK.sub("", text)


def test_the_page_embeds_the_json_document_once_and_the_command_line(run, tmp_path, explain_schema):
    target = tmp_path / "report.html"
    args = ["explain", "money bank grows", "--heads", "2", "--html", str(target)]
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == run("explain", "money bank grows", "--heads", "2").stdout  # the tables, as usual
    data, rest = page_parts(target)
    reference = json.loads(run("explain", "money bank grows", "--heads", "2", "--json").stdout)
    assert data["documents"] == [reference]
    jsonschema.validate(data["documents"][0], explain_schema)
    assert target.read_text(encoding="utf-8").count('"schema_version"') == 1
    assert shlex.split(data["command_line"]) == ["attn-cli", *args]
    assert "attn-cli explain: money bank grows" in rest  # the <title>


def test_trace_and_compare_pages_embed_their_json_documents(run, tmp_path, trace_schema, compare_validator):
    cases = ((("trace", "money bank grows", "--word", "bank"), lambda doc: jsonschema.validate(doc, trace_schema)),
             (("compare", "river bank flows", "money bank grows"), compare_validator.validate))
    for args, check in cases:
        target = tmp_path / f"{args[0]}.html"
        assert run(*args, "--html", str(target)).exit_code == 0
        data, rest = page_parts(target)
        assert data["documents"] == [json.loads(run(*args, "--json").stdout)]
        check(data["documents"][0])
        assert f"attn-cli {args[0]}" in rest


def test_the_page_asks_for_nothing_from_anywhere(run, tmp_path):
    target = tmp_path / "report.html"
    assert run("explain", "money bank grows", "--html", str(target)).exit_code == 0
    _, rest = page_parts(target)
    without_namespace = rest.replace('"http://www.w3.org/2000/svg"', "")
    for needle in ("http:", "https:", "//cdn", " src=", "href=", "@import", "url(", "fetch(", "XMLHttpRequest"):
        assert needle not in without_namespace, needle
    assert "default-src 'none'" in rest  # and the browser is told to refuse any request


def test_a_sentence_cannot_close_the_data_script(run, tmp_path):
    sentence = "money </script><script>alert(1)</script> <!-- bank"
    target = tmp_path / "report.html"
    assert run("explain", sentence, "--html", str(target)).exit_code == 0
    data, _ = page_parts(target)  # exactly one data block, still valid JSON
    assert data["documents"][0]["sentence"] == sentence
    assert "<" not in DATA_BLOCK.search(target.read_text(encoding="utf-8")).group(1)


def test_json_on_stdout_and_both_files_together(run, tmp_path):
    page, picture = tmp_path / "r.html", tmp_path / "r.svg"
    result = run("explain", "-", "--json", "--html", str(page), "--svg", str(picture),
                 input="money bank grows\nriver bank flows\n")
    assert result.exit_code == 0, result.stderr
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert page_parts(page)[0]["documents"] == documents
    svg = picture.read_text(encoding="utf-8")
    assert "Weights:" in svg.replace("&#160;", " ") and "river" in svg  # the tables went to the SVG only


def test_svg_is_the_terminal_rendering_at_the_console_width(run, tmp_path):
    narrow, wide = tmp_path / "80.svg", tmp_path / "120.svg"
    result = run("explain", "money bank grows", "--svg", str(narrow))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == run("explain", "money bank grows").stdout
    assert run("explain", "money bank grows", "--svg", str(wide), env={"COLUMNS": "120"}).exit_code == 0
    widths = []
    for path in (narrow, wide):
        root = ElementTree.parse(path).getroot()  # well-formed XML
        widths.append(float(root.get("viewBox").split()[2]))
        text = path.read_text(encoding="utf-8").replace("&#160;", " ")
        for line in ("Self-attention over", "money", "Shift: own value s", "Diagnostics per query row"):
            assert line in text
        assert "https://" not in text.replace("<!-- Generated with Rich https://www.textualize.io -->", "")
    assert widths[1] / widths[0] == pytest.approx(120 / 80, rel=0.03)


def test_files_are_written_only_after_success(run, tmp_path):
    target = tmp_path / "report.html"
    result = run("explain", "zzqx qqzv", "--html", str(target))
    assert result.exit_code == 3
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind either


def test_a_directory_is_not_a_picture_file(run, tmp_path):
    result = run("explain", "money bank", "--svg", str(tmp_path))
    assert result.exit_code == 2 and result.stdout == ""
    assert "is a directory" in result.stderr
