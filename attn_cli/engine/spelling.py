"""Spelling suggestions at a bounded cost: a typo rarely changes both ends of a word, so the frequent words are
grouped by (length, first letter) and (length, last letter) and only a few close ones get an edit distance."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

POOL = 50_000  # suggestions come from the most frequent words only
MAX_LENGTH = 24  # longer words neither get nor give suggestions (a typo of them is rare, their arrays wide)
MAX_PER_GROUP = 1_000  # words read of one (length, first or last letter) group
MAX_EXAMINED = 10 * MAX_PER_GROUP  # five lengths, two letters: what one word's search reads at most
MAX_SEARCHED = 10_000  # distinct unknown words a vector set searches for in a process; later ones get none
MAX_DISTANCE = 2  # edits between a word and a suggestion

_CHAR_BITS = 21  # every code point is below 2**21, so (length << 21) | code point orders groups


class SpellingIndex:
    """The pool's words as code points [N, MAX_LENGTH] both ways, ordered by (length, first or last letter)."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = [word for word in words[:POOL] if 0 < len(word) <= MAX_LENGTH]  # most frequent first
        lengths = np.fromiter(map(len, self.words), dtype=np.int64, count=len(self.words))
        self.forwards = code_points(self.words)
        self.backwards = code_points([word[::-1] for word in self.words])
        self.groups = [group_order(lengths, self.forwards[:, 0]), group_order(lengths, self.backwards[:, 0])]
        self.lengths = lengths

    def suggest(self, key: str, limit: int = 3) -> tuple[str, ...]:
        """Up to `limit` words within MAX_DISTANCE edits of `key`, closest first, then most frequent."""
        rows = self.close_rows(key)
        ranked = sorted((edit_distance(key, self.words[row]), row) for row in set(rows.tolist()))
        return tuple(self.words[row] for distance, row in ranked if distance <= MAX_DISTANCE)[:limit]

    def candidates(self, key: str) -> np.ndarray:
        """Rows of a length within two sharing the first or the last letter with `key`: MAX_EXAMINED at most."""
        if not 0 < len(key) <= MAX_LENGTH:
            return np.zeros(0, dtype=np.int64)
        found = []
        lengths = np.arange(len(key) - 2, len(key) + 3, dtype=np.int64) << _CHAR_BITS  # [5]
        for (order, sorted_keys), letter in zip(self.groups, (key[0], key[-1])):
            groups = lengths | ord(letter)
            starts = np.searchsorted(sorted_keys, groups).tolist()
            stops = np.searchsorted(sorted_keys, groups, side="right").tolist()
            found += [order[start:min(stop, start + MAX_PER_GROUP)] for start, stop in zip(starts, stops)]
        return np.concatenate(found)

    def close_rows(self, key: str) -> np.ndarray:
        """The candidates that, past their common prefix and suffix with `key`, differ by one or two characters."""
        rows = self.candidates(key)
        width = min(len(key) + 1, MAX_LENGTH)
        query = code_points([key, key[::-1]])[:, :width]  # [2, width]
        forwards, lengths = self.forwards[rows, :width], self.lengths[rows]
        shortest, longest = np.minimum(lengths, len(key)), np.maximum(lengths, len(key))
        prefix = np.minimum(matched(forwards, query[0]), shortest)
        left = longest - prefix - np.minimum(matched(self.backwards[rows, :width], query[1]), shortest)  # [k]
        at = np.minimum(prefix, width - 2)[:, None]  # where a swap would start (clipped for the gather)
        pair = np.take_along_axis(forwards, np.hstack([at, at + 1]), axis=1)  # [k, 2]
        swapped = (lengths == len(key)) & (pair[:, 0] == query[0][at[:, 0] + 1]) & (pair[:, 1] == query[0][at[:, 0]])
        return rows[(left <= 1) | ((left == 2) & (swapped | (longest > 4)))]


def code_points(words: list[str]) -> np.ndarray:
    """[len(words), MAX_LENGTH] uint32 code points, zero after each word's end."""
    return np.array(words, dtype=f"<U{MAX_LENGTH}").view(np.uint32).reshape(len(words), MAX_LENGTH)


def group_order(lengths: np.ndarray, letters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows ordered by length, letter and frequency, their group keys in that order) for np.searchsorted."""
    keys = (lengths << _CHAR_BITS) | letters.astype(np.int64)
    order = np.argsort(keys, kind="stable")  # stable: the most frequent first within a group
    return order, keys[order]


def matched(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """[k] how many leading code points each row shares with `query`."""
    differs = rows != query  # [k, width]
    return np.where(differs.any(axis=1), differs.argmax(axis=1), rows.shape[1])


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps."""
    previous2: list[int] = []  # the row before `previous`; read only from i > 1 on
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, char_b in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]
