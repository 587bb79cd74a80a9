"""`attn-cli senses WORD --file FILE`: one word across a corpus, its contextual outputs grouped by the library's
two steps (`occurrences`, then `group_senses`); this reads the corpus and labels and writes the result."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Iterator, Optional

import typer

from attn_cli.cli.inputs import STDIN, InputLine, input_lines, read_back
from attn_cli.cli.messages import warn
from attn_cli.cli.options import EngineOptions, Parquet, _option
from attn_cli.cli.outputs import ReportOutputs, command_line, renderer, status_bar, write_target, writing
from attn_cli.errors import UsageError, flag, shorten, shown_path
from attn_cli import MAX_OCCURRENCES, LayerSettings, Settings, Vectors, declarations

if TYPE_CHECKING:

    from attn_cli import Occurrences

SENSES_PANEL = "Senses"
EXAMPLE = "attn-cli senses bank --file corpus.txt"
STDIN_EXAMPLE = "cat corpus.txt | attn-cli senses bank -"
SCAN_SETTINGS = ("oov", "max_tokens")  # which lines a scan attends: fixed in its table
SEARCH_SETTINGS = ("neighbors", "neighbor_vocab")  # the grouping's neighbour searches: a table's may change


def senses(
    ctx: typer.Context,
    word: Annotated[str, typer.Argument(metavar="WORD", show_default=False,
                                        help="The word to follow through every sentence that holds it.")],
    source: Annotated[Optional[str], typer.Argument(
        metavar="[-]", show_default=False, help="- reads the corpus from stdin, one sentence per line.")] = None,
    clusters: Annotated[Optional[int], _option(
        "--clusters", panel=SENSES_PANEL, metavar="K", min=1, show_default=False,
        help="Group the occurrences into K groups (default: the K in 2..8 with the best silhouette).")] = None,
    labels: Annotated[Optional[Path], _option(
        "--labels", panel=SENSES_PANEL, metavar="FILE", show_default=False,
        help="One label per corpus line (any text): adds each occurrence's label, purity, adjusted Rand index, the "
             "misgrouped occurrences and the sense probe.")] = None,
    cluster_seed: Annotated[int, _option(
        "--cluster-seed", panel=SENSES_PANEL, metavar="N", min=0, max=2**32 - 1,  # group_senses' MAX_SEED
        help="Seed of k-means' starting centres: the same seed, the same groups.")] = 0,
    max_occurrences: Annotated[int, _option(
        "--max-occurrences", panel=SENSES_PANEL, metavar="N", min=1,
        help="Stop when the corpus, or a Parquet table read, holds more occurrences: they are all kept, so a stream "
             "that never ends stops.")] = MAX_OCCURRENCES,
    occurrences_file: Annotated[Optional[Path], _option(
        "--occurrences", panel=SENSES_PANEL, metavar="FILE", show_default=False,
        help="Group the occurrences of a Parquet table (senses --parquet, or the Dask recipe) instead of a "
             "corpus.")] = None,
    example: Annotated[bool, _option(
        "--example", panel=SENSES_PANEL,
        help="Read the bundled corpus (40 sentences of a river bank or a money bank) and its labels instead of "
             "--file.")] = False,
    color_by: Annotated[str, _option(
        "--color-by", panel=SENSES_PANEL, metavar="group|label",
        help="Colour the scatter of --html and --svg by group, or by label (with --labels or --example).")] = "group",
    parquet: Parquet = None,
) -> None:
    """Group WORD's contextual outputs across a corpus: which senses, pulled by which words; --labels scores them."""
    engine = EngineOptions.of(ctx)
    settings = engine.settings()
    check_corpus(source, engine.file, occurrences_file, example, labels)
    check_color_by(color_by, labels is not None or example, engine.html is not None or engine.svg is not None)
    files = engine.picture_files(stdin=source == STDIN, parquet=parquet,
                                 inputs={"--occurrences": occurrences_file, "--labels": labels})
    label_lines = None if labels is None else opened_labels(labels)
    outputs = ReportOutputs(renderer("senses", "render_senses"), style="json" if engine.json else "tables",
                            files={}, command_line=command_line(ctx))
    loaded = engine.load(warn, progress=not engine.json)
    from attn_cli import example_corpus, group_senses, occurrences  # the senses library loads when it runs
    from attn_cli.render.senses_page import scatter_svg, senses_page

    bundled = example_corpus() if example else None
    unreadable: list[InputLine] = []
    with status_bar(not engine.json, status_line, description="reading", lines=0) as show:
        lines = bundled[0] if bundled else corpus_lines(source, engine.file, unreadable)
        table = (occurrences(word, lines, vectors=loaded, settings=settings, progress=lambda read: show(lines=read),
                             max_occurrences=max_occurrences) if occurrences_file is None else
                 tabled(word, occurrences_file, loaded, settings, engine.given, max_occurrences))
        show(description=f"grouping {len(table):,} occurrences")
        label_list = bundled[1] if bundled else None if label_lines is None else read_labels(
            label_lines, int(table.line[-1]) if len(table) else table.first_line)[table.first_line - 1:]
        result = group_senses(table, clusters=clusters, labels=label_list, seed=cluster_seed)
    document = result.to_dict()
    if unreadable:  # the command line's count: the library is given text
        document["corpus"]["unreadable_lines"] = len(unreadable)
    if parquet is not None:  # the files first: one that cannot be written leaves nothing on stdout
        with writing(parquet, "--parquet"):
            result.write_parquet(parquet)
    for option, path in files.items():  # --html (the page) and --svg (the scatter), each whole or not at all
        if option != "--parquet":
            write_target(path, option, senses_page(document, outputs.command_line, color_by) if option == "--html"
                         else scatter_svg(document, standalone=True, color_by=color_by))
    outputs.show(document)


def check_corpus(source: Optional[str], file: Optional[Path], occurrences_file: Optional[Path], example: bool,
                 labels: Optional[Path]) -> None:
    if source not in (None, STDIN):
        raise UsageError(f"senses takes one WORD, then the corpus from --file FILE or - (stdin), not "
                         f"{shorten(source, 40)!r}; e.g. {EXAMPLE}")
    if [source, file, occurrences_file, example or None].count(None) != 3:
        raise UsageError(f"give the corpus once: --file FILE, or - to read it from stdin (or a table of its "
                         f"occurrences with --occurrences FILE, or --example); e.g. {EXAMPLE}")
    if example and labels is not None:
        raise UsageError(f"--example brings its own labels; leave out --labels {shorten(str(labels), 80)}, or give "
                         "the corpus with --file")


def check_color_by(color_by: str, labelled: bool, pictured: bool) -> None:
    """--color-by: one of the scatter's colourings, and only with a scatter (and labels) it would colour."""
    from attn_cli.render.senses_page import COLOR_BY

    if color_by not in COLOR_BY:
        raise UsageError(f"--color-by takes {' or '.join(COLOR_BY)}, not {shorten(color_by, 40)!r}")
    if color_by != COLOR_BY[0] and not pictured:
        raise UsageError(f"--color-by {color_by} colours the scatter of --html and --svg; add one (e.g. --html "
                         "senses.html), or leave out --color-by")
    if color_by == "label" and not labelled:
        raise UsageError("--color-by label needs the corpus's labels: give --labels FILE (one label per corpus line), "
                         "or try attn-cli senses bank --example --color-by label --html senses.html")


def tabled(word: str, path: Path, vectors: Vectors, settings: Settings, typed: frozenset[str],
           most: int) -> Occurrences:
    """--occurrences: the table a scan wrote, for `word` only. An option of the scan typed here (`typed`) would be
    silently unused, so it is refused; the neighbour searches run on the groups, so theirs are used."""
    given = [flag(name) for name in [*declarations(LayerSettings), *SCAN_SETTINGS] if name in typed]
    if given:
        raise UsageError(f"--occurrences {shown_path(path)} holds what its scan found with its own settings; leave "
                         f"out {', '.join(given)}")
    read_back(path, f"--occurrences {shown_path(path)}")
    from attn_cli import Occurrences  # the senses library loads when it runs, not with every command

    table = Occurrences.read_parquet(path, vectors=vectors, weights=settings.weights, max_occurrences=most)
    if table.word != word:
        raise UsageError(f"--occurrences {shown_path(path)} holds the occurrences of {shorten(table.word)!r}, not "
                         f"{shorten(word)!r}; give attn-cli senses {shorten(table.word)} --occurrences "
                         f"{shown_path(path)}")
    searches = {name: getattr(settings, name) for name in SEARCH_SETTINGS if name in typed}
    return replace(table, settings=replace(table.settings, **searches)) if searches else table


def corpus_lines(source: Optional[str], file: Optional[Path], unreadable: list[InputLine]) -> Iterator[str]:
    """Each line of the corpus as text, a blank or unreadable one empty so line numbers and labels keep their
    places; the unreadable ones go to `unreadable`, with one warning at the end."""
    for line in input_lines(source, file, example=STDIN_EXAMPLE, blanks=True):
        if line.error is not None:
            unreadable.append(line)
        yield line.text or ""
    if unreadable:
        warn(f"skipped {len(unreadable):,} unreadable line(s); the first: "
             f"{unreadable[0].located(unreadable[0].error or '')}")


def opened_labels(path: Path) -> Iterator[InputLine]:
    """--labels' lines, the first read now: a missing file fails before the corpus is read."""
    lines = input_lines(None, path, example="printf 'river\\nmoney\\n' > labels.txt", flag="--labels",
                        source=f"--labels {shown_path(path)}",  # its lines are named with the option
                        kind="label", blanks=True)
    first = next(lines, None)
    return lines if first is None else itertools.chain([first], lines)


def read_labels(lines: Iterator[InputLine], corpus_lines: int) -> list[str]:
    """The label of each corpus line from line 1, read up to one past line `corpus_lines` (the last holding an
    occurrence), so a stream that never ends stops."""
    labels: list[str] = []
    for line in lines:
        labels.append(line.sentence().strip())
        if len(labels) > corpus_lines:
            break
    return labels


def status_line(rich):
    return rich.SpinnerColumn(), rich.TextColumn("{task.description} ({task.fields[lines]:,} lines read)"), \
        rich.TimeElapsedColumn()
