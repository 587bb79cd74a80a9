"""A batch writes what one sentence at a time through the Python API gives: the same JSON values, number for number.

The batch path groups lines, remembers word lookups and writes JSON with orjson straight
from the documents' arrays. The reference here is the straightforward path:
`attn_cli.explain(...).to_dict()` for each line; each output line, parsed, must equal it
exactly (every float the same float64). Spacing and the spelling of numbers are not part
of the contract (docs/json.md), so they are not compared. A few hundred generated lines cover repeated and unknown
words, one-word and long lines, punctuation that is JSON structure (`,` `:` `[`),
quotes, non-ASCII words, lines that fail, and the settings that change the shape
of a document.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import attn_cli
from attn_cli.errors import InputError
from attn_cli.render.json_out import encode

SPECIAL = [",", ":", "[", "]", "{", "}", '"', "\\", "café", "naïve", "bank's", "don't", "e-5", "1e-5", "0.00001",
           "null", "zzqx", "bnak", "qqvv", "£", "—", "Ünïcode", "x" * 60]


def generated_lines(count: int, seed: int = 0) -> list[str]:
    """Lines of 1 to 40 words from the default set's frequent words, with SPECIAL ones mixed in; some fail."""
    rng = random.Random(seed)
    common = [word for word in attn_cli.load_vectors().words[:3000] if word.isascii() and word.isprintable()]
    lines = []
    for number in range(count):
        if number % 37 == 5:
            lines.append(" ".join(rng.choice(["zzqx", "qqvv", "wxyzq"]) for _ in range(rng.randint(1, 3))))
            continue
        length = 1 if number % 11 == 0 else rng.randint(2, 40 if number % 7 == 0 else 14)
        words = [rng.choice(SPECIAL) if rng.random() < 0.08 else rng.choice(common[:40] if number % 5 == 0 else common)
                 for _ in range(length)]
        lines.append(" ".join(words))
    return lines


CASES = {  # CLI options -> the same settings as API keywords
    "defaults": ([], {}),
    "no neighbours": (["--neighbors", "0"], {"neighbors": 0}),
    "projected heads": (["--heads", "2", "--mode", "projected", "--neighbors", "0"],
                        {"heads": 2, "mode": "projected", "neighbors": 0}),
    "causal, 3 neighbours": (["--mask", "causal", "--neighbors", "3"], {"mask": "causal", "neighbors": 3}),
    "sinusoidal": (["--positions", "sinusoidal", "--neighbors", "0"], {"positions": "sinusoidal", "neighbors": 0}),
    "qkv, zero oov": (["--include", "qkv", "--oov", "zero", "--neighbors", "0", "--scale", "sqrt"],
                      {"include": ("qkv",), "oov": "zero", "neighbors": 0, "scale": "sqrt"}),
}


def reference(text: str, number: int, id: object, meta: dict, settings: dict) -> dict | None:
    """The line's document as one call of the API gives it, with where it came from; None if the line fails."""
    try:
        document = attn_cli.explain(text, **settings).to_dict()
    except InputError:
        return None
    header = ["schema_version", "command", "attn_cli_version"]
    return {**{key: document[key] for key in header}, "line": number, "id": id, **({"meta": meta} if meta else {}),
            **{key: value for key, value in document.items() if key not in header}}


def check_lines(output: str, lines: list[str], settings: dict, ids: list[object] | None = None,
                metas: list[dict] | None = None, keep=lambda document: document) -> int:
    """Every output line equals the reference encoding of its input line; returns how many lines failed."""
    written = output.splitlines()
    assert len(written) == len(lines)
    failed = 0
    for number, (text, line) in enumerate(zip(lines, written), 1):
        id = None if ids is None else ids[number - 1]
        expected = reference(text, number, id, {} if metas is None else metas[number - 1], settings)
        if expected is None:
            failed += 1
            error = json.loads(line)
            assert (error["line"], error["id"], error["error"]["code"]) == (number, id, 3)
            continue
        assert json.loads(line) == json.loads(json.dumps(keep(expected), allow_nan=False)), f"line {number}: {text!r}"
    return failed


@pytest.mark.parametrize("case", CASES)
def test_a_batch_writes_what_each_sentence_alone_writes(run, case):
    options, settings = CASES[case]
    lines = generated_lines(240 if case == "no neighbours" else 80, seed=len(case))
    result = run("explain", "-", "--json", *options, input="\n".join(lines) + "\n")
    assert result.exit_code == (3 if check_lines(result.stdout, lines, settings) else 0)


def test_fields_and_jsonl_ids_and_meta(run):
    lines = generated_lines(120, seed=7)
    ids = [number if number % 3 else f"q{number}" for number in range(len(lines))]
    metas = [{"lesson": number % 4, "note": "a, b: [c]"} if number % 2 else {} for number in range(len(lines))]
    records = "".join(json.dumps({"id": id, "text": text, **meta}) + "\n" for id, text, meta in zip(ids, lines, metas))
    result = run("explain", "-", "--input-format", "jsonl", "--json", "--neighbors", "0", "--fields",
                 "tokens.text,shifts.cosine,shares.output,diagnostics.heads.rows", input=records)

    def keep(document: dict) -> dict:
        return {key: value for key, value in {
            **document,
            "tokens": [{"text": token["text"]} for token in document["tokens"]],
            "shifts": [{"cosine": shift["cosine"]} for shift in document["shifts"]],
            "shares": {"output": document["shares"]["output"]},
            "diagnostics": {"heads": [{"rows": head["rows"]} for head in document["diagnostics"]["heads"]]},
        }.items() if key in ("schema_version", "command", "line", "id", "tokens", "shifts", "shares", "diagnostics")}

    assert check_lines(result.stdout, lines, {"neighbors": 0}, ids, metas, keep) > 0
    assert result.exit_code == 3


def test_plain_output_is_the_same_records(run):
    from attn_cli.render.plain import header, plain_records

    lines = [line for line in generated_lines(60, seed=3) if line.split()[0] not in ("zzqx", "qqvv", "wxyzq")]
    result = run("explain", "-", "--plain", "--neighbors", "2", input="\n".join(lines) + "\n")
    expected = [header()]
    for number, text in enumerate(lines, 1):
        document = reference(text, number, None, {}, {"neighbors": 2})
        if document is not None:
            expected.append(plain_records(document))
    assert result.stdout == "".join(expected)


FLOATS = [1e-05, 3.2e-07, -1e-7, 2.5e-05, 9.99e-05, 1e-4, 1e16, 1e22, 5e-324, -0.0, 0.1, 123456789.125, 1e-300]


def test_every_number_reads_back_as_the_same_float64():
    rng = np.random.default_rng(0)
    values = np.concatenate([FLOATS, rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000),
                             rng.integers(0, 2 ** 64, 5000, dtype=np.uint64).view(np.float64)])
    values = values[np.isfinite(values)]
    masked = values.reshape(-1)[:300].copy()
    masked[::7] = -np.inf
    document = {"array": values, "masked": masked.reshape(30, 10), "floats": values[:500].tolist(),
                "single": values[:300].astype(np.float32), "strided": values[:600:2],
                "nested": [{"x": value, "y": [value, None]} for value in values[:50].tolist()],
                "strings": ["a, b", "c: d", "[e]", "naïve", 'q"uote', "e-5]", "0.00001", "line\u2028break\u0085"]}
    written = encode(document)
    read = json.loads(written)
    assert read["array"] == values.tolist() and read["floats"] == values[:500].tolist()
    rows = masked.reshape(30, 10).tolist()
    assert read["masked"] == [[None if cell == -np.inf else cell for cell in row] for row in rows]
    assert read["single"] == values[:300].astype(np.float32).astype(np.float64).tolist()  # float32's own values
    assert read["strided"] == values[:600:2].tolist() and read["nested"] == document["nested"]
    assert read["strings"] == document["strings"] and len(written.decode().splitlines()) == 1


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_nan_or_infinite_float_is_still_refused(bad):
    from attn_cli.render.json_out import write_json

    with pytest.raises(ValueError):
        write_json({"shifts": [{"cosine": 0.5}, {"cosine": bad}]})
    with pytest.raises(ValueError, match="NaN"):
        write_json({"heads": [{"weights": np.array([[0.5, np.nan]])}]})
