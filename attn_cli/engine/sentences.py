"""Many sentences through the engine at once (one stack per length, one neighbour search), same numbers."""

from __future__ import annotations

import numpy as np

from attn_cli.engine.analysis import NeighborSearch, StackDiagnosis, StackShifts, shift_queries
from attn_cli.engine.attention import AttentionConfig, AttentionResult, Projections, attention_stacks, sentence_of
from attn_cli.engine.tokenize import TokenizedSentence
from attn_cli.errors import InputError, Option, SettingsError, memory_named
from attn_cli.vectors.store import Vectors


class Stack:
    """Sentences of one length attended together, their diagnosis computed when a sentence first needs it."""

    def __init__(self, attention: AttentionResult, shifts: StackShifts) -> None:
        self.attention, self.shifts = attention, shifts
        self._diagnosis: StackDiagnosis | None = None

    def diagnosis(self) -> StackDiagnosis:
        if self._diagnosis is None:
            self._diagnosis = StackDiagnosis.of(self.attention)
        return self._diagnosis

    def sentence(self, b: int) -> AttentionResult:
        """Sentence b's own result, its arrays views of the stack's."""
        return sentence_of(self.attention, b)


Row = tuple[Stack, int]  # one sentence: its stack, and its place there


def attend_each(tokenized: list[TokenizedSentence], vectors: Vectors, config: AttentionConfig,
                projections: Projections | None = None, *, neighbors: int = 5,
                neighbor_vocab: int | None = 50_000) -> list[Row]:
    """Self-attention and shifts (one neighbour search) of each sentence, in order, as its place in a `Stack`."""
    with memory_named(lambda: too_long_for_memory(tokenized, config.heads)):
        stacks = attention_stacks([tokens.embeddings for tokens in tokenized], config, projections)
    shifts = analyse_shifts([stack for _, stack in stacks], [[tokenized[i] for i in members] for members, _ in stacks],
                            vectors, neighbors, neighbor_vocab)
    found: dict[int, Row] = {}  # by the sentence's index
    for (members, attention), their_shifts in zip(stacks, shifts):
        stack = Stack(attention, their_shifts)
        found.update((i, (stack, b)) for b, i in enumerate(members))
    return [found[i] for i in range(len(tokenized))]


def too_long_for_memory(tokenized: list[TokenizedSentence], heads: int) -> InputError:
    """Why the sentences could not be attended when memory ran out: the longest one's n x n matrices per head."""
    longest = max(len(tokens.tokens) for tokens in tokenized)
    return InputError(f"out of memory attending {longest:,} tokens with {heads} head(s) (a few {longest:,} x "
                      f"{longest:,} matrices each); shorten the sentence, or lower ", Option("max_tokens"),
                      " to refuse sentences this long")


def analyse_shifts(stacks: list[AttentionResult], queries: list[list[TokenizedSentence]], vectors: Vectors,
                   neighbors: int = 5, neighbor_vocab: int | None = 50_000,
                   sources: list[list[TokenizedSentence]] | None = None) -> list[StackShifts]:
    """The shifts of each stack (`sources`: the key sentences in cross-attention), one neighbour search for all."""
    texts = [[([token.text for token in query.tokens], [token.text for token in source.tokens])
              for query, source in zip(sentences, keys)] for sentences, keys in zip(queries, sources or queries)]
    if neighbors == 0 or not stacks:
        return [StackShifts(stack, None, their_texts) for stack, their_texts in zip(stacks, texts)]
    keys = [[token.key for token in tokenized.tokens] for sentences in queries for tokenized in sentences]
    with memory_named(lambda: SettingsError("neighbor_vocab", f"({neighbor_vocab}) asks for more memory than is left "
                                            "for the neighbour search's vocabulary rows; lower it, or skip the search",
                                            fix={"neighbors": 0})):
        search = NeighborSearch.shared(vectors, stacks[0], neighbor_vocab)
        found = search.nearest(np.vstack([shift_queries(stack) for stack in stacks]), neighbors,
                               [key for sentence in keys for key in sentence + sentence])
    shifts, start = [], 0
    for stack, their_texts in zip(stacks, texts):
        count = 2 * stack.outputs.shape[0] * stack.outputs.shape[1]
        shifts.append(StackShifts(stack, found[start:start + count], their_texts))
        start += count
    return shifts
