"""attn-cli: see self-attention at work on static word vectors, every number of it (docs/python-api.md).

Names are imported on first use (PEP 562), so `import attn_cli` alone loads neither numpy nor the engine."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from attn_cli.version import __version__

_MODULES = {
    "attn_cli.api": "load_vectors explain trace compare cross train prepare_training prepare_demo",
    "attn_cli.batches": "explain_many trace_many LineError", "attn_cli.parquet": "ExplainParquet",
    "attn_cli.documents.explain": "document_header", "attn_cli.files": "write_file stream_descriptor",
    "attn_cli.settings": "Settings MAX_OCCURRENCES", "attn_cli.vectors.store": "Vectors",
    "attn_cli.vector_sets": "CachedSet cache_folder cached_vector_sets find_cached describe_vectors remove_cached "
                            "vector_leftovers remove_leftovers download_vectors export_vectors",
    "attn_cli.vectors.formats": "VECTOR_FORMATS", "attn_cli.engine.attention": "LayerSettings",
    "attn_cli.declared": "Declared declarations", "attn_cli.training.settings": "TrainingSettings DEMO_SETTINGS",
    "attn_cli.training.run": "TrainingRun Training", "attn_cli.training.weights": "TrainedLayer load_layer",
    "attn_cli.results": "ExplainResult TraceResult CompareResult CrossResult",
    "attn_cli.contexts": "senses occurrences group_senses Occurrences SensesResult SenseGroup example_corpus",
    "attn_cli.errors": "AttnError SettingsError InputError VectorsError WeightsError OutputError UnknownWordsWarning",
    "attn_cli.models": "MODELS Model load_model import_model imported_models remove_model",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}
__all__ = ["__version__", *_EXPORTS]

# ruff: noqa: F401 - these imports give type checkers the names __all__ takes from _MODULES
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
    if name not in _EXPORTS:
        raise AttributeError(f"module 'attn_cli' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
