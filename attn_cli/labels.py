"""How a token is named in tables and verdicts: by its whole text (`deposit…` would read as another word), and a
repeated word by its position too (`bank#8`, from 1)."""

from __future__ import annotations


def token_labels(texts: list[str]) -> list[str]:
    """['the', 'bank', 'of', 'the'] -> ['the#1', 'bank', 'of', 'the#4']."""
    repeated = repeated_words(texts)
    return [f"{text}#{i + 1}" if text in repeated else text for i, text in enumerate(texts)]


def copy_label(labels: list[str], index: int, text: str) -> str:
    """Which copy of a repeated word the token at `index` is ('bank#2'), or ''."""
    return labels[index] if labels[index] != text else ""


def repeated_words(texts: list[str]) -> dict[str, list[int]]:
    """{'the': [0, 3]}: each word that occurs more than once and its positions (from 0)."""
    positions: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        positions.setdefault(text, []).append(i)
    return {text: found for text, found in positions.items() if len(found) > 1}
