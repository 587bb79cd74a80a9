"""Property-based fuzzing: whatever is typed, attn-cli answers with a result or one documented error.

The normal run tries a few dozen inputs per target; the long run sets the count:
    ATTN_CLI_FUZZ_EXAMPLES=100000 pytest -m fuzz -p no:cacheprovider
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attn_cli.errors import EXIT_CODES, InputError, VectorsError
from attn_cli.engine.tokenize import tokenize
from attn_cli.vectors import load_default_vectors, load_vectors
from attn_cli.vectors.readers import FLOAT32_MAX, parse_block

EXAMPLES = int(os.environ.get("ATTN_CLI_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
# whole processes' worth of work per input (a command line, a file import): a twentieth as many inputs
FUZZ_SLOW = settings(FUZZ, max_examples=max(40, EXAMPLES // 20))
pytestmark = pytest.mark.fuzz

DEFAULT_VECTORS = load_default_vectors()
WORDS = ["money", "bank", "grows", "river", "flows", "the", "a", "of"]

# text that mixes known words, unknown words, punctuation, emoji, scripts, controls and odd spaces
fragments = st.one_of(
    st.sampled_from(WORDS),
    st.text(min_size=1, max_size=12),
    st.sampled_from(["\u00a0", "\u200b", "\u202e", "\x00", "\t", "\r\n", "🏦", "بنك", "銀行", "ß", "İ", "'", "-"]),
)
sentences = st.lists(fragments, max_size=12).map(" ".join)


@FUZZ
@given(text=sentences, oov=st.sampled_from(["skip", "zero", "error"]))
def test_tokenize_returns_tokens_or_an_input_error(text, oov):
    try:
        tokenized = tokenize(text, DEFAULT_VECTORS, oov)
    except InputError as exc:
        assert exc.message and "\n" not in exc.message
        return
    assert len(tokenized.tokens) == tokenized.embeddings.shape[0] >= 1
    assert np.isfinite(tokenized.embeddings).all()
    positions = [t.position for t in tokenized.tokens] + [d.position for d in tokenized.dropped]
    assert sorted(positions) == list(range(len(positions)))  # every token accounted for once


def option_value(valid: list[str]):
    """A valid value, a number of any kind, or junk: what a person might type after the flag."""
    numbers = st.one_of(st.integers(-5, 300), st.floats(allow_nan=True, allow_infinity=True)).map(str)
    return st.one_of(st.sampled_from(valid), numbers, st.text(max_size=6))


OPTIONS = {
    "--mode": ["raw", "projected"],
    "--scale": ["none", "sqrt", "0", "0.5", "2"],
    "--temperature": ["1", "0.1", "10"],
    "--similarity": ["dot", "cosine"],
    "--heads": ["1", "2", "4", "8"],
    "--d-k": ["16", "32", "64"],
    "--seed": ["0", "1", "42"],
    "--mask": ["none", "causal"],
    "--positions": ["none", "sinusoidal"],
    "--oov": ["skip", "error", "zero"],
    "--neighbors": ["0", "1", "5"],
    "--neighbor-vocab": ["100", "all"],
    "--max-tokens": ["3", "1000"],
}


@st.composite
def command_lines(draw):
    command = draw(st.sampled_from(["explain", "trace", "compare"]))
    arguments = [command, draw(sentences)]
    if command == "compare":
        arguments.append(draw(sentences))
    for flag in draw(st.lists(st.sampled_from(sorted(OPTIONS)), unique=True, max_size=5)):
        arguments += [flag, draw(option_value(OPTIONS[flag]))]
    if draw(st.booleans()):
        arguments.append("--output-projection")
    return arguments + ["--json"]


@FUZZ_SLOW
@given(arguments=command_lines())
def test_any_command_line_gives_json_or_one_documented_error(run, arguments):
    result = run(*arguments)
    assert result.exit_code in EXIT_CODES and result.exit_code != 1, result.stderr
    assert "Traceback" not in result.stderr
    if result.exit_code == 0:
        for line in result.stdout.splitlines():
            json.loads(line)
    else:
        assert result.stdout == ""
        errors = [line for line in result.stderr.splitlines() if line.startswith("attn-cli: error: ")]
        assert len(errors) == 1, result.stderr


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8)
jsonl_lines = st.one_of(
    st.builds(lambda text, id, extra: json.dumps({"text": text, "id": id, **extra}), sentences, json_values,
              st.dictionaries(st.sampled_from(["lesson", "tag"]), json_values, max_size=2)),
    st.builds(lambda depth, text: "[" * depth + json.dumps({"text": text}) + "]" * depth, st.integers(0, 3000),
              sentences),
    st.sampled_from(['{"id": NaN, "text": "bank"}', '{"id": Infinity, "text": "bank"}', '{"id": 1e999, "text": "x"}',
                     '{"id": "\\ud800", "text": "bank"}', '{"text": "bank \\udc00"}', '{"text": 5}', "[]", "{",
                     '{"text": "money bank"}{"text": "x"}']),
    st.text(max_size=30),
)


@FUZZ_SLOW
@given(lines=st.lists(jsonl_lines, min_size=1, max_size=5))
def test_any_jsonl_input_gives_whole_json_lines_one_per_input_line(run, lines):
    """Whatever the lines hold, every input line gets one whole JSON line: its document or its error object."""
    text = "".join(line.replace("\n", " ").replace("\r", " ") + "\n" for line in lines)
    result = run("explain", "-", "--input-format", "jsonl", "--json", "--neighbors", "0", input=text)
    assert result.exit_code in (0, 3), result.stderr
    written = [json.loads(line) for line in result.stdout.splitlines()]
    expected = [number for number, line in enumerate(text.split("\n")[:-1], 1) if line.strip()]
    if len(expected) == 1 and result.exit_code == 3:  # a single line fails as a sentence argument would
        assert written == [] and result.stderr.count("attn-cli: error: ") == 1
        return
    assert [document["line"] for document in written] == expected
    assert all(("error" in document) != ("shifts" in document) for document in written)


# --- vector files ----------------------------------------------------------------------------

number_texts = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
    st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: f"{v:.6f}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: f"{v:.6g}"),
    st.integers(-10**12, 10**12).map(str),
    st.sampled_from(["0", "-0", ".5", "5.", "-.25", "+1.5", "1e-05", "1E+3", "0.000001", "123456789012345678"]),
)
vector_words = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=8)


@st.composite
def glove_blocks(draw):
    """(dims, block text, [(word, number texts)]) of well-formed lines, CRLF or LF, GloVe style."""
    dims = draw(st.integers(1, 6))
    lines = draw(st.lists(st.tuples(vector_words, st.lists(number_texts, min_size=dims, max_size=dims)),
                          min_size=1, max_size=8))
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    chunk = b"".join(word.encode() + b" " + b" ".join(n.encode() for n in numbers) + end for word, numbers in lines)
    return dims, chunk, lines


@FUZZ
@given(block=glove_blocks())
def test_fast_text_parser_agrees_with_float(block):
    """The numpy fast path must read every number as float32(float(text)) (within one ulp for ties)."""
    dims, chunk, lines = block
    parsed = parse_block(chunk, dims)
    in_range = [all(abs(float(n)) <= FLOAT32_MAX for n in numbers) for _, numbers in lines]
    assert [index for index, _, _ in parsed.bad] == [i for i, ok in enumerate(in_range) if not ok]
    kept = [(word, numbers) for (word, numbers), ok in zip(lines, in_range) if ok]
    assert [w.decode() for w in parsed.words] == [word for word, _ in kept]
    expected = np.array([[float(n) for n in numbers] for _, numbers in kept], dtype=np.float64)
    expected = expected.reshape(len(kept), dims).astype(np.float32)
    with np.errstate(over="ignore"):  # the spacing of float32's largest values is itself beyond float32
        assert np.all(np.abs(parsed.rows - expected) <= np.spacing(np.abs(expected)))


@FUZZ
@given(chunk=st.binary(max_size=300).map(lambda raw: raw + b"\n"), dims=st.integers(1, 5))
def test_text_parser_survives_any_bytes(chunk, dims):
    """Arbitrary bytes: parsed rows are finite, and every non-blank line is either parsed or reported."""
    parsed = parse_block(chunk, dims)
    assert parsed.rows.shape == (len(parsed.words), dims) and np.isfinite(parsed.rows).all()
    parsed_lines = set(parsed.line_numbers.tolist())
    bad_lines = {index for index, _, _ in parsed.bad}
    assert not parsed_lines & bad_lines
    lines = chunk.split(b"\n")[:-1]
    blank = {i for i, line in enumerate(lines) if not line.strip()}  # ASCII whitespace only (\v and \f too)
    assert parsed_lines | bad_lines | blank >= set(range(len(lines))) - blank


@FUZZ_SLOW
@given(content=st.one_of(st.binary(max_size=400),
                         glove_blocks().map(lambda block: block[1]),
                         st.tuples(glove_blocks(), st.binary(max_size=40)).map(lambda t: t[0][1] + t[1])),
       skip_bad=st.booleans())
def test_any_vector_file_loads_or_is_one_vectors_error(tmp_path_factory, content, skip_bad):
    path = tmp_path_factory.mktemp("fuzz") / "vectors.txt"
    path.write_bytes(content)
    from attn_cli.vectors.importer import LoadOptions

    try:
        vectors = load_vectors(str(path), LoadOptions(skip_bad_lines=skip_bad, warn=lambda message: None))
    except VectorsError as exc:
        assert exc.message and "\n" not in exc.message
        return
    assert vectors.count >= 1 and vectors.dims >= 1
    assert np.isfinite(np.asarray(vectors.matrix, dtype=np.float32)).all()
    assert path.read_bytes() == content  # the user's file is never touched


@FUZZ_SLOW
@given(words=st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=6, unique=True))
def test_any_vocabulary_word_reaches_the_tables_literally(words):
    """Words of a vector set, as neighbours and in the sentence, never put a control or bidi character into
    the tables (errors.literal): the terminal sanitiser's target."""
    import re

    import attn_cli
    from attn_cli.vectors.store import Vectors

    vocabulary = ["money", "bank", *words]
    matrix = np.random.default_rng(len(words)).normal(size=(len(vocabulary), 4)).astype(np.float32)
    vectors = Vectors("fuzz\x1b[2J", vocabulary, matrix, lowercase=False)
    try:
        result = attn_cli.explain(" ".join(vocabulary), vectors=vectors, neighbors=len(vocabulary))
    except InputError:
        return
    shown = re.sub(r"\x1b\[[0-9;]*m|\n", "", str(result))
    assert not re.search("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029"
                         "\ud800-\udfff]", shown)


CACHE_FILES = ["meta.json", "index.npy", "offsets.npy", "vocab.txt", "norms.npy", "matrix.npy"]
meta_values = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63), st.floats(), st.text(max_size=6),
                        st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(),
                                                                                 max_size=2))


@st.composite
def cache_damage(draw):
    """A change to one file of a cached set: a metadata field set to any JSON value, or bytes overwritten."""
    name = draw(st.sampled_from(CACHE_FILES))
    if name == "meta.json" and draw(st.booleans()):
        return name, ("field", draw(st.sampled_from(["count", "dims", "format", "source", "limit", "lowercase",
                                                     "name", "layout", "words_bytes", "bogus"])), draw(meta_values))
    return name, ("bytes", draw(st.integers(0, 4096)), draw(st.binary(min_size=1, max_size=64)))


@FUZZ_SLOW
@given(damage=cache_damage())
def test_any_damaged_cache_is_rebuilt_or_one_vectors_error(tmp_path_factory, damage):
    """Whatever one file of a cached set holds, the next load gives one VectorsError or a set whose lookups
    end in range and whose rows are finite: never a hang or another exception; a damaged metadata field is
    caught and the set rebuilt exactly (the cache metadata's target). Bytes changed inside the word list
    itself are not detected: that would cost a hash of the whole list on every warm run."""
    from attn_cli.vectors.importer import LoadOptions

    root = tmp_path_factory.mktemp("cache")
    source = root / "vectors.txt"
    rng = np.random.default_rng(0)
    words = ["money", "bank", "grows", "river", "flows", "the"]
    source.write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in rng.normal(size=4))}\n" for w in words))
    old = os.environ.get("ATTN_CLI_CACHE")
    os.environ["ATTN_CLI_CACHE"] = str(root / "cache")
    try:
        expected = np.asarray(load_vectors(str(source), LoadOptions()).matrix, dtype=np.float32).copy()
        [folder] = (root / "cache" / "v1").iterdir()
        name, (kind, where, value) = damage
        path = folder / name
        if kind == "field":
            meta = json.loads(path.read_text(encoding="utf-8"))
            meta[where] = value
            path.write_text(json.dumps(meta), encoding="utf-8")
        else:
            data = bytearray(path.read_bytes())
            data[where:where + len(value)] = value
            path.write_bytes(bytes(data))
        try:
            vectors = load_vectors(str(source), LoadOptions(warn=lambda message: None))
            found = [vectors.lookup(word) for word in words]  # a bounded probe: in range, None, or DamagedCache
            rows = [row for _, row in filter(None, found)]
            got = vectors.rows(rows)
        except VectorsError as exc:
            message = exc.message
            assert message and "\n" not in message, repr(message)
            return
        assert all(0 <= row < vectors.count for row in rows)
        assert np.isfinite(got).all()
        if name == "meta.json":  # metadata is checked whole: a damaged field means a rebuilt, exact set
            assert len(rows) == len(words)
            np.testing.assert_array_equal(got.astype(np.float32), expected)
    finally:
        if old is None:
            os.environ.pop("ATTN_CLI_CACHE", None)
        else:
            os.environ["ATTN_CLI_CACHE"] = old
