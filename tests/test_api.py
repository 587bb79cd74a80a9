"""The public Python API: what a notebook or script gets, checked against the command line's own JSON."""

from __future__ import annotations

import dataclasses
import functools
import json

import numpy as np
import pytest

import attn_cli
from attn_cli.api import explain_tokenized
from attn_cli.engine.attention import softmax
from attn_cli.settings import Settings

SENTENCE = "money bank grows"


def cli_json(run, *args: str) -> dict:
    result = run(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def as_json(result) -> dict:
    return json.loads(result.to_json())


@pytest.mark.quick
def test_explain_is_the_documented_first_call(run):
    result = attn_cli.explain(SENTENCE)
    assert result.tokens == ["money", "bank", "grows"]
    assert result.weights.shape == (1, 3, 3)
    np.testing.assert_allclose(result.weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(result.weights, softmax(result.logits))
    document = cli_json(run, "explain", SENTENCE)
    assert result.to_dict() == document  # plain Python values, exactly the JSON
    assert [[(pull.index, pull.weight, pull.shift_share) for pull in pulls] for pulls in result.pulled_by] == [
        [(pull["index"], pull["weight"], pull["shift_share"]) for pull in shift["pulled_by"]]
        for shift in document["shifts"]]
    assert [(pull.index, round(pull.shift_share, 3)) for pull in result.pulled_by[1]] == [(0, 0.617), (2, 0.383)]


@pytest.mark.parametrize("settings, options", [
    ({"mode": "projected", "heads": 4, "scale": "sqrt", "seed": 3},
     ["--mode", "projected", "--heads", "4", "--scale", "sqrt", "--seed", "3"]),
    ({"mask": "causal", "positions": "sinusoidal", "temperature": 0.5, "scale": 0.125, "neighbors": 2},
     ["--mask", "causal", "--positions", "sinusoidal", "--temperature", "0.5", "--scale", "0.125",
      "--neighbors", "2"]),
    ({"similarity": "cosine", "include": ("embeddings", "qkv", "outputs"), "neighbor_vocab": None},
     ["--similarity", "cosine", "--include", "embeddings,qkv,outputs", "--neighbor-vocab", "all"]),
])
def test_to_dict_is_the_cli_json_for_the_same_settings(run, settings, options):
    result = attn_cli.explain(SENTENCE, **settings)
    assert as_json(result) == cli_json(run, "explain", SENTENCE, *options)
    assert as_json(attn_cli.explain(SENTENCE, settings=attn_cli.Settings(**settings))) == as_json(result)


def test_trace_compare_and_cross_match_their_commands(run):
    trace = attn_cli.trace(SENTENCE, word="bank", dims=4)
    assert as_json(trace) == cli_json(run, "trace", SENTENCE, "--word", "bank", "--dims", "4")
    assert trace.traced == [1]
    compared = attn_cli.compare(["river bank flows", SENTENCE], word="bank")
    assert as_json(compared) == cli_json(run, "compare", "river bank flows", SENTENCE, "--word", "bank")
    assert [word.word for word in compared.words] == ["bank"]
    crossed = attn_cli.cross("river bank flows", SENTENCE)
    assert crossed.weights.shape == (1, 3, 3)
    assert as_json(crossed) == cli_json(run, "compare", "river bank flows", SENTENCE, "--cross")


def test_keyed_vectors_in_and_out_keep_words_and_values():
    from gensim.models import KeyedVectors

    rng = np.random.default_rng(0)
    keyed = KeyedVectors(vector_size=8)
    keyed.add_vectors(["river", "bank", "flows", "money", "grows"], rng.standard_normal((5, 8)).astype(np.float32))
    vectors = attn_cli.Vectors.from_keyedvectors(keyed)
    assert list(vectors.words) == keyed.index_to_key
    assert np.array_equal(np.asarray(vectors.matrix).view(np.uint32), keyed.vectors.view(np.uint32))
    back = vectors.to_keyedvectors()
    assert back.index_to_key == keyed.index_to_key
    assert np.array_equal(back.vectors.view(np.uint32), keyed.vectors.view(np.uint32))
    direct = attn_cli.explain(SENTENCE, vectors=keyed, neighbors=2)
    assert as_json(direct) == as_json(attn_cli.explain(SENTENCE, vectors=vectors, neighbors=2))
    np.testing.assert_array_equal(direct.embeddings, keyed.vectors[[3, 1, 4]].astype(np.float64))


def test_the_default_set_goes_through_keyed_vectors_unchanged():
    default = attn_cli.load_vectors()
    again = attn_cli.Vectors.from_keyedvectors(default.to_keyedvectors(), name=default.name)
    first, second = as_json(attn_cli.explain(SENTENCE)), as_json(attn_cli.explain(SENTENCE, vectors=again))
    first["vectors"], second["vectors"] = {}, {}  # provenance differs; every number must not
    assert first == second


@pytest.mark.parametrize("settings, message", [
    ({"heads": 0}, "heads must be at least 1"),
    ({"scale": "square"}, "scale must be 'none', 'sqrt' or a finite number from 0 to 1,000,000 (got 'square')"),
    ({"temperature": 0}, "temperature must be a finite number >= 1e-06"),
    ({"d_k": 8}, "d_k applies only to projected mode; add mode='projected'"),
    ({"heads": 5}, "heads 5 does not divide the width 128"),
    ({"mode": "learned"}, "mode must be one of 'raw', 'projected' (got 'learned')"),
    ({"mode": "trained"}, "mode 'trained' needs the weights of a layer made by attn-cli train; add weights='FILE'"),
    ({"neighbor_vocab": 0}, "neighbor_vocab must be at least 1, or None for all words"),
    ({"include": ("gradients",)}, "include got unknown gradients"),
    ({"head": 2}, "head is not a setting; did you mean 'heads'?"),
])
def test_bad_settings_raise_a_value_error_that_speaks_python(settings, message):
    with pytest.raises(attn_cli.SettingsError) as caught:
        attn_cli.explain(SENTENCE, **settings)
    assert isinstance(caught.value, ValueError)
    assert str(caught.value).startswith(message)
    assert "--" not in str(caught.value)


def test_errors_of_the_input_name_keywords_in_python_and_options_on_the_command_line(run):
    with pytest.raises(attn_cli.InputError, match=r"^the sentence has 3 tokens, more than max_tokens=2; "
                                                  r"shorten it or pass max_tokens=3 "):
        attn_cli.explain(SENTENCE, max_tokens=2)
    with pytest.raises(attn_cli.InputError, match=r"^word 'river' is not among"):
        attn_cli.trace(SENTENCE, word="river")
    result = run("explain", SENTENCE, "--max-tokens", "2")
    assert result.exit_code == 3 and "more than --max-tokens 2; shorten it or pass --max-tokens 3" in result.stderr


def test_the_report_renders_inline_self_contained_and_as_tables(tmp_path):
    result = attn_cli.explain(SENTENCE)
    cell = result._repr_html_()
    assert "<iframe srcdoc=" in cell and "<script" not in cell  # the page is escaped inside srcdoc
    page = result.to_html()
    assert "attn_cli.explain(&#x27;money bank grows&#x27;)" in page or "attn_cli.explain('money bank grows')" in page
    for fetch in ("<script src", "<link", "@import", "url(http", 'src="http'):
        assert fetch not in page
    written = tmp_path / "report.html"
    assert result.to_html(written) == page == written.read_text(encoding="utf-8")
    tables = str(result)
    assert "Weights: w = softmax(s × 1 / 1)" in tables and "money" in tables
    assert repr(result) == "<ExplainResult 'money bank grows': 3 tokens, 1 head(s), raw mode>"
    changed = attn_cli.explain("money bank grows", mode="projected", heads=2, temperature=0.5)
    assert repr(changed) == ("<ExplainResult 'money bank grows': 3 tokens, 2 head(s), projected mode; "
                             "mode='projected', temperature=0.5, heads=2>")


def test_load_vectors_takes_a_file_through_the_cache(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("money 1 0\nbank 0.5 0.5\ngrows 0 1\n", encoding="utf-8")
    vectors = attn_cli.load_vectors(path, limit=2)
    assert list(vectors.words) == ["money", "bank"] and vectors.details["format"] == "glove"
    with pytest.raises(attn_cli.SettingsError, match="^limit must be at least 1"):
        attn_cli.load_vectors(path, limit=0)
    with pytest.raises(attn_cli.VectorsError, match="skip_bad_lines=True"):
        bad = tmp_path / "bad.txt"
        bad.write_text("money 1 0\nbank 0.5\n", encoding="utf-8")
        attn_cli.load_vectors(bad)


def python_examples() -> list[tuple[str, str]]:
    """(page, code) of the README and each docs page with ```python blocks, a page's blocks run in order."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    blocks = {page.name: re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S) for page in pages}
    return [(name, "\n".join(code)) for name, code in blocks.items() if code]


@pytest.mark.parametrize("page, code", python_examples(), ids=[page for page, _ in python_examples()])
def test_the_python_examples_in_the_docs_run(tmp_path, monkeypatch, page, code):
    """Each block runs as shown, in a folder holding the GloVe file and the corpus it names and a KeyedVectors
    `kv`; the demo trains on a tenth of its generated sentences (the full demo is checked on conftest.demo_run)."""
    from attn_cli.training import demo
    from attn_cli.training.demo import demo_corpus

    monkeypatch.setattr(demo, "demo_corpus", functools.partial(demo_corpus, sentences=225))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "glove.6B.100d.txt").write_text("the 0.1 0.2\nmoney 0.3 0.1\nbank 0.2 0.2\ngrows 0.1 0.4\n",
                                                encoding="utf-8")
    (tmp_path / "corpus.txt").write_text("\n".join(demo_corpus(attn_cli.load_vectors(), sentences=100).lines))
    exec(compile(code, page, "exec"), {"kv": attn_cli.load_vectors().to_keyedvectors()})


def test_a_keyed_vectors_gives_what_the_same_file_gives(tmp_path, run):
    """gensim's reading of a GloVe file, passed in memory, gives the CLI's numbers for that file, neighbours too."""
    from gensim.models import KeyedVectors

    rng = np.random.default_rng(1)
    words = ["money", "bank", "grows", "river", "flows", "cash", "water", "loan"]
    path = tmp_path / "glove.txt"
    path.write_text("".join(f"{word} " + " ".join(f"{x:.6f}" for x in rng.standard_normal(16)) + "\n"
                            for word in words), encoding="utf-8")
    keyed = KeyedVectors.load_word2vec_format(str(path), no_header=True)
    ours = attn_cli.explain(SENTENCE, vectors=keyed).to_dict()
    document = cli_json(run, "explain", SENTENCE, "--vectors", str(path))
    ours["vectors"], document["vectors"] = {}, {}
    assert ours == document


def test_badly_typed_settings_are_setting_errors_too():
    for settings in ({"heads": "4"}, {"heads": 2.0}, {"heads": True}, {"temperature": "1"}, {"seed": -1},
                     {"scale": True}, {"d_k": 8.0, "mode": "projected"}, {"output_projection": 1}):
        with pytest.raises(attn_cli.SettingsError):
            attn_cli.explain(SENTENCE, **settings)
    assert attn_cli.explain(SENTENCE, include="qkv,embeddings").settings.include == ("qkv", "embeddings")
    assert attn_cli.explain(SENTENCE, neighbors=np.int64(2)).to_dict()["settings"]["neighbors"] == 2
    with pytest.raises(attn_cli.SettingsError, match="^dims must be at least 1"):
        attn_cli.trace(SENTENCE, dims=0)
    with pytest.raises(TypeError, match="^sentence must be a str, not NoneType"):
        attn_cli.explain(None)  # type: ignore[arg-type]
    with pytest.raises(attn_cli.SettingsError, match="^format must be one of glove, .*gensim-pickle"):
        attn_cli.load_vectors("vectors.txt", format="foo")


def test_the_python_api_names_remedies_as_keyword_arguments():
    """The tables and the report of a result made in Python spell settings as keywords, the CLI as options."""
    result = attn_cli.explain(SENTENCE, scale="sqrt", temperature=0.01)
    assert "hint try similarity='cosine'" in " ".join(str(result).split())
    assert "--" not in str(result).split("hint")[1]
    assert '"spelling":"keywords"' in result.to_html().replace(" ", "")
    compared = pytest.raises(attn_cli.InputError, attn_cli.compare, ["river flows", "money grows"])
    assert "attn_cli.cross(source, target)" in str(compared.value) and "cross=True" not in str(compared.value)


def test_a_limit_applies_to_the_default_set_and_reprs_are_short():
    vectors = attn_cli.load_vectors(limit=10)
    assert vectors.count == 10 and repr(vectors) == "<Vectors 'default (minilm-l6-128d)': 10 words x 128 dims>"
    assert repr(attn_cli.trace(SENTENCE, word="bank")).startswith("<TraceResult 'money bank grows'")
    assert attn_cli.load_vectors().to_keyedvectors().vectors.dtype == np.float32


def test_a_results_diagnostics_are_its_own_and_follow_its_attention():
    """Issue 15 audit: the diagnosis a batch computes for its documents must not leak: `.warnings` and
    `.diagnostics` are fresh objects on every access, and a result whose attention was replaced describes the
    new attention, in its properties and in its document."""
    vectors, settings = attn_cli.load_vectors(), Settings(temperature=0.001)
    [hot] = explain_tokenized([(SENTENCE, attn_cli.api.tokenized_for(SENTENCE, vectors, settings))], vectors, settings)
    assert hot.warnings and hot.warnings is not hot.warnings
    hot.warnings.clear()
    hot.diagnostics[0].pop()
    diagnostics = hot.to_dict()["diagnostics"]
    assert len(diagnostics["warnings"]) == 1 and len(diagnostics["heads"][0]["rows"]) == 3
    cool = dataclasses.replace(hot, attention=attn_cli.explain(SENTENCE).attention)
    assert cool.warnings == [] and cool.to_dict()["diagnostics"] == attn_cli.explain(SENTENCE).to_dict()["diagnostics"]


@pytest.mark.parametrize("call, exception, words", [
    (lambda: attn_cli.explain(42), attn_cli.InputError, "sentence must be a str, not int"),
    (lambda: attn_cli.explain(SENTENCE, vectors=3.5), attn_cli.SettingsError, "vectors must be attn_cli.Vectors"),
    (lambda: attn_cli.explain(SENTENCE, heads="2"), attn_cli.SettingsError, "heads must be an int, got '2'"),
    (lambda: attn_cli.explain(SENTENCE, settings={}), attn_cli.SettingsError, "settings must be an attn_cli.Settings"),
    (lambda: attn_cli.explain(SENTENCE, similarity=1), attn_cli.SettingsError, "similarity must be one of"),
    (lambda: attn_cli.train(["a b"], settings={}), attn_cli.SettingsError, "settings must be an attn_cli.Training"),
    (lambda: attn_cli.explain_many("money bank"), attn_cli.InputError, "not one str"),
])
def test_a_wrong_type_is_the_library_s_error_and_a_type_error(call, exception, words):
    """Python users catch TypeError for a wrong type; the library's own family still holds it, in its words."""
    with pytest.raises(exception, match=words) as caught:
        result = call()
        next(result)  # explain_many checks when iterated
    assert isinstance(caught.value, TypeError)


def test_a_wrong_value_is_not_a_type_error():
    with pytest.raises(attn_cli.SettingsError) as caught:
        attn_cli.explain(SENTENCE, heads=0)
    assert not isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)


def test_result_arrays_are_read_only_so_documents_stay_what_the_engine_computed():
    result = attn_cli.explain("money bank grows")
    before = result.to_dict()["heads"]
    for name in ("scores", "logits", "weights", "outputs", "queries", "keys", "values", "embeddings"):
        array = getattr(result, name)
        assert not array.flags.writeable, name
        with pytest.raises(ValueError, match="read-only"):
            array[...] = 0
    copy = np.array(result.weights)
    copy[...] = 0  # a copy is the user's to edit
    assert result.to_dict()["heads"] == before
    cross = attn_cli.cross("river bank", "money bank")
    assert not cross.weights.flags.writeable and not cross.outputs.flags.writeable


def test_per_row_records_carry_their_tokens_beside_their_indices():
    result = attn_cli.explain("money bank grows")
    assert [shift.token for shift in result.shifts] == result.tokens
    for shift in result.shifts:
        for contribution in shift.contributions + shift.pulled_by:
            assert contribution.token == result.tokens[contribution.index]
    assert [[c.token for c in row] for row in result.pulled_by] == [
        [result.tokens[c.index] for c in row] for row in result.pulled_by]
    for rows in result.diagnostics:
        assert [row.token for row in rows] == result.tokens
        assert all(row.argmax_token == result.tokens[row.argmax] for row in rows)
    cross = attn_cli.cross("river bank", "money bank grows")  # keys are the source's tokens
    assert [shift.token for shift in cross.shifts] == ["money", "bank", "grows"]
    assert {c.token for shift in cross.shifts for c in shift.contributions} <= {"river", "bank"}


def _generator_compare():
    return attn_cli.compare(sentence for sentence in ["river bank flows", "money bank grows"])


WRONG_TYPES = [
    # (call, the library error it must be, the Python type users catch, words of the message)
    (lambda tmp: attn_cli.remove_cached(["good.txt"]), attn_cli.SettingsError, TypeError, "attn_cli.CachedSet"),
    (lambda tmp: attn_cli.describe_vectors("good.txt"), attn_cli.SettingsError, TypeError, "attn_cli.Vectors"),
    (lambda tmp: attn_cli.Vectors.from_keyedvectors(42), attn_cli.SettingsError, TypeError, "KeyedVectors"),
    (lambda tmp: attn_cli.train(iter([1, 2, 3])), attn_cli.InputError, TypeError, "sentences[0] must be a str"),
    (lambda tmp: attn_cli.train(42), attn_cli.InputError, TypeError, "an iterable of str"),
    (lambda tmp: attn_cli.train(None), attn_cli.InputError, TypeError, "an iterable of str"),
    (lambda tmp: attn_cli.train([b"money bank"]), attn_cli.InputError, TypeError, "sentences[0] must be a str"),
    (lambda tmp: list(attn_cli.explain_many(42)), attn_cli.InputError, TypeError, "lines must be an iterable"),
    (lambda tmp: list(attn_cli.trace_many(5)), attn_cli.InputError, TypeError, "lines must be an iterable"),
    (lambda tmp: attn_cli.load_vectors(42), attn_cli.SettingsError, TypeError, "source must be"),
    (lambda tmp: attn_cli.load_layer(None), attn_cli.SettingsError, TypeError, "path must be"),
    (lambda tmp: attn_cli.find_cached(None), attn_cli.SettingsError, TypeError, "source must be"),
    (lambda tmp: attn_cli.download_vectors(42), attn_cli.SettingsError, TypeError, "name must be"),
    (lambda tmp: attn_cli.compare(["river bank", "money bank"], word=42), attn_cli.InputError, TypeError,
     "word must be a str or a list of str"),
    (lambda tmp: attn_cli.write_file(tmp / "out.txt", 42), attn_cli.InputError, TypeError,
     "data must be str or bytes"),
    (lambda tmp: attn_cli.write_file("/dev/full", "x"), attn_cli.AttnError, OSError, "cannot write /dev/full"),
    (lambda tmp: attn_cli.write_file(tmp, "x"), attn_cli.AttnError, OSError, "cannot write {tmp}"),
    (lambda tmp: attn_cli.write_file("/nonexist/x", "x"), attn_cli.AttnError, OSError, "cannot write /nonexist/x:"),
]


@pytest.mark.parametrize("call, library, python, words", WRONG_TYPES, ids=[str(n) for n in range(len(WRONG_TYPES))])
def test_the_api_raises_its_own_errors_for_wrong_arguments(tmp_path, call, library, python, words):
    """Every public function refuses a wrong argument in its own words (issue 25 item 12): an AttnError that is
    also the TypeError or OSError Python users catch, naming the argument or the target, never a raw
    AttributeError from inside, nor a temporary file's name."""
    with pytest.raises(library) as caught:
        call(tmp_path)
    assert isinstance(caught.value, python)
    assert words.format(tmp=tmp_path) in str(caught.value)
    assert ".tmp" not in str(caught.value).replace(str(tmp_path), "")


def test_compare_takes_any_iterable_of_sentences():
    """compare with a generator raised "object of type 'generator' has no len()"; any iterable is taken."""
    assert [compared.word for compared in _generator_compare().words] == ["bank"]
