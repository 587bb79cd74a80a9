"""`attn-cli train`: the library learns the layer (attn_cli.prepare_training, prepare_demo); this reads the
corpus, shows a progress bar on a terminal, writes the weights file and decides what Ctrl-C keeps."""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Iterator, Optional

import typer

from attn_cli import DEMO_SETTINGS, TrainingSettings, declarations, document_header, prepare_demo, prepare_training
from attn_cli.cli.inputs import STDIN, input_lines
from attn_cli.cli.messages import say, warn
from attn_cli.cli.options import (TRAIN_PANEL, EngineOptions, Format, Json, Limit, Quiet, SkipBadLines, TrustPickle,
                                  VectorsOption, _option, output_target, picked, setting)
from attn_cli.cli.outputs import ReportOutputs, renderer, status_bar, write_target
from attn_cli.errors import INTERRUPTED, UsageError, literal

if TYPE_CHECKING:  # the training run's modules load when a run starts, not with every command
    from attn_cli import Training

EXAMPLE = 'attn-cli explain "money bank grows"'
PLAIN = TrainingSettings()


def training(name: str) -> Any:
    """TrainingSettings' option `name`; one the demo sets otherwise defaults to None, its help naming both."""
    plain, demo = getattr(PLAIN, name), getattr(DEMO_SETTINGS, name)
    return setting(name, TrainingSettings, "" if plain == demo else f"Default {plain:,}; the demo's: {demo:,}.")


def train(
    corpus: Annotated[Optional[str], typer.Argument(
        metavar="CORPUS", show_default=False,
        help="A text file, one sentence per line; - reads stdin.")] = None,
    out: Annotated[Optional[Path], _option("--out", panel=TRAIN_PANEL, metavar="FILE", show_default=False,
                                           help="Write the trained layer here (.npz).")] = None,
    demo: Annotated[bool, _option(
        "--demo", panel=TRAIN_PANEL,
        help="Train on generated sentences of ten topics, bank in money and river ones: see it learn bank's two "
             "senses.")] = False,
    keep_on_interrupt: Annotated[bool, _option("--keep-on-interrupt", panel=TRAIN_PANEL,
                                               help="On Ctrl-C, write the best weights so far.")] = False,
    mask: Annotated[str, training("mask")] = PLAIN.mask,
    heads: Annotated[int, training("heads")] = PLAIN.heads,
    d_k: Annotated[Optional[int], training("d_k")] = PLAIN.d_k,
    positions: Annotated[str, training("positions")] = PLAIN.positions,
    seed: Annotated[int, training("seed")] = PLAIN.seed,
    softmax_vocab: Annotated[Optional[int], training("softmax_vocab")] = None,
    learning_rate: Annotated[Optional[float], training("learning_rate")] = None,
    batch_size: Annotated[Optional[int], training("batch_size")] = None,
    epochs: Annotated[int, training("epochs")] = PLAIN.epochs,
    max_words: Annotated[int, training("max_words")] = PLAIN.max_words,
    max_sentences: Annotated[int, training("max_sentences")] = PLAIN.max_sentences,
    json: Json = False,
    quiet: Quiet = False,
    vectors: VectorsOption = None, format: Format = None, limit: Limit = None, skip_bad_lines: SkipBadLines = False,
    trust_pickle: TrustPickle = False,
) -> int:
    """Learn W_Q, W_K, W_V and W_O of one attention layer from CORPUS; the vectors stay frozen."""
    values = locals()
    source: EngineOptions = picked(EngineOptions, values)
    changes = {name: values[name] for name in declarations(TrainingSettings) if values[name] is not None}
    target = output_file(out, corpus, demo, source.vectors)
    if demo and changes.get("mask", "none") != "none":
        raise UsageError("--demo hides a word and asks the layer to predict it from its topic (the masked-word "
                         "objective); leave out --mask causal")
    found = source.load(warn, progress=not json)
    training = prepare_demo(vectors=found, **changes) if demo else prepare_training(
        corpus_lines(corpus), vectors=found, corpus_name="stdin" if corpus == STDIN else str(corpus),
        settings=TrainingSettings(**changes))
    if training.skipped:
        warn(training.skipped)
    started = time.perf_counter()
    try:
        with status_bar(not json, progress_line, epoch="1", loss=0.0, rate=0.0) as show:
            run = training.run(lambda progress: show(
                completed=progress.sentences, total=progress.total, loss=progress.loss, epoch=f"{progress.epoch}/"
                f"{progress.epochs}", rate=progress.sentences / max(time.perf_counter() - started, 1e-9)))
    except KeyboardInterrupt:  # while training or scoring the held-out split at the end
        return interrupted(training, target, keep_on_interrupt)
    write_target(target, "--out", run.layer.to_bytes())
    if training.best_epoch == 0:
        warn("training never beat the random start on the validation sentences, so the file holds the random "
             "weights; lower --learning-rate, or add sentences")
    for warning in run.warnings:
        warn(warning["message"])
    report = {**document_header("train"), "out": str(target),
              "weights": {**run.layer.describe(), "file": str(target)}, "demo": run.demo, "warnings": run.warnings}
    ReportOutputs(renderer("train", "render_train"), style="json" if json else "tables", files={},
                  command_line="").show(report)
    again = shlex.join([*(["--vectors", source.vectors] if source.vectors else []),
                        *(["--limit", str(source.limit)] if source.limit else []), "--weights", str(target)])
    reusable = target.is_file() and not os.path.abspath(target).startswith(("/dev/", "/proc/"))  # not a stream
    advice = (f"see it with: {EXAMPLE} {literal(again)}" if reusable else
              "a stream, which no --weights can read back: train with --out FILE to keep the layer")
    say(f"attn-cli: wrote {literal(str(target))} in {time.perf_counter() - started:.1f} s; {advice}")
    return 0


def output_file(out: Path | None, corpus: str | None, demo: bool, vectors: str | None) -> Path:
    """--out, checked before any work: given, a file in an existing folder, not the corpus or the vectors."""
    if demo == (corpus is not None):
        raise UsageError("give a CORPUS (a file, or - for stdin) or --demo, not both" if demo else
                         "give a CORPUS file, one sentence per line (- reads stdin), or --demo to train on a "
                         "generated task; e.g. attn-cli train --demo --out demo.npz")
    if out is None:
        raise UsageError("give --out FILE, where the trained layer goes; e.g. attn-cli train --demo --out demo.npz")
    read = {"CORPUS": "/dev/stdin" if corpus == STDIN else corpus, "--vectors": vectors}
    output_target("--out", out, "layer.npz", {flag: Path(path) for flag, path in read.items() if path})
    if out.exists() and not out.is_file():
        raise UsageError(f"--out {out} is not a regular file (a device or a pipe); give a file name, e.g. "
                         "--out layer.npz")
    return out


def corpus_lines(corpus: str | None) -> Iterator[str]:
    """The corpus's sentences; a line that is not UTF-8 ends the run (the rest is not the corpus the user gave)."""
    stdin = corpus == STDIN
    for line in input_lines(STDIN if stdin else None, None if stdin else Path(str(corpus)),
                            example="attn-cli train corpus.txt --out layer.npz", flag="CORPUS"):
        yield line.sentence()


def interrupted(training: Training, target: Path, keep: bool) -> int:
    """Ctrl-C: keep the best weights so far only when asked (and only if an epoch beat the start); exit 130."""
    ended = training.epochs_done
    if not keep:
        warn(f"interrupted after {ended} epoch(s); nothing written (to stop a run early and keep its best weights, "
             "run again with --keep-on-interrupt, or ask for fewer --epochs)")
    elif ended == 0:
        warn("interrupted before the first epoch ended; nothing learnt, nothing written (fewer --epochs will not "
             "help: an epoch is one pass over the corpus; train on fewer sentences to finish one sooner)")
    elif training.best_epoch == 0:
        warn(f"interrupted after {ended} epoch(s), none better than the random start on the validation sentences; "
             "nothing written (lower --learning-rate, or add sentences)")
    else:
        write_target(target, "--out", training.result().layer.to_bytes())
        warn(f"interrupted; wrote the best weights so far (epoch {training.best_epoch}) to {target}")
    return INTERRUPTED


def progress_line(rich):  # epoch, sentences, running loss, sentences/s
    return (rich.TextColumn("epoch {task.fields[epoch]}"), rich.BarColumn(bar_width=20), rich.MofNCompleteColumn(),
            rich.TextColumn("sentences, loss {task.fields[loss]:.3f}, {task.fields[rate]:,.0f}/s"),
            rich.TimeRemainingColumn())
