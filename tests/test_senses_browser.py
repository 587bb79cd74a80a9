"""The senses page in a real browser (Debian's Chromium, as tests/test_html_browser.py): the scatter's points, one
colour per group, the sentence on hover with the word marked, nothing fetched, hostile text shown as typed."""

from __future__ import annotations

from test_html_browser import OfflinePage, browser  # noqa: F401  (browser: the session's Chromium, a fixture)
from test_senses_render import SAMPLE, with_sentence

from attn_cli.errors import literal
from attn_cli.render.senses import excerpt
from attn_cli.render.senses_page import senses_page

HOSTILE = 'the bank </script><b id="bold">bold</b> <img src=x onerror="document.title=1"> abc\u202edef 🏦 bank'


LINE = SAMPLE["groups"][0]["examples"][0]["line"]  # with_sentence puts the hostile text there


def open_page(browser, tmp_path, document: dict) -> OfflinePage:  # noqa: F811
    path = tmp_path / "senses.html"
    path.write_text(senses_page(document, "attn-cli senses bank --file bank.txt"), encoding="utf-8")
    return OfflinePage(browser, path)


def test_every_occurrence_is_a_point_in_its_groups_colour(browser, tmp_path):  # noqa: F811
    view = open_page(browser, tmp_path, SAMPLE)
    points = view.page.locator("svg.senses-scatter circle")
    assert points.count() == len(SAMPLE["occurrences"])
    fills = points.evaluate_all("ns => ns.map(n => getComputedStyle(n).fill)")
    by_group: dict[int, set[str]] = {}
    for occurrence, fill in zip(SAMPLE["occurrences"], fills):
        by_group.setdefault(occurrence["group"], set()).add(fill)
    assert all(len(colours) == 1 for colours in by_group.values())
    assert len(set.union(*by_group.values())) == len(SAMPLE["groups"])
    boxes = points.evaluate_all("ns => ns.map(n => { const b = n.getBoundingClientRect(); return b.width; })")
    assert all(width > 0 for width in boxes)  # drawn, not merely present
    view.assert_clean()


def test_hovering_a_point_shows_its_sentence_with_the_word_marked(browser, tmp_path):  # noqa: F811
    view = open_page(browser, tmp_path, SAMPLE)
    page = view.page
    titles = page.locator("svg.senses-scatter circle title").all_text_contents()
    assert titles == [occurrence["sentence"] for occurrence in SAMPLE["occurrences"]]
    page.hover("svg.senses-scatter circle[data-index='4']")
    tooltip = page.locator("#attn-tooltip")
    assert tooltip.is_visible()
    assert tooltip.locator(".sentence").inner_text() == SAMPLE["occurrences"][4]["sentence"]  # short: whole
    assert tooltip.locator("mark").all_text_contents() == ["bank"]
    occurrence = SAMPLE["occurrences"][4]
    assert f"group {occurrence['group']}, line {occurrence['line']}" in tooltip.inner_text()
    view.assert_clean()


def test_hostile_sentences_are_shown_as_typed_and_nothing_runs_or_loads(browser, tmp_path):  # noqa: F811
    view = open_page(browser, tmp_path, with_sentence(HOSTILE))
    page = view.page
    shown = literal(HOSTILE)
    point = f"svg.senses-scatter circle[data-line='{LINE}']"
    assert page.locator(f"{point} title").text_content() == shown
    page.hover(point)
    assert page.locator("#attn-tooltip .sentence").inner_text() == "".join(excerpt(shown, (4, 8)))
    assert page.locator("#attn-tooltip mark").all_text_contents() == ["bank"]
    assert page.locator("#bold").count() == 0 and page.locator("main img").count() == 0
    assert page.title() == "attn-cli senses: bank"
    assert "".join(excerpt(shown, (4, 8))) in page.locator(".tables").inner_text()
    view.assert_clean()
