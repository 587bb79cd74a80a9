"""The same word in several sentences: the cosines of its static and contextual vectors, and what pulled it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from attn_cli.engine.analysis import Contribution, Neighbor, Shift
from attn_cli.engine.attention import AttentionResult, static_outputs, unit_rows
from attn_cli.engine.tokenize import TokenizedSentence
from attn_cli.errors import InputError, Option, shorten
from attn_cli.vectors.store import Vectors


@dataclass(frozen=True)
class SentenceAttention:
    """One sentence after self-attention: its tokens' vocabulary keys (None if OOV), result and shifts."""

    keys: list[str | None]
    result: AttentionResult
    shifts: list[Shift]


@dataclass(frozen=True)
class Occurrence:
    """Where the word stands in one sentence and what pulled it there."""

    sentence: int  # index among the sentences
    index: int  # token index in that sentence (its first occurrence)
    pulled_by: list[Contribution]  # its shift's pulled_by
    neighbors_after: list[Neighbor]  # nearest vocabulary words of its contextual output
    visible_keys: int  # the keys its query may see under the mask: 1 leaves it no choice but itself


@dataclass(frozen=True)
class WordComparison:
    """One word across the m sentences that hold it."""

    word: str  # the vocabulary key
    occurrences: list[Occurrence]  # one per sentence holding the word, in sentence order
    static_cosines: np.ndarray  # [m, m] cosines between its own value vectors s
    contextual_cosines: np.ndarray  # [m, m] cosines between its outputs y

    @property
    def least_alike(self) -> tuple[int, int]:
        """The pair (a, b), a < b, of occurrences whose outputs have the lowest cosine: the headline."""
        return min(combinations(range(len(self.occurrences)), 2), key=lambda pair: self.contextual_cosines[pair])


def shared_words(sentences: list[SentenceAttention]) -> list[str]:
    """Vocabulary keys present in at least two sentences, in order of first appearance."""
    holders = Counter(key for sentence in sentences for key in dict.fromkeys(sentence.keys) if key is not None)
    return [key for key, count in holders.items() if count > 1]


def missing_from(word: str, sentences: list[SentenceAttention]) -> list[int]:
    """The indices of the sentences that do not hold `word` (a vocabulary key)."""
    return [number for number, sentence in enumerate(sentences) if word not in sentence.keys]


def compare_word(word: str, sentences: list[SentenceAttention]) -> WordComparison:
    """Static and contextual cosines of `word`'s first occurrence in each sentence that holds it (>= 2)."""
    occurrences, static, contextual = [], [], []
    for number, sentence in enumerate(sentences):
        if word not in sentence.keys:
            continue
        index = sentence.keys.index(word)
        shift = sentence.shifts[index]
        occurrences.append(Occurrence(number, index, shift.pulled_by, shift.neighbors_after,
                                      int(np.count_nonzero(sentence.result.visible[index]))))
        static.append(static_outputs(sentence.result)[index])
        contextual.append(sentence.result.outputs[index])
    if len(occurrences) < 2:
        raise ValueError(f"{word!r} is in fewer than two sentences")
    return WordComparison(word, occurrences, cosine_matrix(np.vstack(static)), cosine_matrix(np.vstack(contextual)))


def cosine_matrix(rows: np.ndarray) -> np.ndarray:
    """Pairwise cosines of the rows: [m, d] -> [m, m] (0 where a row is zero)."""
    unit = unit_rows(rows)  # [m, d]
    return np.clip(unit @ unit.T, -1.0, 1.0)  # [m, d] x [d, m] -> [m, m]


def compared_words(sentences: list[str], tokenized: list[TokenizedSentence], vectors: Vectors,
                   results: list[AttentionResult], shifts: list[list[Shift]],
                   words: tuple[str, ...] = ()) -> list[WordComparison]:
    """Each shared word (or each of `words`) compared across the sentences' self-attention."""
    attended = [SentenceAttention([token.key for token in tokens.tokens], result, shift)
                for tokens, result, shift in zip(tokenized, results, shifts)]
    keys = requested_words(words, sentences, attended, vectors) if words else shared_words(attended)
    if not keys:
        raise InputError("the sentences share no word, so there is nothing to compare; pass ", Option("word", "W"),
                         " with a word every sentence holds, or ",
                         Option("cross", True, python_text="attn_cli.cross(source, target)"),
                         " for cross-attention between two sentences")
    return [compare_word(key, attended) for key in keys]


def requested_words(words: tuple[str, ...], sentences: list[str], attended: list[SentenceAttention],
                    vectors: Vectors) -> list[str]:
    """The vocabulary keys of the words asked for, each of which every sentence must hold."""
    keys = []
    for word in words:
        found = vectors.lookup(word)
        if found is None:
            raise InputError(Option("word"), f' "{shorten(word)}" is not in the vocabulary of {vectors.name}; '
                             "pick a word of the sentences")
        key = found[0]
        missing = missing_from(key, attended)
        if missing:
            raise InputError(Option("word"), f' "{shorten(word)}" is not in sentence {missing[0] + 1} '
                             f'("{shorten(sentences[missing[0]], 60)}"); '
                             "pick a word every sentence holds")
        if key not in keys:
            keys.append(key)
    return keys
