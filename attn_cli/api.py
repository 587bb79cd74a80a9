"""The public Python API: settings as keywords or one `Settings`, vectors as `Vectors`, a path or gensim-data name,
a gensim `KeyedVectors` or None (the embedded set). The `*_tokenized` functions attend many sentences together."""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from attn_cli.documents.explain import traced_indices
from attn_cli.engine.sentences import Row, analyse_shifts, attend_each
from attn_cli.declared import require_count
from attn_cli.engine.attention import as_stack, multi_head_attention
from attn_cli.engine.tokenize import Rows, TokenizedSentence, describe_unknown, tokenized_rows, with_vectors
from attn_cli.errors import (InputError, InputTypeError, SettingsError, SettingsTypeError, UnknownWordsWarning,
                             path_argument, require_iterable)
from attn_cli.results import CompareResult, CrossResult, ExplainResult, TraceResult
from attn_cli.settings import Settings
from attn_cli.vectors import DEFAULT_NAME, load_default_vectors
from attn_cli.vectors import load_vectors as load_source
from attn_cli.vectors.formats import VECTOR_FORMATS
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:
    from attn_cli.training.run import Training, TrainingRun
    from attn_cli.training.settings import TrainingSettings
    from attn_cli.training.trainer import Progress

VectorsLike = Any  # Vectors, a path or gensim-data name, a gensim KeyedVectors, or None for the default set
Tokenized = tuple[str, TokenizedSentence]


def load_vectors(source: str | os.PathLike[str] | None = None, *, limit: int | None = None,
                 format: str | None = None, skip_bad_lines: bool = False, trust_pickle: bool = False,
                 progress: bool = False, warn: Callable[[str], None] | None = None,
                 require_cache: bool = False) -> Vectors:
    """The embedded set (`source` None), or a vector file or gensim-data name read through the cache; `limit` keeps
    the most frequent words; `require_cache`: a cache that cannot be written is a VectorsError, not a warning."""
    if limit is not None:
        require_count("limit", limit)
    if format is not None and format not in VECTOR_FORMATS:
        raise SettingsError("format", f"must be one of {', '.join(VECTOR_FORMATS)} (got {format!r})")
    if source is None or str(source) == DEFAULT_NAME:
        for name, given in (("format", format is not None), ("skip_bad_lines", skip_bad_lines),
                            ("trust_pickle", trust_pickle)):
            if given:
                raise SettingsError(name, "applies only to a vector file", fix={"vectors": "FILE"})
        return _default_vectors() if limit is None else _default_vectors().first(limit)
    from attn_cli.vectors.cache import LoadOptions

    options = LoadOptions(file_format=format, limit=limit, skip_bad_lines=skip_bad_lines, trust_pickle=trust_pickle,
                          show_progress=progress, warn=warn or (lambda message: None), require_cache=require_cache)
    return load_source(path_argument("source", source), options)


_default_vectors = functools.lru_cache(maxsize=1)(load_default_vectors)  # the embedded set, mapped once


def as_vectors(vectors: VectorsLike) -> Vectors:
    if isinstance(vectors, Vectors):
        return vectors
    if hasattr(vectors, "index_to_key") and hasattr(vectors, "vectors"):
        return Vectors.from_keyedvectors(vectors)
    if not (vectors is None or isinstance(vectors, (str, os.PathLike))):
        raise SettingsTypeError("vectors", "must be attn_cli.Vectors, a gensim KeyedVectors, a file path or a "
                                           f"gensim-data name, got {type(vectors).__name__}")
    return load_vectors(vectors)


def explain(sentence: str, *, vectors: VectorsLike = None, settings: Settings | None = None,
            **changes: Any) -> ExplainResult:
    """Self-attention over `sentence`: scores, weights, outputs, and how each word's vector moved."""
    require_text(sentence=sentence)
    chosen, source = prepared(vectors, settings, changes)
    [result] = explain_tokenized([(sentence, tokenized_for(sentence, source, chosen))], source, chosen)
    _warn_unknown(result.tokenized)
    return result


def trace(sentence: str, *, word: str | None = None, dims: int = 3, shuffle_check: bool = False,
          vectors: VectorsLike = None, settings: Settings | None = None, **changes: Any) -> TraceResult:
    """Follow `word` (default: each word in turn) through attention step by step."""
    require_text(sentence=sentence, **({} if word is None else {"word": word}))
    require_count("dims", dims)
    chosen, source = prepared(vectors, settings, changes)
    [result] = trace_tokenized([(sentence, tokenized_for(sentence, source, chosen))], source, chosen, word=word,
                               dims=dims, shuffle_check=shuffle_check)
    _warn_unknown(result.tokenized)
    return result


def compare(sentences: Sequence[str | ExplainResult], *, word: str | Sequence[str] | None = None,
            vectors: VectorsLike = None, settings: Settings | None = None, **changes: Any) -> CompareResult:
    """The same word (default: every shared word) across sentences, or across results of `explain` as they are."""
    sentences = [] if isinstance(sentences, str) else list(require_iterable("sentences", sentences, "str"))
    if len(sentences) < 2:
        raise InputError("compare needs a list of at least two sentences, e.g. "
                         '["river bank flows", "money bank grows"]')
    words = _words(word)
    results = [sentence for sentence in sentences if isinstance(sentence, ExplainResult)]
    if len(results) < len(sentences):  # any sentence given as text: all must be
        require_text(**{f"sentences[{number}]": sentence for number, sentence in enumerate(sentences)})
        chosen, source = prepared(vectors, settings, changes)
        texts = [str(sentence) for sentence in sentences]
        results = explain_tokenized([(text, tokenized_for(text, source, chosen)) for text in texts], source, chosen)
        _warn_unknown(*[result.tokenized for result in results])
    from attn_cli.engine.comparison import compared_words  # only compare pays for its import

    return CompareResult(results, compared_words([result.sentence for result in results],
                                                 [result.tokenized for result in results], results[0].vectors,
                                                 [result.attention for result in results],
                                                 [result.shifts for result in results], words))


def cross(source: str | ExplainResult, target: str | ExplainResult, *, vectors: VectorsLike = None,
          settings: Settings | None = None, **changes: Any) -> CrossResult:
    """`target`'s tokens (queries) attend over `source`'s (keys and values); either may be results of `explain`."""
    if isinstance(source, ExplainResult) and isinstance(target, ExplainResult):
        return cross_tokenized((source.sentence, source.tokenized), (target.sentence, target.tokenized),
                               target.vectors, target.settings)
    require_text(source=source, target=target)
    chosen, found = prepared(vectors, settings, changes)
    result = cross_tokenized((source, tokenized_for(source, found, chosen)),  # type: ignore[arg-type]
                             (target, tokenized_for(target, found, chosen)), found, chosen)  # type: ignore[arg-type]
    _warn_unknown(result.source_tokens, result.target_tokens)
    return result


def train(sentences: Iterable[str], *, vectors: VectorsLike = None, settings: TrainingSettings | None = None,
          corpus_name: str = "sentences", progress: Callable[[Progress], None] | None = None,
          **changes: Any) -> TrainingRun:
    """Learn W_Q, W_K, W_V and W_O of one layer from `sentences`, the vectors frozen: a tenth held out for the
    table, another tenth choosing the best epoch. `.layer` goes to explain(..., weights=layer) or layer.save(path)."""
    return prepare_training(sentences, vectors=vectors, settings=settings, corpus_name=corpus_name,
                            **changes).run(progress)


def prepare_training(sentences: Iterable[str], *, vectors: VectorsLike = None,
                     settings: TrainingSettings | None = None, corpus_name: str = "sentences",
                     **changes: Any) -> Training:
    """`train` ready but not run; after a Ctrl-C in `.run(progress)`, `.result()` gives the best weights so far."""
    from attn_cli.training.run import Training
    from attn_cli.training.settings import TrainingSettings

    lines = require_iterable("sentences", sentences, "str (one sentence each)")
    if settings is not None and not isinstance(settings, TrainingSettings):
        raise SettingsTypeError("settings", f"must be an attn_cli.TrainingSettings, got {type(settings).__name__}")
    chosen = replace(settings or TrainingSettings(), **changes)
    return Training(lines, as_vectors(vectors), chosen, corpus_name)


def prepare_demo(*, vectors: VectorsLike = None, **changes: Any) -> Training:
    """The demo's run made ready: generated sentences of ten topics, "bank" in money and river ones."""
    from attn_cli.training.demo import demo_corpus
    from attn_cli.training.settings import DEMO_SETTINGS
    from attn_cli.training.run import Training

    chosen = replace(DEMO_SETTINGS, **changes)
    found = as_vectors(vectors)
    generated = demo_corpus(found, seed=chosen.seed)
    return Training(generated.lines, found, chosen, "the demo corpus (generated)", demo=generated)


def explain_tokenized(items: Sequence[Tokenized], vectors: Vectors, settings: Settings) -> list[ExplainResult]:
    """Attended as stacks (one neighbour search for all), each result a view of its stack."""
    return [ExplainResult.of_row(sentence, tokens, vectors, settings, row)
            for (sentence, tokens), row in zip(items, _attend(items, vectors, settings))]


def trace_tokenized(items: Sequence[Tokenized], vectors: Vectors, settings: Settings, *, word: str | None = None,
                    dims: int = 3, shuffle_check: bool = False) -> list[TraceResult]:
    traced = [traced_indices(tokens, word) for _, tokens in items]
    return [TraceResult.of_row(sentence, tokens, vectors, settings, row, traced=indices, dims=dims,
                               shuffle_check=shuffle_check)
            for (sentence, tokens), row, indices in zip(items, _attend(items, vectors, settings), traced)]


def _attend(items: Sequence[Tokenized], vectors: Vectors, settings: Settings) -> list[Row]:
    check_layer(settings, vectors)
    return attend_each([tokens for _, tokens in items], vectors, settings.attention, settings.projections,
                       neighbors=settings.neighbors, neighbor_vocab=settings.neighbor_vocab)


def cross_tokenized(source: Tokenized, target: Tokenized, vectors: Vectors, settings: Settings) -> CrossResult:
    check_layer(settings, vectors)
    result = multi_head_attention(target[1].embeddings, source[1].embeddings, settings.attention,
                                  settings.projections)
    [shifts] = analyse_shifts([as_stack(result)], [[target[1]]], vectors, settings.neighbors,
                              settings.neighbor_vocab, sources=[[source[1]]])
    return CrossResult(source[0], source[1], target[0], target[1], vectors, settings, result, shifts.records(0))


def prepared(vectors: VectorsLike, settings: Settings | None, changes: dict[str, Any]) -> tuple[Settings, Vectors]:
    """Settings before vectors, so a bad setting is refused before any file is read; a model brings its own."""
    chosen = resolve_settings(settings, changes)
    if chosen.model is None:
        return chosen, as_vectors(vectors)
    if vectors is not None and not chosen.model.owns(vectors):  # type: ignore[union-attr]  # resolve_settings loaded it
        raise SettingsError("vectors", "cannot be given with a model, which reads its own vocabulary; leave it out")
    return chosen, chosen.model.vectors  # type: ignore[union-attr]


def resolve_settings(settings: Settings | None, changes: dict[str, Any]) -> Settings:
    """`settings` with the keyword changes, its weights file or model read (settings read no files)."""
    chosen = Settings.resolve(settings, **changes)
    if chosen.model_source is not None:
        from attn_cli.models import load_model

        return replace(chosen, model=load_model(chosen.model_source))
    if chosen.weights_file is None:
        return chosen
    from attn_cli.training.weights import load_layer

    return replace(chosen, weights=load_layer(chosen.weights_file))


def check_layer(settings: Settings, vectors: Vectors) -> None:
    if settings.layer_weights is not None:
        settings.layer_weights.check_vectors(vectors)


def _words(word: object) -> tuple[str, ...]:
    words = (word,) if isinstance(word, str) else tuple(word or ()) if isinstance(word, Iterable | None) else None
    if words is None or not all(isinstance(each, str) for each in words):
        raise InputTypeError(f"word must be a str or a list of str, not {type(word).__name__}")
    return words


def require_text(**arguments: object) -> None:
    for name, value in arguments.items():
        if not isinstance(value, str):
            raise InputTypeError(f"{name} must be a str, not {type(value).__name__}")


def tokenized_for(sentence: str | Sequence[str], vectors: Vectors, settings: Settings) -> TokenizedSentence:
    """The sentence's tokens with their vectors, or a pretrained model's WordPiece tokens with their inputs."""
    return with_vectors([tokens_for(sentence, vectors, settings)], vectors)[0]


def tokens_for(sentence: str | Sequence[str], vectors: Vectors, settings: Settings) -> Rows:
    """`tokenized_for`, the rows not read yet: a batch reads a group's in one call (a model's are its inputs)."""
    layer = settings.layer_weights
    if settings.model is not None and layer is not None:
        found = layer.tokenized(sentence if isinstance(sentence, str) else " ".join(sentence),  # type: ignore[union-attr]
                                settings.max_tokens)
        return found.tokens, found.dropped, list(found.embeddings)
    return tokenized_rows(sentence, vectors, settings.oov, settings.max_tokens)


def _warn_unknown(*sentences: TokenizedSentence) -> None:
    """One warning, at the line calling the public function (stacklevel 3)."""
    unknown = [item for tokenized in sentences for item in tokenized.dropped if item.reason == "out of vocabulary"]
    if unknown:
        warnings.warn(f"skipped {describe_unknown(unknown)}: not in the vocabulary", UnknownWordsWarning, stacklevel=3)
