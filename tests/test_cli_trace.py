"""`attn-cli trace` end to end: the worked example on screen, its JSON, and every number printed."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest

from attn_cli.render.flags import settings_text
from attn_cli.render.terminal import format_number

BANK = ("trace", "money bank grows", "--word", "bank")
# a number as printed: not glued to a word (q₁, y1, l6-128d), thousands separators removed first
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[+-]\d+)?")


def trace_json(run, *args: str) -> dict:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def numbers_in(text: str) -> list[str]:
    return NUMBER.findall(re.sub(r"(\d),(\d{3})", r"\1\2", text))


def printable(document) -> set[str]:
    """Every way the renderer may print a number of the document, and the numbers inside its strings."""
    found: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, bool) or node is None:
            return
        if isinstance(node, int):
            found.add(str(node))
        elif isinstance(node, float):
            found.update({format_number(node), f"{node:.4g}", f"{node:.1e}"})
        elif isinstance(node, str):
            found.update(numbers_in(node))
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(document)
    return found


@pytest.mark.parametrize("options", [
    [],
    ["--mask", "causal", "--shuffle-check"],
    ["--scale", "sqrt", "--dims", "6"],
    ["--mode", "projected", "--heads", "2", "--d-k", "32", "--output-projection", "--similarity", "cosine"],
    ["--positions", "sinusoidal", "--temperature", "0.5"],
])
def test_every_printed_number_is_a_number_of_the_document(run, trace_schema, options):
    """The document's numbers are the engine's (tests/test_tracing.py); here: the screen shows only those."""
    args = ("trace", "money bank grows", *options)
    report = trace_json(run, *args)
    jsonschema.validate(report, trace_schema)
    labels = r"Step \d+ ·|\[\d+\]|dims \d+-\d+ of q"  # step numbers, column headers [m], a head's columns
    text = re.sub(labels, "", run(*args).stdout)
    allowed = printable(report)
    strays = [number for number in numbers_in(text) if number not in allowed]
    assert strays == []


@pytest.mark.quick
def test_the_worked_example_shows_each_step_in_order_with_the_documents_numbers(run):
    report = trace_json(run, *BANK)
    text = run(*BANK).stdout
    flat = " ".join(text.split())
    steps = [text.index(f"Step {n} ·") for n in range(1, 8)]
    assert steps == sorted(steps)
    assert "the same vector x plays all three roles" in text
    (trace,) = report["traces"]
    head = trace["heads"][0]
    query = head["query"]["first"]
    for key in head["keys"]:
        products = " + ".join(f"{format_number(q)}×{format_number(k)}" for q, k in zip(query, key["key"]["first"]))
        assert f"{key['token']} {products} + … {format_number(key['score'])}" in flat
        row = [key["token"], format_number(key["score"]), format_number(key["logit"]), format_number(key["exp"]),
               format_number(key["weight"])]
        assert " ".join(row) in flat
        term = " ".join(format_number(v) for v in key["term"]["first"])
        assert f"{key['token']} {format_number(key['weight'])}·v {term} … {format_number(key['term']['norm'])}" in flat
    assert f"Σ {format_number(head['exp_sum'])} 1.000" in flat
    output = " ".join(format_number(v) for v in trace["output"]["first"])
    assert f"y = Σ {output} … {format_number(trace['output']['norm'])}" in flat
    assert f"Y bank {output} …" in flat
    assert f"by at most {trace['matrix_form_max_abs_diff']:.1e}" in flat
    assert trace["matrix_form_max_abs_diff"] < 1e-12
    shift = trace["shift"]
    assert f"cos(x, y) {format_number(shift['cosine'])}" in flat
    assert f"|y − x| {format_number(shift['delta_norm'])}" in flat
    before = {n["word"] for n in shift["neighbors_before"]}
    assert "near after " + ", ".join(("" if n["word"] in before else "+") + n["word"]
                                     for n in shift["neighbors_after"]) in flat
    assert "money (w 0.281, share 0.617 of y − x), grows (w 0.145, share 0.383 of y − x)" in flat  # share of the shift


@pytest.mark.parametrize("options", [[], ["--dims", "12"], ["--mode", "projected", "--heads", "4", "--similarity",
                                                             "cosine", "--output-projection", "--dims", "7"]])
def test_bank_fits_80_columns(run, options):
    result = run(*BANK, *options)
    assert result.exit_code == 0 and result.stderr == ""
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


def test_every_word_in_turn_by_default_and_dims_shows_more(run):
    report = trace_json(run, "trace", "money bank grows", "--dims", "6")
    assert [t["token"] for t in report["traces"]] == ["money", "bank", "grows"]
    assert len(report["static_vectors"][0]["first"]) == 6
    text = run("trace", "money bank grows", "--dims", "6").stdout
    assert text.count("as the query") == 3 and "[6]   … 128" in text and "[7]" not in text


def test_missing_word_names_the_sentences_words(run):
    result = run(*BANK[:3], "river")
    assert result.exit_code == 3 and result.stdout == ""
    assert result.stderr == ("attn-cli: error: --word 'river' is not among the sentence's words; choose one of: "
                             "money, bank, grows\n")


def test_saturated_note_shows_recomputed_weights(run, glove_file):
    args = ("trace", "the people said", "--word", "people", "--vectors", glove_file)
    report = trace_json(run, *args)
    note = next(n for n in report["traces"][0]["notes"] if n["code"] == "saturated")
    flat = " ".join(run(*args).stdout.split())
    assert "the softmax saturates: “people” takes 1.000 of the weight" in flat
    for option in note["alternatives"]:
        assert f"{settings_text(option['settings'])} " + " ".join(format_number(w) for w in option["weights"]) in flat
    assert "--scale sqrt 0." in flat and "--similarity cosine 0." in flat and "--temperature 10 0." in flat


def test_flat_note(run):
    report = trace_json(run, *BANK, "--scale", "sqrt")
    note = next(n for n in report["traces"][0]["notes"] if n["code"] == "flat")
    flat = " ".join(run(*BANK, "--scale", "sqrt").stdout.split())
    assert (f"the softmax is nearly flat: the largest weight is {format_number(note['max_weight'])} "
            "against 1/3 = 0.333") in flat
    assert f"within {note['logit_spread']:.3g} of each other" in flat
    unscaled = trace_json(run, *BANK)["traces"][0]["heads"][0]["keys"]
    assert note["alternatives"][1]["weights"] == pytest.approx([k["weight"] for k in unscaled], abs=1e-12)
    solved = note["alternatives"][0]["settings"]["temperature"]
    assert [option["settings"] for option in note["alternatives"]] == [{"temperature": solved}, {"scale": "none"}]
    for option in note["alternatives"]:
        assert f"{settings_text(option['settings'])} " + " ".join(format_number(w) for w in option["weights"]) in flat
    assert f"--temperature {solved:g} 0." in flat and "--scale none 0." in flat


def test_causal_rows_show_masked_future_words(run):
    text = " ".join(run("trace", "money bank grows", "--word", "money", "--mask", "causal").stdout.split())
    assert "bank 0.593 masked 0.000 0.000" in text and "grows -0.004 masked 0.000 0.000" in text
    assert "“bank”, “grows” get score −∞ and weight 0 in every head" in text
    assert "word order is invisible" not in text


def test_projected_heads_show_weights_joining_and_w_o(run):
    text = run("trace", "money bank", "--word", "bank", "--mode", "projected", "--heads", "2", "--d-k", "16",
               "--output-projection", "--seed", "5").stdout
    assert max(len(line) for line in text.splitlines()) <= 80
    text = " ".join(text.split())
    for part in ("numpy.random.default_rng(5)", "each W of shape 128 × 16", "Head 1 of 2: dims 1-8",
                 "Head 2 of 2: dims 9-16", "Heads joined: y = [y1 | y2]", "Output projection: y W_O, [16] × [16 × 128]",
                 "after W_O it is not"):
        assert part in text


def test_shuffle_check_reports_a_tiny_difference(run):
    flat = " ".join(run(*BANK, "--shuffle-check").stdout.split())
    assert re.search(r"in the order “bank grows money” the outputs, put back in the original order, differ by at "
                     r"most \d\.\d+e-1[5-9]", flat) or "differ by at most 0" in flat


def test_masked_words_are_not_terms_of_the_sum_nor_words_that_barely_count(run):
    """Issue 26: a masked key gets weight exactly 0 because the query may not see it, not because it scored low:
    step 5 leaves it out of the weighted sum and says so, and the saturation note speaks of the words the row sees."""
    args = ("trace", "river bank money", "--word", "bank", "--mask", "causal", "--temperature", "0.01")
    flat = " ".join(run(*args).stdout.split())
    step5 = flat.split("Step 5", 1)[1].split("Step 6", 1)[0]
    assert "money 0.000·v" not in step5 and "river 0.000·v" in step5
    assert "y is their sum; masked (“money”): not in the sum" in step5
    assert "the other words it sees barely count" in flat
    unmasked = " ".join(run("trace", "river bank money", "--word", "bank", "--temperature", "0.01").stdout.split())
    assert "not in the sum" not in unmasked and "the other words barely count" in unmasked


def test_random_heads_say_once_that_training_sharpens_them(run):
    """Issue 26: each flat head of a traced row keeps its note and its table, but the sentence about random,
    untrained projections is said once, not once per head."""
    args = ("trace", "money bank grows", "--word", "bank", "--mode", "projected", "--heads", "2")
    notes = json.loads(run(*args, "--json").stdout)["traces"][0]["notes"]
    assert [note["head"] for note in notes if note["code"] == "flat"] == [0, 1]
    flat = " ".join(run(*args).stdout.split())
    assert flat.count("the projections are random and untrained") == 1
