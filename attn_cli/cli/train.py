"""`attn-cli train`: learn W_Q, W_K, W_V and W_O from text, show the held-out table, write the weights file.

The library does the work (attn_cli.training); this module reads the corpus, turns options into
TrainingSettings, shows a progress bar on a terminal, and decides what Ctrl-C keeps.
"""

from __future__ import annotations

import shlex
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Callable, Iterator, Optional

import typer

from attn_cli.cli.inputs import STDIN, input_lines
from attn_cli.cli.messages import as_options, fail, warn
from attn_cli.cli.options import OUTPUT_PANEL, VectorOptions, same_regular_file, with_vector_options
from attn_cli.cli.outputs import ReportOutputs, renderer, write_file
from attn_cli.documents.explain import document_header
from attn_cli.errors import InputError, UsageError
from attn_cli.literal import literal
from attn_cli.vectors.store import Vectors

if TYPE_CHECKING:
    from attn_cli.training.corpus import Corpus
    from attn_cli.training.weights import TrainedLayer

TRAIN_PANEL = "Training"
INTERRUPTED = 130
EXAMPLE = 'attn-cli explain "money bank grows"'


def _option(*flags: str, **kwargs) -> typer.models.OptionInfo:
    return typer.Option(*flags, rich_help_panel=TRAIN_PANEL, **kwargs)


@with_vector_options
def train(
    corpus: Annotated[Optional[str], typer.Argument(
        metavar="CORPUS", show_default=False,
        help="A text file, one sentence per line; - reads stdin.")] = None,
    out: Annotated[Optional[Path], _option("--out", metavar="FILE", show_default=False,
                                           help="Write the trained layer here (.npz).")] = None,
    demo: Annotated[bool, _option("--demo", help="Train on a generated task whose answer is known: a hidden "
                                                 "word given away by one cue word.")] = False,
    mask: Annotated[str, _option("--mask", metavar="none|causal",
                                 help="none: predict each word from the others. causal: predict the next "
                                      "word.")] = "none",
    heads: Annotated[int, _option("--heads", metavar="H", help="Number of heads.")] = 1,
    d_k: Annotated[Optional[int], _option("--d-k", metavar="N", help="Total width of Q, K, V (default: d).",
                                          show_default=False)] = None,
    positions: Annotated[str, _option("--positions", metavar="none|sinusoidal",
                                      help="Add sinusoidal position encodings to the inputs.")] = "none",
    seed: Annotated[int, _option("--seed", metavar="N", help="Seed of the initial weights and of the "
                                                              "shuffling.")] = 0,
    epochs: Annotated[Optional[int], _option("--epochs", metavar="N", show_default=False,
                                             help="Passes over the corpus (default 3).")] = None,
    batch_size: Annotated[Optional[int], _option("--batch-size", metavar="N", show_default=False,
                                                 help="Sentences per step (default 32; the demo's: 8).")] = None,
    learning_rate: Annotated[Optional[float], _option(
        "--learning-rate", metavar="R", show_default=False, help="Adam's step size (default 0.001; the demo's: "
                                                                 "0.01).")] = None,
    softmax_vocab: Annotated[Optional[int], _option(
        "--softmax-vocab", metavar="N", show_default=False,
        help="Predict among the N most frequent words (default 50,000).")] = None,
    keep_on_interrupt: Annotated[bool, _option("--keep-on-interrupt",
                                               help="On Ctrl-C, write the best weights so far.")] = False,
    *,
    source: VectorOptions,
    json: Annotated[bool, typer.Option("--json", rich_help_panel=OUTPUT_PANEL,
                                       help="Write the result as JSON to stdout.")] = False,
) -> int:
    """Learn W_Q, W_K, W_V and W_O of one attention layer from CORPUS; the vectors stay frozen."""
    from attn_cli.training.demo import DEMO_SETTINGS, demo_corpus  # here: every other command's start-up is spared
    from attn_cli.training.settings import TrainingSettings
    from attn_cli.training.run import finish, prepare

    target = output_file(out, corpus, demo, source.vectors)
    if demo and mask != "none":
        raise UsageError("--demo hides a word and asks the layer to find its cue (the masked-word objective); "
                         "leave out --mask causal")
    base = DEMO_SETTINGS if demo else TrainingSettings()
    settings = TrainingSettings(
        mask=mask, heads=heads, d_k=d_k, positions=positions, seed=seed,
        epochs=base.epochs if epochs is None else epochs,
        batch_size=base.batch_size if batch_size is None else batch_size,
        learning_rate=base.learning_rate if learning_rate is None else learning_rate,
        softmax_vocab=base.softmax_vocab if softmax_vocab is None else softmax_vocab)
    found = source.load(warn, progress=not json)
    generated = demo_corpus(found, seed=seed) if demo else None
    lines = generated.lines if generated is not None else corpus_lines(corpus)
    name = "the demo corpus (generated)" if demo else ("stdin" if corpus == STDIN else str(corpus))
    corpus_read, trainer = prepare(lines, found, settings)
    tell_skipped(corpus_read)
    started = time.perf_counter()
    try:
        with progress_bar(enabled=not json) as show:
            trainer.run(show)
        run = finish(trainer, found, name)
    except KeyboardInterrupt:  # while training or scoring the held-out split at the end
        return interrupted(trainer, found, name, target, keep_on_interrupt)
    save(run.layer, target)
    if trainer.best.epoch == 0:
        warn("training never beat the random start on the held-out sentences, so the file holds the random "
             "weights; lower --learning-rate, or add sentences")
    report = {**document_header("train"), "out": str(target),
              "weights": {**run.layer.describe(), "file": str(target)},
              "demo": None if generated is None else demo_block(trainer, generated)}
    outputs = ReportOutputs(renderer("train", "render_train"), style="json" if json else "tables", files={},
                            command_line="")
    outputs.show(report)
    again = shlex.join([*(["--vectors", source.vectors] if source.vectors else []),
                        *(["--limit", str(source.limit)] if source.limit else []), "--weights", str(target)])
    sys.stderr.write(f"attn-cli: wrote {literal(str(target))} in {time.perf_counter() - started:.1f} s; see it "
                     f"with: {EXAMPLE} {literal(again)}\n")
    return 0


def tell_skipped(corpus: Corpus) -> None:
    """One warning naming the sentences training leaves out, and why."""
    reasons = [f"{count:,} with {why}" for count, why in ((corpus.short, "fewer than 2 different known words"),
                                                         (corpus.long, "more than 200 known words")) if count]
    if reasons:
        warn(f"skipped {corpus.short + corpus.long:,} of {corpus.lines:,} sentences: {', '.join(reasons)}")


def output_file(out: Path | None, corpus: str | None, demo: bool, vectors: str | None) -> Path:
    """--out, checked before any work: given, a file in an existing folder, not the corpus or the vectors."""
    if demo == (corpus is not None):
        raise UsageError("give a CORPUS (a file, or - for stdin) or --demo, not both" if demo else
                         "give a CORPUS file, one sentence per line (- reads stdin), or --demo to train on a "
                         "generated task; e.g. attn-cli train --demo --out demo.npz")
    if out is None:
        raise UsageError("give --out FILE, where the trained layer goes; e.g. attn-cli train --demo --out demo.npz")
    if out.is_dir() or not out.parent.is_dir():
        raise UsageError(f"--out {out}: give a file name in an existing folder, e.g. --out layer.npz")
    if out.exists() and not out.is_file():
        raise UsageError(f"--out {out} is not a regular file (a device or a pipe); give a file name, e.g. "
                         "--out layer.npz")
    for flag, path in (("CORPUS", "/dev/stdin" if corpus == STDIN else corpus), ("--vectors", vectors)):
        if path and same_regular_file(out, Path(path)):
            raise UsageError(f"--out {out} is the {flag} input; writing it would replace it, so give --out "
                             "another file name")
    return out


def corpus_lines(corpus: str | None) -> Iterator[str]:
    """The corpus's sentences; an unreadable line is skipped with one warning at the end, naming the first."""
    unreadable: list[str] = []
    stdin = corpus == STDIN
    for line in input_lines(STDIN if stdin else None, None if stdin else Path(str(corpus)),
                            example="attn-cli train corpus.txt --out layer.npz", flag="CORPUS"):
        try:
            yield line.sentence()
        except InputError as exc:
            unreadable.append(line.located(as_options(exc)))
    if unreadable:
        warn(f"skipped {len(unreadable):,} unreadable line(s); the first: {unreadable[0]}")


def save(layer: TrainedLayer, target: Path) -> None:
    """Write the weights file atomically; a failure is a usage error naming --out."""
    from attn_cli.training.weights import layer_bytes

    write_file(target, "--out", layer_bytes(layer))


def interrupted(trainer, vectors: Vectors, name: str, target: Path, keep: bool) -> int:
    """Ctrl-C: keep the best weights so far only when asked (and only if an epoch has ended), then exit 130."""
    from attn_cli.training.run import finish

    if not keep:
        fail("interrupted; nothing written (pass --keep-on-interrupt to keep the best weights so far)",
             kind="warning")
    elif trainer.best.epoch == 0:
        fail("interrupted before the first epoch ended; nothing learnt, nothing written", kind="warning")
    else:
        save(finish(trainer, vectors, name).layer, target)
        fail(f"interrupted; wrote the best weights so far (epoch {trainer.best.epoch}) to {target}", kind="warning")
    return INTERRUPTED


def demo_block(trainer, generated) -> dict:
    """What the demo adds to the report: the cue weights of the three layers and one of its pairs."""
    from attn_cli.training.demo import cue_weights

    cue, answer = next(iter(generated.answers.items()))
    return {"pairs": len(generated.answers), "example": [cue, answer], "cue_weight": cue_weights(trainer, generated)}


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable]:
    """A transient bar on stderr (epoch, sentences, running loss, sentences/s) when stderr is a terminal."""
    if not (enabled and sys.stderr.isatty()):
        yield lambda progress: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("epoch {task.fields[epoch]}"), BarColumn(bar_width=20), MofNCompleteColumn(),
               TextColumn("sentences, loss {task.fields[loss]:.3f}, {task.fields[rate]:,.0f}/s"),
               TimeRemainingColumn())
    started = time.perf_counter()
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("", total=None, epoch="1", loss=0.0, rate=0.0)

        def show(progress) -> None:
            rate = progress.sentences / max(time.perf_counter() - started, 1e-9)
            bar.update(task, completed=progress.sentences, total=progress.total, loss=progress.loss, rate=rate,
                       epoch=f"{progress.epoch}/{progress.epochs}")

        yield show
