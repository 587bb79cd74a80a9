"""`--plain`: one tab-separated record per token for grep, cut, awk and spreadsheets, under a `#line<TAB>id...`
header comment; numbers in full precision (shortest round-trip form), an empty cell for "none"."""

from __future__ import annotations

import json

from attn_cli.errors import literal

READS = ("tokens", "shifts", "traces")  # the blocks of a document plain_records reads (a builder may skip the rest)
COLUMNS = ("line", "id", "index", "token", "key", "cosine", "delta_norm", "self_weight",
           "pulled_by", "pulled_weight", "pulled_share", "neighbors_after")


def header() -> str:
    return "#" + "\t".join(COLUMNS) + "\n"


def plain_records(report: dict) -> str:
    """One line per query token of an explain or trace document (trace: the traced tokens only)."""
    shifts = report["shifts"] if "shifts" in report else [trace["shift"] for trace in report["traces"]]
    tokens = report["tokens"]
    lines = []
    for shift in shifts:
        pulled = (shift["pulled_by"] or [None])[0]
        cells = (
            report.get("line"), report.get("id"), shift["index"], shift["token"], tokens[shift["index"]]["key"],
            shift["cosine"], shift["delta_norm"], shift["self_weight"],
            *((pulled["token"], pulled["weight"], pulled["shift_share"]) if pulled else (None, None, None)),
            ",".join(n["word"] for n in shift["neighbors_after"]),
        )
        lines.append("\t".join(cell_text(cell) for cell in cells) + "\n")
    return "".join(lines)


def cell_text(value) -> str:
    """'' for none; tabs and line breaks in free text as spaces, other control characters escaped."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dict, list, bool)):  # a jsonl id may be any JSON value: write it as JSON
        return literal(json.dumps(value, ensure_ascii=False, allow_nan=False))
    return literal(" ".join(value.split())) if isinstance(value, str) else str(value)
