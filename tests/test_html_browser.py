"""The HTML reports in a real browser (Debian's Chromium through playwright): offline, hover, heads, toggles, and
the senses page's scatter.

One browser for the whole session, a fresh page per test. Locally the tests skip when Chromium is not
at /usr/bin/chromium; `.ci/run` installs it and sets ATTN_CLI_BROWSER_TESTS=required, so in CI they run
(and a missing browser fails instead of skipping).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_senses_render import SAMPLE as SENSES, with_sentence

from attn_cli.errors import literal
from attn_cli.render.senses import excerpt
from attn_cli.render.senses_page import senses_page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]
LONG_SENTENCE = ("the quick brown fox jumps over the lazy dog near the river bank today while a small child reads an "
                 "old book about ships and the sea under a tall green tree in the park on a warm sunny afternoon in "
                 "early june when many people walk their dogs along the quiet path beside the water and the birds "
                 "sing songs of spring")


def unavailable(reason: str) -> None:
    """Skip locally; fail where the browser tests are required (CI)."""
    if os.environ.get("ATTN_CLI_BROWSER_TESTS") == "required":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        unavailable(f"browser tests need Chromium at {CHROMIUM}: apt-get install -y chromium (.ci/run does)")
    try:
        from playwright import sync_api
    except ImportError:
        unavailable("browser tests need playwright: pip install '.[test]'")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


class OfflinePage:
    """A page that records console errors and every request, and refuses any request but the file itself."""

    def __init__(self, browser, path: Path, width: int = 1280) -> None:
        self.url = path.as_uri()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("dialog", lambda dialog: (self.errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        self.page.route("**/*", self._route)
        self.page.goto(self.url)

    def _route(self, route) -> None:
        self.requests.append(route.request.url)
        if route.request.url == self.url:
            route.continue_()
        else:
            route.abort()

    def values(self, side: str) -> tuple[list[str], list[float]]:
        """The weights written next to the tokens on `side` of the token-lines view: text and exact value."""
        nodes = self.page.locator(f"svg.lines text.value[data-side={side}]")
        return nodes.all_text_contents(), [float(v) for v in nodes.evaluate_all("ns => ns.map(n => n.dataset.weight)")]

    def data_values(self, selector: str) -> list[float]:
        """The exact values (data-value) of the heatmap cells that match `selector`."""
        return [float(v) for v in self.page.locator(selector).evaluate_all("ns => ns.map(n => n.dataset.value)")]

    def assert_clean(self) -> None:
        assert self.errors == []
        assert self.requests == [self.url]


def write_report(run, tmp_path, *args: str, name: str = "report.html") -> tuple[Path, list[dict]]:
    target = tmp_path / name
    result = run("explain", *args, "--html", str(target))
    assert result.exit_code == 0, result.stderr
    documents = [json.loads(line) for line in run("explain", *args, "--json").stdout.splitlines()]
    return target, documents


def three(values: list[float]) -> list[str]:
    return [f"{value:.3f}" for value in values]


def test_report_works_offline_hover_shows_the_json_weights_and_heads_switch(run, tmp_path, browser):
    path, [report] = write_report(run, tmp_path, "money bank grows", "--heads", "2")
    heads = [head["weights"] for head in report["heads"]]
    assert heads[0] != heads[1]
    view = OfflinePage(browser, path)
    page = view.page
    assert page.locator("h1 q").inner_text() == "money bank grows"

    page.hover("svg.lines text.token[data-side=query][data-index='1']")  # the query "bank"
    assert view.values("key") == (three(heads[0][1]), heads[0][1])
    assert page.locator("table.heatmap tbody tr.selected th").inner_text() == "bank"

    page.check("input[name='head-0'][value='1']")
    assert "head 2 of 2" in page.locator(".panel.matrix h2").inner_text()
    page.hover("svg.lines text.token[data-side=query][data-index='1']")
    assert view.values("key") == (three(heads[1][1]), heads[1][1])
    page.hover("svg.lines text.token[data-side=key][data-index='0']")  # the key "money": its column
    assert view.values("query") == (three([row[0] for row in heads[1]]), [row[0] for row in heads[1]])

    page.click("svg.lines text.token[data-side=query][data-index='2']")  # a click pins the row
    page.hover("h1")
    assert view.values("key")[1] == heads[1][2]

    cells = page.locator("table.heatmap td")
    assert cells.all_text_contents() == three([w for row in heads[1] for w in row])
    page.check("input[name='layer-0'][value='scores']")
    assert cells.all_text_contents() == three([s for row in report["heads"][1]["scores"] for s in row])
    page.hover("table.heatmap td[data-row='0'][data-col='2']")
    tooltip = page.locator("#attn-tooltip").inner_text()
    for expected in ("money → grows", "raw score s", f"{report['heads'][1]['scores'][0][2]:.3f}",
                     f"{report['heads'][1]['logits'][0][2]:.3f}", f"weight w\n{heads[1][0][2]:.3f}"):
        assert expected in tooltip
    assert page.screenshot(path=str(tmp_path / "explain.png"), full_page=True)[:4] == b"\x89PNG"
    view.assert_clean()


def test_the_words_that_moved_a_token_are_shown_by_their_share_of_the_shift(run, tmp_path, browser):
    """The report's shift table and the trace page name the pulling words as the terminal does: weight, then the
    share of the shift y - s, largest share first, with a legend saying what the share is."""
    path, [report] = write_report(run, tmp_path, "money bank grows")
    view = OfflinePage(browser, path)
    page = view.page
    table = page.locator("table.data", has=page.locator("th", has_text="pulled by"))
    bank = table.locator("tbody tr").nth(1).locator("td").nth(4)
    assert [f"{c['token']} {c['weight']:.3f} (+{c['shift_share']:.2f})" for c in report["shifts"][1]["pulled_by"]] \
        == bank.inner_text().replace("\u00a0", " ").splitlines() == ["money 0.281 (+0.62)", "grows 0.145 (+0.38)"]
    assert page.get_by_text("pulled by: context words, weight w (share of the shift y−s they supply)").count() == 1
    view.assert_clean()
    trace = tmp_path / "trace.html"
    assert run("trace", "money bank grows", "--word", "bank", "--html", str(trace)).exit_code == 0
    view = OfflinePage(browser, trace)
    moved = view.page.locator("table.data tr", has=view.page.locator("td", has_text="moved by")).inner_text()
    assert "money (w 0.281, share 0.617 of y − x), grows (w 0.145, share 0.383 of y − x)" in moved
    view.assert_clean()


def test_sixty_tokens_scroll_and_no_labels_overlap(run, tmp_path, browser):
    path, [report] = write_report(run, tmp_path, LONG_SENTENCE)
    assert len(report["tokens"]) >= 60
    view = OfflinePage(browser, path)
    page = view.page
    for selector in ("table.heatmap thead .col-label", "table.heatmap tbody th", "svg.lines text.token"):
        boxes = page.locator(selector).evaluate_all("ns => ns.map(n => { const r = n.getBoundingClientRect();"
                                                    " return [r.left, r.top, r.right, r.bottom]; })")
        assert len(boxes) >= len(report["tokens"])
        for (l1, t1, r1, b1), (l2, t2, r2, b2) in zip(boxes, boxes[1:]):  # neighbours in reading order
            assert r1 <= l2 + 0.5 or b1 <= t2 + 0.5 or r2 <= l1 + 0.5 or b2 <= t1 + 0.5, selector
    boxes = page.locator(".scroll").evaluate_all("ns => ns.map(n => [n.scrollHeight > n.clientHeight, n.clientWidth])")
    assert boxes[0][0] and boxes[1][0]  # the heatmap and the lines scroll inside their own boxes
    assert all(width <= 1280 for _, width in boxes)
    page.hover("svg.lines text.token[data-side=query][data-index='59']")
    assert view.values("key")[1] == report["heads"][0]["weights"][59]
    view.assert_clean()


def test_every_stdin_sentence_gets_its_own_section_and_printing_drops_the_controls(run, tmp_path, browser):
    target = tmp_path / "two.html"
    result = run("explain", "-", "--heads", "2", "--html", str(target), input="money bank grows\nriver bank flows\n")
    assert result.exit_code == 0, result.stderr
    view = OfflinePage(browser, target)
    page = view.page
    assert page.locator("section.document h1 q").all_text_contents() == ["money bank grows", "river bank flows"]
    page.check("input[name='head-1'][value='1']")  # the second section's head switch leaves the first alone
    assert page.locator(".panel.matrix h2").all_text_contents()[:2] == [
        "Weights, head 1 of 2: w = softmax(s × 1 / 1)", "Weights, head 2 of 2: w = softmax(s × 1 / 1)"]
    page.emulate_media(media="print")
    assert page.locator(".controls").first.is_hidden()
    assert page.locator(".scroll").first.evaluate("n => getComputedStyle(n).overflow") == "visible"
    view.assert_clean()


def test_cross_attention_draws_the_rectangular_matrix(run, tmp_path, browser):
    path = tmp_path / "cross.html"
    args = ("compare", "river bank flows", "the money bank grows", "--heads", "2")
    assert run(*args, "--cross", "--html", str(path)).exit_code == 0
    report = json.loads(run(*args, "--cross", "--json").stdout)
    view = OfflinePage(browser, path)
    page = view.page
    rows = page.locator("table.heatmap tbody tr")
    assert rows.count() == 4  # rows = target tokens, columns = source tokens
    assert rows.first.locator("td").count() == 3
    assert page.locator("table.heatmap tbody th").all_text_contents() == ["the", "money", "bank", "grows"]
    page.check("input[name='head-0'][value='1']")
    page.hover("svg.lines text.token[data-side=query][data-index='2']")  # target "bank" over the source
    assert view.values("key")[1] == report["heads"][1]["weights"][2]
    view.assert_clean()


def test_compare_puts_the_sentences_side_by_side_and_a_verdict_word_lights_its_rows(run, tmp_path, browser):
    path = tmp_path / "compare.html"
    args = ("compare", "river bank flows", "the money bank grows")
    assert run(*args, "--html", str(path)).exit_code == 0
    report = json.loads(run(*args, "--json").stdout)
    view = OfflinePage(browser, path, width=1400)  # a laptop screen
    page = view.page
    assert page.locator("pre.command").count() == 1  # the command line once, in the page header
    sentences = page.locator("section.sentence")
    assert sentences.locator("h2 q").all_text_contents() == ["river bank flows", "the money bank grows"]
    left, right = sentences.first.bounding_box(), sentences.last.bounding_box()
    assert left["x"] + left["width"] <= right["x"] < left["x"] + left["width"] + 60  # adjacent, left to right
    assert abs(left["y"] - right["y"]) < 1

    [bank] = report["words"]
    assert page.locator("table.data tr.pick").inner_text().startswith("bank")
    page.hover("table.data tr.pick[data-word=bank]")
    for occurrence in bank["occurrences"]:
        k, i = occurrence["sentence"], occurrence["index"]
        row = f"section.sentence[data-sentence='{k}'] table.heatmap tbody tr.selected"
        assert page.locator(row).count() == 1
        assert page.locator(f"{row} th").inner_text() == occurrence["text"]
        assert view.data_values(f"{row} td") == report["sentences"][k]["heads"][0]["weights"][i]
    page.hover("h1")  # hovering away releases the rows; a click keeps them
    assert page.locator("table.heatmap tbody tr.selected").count() == 0
    page.click("table.data tr.pick[data-word=bank]")
    page.hover("h1")
    assert page.locator("table.heatmap tbody tr.selected").count() == 2
    assert page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)[:4] == b"\x89PNG"
    view.assert_clean()


def test_trace_page_shows_each_traced_words_steps_and_switches_words(run, tmp_path, browser):
    path = tmp_path / "trace.html"
    args = ("trace", "money bank grows", "--mode", "projected", "--heads", "2")
    assert run(*args, "--html", str(path)).exit_code == 0
    report = json.loads(run(*args, "--json").stdout)
    view = OfflinePage(browser, path)
    page = view.page
    assert page.locator("h1 q").inner_text() == "money bank grows"
    assert page.locator("input[name='trace-0']").count() == len(report["traces"]) == 3

    def assert_shows(trace: dict) -> None:
        title = page.locator(".traced h2").first.inner_text()
        assert f"“{trace['token']}”: word {trace['index'] + 1} of 3" in title
        for head in trace["heads"]:  # one block per head; the weights row of its softmax step
            cells = f".head-block[data-head='{head['index']}'] table.heatmap tbody tr[data-row='3'] td"
            weights = view.data_values(cells)
            assert weights == [key["weight"] for key in head["keys"]]
            assert sum(weights) == pytest.approx(1.0)
        shown = page.locator(".matrix-check b[data-diff]").evaluate("n => +n.dataset.diff")
        assert shown == trace["matrix_form_max_abs_diff"] < 1e-12

    assert_shows(report["traces"][0])
    page.check("input[name='trace-0'][value='1']")  # trace "bank" instead
    assert_shows(report["traces"][1])
    assert page.locator("ul.notes li").count() == len(report["traces"][1]["notes"])
    page.hover(".head-block[data-head='1'] table.heatmap td[data-row='3'][data-col='0']")
    tooltip = page.locator("#attn-tooltip").inner_text()
    assert "bank → money" in tooltip and f"{report['traces'][1]['heads'][1]['keys'][0]['weight']:.3f}" in tooltip
    assert page.screenshot(path=str(tmp_path / "trace.png"), full_page=True)[:4] == b"\x89PNG"
    view.assert_clean()


def test_a_notebook_cell_shows_the_report_inline_offline(browser, tmp_path):
    """What Jupyter shows for a result (its _repr_html_) renders the report in Chromium, fetching nothing."""
    import attn_cli

    result = attn_cli.explain("money bank grows")
    path = tmp_path / "cell.html"
    path.write_text(f"<!DOCTYPE html><html><body>{result._repr_html_()}</body></html>", encoding="utf-8")
    view = OfflinePage(browser, path)
    frame = view.page.frame_locator("iframe")
    frame.locator("pre.command").wait_for()
    assert frame.locator("pre.command").inner_text() == ">>> attn_cli.explain('money bank grows')"
    assert "0.574" in frame.locator("body").inner_text()  # bank's weight on itself, as in the CLI's table
    assert view.errors == [] and view.requests == [view.url]
    view.page.close()


BRIGHTEST = "rgb(255, 215, 30)"  # heat(1): the top of the colour scale


def test_the_colour_scale_is_the_whole_matrix_or_each_row_and_the_legend_says_which(run, tmp_path, browser):
    """Over the whole matrix a flat row stays dim; per row every row's peak is as bright as any other."""
    path, [report] = write_report(run, tmp_path, "money bank grows of the")
    weights = report["heads"][0]["weights"]
    peaks = [max(row) for row in weights]
    flat = peaks.index(min(peaks))
    assert min(peaks) < max(peaks) - 0.1
    view = OfflinePage(browser, path)
    page = view.page

    def peak_colours() -> list[str]:
        return [page.locator(f"table.heatmap td[data-row='{i}'][data-col='{row.index(max(row))}']")
                .evaluate("n => getComputedStyle(n).backgroundColor") for i, row in enumerate(weights)]

    note = page.locator(".panel.matrix .note")
    assert f"colour over the whole matrix: dark = its smallest value ({min(map(min, weights)):.3f}), yellow = its " \
           f"largest ({max(peaks):.3f})" in note.inner_text()
    colours = peak_colours()
    assert colours[peaks.index(max(peaks))] == BRIGHTEST and colours[flat] != BRIGHTEST
    page.check("input[name='scale-0'][value='row']")
    assert note.inner_text().startswith("colour per row: dark = the row's smallest value, yellow = its largest")
    assert peak_colours() == [BRIGHTEST] * len(weights)
    view.assert_clean()


def test_token_lines_of_a_long_sentence_show_each_querys_strongest_keys(run, tmp_path, browser):
    """22 words: each query's 3 heaviest lines by default (66, not 484); focusing a word shows all of its row;
    'all' brings every line back."""
    sentence = " ".join(LONG_SENTENCE.split()[:22])
    path, [report] = write_report(run, tmp_path, sentence)
    weights = report["heads"][0]["weights"]
    view = OfflinePage(browser, path)
    page = view.page
    shown = "ns => ns.filter(n => getComputedStyle(n).display !== 'none').map(n => [+n.dataset.q, +n.dataset.k])"
    visible = page.locator("svg.lines line").evaluate_all(shown)
    strongest = {(i, j) for i, row in enumerate(weights) for j in sorted(range(22), key=lambda j: -row[j])[:3]}
    assert len(visible) == 66 and {tuple(pair) for pair in visible} == strongest
    assert "each query's 3 strongest keys" in page.locator(".panel.lines .note").inner_text()
    page.hover("svg.lines text.token[data-side=query][data-index='5']")
    assert sum(1 for q, _ in page.locator("svg.lines line").evaluate_all(shown) if q == 5) == 22
    page.check("input[name='lines-0'][value='all']")
    page.hover("h1")
    assert len(page.locator("svg.lines line").evaluate_all(shown)) == sum(w > 0 for row in weights for w in row)
    view.assert_clean()


def test_a_three_sentence_comparison_fits_a_1280_pixel_window(run, tmp_path, browser):
    path = tmp_path / "compare.html"
    assert run("compare", "river bank flows", "money bank grows", "the bank is closed",
               "--html", str(path)).exit_code == 0
    view = OfflinePage(browser, path, width=1280)
    overflowing = view.page.evaluate("() => [...document.querySelectorAll('.scroll'), document.documentElement]"
                                     ".filter(n => n.scrollWidth > n.clientWidth).map(n => n.className)")
    assert overflowing == []
    view.assert_clean()


def test_the_content_security_policy_runs_only_the_pages_own_script(run, tmp_path, browser):
    """Were escaping ever to fail, an injected handler or script would still not run: the policy names the
    report's script and style sheet by hash, and allows nothing inline besides."""
    path, _ = write_report(run, tmp_path, "money bank grows")
    page_text = path.read_text(encoding="utf-8")
    csp = page_text.split('http-equiv="Content-Security-Policy" content="', 1)[1].split('"', 1)[0]
    assert "unsafe-inline" not in csp and "script-src 'sha256-" in csp and "style-src 'sha256-" in csp
    injected = ('<img src="data:," onerror="document.title = \'pwned\'">'
                '<script>document.title = "pwned too"</script><div style="color: red" id="styled">x</div>')
    path.write_text(page_text.replace("<body>", "<body>" + injected, 1), encoding="utf-8")
    view = OfflinePage(browser, path)
    page = view.page
    assert page.title().startswith("attn-cli explain")  # neither injection ran
    assert page.locator("#styled").evaluate("n => getComputedStyle(n).color") != "rgb(255, 0, 0)"
    assert page.locator("table.heatmap td").count() == 9  # the report's own script did
    cell = page.locator("table.heatmap td").first.evaluate("n => getComputedStyle(n).backgroundColor")
    assert cell.startswith("rgb(") and cell != "rgba(0, 0, 0, 0)"  # colours set through the CSSOM still apply
    assert view.errors and all("Content Security Policy" in error for error in view.errors)
    assert view.requests == [view.url]


def test_a_trained_layer_switches_to_the_random_weights_it_started_from(run, tmp_path, browser):
    from conftest import stand_in_layer

    import attn_cli

    layer = tmp_path / "layer.npz"
    stand_in_layer(attn_cli.load_vectors(), heads=2, d_k=64).save(layer)
    path, [report] = write_report(run, tmp_path, "money bank grows", "--weights", str(layer))
    view = OfflinePage(browser, path)
    page = view.page
    assert f"weights {layer}: masked-word on corpus.txt" in page.locator("p.note").first.inner_text()
    cells = page.locator("table.heatmap td")

    def shown() -> list[str]:
        return cells.all_text_contents()

    def expected(heads: list[dict], head: int) -> list[str]:
        return three([w for row in heads[head]["weights"] for w in row])  # the diagonal (masked) hatched at 0

    assert shown() == expected(report["heads"], 0)
    page.check("input[name='weights-0'][value='initial']")
    assert shown() == expected(report["initial"]["heads"], 0)
    page.check("input[name='head-0'][value='1']")  # the head switch follows the chosen weights
    assert shown() == expected(report["initial"]["heads"], 1)
    page.check("input[name='weights-0'][value='trained']")
    assert shown() == expected(report["heads"], 1)
    assert report["initial"]["heads"][1]["weights"] != report["heads"][1]["weights"]
    view.assert_clean()


def test_the_entropy_note_counts_the_words_each_row_may_see(run, tmp_path, browser):
    """Issue 26: under the causal mask a row sees 1 to 3 words, and the page's note says uniform is over those, as
    the terminal's does, not over all 3 columns."""
    path, _ = write_report(run, tmp_path, "money bank grows", "--mask", "causal")
    view = OfflinePage(browser, path)
    note = "0 bits = all weight on one word, log2 k = uniform over the k words a row may see (0.00 for 1 to 1.58 for 3)"
    assert view.page.get_by_text(note).count() == 1
    view.assert_clean()


def test_the_trace_page_leaves_masked_words_out_of_the_weighted_sum(run, tmp_path, browser):
    """Issue 26: as on the terminal, a masked key is no term of step 5's sum, and the step says so."""
    path = tmp_path / "trace.html"
    assert run("trace", "river bank money", "--word", "bank", "--mask", "causal", "--html", str(path)).exit_code == 0
    view = OfflinePage(browser, path)
    assert view.page.get_by_text("y is their sum; masked (“money”): not in the sum").count() == 1
    assert "money" not in view.page.locator("table", has_text="= Σ").inner_text()
    view.assert_clean()


# ---- senses: the scatter of one word's occurrences across a corpus (docs/senses.md) ----------------------------

SENSES_HOSTILE = 'the bank </script><b id="bold">bold</b> <img src=x onerror="document.title=1"> abc\u202edef 🏦 bank'
LINE = SENSES["groups"][0]["examples"][0]["line"]  # with_sentence puts the hostile text there


def open_senses_page(browser, tmp_path, document: dict) -> OfflinePage:
    path = tmp_path / "senses.html"
    path.write_text(senses_page(document, "attn-cli senses bank --file bank.txt"), encoding="utf-8")
    return OfflinePage(browser, path)


def test_every_occurrence_is_a_point_in_its_groups_colour(browser, tmp_path):
    view = open_senses_page(browser, tmp_path, SENSES)
    points = view.page.locator("svg.senses-scatter circle")
    assert points.count() == len(SENSES["occurrences"])
    fills = points.evaluate_all("ns => ns.map(n => getComputedStyle(n).fill)")
    by_group: dict[int, set[str]] = {}
    for occurrence, fill in zip(SENSES["occurrences"], fills):
        by_group.setdefault(occurrence["group"], set()).add(fill)
    assert all(len(colours) == 1 for colours in by_group.values())
    assert len(set.union(*by_group.values())) == len(SENSES["groups"])
    boxes = points.evaluate_all("ns => ns.map(n => { const b = n.getBoundingClientRect(); return b.width; })")
    assert all(width > 0 for width in boxes)  # drawn, not merely present
    view.assert_clean()


def test_hovering_a_point_names_its_label_and_the_legend_shows_no_tooltip(browser, tmp_path):
    from test_senses_render import misgrouped

    document = misgrouped("money")
    path = tmp_path / "senses.html"
    path.write_text(senses_page(document, "attn-cli senses bank --example", color_by="label"), encoding="utf-8")
    view = OfflinePage(browser, path)
    page = view.page
    page.hover("svg.senses-scatter circle[data-index='1']")
    occurrence = document["occurrences"][1]
    assert (f"group {occurrence['group']}, label {occurrence['label']}, line {occurrence['line']}"
            in page.locator("#attn-tooltip").inner_text())
    page.hover("svg.senses-scatter g.legend rect:last-of-type")
    assert not page.locator("#attn-tooltip").is_visible()
    view.assert_clean()


def test_hovering_a_point_shows_its_sentence_with_the_word_marked(browser, tmp_path):
    view = open_senses_page(browser, tmp_path, SENSES)
    page = view.page
    titles = page.locator("svg.senses-scatter circle title").all_text_contents()
    assert titles == [occurrence["sentence"] for occurrence in SENSES["occurrences"]]
    page.hover("svg.senses-scatter circle[data-index='4']")
    tooltip = page.locator("#attn-tooltip")
    assert tooltip.is_visible()
    assert tooltip.locator(".sentence").inner_text() == SENSES["occurrences"][4]["sentence"]  # short: whole
    assert tooltip.locator("mark").all_text_contents() == ["bank"]
    occurrence = SENSES["occurrences"][4]
    assert (f"group {occurrence['group']}, label {occurrence['label']}, line {occurrence['line']}"
            in tooltip.inner_text())
    view.assert_clean()


def test_hostile_sentences_are_shown_as_typed_and_nothing_runs_or_loads(browser, tmp_path):
    view = open_senses_page(browser, tmp_path, with_sentence(SENSES_HOSTILE))
    page = view.page
    shown = literal(SENSES_HOSTILE)
    point = f"svg.senses-scatter circle[data-line='{LINE}']"
    assert page.locator(f"{point} title").text_content() == shown
    page.hover(point)
    assert page.locator("#attn-tooltip .sentence").inner_text() == "".join(excerpt(shown, (4, 8)))
    assert page.locator("#attn-tooltip mark").all_text_contents() == ["bank"]
    assert page.locator("#bold").count() == 0 and page.locator("main img").count() == 0
    assert page.title() == "attn-cli senses: bank"
    assert "".join(excerpt(shown, (4, 8))) in page.locator(".tables").inner_text()
    view.assert_clean()
