"""The senses document from a `SensesResult` read through its attributes only: this layer may not import senses."""

from __future__ import annotations

from typing import Any

from attn_cli.documents.explain import document_header, settings_block


def senses_document(result: Any) -> dict:
    table = result.occurrences
    layer = table.settings.layer_weights
    labels = [None] * len(result.assignments) if result.labels_report is None else list(result.labels_report.labels)
    return {
        **document_header("senses"),
        "word": result.word,
        "vectors": table.vectors.describe(),
        "settings": settings_block(result.layer, table.settings.report, None),
        **({"model": layer.describe()} if getattr(layer, "pretrained", False) else {}),
        "corpus": {"lines": table.lines_read, "lines_with_word": table.lines_with_word,
                   "skipped_lines": table.skipped_lines},
        "clusters": {"chosen": len(result.groups), "by": result.chosen_by,
                     "silhouettes": {str(k): value for k, value in result.silhouettes.items()}},
        "silhouette": result.silhouette,
        "static_neighbors": neighbors_block(result.static_neighbors),
        "groups": [group_block(group) for group in result.groups],
        "occurrences": [{"line": line, "position": position, "token": token, "sentence": sentence, "group": group + 1,
                         "label": label, "x": x, "y": y}
                        for line, position, token, sentence, group, label, (x, y) in
                        zip(table.line.tolist(), table.position.tolist(), table.token, table.sentence,
                            result.assignments.tolist(), labels, result.projection.tolist())],
        "labels": None if result.labels_report is None else labels_block(result),
    }


def neighbors_block(neighbors: Any) -> list[dict]:
    return [{"word": neighbor.word, "cosine": neighbor.cosine} for neighbor in neighbors]


def group_block(group: Any) -> dict:
    return {
        "group": group.number, "size": group.size, "silhouette": group.silhouette,
        "neighbors": neighbors_block(group.neighbors),
        "pulled_by": [{"word": pull.word, "share": pull.share} for pull in group.pulled_by],
        "examples": [{"line": example.line, "position": example.position, "sentence": example.sentence,
                      "cosine": example.cosine} for example in group.examples],
    }


def labels_block(result: Any) -> dict:
    """Misgrouped occurrences (labelled otherwise than their group's majority) by line and position."""
    report, table = result.labels_report, result.occurrences
    majority = {group: label for group, label, _ in report.groups}
    return {
        "purity": report.purity, "adjusted_rand": report.adjusted_rand,
        "groups": [{"group": group, "label": label, "share": share} for group, label, share in report.groups],
        "probe": report.probe,
        "misgrouped": [{"line": int(table.line[row]), "position": int(table.position[row]),
                        "group": int(result.assignments[row]) + 1, "label": report.labels[row],
                        "majority_label": majority[int(result.assignments[row]) + 1]} for row in report.misgrouped],
    }
