"""Spelling suggestions for unknown words (issue 25 item 10): cheap on a large vocabulary, bounded per word and
per run, and still right for the usual one-edit typos."""

from __future__ import annotations

import random
import string

import numpy as np
import pytest

from attn_cli.engine import spelling
from attn_cli.engine.spelling import SpellingIndex
from attn_cli.engine.tokenize import Lexicon, tokenize
from attn_cli.vectors.store import Vectors


def synthetic_words(count: int, seed: int = 0) -> list[str]:
    """`count` distinct lower-case words of 3 to 12 letters, most frequent first, plus the few the tests misspell."""
    rng = random.Random(seed)
    words = dict.fromkeys(["bank", "money", "river", "receive", "accommodate", "definitely", "grows"])
    while len(words) < count:
        words["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 12)))] = None
    return list(words)


def vectors_of(words: list[str]) -> Vectors:
    return Vectors(name="synthetic", words=words, matrix=np.ones((len(words), 1), dtype=np.float32), lowercase=True)


@pytest.fixture(scope="module")
def big() -> Vectors:
    return vectors_of(synthetic_words(400_000))


# one edit of each kind, at the start, inside and at the end of the word; two side by side
@pytest.mark.parametrize("typo, meant", [
    ("bnak", "bank"), ("abnk", "bank"), ("banl", "bank"), ("bak", "bank"), ("abank", "bank"), ("bankk", "bank"),
    ("mony", "money"), ("rivre", "river"), ("recieve", "receive"), ("accomodate", "accommodate"),
    ("definately", "definitely"), ("Grows", "grows"), ("moneyyy", "money"), ("recve", "receive")])
def test_a_one_edit_typo_finds_its_word_on_a_400k_vocabulary(big, typo, meant):
    assert Lexicon(big).unknown(typo, 0).suggestions[0] == meant


def test_the_candidates_examined_for_a_word_are_bounded():
    """A vocabulary whose every word has the same length and the same first and last letters: a word's search
    still examines at most MAX_EXAMINED of them (the most frequent), and finds a frequent one-edit match."""
    rng = random.Random(1)
    words = list(dict.fromkeys("s" + "".join(rng.choices(string.ascii_lowercase, k=5)) + "s" for _ in range(60_000)))
    index = SpellingIndex(words)
    examined = index.candidates("s" + words[10][1:-1] + "xs")  # one letter inserted: a length of its own
    assert 0 < len(examined) <= spelling.MAX_EXAMINED and len(set(examined.tolist())) < len(index.words) / 10
    assert words[10] in index.suggest(words[10][:3] + words[10][4:])  # a deletion of a frequent word


def test_no_suggestion_is_far_from_the_word(big):
    """Every suggestion is within two edits; a word like nothing in the vocabulary has none."""
    index = SpellingIndex(big.words)
    assert index.suggest("qqqqqqqqqqqqqqqqqqqqqq") == ()
    assert all(spelling.edit_distance("bnak", found) <= 2 for found in index.suggest("bnak"))


def test_past_the_runs_bound_unknown_words_are_left_without_a_search(monkeypatch):
    """The first MAX_SEARCHED distinct unknown words of a run get a search; later ones none, and say so."""
    monkeypatch.setattr(spelling, "MAX_SEARCHED", 2)
    vectors = vectors_of(["money", "bank", "grows"])
    dropped = [tokenize(f"money {word} grows", vectors).dropped[0] for word in ("bnak", "grwos", "mony", "bnak")]
    assert [item.suggestions for item in dropped] == [("bank",), ("grows",), (), ("bank",)]
    assert [item.searched for item in dropped] == [True, True, False, True]


def test_a_batch_notes_the_unknown_words_it_did_not_search(run, monkeypatch, tmp_path):
    monkeypatch.setattr(spelling, "MAX_SEARCHED", 1)
    """A set of its own, so no earlier test's searches count: the first line's word is searched, the second's not."""
    (tmp_path / "vectors.txt").write_text("money 0.1 0.2\nbank 0.2 0.1\ngrows 0.3 0.1\n")
    result = run("explain", "-", "--json", "--neighbors", "0", "--vectors", str(tmp_path / "vectors.txt"),
                 input="money bnak grows\nmoney grwos bank\n")
    assert result.exit_code == 0, result.stderr
    [line] = result.stderr.splitlines()
    assert line.endswith("; 1 of them were not searched for spelling suggestions, past the bound on a run's searches "
                         "(docs/limits.md)")
