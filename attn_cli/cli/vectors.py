"""`attn-cli vectors import|info|list|remove|download`: manage vector sets and the cache.

Thin like cli.py: each command resolves its input, calls the vectors library,
builds one report document and either writes it as JSON or prints it.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path
from typing import Annotated, Optional, Sequence

import typer

from attn_cli.errors import VectorsError
from attn_cli.literal import literal
from attn_cli.cli.messages import warn
from attn_cli.cli.options import HelpInOrder, VectorFormat, examples
from attn_cli.render.json_out import write_json
from attn_cli.api import load_vectors
from attn_cli.vectors.cache import cache_root, cached_sets, folder_size, read_meta, CorruptCache
from attn_cli.vectors.store import Vectors

SCHEMA_VERSION = 1
vectors_app = typer.Typer(help="Import, inspect, list, remove and download vector sets. Imported sets live in "
                               "the cache: $ATTN_CLI_CACHE, else $XDG_CACHE_HOME/attn-cli, else ~/.cache/attn-cli.",
                          epilog=examples("attn-cli vectors list", "attn-cli vectors import --help"),
                          no_args_is_help=True)

Json = Annotated[bool, typer.Option("--json", help="Write one JSON document to stdout.")]


@vectors_app.command("import", cls=HelpInOrder, epilog=examples("attn-cli vectors import vectors.txt",
                                                                "attn-cli vectors import vectors.txt --limit 2"))
def import_(
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="A vector file or a gensim-data name.")],
    file_format: Annotated[Optional[VectorFormat], typer.Option(
        "--format", metavar="FORMAT", help="glove, word2vec, word2vec-binary, fasttext-bin or gensim-pickle "
                                           "(default: detected).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", metavar="N",
                                                 help="Keep the first (most frequent) N words.")] = None,
    skip_bad_lines: Annotated[bool, typer.Option("--skip-bad-lines", help="Leave out malformed lines.")] = False,
    trust_pickle: Annotated[bool, typer.Option("--trust-pickle", help="Allow gensim .kv/.model pickles (loading "
                                                                      "one can run code).")] = False,
    json: Json = False,
) -> None:
    """Import SOURCE into the cache now (later runs map it in milliseconds) and describe it."""
    vectors = load_vectors(source, limit=limit, format=file_format.value if file_format else None,
                           skip_bad_lines=skip_bad_lines, trust_pickle=trust_pickle, progress=not json, warn=warn)
    _show(info_report(vectors), json)


@vectors_app.command(cls=HelpInOrder, epilog=examples("attn-cli vectors info vectors.txt"))
def info(
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="A cache id (see list), vector file or "
                                                              "gensim-data name.")],
    json: Json = False,
) -> None:
    """Describe a cached set (never imports): words, dims, format, source fingerprint, what the import met."""
    from attn_cli.vectors.cache import load_cached

    folders = _matching_folders(source)
    if not folders:
        raise VectorsError(f"{source} is not cached (attn-cli vectors list shows what is); import it first: "
                           f"attn-cli vectors import {shlex.quote(source)}")
    folder = folders[0]  # the newest, as list shows them
    try:
        vectors = load_cached(folder)
    except CorruptCache as exc:
        raise VectorsError(f"the cache folder {folder} is corrupt ({exc}); remove it with "
                           f"attn-cli vectors remove {folder.name}") from exc
    _show(info_report(vectors), json)


@vectors_app.command("list", cls=HelpInOrder, epilog=examples("attn-cli vectors list --json"))
def list_(json: Json = False) -> None:
    """List the cached vector sets, newest first."""
    entries: list[dict] = []
    for folder, meta in cached_sets():
        meta = meta or {}
        entries.append({"id": folder.name, "name": meta.get("name"), "format": meta.get("format"),
                        "count": meta.get("count"), "dims": meta.get("dims"), "bytes": folder_size(folder),
                        "corrupt": not meta})
    report: dict = {"schema_version": SCHEMA_VERSION, "command": "vectors list", "cache": str(cache_root()),
              "sets": entries}
    if json:
        write_json(report)
        return
    print(literal(f"cache: {report['cache']}"))
    rows = [(entry["id"], "corrupt" if entry["corrupt"] else f"{entry['count']:,} x {entry['dims']}",
             "" if entry["corrupt"] else entry["format"], f"{entry['bytes'] / 1e6:,.1f} MB", entry["name"] or "")
            for entry in entries]
    print("\n".join(aligned(rows, right=(1, 3))) if rows else "  (empty: attn-cli vectors import FILE adds one)")


@vectors_app.command(cls=HelpInOrder, epilog=examples("attn-cli vectors remove vectors.txt"))
def remove(
    source: Annotated[Optional[str], typer.Argument(metavar="SOURCE", help="A cache id (see list), vector file "
                                                                           "or gensim-data name.")] = None,
    all_sets: Annotated[bool, typer.Option("--all", help="Remove every cached set.")] = False,
    json: Json = False,
) -> None:
    """Delete a cached set (the source file is never touched)."""
    if all_sets == (source is not None):
        from attn_cli.errors import UsageError

        raise UsageError("name one cached set (attn-cli vectors list shows them) or pass --all")
    folders = [folder for folder, _ in cached_sets()] if all_sets or source is None else _matching_folders(source)
    if not folders and not all_sets:
        raise VectorsError(f"nothing cached for {source}; attn-cli vectors list shows what is cached")
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    report = {"schema_version": SCHEMA_VERSION, "command": "vectors remove", "removed": [f.name for f in folders]}
    if json:
        write_json(report)
    else:
        print("\n".join(literal(f"removed {folder}") for folder in folders) if folders else "the cache is empty")


@vectors_app.command(cls=HelpInOrder, epilog=examples("attn-cli vectors download glove-wiki-gigaword-50"))
def download(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A gensim-data model, e.g. glove-wiki-gigaword-100.")],
    json: Json = False,
) -> None:
    """Fetch a gensim-data model over HTTPS, check its MD5, store it in $GENSIM_DATA_DIR (nothing is run)."""
    from attn_cli.vectors import gensim_data

    path = gensim_data.download(name, show_progress=not json)
    report: dict = {"schema_version": SCHEMA_VERSION, "command": "vectors download", "name": name, "path": str(path),
              "bytes": path.stat().st_size}
    if json:
        write_json(report)
    else:
        print(literal(f"{name}: {path} ({report['bytes'] / 1e6:,.1f} MB); use it with --vectors {name}"))


def info_report(vectors: Vectors) -> dict:
    """The description of one vector set: the shape, the provenance and what its import met."""
    details = dict(vectors.details)
    folder = details.get("cache")
    if folder and not Path(folder).is_dir():  # read without a cache (its folder could not be written)
        folder = None
    meta = read_meta(Path(folder)) if folder else {}
    return {
        "schema_version": SCHEMA_VERSION, "command": "vectors info", "name": vectors.name,
        "format": details.get("format"), "count": vectors.count, "dims": vectors.dims, "lowercase": vectors.lowercase,
        "cache": {"path": folder, "bytes": folder_size(Path(folder))} if folder else None,
        "source": meta.get("source"), "limit": meta.get("limit"), "header_count": meta.get("header_count"),
        "duplicates": meta.get("duplicates", 0), "bad_lines": meta.get("bad_lines", 0),
        "invalid_utf8_words": meta.get("invalid_utf8_words", 0),
    }


def _show(report: dict, json: bool) -> None:
    if json:
        write_json(report)
        return
    rows = [(f"{key} {label}".strip(), f"{item:,}" if isinstance(item, int) and not isinstance(item, bool) else
             str(item))
            for key, value in report.items() if key not in ("schema_version", "command") and value not in (None, 0, {})
            for label, item in (value.items() if isinstance(value, dict) else [("", value)])]
    print("\n".join(aligned(rows, indent="")))


def aligned(rows: Sequence[Sequence[str]], right: tuple[int, ...] = (), indent: str = "  ") -> list[str]:
    """Rows as lines of columns two spaces apart, each column as wide as its widest cell (numbers in the
    `right` columns right-aligned), with no trailing spaces; cells from input (names, paths) shown literally."""
    rows = [[literal(cell) for cell in row] for row in rows]
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return [(indent + "  ".join(cell.rjust(width) if k in right else cell.ljust(width)
                                for k, (cell, width) in enumerate(zip(row, widths)))).rstrip() for row in rows]


def _cache_folder(name: str) -> Path | None:
    folder = cache_root() / "v1" / name
    return folder if "/" not in name and folder.is_dir() else None


def _matching_folders(source: str) -> list[Path]:
    """The cache folder named `source`, or every folder imported from the file (or gensim-data set) `source`
    names, newest first; none for a name that is neither (no error: the caller says what to do)."""
    folder = _cache_folder(source)
    if folder is not None:
        return [folder]
    from attn_cli.vectors import gensim_data

    path = Path(source).expanduser()
    if not path.is_file():
        try:
            path = gensim_data.resolve(source)
        except VectorsError:
            return []
    resolved = str(path.resolve())
    return [f for f, meta in cached_sets() if meta and meta.get("source", {}).get("path") == resolved]
