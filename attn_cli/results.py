"""Result objects of the public API: the engine's numbers, and documents built on demand by the functions the
command line uses, so `to_dict()`, `to_html()` and `str()` are its --json, --html and tables."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from dataclasses import dataclass, field, fields, replace
from functools import partial
from typing import TYPE_CHECKING, Any, Collection, Generic, TypeVar

import numpy as np

from attn_cli.documents.explain import explain_document, trace_document
from attn_cli.engine.analysis import Advice, Contribution, Diagnosis, Neighbor, RowDiagnostic, Shift, StackShifts
from attn_cli.engine.attention import AttentionResult, Projections, as_stack
from attn_cli.engine.sentences import Row, Stack
from attn_cli.engine.tokenize import DroppedToken, TokenizedSentence, describe_unknown
from attn_cli.render.flags import SPELLING
from attn_cli.render.consoles import draw_literally, report_console, trimmed
from attn_cli.settings import Settings
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:  # compare and cross import their modules when they build a document: explain never loads them
    from attn_cli.engine.comparison import WordComparison


def read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


def attention_array(name: str, doc: str) -> Any:
    """A read-only view of the `AttentionResult`'s array of that name, so documents stay what the engine computed."""
    return property(lambda result: read_only(getattr(result.attention, name)), doc=doc)


T = TypeVar("T")


class FromRow(Generic[T]):
    """A field given as a `partial` is made when first read, so a batch's results cost nothing until read (a data
    descriptor: the frozen dataclass's __init__ and `replace()` go through it)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, result: Any, owner: type | None = None) -> T:
        if result is None:
            raise AttributeError(self.name)  # no default: the field stays required
        value = result.__dict__[self.name]
        if isinstance(value, partial):
            value = result.__dict__[self.name] = value()
        return value

    def __set__(self, result: Any, value: T | partial) -> None:
        result.__dict__[self.name] = value


class Report:
    """A result's document as JSON, HTML, tables and a notebook cell."""

    _draw: tuple[str, str]  # (module of attn_cli.render, function) that draws the document as tables

    def document(self, wanted: Collection[str] | None = None) -> dict:
        """The document, matrices as numpy arrays; `wanted` (None: all) names the keys (or `shifts.cosine`, a block's
        parts) a caller keeps, so others may be left unbuilt."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        """The document `attn-cli ... --json` writes for the same input and settings, as plain Python values."""
        return json.loads(self.to_json())

    def python_call(self) -> str:
        """The call that makes this result, shown where the CLI's report shows its command line."""
        raise NotImplementedError

    def to_json(self) -> str:
        from attn_cli.render.json_out import encode

        return encode(self.document()).decode("utf-8")

    def to_html(self, path: str | os.PathLike[str] | None = None) -> str:
        """The self-contained HTML report (the same page as `--html`); written atomically to `path` if given."""
        from attn_cli.files import write_file

        page = self._page(self.document())
        if path is not None:
            write_file(path, page)
        return page

    def _repr_html_(self) -> str:
        """The page in a sandboxed iframe, after plain tables for viewers that strip iframes."""
        from attn_cli.render.notebook import notebook_cell

        document = self.document()  # built once for both parts
        return notebook_cell(document, self._page(document))

    def _page(self, document: dict) -> str:
        from attn_cli.render.html import html_page

        return html_page([document], self.python_call(), spelling="keywords")

    def __str__(self) -> str:
        """The command line's tables, in colour when printed to a terminal."""
        import importlib

        buffer = io.StringIO()
        console = report_console(file=trimmed(buffer), width=shutil.get_terminal_size().columns,
                                 force_terminal=sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
        module, function = self._draw
        draw = getattr(importlib.import_module(f"attn_cli.render.{module}"), function)
        spelling = SPELLING.set("keywords")
        try:
            draw_literally(draw, self.document(), console)
            console.file.flush()
        finally:
            SPELLING.reset(spelling)
        return buffer.getvalue()


@dataclass(frozen=True, repr=False)
class ExplainResult(Report):
    """Self-attention over one sentence: every score, weight and output, and how each word moved."""

    sentence: str
    tokenized: TokenizedSentence
    vectors: Vectors
    settings: Settings
    attention: FromRow[AttentionResult] = FromRow()
    shifts: FromRow[list[Shift]] = FromRow()  # one per token: cosine, delta_norm, contributions, neighbours
    _draw, _function = ("terminal", "render_explain"), "explain"

    @property
    def tokens(self) -> list[str]:
        return [token.text for token in self.tokenized.tokens]

    @property
    def dropped(self) -> list[DroppedToken]:
        """Tokens left out (punctuation, unknown words), with why and spelling suggestions."""
        return self.tokenized.dropped

    @property
    def unknown_words(self) -> str:
        """The unknown words left out ('"bnak" (did you mean bank?)'); '' for none."""
        unknown = [item for item in self.tokenized.dropped if item.reason == "out of vocabulary"]
        return describe_unknown(unknown) if unknown else ""

    @property
    def embeddings(self) -> np.ndarray:
        """[n, d] the static vectors of the tokens (read-only)."""
        return read_only(self.tokenized.embeddings)

    scores = attention_array("scores", "[heads, n, n] similarity of each query with each key, before scaling")
    logits = attention_array("logits", "[heads, n, n] scaled scores, -inf where masked")
    weights = attention_array("weights", "[heads, n, n] softmax weights: row i, what token i takes from each")
    outputs = attention_array("outputs", "[n, d_out] the contextual vectors")
    queries = attention_array("queries", "[heads, n, d_head] Q")
    keys = attention_array("keys", "[heads, n, d_head] K")
    values = attention_array("values", "[heads, n, d_head] V")

    @property
    def projections(self) -> Projections | None:
        """W_Q, W_K, W_V (and W_O) in projected mode; None in raw mode."""
        return self.attention.projections

    @property
    def pulled_by(self) -> list[list[Contribution]]:
        """Per token, the context words that moved it most: share of the shift >= 5 %, at most 3, largest first."""
        return [shift.pulled_by for shift in self.shifts]

    @property
    def diagnostics(self) -> list[list[RowDiagnostic]]:
        """Per head, per query row: entropy in bits, the largest weight, where it goes and the keys the row sees."""
        texts = self.tokens
        return [[replace(row, token=texts[i], argmax_token=texts[row.argmax]) for i, row in enumerate(rows)]
                for rows in self._diagnosis().rows]

    @property
    def warnings(self) -> list[Advice]:
        """Heads whose rows are saturated or flat, with remedies, and the unknown words left out."""
        unknown = [Advice("unknown words", None, f"skipped {self.unknown_words}: not in the vocabulary", [], False)]
        return self._diagnosis().advice + (unknown if self.unknown_words else [])

    def _diagnosis(self) -> Diagnosis:
        stack, b = self.row()
        return stack.diagnosis().sentence(b)

    @classmethod
    def of_row(cls, sentence: str, tokenized: TokenizedSentence, vectors: Vectors, settings: Settings, row: Row,
               **more: Any) -> Any:
        stack, b = row
        result = cls(sentence, tokenized, vectors, settings, partial(stack.sentence, b),
                     partial(stack.shifts.records, b), **more)
        result.__dict__["_row"] = row  # no field: replace() makes a result built by hand
        return result

    def row(self) -> Row:
        """The sentence's place in its stack, which its documents read; built by hand, a stack of one (made once)."""
        if "_row" not in self.__dict__:
            self.__dict__["_row"] = alone(self.attention, self.shifts, self.tokens, self.tokens)
        return self.__dict__["_row"]

    def document(self, wanted: Collection[str] | None = None) -> dict:
        return explain_document(self.sentence, self.tokenized, self.vectors, self.row(), self.settings.report, wanted)

    def python_call(self) -> str:
        return call_text(self._function, [self.sentence], self.settings)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.sentence!r}: {len(self.tokens)} tokens, "
                f"{self.attention.n_heads} head(s), {self.settings.mode} mode{changed_text(self.settings)}>")


@dataclass(frozen=True, repr=False)
class TraceResult(ExplainResult):
    """One word (or each in turn) followed through attention, every step with its numbers."""

    traced: list[int] = field(default_factory=list)  # indices of the traced tokens
    dims: int = 3  # coordinates shown of each vector
    shuffle_check: bool = False
    _draw, _function = ("trace", "render_trace"), "trace"

    def document(self, wanted: Collection[str] | None = None) -> dict:
        from attn_cli.engine.tracing import trace_token  # only trace pays for its import

        texts, row = self.tokens, self.row()
        attention = row[0].sentence(row[1])
        traces = {i: trace_token(attention, self.embeddings, i, texts, self.dims, self.shuffle_check,
                                 learned_positions=self.settings.model is not None)
                  for i in self.traced}
        return trace_document(self.sentence, self.tokenized, self.vectors, row, self.settings.report, traces,
                              dims=self.dims)


@dataclass(frozen=True, repr=False)
class CompareResult(Report):
    """The same word across sentences: each sentence's self-attention, and each shared word compared."""

    sentences: list[ExplainResult]
    words: list[WordComparison]  # static and contextual cosines between the occurrences, and what pulled them
    _draw = ("compare", "render_compare")

    def document(self, wanted: Collection[str] | None = None) -> dict:
        from attn_cli.documents.compare import compare_document

        return compare_document([sentence.document() for sentence in self.sentences], self.words)

    def python_call(self) -> str:
        return call_text("compare", [[sentence.sentence for sentence in self.sentences]], self.sentences[0].settings)

    def __repr__(self) -> str:
        return (f"<CompareResult {len(self.sentences)} sentences, words {[word.word for word in self.words]}"
                f"{changed_text(self.sentences[0].settings)}>")


@dataclass(frozen=True, repr=False)
class CrossResult(Report):
    """Cross-attention: the target's tokens (queries) attend over the source's (keys and values)."""

    source: str
    source_tokens: TokenizedSentence
    target: str
    target_tokens: TokenizedSentence
    vectors: Vectors
    settings: Settings
    attention: AttentionResult  # rows: target tokens, columns: source tokens
    shifts: list[Shift]  # one per target token
    _draw = ("compare", "render_cross")

    weights = attention_array("weights", "[heads, n_target, n_source] softmax weights")
    outputs = attention_array("outputs", "[n_target, d_out] the target's contextual vectors")

    def document(self, wanted: Collection[str] | None = None) -> dict:
        from attn_cli.documents.compare import cross_document

        row = alone(self.attention, self.shifts, [token.text for token in self.target_tokens.tokens],
                    [token.text for token in self.source_tokens.tokens])
        return cross_document(self.source, self.source_tokens, self.target, self.target_tokens, self.vectors, row,
                              self.settings.report)

    def python_call(self) -> str:
        return call_text("cross", [self.source, self.target], self.settings)

    def __repr__(self) -> str:
        return (f"<CrossResult {self.target!r} over {self.source!r}: {self.attention.weights.shape[-2]} x "
                f"{self.attention.weights.shape[-1]} tokens{changed_text(self.settings)}>")


def alone(attention: AttentionResult, shifts: list[Shift], texts: list[str], key_texts: list[str]) -> Row:
    nearest: list[list[Neighbor]] = ([shift.neighbors_before for shift in shifts]
                                     + [shift.neighbors_after for shift in shifts])
    stack = as_stack(attention)
    return Stack(stack, StackShifts(stack, nearest, [(texts, key_texts)])), 0


def call_text(function: str, arguments: list[Any], settings: Settings) -> str:
    return f"attn_cli.{function}({', '.join([*map(repr, arguments), *changed_settings(settings)])})"


def changed_settings(settings: Settings) -> list[str]:
    """The settings that differ from the defaults, as keyword arguments (`heads=4`); a layer's as `weights=FILE`."""
    defaults, layer = Settings(), settings.layer_weights
    given = "model" if settings.model is not None else "weights"  # what the layer came from, named by its source
    adopted = {} if layer is None else {**layer.settings(), given: layer.source or "FILE"}  # all from the layer
    values = {item.name: getattr(settings, item.name) for item in fields(settings)}
    return [f"{name}={adopted.get(name, value)!r}" for name, value in values.items()
            if not name.startswith("_") and getattr(defaults, name) != value
            and (name == given or name not in adopted)]


def changed_text(settings: Settings) -> str:
    changed = changed_settings(settings)
    return f"; {', '.join(changed)}" if changed else ""
