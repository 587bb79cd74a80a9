"""Rich tables for `compare` from its document alone; cross-attention is explain's tables, target by source."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.table import Column, Table
from rich.text import Text

from attn_cli.labels import copy_label, token_labels
from attn_cli.render.terminal import (dropped_lines, head_table, header_line, matrix_table, print_warnings,
                                      pull_text, render_attention, repeated_lines, right, section, settings_lines,
                                      simple, tokens_text, weights_formula)


def render_compare(report: dict, console: Console) -> None:
    blocks = report["sentences"]
    labels = [token_labels([token["text"] for token in block["tokens"]]) for block in blocks]
    console.print(compare_header(report))
    for number, (block, names) in enumerate(zip(blocks, labels), 1):
        for head in block["heads"]:
            suffix = f", head {head['index'] + 1} of {len(block['heads'])}" if len(block["heads"]) > 1 else ""
            section(console, f"Weights in sentence {number}{suffix}: {weights_formula(block['settings'])}",
                    *head_table(head, "weights", names, names, console))
        print_warnings(block, console, f" in sentence {number}")
    for word in report["words"]:
        section(console, f"“{word['word']}” in each sentence", word_table(word, blocks, labels),
                "s = own value, y = contextual output; context words: weight w (share of y−s)")
        if len(word["occurrences"]) > 2:
            numbers = [str(occurrence["sentence"] + 1) for occurrence in word["occurrences"]]
            section(console, f"Cosines between the contextual outputs of “{word['word']}” (sentence by sentence)",
                    *matrix_table(word["contextual_cosines"], numbers, console))
    console.print(Text("Verdict", style="bold"))
    for word in report["words"]:
        console.print(Text(word["verdict"], style="bold cyan"), soft_wrap=True)
    least = f"{blocks[0]['settings']['pull_share']:.0%}"
    console.print(Text("word: static cosine -> cosine of its contextual outputs (least alike pair);\n"
                       f"leans to: context words supplying >= {least} of its shift y−s, per sentence", style="dim"))


def compare_header(report: dict) -> Group:
    blocks = report["sentences"]
    lines: list[RenderableType] = [Text(f"Compare words across {len(blocks)} sentences (self-attention over each)",
                                        style="bold"), *settings_lines(blocks[0])]
    for number, block in enumerate(blocks, 1):
        lines.append(header_line(f"sentence {number}", tokens_text(block["tokens"], block["vectors"])))
        lines += dropped_lines(block["dropped_tokens"], f" in sentence {number}")
        lines += repeated_lines(block["tokens"], block["settings"], f" in sentence {number}", block.get("model"))
    return Group(*lines, Text())


def word_table(word: dict, blocks: list[dict], labels: list[list[str]]) -> Table:
    table = simple(right("#", style="bold", no_wrap=True), right("cos(s,y)"), Column("context words: w (share)",
                   no_wrap=True), Column("nearest words after attention", overflow="fold"))  # folds between words
    for occurrence in word["occurrences"]:
        number, index = occurrence["sentence"], occurrence["index"]
        shift, names = blocks[number]["shifts"][index], labels[number]
        table.add_row(" ".join(filter(None, [str(number + 1), copy_label(names, index, occurrence["text"])])),
                      f"{shift['cosine']:.3f}",
                      "\n".join(pull_text(c, names) for c in shift["pulled_by"]) or "—",
                      ", ".join(n["word"] for n in occurrence["neighbors_after"]) or "—")
    return table


def render_cross(report: dict, console: Console) -> None:
    source, target = report["source"], report["target"]
    console.print(Group(
        Text.assemble(("Cross-attention: ", "bold"), (f"“{target['sentence']}”", "bold cyan"),
                      (" attends over ", "bold"), (f"“{source['sentence']}”", "bold cyan")),
        *settings_lines(report),
        header_line("source", tokens_text(source["tokens"], report["vectors"]) + Text("  (keys, values)")),
        *dropped_lines(source["dropped_tokens"], " in the source"),
        header_line("target", tokens_text(target["tokens"], report["vectors"]) + Text("  (queries)")),
        *dropped_lines(target["dropped_tokens"], " in the target"), Text()))
    render_attention(report, console, token_labels([t["text"] for t in target["tokens"]]),
                     token_labels([t["text"] for t in source["tokens"]]),
                     axes="rows are target queries, columns are source keys")
