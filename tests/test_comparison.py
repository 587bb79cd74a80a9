"""The comparison maths on small made-up sentences, where the right answer follows from first principles."""

from __future__ import annotations

import numpy as np
import pytest

from attn_cli.engine.analysis import StackShifts
from attn_cli.engine.attention import AttentionConfig, as_stack, multi_head_attention
from attn_cli.engine.comparison import SentenceAttention, compare_word, cosine_matrix, missing_from, shared_words

RNG = np.random.default_rng(11)  # norms near 1, like the default set, so no softmax saturates
WORDS = {word: RNG.normal(scale=0.4, size=8) for word in ("river", "bank", "flows", "money", "grows", "the")}


def attended(words: list[str | None], config: AttentionConfig = AttentionConfig()) -> SentenceAttention:
    embeddings = np.vstack([WORDS[w] if w else np.zeros(8) for w in words])
    result = multi_head_attention(embeddings, config=config)
    return SentenceAttention(list(words), result, StackShifts(as_stack(result)).records(0))


def test_shared_words_are_those_in_two_or_more_sentences_in_order_of_first_appearance():
    sentences = [attended(["the", "river", "bank"]), attended(["money", "bank", "the"]), attended(["grows", None])]
    assert shared_words(sentences) == ["the", "bank"]
    # twice in one sentence is not shared
    assert shared_words([attended(["river", "river"]), attended(["money"])]) == []
    assert missing_from("bank", sentences) == [2]


@pytest.mark.parametrize("config", [AttentionConfig(), AttentionConfig(mode="projected", heads=2, seed=4),
                                    AttentionConfig(mode="projected", output_projection=True, d_k=4)])
def test_static_cosine_is_one_and_contextual_cosine_drops_with_another_context(config):
    comparison = compare_word("bank", [attended(["river", "bank", "flows"], config),
                                       attended(["money", "bank", "grows"], config)])
    assert comparison.static_cosines[0, 1] == pytest.approx(1.0, abs=1e-12)  # the same own value vector
    assert comparison.contextual_cosines[0, 1] < 1 - 1e-6
    assert [(o.sentence, o.index) for o in comparison.occurrences] == [(0, 1), (1, 1)]


def test_the_same_context_in_another_order_changes_nothing_without_positions():
    """Attention is permutation-equivariant: only the set of context words matters."""
    sentences = [attended(["river", "bank", "flows"]), attended(["flows", "river", "bank"])]
    assert compare_word("bank", sentences).contextual_cosines[0, 1] == pytest.approx(1.0, abs=1e-12)
    with_positions = AttentionConfig(positions="sinusoidal")
    moved = compare_word("bank", [attended(["river", "bank", "flows"], with_positions),
                                  attended(["flows", "river", "bank"], with_positions)])
    assert moved.static_cosines[0, 1] < 1 - 1e-6  # bank stands at another position, so its input differs


def test_the_least_alike_pair_has_the_lowest_contextual_cosine():
    comparison = compare_word("bank", [attended(["river", "bank"]), attended(["money", "bank"]),
                                       attended(["river", "bank", "the"])])
    a, b = comparison.least_alike
    off_diagonal = [comparison.contextual_cosines[i, j] for i in range(3) for j in range(i + 1, 3)]
    assert comparison.contextual_cosines[a, b] == min(off_diagonal)


def test_the_first_occurrence_in_a_sentence_is_compared():
    comparison = compare_word("bank", [attended(["bank", "river", "bank"]), attended(["money", "bank"])])
    assert [o.index for o in comparison.occurrences] == [0, 1]


def test_a_word_in_one_sentence_cannot_be_compared():
    with pytest.raises(ValueError):
        compare_word("river", [attended(["river", "bank"]), attended(["money", "bank"])])


def test_the_word_that_moved_the_token_most_is_named_first_though_another_weighs_more():
    """"near" lies close to the token and takes more weight; "far" takes less, but its value lies far from the
    token's, so it supplies most of the shift: pulled_by names it first, with its weight beside its share."""
    token, near, far = [1.0, 0.0], [0.95, 0.3], [0.0, 1.0]
    (shift, *_) = StackShifts(as_stack(multi_head_attention(np.array([token, near, far])))).records(0)
    weights = {c.index: c.weight for c in shift.contributions}
    assert weights[1] > 2 * weights[2]
    assert [c.index for c in shift.pulled_by] == [2, 1]
    assert [round(c.shift_share, 2) for c in shift.pulled_by] == [0.66, 0.34]
    assert [c.weight for c in shift.pulled_by] == [weights[2], weights[1]]


def test_cosine_matrix_is_symmetric_with_a_unit_diagonal_and_zero_for_zero_rows():
    rows = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0], [-2.0, 0.0]])
    cosines = cosine_matrix(rows)
    assert np.allclose(cosines, cosines.T)
    assert cosines[0, 1] == pytest.approx(1 / np.sqrt(2)) and cosines[0, 3] == pytest.approx(-1.0)
    assert np.allclose(np.diag(cosines)[[0, 1, 3]], 1.0) and not cosines[2].any()
