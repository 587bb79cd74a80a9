"""A notebook cell's HTML read by a viewer that strips iframes, scripts and styles (GitHub's notebook preview, many
docs builders): the tokens, the weights and the shifts are still there, as plain tables."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

import attn_cli

SENTENCE = "money bank grows"


def sanitised(cell: str) -> str:
    """What such a viewer keeps: every <iframe>, <script> and <style> element is removed with its content."""
    for tag in ("iframe", "script", "style"):
        cell = re.sub(rf"<{tag}\b.*?</{tag}\s*>", "", cell, flags=re.S | re.I)
    return cell


class _Tables(HTMLParser):
    """The tables of a page as rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def tables(cell: str) -> list[list[list[str]]]:
    parser = _Tables()
    parser.feed(sanitised(cell))
    return parser.tables


def rows_of(matrix) -> list[list[str]]:
    return [[f"{value:.3f}" for value in row] for row in matrix]


def has_matrix(found: list[list[list[str]]], labels: list[str], matrix) -> bool:
    """Some table holds the matrix: one row per label, the label first, then the row's numbers to 3 places."""
    wanted = [[label, *row] for label, row in zip(labels, rows_of(matrix))]
    return any(all(row in table for row in wanted) for table in found)


def test_the_weights_of_every_head_and_the_shifts_survive_a_sanitiser():
    result = attn_cli.explain(SENTENCE, mode="projected", heads=2)
    cell = result._repr_html_()
    assert "<iframe" in cell  # the interactive report is still there for viewers that run it
    found, words = tables(cell), sanitised(cell)
    labels = [token["text"] for token in result.document()["tokens"]]
    for head in result.weights:
        assert has_matrix(found, labels, head)
    rows = [row for table in found for row in table]
    for label, shift in zip(labels, result.shifts):
        assert any(row[:1] == [label] and f"{shift.cosine:.3f}" in row and f"{shift.delta_norm:.3f}" in row
                   for row in rows), label
    assert all(label in words for label in labels)


def test_compare_cross_and_trace_keep_their_numbers_too():
    compared = attn_cli.compare([SENTENCE, "river bank flows"])
    found = tables(compared._repr_html_())
    for block in compared.document()["sentences"]:
        labels = [token["text"] for token in block["tokens"]]
        assert has_matrix(found, labels, block["heads"][0]["weights"])
    crossed = attn_cli.cross(SENTENCE, "river bank flows")
    document = crossed.document()
    assert has_matrix(tables(crossed._repr_html_()), [token["text"] for token in document["target"]["tokens"]],
                      document["heads"][0]["weights"])
    traced = attn_cli.trace(SENTENCE, word="bank")
    cells = {cell for table in tables(traced._repr_html_()) for row in table for cell in row}
    for key in traced.document()["traces"][0]["heads"][0]["keys"]:
        assert f"{key['weight']:.3f}" in cells and key["token"] in cells


@pytest.mark.parametrize("sentence", ["money <b>bank</b> & grows", "money bank <script>alert(1)</script>"])
def test_text_from_the_input_is_escaped(sentence):
    """The sentence as typed, shown as text: no element of it reaches the page outside the iframe."""
    plain = sanitised(attn_cli.explain(sentence, oov="zero")._repr_html_())
    assert html.escape(sentence) in plain
    assert "<b>" not in plain and "<script" not in plain
