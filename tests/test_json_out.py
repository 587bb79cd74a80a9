"""The JSON writer: the same values at any size (every number the same float64), NaN refused, large documents
spooled, never one string.

The reference is the plainest encoding of the same document: every array turned into
nested lists (None for ±inf) and one call of `json.dumps`. What is compared is what a
reader gets, the parsed values; spacing and the spelling of numbers are not the contract.
"""

from __future__ import annotations

import io
import json
import tempfile

import numpy as np
import pytest

import attn_cli
from attn_cli.render import json_out


def plain(value):
    """The document with arrays as nested lists of floats, ±inf as None: what json.dumps takes as is."""
    if isinstance(value, np.ndarray):
        cells = np.asarray(value, dtype=np.float64).astype(object)
        cells[np.isinf(value.astype(np.float64))] = None
        return cells.tolist()
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value.item() if isinstance(value, np.generic) else value


def reference(document: dict):
    return json.loads(json.dumps(plain(document), allow_nan=False))


def written(document: dict):
    """What write_json wrote, parsed (it is one line, ending with a newline)."""
    stream = io.StringIO()
    json_out.write_json(document, stream)
    text = stream.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    return json.loads(text)


def awkward_floats(count: int, seed: int = 0) -> np.ndarray:
    """Floats of every spelling: random bit patterns (every exponent, subnormals), the decades repr and orjson
    spell differently (1e-10 to 1e-4), their edges, ±0, ±inf, integers and values near 1e16."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**64, count, dtype=np.uint64).view(np.float64)
    edges = [1e-4, np.nextafter(1e-4, 0), 1e-5, 1e-10, np.nextafter(1e-10, 0), 1e-11, 0.0, -0.0, np.inf, -np.inf,
             1e16, np.nextafter(1e16, 0), 1e15, 5e-324, np.finfo(np.float64).max, 123456789.0, 1.0]
    values = np.concatenate([bits[np.isfinite(bits)], rng.normal(0, 1, count) * 10.0 ** rng.integers(-12, 3, count),
                             np.round(rng.normal(0, 1e6, count)), edges, -np.array(edges)])
    return rng.permutation(values)


@pytest.mark.parametrize("stream_above", [json_out.STREAM_ABOVE, 1_000])  # in one piece, and a part at a time
def test_rows_of_every_spelling_read_back_as_the_same_floats(monkeypatch, stream_above):
    monkeypatch.setattr(json_out, "STREAM_ABOVE", stream_above)
    values = awkward_floats(30_000)  # about 90,000 values
    document = {"small": values[:300].reshape(3, 100), "large": values[: 240 * 300].reshape(240, 300),
                "cube": values[:2 * 250 * 160].reshape(2, 250, 160), "row": values[:70_000], "empty": np.zeros((3, 0))}
    assert written(document) == reference(document)


def test_a_long_sentences_document_reads_back_as_the_stdlib_encoding():
    """120 tokens: every array of the document is a matrix of thousands of numbers, tiny ones among them."""
    words = ["money", "bank", "river", "grows", "the", "water", "flows", "of", "people", "said"]
    rng = np.random.default_rng(1)
    sentence = " ".join(rng.choice(words, 120))
    for settings in ({}, {"mask": "causal", "temperature": 0.05}, {"mode": "projected", "heads": 2}):
        result = attn_cli.explain(sentence, **settings)
        document = result.document()
        assert written(document) == reference(document) == json.loads(result.to_json())


@pytest.mark.parametrize("where", [0, 5, 69_999])
def test_nan_anywhere_in_a_streamed_array_is_refused_and_nothing_is_written(monkeypatch, where):
    monkeypatch.setattr(json_out, "STREAM_ABOVE", 1_000)
    values = awkward_floats(40_000)[:70_000].reshape(700, 100)
    values[where // 100, where % 100] = np.nan
    stream = io.StringIO()
    with pytest.raises(ValueError, match="refusing to write NaN"):
        json_out.write_json({"weights": values}, stream)
    assert stream.getvalue() == ""


def test_a_large_document_goes_through_the_spool_into_a_file(monkeypatch):
    rolled = []

    class Spool(tempfile.SpooledTemporaryFile):
        def rollover(self):
            rolled.append(True)
            super().rollover()

    document = {"weights": awkward_floats(100_000)[:200_000].reshape(400, 500), "name": "caf\u00e9"}
    expected = reference(document)
    monkeypatch.setattr(tempfile, "SpooledTemporaryFile", Spool)
    monkeypatch.setattr(json_out, "BUFFER_BYTES", 1 << 16)
    monkeypatch.setattr(json_out, "STREAM_ABOVE", 10_000)
    monkeypatch.setattr(json_out.orjson, "dumps", counted_dumps(json_out.orjson.dumps, limit=200_000))
    assert written(document) == expected
    assert rolled  # past BUFFER_BYTES the JSON is in a temporary file, not in memory


def counted_dumps(dumps, limit: int):
    """orjson.dumps that fails for an output longer than `limit` bytes: no piece is ever the whole document."""

    def checked(*args, **kwargs):
        data = dumps(*args, **kwargs)
        assert len(data) <= limit
        return data

    return checked


def test_a_twelve_word_document_says_each_number_once_in_at_most_20_kb():
    """Schema 3: the shares of every key are two n x n matrices, not ten records per token repeated in pulled_by
    and pulled_by_weight, so a 12-word document of the benchmark's shape (300-d vectors of GloVe's norms, raw
    attention, no neighbours) is at most 20 KB: v2 wrote 38.6 KB."""
    from gensim.models import KeyedVectors

    words = [f"w{i}" for i in range(12)]
    keyed = KeyedVectors(vector_size=300)
    keyed.add_vectors(words, np.random.default_rng(0).standard_normal((12, 300)) * 6 / np.sqrt(300))
    result = attn_cli.explain(" ".join(words), neighbors=0, vectors=attn_cli.Vectors.from_keyedvectors(keyed))
    document = result.to_dict()
    assert document["schema_version"] == 3 and np.array(document["shares"]["shift"]).shape == (12, 12)
    assert not {"contributions", "pulled_by_weight"} & set(document["shifts"][0])
    assert len(json_out.encode(result.document())) <= 20_000


def test_a_nan_in_a_stack_is_refused_though_its_blocks_are_not_walked():
    """The documents of a stack whose arrays are finite are not walked for NaN; one whose arrays are not is, and
    the NaN is refused as before."""
    result = attn_cli.explain("river bank flows", neighbors=0)
    stack, b = result.row()
    stack.shifts.cosine[b, 1] = np.nan  # as a bug would leave it
    with pytest.raises(ValueError, match="(?i)nan"):
        json_out.encode(result.document())
