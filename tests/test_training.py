"""The training package (attn_cli.training) and the engine pieces it added: the "others" mask, trained mode.

Small synthetic vector sets keep most tests to milliseconds; the demonstration and the exactness of
trained weights through `multi_head_attention` use the embedded default set.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attn_cli
from attn_cli.engine.attention import AttentionConfig, Projections, draw_projections, multi_head_attention
from attn_cli.training.learning import batch_loss, layer_forward
from attn_cli.errors import InputError, SettingsError, VectorsError
from attn_cli.training.corpus import HELD_OUT, TRAINING, VALIDATION, read_corpus, side_of
from attn_cli.training.demo import demo_corpus
from attn_cli.training.settings import TrainingSettings
from attn_cli.training.trainer import Feed, Progress, Trainer, length_batches, projected_layer
from attn_cli.vectors.store import Vectors

FAST = TrainingSettings(epochs=2, batch_size=4, d_k=8, heads=2)


@pytest.fixture(scope="module")
def default_vectors() -> Vectors:
    return attn_cli.load_vectors()


@pytest.fixture(scope="module")
def small_vectors() -> Vectors:
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60)]
    return Vectors(name="small", words=words, matrix=rng.normal(size=(60, 16)).astype(np.float32), lowercase=True)


def random_lines(count: int, seed: int = 0, vocabulary: int = 60) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(f"w{i}" for i in rng.integers(0, vocabulary, size=rng.integers(2, 8))) for _ in range(count)]


# --- the "others" mask and trained mode in the engine ---------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_others_rows_hide_every_copy_of_their_word_and_sum_to_one(data):
    n, heads = data.draw(st.integers(2, 7)), data.draw(st.sampled_from([1, 2]))
    x = data.draw(arrays(np.float64, (n, 4), elements=st.sampled_from([-1.5, 0.0, 2.0])))  # copies are common
    mode = data.draw(st.sampled_from(["raw", "projected"]))
    config = AttentionConfig(mode=mode, mask="others", heads=heads)
    if len(np.unique(x, axis=0)) < 2:  # one word, however often: nothing else to see
        with pytest.raises(InputError, match="nothing to attend to"):
            multi_head_attention(x, config=config)
        return
    result = multi_head_attention(x, config=config)
    copies = (x[:, None, :] == x[None, :, :]).all(axis=-1)  # [n, n]: key j holds query i's word
    assert np.all(result.weights[:, copies] == 0) and np.all(result.weights[:, ~copies] > 0)
    np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0, rtol=1e-12)


def test_others_hides_the_same_word_not_the_same_place():
    result = attn_cli.explain("the river bank by the money bank", mask="others", neighbors=0)
    bank, other_bank, the = 2, 6, 4
    assert result.weights[0, bank, other_bank] == 0 and result.weights[0, other_bank, bank] == 0
    assert result.weights[0, 0, the] == 0 and result.weights[0, bank, the] > 0
    cross = attn_cli.cross("money bank grows", "river bank", mask="others", neighbors=0)  # target over source
    assert cross.weights[0, 1, 1] == 0 and cross.weights[0, 0, 1] > 0  # bank never sees bank, river sees it


def test_a_single_word_under_others_is_refused_with_the_fix():
    with pytest.raises(InputError, match="nothing to attend to.*mask='none'"):
        attn_cli.explain("bank", mask="others")


def test_trained_mode_needs_its_weights_and_only_it_takes_them():
    x = np.eye(3, 4)
    weights = draw_projections(4, AttentionConfig(mode="projected", d_k=2, output_projection=True))
    with pytest.raises(SettingsError, match="'trained' needs the trained weights"):
        multi_head_attention(x, config=AttentionConfig(mode="trained", d_k=2, output_projection=True))
    with pytest.raises(SettingsError, match="projections apply only to trained mode"):
        multi_head_attention(x, config=AttentionConfig(mode="projected", d_k=2), projections=weights)
    with pytest.raises(SettingsError, match="d_k must match the trained weights"):
        multi_head_attention(x, config=AttentionConfig(mode="trained", output_projection=True), projections=weights)
    with pytest.raises(SettingsError, match="output_projection must be True"):
        multi_head_attention(x, config=AttentionConfig(mode="trained", d_k=2), projections=weights)
    with pytest.raises(SettingsError, match="mode 'trained' needs the weights of a layer made by attn-cli train"):
        attn_cli.explain("money bank", mode="trained")  # a user reaches trained mode through a weights file


@pytest.mark.parametrize("settings_", [
    TrainingSettings(heads=2, d_k=64, epochs=1, seed=3),
    TrainingSettings(positions="sinusoidal", mask="causal", epochs=1),
])
def test_the_engine_shows_exactly_the_attention_that_was_trained(default_vectors, settings_):
    lines = [f"the river bank {word} flows past the old mill" for word in list(default_vectors.words[200:260])]
    trainer = Trainer(default_vectors, read_corpus(lines, default_vectors, 200), settings_)
    trainer.run()
    trained = trainer.latest
    config = replace(settings_.attention, mode="trained", seed=0)
    batch = next(trainer.feed.batches(trainer.corpus.training, 8))
    forward = layer_forward(batch.inputs, projected_layer(trainer.feed.config, trained), batch.visible)
    for words, weights in zip(batch.words, forward.weights):
        shown = multi_head_attention(default_vectors.rows(words.tolist()), config=config, projections=trained)
        np.testing.assert_array_equal(shown.weights, weights)
    assert not np.array_equal(trained.w_q, trainer.initial.w_q)


# --- the corpus -----------------------------------------------------------------------------------------------


def test_corpus_skips_unknown_words_and_short_sentences_and_counts_them(small_vectors):
    lines = random_lines(40) + ["w1", "zzz w2", "w3 zzz, w4!", ""]
    corpus = read_corpus(lines, small_vectors, max_words=6)
    assert corpus.lines == 44
    assert corpus.unknown == 2
    assert corpus.short == 3
    assert corpus.long == sum(1 for line in lines if len(line.split()) > 6)
    sentences = corpus.training + corpus.validation + corpus.evaluation
    assert len(sentences) == 44 - corpus.short - corpus.long
    assert [3, 4] in [s.tolist() for s in sentences]
    assert corpus.words == sum(len(s) for s in sentences)
    assert corpus.fingerprint == read_corpus(lines, small_vectors, 6).fingerprint
    assert corpus.fingerprint != read_corpus(lines[::-1], small_vectors, 6).fingerprint


def test_a_sentence_always_falls_on_the_same_side_of_the_split(default_vectors):
    lines = [f"The {word} bank, by the river." for word in default_vectors.words[300:500] if word.isalpha()]
    twice = lines + [line.lower().replace(",", "") for line in lines]
    corpus = read_corpus(twice, default_vectors, 200)
    sides = {side: [s.tolist() for s in sentences] for side, sentences in
             zip((TRAINING, VALIDATION, HELD_OUT), (corpus.training, corpus.validation, corpus.evaluation))}
    for sentences in sides.values():  # the originals on a side, then their copies in the same order
        assert sentences[:len(sentences) // 2] == sentences[len(sentences) // 2:]
    usable = sum(map(len, sides.values()))
    for side in (HELD_OUT, VALIDATION):
        assert 0.04 < len(sides[side]) / usable < 0.2
    assert len(sides[TRAINING]) / usable > 0.7
    assert side_of(["the", "bank"]) == side_of(["the", "bank"])


def test_a_corpus_too_small_to_hold_out_a_tenth_is_refused_with_the_fix(small_vectors):
    with pytest.raises(InputError, match=r"the corpus has 3 usable sentence\(s\) of 5 \(2 had fewer than 2 different "
                                         r"known words\).*needs at least 20.*add sentences"):
        read_corpus(["w1 w2", "w3 w4", "w5 w6 w7", "w8", "qq"], small_vectors, 200)


# --- batches, settings ----------------------------------------------------------------------------------------


@given(lengths=st.lists(st.integers(2, 6), min_size=1, max_size=60), size=st.integers(1, 9),
       seed=st.integers(0, 3))
def test_length_batches_cover_every_sentence_once_in_equal_length_batches(lengths, size, seed):
    batches = length_batches(lengths, size, np.random.default_rng(seed))
    assert sorted(int(i) for batch in batches for i in batch) == list(range(len(lengths)))
    assert all(0 < len(batch) <= size and len({lengths[i] for i in batch}) == 1 for batch in batches)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 1000), mask=st.sampled_from(["others", "causal"]))
def test_the_loss_does_not_depend_on_the_order_of_a_batch(small_vectors, seed, mask):
    rng = np.random.default_rng(seed)
    feed = Feed.build(small_vectors, TrainingSettings(mask="none" if mask == "others" else "causal", d_k=8, heads=2,
                                                      softmax_vocab=40), dtype=np.float64)
    sentences = [rng.integers(0, 60, size=4) for _ in range(5)]
    order = rng.permutation(5)
    layer = projected_layer(feed.config, draw_projections(16, feed.config))
    first, second = (feed.batch([sentences[i] for i in indices]) for indices in (range(5), order))
    a = batch_loss(first.inputs, first.targets, layer, first.visible, feed.vocabulary)
    b = batch_loss(second.inputs, second.targets, layer, second.visible, feed.vocabulary)
    assert a.predictions == b.predictions
    assert a.loss == pytest.approx(b.loss, rel=1e-12)
    for name in ("w_q", "w_k", "w_v", "w_o"):
        np.testing.assert_allclose(getattr(a.gradients, name), getattr(b.gradients, name), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("bad, setting", [
    ({"mask": "others"}, "mask"), ({"learning_rate": 0}, "learning_rate"), ({"batch_size": 0}, "batch_size"),
    ({"epochs": 1.5}, "epochs"), ({"softmax_vocab": 0}, "softmax_vocab"), ({"max_words": 1}, "max_words"),
    ({"positions": "learned"}, "positions"), ({"heads": 0}, "heads"), ({"seed": -1}, "seed"),
])
def test_bad_training_settings_name_their_keyword(bad, setting):
    with pytest.raises(SettingsError) as caught:
        TrainingSettings(**bad)
    assert caught.value.setting == setting


# --- the trainer ----------------------------------------------------------------------------------------------


def test_the_same_corpus_and_seed_give_the_same_weights_bit_for_bit(small_vectors):
    corpus = read_corpus(random_lines(120), small_vectors, 200)
    runs = [Trainer(small_vectors, corpus, FAST) for _ in range(2)]
    for trainer in runs:
        trainer.run()
    for name in ("w_q", "w_k", "w_v", "w_o"):
        assert np.array_equal(getattr(runs[0].latest, name), getattr(runs[1].latest, name))
        assert np.array_equal(getattr(runs[0].best.weights, name), getattr(runs[1].best.weights, name))
    other = Trainer(small_vectors, corpus, replace(FAST, seed=1))
    other.run()
    assert not np.array_equal(other.latest.w_q, runs[0].latest.w_q)


def test_held_out_and_validation_sentences_are_never_trained_on(small_vectors, monkeypatch):
    corpus = read_corpus(random_lines(200, seed=4), small_vectors, 200)
    held = {tuple(s) for s in corpus.evaluation + corpus.validation}
    trained_on: list[tuple] = []
    original = Feed.batches

    def recording(self, sentences, size, rng=None):
        if rng is not None:  # only training shuffles
            trained_on.extend(tuple(s) for s in sentences)
        return original(self, sentences, size, rng)

    monkeypatch.setattr(Feed, "batches", recording)
    Trainer(small_vectors, corpus, FAST).run()
    assert held and len(trained_on) == FAST.epochs * len(corpus.training)
    assert not held & set(trained_on)


def test_progress_history_and_the_best_weights(small_vectors):
    corpus = read_corpus(random_lines(120), small_vectors, 200)
    heard: list[Progress] = []
    trainer = Trainer(small_vectors, corpus, FAST)
    best = trainer.run(heard.append)
    assert [report.epoch for report in trainer.history] == [0, 1, 2]
    assert best is trainer.best
    assert best.validation_loss == min(report.validation.loss for report in trainer.history)
    assert heard[-1].sentences == heard[-1].total == 2 * len(corpus.training)
    assert [p.epoch_done.epoch for p in heard if p.epoch_done] == [1, 2]
    assert all(a.sentences <= b.sentences for a, b in zip(heard, heard[1:]))
    with pytest.raises(RuntimeError, match="runs once"):
        trainer.run()


def test_an_interrupt_leaves_the_best_and_latest_weights_readable(small_vectors):
    corpus = read_corpus(random_lines(120), small_vectors, 200)
    trainer = Trainer(small_vectors, corpus, replace(FAST, epochs=5))
    calls = []

    def stop(progress: Progress) -> None:
        calls.append(progress)
        if progress.epoch == 2 and progress.epoch_done is None and len(calls) > 30:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        trainer.run(stop)
    assert trainer.interrupted
    assert trainer.best.epoch in (0, 1)
    for weights in (trainer.best.weights, trainer.latest):
        assert isinstance(weights, Projections) and weights.w_o is not None
        assert all(np.isfinite(m).all() for m in (weights.w_q, weights.w_k, weights.w_v, weights.w_o))
    assert not np.array_equal(trainer.latest.w_q, trainer.initial.w_q)
    assert np.array_equal(trainer.initial.w_q, draw_projections(16, FAST.attention).w_q)  # never changed in place


# --- the demonstration ----------------------------------------------------------------------------------------


def test_the_demo_needs_a_vector_set_with_enough_common_words(small_vectors):
    with pytest.raises(VectorsError, match="the demo needs the words money, river, .* and bank, .* small lacks money, "
                                           ".*: use a larger vector set"):
        demo_corpus(small_vectors)


def test_adam_steps_by_the_learning_rate_against_the_gradient_and_changes_nothing_in_place():
    from attn_cli.training.learning import adam_start, adam_step

    params = (np.array([1.0, -2.0, 0.5]),)
    grads = (np.array([3.0, -0.01, 0.0]),)
    before = params[0].copy()
    learning_rate = 0.1
    state = adam_start(params)
    (first,), state = adam_step(params, grads, state, learning_rate)
    np.testing.assert_allclose(first - before, [-0.1, 0.1, 0.0], atol=1e-6)  # bias-corrected: lr x sign(g)
    assert np.array_equal(params[0], before)  # new arrays, the old ones untouched
    m = v = np.zeros(3)  # a plain reference of the bias-corrected update, for more steps
    x, g = before.copy(), grads[0]
    for t in (1, 2, 3):
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        x = x - 0.1 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        if t == 1:
            np.testing.assert_allclose(first, x, rtol=1e-12)
    current, state_now = (first,), state
    for _ in range(2):
        current, state_now = adam_step(current, grads, state_now, learning_rate)
    np.testing.assert_allclose(current[0], x, rtol=1e-12)


def test_the_best_epoch_is_chosen_on_validation_and_the_table_scores_the_held_out_split(small_vectors):
    lines = random_lines(200, seed=5)
    run = attn_cli.train(lines, vectors=small_vectors, epochs=3, batch_size=4, d_k=8, heads=2, learning_rate=3e-2)
    trainer, training = run.trainer, run.layer.provenance["training"]
    validation = [report.validation.loss for report in trainer.history]
    assert training["best_epoch"] == int(np.argmin(validation))
    assert training["validation_loss"] == min(validation)
    assert [entry["validation_loss"] for entry in training["history"]] == validation
    # the table is the held-out split's, scored apart from the choice: another set of sentences, another loss
    assert training["held_out_loss"] == run.evaluation.trained.loss != training["validation_loss"]
    corpus = run.layer.provenance["corpus"]
    assert corpus["validation_sentences"] == len(run.corpus.validation) > 0
    assert corpus["held_out_sentences"] == len(run.corpus.evaluation) > 0
    assert not {tuple(s) for s in run.corpus.validation} & {tuple(s) for s in run.corpus.evaluation}
