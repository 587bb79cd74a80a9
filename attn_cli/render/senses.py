"""The senses document as plain text lines (str() of a SensesResult), drawn from the document alone.

Every text from input is passed as `rich.text.Text`, never as markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text


def render_senses(report: dict, console: Console) -> None:
    """The word, the corpus counts, the choice of K, each group's figures and, with labels, the probe."""
    corpus, clusters = report["corpus"], report["clusters"]
    silhouette = "" if report["silhouette"] is None else f", silhouette {report['silhouette']:.3f}"
    console.print(Text(f"“{report['word']}”: {len(report['occurrences']):,} occurrences in "
                       f"{corpus['lines_with_word']:,} of {corpus['lines']:,} lines ({corpus['skipped_lines']:,} "
                       f"skipped); {clusters['chosen']} group{'s' * (clusters['chosen'] != 1)} by "
                       f"{clusters['by']}{silhouette}"))
    if clusters["silhouettes"]:
        console.print(Text("silhouettes: " + ", ".join(f"K={k} {value:.3f}"
                                                        for k, value in clusters["silhouettes"].items())))
    console.print(Text("static vector near: " + words(report["static_neighbors"], "cosine")))
    for group in report["groups"]:
        console.print(Text(f"group {group['group']}: {group['size']:,} occurrences"
                           + ("" if group["silhouette"] is None else f", silhouette {group['silhouette']:.3f}")))
        console.print(Text("  near: " + words(group["neighbors"], "cosine")))
        console.print(Text("  pulled by: " + words(group["pulled_by"], "share")))
        for example in group["examples"]:
            console.print(Text(f"  line {example['line']}: {example['sentence']}"))
    if report["labels"] is not None:
        labels = report["labels"]
        console.print(Text(f"labels: purity {labels['purity']:.3f}, adjusted Rand {labels['adjusted_rand']:.3f}"))
        for name, scores in labels["probe"].items():
            console.print(Text(f"  probe {name}: accuracy {scores['accuracy']:.3f}, "
                               f"macro-F1 {scores['macro_f1']:.3f}"))


def words(entries: list[dict], figure: str) -> str:
    """'river 0.81, water 0.77' from a list of {"word", figure} entries ('—' for none)."""
    return ", ".join(f"{entry['word']} {entry[figure]:.2f}" for entry in entries) or "—"
