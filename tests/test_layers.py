"""The package's layers, read from the source: data flows one way and nothing imports upward or in a circle.

base (errors, version, labels, files, declared) <- vectors <- engine <- training (and models) <- documents <- render
    <- (settings, results, api) <- cli
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "attn_cli"
ALLOWED = {  # layer -> the layers its modules may import (its own included)
    "base": {"base"},
    "vectors": {"base", "vectors"},
    "engine": {"base", "vectors", "engine"},
    "training": {"base", "vectors", "engine", "training"},
    "documents": {"base", "vectors", "engine", "training", "documents"},
    "render": {"base", "render"},
    "library": {"base", "vectors", "engine", "training", "documents", "render", "library"},
    "cli": {"base", "vectors", "engine", "training", "documents", "render", "library", "cli"},
}
NO_USER_INTERFACE = ("engine", "training", "documents")  # pure numpy and plain data: no Rich, no Typer


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str | None:
    """The layer of an attn_cli module; None for the package root (it only holds the version and lazy names)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    return {"errors": "base", "version": "base", "labels": "base", "files": "base",
            "declared": "base", "settings": "library",
            "results": "library", "api": "library", "batches": "library",
            "vector_sets": "library", "contexts": "library", "parquet": "library",
            "models": "training"}.get(parts[1], parts[1])  # models: pretrained layers, beside the trained ones


def imports(path: Path) -> set[str]:
    """Every module this file imports, at the top or inside functions (TYPE_CHECKING blocks included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)  # from package import module
    return found


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
GRAPH = {module: {name for name in imports(path) if name in MODULES and name != module}
         for module, path in MODULES.items()}


@pytest.mark.parametrize("module", [m for m in MODULES if layer(m) is not None and not m.endswith("__main__")])
def test_no_module_imports_a_higher_layer(module):
    upward = {name for name in GRAPH[module] if layer(name) is not None and layer(name) not in ALLOWED[layer(module)]}
    assert not upward, f"{module} ({layer(module)}) imports {sorted(upward)}"


@pytest.mark.parametrize("module", [m for m in MODULES if layer(m) in NO_USER_INTERFACE])
def test_the_engine_and_documents_use_no_terminal_library(module):
    external = {name.split(".")[0] for name in imports(MODULES[module])}
    assert not external & {"rich", "typer", "click"}, module


def test_there_is_no_import_cycle():
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for name in sorted(GRAPH[module]):
            if state.get(name) == "open":
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(name):] + [name]))
            if name not in state:
                visit(name, path + [name])
        state[module] = "done"

    for module in MODULES:
        if module not in state:
            visit(module, [module])
