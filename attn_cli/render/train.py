"""The table a training run ends with: the held-out split scored by raw attention, random start and trained layer."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from attn_cli.render.terminal import right, simple

LAYER_NAMES = {"raw": "raw attention", "random": "random start", "trained": "trained layer"}


def render_train(report: dict, console: Console) -> None:
    weights = report["weights"]
    corpus, training = weights["corpus"], weights["training"]
    stopped = f" (interrupted; best epoch {training['best_epoch']})" if training["interrupted"] else (
        f", best epoch {training['best_epoch']}")
    asked = training["epochs_asked"]
    console.print(Text(f"Trained on {corpus['name']}: {corpus['train_sentences']:,} sentences, "
                       f"{corpus.get('validation_sentences', 0):,} to choose the best epoch, "
                       f"{corpus['held_out_sentences']:,} held out; {training['epochs']} of {asked} "
                       f"epoch{'s' if asked != 1 else ''}{stopped}", style="bold"))
    console.print(f"{weights['layer']['objective']} objective, {weights['layer']['heads']} head(s), "
                  f"d_k {weights['layer']['d_k']}, mask {weights['layer']['mask']}, positions "
                  f"{weights['layer']['positions']}, predicting among {training['softmax_vocab']:,} words")
    demo = report.get("demo")
    leads: dict = demo["sense_lead"] if demo is not None else {}
    sentences = list(leads.get("trained", {}))
    table = simple("held-out split", right("loss"), right("acc@1"), right("acc@10"),
                   *(right(f"“{sentence}”") for sentence in sentences), pad_edge=False)
    for row in weights["evaluation"]:
        cells = [LAYER_NAMES[row["layer"]], f"{row['loss']:.3f}", f"{row['accuracy_at_1']:.1%}",
                 f"{row['accuracy_at_10']:.1%}"]
        table.add_row(*cells, *[f"{leads[row['layer']][sentence]:+.3f}" for sentence in sentences])
    console.print(table)
    predictions = weights["evaluation"][0]["predictions"]
    console.print(f"loss: mean cross-entropy (nats) of the {predictions:,} held-out predictions; acc@k: the right "
                  "word among the k best scored")
    if demo is not None:
        topics = ", ".join(f"{topic} ({', '.join(words[1:3])} ...)" for topic, words in demo["topics"].items())
        console.print(f"the demo's sentences each hold words of one topic: {topics}; bank joins some money and "
                      "some river ones. In each quoted sentence: cos(bank's output, money or river, the sense its "
                      "context gives) - cos(bank's output, bank); above 0, bank moved nearer its sense than itself")
