"""The trace as a worked example drawn from its document alone: seven captioned steps per traced word, then notes."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Column, Table
from rich.text import Text

from attn_cli.render.flags import settings_text, see_with_text
from attn_cli.labels import token_labels
from attn_cli.render.terminal import (fits_width, format_number, header, lead, neighbor_lists, new_words_legend,
                                      right, section, simple)


def render_trace(report: dict, console: Console) -> None:
    labels = token_labels([token["text"] for token in report["tokens"]])
    console.print(header(report, title="Attention, step by step, over "))
    dims, model = report["static_vectors"][0]["dims"], report.get("model")
    inputs = vector_table([("x", label, v) for label, v in zip(labels, report["static_vectors"])], console)
    if model is None:
        section(console, f"Step 1 · Static vectors x: one embedding per word ({shown(report, dims)})", inputs,
                "the same vector for a word whatever the sentence; |x| is its length")
    else:
        made = ("LayerNorm(E[token] + P[position] + T[0]): the word embedding, its learned position and token type "
                "0, normalised" if model["layer"] == 1 else f"the output of layer {model['layer'] - 1}, from the "
                "embeddings (+ learned positions, LayerNorm) through the layers below")
        section(console, f"Step 1 · Layer {model['layer']}'s input x: {made} ({shown(report, dims)})", inputs,
                "WordPiece tokens of the model's vocabulary, [CLS] first and [SEP] last; |x| is the length")
    if report["inputs"] is not None:
        section(console, "Step 1b · Positions added: x = embedding + sinusoidal position code",
                vector_table([("x", label, v) for label, v in zip(labels, report["inputs"])], console))
    projection_step(report, console)
    for trace in report["traces"]:
        render_one(report, trace, labels, console)


def shown(report: dict, dims: int) -> str:
    count = min(report["dims_shown"], dims)
    return f"all {dims} dims" if count >= dims else f"first {count} of {dims} dims"


def projection_step(report: dict, console: Console) -> None:
    projections = report["projections"]
    console.print(Text("Step 2 · Query, key and value", style="bold"))
    if projections is None:
        console.print("Raw mode learns nothing: the same vector x plays all three roles, the query q "
                      "(what a word looks for), the key k (what it offers) and the value v (what it passes on).")
        console.print()
        return
    d_model, width = projections["w_q"]
    origin = (f"from numpy.random.default_rng({projections['seed']}), entries normal with standard deviation "
              f"1/√{d_model} = {projections['std'][0]:.4g}")
    model = report.get("model")
    lines = [f"q = x W_Q, k = x W_K, v = x W_V, each W of shape {d_model} × {width}: "
             + (f"untrained random weights {origin}." if projections["trained"] is None else
                f"weights learnt by attn-cli train ({projections['trained']}), starting from random draws {origin}.")]
    if model is not None:
        lines = [f"q = x W_Q + b_Q, k = x W_K + b_K, v = x W_V + b_V, each W of shape {d_model} × {width}: the "
                 f"pretrained weights of {model['name']} layer {model['layer']} ({model['source']}).",
                 "W_O (+ b_O) maps the joined heads back to the model's width: y, the attention's contextual output."]
    elif projections["w_o"] is not None:
        rows, cols = projections["w_o"]
        lines.append(f"W_O ({rows} × {cols}, std 1/√{rows} = {projections['std'][1]:.4g}) maps the "
                     "joined heads back to the embedding width.")
    console.print("\n".join(lines))
    console.print()
    for name, matrix_rows in projections["rows"].items():
        shape = projections[name]
        section(console, f"{name.upper()} ({shape[0]} × {shape[1]}): first {len(matrix_rows)} rows",
                vector_table([(name.upper(), f"row {i + 1}", row) for i, row in enumerate(matrix_rows)], console))


def render_one(report: dict, trace: dict, labels: list[str], console: Console) -> None:
    settings = report["settings"]
    word = labels[trace["index"]]
    console.rule(Text(f"“{trace['token']}”: word {trace['index'] + 1} of {len(labels)} as the query",
                      style="bold cyan"))
    console.print()
    many = len(trace["heads"]) > 1
    for head in trace["heads"]:
        if many:
            console.print(Text(f"Head {head['index'] + 1} of {len(trace['heads'])}: dims {head['columns'][0] + 1}-"
                               f"{head['columns'][1]} of q, k and v, attended on their own", style="bold magenta"))
            console.print()
        if many or report["projections"] is not None:
            section(console, f"Step 2 · q of “{word}”, k and v of every word ({shown(report, head['query']['dims'])})",
                    vector_table([("q", word, head["query"])]
                                 + [("k", labels[k["index"]], k["key"]) for k in head["keys"]]
                                 + [("v", labels[k["index"]], k["value"]) for k in head["keys"]], console))
        head_steps(report, settings, head, word, labels, console)
    if many:
        section(console, f"Heads joined: y = [{' | '.join(f'y{h + 1}' for h in range(len(trace['heads'])))}]",
                vector_table([("y", word, trace["concatenation"])], console))
    if trace["output_projection"] is not None:
        rows, cols = trace["output_projection"]["shape"]
        bias = " + b_O" if report.get("model") is not None else ""  # a pretrained layer's W_O comes with its bias
        section(console, f"Output projection: y W_O{bias}, [{rows}] × [{rows} × {cols}] → [{cols}]",
                vector_table([(f"y W_O{bias}", word, trace["output_projection"]["output"])], console))
    after_attention_steps(report, trace["index"], word, console)
    comparison_step(report, trace, labels, console)
    matrix_step(report, trace, word, console)
    notes_step(trace, labels, console)


def after_attention_steps(report: dict, index: int, word: str, console: Console) -> None:
    """A pretrained layer's residual, LayerNorm and feed-forward block: the tool's own layers stop at y."""
    after = report.get("after_attention")
    if after is None:
        return
    section(console, "After attention · residual and LayerNorm: h = LayerNorm(x + y)",
            vector_table([("x + y", word, after["residual"][index]), ("h", word, after["normed"][index])], console),
            "the word's own input added back, then each vector centred and scaled (the layer's learnt gain and bias)")
    section(console, "Feed-forward: out = LayerNorm(h + W_2 gelu(W_1 h + b_1) + b_2)",
            vector_table([("W_2 gelu(…) + b_2", word, after["feed_forward"][index]),
                          ("out", word, after["outputs"][index])], console),
            "out is the layer's output: the next layer's input x")


def head_steps(report: dict, settings: dict, head: dict, word: str, labels: list[str], console: Console) -> None:
    dims = head["query"]["dims"]
    count = min(report["dims_shown"], dims)
    scores = simple(lead("key"), f"q · k_j = q₁k₁ + q₂k₂ + … ({dims} products)", right("s_j", no_wrap=True),
                    pad_edge=False)
    for key in head["keys"]:
        products = [f"{format_number(q)}×{format_number(k)}" for q, k in zip(head["query"]["first"],
                                                                           key["key"]["first"])]
        written = " + ".join(products) + (" + …" if count < dims else "")
        if settings["similarity"] == "cosine":
            written = (f"({written} = {format_number(key['dot'])}) / (|q| {format_number(head['query']['norm'])}"
                       f" × |k| {format_number(key['key']['norm'])})")
        scores.add_row(labels[key["index"]], written, format_number(key["score"]))
    similarity = "cos(q, k_j) = q · k_j / (|q| |k_j|)" if settings["similarity"] == "cosine" else "s_j = q · k_j"
    section(console, f"Step 3 · Scores {similarity}: how well “{word}” matches each word",
            scores, "multiply matching coordinates and add them up; a larger score means more alike")

    factor, temperature = settings["scale_factor"], settings["temperature"]
    shift = head["exp_shift"]
    scale = {"sqrt": f"1/√{settings['d_head']} = {factor:.4g}",
             "none": "none (×1)"}.get(settings["scale"], f"×{factor:.4g}")
    softmax = simple(lead("key", "Σ"), right("s_j", no_wrap=True),
                     right(f"l_j = s_j×{factor:.4g}/{temperature:.4g}", no_wrap=True),
                     right("exp(l_j)" if shift == 0 else f"exp(l_j−{format_number(shift)})",
                           format_number(head["exp_sum"]), no_wrap=True),
                     right("w_j = exp/Σ", format_number(head["weight_sum"]), no_wrap=True), pad_edge=False,
                     show_footer=True)
    for key in head["keys"]:
        logit = "masked" if key["masked"] else format_number(key["logit"])
        softmax.add_row(labels[key["index"]], format_number(key["score"]), logit, format_number(key["exp"]),
                        format_number(key["weight"]))
    section(console, "Step 4 · Scale, then softmax: w_j = exp(l_j) / Σ exp(l_m)", softmax,
            f"scale {scale}, temperature {temperature:.4g}; exp makes every "
            "score positive and dividing by the sum Σ makes the weights add up to 1")

    terms = [(labels[key["index"]], f"{format_number(key['weight'])}·v", key["term"])
             for key in head["keys"] if not key["masked"]]
    masked = ", ".join(f"“{labels[key['index']]}”" for key in head["keys"] if key["masked"])
    section(console, f"Step 5 · Weighted sum y = Σ w_j v_j ({shown(report, dims)})",
            vector_table(terms + [("y", "= Σ", head["output"])], console, split_last=True),
            "each word passes on its value v_j in proportion to its weight; y is their sum"
            + (f"; masked ({masked}): not in the sum" if masked else ""))


def comparison_step(report: dict, trace: dict, labels: list[str], console: Console) -> None:
    shift = trace["shift"]
    own = "x" if report["settings"]["mode"] == "raw" else "s"
    table = simple(lead("what"), "value", pad_edge=False, show_header=False)
    table.add_row(f"cos({own}, y)", f"{format_number(shift['cosine'])} (1 = same direction)")
    table.add_row(f"|y − {own}|", f"{format_number(shift['delta_norm'])} (how far it moved; |{own}| "
                  f"{format_number(shift['static_norm'])} → |y| {format_number(shift['contextual_norm'])})")
    table.add_row("moved by", ", ".join(f"{labels[c['index']]} (w {format_number(c['weight'])}, share "
                                        f"{format_number(c['shift_share'])} of y − {own})" for c in shift["pulled_by"])
                  or "—")
    if report["settings"]["neighbors"] > 0:
        before, after = neighbor_lists(shift)
        table.add_row("near before", before)
        table.add_row("near after", after)
    where = "its static vector x" if own == "x" else "its own value s (what y would be if it attended only to itself)"
    legend = new_words_legend(console) if report["settings"]["neighbors"] > 0 else ""
    section(console, f"Step 6 · What changed: y against {where}", table, legend)


def matrix_step(report: dict, trace: dict, word: str, console: Console) -> None:
    form = trace["matrix_form"]
    n_q, d_head = form["queries_shape"]
    n_k = form["keys_shape"][0]
    heads = f" in each of {form['heads']} heads, then joined" if form["heads"] > 1 else ""
    console.print(Text("Step 7 · All words at once, in matrix form: Y = softmax(Q Kᵀ × scale / T) V", style="bold"))
    console.print(f"Q [{n_q} × {d_head}] · Kᵀ [{d_head} × {n_k}] → scores [{n_q} × {n_k}], softmax row by row, "
                  f"· V [{n_k} × {d_head}] → Y [{n_q} × {d_head}]{heads}.")
    console.print(vector_table([("Y", word, form["output"])], console))
    console.print(f"Row “{word}” of Y differs from the term-by-term sum above by at most "
                  f"{trace['matrix_form_max_abs_diff']:.1e}: one computation, two notations.")
    console.print()


def notes_step(trace: dict, labels: list[str], console: Console) -> None:
    console.print(Text("Notes", style="bold"))
    for note in trace["notes"]:
        bullet = Table.grid(Column(no_wrap=True), Column(), padding=(0, 1))
        bullet.add_row("•", note["message"] + see_with_text(note))
        console.print(bullet)
        if note.get("alternatives"):
            keys = trace["heads"][note["head"]]["keys"]
            table = simple(Column("weights if run with", no_wrap=True),
                           *(right(labels[k["index"]], no_wrap=True) for k in keys), pad_edge=False)
            table.add_row("(as above)", *(format_number(k["weight"]) for k in keys))
            for option in note["alternatives"]:
                table.add_row(settings_text(option["settings"]), *(format_number(w) for w in option["weights"]))
            console.print(table)
    console.print()


def vector_table(rows: list[tuple[str, str, dict]], console: Console, split_last: bool = False) -> Group:
    """Rows of (role, word, vector summary), split over tables of consecutive coordinates when they do not fit."""
    count = len(rows[0][2]["first"])
    per_table = count
    while per_table > 1 and not fits_width(_vector_chunk(rows, range(per_table), split_last, True), console):
        per_table -= 1
    return Group(*(_vector_chunk(rows, range(start, min(start + per_table, count)), split_last,
                                 start + per_table >= count) for start in range(0, count, per_table)))


def _vector_chunk(rows: list[tuple[str, str, dict]], coordinates: range, split_last: bool, last: bool) -> Table:
    dims = rows[0][2]["dims"]
    elided = last and coordinates.stop < dims
    table = simple(lead(""), Column("", no_wrap=True), *(right(f"[{m + 1}]", no_wrap=True) for m in coordinates),
                   *([Column(f"… {dims}", justify="center", no_wrap=True)] if elided else []),
                   *([right("length", no_wrap=True)] if last else []), pad_edge=False)
    for position, (role, word, vector) in enumerate(rows):
        cells = [format_number(vector["first"][m]) for m in coordinates]
        cells += (["…"] if elided else []) + ([format_number(vector["norm"])] if last else [])
        table.add_row(role, word, *cells, end_section=split_last and position == len(rows) - 2)
    return table
