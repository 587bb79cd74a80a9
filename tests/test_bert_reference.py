"""The numpy BERT (attn_cli/engine/bert.py) against the reference implementation, and its parts on their own.

tests/data/minilm_reference.npz holds Hugging Face BertModel's attentions and hidden states for all-MiniLM-L6-v2
on a dozen sentences, and its tokenizer's ids on more (recorded by scripts/record_bert_reference.py, so the
suite needs no torch). The comparisons need the imported model (the `minilm` fixture: skipped without it,
required in CI); the rest runs on a tiny random model.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from attn_cli.engine.bert import encode, erf, gelu, layer_norm
from attn_cli.engine.wordpiece import basic_words, split_word
from attn_cli.errors import VectorsError
from attn_cli.models import load_model

REFERENCE = Path(__file__).resolve().parent / "data" / "minilm_reference.npz"
TOLERANCE = 1e-5  # the reference ran in float32, attn-cli runs in float64


@pytest.fixture(scope="module")
def reference():
    with np.load(REFERENCE, allow_pickle=False) as stored:
        arrays = dict(stored)
    return json.loads(arrays.pop("about").tobytes()), arrays


def test_every_layer_equals_the_reference(minilm, reference):
    about, arrays = reference
    model = load_model("minilm")
    assert len(about["sentences"]) >= 10
    for number, sentence in enumerate(about["sentences"]):
        ids = np.array([piece.id for piece in model.pieces(sentence)])
        np.testing.assert_array_equal(ids, arrays[f"ids_{number}"], err_msg=sentence)
        embedded, layers = encode(model.weights, ids)
        hidden = np.stack([embedded] + [layer.outputs for layer in layers])  # [7, n, d]
        attentions = np.stack([layer.attention.weights for layer in layers])  # [6, 12, n, n]
        assert attentions.shape == arrays[f"attentions_{number}"].shape == (6, 12, len(ids), len(ids))
        np.testing.assert_allclose(attentions, arrays[f"attentions_{number}"], rtol=0, atol=TOLERANCE)
        np.testing.assert_allclose(hidden, arrays[f"hidden_{number}"], rtol=0, atol=TOLERANCE)


def test_wordpiece_ids_equal_the_reference_tokenizer(minilm, reference):
    about, arrays = reference
    model = load_model("minilm")
    for number, sentence in enumerate(about["tokenized"]):
        assert [piece.id for piece in model.pieces(sentence)] == arrays[f"tokenized_{number}"].tolist(), sentence


def test_pieces_are_shown_as_the_vocabulary_spells_them(minilm):
    texts = [piece.text for piece in load_model("minilm").pieces("self-attention over tokenization")]
    assert texts[0] == "[CLS]" and texts[-1] == "[SEP]"
    assert any(text.startswith("##") for text in texts) and "-" in texts


def test_erf_is_float64_exact():
    x = np.concatenate([np.linspace(-40, 40, 4001), [0.0, -0.0, 1.5, -1.5, 1e-300, 5e-324]])
    expected = np.array([math.erf(value) for value in x])
    np.testing.assert_allclose(erf(x), expected, rtol=1e-14, atol=1e-16)
    assert gelu(np.array([0.0]))[0] == 0.0 and abs(gelu(np.array([3.0]))[0] - 3 * 0.5 * (1 + math.erf(3 / 2 ** .5))) \
        < 1e-15


def test_layer_norm_centres_and_scales_each_row():
    x = np.random.default_rng(0).normal(size=(3, 16)) * 50 + 7
    normed = layer_norm(x, (np.ones(16), np.zeros(16)), 1e-12)
    np.testing.assert_allclose(normed.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(normed.std(axis=-1), 1, atol=1e-9)


def test_basic_words_split_punctuation_lowercase_and_strip_accents():
    assert basic_words("Café, don't!") == ["cafe", ",", "don", "'", "t", "!"]
    assert basic_words("a\u0007b 中文") == ["ab", "中", "文"]
    vocabulary = {"bank": 0, "##s": 1, "un": 2}
    assert split_word("banks", vocabulary) == ["bank", "##s"]
    assert split_word("unbank", vocabulary) == ["[UNK]"]  # "##bank" is not in it: the whole word is unknown


def test_a_model_folder_runs_as_it_is(tiny_model):
    model = load_model(tiny_model)
    pieces = model.pieces("The river banks.")
    assert [piece.text for piece in pieces] == ["[CLS]", "the", "river", "bank", "##s", ".", "[SEP]"]
    embedded, layers = encode(model.weights, np.array([piece.id for piece in pieces]))
    assert len(layers) == 2 and layers[0].attention.weights.shape == (2, 7, 7)
    np.testing.assert_allclose(layers[0].attention.weights.sum(axis=-1), 1.0)
    np.testing.assert_array_equal(layers[1].attention.query_inputs, layers[0].outputs)


def test_a_folder_without_its_vocabulary_is_named(tiny_model, tmp_path):
    (tmp_path / "model.safetensors").write_bytes((tiny_model / "model.safetensors").read_bytes())
    with pytest.raises(VectorsError, match="vocab.txt"):
        load_model(tmp_path)


def test_the_model_not_imported_names_the_command():
    with pytest.raises(VectorsError, match="attn-cli vectors import minilm"):
        load_model("minilm")



def test_ascii_sentences_split_as_by_the_general_rule():
    """basic_words' regular expressions for ASCII text give what the character-by-character rule gives."""
    import random

    from attn_cli.engine.wordpiece import character_words

    rng = random.Random(0)
    alphabet = [chr(code) for code in range(128)]
    for _ in range(2000):
        sentence = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        for lowercase in (True, False):
            assert basic_words(sentence, lowercase) == character_words(sentence, lowercase), repr(sentence)


@pytest.mark.parametrize("change", ["drop", "reshape"])
def test_a_model_that_is_not_bert_shaped_is_named(tiny_model, tmp_path, change):
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(tiny_model / "model.safetensors"))
    name = "encoder.layer.1.attention.self.key.weight"
    if change == "drop":
        del tensors[name]
    else:
        tensors[name] = tensors[name][:, :4].copy()
    for file in ("config.json", "vocab.txt"):
        (tmp_path / file).write_bytes((tiny_model / file).read_bytes())
    save_file(tensors, str(tmp_path / "model.safetensors"))
    with pytest.raises(VectorsError, match=name.replace(".", r"\.")):
        load_model(tmp_path)


def test_a_vocabulary_without_bert_s_special_tokens_is_named(tiny_model, tmp_path):
    for file in ("config.json", "model.safetensors"):
        (tmp_path / file).write_bytes((tiny_model / file).read_bytes())
    words = (tiny_model / "vocab.txt").read_text(encoding="utf-8").replace("[SEP]", "[SEP?]")
    (tmp_path / "vocab.txt").write_text(words, encoding="utf-8")
    with pytest.raises(VectorsError, match=r"\[SEP\]"):
        load_model(tmp_path)
