#!/usr/bin/env python3
"""The sense-probe table of docs/minilm.md: raw, random, the `train` demo layer and all-MiniLM-L6-v2's layers.

Why
---
Which representation of "bank" tells its senses apart? The tool's own probe (`attn_cli.senses(..., labels=)`: each
occurrence takes the label of its nearest other occurrence by cosine, scored as macro-F1) is run on two labelled
corpora: the bundled river/money sentences (data/senses/bank.txt) and the 47 sentences of gensim's
lee_background.cor that hold "bank" ("West Bank" a place, the others finance), split and labelled as
tests/test_senses.py does. For the pretrained layers the tool's outputs are y, the attention's contextual output
(heads, then W_O, before the residual); the same occurrences are also probed after the residual and LayerNorm
(h) and after the feed-forward block (the layer's output), computed with attn_cli.engine.bert.

Usage (after `attn-cli vectors import minilm`; the demo layer trains for a minute or two)::

    python scripts/probe_table.py [--no-demo]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

import attn_cli
from attn_cli.contexts.grouping import probe
from attn_cli.engine.bert import encode

ROOT = Path(__file__).resolve().parent.parent


def corpora() -> dict[str, tuple[list[str], list[str]]]:
    from gensim.test.utils import datapath

    bundled = (ROOT / "data" / "senses" / "bank.txt").read_text(encoding="utf-8").splitlines()
    bundled_labels = (ROOT / "data" / "senses" / "bank.labels.txt").read_text(encoding="utf-8").splitlines()
    text = Path(datapath("lee_background.cor")).read_text(encoding="utf-8")
    lee = [s for document in text.splitlines() for s in re.split(r"(?<=[.!?])\s+", document)
           if re.search(r"\bbank\b", s, re.IGNORECASE)]
    return {"bundled river/money (40)": (bundled, bundled_labels),
            "lee_background sentences (47)": (lee, ["place" if "west bank" in s.lower() else "finance" for s in lee])}


def macro_f1(word: str, lines: list[str], labels: list[str], **settings) -> dict[str, float]:
    probes = attn_cli.senses(word, lines, labels=labels, **settings).labels_report.probe
    return {name: found["macro_f1"] for name, found in probes.items()}


def later_steps(lines: list[str], labels: list[str], layer: int) -> dict[str, float]:
    """The probe on h = LayerNorm(x + y) and on the layer's output, for every whole-word "bank" piece."""
    model = attn_cli.load_model("minilm")
    normed, outputs, truth = [], [], []
    for line, label in zip(lines, labels):
        pieces = model.pieces(line)
        _, steps = encode(model.weights, np.array([piece.id for piece in pieces]), layer)
        for index, piece in enumerate(pieces):
            if piece.text == "bank":
                normed.append(steps[-1].normed[index])
                outputs.append(steps[-1].outputs[index])
                truth.append(label)
    order = list(dict.fromkeys(truth))
    codes = np.array([order.index(label) for label in truth])
    return {"normed": probe(np.array(normed), codes, order)["macro_f1"],
            "layer_output": probe(np.array(outputs), codes, order)["macro_f1"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-demo", action="store_true", help="leave out the train demo layer (it trains first)")
    args = parser.parse_args()
    layers: list[tuple[str, dict]] = [("raw (default vectors)", {}),
                                      ("random projections (seed 0, scale sqrt)", {"mode": "projected",
                                                                                   "scale": "sqrt"})]
    if not args.no_demo:
        layers.append(("train demo layer", {"weights": attn_cli.prepare_demo().run().layer}))
    layers += [(f"minilm layer {n}", {"model": "minilm", "layer": n}) for n in range(1, 7)]
    for corpus, (lines, labels) in corpora().items():
        print(f"\n{corpus}: macro-F1 of the leave-one-out nearest-neighbour probe\n")
        print("| layer | static | bag of words | outputs y | h = LayerNorm(x + y) | layer output |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for name, settings in layers:
            found = macro_f1("bank", lines, labels, **settings)
            later = later_steps(lines, labels, settings["layer"]) if "layer" in settings else {}
            cells = [found["static"], found["bag_of_words"], found["outputs"], later.get("normed"),
                     later.get("layer_output")]
            print(f"| {name} | " + " | ".join("" if cell is None else f"{cell:.3f}" for cell in cells) + " |")


if __name__ == "__main__":
    main()
