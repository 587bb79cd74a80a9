"""`attn-cli compare` end to end: a word across sentences, --cross, inputs, schema, agreement with explain."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attn_cli.engine.attention import softmax
from conftest import contributions

RIVER, MONEY = "river bank flows", "money bank grows"


def compare_json(run, *args: str, input: str | None = None) -> dict:
    result = run("compare", *args, "--json", input=input)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def word(report: dict, key: str) -> dict:
    return next(item for item in report["words"] if item["word"] == key)


def pulled(occurrence: dict) -> list[str]:
    return [pull["token"] for pull in occurrence["pulled_by"]]


@pytest.mark.quick
def test_bank_leans_to_river_in_one_sentence_and_money_in_the_other(run, compare_validator):
    """The issue's Done-when: contextual cosine clearly below 1, river/flows on one side, money on the other."""
    report = compare_json(run, RIVER, MONEY)
    compare_validator.validate(report)
    bank = word(report, "bank")
    assert [w["word"] for w in report["words"]] == ["bank"]  # the only word the sentences share
    assert bank["static_cosine"] == pytest.approx(1.0, abs=1e-12)  # raw mode: the same static vector
    assert bank["contextual_cosine"] < 0.95
    river_side, money_side = bank["occurrences"]
    assert set(pulled(river_side)) == {"river", "flows"}
    assert pulled(money_side)[0] == "money" and "river" not in pulled(money_side)
    assert bank["verdict"].startswith(f"bank: 1.000 -> {bank['contextual_cosine']:.3f}; leans to river, flows (1)")
    assert "vs money" in bank["verdict"] and bank["verdict"].endswith("(2)")


def test_tables_show_the_verdict_and_fit_80_columns(run):
    result = run("compare", RIVER, MONEY)
    assert result.exit_code == 0, result.stderr
    report = compare_json(run, RIVER, MONEY)
    out = result.stdout
    assert word(report, "bank")["verdict"] in out
    for heading in ("Weights in sentence 1", "Weights in sentence 2", "“bank” in each sentence", "Verdict"):
        assert heading in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert result.stderr == ""


def test_contextual_cosine_is_the_cosine_of_the_outputs(run):
    """Recomputed from the documented matrices: y and the static vectors of bank in each sentence."""
    report = compare_json(run, RIVER, MONEY, "--include", "embeddings,outputs")
    bank = word(report, "bank")
    outputs = [np.array(report["sentences"][o["sentence"]]["outputs"][o["index"]]) for o in bank["occurrences"]]
    statics = [np.array(report["sentences"][o["sentence"]]["embeddings"][o["index"]]) for o in bank["occurrences"]]
    cos = outputs[0] @ outputs[1] / np.linalg.norm(outputs[0]) / np.linalg.norm(outputs[1])
    assert bank["contextual_cosine"] == pytest.approx(cos, abs=1e-12)
    assert np.array_equal(statics[0], statics[1])


@pytest.mark.parametrize("options", [[], ["--mode", "projected", "--heads", "4", "--seed", "3"]])
def test_each_sentence_block_is_what_explain_writes(run, options):
    """Same numbers as explain: each block, bank's contextual vector included, equals explain's own document."""
    report = compare_json(run, RIVER, MONEY, "--include", "outputs", *options)
    for block, sentence in zip(report["sentences"], (RIVER, MONEY)):
        alone = run("explain", sentence, "--json", "--include", "outputs", *options)
        explained = json.loads(alone.stdout)
        assert explained["outputs"][1] == block["outputs"][1]  # bank's contextual vector, bit for bit
        assert explained == block


@pytest.mark.parametrize("options", [
    [],
    ["--heads", "4", "--mask", "causal"],
    ["--mode", "projected", "--d-k", "32", "--heads", "2", "--output-projection", "--seed", "7"],
    ["--mode", "projected", "--heads", "8", "--scale", "sqrt"],
    ["--similarity", "cosine", "--temperature", "0.5", "--positions", "sinusoidal"],
    ["--neighbors", "0", "--oov", "zero"],
])
@pytest.mark.parametrize("cross", [False, True])
def test_json_for_every_setting_validates(run, compare_validator, options, cross):
    report = compare_json(run, "the river bank flows, xqzv", "the money bank grows", *options,
                          *(["--cross"] if cross else []))
    compare_validator.validate(report)
    assert report["cross"] is cross
    heads = report["heads"] if cross else [h for block in report["sentences"] for h in block["heads"]]
    for head in heads:
        assert np.allclose(np.array(head["weights"]).sum(axis=1), 1.0, atol=1e-12)


def test_words_shared_by_all_are_compared_in_order_and_word_narrows_them(run):
    both = compare_json(run, "the river bank flows", "the money bank grows")
    assert [w["word"] for w in both["words"]] == ["the", "bank"]
    only = compare_json(run, "the river bank flows", "the money bank grows", "--word", "Bank")
    assert [w["word"] for w in only["words"]] == ["bank"]


def test_three_sentences_give_a_pairwise_matrix_and_the_least_alike_pair(run, compare_validator):
    report = compare_json(run, RIVER, MONEY, "the bank is closed today")
    compare_validator.validate(report)
    bank = word(report, "bank")
    matrix = np.array(bank["contextual_cosines"])
    assert matrix.shape == (3, 3)
    assert np.allclose(matrix, matrix.T) and np.allclose(np.diag(matrix), 1.0)
    off_diagonal = [(matrix[a, b], [a, b]) for a in range(3) for b in range(a + 1, 3)]
    lowest, pair = min(off_diagonal)
    assert bank["contextual_cosine"] == pytest.approx(lowest) and bank["pair"] == pair
    assert f"(least alike: {pair[0] + 1} vs {pair[1] + 1})" in bank["verdict"]
    table = run("compare", RIVER, MONEY, "the bank is closed today").stdout
    assert "Cosines between the contextual outputs of “bank”" in table


def test_a_word_in_only_some_sentences_is_compared_among_those(run):
    report = compare_json(run, RIVER, MONEY, "a river flows")
    assert {w["word"]: [o["sentence"] for o in w["occurrences"]] for w in report["words"]} == {
        "river": [0, 2], "bank": [0, 1], "flows": [0, 2]}


def test_sentences_come_from_a_file_and_from_stdin(run, tmp_path):
    expected = compare_json(run, RIVER, MONEY)["words"]
    path = tmp_path / "sentences.txt"
    path.write_text(f"{RIVER}\n\n{MONEY}\r\n", encoding="utf-8")
    assert compare_json(run, "--file", str(path))["words"] == expected
    assert compare_json(run, "-", input=f"{RIVER}\n{MONEY}\n")["words"] == expected
    mixed = compare_json(run, RIVER, "-", input=f"{MONEY}\n")
    assert [block["sentence"] for block in mixed["sentences"]] == [RIVER, MONEY]


def test_unknown_words_are_skipped_with_a_warning_that_names_the_sentence(run):
    result = run("compare", RIVER, "money bnak grows bank", "--json")
    assert result.exit_code == 0
    assert result.stderr.startswith('attn-cli: warning: skipped "bnak" (did you mean bank')
    assert "in sentence 2" in result.stderr


def test_cross_attention_is_rectangular_with_rows_that_sum_to_one(run, compare_validator):
    report = compare_json(run, RIVER, "money bank grows fast", "--cross", "--include", "embeddings")
    compare_validator.validate(report)
    weights = np.array(report["heads"][0]["weights"])
    assert weights.shape == (4, 3)  # rows: target tokens, columns: source tokens
    assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    # raw mode: Q from the target's vectors, K from the source's
    target, source = np.array(report["embeddings"]), np.array(report["source_embeddings"])
    assert np.allclose(weights, softmax(target @ source.T), atol=1e-12)
    assert [s["token"] for s in report["shifts"]] == ["money", "bank", "grows", "fast"]
    sources = [token["text"] for token in report["source"]["tokens"]]
    assert {c["token"] for s in report["shifts"] for c in contributions(report, s["index"], sources)} == {
        "river", "bank", "flows"}
    assert report["source"]["sentence"] == RIVER and report["target"]["sentence"] == "money bank grows fast"


def test_cross_row_of_a_shared_word_is_its_self_attention_row_in_the_source(run):
    """In raw mode the target's "bank" asks the same question as the source's "bank" of the same keys."""
    cross = compare_json(run, RIVER, MONEY, "--cross")
    source = json.loads(run("explain", RIVER, "--json").stdout)
    assert np.allclose(cross["heads"][0]["weights"][1], source["heads"][0]["weights"][1], atol=1e-15)
    assert cross["shifts"][1]["cosine"] == pytest.approx(source["shifts"][1]["cosine"], abs=1e-12)


def test_cross_projected_uses_explains_seeded_projections(run):
    """Queries come from the target and keys from the source, through the same W_Q and W_K as explain."""
    options = ["--mode", "projected", "--seed", "5", "--include", "qkv"]
    cross = compare_json(run, RIVER, MONEY, "--cross", *options)
    target = json.loads(run("explain", MONEY, "--json", *options).stdout)
    source = json.loads(run("explain", RIVER, "--json", *options).stdout)
    assert cross["queries"] == target["queries"] and cross["keys"] == source["keys"]


def test_cross_tables_label_rows_and_columns_and_fit_80_columns(run):
    result = run("compare", RIVER, "money bank grows fast", "--cross")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "rows are target queries, columns are source keys" in out
    assert "source    river  bank  flows" in out and "target    money  bank  grows  fast" in out
    assert "self w" not in out  # no token of the target is a key
    assert max(len(line) for line in out.splitlines()) <= 80


def test_a_saturated_sentence_is_warned_about_in_the_tables(run, glove_file):
    """Real GloVe vectors without scaling saturate the softmax; compare says so, as explain does."""
    out = " ".join(run("compare", "the people said", "the people say", "--vectors", glove_file).stdout.split())
    assert "Warnings in sentence 1 warning head 1: every row puts >= 0.95" in out
    assert "hint try --scale sqrt (largest weights" in out


def test_table_verdict_and_footer_follow_one_pulled_by_rule(run):
    """The word table lists exactly the verdict's pulling words, the ones each sentence's shift names."""
    report = compare_json(run, RIVER, MONEY)
    bank = word(report, "bank")
    for occurrence in bank["occurrences"]:
        shift = report["sentences"][occurrence["sentence"]]["shifts"][occurrence["index"]]
        assert occurrence["pulled_by"] == shift["pulled_by"]
        assert all(pull["shift_share"] >= 0.05 and pull["index"] != occurrence["index"] for pull in shift["pulled_by"])
    # "grows" supplies 0.02 of y, but 0.38 of the way bank moved: named, after money
    assert pulled(bank["occurrences"][1]) == ["money", "grows"]
    out = run("compare", RIVER, MONEY).stdout
    table = out.split("“bank” in each sentence", 1)[1].split("s = own value", 1)[0]
    assert "money 0.281 (+0.62)" in table and "grows 0.145 (+0.38)" in table
    assert "vs money, grows (2)" in out
    assert "leans to: context words supplying >= 5% of its shift y−s, per sentence" in out


def test_cross_pulled_by_keeps_the_source_word_at_the_query_index(run):
    """In cross-attention key i is a source word, not the query itself: the rule does not leave it out."""
    report = compare_json(run, RIVER, MONEY, "--cross")
    sources = [token["text"] for token in report["source"]["tokens"]]
    for shift in report["shifts"]:  # three source words: the contributions list every key
        by_share = sorted(contributions(report, shift["index"], sources), key=lambda c: -c["shift_share"])
        assert shift["pulled_by"] == [{key: c[key] for key in ("token", "index", "weight", "shift_share")}
                                      for c in by_share if c["shift_share"] >= 0.05][:3]
    assert any(c["index"] == shift["index"] for shift in report["shifts"] for c in shift["pulled_by"])


@pytest.mark.parametrize("cross", [False, True])
def test_unquoted_words_are_told_to_quote_each_sentence(run, cross):
    """`compare river bank flows` meant one sentence: say to quote each, not to pass --cross or --word."""
    result = run("compare", "river", "bank", "flows", *(["--cross"] if cross else []))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("attn-cli: error: ") and result.stderr.count("\n") == 1
    assert "quote each sentence" in result.stderr
    assert "--cross" not in result.stderr and "--word" not in result.stderr


@pytest.mark.parametrize("option", ["--plain", "--fields", "--strict"])
def test_the_batch_options_compare_lacks_are_refused_as_the_docs_say(run, option):
    """docs/compare.md names the explain options compare does not take; each is a usage error (exit 2)."""
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "compare.md").read_text(encoding="utf-8")
    section = page.split("## Options of compare", 1)[1]
    assert f"`{option}`" in section.split("|", 1)[0], f"docs/compare.md should say compare has no {option}"
    result = run("compare", RIVER, MONEY, option, *(["tokens"] if option == "--fields" else []))
    assert result.exit_code == 2 and option in result.stderr


def test_partial_saturation_is_warned_per_sentence_and_the_verdict_says_why(run, large_norm_file,
                                                                          compare_validator):
    """Issue 13: a sentence whose rows saturate only in part still gets its warning, and a word that leans
    to itself because its softmax saturated says so in the verdict."""
    report = compare_json(run, "put my money near the the", "my bank near the river", "--vectors", large_norm_file)
    compare_validator.validate(report)
    first, second = (sentence["diagnostics"]["warnings"] for sentence in report["sentences"])
    assert first[0]["message"].startswith("head 1: 4 of 6 rows put >= 0.95 of their weight on themselves")
    assert second[0]["message"].startswith("head 1: every row puts >= 0.95 of its weight on itself")
    near = word(report, "near")
    assert all(occurrence["self_weight"] >= 0.95 for occurrence in near["occurrences"])
    assert near["verdict"].endswith("leans to itself (saturated) (1) vs itself (saturated) (2)")
    out = " ".join(run("compare", "put my money near the the", "my bank near the river",
                       "--vectors", large_norm_file).stdout.split())
    assert "warning head 1: 4 of 6 rows put >= 0.95" in out and "itself (saturated) (1)" in out


def test_a_word_that_keeps_its_weight_without_saturating_leans_to_plain_itself():
    """Below 0.95 the verdict says 'itself' alone: nothing pulls it, but its softmax did not saturate."""
    from attn_cli.documents.compare import leaning

    assert leaning({"pulled_by": [], "self_weight": 0.9, "visible_keys": 3}, ["bank"]) == "itself"
    assert leaning({"pulled_by": [], "self_weight": 0.97, "visible_keys": 3}, ["bank"]) == "itself (saturated)"
    alone = {"pulled_by": [], "self_weight": 1.0, "visible_keys": 1}
    assert leaning(alone, ["bank"]) == "itself (the only word it sees)"
    assert leaning({"pulled_by": [{"token": "river", "index": 0}], "self_weight": 0.97, "visible_keys": 2},
                   ["river#1"]) == "river#1"


def test_a_word_that_sees_only_itself_is_not_called_saturated(run, compare_validator):
    """Issue 26: the first word under the causal mask sees one key, so its weight of 1 is no saturation: the
    verdict says it had nothing else to look at, and the weights tables mark the hidden cells as masked."""
    report = compare_json(run, "bank grows money", "the river bank", "--mask", "causal")
    compare_validator.validate(report)
    first, second = word(report, "bank")["occurrences"]
    assert (first["visible_keys"], second["visible_keys"]) == (1, 3)
    assert word(report, "bank")["verdict"].endswith("leans to itself (the only word it sees) (1) vs river, the (2)")
    out = run("compare", "bank grows money", "the river bank", "--mask", "causal").stdout
    assert "saturated" not in out
    flat = " ".join(out.split())
    assert "bank 1.000 · · 1.000" in flat and "the 1.000 · · 1.000" in flat
    assert "· masked: the query may not see that key (weight exactly 0)" in flat


def test_a_one_word_sentence_leans_to_itself_without_saturating(run):
    report = compare_json(run, "bank", "the river bank")
    assert word(report, "bank")["verdict"].endswith("leans to itself (the only word it sees) (1) vs river, the (2)")


def test_an_empty_file_adds_no_sentence_to_the_arguments(run, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert run("compare", "river bank flows", "money bank grows", "--file", str(empty)).exit_code == 0
    assert run("compare", "--file", str(empty)).exit_code == 3
