"""`explain_many` and `trace_many`: lines read a group at a time, the sentences of one length attended together
(a few numpy calls per stack, memory flat in the number of lines); a line that cannot be attended is a `LineError`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable, TypeVar, Union

from attn_cli.api import (Tokenized, VectorsLike, check_layer, explain_tokenized, prepared, require_text,
                          tokens_for, trace_tokenized)
from attn_cli.declared import require_count
from attn_cli.documents.explain import traced_indices
from attn_cli.engine.attention import sentence_cells
from attn_cli.engine.tokenize import Rows, TokenizedSentence, unread, with_vectors
from attn_cli.errors import InputError, require_iterable
from attn_cli.results import ExplainResult, TraceResult
from attn_cli.settings import Settings
from attn_cli.vectors.store import Vectors

Line = Union[str, Sequence[str]]  # a sentence, or its words already split (pre-tokenized)
Result = TypeVar("Result", ExplainResult, TraceResult)
GROUP_LINES = 256  # lines read and tokenized together at most
GROUP_CELLS = 1 << 21  # numbers of the attention matrices and inputs computed together (16 MB of float64)


@dataclass(frozen=True)
class LineError:
    """A line that could not be attended: its number (from 1, counting every line given) and the InputError."""

    line: int
    error: InputError

    @property
    def message(self) -> str:
        return str(self.error)

    def __repr__(self) -> str:
        return f"<LineError line {self.line}: {self.message}>"


def explain_many(lines: Iterable[Line], *, vectors: VectorsLike = None, settings: Settings | None = None,
                 **changes: Any) -> Iterator[ExplainResult | LineError]:
    """`explain` over each line of `lines` (sentences, or lists of words), lazily and in order: a result, or a
    `LineError`. The settings and vectors are checked now, not at the first line."""
    chosen, found = prepared(vectors, settings, changes)
    check_layer(chosen, found)
    return _each_line(lines, found, chosen, lambda items: explain_tokenized(items, found, chosen))


def trace_many(lines: Iterable[Line], *, word: str | None = None, dims: int = 3, shuffle_check: bool = False,
               vectors: VectorsLike = None, settings: Settings | None = None,
               **changes: Any) -> Iterator[TraceResult | LineError]:
    """`trace` over each line of `lines`, lazily and in order; a line without `word` is a `LineError`."""
    require_text(**({} if word is None else {"word": word}))
    require_count("dims", dims)
    chosen, found = prepared(vectors, settings, changes)
    check_layer(chosen, found)
    return _each_line(lines, found, chosen, lambda items: trace_tokenized(
        items, found, chosen, word=word, dims=dims, shuffle_check=shuffle_check),
        check=lambda tokenized: traced_indices(tokenized, word))


Build = Callable[[list[Tokenized]], Sequence[Result]]


def _each_line(lines: Iterable[Line], vectors: Vectors, settings: Settings, build: Build,
               check: Callable[[TokenizedSentence], object] = lambda tokenized: None,
               ) -> Iterator[Result | LineError]:
    """In runs of at most GROUP_CELLS numbers, so a group of long sentences never takes gigabytes at once."""
    numbered = enumerate(require_iterable("lines", lines, "sentences (str) or of word lists"), 1)
    while group := list(islice(numbered, GROUP_LINES)):
        found = [(number, _tokenized(line, vectors, settings, check)) for number, line in group]
        ready = iter(with_vectors([item[1] for _, item in found if not isinstance(item, InputError)], vectors))
        tokenized = [(n, item if isinstance(item, InputError) else (item[0], next(ready))) for n, item in found]
        for run in runs_within(tokenized, lambda item: 0 if isinstance(item[1], InputError) else sentence_cells(
                item[1][1].embeddings, settings.attention.heads), GROUP_CELLS):  # [heads, n, n] and [n, d] numbers
            built = iter(_built([item for _, item in run if not isinstance(item, InputError)], build))
            for number, item in run:
                outcome = item if isinstance(item, InputError) else next(built)
                yield LineError(number, outcome) if isinstance(outcome, InputError) else outcome


LINE_TYPES = "a str or a list of words (str)"


def is_line(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, Sequence) and all(isinstance(word, str) for word in value))


def _tokenized(line: Line, vectors: Vectors, settings: Settings,
               check: Callable[[TokenizedSentence], object]) -> tuple[str, Rows] | InputError:
    """The line with its tokens (rows not read yet), or why it cannot be attended."""
    if not is_line(line):
        return InputError(f"a line must be {LINE_TYPES}, not {type(line).__name__}")
    try:
        tokenized = tokens_for(line, vectors, settings)
        check(unread(tokenized))
    except InputError as exc:
        return exc
    return (line if isinstance(line, str) else " ".join(line)), tokenized


def _built(ready: list[Tokenized], build: Build) -> Iterator[Result | InputError]:
    """When the layer refuses one (the "others" mask over one word), each is built alone: only that line fails."""
    if not ready:
        return
    try:
        yield from build(ready)
    except InputError:
        for item in ready:
            try:
                yield from build([item])
            except InputError as exc:
                yield exc


T = TypeVar("T")


def runs_within(items: Iterable[T], size: Callable[[T], int], limit: int) -> Iterator[list[T]]:
    """Runs of items whose sizes add up to at most `limit` (a larger item alone), read only as they are used."""
    run: list[T] = []
    held = 0
    for item in items:
        if run and held + size(item) > limit:
            yield run
            run, held = [], 0
        run.append(item)
        held += size(item)
    if run:
        yield run
