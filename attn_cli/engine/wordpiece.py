"""BERT's tokenizer by hand from vocab.txt (`tokenizers` would add a compiled dependency): basic words, then greedy
longest-match WordPiece."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import groupby

UNKNOWN, FIRST, LAST = "[UNK]", "[CLS]", "[SEP]"
CONTINUATION = "##"
MAX_WORD_CHARACTERS = 100


@dataclass(frozen=True)
class Piece:
    """One WordPiece token: its text as in the vocabulary ("##" kept), its id, and the word it came from."""

    text: str
    id: int
    word: int  # index of the basic word it is part of; -1 for [CLS] and [SEP]


def wordpieces(sentence: str, vocabulary: Mapping[str, int], lowercase: bool = True) -> list[Piece]:
    """The sentence as the model sees it: [CLS], the WordPiece tokens of its words, [SEP]."""
    pieces = [Piece(FIRST, vocabulary[FIRST], -1)]
    for number, word in enumerate(basic_words(sentence, lowercase)):
        pieces += [Piece(text, vocabulary[text], number) for text in split_word(word, vocabulary)]
    return pieces + [Piece(LAST, vocabulary[LAST], -1)]


def basic_words(sentence: str, lowercase: bool = True) -> list[str]:
    """BERT's basic tokenization: cleaned, CJK characters apart, lowercased without accents, punctuation split."""
    if sentence.isascii():  # the same words by two regular expressions: a corpus scan tokenizes many lines
        text = _ASCII_CONTROL.sub("", sentence)
        return _ASCII_WORD.findall(text.lower() if lowercase else text)
    return character_words(sentence, lowercase)


def character_words(sentence: str, lowercase: bool = True) -> list[str]:
    """`basic_words` character by character: the rule for any text."""
    spaced = "".join(f" {char} " if _is_cjk(char) else " " if _is_space(char) else char
                     for char in sentence if not _is_dropped(char))
    words = []
    for word in spaced.split():
        if lowercase:
            word = "".join(char for char in unicodedata.normalize("NFD", word.lower())
                           if unicodedata.category(char) != "Mn")
        words += _punctuation_split(word)
    return words


# in ASCII: the control characters BERT drops (tab, newline and carriage return are spaces), and its words: runs
# of letters and digits, every other visible character (all are punctuation to BERT) a word of its own
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]")


def split_word(word: str, vocabulary: Mapping[str, int]) -> list[str]:
    """Greedy longest-match-first WordPiece; [UNK] for a word it cannot cover."""
    if len(word) > MAX_WORD_CHARACTERS:
        return [UNKNOWN]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            candidate = word[start:end] if start == 0 else CONTINUATION + word[start:end]
            if candidate in vocabulary:
                pieces.append(candidate)
                start = end
                break
        else:
            return [UNKNOWN]
    return pieces


def _punctuation_split(word: str) -> list[str]:
    """The word cut around each punctuation character, which stands alone: "don't" -> don ' t."""
    return [part for punctuation, run in groupby(word, _is_punctuation)
            for part in (list(run) if punctuation else ["".join(run)])]


def _is_dropped(char: str) -> bool:
    code = ord(char)
    return code == 0 or code == 0xFFFD or (not _is_space(char) and unicodedata.category(char).startswith("C")
                                          and char not in "\t\n\r")


def _is_space(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    return 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126 \
        or unicodedata.category(char).startswith("P")


_CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
               (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)
