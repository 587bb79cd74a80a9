"""The documents of `compare`: each sentence's explain document and the shared words, or cross-attention as an
explain document with rectangular matrices (rows: target tokens, columns: source tokens)."""

from __future__ import annotations

from attn_cli.engine.analysis import SATURATION_LEVEL
from attn_cli.engine.comparison import WordComparison
from attn_cli.engine.sentences import Row
from attn_cli.labels import copy_label, token_labels
from attn_cli.documents.explain import (ReportOptions, attention_blocks, contribution_blocks, document_header,
                                       included_matrices, tokens_block)
from attn_cli.engine.tokenize import TokenizedSentence
from attn_cli.vectors.store import Vectors


def compare_document(blocks: list[dict], comparisons: list[WordComparison]) -> dict:
    """The compare document: each sentence's explain document, then each compared word."""
    return {
        **document_header("compare"),
        "cross": False,
        "sentences": blocks,
        "words": [word_block(comparison, blocks) for comparison in comparisons],
    }


def word_block(comparison: WordComparison, blocks: list[dict]) -> dict:
    """The headline numbers of one word (the least alike pair), the full cosine matrices and the pulls."""
    a, b = comparison.least_alike
    texts = [[token["text"] for token in block["tokens"]] for block in blocks]
    occurrences = [{
        "sentence": o.sentence, "index": o.index, "text": texts[o.sentence][o.index],
        "self_weight": blocks[o.sentence]["shifts"][o.index]["self_weight"], "visible_keys": o.visible_keys,
        "pulled_by": contribution_blocks(o.pulled_by, texts[o.sentence]),
        "neighbors_after": [{"word": n.word, "cosine": n.cosine} for n in o.neighbors_after],
    } for o in comparison.occurrences]
    block = {
        "word": comparison.word,
        "pair": [comparison.occurrences[a].sentence, comparison.occurrences[b].sentence],
        "static_cosine": float(comparison.static_cosines[a, b]),
        "contextual_cosine": float(comparison.contextual_cosines[a, b]),
        "occurrences": occurrences,
        "static_cosines": comparison.static_cosines,
        "contextual_cosines": comparison.contextual_cosines,
    }
    block["verdict"] = verdict(block, {o["sentence"]: token_labels(texts[o["sentence"]]) for o in occurrences})
    return block


def verdict(word: dict, labels: dict[int, list[str]]) -> str:
    """'bank: 1.000 -> 0.710; leans to river, flows (1) vs money (2)': the least alike pair's cosines, then the
    pulling words per sentence, named as the tables name them (`labels`: a repeated word keeps its `#8`)."""
    first, second = (number + 1 for number in word["pair"])
    which = f" (least alike: {first} vs {second})" if len(word["occurrences"]) > 2 else ""
    leans = " vs ".join(f"{leaning(occurrence, labels[occurrence['sentence']])} ({where(occurrence, labels)})"
                        for occurrence in word["occurrences"])
    return f"{word['word']}: {word['static_cosine']:.3f} -> {word['contextual_cosine']:.3f}{which}; leans to {leans}"


def where(occurrence: dict, labels: dict[int, list[str]]) -> str:
    """The sentence's number, and which copy of the word when it occurs there twice: '1', or '1, bank#2'."""
    number = occurrence["sentence"]
    return ", ".join(filter(None, [str(number + 1), copy_label(labels[number], occurrence["index"],
                                                               occurrence["text"])]))


def leaning(occurrence: dict, labels: list[str]) -> str:
    """The words that pull an occurrence, or 'itself': '(the only word it sees)' when its query sees one key
    (a weight of 1 there is no choice, so no saturation), '(saturated)' when it kept >= 0.95 of its weight."""
    if occurrence["pulled_by"]:
        return ", ".join(labels[pull["index"]] for pull in occurrence["pulled_by"])
    if occurrence["visible_keys"] < 2:
        return "itself (the only word it sees)"
    saturated = (occurrence["self_weight"] or 0.0) >= SATURATION_LEVEL
    return "itself (saturated)" if saturated else "itself"


def cross_document(source: str, source_tokens: TokenizedSentence, target: str, target_tokens: TokenizedSentence,
                   vectors: Vectors, row: Row, options: ReportOptions) -> dict:
    """Cross-attention's document: an explain document whose rows are the target's tokens, columns the source's
    (`row`: the target's place in its stack of one)."""
    result = row[0].sentence(row[1])
    report = {
        **document_header("compare"),
        "cross": True,
        "source": {"sentence": source, **tokens_block(source_tokens)},
        "target": {"sentence": target, **tokens_block(target_tokens)},
        **attention_blocks(row, vectors, options),
    }
    report.update(included_matrices(result, target_tokens.embeddings, options.include, options.layer))
    if "embeddings" in options.include:
        report["source_embeddings"] = source_tokens.embeddings
    if "inputs" in options.include:
        report["source_input_vectors"] = result.context_inputs
    return report
