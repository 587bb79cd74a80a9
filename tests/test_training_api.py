"""The public training run: prepare_training / prepare_demo, and what a caller keeps after a Ctrl-C."""

from __future__ import annotations

import pytest

import attn_cli


@pytest.fixture(scope="module")
def lines():
    from attn_cli.training.demo import demo_corpus

    return demo_corpus(attn_cli.load_vectors(), sentences=200).lines


def test_the_skipped_sentences_are_named_before_training(lines):
    training = attn_cli.prepare_training([*lines, "bank", "zzqx qqzx"], epochs=1)
    assert training.skipped == "skipped 2 of 202 sentences: 2 with fewer than 2 different known words"
    assert attn_cli.prepare_training(lines, epochs=1).skipped == ""


def test_after_an_interrupt_the_best_weights_so_far_are_kept(lines):
    training = attn_cli.prepare_training(lines, epochs=3, learning_rate=1e-2, batch_size=8, softmax_vocab=3_000)

    def stop_after_the_first_epoch(progress):
        if progress.epoch_done is not None and progress.epoch == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        training.run(stop_after_the_first_epoch)
    run = training.result()
    assert training.best_epoch in (0, 1)
    assert run.layer.provenance["training"]["interrupted"] is True
    assert run.layer.provenance["training"]["epochs"] == 1


def test_train_is_prepare_then_run(lines):
    once = attn_cli.train(lines, epochs=1, seed=2, softmax_vocab=3_000)
    again = attn_cli.prepare_training(lines, epochs=1, seed=2, softmax_vocab=3_000).run()
    assert once.layer.digest == again.layer.digest and once.demo is None


def test_a_layer_trained_on_a_files_first_words_names_the_limit_to_meet_it(glove_file):
    import numpy as np

    vectors = attn_cli.load_vectors(glove_file, limit=60)
    words = list(vectors.words)
    rng = np.random.default_rng(0)
    corpus = [" ".join(rng.choice(words, size=6)) for _ in range(120)]
    layer = attn_cli.train(corpus, vectors=vectors, epochs=1).layer
    assert layer.provenance["vectors"]["limit"] == 60
    with pytest.raises(attn_cli.WeightsError, match=r"pass vectors='.*test_glove.txt' limit=60 \(the set it was"):
        attn_cli.explain("the of and", vectors=attn_cli.load_vectors(glove_file), weights=layer)


def test_an_endless_corpus_stops_at_max_sentences(lines):
    """Issue 25 item 6: the corpus is held in memory, so an iterator that never ends grew it without bound."""
    from itertools import cycle

    with pytest.raises(attn_cli.InputError, match=r"^generated holds more than 300 sentences; raise max_sentences "
                                                  "to train on more$"):
        attn_cli.prepare_training(cycle(lines), max_sentences=300, corpus_name="generated")
    assert attn_cli.prepare_training(lines, max_sentences=200, epochs=1).corpus.lines == 200  # exactly the bound
