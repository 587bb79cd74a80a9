"""Nearest-neighbour search against a brute-force sort: the fast top k must be the exact top k."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attn_cli.engine.analysis import NeighborSearch, top_indices
from attn_cli.engine.attention import AttentionConfig, multi_head_attention, unit_rows
from attn_cli.vectors.store import Vectors


def brute_top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Per row, the columns of the k largest values: a full stable sort, largest first, ties in column order."""
    return np.argsort(-values, axis=1, kind="stable")[:, :k]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_top_indices_is_the_exact_top_k(data):
    k = data.draw(st.integers(1, 8))
    b = data.draw(st.integers(1, 6))
    # narrow rows, rows of a whole number of 64-column groups and rows with columns past the last group
    n = data.draw(st.sampled_from([k, k + 3, 64 * k, 64 * k + 37, 5000, 1024 * k, 1024 * k + 37]))
    # small integers make many ties (between groups' maxima too); floats make a realistic spread, and -inf is what
    # the search writes over the words it leaves out. A seed draws the array: hypothesis would draw its elements
    # one at a time
    kind = data.draw(st.sampled_from(["ties", "integers", "floats"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    values = {"ties": lambda: rng.integers(-3, 4, (b, n)), "integers": lambda: rng.integers(-300, 301, (b, n)),
              "floats": lambda: np.where(rng.random((b, n)) < 0.1, -np.inf, rng.uniform(-1, 1, (b, n)))}[kind]()
    values = values.astype(np.float32)
    columns = top_indices(values, k)
    top = np.take_along_axis(values, columns, axis=1)
    expected = brute_top_k(values, k)
    assert columns.shape == top.shape == (b, k)
    np.testing.assert_array_equal(columns, expected)
    np.testing.assert_array_equal(top, np.take_along_axis(values, expected, axis=1))


def test_top_indices_of_wide_rows_keeps_column_order_in_a_tie():
    values = np.random.default_rng(3).standard_normal((24, 50_000)).astype(np.float32)
    values[5, 40_000] = values[5, 10] = 9.0  # a tie at the top: column order decides
    columns = top_indices(values, 6)
    top = np.take_along_axis(values, columns, axis=1)
    np.testing.assert_array_equal(columns, brute_top_k(values, 6))
    assert columns[5, :2].tolist() == [10, 40_000] and top[5, 0] == 9.0


@pytest.mark.parametrize("config", [AttentionConfig(), AttentionConfig(mode="projected", d_k=8, heads=2, seed=3),
                                    AttentionConfig(mode="projected", d_k=8, heads=2, output_projection=True)])
@pytest.mark.parametrize("stored_norms", [False, True])
def test_neighbours_are_the_closest_words_by_cosine(config, stored_norms):
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((3000, 16)).astype(np.float32)
    words = [f"w{i}" for i in range(len(matrix))]
    norms = np.linalg.norm(matrix, axis=1).astype(np.float32) if stored_norms else None
    vectors = Vectors("test", words, matrix, lowercase=True, norms=norms)
    result = multi_head_attention(matrix[[4, 9, 2500]].astype(np.float64), config=config)
    search = NeighborSearch(vectors, result, vocabulary_size=2000)
    found = search.nearest(result.outputs, 5, ["w4", None, None])

    space = matrix[:2000].astype(np.float64)
    if result.projections is not None:
        space = space @ result.projections.w_v
        if result.projections.w_o is not None:
            space = space @ result.projections.w_o
    cosines = (result.outputs / np.linalg.norm(result.outputs, axis=1, keepdims=True)) @ (
        space / np.linalg.norm(space, axis=1, keepdims=True)).T  # [3, 2000]
    for row, skip, neighbours in zip(cosines, ["w4", None, None], found):
        expected = [words[j] for j in np.argsort(-row, kind="stable") if words[j] != skip][:5]
        assert [n.word for n in neighbours] == expected
        np.testing.assert_allclose([n.cosine for n in neighbours], [row[words.index(w)] for w in expected],
                                   atol=1e-5)


def test_single_letters_are_neighbours_only_of_single_letters():
    """Issue 13.5: s, d, t (fragments of it's, I'd, don't) crowded real neighbour lists; now only a one-letter
    token, which asks for them, lists one-letter words."""
    from attn_cli.vectors.store import Vectors

    words = ["bank", "banks", "s", "t", "money", "a"]
    matrix = np.array([[1, 0], [0.9, 0.1], [0.99, 0.01], [0.98, 0.02], [0, 1], [0.97, 0.03]], dtype=np.float32)
    vectors = Vectors(name="letters", words=words, matrix=matrix, lowercase=True)
    result = multi_head_attention(matrix[[0, 5]].astype(np.float64), config=AttentionConfig())
    search = NeighborSearch(vectors, result, None)
    [bank, a] = search.nearest(np.array([[1.0, 0.0], [1.0, 0.0]]), 3, ["bank", "a"])
    assert [n.word for n in bank] == ["banks", "money"]
    assert [n.word for n in a][:2] == ["bank", "s"]


def test_accented_words_find_their_plain_spelling():
    """Issue 13.5: "café" finds "cafe" in a set without accents; an exact accented entry still wins."""
    from attn_cli.vectors.store import Vectors

    plain = Vectors(name="plain", words=["cafe", "naive"], matrix=np.eye(2, dtype=np.float32), lowercase=True)
    assert plain.lookup("Café") == ("cafe", 0) and plain.lookup("naïve") == ("naive", 1)
    accented = Vectors(name="accented", words=["cafe", "café"], matrix=np.eye(2, dtype=np.float32), lowercase=True)
    assert accented.lookup("café") == ("café", 1)


def test_a_repeated_query_is_answered_from_memory_with_the_same_words():
    """A word's own value repeats across a batch: it is searched once, and the remembered answer is what a
    fresh search gives (a different word left out, or another k, is a different question)."""
    rng = np.random.default_rng(11)
    matrix = rng.standard_normal((3000, 16)).astype(np.float32)
    vectors = Vectors("test", [f"w{i}" for i in range(len(matrix))], matrix, lowercase=True)
    result = multi_head_attention(matrix[[4, 9]].astype(np.float64))
    search = NeighborSearch(vectors, result, vocabulary_size=None)
    searched: list[int] = []
    real = search._nearest_block
    search._nearest_block = lambda queries, k, exclude: (searched.append(len(queries)), real(queries, k, exclude))[1]
    queries = matrix[[4, 9, 4, 4, 9]].astype(np.float64)
    first = search.nearest(queries, 5, ["w4", "w9", "w4", None, "w9"])
    assert searched == [3]  # (w4, skip w4), (w9, skip w9), (w4, skip nothing)
    again = search.nearest(queries[:2] * 2.0, 5, ["w4", "w9"])  # the same directions: nothing new to search
    assert searched == [3] and again == first[:2] and first[0] == first[2] and first[0] != first[3]
    fresh = NeighborSearch(vectors, result, vocabulary_size=None).nearest(queries, 5, ["w4", "w9", "w4", None, "w9"])
    assert fresh == first
    assert search.nearest(queries[:1], 3, ["w4"]) == [first[0][:3]] and searched == [3, 1]


def test_answers_forgotten_at_the_limit_are_searched_again(monkeypatch):
    """Past MAX_ANSWERS the memory is cleared before a call counts on it: a query repeated within that call
    is still answered (it once raised KeyError in a long batch)."""
    import attn_cli.engine.analysis as analysis

    monkeypatch.setattr(analysis, "MAX_ANSWERS", 4)
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((500, 8)).astype(np.float32)
    vectors = Vectors("test", [f"w{i}" for i in range(len(matrix))], matrix, lowercase=True)
    search = NeighborSearch(vectors, multi_head_attention(matrix[[1, 2]].astype(np.float64)), vocabulary_size=None)
    fresh = NeighborSearch(vectors, multi_head_attention(matrix[[1, 2]].astype(np.float64)), vocabulary_size=None)
    for rows in ([1, 2, 3], [1, 2, 4], [3, 5, 6, 3]):  # the third call crosses the limit and repeats w3
        queries = matrix[rows].astype(np.float64)
        words = [f"w{row}" for row in rows]
        assert search.nearest(queries, 3, words) == fresh._nearest_block(analysis.unit_rows(queries), 3, words)
    assert len(search.answers) <= 4


@pytest.mark.parametrize("stored_norms", [False, True])
def test_neighbours_are_a_full_float64_sort_even_where_float32_cannot_tell_the_words_apart(stored_norms):
    """Issue 15.2: words whose cosines differ by less than float32's rounding were ranked by float32 alone, so the
    five reported could miss closer ones. Forty words nearly parallel to the queries (cosines 1 - 1e-7, apart by
    ~1e-8, under float32's resolution of ~6e-8 there): the answer must be the first five of a full float64 sort
    of the search's own cosines, ties by column."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal(64)
    matrix = rng.standard_normal((4000, 64))
    matrix[100:140] = base + rng.standard_normal((40, 64)) * 3e-4
    matrix = matrix.astype(np.float32)
    words = [f"w{i}" for i in range(len(matrix))]
    norms = np.linalg.norm(matrix.astype(np.float64), axis=1).astype(np.float32) if stored_norms else None
    queries = base + rng.standard_normal((30, 64)) * 1e-4
    search = NeighborSearch(Vectors("test", words, matrix, lowercase=True, norms=norms),
                            multi_head_attention(queries[:2]), vocabulary_size=None)
    found = search.nearest(queries, 5, [None] * len(queries))

    cosines = np.einsum("qd,nd->qn", unit_rows(queries), search.rows.astype(np.float64))  # every word, in float64
    if search.inverse_norms is not None:
        cosines = cosines * search.inverse_norms
    for row, neighbours in zip(cosines, found):
        expected = np.lexsort((np.arange(len(row)), -row))[:5]
        assert [n.word for n in neighbours] == [words[j] for j in expected]
        assert [n.cosine for n in neighbours] == row[expected].tolist()


def test_a_query_with_many_near_ties_scores_every_tied_word():
    """Sixty copies of one vector tie exactly: every word within float32's rounding of the fifth is scored in
    float64, so the answer is the copies with the lowest columns."""
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((3000, 32)).astype(np.float32)
    copies = rng.permutation(np.arange(200, 3000))[:60]
    matrix[copies] = matrix[7]
    words = [f"w{i}" for i in range(len(matrix))]
    search = NeighborSearch(Vectors("test", words, matrix, lowercase=True), multi_head_attention(
        matrix[[7]].astype(np.float64)), vocabulary_size=None)
    [found] = search.nearest(matrix[[7]].astype(np.float64), 5, [None])
    assert [n.word for n in found] == [words[j] for j in sorted([7, *copies.tolist()])[:5]]


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_the_search_is_a_full_float64_sort_at_any_vocabulary_size(data):
    """Fewer words than 64 k, whole 64-word groups and words past the last group, with many exact ties (rows of
    small integers): the first k of a full float64 sort, ties by column."""
    k = data.draw(st.integers(1, 6))
    n = data.draw(st.sampled_from([k + 1, 40, 64 * 7, 64 * 7 + 5, 3000]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    matrix = rng.integers(-2, 3, (n, 4)).astype(np.float32)
    queries = rng.integers(-2, 3, (5, 4)) + rng.normal(size=(5, 4)) * data.draw(st.sampled_from([0.0, 1e-9]))
    queries[np.all(queries == 0, axis=1)] = 1.0
    words = [f"w{i}" for i in range(n)]
    search = NeighborSearch(Vectors("test", words, matrix, lowercase=True), multi_head_attention(queries[:1]), None)
    found = search.nearest(queries, k, [None] * len(queries))
    cosines = np.einsum("qd,nd->qn", unit_rows(queries), search.rows.astype(np.float64))
    for row, neighbours in zip(cosines, found):
        expected = np.lexsort((np.arange(len(row)), -row))[:k]
        assert [n.word for n in neighbours] == [words[j] for j in expected]
        assert [n.cosine for n in neighbours] == row[expected].tolist()
