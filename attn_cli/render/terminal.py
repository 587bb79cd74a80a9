"""Rich tables for the terminal, drawn from the report document alone (Rich drops the heat colours for NO_COLOR,
TERM=dumb and pipes); a matrix too wide for the console is listed by each query's largest weights instead."""

from __future__ import annotations

import math

import numpy as np
from rich import box
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from attn_cli.labels import repeated_words, token_labels
from attn_cli.render.flags import remedies_text, settings_text

TOP_KEYS = 5  # keys per row shown when a matrix is too wide for the terminal
MIN_COLUMN_WIDTH = 7  # "0.123" and its padding: the narrowest a matrix column can be
HEADER_LABEL_WIDTH = 10  # "vectors   ", "tokens    ": the header's text starts in column 11
MASKED = "·"
MASK_LEGEND = "· masked: the query may not see that key (weight exactly 0)"
NEW = "+"  # marks a neighbour new after attention: plain text keeps it where colour is dropped


def render_explain(report: dict, console: Console) -> None:
    console.print(header(report))
    render_attention(report, console, token_labels([token["text"] for token in report["tokens"]]))


def render_attention(report: dict, console: Console, labels: list[str], key_labels: list[str] | None = None,
                     axes: str = "rows are queries, columns are keys") -> None:
    """key_labels name the columns when keys are other tokens (cross)."""
    settings = report["settings"]
    columns = labels if key_labels is None else key_labels
    for head in report["heads"]:
        suffix = f", head {head['index'] + 1} of {len(report['heads'])}" if len(report["heads"]) > 1 else ""
        if fitting_columns(head["weights"], labels, columns, console, True) < len(columns):
            section(console, f"Largest weights per query{suffix}: {weights_formula(settings)}",
                    top_keys_table(head["weights"], labels, columns, console),
                    f"the {TOP_KEYS} largest of each row: all {len(columns)} columns do not fit {console.width} "
                    "columns; widen the terminal or use --json for the full matrices")
            continue
        section(console, f"Scores{suffix}: s = q·k ({axes})", *head_table(head, "scores", labels, columns, console))
        section(console, f"Weights{suffix}: {weights_formula(settings)}",
                *head_table(head, "weights", labels, columns, console, "each row sums to 1 (Σ column)"))
    context = "context" if key_labels is None else "source"
    section(console, "Shift: own value s → contextual output y", shift_table(report, labels, key_labels),
            "\n".join(filter(None, [f"pulled by: {context} words, weight w (share of the shift y−s they supply)",
                                     layer_scale_note(report)])))
    if settings["neighbors"] > 0:
        section(console, "Nearest words (cosine), before and after attention", *neighbor_table(report, labels, console))
    section(console, "Diagnostics per query row", *diagnostics_table(report, labels, columns, console))
    print_warnings(report, console)


def layer_scale_note(report: dict) -> str:
    """A trained layer's s and y are on the scale it learnt, so |y−s| reads only against its own."""
    settings = report["settings"]
    if settings["mode"] != "trained":
        return ""
    norms = [shift["static_norm"] for shift in report["shifts"]]
    value = "x W_V W_O" if settings["output_projection"] else "x W_V"
    return (f"trained layer: s = {value} and y are on the scale the layer learnt (|s| {min(norms):.1f} to "
            f"{max(norms):.1f} here), not the vectors' (in raw mode s = x); |y−s| compares only with this layer's "
            "own, while cos(s,y), w and the shares read the same on any scale")


def head_table(head: dict, key: str, labels: list[str], columns: list[str], console: Console,
               note: str = "") -> tuple[Table, str]:
    """A head's scores or weights; masked cells show as MASKED, not as a value the query could give."""
    logits = np.array(head["logits"], dtype=float)  # [n_q, n_k]; None (JSON's -inf) -> nan
    masked = np.isneginf(logits) | np.isnan(logits)
    return matrix_table(head[key], labels, console, columns=columns, row_sums=key == "weights", masked=masked,
                        note="; ".join(filter(None, [note, MASK_LEGEND if masked.any() else ""])))


def print_warnings(report: dict, console: Console, where: str = "") -> None:
    """The warnings are part of the report (on stdout), not messages about the run."""
    warnings = report["diagnostics"]["warnings"]
    if warnings:
        rows = [row for warning in warnings for row in (("warning", warning["message"]),
                                                         ("hint", remedies_text(warning, "model" in report)))]
        section(console, f"Warnings{where}", labelled_lines(rows, label_style="bold yellow"))


def labelled_lines(rows: list[tuple[str, str | Text]], label_style: str = "", text_style: str = "",
                   label_width: int | None = None) -> Table:
    """Text whose wrapped lines stay indented under its label; a word longer than the line folds, never cut."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style=label_style, no_wrap=True, min_width=label_width)
    grid.add_column(style=text_style, overflow="fold")
    for label, text in rows:
        grid.add_row(Text(label), Text(text) if isinstance(text, str) else text)
    return grid


def header_line(label: str, text: str | Text, style: str = "") -> Table:
    """A header line whose text starts in the header's column (two spaces after a longer label, "sentence 1")."""
    width = HEADER_LABEL_WIDTH - 1 if len(label) < HEADER_LABEL_WIDTH else len(label) + 1
    return labelled_lines([(label, text)], label_style=style, text_style=style, label_width=width)


def weights_formula(settings: dict) -> str:
    return f"w = softmax(s × {settings['scale_factor']:.4g} / {settings['temperature']:g})"


def section(console: Console, title: str, table: RenderableType, note: str = "") -> None:
    """Titles and notes are printed apart from the table so they never wrap to its width."""
    console.print(Text(title, style="bold"))
    console.print(table)
    if note:
        console.print(Text(note, style="dim"))
    console.print()


def header(report: dict, title: str = "Self-attention over ") -> Group:
    return Group(Text.assemble((title, "bold"), (f"“{report['sentence']}”", "bold cyan")), *settings_lines(report),
                 header_line("tokens", tokens_text(report["tokens"], report["vectors"])),
                 *dropped_lines(report["dropped_tokens"]),
                 *repeated_lines(report["tokens"], report["settings"], model=report.get("model")), Text())


def repeated_lines(tokens: list[dict], settings: dict, where: str = "", model: dict | None = None
                   ) -> list[RenderableType]:
    """Copies of a word without positions share one vector, which looks like a bug unless said."""
    repeated = repeated_words([token["text"] for token in tokens])
    if not repeated or settings["positions"] != "none" or model is not None:
        return []
    copies = "; ".join(f"“{word}” at {', '.join(str(i + 1) for i in found)}" for word, found in repeated.items())
    why = (f"{copies}{where}: without positions every copy of a word has the same vector, so the copies attend "
           f"and shift alike; {settings_text({'positions': 'sinusoidal'})} tells them apart")
    return [labelled_lines([("repeated", why)], text_style="dim", label_width=HEADER_LABEL_WIDTH - 1)]


def settings_lines(report: dict) -> list[Table]:
    vectors, settings, model = report["vectors"], report["settings"], report.get("model")
    scale = settings["scale"] if isinstance(settings["scale"], str) else f"{settings['scale']:g}"
    heads = f"{settings['heads']} head{'s' if settings['heads'] > 1 else ''} of {settings['d_head']} dims"
    mode = f"{model['name']} layer {model['layer']} of {model['layers']} (pretrained)" if model is not None else {
        "raw": "raw mode", "projected": f"random, untrained projections (seed {settings['seed']})",
        "trained": f"trained projections (from seed {settings['seed']})"}[settings["mode"]]
    lines = [header_line("vectors", f"{vectors['name']}: {vectors['count']:,} words × {vectors['dims']} dims"),
             header_line("attention", f"{mode}, {settings['similarity']} similarity, scale {scale} "
                                      f"(×{settings['scale_factor']:.4g}), temperature {settings['temperature']:g}"),
             header_line("", f"{heads}, mask {settings['mask']}, positions {settings['positions']}")]
    norms = settings.get("position_norms")
    if norms is not None:
        position_scale = settings["position_scale"]
        position_scale = position_scale if isinstance(position_scale, str) else f"{position_scale:g}"
        lines.append(header_line("", f"position scale {position_scale}: codes' mean norm "
                                     f"{format_number(norms['codes'])}, words' {format_number(norms['words'])}"))
    weights = report.get("weights")
    if weights is not None:
        corpus, epochs = weights["corpus"], weights["training"]["epochs"]
        lines.append(header_line("weights", f"{weights['file'] or 'in memory'}: {weights['layer']['objective']} on "
                                            f"{corpus['name']} ({corpus['train_sentences']:,} sentences), {epochs} "
                                            f"epoch{'s' if epochs != 1 else ''}, held-out loss "
                                            f"{weights['training']['held_out_loss']:.3f}"))
    return lines


def dropped_lines(dropped: list[dict], where: str = "") -> list[Table]:
    """A line per unknown word (with spelling suggestions), one per other reason listing its tokens."""
    lines = []
    for item in dropped:
        if item["reason"] == "out of vocabulary":
            hint = f" (did you mean {', '.join(item['suggestions'])}?)" if item["suggestions"] else ""
            lines.append(header_line("dropped", f"“{item['text']}”{where}: {item['reason']}{hint}", "yellow"))
    for reason in dict.fromkeys(item["reason"] for item in dropped if item["reason"] != "out of vocabulary"):
        texts = " ".join(f"“{item['text']}”" for item in dropped if item["reason"] == reason)
        lines.append(header_line("dropped", f"{texts}{where}: {reason}", "yellow"))
    return lines


def tokens_text(tokens: list[dict], vectors: dict) -> Text:
    stand_in = "subword vector" if vectors.get("format") == "fasttext-bin" else "zero vector"
    return Text("  ").join(Text(f"{token['text']} (oov: {stand_in})", style="yellow") if token["oov"] else
                           Text(token["text"]) for token in tokens)


def matrix_table(rows, labels: list[str], console: Console, *, columns: list[str] | None = None,
                 row_sums: bool = False, note: str = "", masked: np.ndarray | None = None) -> tuple[Table, str]:
    """Heat-coloured cells, cut to the most columns that fit, and its note."""
    columns = labels if columns is None else columns
    shown = fitting_columns(rows, labels, columns, console, row_sums)
    if shown < len(columns):
        note = "; ".join(filter(None, [note, f"{len(columns) - shown} of {len(columns)} key columns not shown: "
                                             "widen the terminal or use --json"]))
    table = _frame(columns, shown, row_sums)
    for number, (label, row) in enumerate(zip(labels, rows)):
        hidden = [False] * len(row) if masked is None else masked[number].tolist()
        seen = [value for value, off in zip(row, hidden) if not off] or list(row)  # scores and weights are finite
        low, high = min(seen), max(seen)
        table.add_row(label, *[Text(MASKED, style="dim") if off else heat_cell(value, low, high)
                               for value, off in zip(row[:shown], hidden)],
                      *(["…"] if shown < len(columns) else []), *([f"{sum(row):.3f}"] if row_sums else []))
    return table, note


def fitting_columns(rows, labels: list[str], columns: list[str], console: Console, row_sums: bool) -> int:
    """How many leading columns fit, measured on one row of each column's widest cell (never the whole matrix)."""
    high = min(len(columns), console.width // MIN_COLUMN_WIDTH)
    widest = [max((format_number(row[j]) for row in rows), key=len) for j in range(high)]  # [high] strings
    for shown in range(high, 1, -1):
        table = _frame(columns, shown, row_sums)
        table.add_row(max(labels, key=len), *widest[:shown], *(["…"] if shown < len(columns) else []),
                      *(["1.000"] if row_sums else []))
        if fits_width(table, console):
            return shown
    return 1


def _frame(columns: list[str], shown: int, row_sums: bool) -> Table:
    return simple(lead(""), *(right(label, no_wrap=True) for label in columns[:shown]),
                  *([Column("…", justify="center", no_wrap=True)] if shown < len(columns) else []),
                  *([right("Σ", style="dim", no_wrap=True)] if row_sums else []), pad_edge=False)


def right(header: str = "", footer: str = "", **options) -> Column:
    return Column(header, footer, justify="right", **options)


def lead(header: str = "", footer: str = "") -> Column:
    return Column(header, footer, style="bold", no_wrap=True)


def simple(*columns: Column | str, **options) -> Table:
    return Table(*columns, box=box.SIMPLE_HEAD, **options)


def top_keys_table(weights, labels: list[str], columns: list[str], console: Console) -> Table:
    orders = np.argsort(-np.asarray(weights, dtype=float), axis=1, kind="stable")[:, :TOP_KEYS]  # [n_q, k]
    rows: list[list[str | Text]] = [[label, ", ".join(f"{columns[j]}={row[j]:.3f}" for j in order)]
                                    for label, row, order in zip(labels, weights, orders.tolist())]
    for stacked in (True, False):  # one stacked row when no cell wraps, else a row at a time
        table = simple(lead("query"), Column(f"largest weights (key=w), of {len(columns)} keys", overflow="fold"),
                       pad_edge=False)
        if stacked:
            add_stacked_row(table, rows)
        else:
            for row in rows:
                table.add_row(*row)
        if fits_width(table, console):
            break
    return table


def format_number(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.3f}" if abs(value) < 100 else f"{value:.3g}"


def heat_cell(value: float | None, low: float, high: float) -> Text:
    text = format_number(value)
    if value is None or text == "—":
        return Text(text, style="dim")
    share = 0.0 if high == low else (value - low) / (high - low)
    red, green, blue = (int(40 + share * 215), int(40 + share * 175), int(60 - share * 30))
    ink = "black" if share > 0.55 else "white"
    return Text(text, style=f"{ink} on rgb({red},{green},{blue})")


def shift_table(report: dict, labels: list[str], key_labels: list[str] | None = None) -> Table:
    table = simple(lead("token"), right("cos(s,y)"), right("|y−s|"), *([right("self w")] if key_labels is None else []),
                   "pulled by")
    for label, shift in zip(labels, report["shifts"]):
        pulled = ", ".join(pull_text(c, key_labels or labels) for c in shift["pulled_by"])
        own = [f"{shift['self_weight']:.3f}"] if key_labels is None else []
        table.add_row(label, f"{shift['cosine']:.3f}", f"{shift['delta_norm']:.3f}", *own, pulled or "—")
    return table


def pull_text(contribution: dict, key_labels: list[str]) -> str:
    """'money 0.281 (+0.62)': a pulling word, its weight and its share of the shift y - s (what ranks it)."""
    return f"{key_labels[contribution['index']]} {contribution['weight']:.3f} ({signed(contribution['shift_share'])})"


def signed(value: float) -> str:
    """Never '-0.00'."""
    text = f"{value:+.2f}"
    return "0.00" if float(text) == 0 else text


def neighbor_table(report: dict, labels: list[str], console: Console) -> tuple[Table, str]:
    size = report["settings"]["neighbor_vocab"]
    among = "all words" if size is None else f"the {min(size, report['vectors']['count']):,} most frequent words"
    table = simple(lead("token"), Column("before: s", overflow="fold"), Column("after: y", overflow="fold"))  # folds
    for label, shift in zip(labels, report["shifts"]):
        table.add_row(label, *neighbor_lists(shift))
    return table, f"searched {among}; {new_words_legend(console)}"


def neighbor_lists(shift: dict) -> tuple[Text, Text]:
    """A word new after attention is marked +word."""
    before = {n["word"] for n in shift["neighbors_before"]}
    after = Text(", ").join(Text(n["word"]) if n["word"] in before else Text(NEW + n["word"], style="bold green")
                            for n in shift["neighbors_after"])
    return Text(", ".join(n["word"] for n in shift["neighbors_before"])), after


def new_words_legend(console: Console) -> str:
    return f"{NEW}word{' (green)' if console.color_system else ''}: new after attention"


def diagnostics_table(report: dict, labels: list[str], key_labels: list[str],
                      console: Console) -> tuple[Table, str]:
    """A column trio per head, or a row per head when that is too wide."""
    heads = report["diagnostics"]["heads"]
    note = f"entropy in bits: 0 = all weight on one word, {uniform_text(heads, len(key_labels))}"
    suffixes = [f" h{head['index'] + 1}" if len(heads) > 1 else "" for head in heads]
    table = simple(lead("token"), *(column for suffix in suffixes for column in (
        right(f"entropy{suffix}", no_wrap=True), right(f"largest w{suffix}", no_wrap=True),
        Column("on", no_wrap=True))))
    add_stacked_row(table, [[label, *(cell for head in heads for cell in _diagnostic_cells(head["rows"][i],
                                                                                           key_labels))]
                            for i, label in enumerate(labels)])
    if len(heads) > 1 and not fits_width(table, console):  # one line per token and head, the token named once
        table = simple(lead("token"), *(right(name, no_wrap=True) for name in ("head", "entropy", "largest w")),
                       Column("on", no_wrap=True))
        for i, label in enumerate(labels):
            add_stacked_row(table, [[label if head is heads[0] else "", str(head["index"] + 1),
                                     *_diagnostic_cells(head["rows"][i], key_labels)] for head in heads],
                            end_section=True)
    return table, note


def uniform_text(heads: list[dict], n_keys: int) -> str:
    """log2 of the keys a row may see: a masked key is no word to spread over."""
    seen = sorted({row["visible_keys"] for row in heads[0]["rows"]})
    if seen == [n_keys]:
        return f"{math.log2(max(n_keys, 1)):.2f} = uniform over {n_keys}"
    ends = " to ".join(f"{math.log2(k):.2f} for {k}" for k in dict.fromkeys([seen[0], seen[-1]]))
    return f"log2 k = uniform over the k words a row may see ({ends})"


def add_stacked_row(table: Table, rows: list[list[str | Text]], end_section: bool = False) -> None:
    """Rows of one-line cells as one row of multi-line cells: drawn alike while no cell wraps, measured once."""
    table.add_row(*(Text("\n").join(cell if isinstance(cell, Text) else Text(cell) for cell in column)
                    for column in zip(*rows)), end_section=end_section)


def _diagnostic_cells(row: dict, key_labels: list[str]) -> list[str | Text]:
    return [f"{row['entropy_bits']:.2f}", f"{row['max_weight']:.3f}", Text(key_labels[row["argmax"]])]


def fits_width(table: Table, console: Console) -> bool:
    return Measurement.get(console, console.options.update_width(10 * console.width), table).maximum <= console.width
