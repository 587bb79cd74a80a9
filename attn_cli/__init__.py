"""attn-cli: see self-attention at work on static word vectors, every number of it.

The public API (documented in docs/python-api.md):

    import attn_cli
    result = attn_cli.explain("money bank grows")
    result.weights, result.to_dict(), result.to_html("report.html")

Names are imported on first use (PEP 562), so `import attn_cli` alone loads
neither numpy nor the engine; the command line imports them as it starts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from attn_cli.version import __version__

_EXPORTS = {
    "load_vectors": "attn_cli.api", "explain": "attn_cli.api", "trace": "attn_cli.api",
    "compare": "attn_cli.api", "cross": "attn_cli.api", "train": "attn_cli.api",
    "explain_many": "attn_cli.batches", "trace_many": "attn_cli.batches", "LineError": "attn_cli.batches",
    "ExplainParquet": "attn_cli.parquet",
    "document_header": "attn_cli.documents.explain", "write_file": "attn_cli.files",
    "stream_descriptor": "attn_cli.files",
    "CachedSet": "attn_cli.vector_sets", "cache_folder": "attn_cli.vector_sets",
    "cached_vector_sets": "attn_cli.vector_sets", "find_cached": "attn_cli.vector_sets",
    "describe_vectors": "attn_cli.vector_sets", "remove_cached": "attn_cli.vector_sets",
    "vector_leftovers": "attn_cli.vector_sets", "remove_leftovers": "attn_cli.vector_sets",
    "download_vectors": "attn_cli.vector_sets", "export_vectors": "attn_cli.vector_sets",
    "prepare_training": "attn_cli.api", "prepare_demo": "attn_cli.api", "DEMO_SETTINGS": "attn_cli.training.settings",
    "TrainingSettings": "attn_cli.training.settings", "TrainingRun": "attn_cli.training.run",
    "Training": "attn_cli.training.run",
    "TrainedLayer": "attn_cli.training.weights", "load_layer": "attn_cli.training.weights",
    "Settings": "attn_cli.settings", "MAX_OCCURRENCES": "attn_cli.settings",
    "Vectors": "attn_cli.vectors.store", "VECTOR_FORMATS": "attn_cli.vectors.formats",
    "LayerSettings": "attn_cli.engine.attention", "Declared": "attn_cli.declared", "declarations": "attn_cli.declared",
    "ExplainResult": "attn_cli.results", "TraceResult": "attn_cli.results", "CompareResult": "attn_cli.results",
    "CrossResult": "attn_cli.results",
    "senses": "attn_cli.contexts", "occurrences": "attn_cli.contexts", "group_senses": "attn_cli.contexts",
    "Occurrences": "attn_cli.contexts", "SensesResult": "attn_cli.contexts", "SenseGroup": "attn_cli.contexts",
    "example_corpus": "attn_cli.contexts",
    "AttnError": "attn_cli.errors", "SettingsError": "attn_cli.errors", "InputError": "attn_cli.errors",
    "VectorsError": "attn_cli.errors", "WeightsError": "attn_cli.errors", "OutputError": "attn_cli.errors",
    "UnknownWordsWarning": "attn_cli.errors",
    "MODELS": "attn_cli.models", "Model": "attn_cli.models", "load_model": "attn_cli.models",
    "import_model": "attn_cli.models", "imported_models": "attn_cli.models", "remove_model": "attn_cli.models",
}
__all__ = [
    "__version__", "load_vectors", "explain", "trace", "compare", "cross", "train", "explain_many", "trace_many",
    "LineError", "ExplainParquet", "document_header", "write_file", "stream_descriptor", "Settings", "MAX_OCCURRENCES",
    "Vectors",
    "CachedSet", "cache_folder", "cached_vector_sets", "find_cached", "describe_vectors", "remove_cached",
    "vector_leftovers", "remove_leftovers", "download_vectors", "export_vectors",
    "VECTOR_FORMATS", "LayerSettings", "Declared", "declarations",
    "TrainingSettings", "TrainingRun", "TrainedLayer", "load_layer", "prepare_training", "prepare_demo",
    "DEMO_SETTINGS", "Training",
    "ExplainResult", "TraceResult", "CompareResult", "CrossResult",
    "senses", "occurrences", "group_senses", "Occurrences", "SensesResult", "SenseGroup", "example_corpus",
    "AttnError", "SettingsError", "InputError", "VectorsError", "WeightsError", "OutputError", "UnknownWordsWarning",
    "MODELS", "Model", "load_model", "import_model", "imported_models", "remove_model",
]

if TYPE_CHECKING:
    from attn_cli.api import compare, cross, explain, load_vectors, prepare_demo, prepare_training, trace, train
    from attn_cli.batches import LineError, explain_many, trace_many
    from attn_cli.declared import Declared, declarations
    from attn_cli.documents.explain import document_header
    from attn_cli.engine.attention import LayerSettings
    from attn_cli.errors import (AttnError, InputError, OutputError, SettingsError, UnknownWordsWarning, VectorsError,
                                 WeightsError)
    from attn_cli.files import stream_descriptor, write_file
    from attn_cli.models import MODELS, Model, import_model, imported_models, load_model, remove_model
    from attn_cli.parquet import ExplainParquet
    from attn_cli.results import CompareResult, CrossResult, ExplainResult, TraceResult
    from attn_cli.contexts import (Occurrences, SenseGroup, SensesResult, example_corpus, group_senses, occurrences,
                                   senses)
    from attn_cli.settings import MAX_OCCURRENCES, Settings
    from attn_cli.training.run import Training, TrainingRun
    from attn_cli.training.settings import DEMO_SETTINGS, TrainingSettings
    from attn_cli.training.weights import TrainedLayer, load_layer
    from attn_cli.vector_sets import (CachedSet, cache_folder, cached_vector_sets, describe_vectors, download_vectors,
                                      export_vectors, find_cached, remove_cached, remove_leftovers, vector_leftovers)
    from attn_cli.vectors.formats import VECTOR_FORMATS
    from attn_cli.vectors.store import Vectors


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used (PEP 562)."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'attn_cli' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
