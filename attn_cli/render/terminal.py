"""Rich tables for the terminal, drawn from the report document alone.

Matrices are heat-coloured (Rich drops the colour for NO_COLOR, TERM=dumb and
pipes). When a sentence has more keys than fit the console width, each query's
largest weights are listed instead, and the note says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from rich import box
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from attn_cli.labels import repeated_words, token_labels
from attn_cli.render.flags import remedies_text, settings_text

TOP_KEYS = 5  # keys per row shown when a matrix is too wide for the terminal
MIN_COLUMN_WIDTH = 7  # "0.123" and its padding: the narrowest a matrix column can be


def render_explain(report: dict, console: Console) -> None:
    """Print the whole explanation: header, matrices per head, shifts, neighbours, diagnostics."""
    console.print(header(report))
    render_attention(report, console, token_labels([token["text"] for token in report["tokens"]]))


def render_attention(report: dict, console: Console, labels: list[str], key_labels: list[str] | None = None,
                     axes: str = "rows are queries, columns are keys") -> None:
    """Every table of one attention pass; key_labels name the columns when keys are other tokens (cross)."""
    settings = report["settings"]
    columns = labels if key_labels is None else key_labels
    for head in report["heads"]:
        suffix = f", head {head['index'] + 1} of {len(report['heads'])}" if len(report["heads"]) > 1 else ""
        if not fits_whole(head["weights"], labels, columns, console, row_sums=True):
            section(console, f"Largest weights per query{suffix}: {weights_formula(settings)}",
                    top_keys_table(head["weights"], labels, columns, TOP_KEYS, console),
                    f"the {TOP_KEYS} largest of each row: all {len(columns)} columns do not fit {console.width} "
                    "columns; widen the terminal or use --json for the full matrices")
            continue
        masked = masked_cells(head)
        legend = MASK_LEGEND if masked.any() else ""
        section(console, f"Scores{suffix}: s = q·k ({axes})",
                *matrix_table(head["scores"], labels, console, columns=columns, masked=masked, note=legend))
        section(console, f"Weights{suffix}: {weights_formula(settings)}",
                *weights_table(head, labels, columns, console, "each row sums to 1 (Σ column)"))
    context = "context" if key_labels is None else "source"
    section(console, "Shift: own value s → contextual output y", shift_table(report, labels, key_labels),
            "\n".join(filter(None, [f"pulled by: {context} words, weight w (share of the shift y−s they supply)",
                                     layer_scale_note(report)])))
    if settings["neighbors"] > 0:
        section(console, "Nearest words (cosine), before and after attention", *neighbor_table(report, labels, console))
    section(console, "Diagnostics per query row", *diagnostics_table(report, labels, columns, console))
    print_warnings(report, console)


def layer_scale_note(report: dict) -> str:
    """For a trained layer, that s and y are on the scale it learnt: its values x W_V (W_O) are tens of units long
    where raw mode's s is x itself, so an |y−s| of 40 is no larger a move than raw mode's 0.5."""
    settings = report["settings"]
    if settings["mode"] != "trained":
        return ""
    norms = [shift["static_norm"] for shift in report["shifts"]]
    value = "x W_V W_O" if settings["output_projection"] else "x W_V"
    return (f"trained layer: s = {value} and y are on the scale the layer learnt (|s| {min(norms):.1f} to "
            f"{max(norms):.1f} here), not the vectors' (in raw mode s = x); |y−s| compares only with this layer's "
            "own, while cos(s,y), w and the shares read the same on any scale")


def weights_table(head: dict, labels: list[str], columns: list[str], console: Console,
                  note: str = "") -> tuple[Table, str]:
    """A head's weights with their Σ column, masked cells shown as MASKED (not as a weight of 0.000 the query
    could have given), and `note` followed by the legend of MASKED when a cell is masked."""
    masked = masked_cells(head)
    return matrix_table(head["weights"], labels, console, columns=columns, row_sums=True, masked=masked,
                        note="; ".join(filter(None, [note, MASK_LEGEND if masked.any() else ""])))


def print_warnings(report: dict, console: Console, where: str = "") -> None:
    """The diagnostics' warnings (saturated or flat softmax), each with its computed remedies as a hint.

    They are part of the report, not messages about the run: they describe these
    weights, and --json carries them in `diagnostics.warnings`. So they are printed
    with the tables on stdout, as a titled section whose wrapped lines stay
    indented under their label (run messages go to stderr as `attn-cli: warning:`).
    """
    warnings = report["diagnostics"]["warnings"]
    if warnings:
        rows = [row for warning in warnings for row in (("warning", warning["message"]),
                                                         ("hint", remedies_text(warning, "model" in report)))]
        section(console, f"Warnings{where}", labelled_lines(rows, label_style="bold yellow"))


def labelled_lines(rows: list[tuple[str, str | Text]], label_style: str = "", text_style: str = "",
                   label_width: int | None = None) -> Table:
    """Label, then text whose wrapped lines stay indented under the text, never back at column 0; a word longer
    than the line (a path) is folded onto the next, never cut."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style=label_style, no_wrap=True, min_width=label_width)
    grid.add_column(style=text_style, overflow="fold")
    for label, text in rows:
        grid.add_row(Text(label), Text(text) if isinstance(text, str) else text)
    return grid


def header_line(label: str, text: str | Text, style: str = "") -> Table:
    """A header line: its text starts in the header's column (or two spaces after a longer label, "sentence 1"),
    and a narrow terminal wraps it under that column, where the label's other lines are."""
    width = HEADER_LABEL_WIDTH - 1 if len(label) < HEADER_LABEL_WIDTH else len(label) + 1
    return labelled_lines([(label, text)], label_style=style, text_style=style, label_width=width)


def weights_formula(settings: dict) -> str:
    return f"w = softmax(s × {settings['scale_factor']:.4g} / {settings['temperature']:g})"


def section(console: Console, title: str, table: RenderableType, note: str = "") -> None:
    """Title, table, note in dim text, blank line: titles and notes never wrap to the table's width."""
    console.print(Text(title, style="bold"))
    console.print(table)
    if note:
        console.print(Text(note, style="dim"))
    console.print()


HEADER_LABEL_WIDTH = 10  # "vectors   ", "tokens    ": the header's text starts in column 11


def header(report: dict, title: str = "Self-attention over ") -> Group:
    lines = [
        Text.assemble((title, "bold"), (f"“{report['sentence']}”", "bold cyan")),
        *settings_lines(report),
        header_line("tokens", tokens_text(report["tokens"], report["vectors"])),
        *dropped_lines(report["dropped_tokens"]),
        *repeated_lines(report["tokens"], report["settings"], model=report.get("model")),
    ]
    return Group(*lines, Text())


def repeated_lines(tokens: list[dict], settings: dict, where: str = "", model: dict | None = None
                   ) -> list[RenderableType]:
    """A note when a word occurs twice without positions: its copies have one vector, so every row and shift
    of one is the other's, which looks like a bug unless said (a pretrained model's inputs carry its learned
    positions)."""
    repeated = repeated_words([token["text"] for token in tokens])
    if not repeated or settings["positions"] != "none" or model is not None:
        return []
    copies = "; ".join(f"“{word}” at {', '.join(str(i + 1) for i in found)}" for word, found in repeated.items())
    why = (f"{copies}{where}: without positions every copy of a word has the same vector, so the copies attend "
           f"and shift alike; {settings_text({'positions': 'sinusoidal'})} tells them apart")
    return [labelled_lines([("repeated", why)], text_style="dim", label_width=HEADER_LABEL_WIDTH - 1)]


def settings_lines(report: dict) -> list[Table]:
    """The vector set and every engine setting, three lines."""
    vectors, settings = report["vectors"], report["settings"]
    scale = settings["scale"] if isinstance(settings["scale"], str) else f"{settings['scale']:g}"
    heads = f"{settings['heads']} head{'s' if settings['heads'] > 1 else ''} of {settings['d_head']} dims"
    return [
        header_line("vectors", f"{vectors['name']}: {vectors['count']:,} words × {vectors['dims']} dims"),
        header_line("attention", f"{mode_text(settings, report.get('model'))}, {settings['similarity']} similarity, "
                                 f"scale {scale} (×{settings['scale_factor']:.4g}), temperature "
                                 f"{settings['temperature']:g}"),
        header_line("", f"{heads}, mask {settings['mask']}, positions {settings['positions']}"),
        *positions_lines(settings),
        *weights_lines(report.get("weights")),
    ]


def mode_text(settings: dict, model: dict | None = None) -> str:
    """'raw mode', 'random, untrained projections (seed 0)' (projected mode's W are random draws, not learnt),
    'trained projections (from seed 0)', or a pretrained model's 'minilm layer 1 of 6 (pretrained)'."""
    if model is not None:
        return f"{model['name']} layer {model['layer']} of {model['layers']} (pretrained)"
    if settings["mode"] == "trained":
        return f"trained projections (from seed {settings['seed']})"
    return f"random, untrained projections (seed {settings['seed']})" if settings["mode"] == "projected" else "raw mode"


def weights_lines(weights: dict | None) -> list[Table]:
    """A trained layer's file and what it learnt from: 'weights   layer.npz: masked-word on corpus.txt ...'."""
    if weights is None:
        return []
    corpus, training = weights["corpus"], weights["training"]
    epochs = training["epochs"]
    return [header_line("weights", f"{weights['file'] or 'in memory'}: {weights['layer']['objective']} on "
                                   f"{corpus['name']} ({corpus['train_sentences']:,} sentences), {epochs} "
                                   f"epoch{'s' if epochs != 1 else ''}, held-out loss {training['held_out_loss']:.3f}")]


def positions_lines(settings: dict) -> list[Table]:
    """With positions, how long their codes came out: 'position scale auto: codes' mean norm 1.058, words' 1.058'."""
    norms = settings.get("position_norms")
    if norms is None:
        return []
    scale = settings["position_scale"]
    scale = scale if isinstance(scale, str) else f"{scale:g}"
    return [header_line("", f"position scale {scale}: codes' mean norm {format_number(norms['codes'])}, "
                            f"words' {format_number(norms['words'])}")]


def dropped_lines(dropped: list[dict], where: str = "") -> list[Table]:
    """Yellow lines for the tokens left out: one per unknown word (with spelling suggestions), one per other
    reason listing its tokens ("“,” “.” “!”: punctuation")."""
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
    """The tokens as typed, two spaces apart."""
    return Text("  ").join(token_text(token, vectors) for token in tokens)


def token_text(token: dict, vectors: dict) -> Text:
    """The token as typed; an unknown word says what stands in for it (fastText builds one from n-grams)."""
    if token["oov"]:
        stand_in = "subword vector" if vectors.get("format") == "fasttext-bin" else "zero vector"
        return Text(f"{token['text']} (oov: {stand_in})", style="yellow")
    return Text(token["text"])


def masked_cells(head: dict) -> np.ndarray:
    """[n_q, n_k] True where the mask hides the key from the query (logit -inf; null once written as JSON)."""
    logits = np.array(head["logits"], dtype=float)  # None -> nan
    return np.isneginf(logits) | np.isnan(logits)


def matrix_table(rows, labels: list[str], console: Console, *, columns: list[str] | None = None,
                 row_sums: bool = False, note: str = "", masked: np.ndarray | None = None) -> tuple[Table, str]:
    """A query x key matrix with heat-coloured cells, cut to the most columns that fit, and its note.

    `labels` name the rows and, unless `columns` is given (a rectangular matrix), the columns too.
    """
    columns = labels if columns is None else columns
    shown = fitting_columns(rows, labels, columns, console, row_sums)
    if shown < len(columns):
        note = "; ".join(filter(None, [note, f"{len(columns) - shown} of {len(columns)} key columns not shown: "
                                             "widen the terminal or use --json"]))
    return _matrix(rows, labels, columns, shown, row_sums, masked), note


def fitting_columns(rows, labels: list[str], columns: list[str], console: Console, row_sums: bool) -> int:
    """How many leading columns fit the console, measured by Rich (bisection).

    A table is as wide as its widest cell in each column, so one skeleton row of
    those widest cells measures the same as every row; and no more than
    width / MIN_COLUMN_WIDTH columns can fit, so a 5,000-token matrix is never
    formatted whole just to find that out.
    """
    high = min(len(columns), console.width // MIN_COLUMN_WIDTH)
    fits = _fit_test(rows, labels, columns, console, row_sums, high)
    if high == len(columns) and fits(high):
        return high
    low, high = 1, high - (high == len(columns))  # the whole matrix did not fit
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def fits_whole(rows, labels: list[str], columns: list[str], console: Console, row_sums: bool) -> bool:
    """Whether every column fits the console: `fitting_columns`'s first test alone, no bisection for a matrix that
    will be listed by its largest weights instead (nor any measuring past width / MIN_COLUMN_WIDTH columns)."""
    high = min(len(columns), console.width // MIN_COLUMN_WIDTH)
    return high == len(columns) and _fit_test(rows, labels, columns, console, row_sums, high)(high)


def _fit_test(rows, labels: list[str], columns: list[str], console: Console, row_sums: bool,
              high: int) -> Callable[[int], bool]:
    """Whether the first `shown` (at most `high`) columns fit, measured on a skeleton row of each column's widest
    cell."""
    widest = [max((format_number(row[j]) for row in rows), key=len) for j in range(high)]  # [high] strings

    def fits(shown: int) -> bool:
        table = _frame(columns, shown, row_sums)
        table.add_row(max(labels, key=len), *widest[:shown], *(["…"] if shown < len(columns) else []),
                      *(["1.000"] if row_sums else []))
        return fits_width(table, console)

    return fits


def _frame(columns: list[str], shown: int, row_sums: bool) -> Table:
    """The empty table of the first `shown` columns, a "…" column when some are left out, and Σ."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("", style="bold", no_wrap=True)
    for label in columns[:shown]:
        table.add_column(label, justify="right", no_wrap=True)
    if shown < len(columns):
        table.add_column("…", justify="center", no_wrap=True)
    if row_sums:
        table.add_column("Σ", justify="right", style="dim", no_wrap=True)
    return table


def _matrix(rows, labels: list[str], columns: list[str], shown: int, row_sums: bool,
            masked: np.ndarray | None = None) -> Table:
    """The heat-coloured rows under the frame of the first `shown` columns; masked cells show as MASKED."""
    table = _frame(columns, shown, row_sums)
    for number, (label, row) in enumerate(zip(labels, rows)):
        hidden = [False] * len(row) if masked is None else masked[number].tolist()
        finite = [value for value in row if value is not None and math.isfinite(value)]
        seen = [value for value, off in zip(row, hidden) if not off and value is not None and math.isfinite(value)]
        low, high = min(seen or finite), max(seen or finite)
        line: list[Text | str] = [Text(MASKED, style="dim") if off else heat_cell(value, low, high)
                                  for value, off in zip(row[:shown], hidden)]
        line += ["…"] if shown < len(columns) else []
        line += [f"{sum(finite):.3f}"] if row_sums else []
        table.add_row(label, *line)
    return table


MASKED = "·"
MASK_LEGEND = "· masked: the query may not see that key (weight exactly 0)"


def top_keys_table(weights, labels: list[str], columns: list[str], k: int, console: Console) -> Table:
    """Each query's k heaviest keys and their weights: the summary of a matrix too wide to print."""
    def frame() -> Table:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        table.add_column("query", style="bold", no_wrap=True)
        table.add_column(f"largest weights (key=w), of {len(columns)} keys", overflow="fold")
        return table

    orders = np.argsort(-np.asarray(weights, dtype=float), axis=1, kind="stable")[:, :k]  # [n_q, k]
    return lined_table(frame, [[label, ", ".join(f"{columns[j]}={row[j]:.3f}" for j in order)]  # a pair never wraps
                               for label, row, order in zip(labels, weights, orders.tolist())], console)


def lined_table(frame: Callable[[], Table], rows: list[list[str | Text]], console: Console) -> Table:
    """frame() with `rows`: stacked (`add_stacked_row`) when that fits the console, so that no cell wraps, else a
    row at a time."""
    table = frame()
    add_stacked_row(table, rows)
    if not fits_width(table, console):
        table = frame()
        for row in rows:
            table.add_row(*row)
    return table


def format_number(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.3f}" if abs(value) < 100 else f"{value:.3g}"


def heat_cell(value: float | None, low: float, high: float) -> Text:
    """The value on a background from dark (row minimum) to bright yellow (row maximum)."""
    text = format_number(value)
    if value is None or text == "—":
        return Text(text, style="dim")
    share = 0.0 if high == low else (value - low) / (high - low)
    red, green, blue = (int(40 + share * 215), int(40 + share * 175), int(60 - share * 30))
    ink = "black" if share > 0.55 else "white"
    return Text(text, style=f"{ink} on rgb({red},{green},{blue})")


def shift_table(report: dict, labels: list[str], key_labels: list[str] | None = None) -> Table:
    """Shift per query token; in self-attention (no key_labels) its own weight has a column of its own."""
    self_attention = key_labels is None
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("token", style="bold", no_wrap=True)
    table.add_column("cos(s,y)", justify="right")
    table.add_column("|y−s|", justify="right")
    if self_attention:
        table.add_column("self w", justify="right")
    table.add_column("pulled by")
    for label, shift in zip(labels, report["shifts"]):
        pulled = ", ".join(pull_text(c, key_labels or labels) for c in shift["pulled_by"])
        own = [f"{shift['self_weight']:.3f}"] if self_attention else []
        table.add_row(label, f"{shift['cosine']:.3f}", f"{shift['delta_norm']:.3f}", *own, pulled or "—")
    return table


def pull_text(contribution: dict, key_labels: list[str]) -> str:
    """'money 0.281 (+0.62)': a pulling word, its weight (3 decimals, as in the weights table) and its share of the
    shift y - s (what ranks it)."""
    return f"{key_labels[contribution['index']]} {contribution['weight']:.3f} ({signed(contribution['shift_share'])})"


def signed(value: float) -> str:
    """'+0.26', '-0.12', and '0.00' for a share that rounds to zero (never '-0.00')."""
    text = f"{value:+.2f}"
    return "0.00" if float(text) == 0 else text


NEW = "+"  # marks a neighbour new after attention: plain text keeps it where colour is dropped


def neighbor_table(report: dict, labels: list[str], console: Console) -> tuple[Table, str]:
    size = report["settings"]["neighbor_vocab"]
    among = "all words" if size is None else f"the {min(size, report['vectors']['count']):,} most frequent words"
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("token", style="bold", no_wrap=True)
    table.add_column("before: s", overflow="fold")  # a line breaks between words; a word too long folds, whole
    table.add_column("after: y", overflow="fold")
    for label, shift in zip(labels, report["shifts"]):
        table.add_row(label, *neighbor_lists(shift))
    return table, f"searched {among}; {new_words_legend(console)}"


def neighbor_lists(shift: dict) -> tuple[Text, Text]:
    """A shift's neighbours before and after attention; a word new after attention is marked +word."""
    before = {n["word"] for n in shift["neighbors_before"]}
    after = Text(", ").join(Text(n["word"]) if n["word"] in before else Text(NEW + n["word"], style="bold green")
                            for n in shift["neighbors_after"])
    return Text(", ".join(n["word"] for n in shift["neighbors_before"])), after


def new_words_legend(console: Console) -> str:
    """'+word: new after attention', naming the colour only where there is one."""
    return f"{NEW}word{' (green)' if console.color_system else ''}: new after attention"


def diagnostics_table(report: dict, labels: list[str], key_labels: list[str],
                      console: Console) -> tuple[Table, str]:
    """Entropy and largest weight per query row: a column pair per head, or a row per head when that is too wide."""
    heads = report["diagnostics"]["heads"]
    note = f"entropy in bits: 0 = all weight on one word, {uniform_text(heads, len(key_labels))}"
    table = _diagnostics_by_column(heads, labels, key_labels)
    if len(heads) > 1 and not fits_width(table, console):
        table = _diagnostics_by_row(heads, labels, key_labels)
    return table, note


def uniform_text(heads: list[dict], n_keys: int) -> str:
    """What uniform weights would score: log2 of the keys a row may see, '1.58 = uniform over 3' when every row
    sees every key, else over each row's visible keys (a masked key is no word to spread over)."""
    seen = sorted({row["visible_keys"] for row in heads[0]["rows"]})
    if seen == [n_keys]:
        return f"{math.log2(max(n_keys, 1)):.2f} = uniform over {n_keys}"
    ends = " to ".join(f"{math.log2(k):.2f} for {k}" for k in dict.fromkeys([seen[0], seen[-1]]))
    return f"log2 k = uniform over the k words a row may see ({ends})"


def _diagnostics_by_column(heads: list[dict], labels: list[str], key_labels: list[str]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("token", style="bold", no_wrap=True)
    for head in heads:
        suffix = f" h{head['index'] + 1}" if len(heads) > 1 else ""
        table.add_column(f"entropy{suffix}", justify="right", no_wrap=True)
        table.add_column(f"largest w{suffix}", justify="right", no_wrap=True)
        table.add_column("on", no_wrap=True)
    add_stacked_row(table, [[label, *(cell for head in heads for cell in _diagnostic_cells(head["rows"][i],
                                                                                           key_labels))]
                            for i, label in enumerate(labels)])
    return table


def _diagnostics_by_row(heads: list[dict], labels: list[str], key_labels: list[str]) -> Table:
    """One line per token and head, the token named once: as readable with 16 heads as with 2."""
    table = Table(box=box.SIMPLE_HEAD)
    for name in ("token", "head", "entropy", "largest w", "on"):
        table.add_column(name, justify="left" if name in ("token", "on") else "right", no_wrap=True,
                         style="bold" if name == "token" else "")
    for i, label in enumerate(labels):
        add_stacked_row(table, [[label if head is heads[0] else "", str(head["index"] + 1),
                                 *_diagnostic_cells(head["rows"][i], key_labels)] for head in heads], end_section=True)
    return table


def add_stacked_row(table: Table, rows: list[list[str | Text]], end_section: bool = False) -> None:
    """Rows of one-line cells added as one row of multi-line cells: while no cell wraps (every column no_wrap, or
    the table fits the console) Rich draws them line for line as it would the rows, but measures and renders each
    column once, not every cell (cells, not lines, are what a table of 12 heads' rows costs)."""
    table.add_row(*(Text("\n").join(cell if isinstance(cell, Text) else Text(cell) for cell in column)
                    for column in zip(*rows)), end_section=end_section)


def _diagnostic_cells(row: dict, key_labels: list[str]) -> list[str | Text]:
    """Entropy, the largest weight and the key it falls on: numbers right-aligned, the word in its own column."""
    return [f"{row['entropy_bits']:.2f}", f"{row['max_weight']:.3f}", Text(key_labels[row["argmax"]])]


def fits_width(table: Table, console: Console) -> bool:
    """Whether the table's natural width (no cell wrapped or cut) fits the console."""
    unbounded = console.options.update_width(10 * console.width)  # measure, do not clamp
    return Measurement.get(console, unbounded, table).maximum <= console.width
