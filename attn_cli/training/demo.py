"""A demo corpus that teaches what a reader can check: which sense "bank" has in context. Sentences of one topic
each, "bank" in some money and river ones: the trained layer moves bank toward its sense, raw attention cannot."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attn_cli.engine.attention import unit_rows
from attn_cli.errors import VectorsError
from attn_cli.training.learning import Layer, layer_forward
from attn_cli.training.trainer import Feed, Trainer
from attn_cli.vectors.store import Vectors

TOPICS = ("money", "river", "music", "food", "school", "weather", "sport", "computer", "doctor", "car")
AMBIGUOUS = "bank"  # joins the money and the river sentences: the word whose sense the demo shows
SENSE_TOPICS = ("money", "river")  # the topics "bank" joins
SENSES = {"money bank grows": "money", "river bank flows": "river"}  # sentence -> the sense its context gives bank
COMMON_WORDS = 3_000  # topic words come from the set's most frequent words (the demo predicts among 3,000)
TOPIC_WORDS = 30  # words per topic
WITH_AMBIGUOUS = 0.3  # the share of money and river sentences that also hold "bank"


@dataclass(frozen=True)
class DemoCorpus:
    lines: list[str]  # one sentence per line
    topics: dict[str, list[str]]  # seed word -> its topic's words, nearest first


def demo_corpus(vectors: Vectors, sentences: int = 2_250, seed: int = 0) -> DemoCorpus:
    topics = topic_words(vectors)
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(sentences):
        topic = TOPICS[rng.integers(len(TOPICS))]
        words = list(rng.choice(topics[topic], size=rng.integers(5, 9)))
        if topic in SENSE_TOPICS and rng.random() < WITH_AMBIGUOUS:
            words.insert(rng.integers(len(words) + 1), AMBIGUOUS)
        lines.append(" ".join(words))
    return DemoCorpus(lines, topics)


def topic_words(vectors: Vectors) -> dict[str, list[str]]:
    """Each topic's TOPIC_WORDS plain words nearest its seed word, among the set's COMMON_WORDS first."""
    missing = [word for word in (*TOPICS, AMBIGUOUS) if vectors.lookup(word) is None]
    common = [row for row, word in enumerate(vectors.words[:COMMON_WORDS])  # plain words: text round-trips to rows
              if word.isalpha() and word.islower() and len(word) >= 3 and vectors.lookup(word) == (word, row)]
    if missing or len(common) < len(TOPICS) * TOPIC_WORDS:
        raise VectorsError(f"the demo needs the words {', '.join(TOPICS)} and {AMBIGUOUS}, and "
                           f"{len(TOPICS) * TOPIC_WORDS} plain words among the {COMMON_WORDS:,} most frequent; "
                           f"{vectors.name} lacks {', '.join(missing) or 'enough common words'}: use a larger "
                           "vector set")
    units = unit_rows(vectors.rows(common))  # [c, d]
    topics = {}
    for topic in TOPICS:
        seed = vectors.rows([vectors.lookup(topic)[1]])[0]  # type: ignore[index]  # checked above
        nearest = np.argsort(-(units @ seed), kind="stable")  # [c] most similar first
        topics[topic] = [vectors.words[common[i]] for i in nearest if vectors.words[common[i]] != AMBIGUOUS][
            :TOPIC_WORDS]
    return topics


def sense_lead(feed: Feed, layer: Layer, sentence: str, masked: bool = True) -> float:
    """cos(bank's output, its sense) - cos(bank's output, bank): above 0, the layer moved bank toward its sense."""
    vectors = feed.vectors
    words = sentence.split()
    rows = np.array([vectors.lookup(word)[1] for word in words])  # type: ignore[index]  # the demo's words
    batch = feed.batch([rows])
    visible = batch.visible if masked else np.ones((len(words), len(words)), dtype=bool)  # [n, n]: as explain's raw
    output = layer_forward(batch.inputs, layer, visible).outputs[0, words.index(AMBIGUOUS)]  # [d]
    compared = vectors.rows([vectors.lookup(word)[1] for word in (SENSES[sentence], AMBIGUOUS)])  # type: ignore[index]
    sense, itself = (unit_rows(compared) @ unit_rows(output[None])[0]).tolist()  # [2]: cosines with the sense, bank
    return sense - itself


def sense_leads(trainer: Trainer) -> dict[str, dict[str, float]]:
    """The sense lead of each layer of the table for each sentence, raw attention unmasked as `explain` shows it."""
    return {name: {sentence: sense_lead(trainer.feed, layer, sentence, masked=name != "raw") for sentence in SENSES}
            for name, layer in trainer.layers().items()}
