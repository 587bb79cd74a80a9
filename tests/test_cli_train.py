"""`attn-cli train` end to end: the demo learns bank's two senses, a corpus trains a layer that explain, trace and
compare apply, the same seed gives the same file, Ctrl-C keeps weights only when asked, and bad input is one line."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import attn_cli
from attn_cli.training.demo import demo_corpus
from attn_cli.training.trainer import Trainer
from attn_cli.training.weights import load_layer
from conftest import attn

SENTENCE = "money bank grows"


@pytest.fixture(scope="module")
def corpus_text() -> str:
    """300 sentences of real words (the demo's generator, another seed): a corpus without a known answer."""
    return "\n".join(demo_corpus(attn_cli.load_vectors(), sentences=300, seed=5).lines) + "\n"


def test_the_demo_learns_which_sense_bank_has_in_each_sentence(demo_run, schema_validator):
    """Raw attention and the random start leave bank's output nearest bank itself; the trained layer moves it
    nearer money in the money sentence and nearer river in the river one (the leads the train table shows)."""
    report, path, stderr = demo_run
    schema_validator("train").validate(report)
    leads = report["demo"]["sense_lead"]
    assert set(leads["trained"]) == {"money bank grows", "river bank flows"}
    for sentence, trained in leads["trained"].items():
        assert trained > 0 > leads["raw"][sentence] and trained > leads["random"][sentence]
    table = {row["layer"]: row for row in report["weights"]["evaluation"]}
    assert table["trained"]["loss"] < min(table["raw"]["loss"], table["random"]["loss"])
    assert table["trained"]["accuracy_at_1"] > max(table["raw"]["accuracy_at_1"], table["random"]["accuracy_at_1"])
    assert table["trained"]["accuracy_at_10"] > max(table["raw"]["accuracy_at_10"], table["random"]["accuracy_at_10"])
    assert table["trained"]["predictions"] == table["raw"]["predictions"] == table["random"]["predictions"] > 0
    assert report["warnings"] == []  # over a thousand held-out predictions: enough to rank the layers
    assert stderr == f"attn-cli: wrote {path} in {stderr.split(' in ')[1].split(' s;')[0]} s; see it with: " \
                     f'attn-cli explain "money bank grows" --weights {path}\n'  # no bar in a pipe, nothing skipped


def test_the_demo_layer_is_what_explain_shows(run, demo_run):
    report, path, _ = demo_run
    layer = load_layer(path)
    assert layer.provenance["evaluation"] == report["weights"]["evaluation"]
    assert layer.layer["objective"] == "masked-word" and layer.layer["mask"] == "others"
    result = run("explain", SENTENCE, "--weights", str(path))
    assert result.exit_code == 0, result.stderr
    assert "attention trained projections (from seed 0)" in result.stdout
    assert "masked-word on the demo corpus (generated)" in " ".join(result.stdout.split())
    document = json.loads(run("explain", SENTENCE, "--weights", str(path), "--json").stdout)
    assert document["weights"]["digest"] == layer.digest
    assert np.allclose(np.diagonal(np.array(document["heads"][0]["weights"])), 0.0)


@pytest.mark.parametrize("sentence, sense, other, sense_words", [
    ("money bank grows", "money", "river", {"money", "cash", "dollars", "payment", "payments", "financing", "funds",
                                            "financed", "finance", "bills", "wallet", "taxes", "debts", "revenue",
                                            "euro", "bucks", "fund", "funding"}),
    ("river bank flows", "river", "money", {"river", "rivers", "lake", "lakes", "basin", "basins", "watershed",
                                            "waterway", "waterways", "stream", "valley", "coast", "estuary",
                                            "rapids", "catchment", "tributary", "creek"}),
])
def test_after_the_demo_layer_bank_lies_nearer_its_sentences_sense(demo_run, sentence, sense, other, sense_words):
    """What the README shows: with the demo layer, explain moves bank toward money in the money sentence and toward
    river in the river one, and its neighbours after attention are words of that sense."""
    layer = load_layer(demo_run[1])
    kv = attn_cli.load_vectors().to_keyedvectors()
    result = attn_cli.explain(sentence, weights=layer, neighbors=5)
    bank = result.tokens.index("bank")
    output = result.outputs[bank]

    def cosine(word: str) -> float:
        return float(output @ kv[word] / (np.linalg.norm(output) * np.linalg.norm(kv[word])))

    assert cosine(sense) > cosine(other)
    after = [neighbor.word for neighbor in result.shifts[bank].neighbors_after]
    assert len(set(after) & sense_words) >= 3, after


def test_a_corpus_from_stdin_trains_a_layer_every_command_applies(run, tmp_path, corpus_text, schema_validator):
    path = tmp_path / "layer.npz"
    result = run("train", "-", "--out", str(path), "--epochs", "1", "--heads", "2", "--d-k", "32",
                 "--mask", "causal", "--positions", "sinusoidal", "--softmax-vocab", "3000", input=corpus_text)
    assert result.exit_code == 0, result.stderr
    assert "next-word objective, 2 head(s), d_k 32, mask causal, positions sinusoidal" in result.stdout
    for line in ("raw attention", "random start", "trained layer"):
        assert line in result.stdout
    layer = load_layer(path)
    assert layer.provenance["corpus"]["name"] == "stdin" and layer.provenance["corpus"]["sentences"] == 300
    assert layer.provenance["training"]["softmax_vocab"] == 3000
    for command in (["explain", SENTENCE], ["trace", SENTENCE, "--word", "bank"],
                    ["compare", "river bank flows", SENTENCE]):
        shown = run(*command, "--weights", str(path), "--json")
        assert shown.exit_code == 0, shown.stderr
        document = json.loads(shown.stdout)
        schema_validator(command[0]).validate(document)
    trace = json.loads(run("trace", SENTENCE, "--word", "bank", "--weights", str(path), "--json").stdout)
    assert trace["settings"]["mask"] == "causal" and trace["settings"]["heads"] == 2
    assert trace["projections"]["rows"]["w_k"][1]["first"] == layer.projections.w_k[1, :3].tolist()


def test_the_same_inputs_and_seed_give_the_same_file(run, tmp_path, corpus_text):
    paths = [tmp_path / "one.npz", tmp_path / "two.npz"]
    for path in paths:
        assert run("train", "-", "--out", str(path), "--epochs", "1", "--seed", "4", "--softmax-vocab", "3000",
                   input=corpus_text).exit_code == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    other = tmp_path / "other.npz"
    run("train", "-", "--out", str(other), "--epochs", "1", "--seed", "5", "--softmax-vocab", "3000",
        input=corpus_text)
    assert not np.array_equal(load_layer(other).projections.w_q, load_layer(paths[0]).projections.w_q)


def interrupt_at(monkeypatch, epoch: int) -> None:
    """Ctrl-C as the held-out check of `epoch` begins (epoch 0: before the first step)."""
    check = Trainer._check

    def interrupted(self, done, *args):
        if done == epoch:
            raise KeyboardInterrupt
        return check(self, done, *args)

    monkeypatch.setattr(Trainer, "_check", interrupted)


def test_ctrl_c_writes_nothing_unless_asked(run, tmp_path, corpus_text, monkeypatch):
    interrupt_at(monkeypatch, 2)
    path = tmp_path / "layer.npz"
    result = run("train", "-", "--out", str(path), "--epochs", "3", "--softmax-vocab", "3000", input=corpus_text)
    assert result.exit_code == 130 and not path.exists() and result.stdout == ""
    assert result.stderr == ("attn-cli: warning: interrupted after 1 epoch(s); nothing written (to stop a run early "
                             "and keep its best weights, run again with --keep-on-interrupt, or ask for fewer "
                             "--epochs)\n")
    kept = run("train", "-", "--out", str(path), "--epochs", "3", "--softmax-vocab", "3000", "--keep-on-interrupt",
               input=corpus_text)
    assert kept.exit_code == 130
    assert kept.stderr == f"attn-cli: warning: interrupted; wrote the best weights so far (epoch 1) to {path}\n"
    training = load_layer(path).provenance["training"]
    assert training["interrupted"] and training["epochs"] == 1 and training["best_epoch"] == 1


def test_ctrl_c_before_the_first_epoch_ends_keeps_nothing(run, tmp_path, corpus_text, monkeypatch):
    interrupt_at(monkeypatch, 1)
    path = tmp_path / "layer.npz"
    result = run("train", "-", "--out", str(path), "--keep-on-interrupt", "--softmax-vocab", "3000",
                 input=corpus_text)
    assert result.exit_code == 130 and not path.exists()
    assert "interrupted before the first epoch ended; nothing learnt, nothing written" in result.stderr


@pytest.mark.parametrize("args, code, words", [
    (["train"], 2, "give a CORPUS file, one sentence per line (- reads stdin), or --demo"),
    (["train", "corpus.txt", "--demo", "--out", "x.npz"], 2, "give a CORPUS (a file, or - for stdin) or --demo, "
                                                             "not both"),
    (["train", "--demo"], 2, "give --out FILE, where the trained layer goes"),
    (["train", "--demo", "--out", "/no/such/folder/x.npz"], 2, "give a file name in an existing folder"),
    (["train", "-", "--out", "x.npz", "--mask", "others"], 2, "Invalid value for '--mask': 'others' is not one of "
                                                                "'none', 'causal'"),
    (["train", "--demo", "--out", "x.npz", "--mask", "causal"], 2, "--demo hides a word and asks the layer to "
                                                                     "predict it from its topic"),
    (["train", "--demo", "--out", "x.npz", "--epochs", "0"], 2, "--epochs must be at least 1"),
    (["train", "--demo", "--out", "x.npz", "--heads", "3"], 2, "--heads 3 does not divide the width 128"),
    (["train", "--demo", "--out", "x.npz", "--learning-rate", "nan"], 2, "--learning-rate must be a finite "
                                                                          "number > 0"),
    (["train", "missing.txt", "--out", "x.npz"], 2, "CORPUS missing.txt: no such file; pass a text file with one "
                                                    "sentence per line"),
])
def test_bad_training_input_is_one_line(run, tmp_path, monkeypatch, args, code, words):
    monkeypatch.chdir(tmp_path)
    result = run(*args)
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1 and words in result.stderr
    assert not (tmp_path / "x.npz").exists()


def test_a_held_out_split_with_nothing_to_predict_names_the_fix(run, tmp_path, corpus_text):
    result = run("train", "-", "--out", str(tmp_path / "x.npz"), "--softmax-vocab", "1", input=corpus_text)
    assert result.exit_code == 3 and not (tmp_path / "x.npz").exists()
    assert "the validation sentences hold no word among the --softmax-vocab (1) most frequent words" in result.stderr


def test_the_help_states_the_library_defaults(run):
    from attn_cli import DEMO_SETTINGS, TrainingSettings

    text = " ".join(run("train", "--help").stdout.translate(str.maketrans("│╭╮╰╯─", "      ")).split())
    defaults = TrainingSettings()
    assert f"Default {defaults.softmax_vocab:,}; the demo's: {DEMO_SETTINGS.softmax_vocab:,}." in text
    assert f"[default: {defaults.epochs}]" in text and f"[default: {defaults.max_words}]" in text
    assert f"Default {defaults.batch_size}; the demo's: {DEMO_SETTINGS.batch_size}." in text
    assert f"Default {defaults.learning_rate:g}; the demo's: {DEMO_SETTINGS.learning_rate:g}." in text


def test_out_may_not_replace_the_corpus(run, tmp_path, corpus_text):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text)
    result = run("train", str(corpus), "--out", str(corpus))
    assert result.exit_code == 2 and "is the CORPUS input" in result.stderr
    assert corpus.read_text() == corpus_text


def test_out_may_not_replace_the_corpus_read_from_stdin(tmp_path, corpus_text):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(corpus_text)
    with corpus.open("rb") as stdin:
        result = attn(["train", "-", "--out", str(corpus)], stdin=stdin, text=True)
    assert result.returncode == 2 and "is the CORPUS input" in result.stderr
    assert corpus.read_text() == corpus_text


def test_a_diverging_run_names_the_learning_rate(run, tmp_path, corpus_text):
    result = run("train", "-", "--out", str(tmp_path / "x.npz"), "--learning-rate", "1e30", "--softmax-vocab",
                 "3000", input=corpus_text)
    assert result.exit_code == 3 and not (tmp_path / "x.npz").exists()
    assert "training diverged: the loss is no longer a finite number; lower --learning-rate" in result.stderr
    assert len(result.stderr.splitlines()) == 1  # no numpy warning before it


def test_a_held_out_table_of_few_predictions_says_it_means_little(run, tmp_path, schema_validator):
    """25 sentences train (20 is the least) and score a couple of dozen held-out predictions: too few to rank the
    layers, which stderr and the JSON say, naming the count and the size the table needs."""
    from attn_cli.training.run import MIN_PREDICTIONS

    corpus = "\n".join(demo_corpus(attn_cli.load_vectors(), sentences=25, seed=5).lines) + "\n"
    result = run("train", "-", "--out", str(tmp_path / "small.npz"), "--epochs", "1", "--softmax-vocab", "3000",
                 "--json", input=corpus)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    schema_validator("train").validate(report)
    predictions = report["weights"]["evaluation"][0]["predictions"]
    assert 0 < predictions < MIN_PREDICTIONS
    assert [(w["code"], w["predictions"], w["minimum"]) for w in report["warnings"]] == [
        ("small_held_out", predictions, MIN_PREDICTIONS)]
    assert f"{predictions} predictions" in result.stderr and str(MIN_PREDICTIONS) in result.stderr


def test_a_corpus_too_small_to_hold_out_names_the_fix(run, tmp_path):
    result = run("train", "-", "--out", str(tmp_path / "x.npz"), input="money bank grows\nriver bank flows\n")
    assert result.exit_code == 3
    assert ("training holds out one sentence in 10 to evaluate on and another to choose the best epoch with, so it "
            "needs at least 20") in result.stderr


def test_the_python_api_trains_and_explains(corpus_text, tmp_path):
    run = attn_cli.train(corpus_text.splitlines(), epochs=1, softmax_vocab=3000, corpus_name="generated")
    assert {"raw", "random", "trained"} == set(vars(run.evaluation))
    result = attn_cli.explain(SENTENCE, weights=run.layer)
    assert result.settings.mode == "trained" and result.to_dict()["weights"]["file"] is None
    run.layer.save(tmp_path / "api.npz")
    assert load_layer(tmp_path / "api.npz").digest == run.layer.digest
    with pytest.raises(TypeError, match="an iterable of str"):
        attn_cli.train("money bank grows")


def test_ctrl_c_after_epochs_that_never_beat_the_start_says_so(run, tmp_path, corpus_text, monkeypatch):
    from attn_cli.training.trainer import Checkpoint

    interrupt_at(monkeypatch, 2)
    original = Trainer._check

    def never_better(self, done, *args):  # the start stays best: every epoch's check is worse
        report = original(self, done, *args)
        if done == 0:
            self.best = Checkpoint(0, self.initial, -1.0)
        return report

    monkeypatch.setattr(Trainer, "_check", never_better)
    path = tmp_path / "layer.npz"
    result = run("train", "-", "--out", str(path), "--epochs", "3", "--softmax-vocab", "3000", "--keep-on-interrupt",
                 input=corpus_text)
    assert result.exit_code == 130 and not path.exists()
    assert ("interrupted after 1 epoch(s), none better than the random start on the validation sentences; "
            "nothing written") in result.stderr


@pytest.mark.parametrize("size", [1e20, 3.3e38])
def test_vectors_too_large_to_train_on_are_named_not_the_learning_rate(run, tmp_path, size):
    """Legal vectors of values near 1e20 or 3.3e38 overflow the vocabulary's float32 scores before any step: the
    run said "training diverged ...; lower --learning-rate (now 1e-12)", after raw numpy warnings. No learning
    rate helps: the message names the vectors' largest norm, and no warning reaches stderr."""
    rng = np.random.default_rng(4)
    words = [f"w{number}" for number in range(40)]
    vectors = tmp_path / "large.txt"
    vectors.write_text("".join(f"{word} {' '.join(f'{x:.4e}' for x in rng.uniform(0.5, 1, 4) * size)}\n"
                               for word in words))
    corpus = "".join(" ".join(rng.choice(words, 6)) + "\n" for _ in range(60))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning fails the run (exit 1) instead of reaching stderr
        result = run("train", "-", "--vectors", str(vectors), "--out", str(tmp_path / "x.npz"), "--learning-rate",
                     "1e-12", input=corpus, env={"ATTN_CLI_CACHE": str(tmp_path / "cache")})
    assert result.exit_code == 3, result.stderr
    [line] = result.stderr.splitlines()
    assert "--learning-rate" not in line and "largest norm" in line and "rescale" in line, line
    assert not (tmp_path / "x.npz").exists()


def test_a_layer_written_to_a_stream_is_never_named_as_a_file_to_reuse(run, corpus_text):
    """train --out /dev/stdout > f advised "explain ... --weights /dev/stdout", which reads no layer: a stream is
    said to be one, with the advice to save the layer to a file."""
    result = run("train", "-", "--out", "/dev/stdout", "--epochs", "1", "--softmax-vocab", "3000", input=corpus_text)
    assert result.exit_code == 0, result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("attn-cli: wrote")]
    assert "--weights /dev/stdout" not in line and "a stream" in line and "--out FILE" in line, line
