"""--fields: keep only the named dotted paths of each JSON document (`shifts.cosine` takes `cosine` from every
shift), the valid paths read from the command's JSON Schema so the list cannot drift from the documents."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from attn_cli.errors import UsageError

ALWAYS_KEPT = ("schema_version", "command", "line", "id", "error")  # what says what a line is survives every selection
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent

Selection = dict  # name -> True (keep whole) or a nested Selection


@lru_cache(maxsize=None)
def available_fields(command: str) -> tuple[str, ...]:
    """Every dotted path the command's documents may hold, in schema order (the schema installed with the
    package, else the checkout's)."""
    for folder in (_PACKAGE_ROOT / "schemas", _PACKAGE_ROOT.parent / "schemas"):
        if (folder / f"{command}.schema.json").is_file():
            schema = json.loads((folder / f"{command}.schema.json").read_text(encoding="utf-8"))
            return tuple(_paths(schema, schema, ""))
    raise UsageError(f"the JSON schema of {command} is missing from this installation; reinstall attn-cli")


def _paths(node: dict, root: dict, prefix: str):
    for name, child in _resolve(node, root).get("properties", {}).items():
        yield prefix + name
        child = _resolve(child, root)
        inner = _resolve(child.get("items", {}), root) if child.get("type") == "array" else child
        if "properties" in inner:
            yield from _paths(inner, root, f"{prefix}{name}.")


def _resolve(node: dict, root: dict) -> dict:
    """Follow a local "$ref" (#/$defs/name); other nodes are returned as they are."""
    reference = node.get("$ref", "")
    if not reference.startswith("#/"):
        return node
    for part in reference[2:].split("/"):
        root = root[part]
    return root


def parse_selection(text: str, command: str) -> Selection:
    """--fields' comma-separated paths as a tree; an unknown path is a usage error naming the valid fields at its
    deepest known level."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise UsageError("--fields needs names, e.g. --fields tokens,shifts.cosine (--fields alone lists them)")
    known = available_fields(command)
    tree: Selection = {}
    for name in names:
        if name not in known:
            parent = name.rpartition(".")[0]
            while parent and parent not in known:
                parent = parent.rpartition(".")[0]
            prefix = f"{parent}." if parent else ""
            siblings = [path[len(prefix):] for path in known
                        if path.startswith(prefix) and "." not in path[len(prefix):]]
            where = f"{parent} has" if parent else f"{command} documents have"
            raise UsageError(f"--fields: unknown field {name!r}; {where}: {', '.join(siblings)} (--fields alone lists "
                             "every dotted path)")
        node = tree
        *parents, leaf = name.split(".")
        for part in parents:
            if node.get(part) is True:
                break  # a parent is already kept whole
            node = node.setdefault(part, {})
        else:
            node[leaf] = True
    return tree


def select(value, selection: Selection, kept: tuple[str, ...] = ALWAYS_KEPT):
    """The document with only the selected fields (and `kept` at its top level), in its own key order."""
    if isinstance(value, dict):
        return {key: item if key in kept or selection[key] is True else select(item, selection[key], ())
                for key, item in value.items() if key in kept or key in selection}
    if type(value) is list:
        return [select(item, selection, ()) for item in value]
    if isinstance(value, list):  # a list a document marked (as checked) stays marked, its count of numbers a bound
        chosen = value.__class__(select(item, selection, ()) for item in value)
        chosen.__dict__.update(value.__dict__)
        return chosen
    return value  # null where an object may be absent (e.g. trace's "inputs")
