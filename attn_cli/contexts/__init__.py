"""A word's contexts across a corpus (`senses`): `occurrences` (scan.py) then `group_senses` (grouping.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from attn_cli.batches import Line
from attn_cli.contexts.grouping import check_seed, group_senses
from attn_cli.contexts.result import SenseGroup, SensesResult
from attn_cli.contexts.scan import MAX_OCCURRENCES, occurrences
from attn_cli.contexts.table import Occurrences
from attn_cli.settings import Settings
from attn_cli.vectors import default_data_dir

__all__ = ["senses", "occurrences", "group_senses", "Occurrences", "SensesResult", "SenseGroup", "example_corpus"]


def senses(word: str, sentences: Iterable[Line], *, clusters: int | None = None, labels: Sequence[str] | None = None,
           seed: int = 0, vectors: Any = None, settings: Settings | None = None,
           max_occurrences: int = MAX_OCCURRENCES, **changes: Any) -> SensesResult:
    """`occurrences` then `group_senses` (see both); the seed is checked before the corpus is read."""
    check_seed(seed)
    return group_senses(occurrences(word, sentences, vectors=vectors, settings=settings,
                                    max_occurrences=max_occurrences, **changes),
                        clusters=clusters, labels=labels, seed=seed)


def example_corpus() -> tuple[list[str], list[str]]:
    """The bundled corpus (sentences, labels): 20 sentences about a river bank then 20 about money, labelled."""
    folder = default_data_dir() / "senses"
    sentences, labels = ((folder / name).read_text(encoding="utf-8").splitlines()
                         for name in ("bank.txt", "bank.labels.txt"))
    return sentences, labels
