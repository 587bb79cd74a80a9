"""Rich tables for `senses`, drawn from its report document alone."""

from __future__ import annotations

import re

from rich.console import Console, Group
from rich.table import Column, Table
from rich.text import Text

from attn_cli.errors import shorten
from attn_cli.render.flags import settings_text
from attn_cli.render.terminal import NEW, header_line, new_words_legend, right, section, settings_lines, simple

MARK = "bold reverse"  # the word in an example sentence: a style, never brackets added to the text
CONTEXT = 50  # characters shown on each side of the word in an example: a long line shows the word's neighbourhood
MISGROUPED_SHOWN = 20  # misgrouped occurrences a table lists (the JSON holds them all)
SILHOUETTE_NOTE = ("silhouette: how much nearer each output is to its own group than to the next one (cosine), "
                   "-1 to 1; near 0 the groups blur into each other, above ~0.25 they stand apart")
PROBES = (("outputs", "contextual outputs"), ("static", "static vector"), ("bag_of_words", "bag of words"))
PROBE_NOTE = ("each occurrence takes the label of its nearest other occurrence (cosine). The static vector is the "
              "same for every occurrence, so it takes the label most common among the others (two labels in equal "
              "numbers: always the other one, 0). Outputs above the static vector: the outputs carry the sense; "
              "outputs near the bag of words (the sentence's mean static vector, context without attention): "
              "attention adds little beyond which words are around")


def render_senses(report: dict, console: Console) -> None:
    console.print(senses_header(report))
    section(console, clusters_title(report["clusters"]), silhouettes_table(report), SILHOUETTE_NOTE)
    section(console, "Nearest words of the static vector (before attention; the same for every occurrence)",
            Text(neighbor_words(report["static_neighbors"]) or "—"))
    section(console, "Groups: the words nearest each group's centre (after attention), and what pulled it",
            groups_table(report), f"pulled by: context words, mean share of the shift y−s per occurrence of the "
                                  f"group; {new_words_legend(console)}")
    section(console, "The sentences nearest each group's centre", examples_table(report),
            f"“{report['word']}” marked; cos: the occurrence's output against its group's centre")
    if report["labels"] is not None:
        render_labels(report, console)


def senses_header(report: dict) -> Group:
    corpus, count = report["corpus"], len(report["occurrences"])
    skipped = f", {corpus['skipped_lines']:,} skipped (too long, or no known word)" if corpus["skipped_lines"] else ""
    return Group(Text.assemble(("Senses of ", "bold"), (f"“{report['word']}”", "bold cyan"),
                               (" across the corpus", "bold")), *settings_lines(report),
                 header_line("corpus", f"{corpus['lines']:,} lines read, {corpus['lines_with_word']:,} with "
                                       f"“{report['word']}”{skipped}; {count:,} occurrence{'s' if count != 1 else ''}"),
                 Text())


def clusters_title(clusters: dict) -> str:
    chosen = clusters["chosen"]
    if clusters["by"] == "given":
        return f"Groups: {chosen} group{'s' * (chosen != 1)}, as {settings_text({'clusters': chosen})} asked"
    tried = sorted(int(k) for k in clusters["silhouettes"])
    if not tried:
        return "Groups: 1 group: every occurrence has the same output, so there is nothing to group"
    return f"Groups: {chosen} groups, chosen by the best silhouette over K = {tried[0]}..{tried[-1]}"


def silhouettes_table(report: dict) -> Table:
    clusters = report["clusters"]
    table = simple(right("K"), right("silhouette"), "")
    for k, value in silhouette_rows(clusters):
        table.add_row(k, number(value), Text("← chosen", style="bold") if int(k) == clusters["chosen"] else "")
    return table


def silhouette_rows(clusters: dict) -> list[tuple[str, float | None]]:
    """One group has no silhouette (a dash)."""
    rows = {int(k): value for k, value in clusters["silhouettes"].items()}
    rows.setdefault(clusters["chosen"], None)
    return [(str(k), rows[k]) for k in sorted(rows)]


def groups_table(report: dict) -> Table:
    before = {n["word"] for n in report["static_neighbors"]}
    total = max(len(report["occurrences"]), 1)
    table = simple(right("#", style="bold"), right("size"), right("silh."),
                   Column("nearest words of its centre", overflow="fold"), Column("pulled by (share)", overflow="fold"))
    for group in report["groups"]:
        near = Text("\n").join(Text(f"{n['word']} {n['cosine']:.3f}") if n["word"] in before else
                               Text(f"{NEW}{n['word']} {n['cosine']:.3f}", style="bold green")
                               for n in group["neighbors"])
        pulls = "\n".join(f"{pull['word']} {pull['share']:.2f}" for pull in group["pulled_by"])
        table.add_row(str(group["group"]), f"{group['size']:,} ({group['size'] / total:.0%})",
                      number(group["silhouette"]), near or "—", pulls or "—")
    return table


def examples_table(report: dict) -> Table:
    places = occurrence_places(report["occurrences"])
    table = simple(right("#", style="bold"), right("line"), right("cos"), Column("sentence", overflow="fold"))
    for group in report["groups"]:
        for number_in_group, example in enumerate(group["examples"]):
            before, word, after = excerpt(example["sentence"], places.get((example["line"], example["position"])))
            table.add_row(str(group["group"]) if number_in_group == 0 else "", f"{example['line']:,}",
                          number(example["cosine"]), Text.assemble(before, (word, MARK), after))
    return table


def render_labels(report: dict, console: Console) -> None:
    labels = report["labels"]
    majority = simple(right("#", style="bold"), Column("majority label", overflow="fold"), right("share"))
    for row in labels["groups"]:
        majority.add_row(str(row["group"]), shown_label(row["label"]), number(row["share"]))
    section(console, f"Groups against the labels: purity {number(labels['purity'])}, adjusted Rand index "
                     f"{number(labels['adjusted_rand'])}", majority,
            "purity: the share of occurrences whose group's majority label is theirs; adjusted Rand: agreement "
            "of groups and labels, 0 for chance, 1 for the same partition")
    probe = simple("nearest other occurrence by", right("accuracy"), right("macro-F1"))
    for key, name in PROBES:
        probe.add_row(name, number(labels["probe"][key]["accuracy"]), number(labels["probe"][key]["macro_f1"]))
    rows = misgrouped_rows(report)
    if rows:
        section(console, misgrouped_title(report), misgrouped_table(rows),
                f"“{report['word']}” marked; label: the occurrence's own; group's label: its group's majority label")
    section(console, "Sense probe (leave-one-out nearest neighbour)", probe, PROBE_NOTE)


def misgrouped_title(report: dict) -> str:
    count = len(report["labels"]["misgrouped"])
    listed = f" (the first {MISGROUPED_SHOWN}; all of them in --json)" if count > MISGROUPED_SHOWN else ""
    return f"Misgrouped occurrences, each labelled otherwise than its group's majority: {count:,}{listed}"


EMPTY_LABEL = "(empty)"  # a blank labels line's label, which a table cell would show as nothing


def shown_label(label: str) -> str:
    return shorten(label) if label else EMPTY_LABEL


def misgrouped_rows(report: dict) -> list[tuple[dict, tuple[str, str, str]]]:
    places = occurrence_places(report["occurrences"])
    sentences = {(o["line"], o["position"]): o["sentence"] for o in report["occurrences"]}
    return [(m, excerpt(sentences[m["line"], m["position"]], places.get((m["line"], m["position"]))))
            for m in report["labels"]["misgrouped"][:MISGROUPED_SHOWN]]


def misgrouped_table(rows: list[tuple[dict, tuple[str, str, str]]]) -> Table:
    table = simple(right("#", style="bold", overflow="fold"), right("line", overflow="fold"),
                   *(Column(name, overflow="fold") for name in ("label", "group's label", "sentence")))
    for m, (before, word, after) in rows:
        table.add_row(str(m["group"]), f"{m['line']:,}", shown_label(m["label"]), shown_label(m["majority_label"]),
                      Text.assemble(before, (word, MARK), after))
    return table


def occurrence_places(occurrences: list[dict]) -> dict[tuple[int, int], tuple[int, int] | None]:
    """(line, position) -> (start, end): a token's k-th occurrence is its k-th place; None where it moved."""
    found: dict[tuple[int, str], list[dict]] = {}
    for occurrence in occurrences:
        found.setdefault((occurrence["line"], occurrence["token"]), []).append(occurrence)
    places: dict[tuple[int, int], tuple[int, int] | None] = {}
    for (_, token), same in found.items():
        spans = marked_spans(same[0]["sentence"], token)
        for rank, occurrence in enumerate(sorted(same, key=lambda o: o["position"])):
            places[occurrence["line"], occurrence["position"]] = spans[rank] if rank < len(spans) else None
    return places


def marked_spans(sentence: str, token: str) -> list[tuple[int, int]]:
    """Where the tokenizer splits `token` out: not inside "banks" or "bank-holiday", but in "bank's"."""
    pattern = re.compile(rf"(?<!\w)(?<!\w[-'’]){re.escape(token)}(?!\w)(?!-\w)")
    return [match.span() for match in pattern.finditer(sentence)] if token else []


def excerpt(sentence: str, place: tuple[int, int] | None, context: int = CONTEXT) -> tuple[str, str, str]:
    """(before, word, after), "…" where the sentence goes on; the sentence unmarked without a place."""
    if place is None:
        return sentence, "", ""
    start, end = place
    before = ("…" if start > context else "") + sentence[max(0, start - context):start]
    after = sentence[end:end + context] + ("…" if len(sentence) - end > context else "")
    return before, sentence[start:end], after


def neighbor_words(neighbors: list[dict]) -> str:
    return ", ".join(f"{n['word']} {n['cosine']:.3f}" for n in neighbors)


def number(value: float | None) -> str:
    """A figure that does not exist (one group's silhouette) as a dash."""
    return "—" if value is None else f"{value:.3f}"
