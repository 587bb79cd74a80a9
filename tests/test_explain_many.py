"""attn_cli.explain_many and trace_many: a corpus run through the public API, lazily and in order."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import attn_cli
from attn_cli import LineError

SENTENCES = ["money bank grows", "river bank flows", "the bank of the river flows slowly"]


def test_each_result_equals_explain_of_its_line():
    results = list(attn_cli.explain_many(SENTENCES, heads=2, mode="projected", seed=3))
    assert [result.sentence for result in results] == SENTENCES
    for sentence, result in zip(SENTENCES, results):
        alone = attn_cli.explain(sentence, heads=2, mode="projected", seed=3)
        np.testing.assert_array_equal(result.weights, alone.weights)
        np.testing.assert_array_equal(result.outputs, alone.outputs)
        assert result.to_dict() == alone.to_dict()


def test_a_bad_line_is_an_error_value_with_its_number_and_the_run_goes_on():
    results = list(attn_cli.explain_many(["money bank grows", "", "zzqxv", 42, "river bank flows"]))
    assert [type(result).__name__ for result in results] == [
        "ExplainResult", "LineError", "LineError", "LineError", "ExplainResult"]
    errors = [result for result in results if isinstance(result, LineError)]
    assert [error.line for error in errors] == [2, 3, 4]
    assert "empty" in errors[0].message and "zzqxv" in errors[1].message and "int" in errors[2].message
    assert isinstance(errors[0].error, attn_cli.InputError)
    assert repr(errors[0]).startswith("<LineError line 2: ") and "\n" not in repr(errors[0])


def test_the_iterator_is_lazy_so_an_endless_corpus_can_be_read_in_part():
    endless = itertools.cycle(SENTENCES)
    first = list(itertools.islice(attn_cli.explain_many(endless, neighbors=0), 5))
    assert [result.sentence for result in first] == [*SENTENCES, *SENTENCES[:2]]


def test_bad_settings_are_refused_at_the_call_not_at_the_first_line():
    with pytest.raises(attn_cli.SettingsError, match="heads must be at least 1"):
        attn_cli.explain_many(iter(()), heads=0)
    with pytest.raises(TypeError, match="not one str"):
        next(attn_cli.explain_many("money bank grows"))


def test_a_list_of_words_is_taken_as_its_tokens():
    [words, text] = attn_cli.explain_many([["money", "bank", "grows"], "money bank grows"])
    assert words.tokens == text.tokens == ["money", "bank", "grows"]
    assert words.sentence == "money bank grows"
    np.testing.assert_array_equal(words.weights, text.weights)
    [kept] = attn_cli.explain_many([["river,", "bank"]])  # a pre-split word is not split again: "river," is
    assert kept.tokens == ["bank"] and [item.text for item in kept.dropped] == ["river,"]  # one unknown word


def test_a_line_the_layer_refuses_fails_alone():
    # the "others" mask hides each word from itself: a one-word sentence has nothing to attend
    results = list(attn_cli.explain_many(["money bank grows", "bank", "river bank"], mask="others"))
    assert [isinstance(result, LineError) for result in results] == [False, True, False]
    assert results[1].line == 2


def test_trace_many_names_the_lines_without_the_word():
    results = list(attn_cli.trace_many(["money bank grows", "river flows", "bank"], word="bank"))
    assert [isinstance(result, LineError) for result in results] == [False, True, False]
    assert "bank" in results[1].message
    assert results[0].traced == [1]


def test_compare_and_cross_take_the_results_of_explain_many():
    found = list(attn_cli.explain_many(SENTENCES[:2]))
    assert attn_cli.compare(found).to_dict() == attn_cli.compare(SENTENCES[:2]).to_dict()
    assert attn_cli.cross(*found).to_dict() == attn_cli.cross(*SENTENCES[:2]).to_dict()


def test_unknown_words_are_named_on_the_result():
    [result] = attn_cli.explain_many(["money bnak grows"])
    assert '"bnak"' in result.unknown_words and "bank" in result.unknown_words
    [clean] = attn_cli.explain_many(["money bank grows"])
    assert clean.unknown_words == ""


def test_explain_warns_of_unknown_words_once_in_python_and_explain_many_does_not():
    with pytest.warns(attn_cli.UnknownWordsWarning, match='skipped "bnak"') as caught:
        result = attn_cli.explain("money bnak grows")
    assert len(caught) == 1 and caught[0].filename == __file__  # at the caller's line, not inside the library
    assert [advice.code for advice in result.warnings][-1] == "unknown words"
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(attn_cli.explain_many(["money bnak grows"]))[0].unknown_words


def test_every_result_has_a_one_line_repr():
    from attn_cli.training.demo import demo_corpus

    run = attn_cli.train(demo_corpus(attn_cli.load_vectors(), sentences=60).lines, epochs=1)
    shown = [attn_cli.explain("money bank grows"), attn_cli.trace("money bank grows", word="bank"),
             attn_cli.compare(SENTENCES[:2]), attn_cli.cross(*SENTENCES[:2]), run, run.layer,
             next(attn_cli.explain_many([""]))]
    for item in shown:
        text = repr(item)
        assert "\n" not in text and len(text) <= 120 and text.startswith(f"<{type(item).__name__} "), text
