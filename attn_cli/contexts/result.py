"""`SensesResult`: a word's occurrences in groups, with every figure `senses` reports, and its document."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attn_cli.documents.senses import senses_document
from attn_cli.engine.analysis import Neighbor
from attn_cli.engine.attention import AttentionResult
from attn_cli.contexts.table import Occurrences, to_arrow, write_parquet
from attn_cli.errors import InputError, SettingsError
from attn_cli.results import Report, changed_settings

if TYPE_CHECKING:
    import pandas
    import pyarrow


@dataclass(frozen=True)
class Pull:
    word: str  # a context word, case-folded
    share: float  # its mean share of the shift over a group's occurrences


@dataclass(frozen=True)
class Example:  # an occurrence near a group's centre
    index: int  # its row in the occurrences table
    line: int
    position: int
    sentence: str
    cosine: float  # with the group's centre


@dataclass(frozen=True, eq=False)
class SenseGroup:
    number: int  # from 1, by size (largest first)
    members: np.ndarray  # int64 [size]: rows of the occurrences table
    centre: np.ndarray  # [d_out] the mean of the members' unit outputs
    silhouette: float | None  # the members' mean silhouette (None with one group)
    neighbors: tuple[Neighbor, ...]  # words nearest the centre, in the outputs' space
    pulled_by: tuple[Pull, ...]  # context words with the largest mean share of the shift
    examples: tuple[Example, ...]  # the occurrences nearest the centre

    @property
    def size(self) -> int:
        return len(self.members)

    def __repr__(self) -> str:
        return f"<SenseGroup {self.number}: {self.size:,} occurrences near {', '.join(n.word for n in self.neighbors)}>"


@dataclass(frozen=True)
class LabelsReport:  # how the groups and the outputs match labels given per line
    purity: float  # the share of occurrences whose group's commonest label is theirs
    adjusted_rand: float  # agreement of groups and labels, 0 for chance, 1 for the same partition
    groups: tuple[tuple[int, str, float], ...]  # (group, its commonest label, that label's share of the group)
    probe: dict[str, dict[str, float]]  # outputs, static, bag_of_words -> accuracy, macro_f1
    labels: tuple[str, ...] = ()  # each occurrence's label (its line's), in the table's order
    misgrouped: tuple[int, ...] = ()  # rows of the table whose label is not their group's commonest: purity's misses


@dataclass(frozen=True, eq=False)
class SensesResult(Report):
    """A word across a corpus: its occurrences (the table), their groups and, given labels, the probe."""

    word: str
    occurrences: Occurrences
    groups: tuple[SenseGroup, ...]
    assignments: np.ndarray  # [m] each occurrence's group as an index into `groups` (0-based; shown from 1)
    chosen_by: str  # "silhouette" or "given"
    silhouettes: dict[int, float]  # each K tried -> its silhouette
    silhouette: float | None  # the chosen grouping's (None with one group)
    static_neighbors: tuple[Neighbor, ...]  # the neighbours of the word's static vector, blind to context
    labels_report: LabelsReport | None
    projection: np.ndarray  # [m, 2] each occurrence on the plane of the outputs' two main directions (PCA)
    layer: AttentionResult  # the layer over the word alone: its settings as the document states them

    _draw = ("senses", "render_senses")

    @property
    def clusters(self) -> int:
        return len(self.groups)

    def document(self, wanted: Any = None) -> dict:  # always whole
        return senses_document(self)

    @property
    def occurrence_labels(self) -> tuple[str, ...] | None:  # each occurrence's (its line's), None without labels
        return None if self.labels_report is None else self.labels_report.labels

    def to_pandas(self) -> pandas.DataFrame:
        """One row per occurrence, as the Parquet table has it (a lone surrogate spelt as its escape)."""
        try:
            import pandas
        except ImportError:
            raise InputError('to_pandas needs pandas: pip install pandas') from None
        from attn_cli.files import encodable  # text as the Parquet table has it, whatever pandas stores it in

        table = self.occurrences
        return pandas.DataFrame({
            "line": table.line, "position": table.position, "token": encodable(table.token),
            "group": self.assignments + 1, "label": encodable(self.occurrence_labels or [None] * len(table)),
            "x": self.projection[:, 0], "y": self.projection[:, 1], "sentence": encodable(table.sentence),
            "output": list(table.outputs)})

    def to_arrow(self) -> pyarrow.Table:
        """The occurrences' table (Occurrences.to_arrow) with each one's `group` (from 1) and `label`."""
        return to_arrow(self.occurrences, self.assignments + 1, self.occurrence_labels, name="SensesResult.to_arrow")

    def write_parquet(self, path: str | os.PathLike[str]) -> None:
        """That table as a Parquet file, whole or not at all (`attn-cli senses --parquet`)."""
        write_parquet(path, self.occurrences, self.assignments + 1, self.occurrence_labels,
                      name="SensesResult.write_parquet")

    def to_html(self, path: str | os.PathLike[str] | None = None, *, color_by: str = "group") -> str:
        """The page of `attn-cli senses --html`, coloured by "group" or "label"; written atomically to `path`."""
        return _written(self._page(senses_document(self), self._colour(color_by)), path)

    def to_svg(self, path: str | os.PathLike[str] | None = None, *, color_by: str = "group") -> str:
        """The scatter alone as an SVG file (as `--svg`), coloured as to_html's; written atomically to `path`."""
        from attn_cli.render.senses_page import scatter_svg

        return _written(scatter_svg(senses_document(self), standalone=True, color_by=self._colour(color_by)), path)

    def _colour(self, color_by: str) -> str:
        from attn_cli.render.senses_page import COLOR_BY

        if color_by not in COLOR_BY:
            raise SettingsError("color_by", f"must be one of {', '.join(map(repr, COLOR_BY))} (got {color_by!r})")
        if color_by == "label" and self.labels_report is None:
            raise SettingsError("color_by", "'label' needs labels: group with labels=... (one per corpus line)")
        return color_by

    def _page(self, document: dict, color_by: str = "group") -> str:
        from attn_cli.render.senses_page import senses_page

        return senses_page(document, self.python_call(), color_by)

    def python_call(self) -> str:
        """`attn_cli.senses('bank', sentences, clusters=2, labels=labels, mode='projected')`."""
        given = [f"clusters={self.clusters}"] if self.chosen_by == "given" else []
        labels = ["labels=labels"] if self.labels_report is not None else []
        arguments = [repr(self.word), "sentences", *given, *labels, *changed_settings(self.occurrences.settings)]
        return f"attn_cli.senses({', '.join(arguments)})"

    def __repr__(self) -> str:
        silhouette = "" if self.silhouette is None else f" (silhouette {self.silhouette:.2f})"
        return (f"<SensesResult {self.word!r}: {len(self.occurrences):,} occurrences in {self.clusters} "
                f"group{'s' * (self.clusters != 1)}{silhouette}>")


def _written(text: str, path: str | os.PathLike[str] | None) -> str:
    if path is not None:
        from attn_cli.files import write_file

        write_file(path, text)
    return text
