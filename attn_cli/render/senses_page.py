"""The scatter (SVG), tables and page of `senses` from its document; every text from input is literal and escaped."""

from __future__ import annotations

from html import escape

from attn_cli.errors import shorten
from attn_cli.render.consoles import literal_document
from attn_cli.render.html import filled_page, paragraph, table, text
from attn_cli.render.senses import (PROBE_NOTE, PROBES, SILHOUETTE_NOTE, clusters_title, excerpt, misgrouped_rows,
                                    misgrouped_title, neighbor_words, number, occurrence_places,
                                    silhouette_rows)

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
WIDTH, HEIGHT, MARGIN, LEGEND = 640, 420, 24, 150  # the plot's box, its margin, the legend's column (px)
MISGROUPED_RING = ", ringed in black when misgrouped (its label is not its group's majority label)"
COLOR_BY = ("group", "label")  # what the scatter's colours tell apart
LEGEND_LABEL = 16  # characters of a label the legend shows (a <title> has a longer one whole)


def group_colours(count: int) -> list[str]:
    """Eight well-separated colours (the default K is at most 8), then hues a golden angle apart."""
    return [PALETTE[i] if i < len(PALETTE) else f"hsl({(i * 137.508) % 360:.1f},60%,42%)" for i in range(count)]


def scatter_svg(document: dict, standalone: bool = False, color_by: str = "group") -> str:
    """The occurrences coloured by group or label; `standalone` adds the XML declaration and a heading."""
    report = literal_document(document)
    keys, names = _colour_keys(report, color_by)
    colours = dict(zip(names, group_colours(len(names))))
    misgrouped = {(m["line"], m["position"]) for m in (report["labels"] or {}).get("misgrouped", [])}
    places, place = occurrence_places(report["occurrences"]), _placer(report["occurrences"])
    points = "".join(_point(o, index, colours[key], place(o["x"], o["y"]), places.get((o["line"], o["position"])),
                            (o["line"], o["position"]) in misgrouped)
                     for index, (o, key) in enumerate(zip(report["occurrences"], keys)))
    rings = [f'<rect x="{WIDTH + 13}" y="{MARGIN + 22 * len(names) - 9}" width="10" height="10" rx="5" fill="#fff" '
             f'stroke="#000" stroke-width="1.6"/><text x="{WIDTH + 30}" y="{MARGIN + 22 * len(names)}">misgrouped '
             f'({len(misgrouped):,})</text>'] if misgrouped else []  # a rect: the page's script hovers circles
    legend = "".join([*(
        f'<rect x="{WIDTH + 12}" y="{MARGIN + 22 * i - 10}" width="12" height="12" fill="{colours[name]}"/>'
        f'<text x="{WIDTH + 30}" y="{MARGIN + 22 * i}">{text(shorten(name, LEGEND_LABEL))} ({keys.count(name):,})'
        f'{"" if shorten(name, LEGEND_LABEL) == name else f"<title>{text(name)}</title>"}</text>'  # hover: all of it
        for i, name in enumerate(names)), *rings])
    heading = (f'<title>attn-cli senses: {text(report["word"])} ({len(report["occurrences"]):,} occurrences)'
               f'</title>') if standalone else ""
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" class="senses-scatter" width="{WIDTH + LEGEND}" '
           f'height="{HEIGHT}" viewBox="0 0 {WIDTH + LEGEND} {HEIGHT}" font-family="sans-serif" font-size="12" '
           f'role="img">{heading}<rect x="0.5" y="0.5" width="{WIDTH - 1}" height="{HEIGHT - 1}" fill="#fff" '
           f'stroke="#d9dde5"/><g class="axes" fill="#5d6677"><text x="{WIDTH - MARGIN}" y="{HEIGHT - 8}" '
           f'text-anchor="end">PCA 1</text><text x="8" y="{MARGIN - 8}">PCA 2</text></g>'
           f'<g class="points" stroke="#fff" stroke-width="0.8">{points}</g><g class="legend">{legend}</g></svg>')
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + svg + "\n") if standalone else svg


def _colour_keys(report: dict, color_by: str) -> tuple[list[str], list[str]]:
    """Each occurrence's colour key ("group 2", or its label), and the legend's keys in order."""
    if color_by == "label":
        keys = [o["label"] for o in report["occurrences"]]
        if None in keys:
            raise ValueError("the scatter is coloured by label only for a document with labels")
        return keys, list(dict.fromkeys(keys))
    return [f"group {o['group']}" for o in report["occurrences"]], [f"group {g['group']}" for g in report["groups"]]


def _placer(occurrences: list[dict]):
    """x, y -> pixels, one scale for both axes: a distance on the picture is the same either way."""
    xs, ys = [o["x"] for o in occurrences] or [0.0], [o["y"] for o in occurrences] or [0.0]
    span = max(max(xs) - min(xs), max(ys) - min(ys)) or 1.0
    scale = min(WIDTH, HEIGHT) - 2 * MARGIN
    middle_x, middle_y = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    return lambda x, y: (WIDTH / 2 + (x - middle_x) / span * scale, HEIGHT / 2 - (y - middle_y) / span * scale)


def _point(occurrence: dict, index: int, colour: str, at: tuple[float, float], place: tuple[int, int] | None,
           misgrouped: bool = False) -> str:
    """Its sentence in <title> for any viewer's hover; excerpt and label in data-* for the page's tooltip."""
    before, word, after = excerpt(occurrence["sentence"], place)
    ring = ' class="misgrouped" stroke="#000" stroke-width="1.6"' if misgrouped else ""
    label = "" if occurrence["label"] is None else f' data-label="{escape(occurrence["label"])}"'
    return (f'<circle cx="{at[0]:.1f}" cy="{at[1]:.1f}" r="4.5" fill="{colour}"{ring} data-index="{index}" '
            f'data-group="{occurrence["group"]}"{label} data-line="{occurrence["line"]}" '
            f'data-before="{escape(before)}" '
            f'data-word="{escape(word)}" data-after="{escape(after)}">'
            f'<title>{text(occurrence["sentence"])}</title></circle>')


def senses_tables_html(document: dict) -> str:
    report = literal_document(document)
    labels, clusters = report["labels"], report["clusters"]
    places = occurrence_places(report["occurrences"])
    parts = [
        paragraph(f"{report['corpus']['lines']:,} lines, {len(report['occurrences']):,} occurrences of "
                  f"“{report['word']}”"),
        table(clusters_title(clusters), ["K", "silhouette", ""],
              [[k, number(v), "chosen" if int(k) == clusters["chosen"] else ""] for k, v in silhouette_rows(clusters)]),
        paragraph(SILHOUETTE_NOTE),
        paragraph("Nearest words of the static vector (before attention): " +
                  neighbor_words(report["static_neighbors"])),
        table("Groups: the words nearest each centre (after attention), and what pulled it",
              ["#", "size", "silhouette", "nearest words of its centre", "pulled by (share of the shift)"],
              [[str(g["group"]), f"{g['size']:,}", number(g["silhouette"]),
                neighbor_words(g["neighbors"]),
                ", ".join(f"{p['word']} {p['share']:.2f}" for p in g["pulled_by"])] for g in report["groups"]]),
        table("The sentences nearest each group's centre", ["#", "line", "cos", "sentence"],
              [[str(g["group"]), f"{e['line']:,}", number(e["cosine"]),
                excerpt(e["sentence"], places.get((e["line"], e["position"])))]
               for g in report["groups"] for e in g["examples"]]),
    ]
    if labels is not None:
        misgrouped = misgrouped_rows(report)
        parts += [table(f"Groups against the labels: purity {number(labels['purity'])}, adjusted Rand index "
                        f"{number(labels['adjusted_rand'])}", ["#", "majority label", "share"],
                        [[str(row["group"]), row["label"], number(row["share"])] for row in labels["groups"]]),
                  table(misgrouped_title(report), ["#", "line", "label", "group's label", "sentence"],
                        [[str(m["group"]), f"{m['line']:,}", m["label"], m["majority_label"], words]
                         for m, words in misgrouped]) if misgrouped else "",
                  table("Sense probe (leave-one-out nearest neighbour)", ["by", "accuracy", "macro-F1"],
                        [[name, number(labels["probe"][key]["accuracy"]), number(labels["probe"][key]["macro_f1"])]
                         for key, name in PROBES]),
                  paragraph(PROBE_NOTE)]
    return "".join(parts)


def senses_page(document: dict, command_line: str, color_by: str = "group") -> str:
    report = literal_document(document)
    return filled_page(
        "senses", WORD=text(report["word"]), COMMAND=text(command_line),
        SVG=scatter_svg(document, color_by=color_by), TABLES=senses_tables_html(document),
        LEGEND=text(f"{len(report['occurrences']):,} occurrences, the 2-D PCA of their contextual outputs, "
                    f"coloured by {color_by}{MISGROUPED_RING if report['labels'] else ''}; point at one to read its "
                    "sentence"))
