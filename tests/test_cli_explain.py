"""`attn-cli explain` end to end through Typer's runner: tables, JSON, schema, streams."""

from __future__ import annotations

import json
import math
import re

import jsonschema
import numpy as np
import pytest

from attn_cli.engine.attention import softmax
from conftest import contributions


def explain_json(run, *args: str) -> dict:
    result = run("explain", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.quick
def test_tables_show_every_part_of_the_explanation(run):
    result = run("explain", "money bank grows")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    for heading in ("Scores: s = q·k", "Weights: w = softmax", "Shift:", "Nearest words", "Diagnostics"):
        assert heading in out
    assert "tokens    money  bank  grows" in out
    assert out.count("1.000") >= 3  # the Σ column: every weight row sums to 1
    assert "default (minilm-l6-128d)" in out
    assert result.stderr == ""


@pytest.mark.quick
def test_table_numbers_are_the_json_numbers(run):
    report = explain_json(run, "money bank grows")
    table = run("explain", "money bank grows").stdout
    for row in report["heads"][0]["weights"]:
        assert " ".join(f"{w:.3f}" for w in row) in " ".join(table.split())


@pytest.mark.parametrize("sentence", ["money bank grows", "a b c d e f g h", "the cat sat on the mat by the door"])
def test_tables_fit_80_columns(run, sentence):
    out = run("explain", sentence).stdout
    assert max(len(line) for line in out.splitlines()) <= 80


def test_long_sentences_are_abbreviated_and_say_so(run):
    words = "the quick brown fox jumps over the lazy dog near the river bank today"
    out = run("explain", words).stdout
    assert "Largest weights per query" in out and "columns do not fit 80 columns" in out
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.quick
def test_json_is_valid_against_the_schema(run, explain_schema):
    report = explain_json(run, "money bank grows")
    jsonschema.validate(report, explain_schema)
    assert report["command"] == "explain"
    assert [t["text"] for t in report["tokens"]] == ["money", "bank", "grows"]


@pytest.mark.parametrize("options", [
    [],
    ["--heads", "4", "--mask", "causal"],
    ["--mode", "projected", "--d-k", "32", "--heads", "2", "--output-projection", "--seed", "7"],
    ["--similarity", "cosine", "--scale", "sqrt", "--temperature", "0.5", "--positions", "sinusoidal"],
    ["--neighbors", "0", "--oov", "zero"],
])
def test_json_for_every_setting_validates_and_rows_sum_to_one(run, explain_schema, options):
    report = explain_json(run, "money bank grows fast, xqzv", *options)
    jsonschema.validate(report, explain_schema)
    for head in report["heads"]:
        weights = np.array(head["weights"])
        assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-12)
        assert (weights >= 0).all()
    if "causal" in options:
        assert all(np.triu(np.array(h["weights"]), k=1).max() == 0 for h in report["heads"])
        assert report["heads"][0]["logits"][0][1] is None


def test_include_lets_anyone_recompute_every_number(run, explain_schema):
    report = explain_json(run, "money bank grows", "--mode", "projected", "--heads", "2", "--d-k", "64",
                          "--scale", "sqrt", "--include", "embeddings,qkv,outputs")
    jsonschema.validate(report, explain_schema)
    factor = report["settings"]["scale_factor"] / report["settings"]["temperature"]
    per_head = []
    for head, q, k, v in zip(report["heads"], report["queries"], report["keys"], report["values"]):
        weights = softmax(np.array(q) @ np.array(k).T * factor)
        assert np.allclose(weights, head["weights"], atol=1e-12)
        per_head.append(weights @ np.array(v))
    assert np.allclose(np.hstack(per_head), report["outputs"], atol=1e-12)
    assert np.array(report["embeddings"]).shape == (3, report["vectors"]["dims"])


def bank_shift(report: dict) -> dict:
    return next(shift for shift in report["shifts"] if shift["token"] == "bank")


@pytest.mark.parametrize("sentence, context", [("money bank grows", "money"), ("river bank flows", "river")])
def test_bank_leans_toward_its_context(run, sentence, context):
    """The canonical example: the same static "bank" is pulled to money in one sentence, river in the other."""
    report = explain_json(run, sentence)
    shift = bank_shift(report)
    others = [c for c in contributions(report, shift["index"]) if c["token"] != "bank"]
    assert others[0]["token"] == context
    assert shift["cosine"] < 0.99
    after = [n["word"] for n in shift["neighbors_after"]]
    before = [n["word"] for n in shift["neighbors_before"]]
    assert context in after and context not in before


def test_several_heads_print_one_weight_table_each(run):
    out = run("explain", "money bank grows", "--heads", "2").stdout
    assert "Weights, head 1 of 2" in out and "Weights, head 2 of 2" in out


def test_stdin_gives_one_document_per_line(run, explain_schema):
    result = run("explain", "-", "--json", input="money bank grows\n\nriver bank flows\n")
    assert result.exit_code == 0, result.stderr
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert [d["sentence"] for d in documents] == ["money bank grows", "river bank flows"]
    for document in documents:
        jsonschema.validate(document, explain_schema)


def test_saturated_softmax_warns_with_computed_remedies(run, glove_file):
    """Real GloVe vectors (norms ~5) without scaling put ~1.0 of every row on the word itself."""
    report = explain_json(run, "the people said", "--vectors", glove_file)
    warnings = report["diagnostics"]["warnings"]
    assert warnings and warnings[0]["code"] == "saturated" and not warnings[0]["larger_scale"]
    remedies = warnings[0]["remedies"]
    solved = remedies[-1]["settings"]["temperature"]  # solved so that no row saturates and not every row is flat
    assert [r["settings"] for r in remedies] == [{"scale": "sqrt"}, {"similarity": "cosine"}, {"temperature": solved}]
    assert all(0 < low <= high < 0.95 for low, high in (r["largest_weights"] for r in remedies))
    assert all(row["max_weight"] >= 0.95 for row in report["diagnostics"]["heads"][0]["rows"])
    table = " ".join(run("explain", "the people said", "--vectors", glove_file).stdout.split())
    assert "warning head 1: every row puts >= 0.95" in table
    (low, high), (cos_low, cos_high), (hot_low, hot_high) = (r["largest_weights"] for r in remedies)
    assert (f"hint try --scale sqrt (largest weights {low:.2f}-{high:.2f}), --similarity cosine (largest "
            f"weights {cos_low:.2f}-{cos_high:.2f}) or --temperature {solved:g} (largest weights {hot_low:.2f}-"
            f"{hot_high:.2f})"
            ) in table


def test_flat_softmax_warns(run):
    report = explain_json(run, "money bank grows", "--scale", "sqrt")
    assert [w["code"] for w in report["diagnostics"]["warnings"]] == ["flat"]


def test_oov_words_are_skipped_with_a_suggestion(run):
    result = run("explain", "money bnak grows", "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert [t["text"] for t in report["tokens"]] == ["money", "grows"]
    assert report["dropped_tokens"][0]["suggestions"][0] == "bank"
    assert result.stderr.startswith("attn-cli: warning: skipped \"bnak\" (did you mean bank")


def test_oov_zero_keeps_the_word_with_a_zero_vector(run):
    report = explain_json(run, "money xqzv", "--oov", "zero")
    assert report["tokens"][1] == {"text": "xqzv", "key": None, "oov": True, "position": 1}
    assert report["shifts"][1]["static_norm"] == 0.0


def test_punctuation_missing_from_the_vocabulary_is_dropped_quietly(run):
    result = run("explain", "money, bank!", "--json")
    report = json.loads(result.stdout)
    assert [t["text"] for t in report["tokens"]] == ["money", "bank"]
    assert {d["reason"] for d in report["dropped_tokens"]} == {"punctuation"}
    assert result.stderr == ""


def test_vocabulary_case_is_followed(run, glove_file):
    report = explain_json(run, "The People SAID", "--vectors", glove_file)
    assert [t["key"] for t in report["tokens"]] == ["the", "people", "said"]


@pytest.mark.parametrize("fixture", ["glove_file", "word2vec_text_file", "word2vec_binary_file"])
def test_vector_files_of_each_format_load(run, request, fixture, explain_schema):
    path = request.getfixturevalue(fixture)
    report = explain_json(run, "the government said", "--vectors", path)
    jsonschema.validate(report, explain_schema)
    assert report["vectors"]["name"] == path
    expected = {"glove_file": "glove", "word2vec_text_file": "word2vec", "word2vec_binary_file": "word2vec-binary"}
    assert report["vectors"]["format"] == expected[fixture]


def test_vectors_come_from_the_environment(run, glove_file):
    result = run("explain", "the president", "--json", env={"ATTN_CLI_VECTORS": glove_file})
    assert json.loads(result.stdout)["vectors"]["name"] == glove_file


def test_version(run):
    from attn_cli import __version__

    result = run("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"attn-cli {__version__}"


@pytest.mark.parametrize("heads", [2, 4, 8])
def test_diagnostics_stay_readable_with_many_heads(run, heads):
    report = explain_json(run, "money bank grows", "--heads", str(heads))
    out = run("explain", "money bank grows", "--heads", str(heads)).stdout
    diagnostics = out[out.index("Diagnostics per query row"):out.index("entropy in bits")]
    assert "…" not in diagnostics and max(len(line) for line in diagnostics.splitlines()) <= 80
    cells = " ".join(diagnostics.split())
    for head in report["diagnostics"]["heads"]:
        for row in head["rows"]:
            assert f"{row['entropy_bits']:.2f} {row['max_weight']:.3f} {row['argmax_token']}" in cells


def test_advice_at_the_smallest_temperature_is_finite_and_silent(run):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # an overflow would now be an internal error
        report = explain_json(run, "money bank grows", "--temperature", "1e-6")
    weights = [w for warning in report["diagnostics"]["warnings"] for r in warning["remedies"]
               for w in r["largest_weights"]]
    assert report["diagnostics"]["warnings"][0]["code"] == "saturated" and all(math.isfinite(w) for w in weights)


def test_flat_advice_at_scale_zero_suggests_a_scale_not_a_temperature(run):
    report = explain_json(run, "money bank grows", "--scale", "0")
    plain = explain_json(run, "money bank grows")
    warning = report["diagnostics"]["warnings"][0]
    low = min(row["max_weight"] for row in plain["diagnostics"]["heads"][0]["rows"])
    high = max(row["max_weight"] for row in plain["diagnostics"]["heads"][0]["rows"])
    assert warning["code"] == "flat" and not warning["larger_scale"]
    [remedy] = warning["remedies"]
    assert remedy["settings"] == {"scale": "none"} and remedy["largest_weights"] == pytest.approx([low, high])
    table = " ".join(run("explain", "money bank grows", "--scale", "0").stdout.split())
    assert f"hint try --scale none (largest weights {low:.2f}-{high:.2f})" in table


def test_a_zero_vector_has_no_neighbours_and_zero_vectors_alone_are_an_error(run):
    report = explain_json(run, "money bank xyzzyq grows", "--oov", "zero")
    unknown = report["shifts"][2]
    assert unknown["token"] == "xyzzyq" and unknown["neighbors_before"] == []
    assert unknown["neighbors_after"]  # its output mixes in the other words: a direction again
    result = run("explain", "zzqq xxqq", "--oov", "zero", "--json")
    assert result.exit_code == 3 and result.stdout == ""
    assert "no word of the sentence is in the vocabulary" in result.stderr


def test_a_possessive_the_vocabulary_lacks_keeps_its_stem(run, explain_schema):
    """bank's is no word of the default set; bank is, and the 's is left out quietly as a clitic."""
    result = run("explain", "the bank's money", "--json", "--neighbors", "0")
    assert result.exit_code == 0 and result.stderr == ""
    report = json.loads(result.stdout)
    jsonschema.validate(report, explain_schema)
    assert [(t["text"], t["position"]) for t in report["tokens"]] == [("the", 0), ("bank", 1), ("money", 3)]
    assert report["dropped_tokens"] == [{"text": "'s", "position": 2, "reason": "clitic", "suggestions": []}]


def test_a_clitic_the_vocabulary_knows_is_a_token():
    from attn_cli.engine.tokenize import tokenize
    from attn_cli.vectors.store import Vectors

    words = ["i", "do", "n't", "well-known", "know"]
    vectors = Vectors("test", words, np.eye(len(words), dtype=np.float32), lowercase=True)
    tokenized = tokenize("I don't know well-known", vectors)
    assert [(t.text, t.key) for t in tokenized.tokens] == [("I", "i"), ("do", "do"), ("n't", "n't"), ("know", "know"),
                                                           ("well-known", "well-known")]
    assert tokenized.dropped == []


@pytest.mark.parametrize("command", ["explain", "trace", "compare"])
@pytest.mark.parametrize("case", ["saturated", "flat"])
def test_json_advice_and_notes_name_settings_never_flags(run, glove_file, command, case):
    """The documents speak the engine's keywords; only the terminal and HTML views spell them as flags."""
    sentences = ["the people said", "the people say"][:2 if command == "compare" else 1]
    args = ["--vectors", glove_file] if case == "saturated" else ["--scale", "sqrt"]
    if case == "flat":
        sentences = ["money bank grows", "river bank flows"][:len(sentences)]
    result = run(command, *sentences, *args, "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    blocks = document.get("sentences", [document])
    advice = [block["diagnostics"]["warnings"] for block in blocks if "diagnostics" in block]
    advice += [trace["notes"] for trace in document.get("traces", [])]
    text = json.dumps(advice, ensure_ascii=False)
    assert case in text and "settings" in text
    assert not re.search(r"--[a-z]", text)


@pytest.mark.parametrize("command", ["explain", "trace"])
def test_unquoted_words_are_one_sentence(run, command):
    """`explain money bank grows` is `explain "money bank grows"`, options after the words included."""
    loose = run(command, "money", "bank", "grows", "--json")
    quoted = run(command, "money bank grows", "--json")
    assert loose.exit_code == 0, loose.stderr
    assert loose.stdout == quoted.stdout


def test_saturation_is_warned_about_when_only_some_rows_saturate(run, large_norm_file, explain_schema):
    """Issue 13: two copies of "the" split their weight 0.5/0.5, so not every row saturates; the other
    four rows still put ~1.0 on themselves, and the warning counts them, with its remedies."""
    report = explain_json(run, "put my money near the the", "--vectors", large_norm_file)
    jsonschema.validate(report, explain_schema)
    rows = report["diagnostics"]["heads"][0]["rows"]
    assert [round(row["max_weight"], 2) for row in rows[4:]] == [0.5, 0.5]
    (warning,) = report["diagnostics"]["warnings"]
    assert warning["code"] == "saturated" and warning["rows"] == [0, 1, 2, 3] and warning["eligible_rows"] == 6
    assert warning["message"].startswith("head 1: 4 of 6 rows put >= 0.95 of their weight on themselves")
    *named, solved = warning["remedies"]
    assert [r["settings"] for r in named] == [{"scale": "sqrt"}, {"similarity": "cosine"}]
    assert solved["settings"]["temperature"] > 1 and solved["largest_weights"][1] < 0.95
    table = " ".join(run("explain", "put my money near the the", "--vectors", large_norm_file).stdout.split())
    assert "warning head 1: 4 of 6 rows put >= 0.95 of their weight on themselves" in table
    assert "hint try --scale sqrt (largest weights" in table


def test_a_row_without_a_choice_is_no_saturation(run, large_norm_file):
    """A one-word sentence, or the first row under the causal mask, sees one key: its weight 1 is no warning."""
    assert explain_json(run, "money", "--vectors", large_norm_file)["diagnostics"]["warnings"] == []
    report = explain_json(run, "the the", "--vectors", large_norm_file, "--mask", "causal")
    assert report["diagnostics"]["warnings"] == []  # row 2 splits 0.5/0.5, row 1 has no choice


def test_position_codes_are_scaled_to_the_words_by_default(run, explain_schema):
    """Issue 13: raw sinusoidal codes have norm sqrt(d/2) = 8 at d = 128, eight times the embedded words;
    --position-scale auto (the default) makes each code as long as its word, and the header says so."""
    report = explain_json(run, "money bank grows", "--positions", "sinusoidal")
    jsonschema.validate(report, explain_schema)
    settings = report["settings"]
    assert settings["position_scale"] == "auto"
    assert settings["position_norms"]["codes"] == pytest.approx(settings["position_norms"]["words"], rel=1e-12)
    assert not [w for w in report["diagnostics"]["warnings"] if w["code"] == "positions"]
    table = run("explain", "money bank grows", "--positions", "sinusoidal").stdout
    norm = f"{settings['position_norms']['words']:.3f}"
    assert f"position scale auto: codes' mean norm {norm}, words' {norm}" in table
    assert explain_json(run, "money bank grows")["settings"]["position_norms"] is None


def test_position_codes_that_swamp_the_words_are_warned_about(run, explain_schema):
    """--position-scale 1 (the unscaled codes) puts codes of norm 8 on words of norm ~1: a warning with the
    weights --position-scale auto would give."""
    report = explain_json(run, "money bank grows", "--positions", "sinusoidal", "--position-scale", "1")
    jsonschema.validate(report, explain_schema)
    assert report["settings"]["position_norms"]["codes"] == pytest.approx(8.0)
    (warning,) = [w for w in report["diagnostics"]["warnings"] if w["code"] == "positions"]
    assert warning["head"] is None and [r["settings"] for r in warning["remedies"]] == [{"position_scale": "auto"}]
    auto = explain_json(run, "money bank grows", "--positions", "sinusoidal")
    maxima = np.max(auto["heads"][0]["weights"], axis=1)
    assert warning["remedies"][0]["largest_weights"] == pytest.approx([maxima.min(), maxima.max()], abs=1e-12)
    table = " ".join(run("explain", "money bank grows", "--positions", "sinusoidal", "--position-scale", "1")
                     .stdout.split())
    assert "word order swamps the words' meaning" in table and "try --position-scale auto (largest weights" in table


def test_position_scale_needs_positions_and_a_number(run):
    for args, expected in ((["--position-scale", "2"], "--position-scale applies only with position encodings"),
                           (["--positions", "sinusoidal", "--position-scale", "big"], "--position-scale must be")):
        result = run("explain", "money bank grows", *args)
        assert result.exit_code == 2 and expected in " ".join(result.stderr.split()), result.stderr


def test_random_projections_say_they_are_random_and_untrained(run):
    """Issue 13: projected mode's W are random draws, not learnt; the header and the flat warning say so."""
    args = ("money bank grows fast", "--mode", "projected", "--scale", "sqrt", "--seed", "3")
    table = " ".join(run("explain", *args).stdout.split())
    assert "attention random, untrained projections (seed 3)," in table and "projected mode" not in table
    (warning,) = explain_json(run, *args)["diagnostics"]["warnings"]
    assert warning["code"] == "flat"
    assert warning["message"].endswith("the projections are random and untrained: random W_Q and W_K give scores "
                                       "close together (nearly uniform weights), and training, not a setting, is "
                                       "what sharpens them")
    raw = explain_json(run, "money bank grows fast", "--scale", "sqrt")["diagnostics"]["warnings"]
    assert raw and "untrained" not in raw[0]["message"]
    compare = " ".join(run("compare", "money bank grows", "river bank flows", "--mode", "projected").stdout.split())
    assert "random, untrained projections (seed 0)" in compare


def test_the_trace_flat_note_says_training_sharpens_random_projections(run):
    result = run("trace", "money bank grows fast", "--mode", "projected", "--scale", "sqrt", "--word", "bank",
                 "--json")
    notes = json.loads(result.stdout)["traces"][0]["notes"]
    (flat,) = [note for note in notes if note["code"] == "flat"]
    assert "training, not a setting, is what sharpens them" in flat["message"]
    table = " ".join(run("trace", "money bank grows fast", "--mode", "projected", "--word", "bank").stdout.split())
    assert "random, untrained projections (seed 0)" in table


def test_the_json_alone_recomputes_the_projected_layer(run, explain_schema):
    """Issue 13: --include inputs,projections holds everything needed to redo a projected layer in numpy."""
    report = explain_json(run, "money bank grows fast", "--mode", "projected", "--heads", "2", "--d-k", "16",
                          "--output-projection", "--positions", "sinusoidal", "--mask", "causal",
                          "--scale", "sqrt", "--temperature", "0.7", "--include", "inputs,projections")
    jsonschema.validate(report, explain_schema)
    x = np.array(report["input_vectors"])
    w = {name: np.array(matrix) for name, matrix in report["projection_weights"].items()}
    settings = report["settings"]
    q, k, v = x @ w["w_q"], x @ w["w_k"], x @ w["w_v"]
    n, d_head = len(x), settings["d_head"]
    future = np.triu(np.ones((n, n), dtype=bool), k=1)
    heads = []
    for h in range(settings["heads"]):
        cols = slice(h * d_head, (h + 1) * d_head)
        logits = q[:, cols] @ k[:, cols].T * settings["scale_factor"] / settings["temperature"]
        logits[future] = -np.inf
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(weights, report["heads"][h]["weights"], atol=1e-12)
        heads.append(weights @ v[:, cols])
    outputs = np.hstack(heads) @ w["w_o"]
    np.testing.assert_allclose(outputs, explain_json(run, "money bank grows fast", "--mode", "projected", "--heads",
                                                     "2", "--d-k", "16", "--output-projection", "--positions",
                                                     "sinusoidal", "--mask", "causal", "--scale", "sqrt",
                                                     "--temperature", "0.7", "--include", "outputs")["outputs"],
                               atol=1e-12)
    codes = np.zeros((n, x.shape[1]))  # the documented layout: sin/cos interleaved, positions from 0
    angles = np.arange(n)[:, None] / 10000.0 ** (np.arange(0, x.shape[1], 2) / x.shape[1])
    codes[:, 0::2], codes[:, 1::2] = np.sin(angles), np.cos(angles)
    static = np.array(explain_json(run, "money bank grows fast", "--include", "embeddings")["embeddings"])
    scaled = codes * (np.linalg.norm(static, axis=1) / np.linalg.norm(codes, axis=1))[:, None]
    np.testing.assert_allclose(x, static + scaled, atol=1e-12)
    raw = explain_json(run, "money bank", "--include", "projections,inputs")
    assert raw["projection_weights"] is None and len(raw["input_vectors"]) == 2


def test_trace_and_cross_documents_carry_inputs_and_projections(run, trace_schema, compare_validator):
    trace = json.loads(run("trace", "money bank grows", "--mode", "projected", "--word", "bank", "--json",
                           "--include", "inputs,projections").stdout)
    jsonschema.validate(trace, trace_schema)
    assert np.shape(trace["projection_weights"]["w_q"]) == (128, 128) and np.shape(trace["input_vectors"]) == (3, 128)
    cross = json.loads(run("compare", "river bank flows", "money bank grows fast", "--cross", "--json",
                           "--positions", "sinusoidal", "--include", "inputs,projections").stdout)
    compare_validator.validate(cross)
    assert np.shape(cross["input_vectors"]) == (4, 128) and np.shape(cross["source_input_vectors"]) == (3, 128)


def test_symbols_are_not_punctuation_and_dropped_marks_take_one_line_per_reason(run, explain_schema):
    """Issue 13.19: an emoji was dropped as "punctuation", and "Money, Bank... GROWS!!!" printed seven lines."""
    report = explain_json(run, "Money, Bank... GROWS!!! 🙂 £")
    jsonschema.validate(report, explain_schema)
    assert [(d["text"], d["reason"]) for d in report["dropped_tokens"]][-2:] == [("🙂", "symbol"), ("£", "symbol")]
    table = run("explain", "Money, Bank... GROWS!!! 🙂 £", "--neighbors", "0").stdout.splitlines()
    dropped = [line.rstrip() for line in table if line.startswith("dropped")]
    assert dropped == ["dropped   “,” “.” “.” “.” “!” “!” “!”: punctuation", "dropped   “🙂” “£”: symbol"]


def test_masked_cells_show_as_masked_and_never_pull(run):
    """Issue 13.14: with --mask causal the future's scores printed as numbers, its weights as 0.000, and masked
    words were listed as pulling (bank 0.00 (+0.00))."""
    table = run("explain", "money bank grows", "--mask", "causal", "--neighbors", "0").stdout
    scores, weights = table.split("Weights")[0], table.split("Weights")[1].split("Shift")[0]
    assert [line.split()[1:] for line in scores.splitlines() if line.startswith(" money")] == [["1.152", "·", "·"]]
    assert [line.split()[1:] for line in weights.splitlines() if line.startswith(" money")] == [
        ["1.000", "·", "·", "1.000"]]
    assert "· masked: the query may not see that key" in " ".join(table.split())
    shift = [line for line in table.split("Shift")[1].splitlines() if line.strip().startswith("money")][0]
    assert shift.split()[-1] == "—"  # nothing pulls the first word: it sees only itself
    assert "masked" not in run("explain", "money bank grows", "--neighbors", "0").stdout  # no mask, no legend


HEADER_LABELS = {"vectors", "attention", "weights", "tokens", "dropped", "repeated", "sentence", "source", "target"}


@pytest.mark.parametrize("columns", [60, 80])
@pytest.mark.parametrize("command", [("explain", "money bank grows qzx"), ("compare", "money bank grows qzx",
                                                                          "river bank")])
def test_the_header_wraps_under_its_labels(run, columns, command):
    """A header line too long for the terminal goes on under its text (column 11), never back at column 0."""
    result = run(*command, "--mode", "projected", "--heads", "2", "--positions", "sinusoidal", "--scale", "sqrt",
                 env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.stderr
    header = result.stdout.split("\n\n")[0].splitlines()[1:]
    assert max(len(line) for line in header) <= columns
    assert len(header) > 4
    for line in header:
        assert line.split()[0] in HEADER_LABELS or line.startswith(" " * 10), line
    assert sum(line.startswith(" " * 10) for line in header) >= 2


@pytest.mark.parametrize("mask, seen, note", [
    ("none", [3, 3, 3], "entropy in bits: 0 = all weight on one word, 1.58 = uniform over 3"),
    ("causal", [1, 2, 3], "entropy in bits: 0 = all weight on one word, log2 k = uniform over the k words a row may "
                          "see (0.00 for 1 to 1.58 for 3)"),
    ("others", [2, 2, 2], "entropy in bits: 0 = all weight on one word, log2 k = uniform over the k words a row may "
                          "see (1.00 for 2)"),
])
def test_the_entropy_note_counts_the_words_each_row_may_see(run, mask, seen, note):
    """Issue 26: a masked key is no word a row could spread over, so 'uniform' is over the visible keys: the
    first causal row, on its one word, is as uniform as it can be at 0 bits, not far below 1.58."""
    report = explain_json(run, "money bank grows", "--mask", mask)
    assert [row["visible_keys"] for row in report["diagnostics"]["heads"][0]["rows"]] == seen
    assert note in " ".join(run("explain", "money bank grows", "--mask", mask).stdout.split())


def test_heads_that_are_all_flat_get_one_warning_naming_them(run, explain_schema):
    """Issue 26: four random heads are each nearly uniform; the report says so once, naming the heads, with the
    largest weight of them all, and its remedies' weights range over all four heads."""
    args = ("money bank grows", "--mode", "projected", "--heads", "4")
    report = explain_json(run, *args)
    jsonschema.validate(report, explain_schema)
    (warning,) = report["diagnostics"]["warnings"]
    highest = max(row["max_weight"] for head in report["diagnostics"]["heads"] for row in head["rows"])
    assert warning["code"] == "flat" and warning["heads"] == [0, 1, 2, 3] and warning["head"] == 0
    assert warning["message"].startswith(f"heads 1-4: every row is nearly uniform (largest weight {highest:.3f})")
    out = " ".join(run("explain", *args).stdout.split())
    assert out.count("warning heads 1-4: every row") == 1 and out.count("training, not a setting") == 1
    assert out.count("hint ") == 1


def test_a_single_heads_warning_names_its_head(run):
    (warning,) = explain_json(run, "money bank grows", "--scale", "sqrt")["diagnostics"]["warnings"]
    assert warning["heads"] == [warning["head"]] == [0] and warning["message"].startswith("head 1: every row")
