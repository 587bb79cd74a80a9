"""A notebook cell: plain HTML tables, which survive viewers that strip iframes, scripts and styles, then the
interactive report in a sandboxed iframe."""

from __future__ import annotations

from html import escape

from attn_cli.labels import token_labels
from attn_cli.render.html import paragraph, table, text
from attn_cli.render.senses import number
from attn_cli.render.terminal import pull_text

IFRAME_STYLE = "width: 100%; height: 640px; border: 1px solid #ddd; resize: vertical;"


def notebook_cell(document: dict, page: str) -> str:
    return (f"<div>{plain_tables(document)}</div>"
            f'<iframe srcdoc="{escape(page, quote=True)}" sandbox="allow-scripts" title="attn-cli report" '
            f'style="{IFRAME_STYLE}"></iframe>')


def plain_tables(document: dict) -> str:
    if document["command"] == "senses":
        from attn_cli.render.senses_page import senses_tables_html

        return senses_tables_html(document)
    if document["command"] == "trace":
        return _trace(document)
    if document["command"] == "compare" and document["cross"]:
        source, target = _labels(document["source"]["tokens"]), _labels(document["target"]["tokens"])
        return (_heading(f"{document['target']['sentence']} attends over {document['source']['sentence']}") +
                paragraph("source: " + "  ".join(source)) + paragraph("target: " + "  ".join(target)) +
                _weights(document["heads"], target, source) + _shifts(document["shifts"], target, source))
    if document["command"] == "compare":
        return "".join(_attention(block, f"sentence {number}: ") for number, block in
                       enumerate(document["sentences"], 1))
    return _attention(document)


def _attention(document: dict, title: str = "") -> str:
    labels = _labels(document["tokens"])
    return (_heading(f"{title}{document['sentence']}") + paragraph("tokens: " + "  ".join(labels)) +
            _weights(document["heads"], labels, labels) + _shifts(document["shifts"], labels, labels))


def _trace(document: dict) -> str:
    labels = _labels(document["tokens"])
    parts = [_heading(document["sentence"]), paragraph("tokens: " + "  ".join(labels))]
    for trace in document["traces"]:
        for head in trace["heads"]:
            rows = [[labels[key["index"]], number(key["score"]), number(key["weight"])] for key in head["keys"]]
            parts.append(table(f"{labels[trace['index']]}, head {head['index'] + 1}: each key's weight",
                               ["key", "score", "weight"], rows))
        parts.append(_shifts([trace["shift"]], labels, labels))
    return "".join(parts)


def _weights(heads: list[dict], rows: list[str], columns: list[str]) -> str:
    return "".join(table(f"Weights, head {head['index'] + 1} of {len(heads)} (rows are queries, columns are keys)",
                         ["", *columns], [[label, *(number(w) for w in weights)]
                                          for label, weights in zip(rows, head["weights"])])
                   for head in heads)


def _shifts(shifts: list[dict], labels: list[str], key_labels: list[str]) -> str:
    rows = [[labels[shift["index"]], number(shift["cosine"]), number(shift["delta_norm"]),
             number(shift["self_weight"]), ", ".join(pull_text(pull, key_labels) for pull in shift["pulled_by"])]
            for shift in shifts]
    return table("Shift: own value s → contextual output y", ["token", "cos(s,y)", "|y−s|", "self w", "pulled by"],
                 rows)


def _labels(tokens: list[dict]) -> list[str]:
    return token_labels([token["text"] for token in tokens])


def _heading(value: str) -> str:
    return f"<p><strong>{text(value)}</strong></p>"
