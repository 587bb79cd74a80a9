"""A stack of sentences gives, bit for bit, what each sentence gives alone.

`explain` computes the sentences of one length as one [B, n, d] stack (`attention_stacks`),
then their shifts (`StackShifts`) and diagnostics (`StackDiagnosis`) from the stacked
arrays. Every step works per row or per matrix, so the numbers must be exactly those of
one call per sentence (`multi_head_attention`, then the same functions on its stack of
one): checked here on hypothesis-generated sentences and settings, repeated words included
(the "others" mask numbers each sentence's words).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attn_cli.engine.analysis import StackDiagnosis, StackShifts
from attn_cli.engine.attention import (STACK_CELLS, AttentionConfig, AttentionResult, as_stack, attention_stacks,
                                       multi_head_attention, same_length, sentence_of)
from attn_cli.errors import InputError
from test_attention_properties import ELEMENTS, configs

ARRAYS = ("query_inputs", "context_inputs", "queries", "keys", "values", "scores", "logits", "weights",
          "head_outputs", "outputs", "visible", "query_codes", "context_codes")


@st.composite
def sentence_sets(draw):
    """(d, sentences): 2 to 7 sentences of 1 to 5 words in d dims, some lengths shared, some words repeated."""
    d = draw(st.integers(2, 6))
    sentences = []
    for _ in range(draw(st.integers(2, 7))):
        words = draw(arrays(np.float64, (draw(st.integers(1, 5)), d), elements=ELEMENTS))
        if len(words) > 2 and draw(st.booleans()):
            words[-1] = words[0]  # a repeated word: the "others" mask hides both from each other
        sentences.append(words)
    return d, sentences


def alone(sentences, config) -> list[AttentionResult | None]:
    """Each sentence through its own call; None where the layer refuses it."""
    found: list[AttentionResult | None] = []
    for words in sentences:
        try:
            found.append(multi_head_attention(words, config=config))
        except InputError:
            found.append(None)
    return found


def same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and a.shape == b.shape
                                         and np.array_equal(a, b, equal_nan=True))


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_a_stack_gives_every_sentence_what_it_gives_alone(data):
    d, sentences = data.draw(sentence_sets())
    config = data.draw(configs(d, mask=data.draw(st.sampled_from(["none", "causal", "others"]))))
    expected = alone(sentences, config)
    if None in expected:  # a sentence the layer refuses: the stacks refuse the first of them, as a loop would
        with pytest.raises(InputError):
            attention_stacks(sentences, config)
        return
    stacks = attention_stacks(sentences, config)
    assert sorted(i for members, _ in stacks for i in members) == list(range(len(sentences)))
    for members, stack in stacks:
        assert {len(sentences[i]) for i in members} == {stack.outputs.shape[1]}  # one length per stack
        shifts, diagnosis = StackShifts(stack), StackDiagnosis.of(stack)
        for b, i in enumerate(members):
            part, single = sentence_of(stack, b), expected[i]
            assert single is not None
            for name in ARRAYS:
                assert same(getattr(part, name), getattr(single, name)), name
            assert shifts.records(b) == StackShifts(as_stack(single)).records(0)
            assert diagnosis.sentence(b) == StackDiagnosis.of(as_stack(single)).sentence(0)


def test_stacks_keep_the_sentences_order_and_group_them_by_length():
    rng = np.random.default_rng(0)
    sentences = [rng.standard_normal((n, 4)) for n in (3, 5, 3, 1, 5, 3)]
    stacks = attention_stacks(sentences, AttentionConfig())
    assert [members for members, _ in stacks] == [[0, 2, 5], [1, 4], [3]]
    assert [stack.outputs.shape for _, stack in stacks] == [(3, 3, 4), (2, 5, 4), (1, 1, 4)]



def test_a_stack_holds_at_most_stack_cells_so_long_sentences_go_one_at_a_time():
    """Issue 15 audit: 64 lines of 1,000 tokens in one stack took 2.4 GB (one at a time: 0.7 GB)."""
    rng = np.random.default_rng(1)
    long = [rng.standard_normal((1000, 8)) for _ in range(3)]
    short = [rng.standard_normal((12, 300)) for _ in range(600)]
    assert same_length(long) == [[0], [1], [2]]
    stacks = same_length(short, heads=4)
    assert [len(members) for members in stacks] == [STACK_CELLS // (4 * 12 * 12 + 12 * 300)] * 2 + [
        600 - 2 * (STACK_CELLS // (4 * 12 * 12 + 12 * 300))]
    assert [i for members in stacks for i in members] == list(range(600))
