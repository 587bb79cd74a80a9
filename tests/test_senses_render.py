"""What people see of `senses`: the Rich tables, the notebook's plain tables, the scatter SVG and the page, all
drawn from the senses document alone: the document of the bundled river/money corpus with its labels."""

from __future__ import annotations

import copy
import functools
import io
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest

from attn_cli.render.consoles import draw_literally, report_console
from attn_cli.render.senses import excerpt, marked_spans, occurrence_places, render_senses
from attn_cli.render.senses_page import group_colours, scatter_svg, senses_page, senses_tables_html

BUNDLED = Path(__file__).resolve().parent.parent / "data" / "senses"


@functools.lru_cache(maxsize=None)
def bundled_result():
    """attn_cli.senses over data/senses/bank.txt with its labels, computed once for every test here."""
    import attn_cli

    lines = (BUNDLED / "bank.txt").read_text(encoding="utf-8").splitlines()
    labels = (BUNDLED / "bank.labels.txt").read_text(encoding="utf-8").splitlines()
    return attn_cli.senses("bank", lines, labels=labels)


SAMPLE = bundled_result().to_dict()
SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = 'the [red]x[/red] bank </script><b>bold</b> \x1b[2J abc\u202edef'


def tables(document: dict, width: int = 100, color: bool = False) -> str:
    buffer = io.StringIO()
    console = report_console(file=buffer, width=width, force_terminal=color, color_system="truecolor" if color
                             else None)
    draw_literally(render_senses, document, console)
    return buffer.getvalue()


def with_sentence(sentence: str) -> dict:
    """The document with the first example's line holding `sentence` instead, in the example and its occurrences."""
    document = copy.deepcopy(SAMPLE)
    example = document["groups"][0]["examples"][0]
    example["sentence"] = sentence
    for occurrence in document["occurrences"]:
        if occurrence["line"] == example["line"]:
            occurrence["sentence"] = sentence
    return document


def without_labels() -> dict:
    return {**SAMPLE, "labels": None}


def test_the_tables_say_which_k_was_chosen_and_every_silhouette_tried():
    shown = tables(SAMPLE)
    clusters = SAMPLE["clusters"]
    assert clusters["by"] == "silhouette" and list(clusters["silhouettes"]) == [str(k) for k in range(2, 9)]
    title = f"{clusters['chosen']} groups, chosen by the best silhouette over K = 2..8"
    block = shown.split(title, 1)[1].split("silhouette:", 1)[0]
    rows = {line.split()[0]: line.split()[1:] for line in block.splitlines() if re.match(r"\s+\d+\s", line)}
    assert {k: values[0] for k, values in rows.items()} == {k: f"{v:.3f}" for k, v in clusters["silhouettes"].items()}
    assert [k for k, values in rows.items() if "chosen" in values] == [str(clusters["chosen"])]


def test_one_group_has_no_silhouette():
    document = copy.deepcopy(SAMPLE)
    document["clusters"] = {"chosen": 1, "by": "given", "silhouettes": {}}
    shown = tables(document)
    assert "Groups: 1 group, as --clusters 1 asked" in shown
    assert re.search(r"\n\s+1\s+—\s+← chosen", shown)


def test_a_given_k_is_said_to_be_given():
    document = copy.deepcopy(SAMPLE)
    document["clusters"] = {"chosen": 2, "by": "given", "silhouettes": {"2": 0.331}}
    assert "2 groups, as --clusters 2 asked" in tables(document)


def test_the_static_neighbours_are_shown_once_and_each_group_with_its_figures():
    shown = tables(without_labels())
    static = ", ".join(f"{n['word']} {n['cosine']:.3f}" for n in SAMPLE["static_neighbors"])
    assert shown.count(static) == 1
    for group in SAMPLE["groups"]:
        row = next(line for line in shown.splitlines() if re.match(rf"\s+{group['group']}\s+{group['size']} \(", line))
        assert f"{group['silhouette']:.3f}" in row
        assert f"{group['neighbors'][0]['word']} {group['neighbors'][0]['cosine']:.3f}" in row
        assert f"{group['pulled_by'][0]['word']} {group['pulled_by'][0]['share']:.2f}" in row
        for example in group["examples"]:
            assert example["sentence"][:40] in shown
    assert "purity" not in shown and "probe" not in shown


def test_with_labels_the_tables_show_purity_rand_majorities_and_the_probe_with_what_it_means():
    shown = tables(SAMPLE)
    labels = SAMPLE["labels"]
    assert f"purity {labels['purity']:.3f}, adjusted Rand index {labels['adjusted_rand']:.3f}" in shown
    for row in labels["groups"]:
        assert re.search(rf"{row['group']}\s+{row['label']}\s+{row['share']:.3f}", shown)
    for key, name in (("outputs", "contextual outputs"), ("static", "static vector"), ("bag_of_words", "bag of words")):
        scores = labels["probe"][key]
        assert re.search(rf"{name}\s+{scores['accuracy']:.3f}\s+{scores['macro_f1']:.3f}", shown)
    assert "Outputs above the static vector: the outputs carry the sense" in " ".join(shown.split())


def test_the_word_is_marked_by_a_style_in_each_example_sentence():
    shown = tables(without_labels(), color=True)
    marked = re.findall(r"\x1b\[[0-9;]*m(bank)\x1b\[0m", shown)
    examples = [example["sentence"] for group in SAMPLE["groups"] for example in group["examples"]]
    assert len(marked) == sum(len(marked_spans(sentence, "bank")) for sentence in examples) >= len(examples)


@pytest.mark.parametrize("sentence, token, expected", [
    ("the bank of the river bank", "bank", ["bank", "bank"]),
    ("banks and a bank-holiday and embankment", "bank", []),
    ("the bank's loans", "bank", ["bank"]),
    ("Bank and bank", "Bank", ["Bank"]),
    ("(bank)", "bank", ["bank"]),
])
def test_only_the_word_as_a_token_of_its_own_is_marked(sentence, token, expected):
    assert [sentence[start:end] for start, end in marked_spans(sentence, token)] == expected


def test_text_from_input_reaches_the_terminal_literally():
    document = {**with_sentence(HOSTILE), "labels": None}
    document["groups"][0]["pulled_by"][0]["word"] = "[bold]w[/bold]"
    shown = tables(document, color=True)
    assert "\x1b[2J" not in shown and "\u202e" not in shown
    assert "\\x1b[2J abc\\u202edef" in shown and "[red]x[/red]" in shown and "[bold]w[/bold]" in shown


def test_each_example_marks_its_own_occurrence_and_a_long_line_shows_the_words_around_it():
    sentence = "the bank " + "word " * 40 + "and the bank again"
    occurrences = [{"line": 7, "position": position, "token": "bank", "sentence": sentence} for position in (1, 44)]
    places = occurrence_places(occurrences)
    assert [sentence[slice(*places[7, p])] for p in (1, 44)] == ["bank", "bank"]
    assert places[7, 1] != places[7, 44]
    before, word, after = excerpt(sentence, places[7, 44], context=20)
    assert (before, word, after) == ("…d word word and the ", "bank", " again")
    assert excerpt("river bank", None) == ("river bank", "", "")


def test_the_notebook_tables_escape_input_and_mark_the_word():
    html = senses_tables_html(with_sentence(HOSTILE))
    assert "</script>" not in html and "<b>bold</b>" not in html
    assert "&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in html and "abc\\u202edef" in html
    assert "[red]x[/red] <mark>bank</mark> &lt;/script&gt;" in html
    assert "<script" not in html and "style=" not in html
    assert f"{SAMPLE['clusters']['silhouettes']['2']:.3f}" in html and SAMPLE["static_neighbors"][0]["word"] in html
    assert f"{SAMPLE['labels']['probe']['bag_of_words']['macro_f1']:.3f}" in html


def test_the_scatter_draws_every_occurrence_coloured_by_its_group_with_its_sentence_as_title():
    svg = ElementTree.fromstring(scatter_svg(SAMPLE))
    points = svg.findall(f".//{SVG}circle")
    assert len(points) == len(SAMPLE["occurrences"])
    colours = group_colours(len(SAMPLE["groups"]))
    for point, occurrence in zip(points, SAMPLE["occurrences"]):
        assert point.get("fill") == colours[occurrence["group"] - 1]
        assert point.find(f"{SVG}title").text == occurrence["sentence"]
    legend = [text.text for text in svg.findall(f".//{SVG}g[@class='legend']/{SVG}text")]
    assert legend == [f"group {group['group']} ({group['size']})" for group in SAMPLE["groups"]]


def test_the_scatter_keeps_hostile_sentences_inert():
    document = copy.deepcopy(SAMPLE)
    document["occurrences"][0]["sentence"] = HOSTILE
    text = scatter_svg(document)
    title = ElementTree.fromstring(text).find(f".//{SVG}circle/{SVG}title").text
    assert title == 'the [red]x[/red] bank </script><b>bold</b> \\x1b[2J abc\\u202edef'
    assert "</script>" not in text and "<b>" not in text


def misgrouped(label: str) -> dict:
    """The document with its first occurrence labelled `label`, so misgrouped: its group's majority is river."""
    document = copy.deepcopy(SAMPLE)
    first = document["occurrences"][0]
    first["label"] = label
    document["labels"]["misgrouped"] = [{"line": first["line"], "position": first["position"],
                                         "group": first["group"], "label": label, "majority_label": "river"}]
    return document


def test_a_misgrouped_occurrence_is_listed_ringed_and_its_label_shown_literally():
    label = "money [b]x[/b] </script>" + "y" * 30
    document = misgrouped(label)
    shown = tables(document)
    listed = shown[shown.index("Misgrouped"):shown.index("Sense probe")]
    assert "money [b]x[/b]" in listed and "</script>" in listed and "we sat on the grassy" in listed  # literal
    svg = ElementTree.fromstring(scatter_svg(document, color_by="label"))
    points = svg.findall(f".//{SVG}g[@class='points']/{SVG}circle")
    assert [point.get("class") for point in points[:2]] == ["misgrouped", None]
    assert points[0].get("data-label") == label and len({point.get("fill") for point in points}) == 3
    legend = svg.findall(f".//{SVG}g[@class='legend']/{SVG}text")
    assert [text.text for text in legend] == ["money [b]x[/b] <… (54 characters) (1)", "river (19)", "money (20)",
                                              "misgrouped (1)"]  # labels as first met, a long one shortened
    assert legend[0].find(f"{SVG}title").text == label  # the label whole on hover
    assert svg.findall(f".//{SVG}g[@class='legend']/{SVG}circle") == []  # the page's script hovers circles only
    page = senses_page(document, "attn-cli senses bank --example", color_by="label")
    assert "coloured by label, ringed in black when misgrouped" in page and "</script>y" not in page


def test_group_colours_are_distinct_for_many_groups():
    for count in (1, 2, 8, 12, 30):
        assert len(set(group_colours(count))) == count


def test_the_page_holds_the_scatter_and_the_tables_and_names_its_own_script_and_style_by_hash():
    page = senses_page(SAMPLE, "attn-cli senses bank --file bank.txt")
    csp = page.split('http-equiv="Content-Security-Policy" content="', 1)[1].split('"', 1)[0]
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp and "style-src 'sha256-" in csp
    assert "unsafe-inline" not in csp
    assert page.count("<circle") == len(SAMPLE["occurrences"]) and "<mark>bank</mark>" in page
    assert "attn-cli senses bank --file bank.txt" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")


def test_a_notebook_cell_shows_the_plain_tables_then_the_page():
    from attn_cli.render.notebook import notebook_cell

    page = senses_page(SAMPLE, "attn_cli.senses('bank', lines)")
    cell = notebook_cell(SAMPLE, page)
    assert cell.startswith("<div>" + senses_tables_html(SAMPLE) + "</div><iframe srcdoc=")


def test_the_result_draws_the_same_pictures_and_tables_as_the_command(tmp_path):
    result = bundled_result()
    page = result.to_html(tmp_path / "senses.html")
    assert page == senses_page(SAMPLE, "attn_cli.senses('bank', sentences, labels=labels)")
    assert (tmp_path / "senses.html").read_text(encoding="utf-8") == page
    svg = result.to_svg(tmp_path / "senses.svg")
    assert svg == scatter_svg(SAMPLE, standalone=True) == (tmp_path / "senses.svg").read_text(encoding="utf-8")
    assert result._repr_html_().startswith("<div>" + senses_tables_html(SAMPLE) + "</div><iframe")
    assert "Sense probe (leave-one-out nearest neighbour)" in str(result)
