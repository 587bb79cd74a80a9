"""The weights file of a trained layer: round trip, provenance, and hostile or mismatched files refused.

The layers here are built directly (seeded draws standing in for learnt weights), so these tests check the
file and the plumbing of `--weights` alone; tests/test_training.py trains real ones.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import jsonschema
import numpy as np
import pytest

import attn_cli
from attn_cli.errors import SettingsError, WeightsError
from attn_cli.training.weights import load_layer
from conftest import stand_in_layer

SENTENCE = "money bank grows"


@pytest.fixture(scope="module")
def vectors():
    return attn_cli.load_vectors()


@pytest.fixture
def layer_file(tmp_path, vectors) -> Path:
    path = tmp_path / "layer.npz"
    stand_in_layer(vectors, heads=2, d_k=64).save(path)
    return path


def test_a_layer_reads_back_exactly(layer_file, vectors):
    layer = stand_in_layer(vectors, heads=2, d_k=64)
    loaded = load_layer(layer_file)
    for name in ("w_q", "w_k", "w_v", "w_o"):
        assert np.array_equal(getattr(loaded.projections, name), getattr(layer.projections, name))
    assert loaded.digest == layer.digest
    assert loaded.layer == layer.layer and loaded.provenance == layer.provenance
    assert loaded.source == str(layer_file)


def test_the_file_is_written_whole_over_an_old_one_and_keeps_its_mode(tmp_path, vectors):
    path = tmp_path / "layer.npz"
    path.write_bytes(b"an old file")
    os.chmod(path, 0o640)
    stand_in_layer(vectors).save(path)
    assert load_layer(path).layer["heads"] == 1
    assert (path.stat().st_mode & 0o777) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["layer.npz"]  # no temporary file left behind


def test_explain_with_weights_adopts_the_layer_and_names_it(layer_file, vectors):
    result = attn_cli.explain(SENTENCE, weights=layer_file)
    assert result.settings.mode == "trained" and result.settings.heads == 2 and result.settings.d_k == 64
    assert result.settings.mask == "others"
    assert result.python_call() == f"attn_cli.explain({SENTENCE!r}, weights={str(layer_file)!r})"
    document = result.to_dict()
    assert document["weights"]["file"] == str(layer_file)
    assert document["weights"]["digest"] == load_layer(layer_file).digest
    assert document["settings"]["mode"] == "trained"
    assert np.allclose(np.diagonal(result.weights, axis1=1, axis2=2), 0.0)  # mask "others": no word sees itself


def test_the_initial_pass_is_what_projected_mode_shows_for_the_same_seed(layer_file):
    trained = attn_cli.explain(SENTENCE, weights=layer_file).to_dict()
    projected = attn_cli.explain(SENTENCE, mode="projected", seed=3, heads=2, d_k=64, output_projection=True,
                                 scale="sqrt", mask="others").to_dict()
    for start, random in zip(trained["initial"]["heads"], projected["heads"]):
        assert np.array_equal(start["weights"], random["weights"])
    assert not np.allclose(trained["heads"][0]["weights"], projected["heads"][0]["weights"])


def test_the_json_of_every_command_validates(run, layer_file, explain_schema, schema_validator):
    for command, schema in (("explain", "explain"), ("trace", "trace")):
        result = run(command, SENTENCE, "--weights", str(layer_file), "--json")
        assert result.exit_code == 0, result.stderr
        document = json.loads(result.stdout)
        schema_validator(schema).validate(document)
        assert document["weights"]["layer"]["heads"] == 2 and "initial" in document
    trace = json.loads(run("trace", SENTENCE, "--word", "bank", "--weights", str(layer_file), "--json").stdout)
    assert trace["projections"]["trained"] == str(layer_file)
    w_q = load_layer(layer_file).projections.w_q
    assert trace["projections"]["rows"]["w_q"][0]["first"] == w_q[0, :3].tolist()
    cross = run("compare", "river bank flows", SENTENCE, "--cross", "--weights", str(layer_file), "--json")
    assert cross.exit_code == 0, cross.stderr
    schema_validator("compare").validate(json.loads(cross.stdout))


def test_the_tables_name_the_file_and_its_training(run, layer_file):
    result = run("explain", SENTENCE, "--weights", str(layer_file))
    assert result.exit_code == 0, result.stderr
    assert "trained projections (from seed 3)" in result.stdout
    assert "masked-word on corpus.txt (18 sentences), 1 epoch, held-out loss 9.500" in " ".join(result.stdout.split())


def test_the_shift_table_says_a_layer_has_its_own_scale(run, layer_file):
    """A trained layer's s = x W_V W_O is on the scale it learnt (|y−s| of 40 where raw mode's is 0.5): the tables
    say so with the range of |s|; raw mode's say nothing of it."""
    report = json.loads(run("explain", SENTENCE, "--weights", str(layer_file), "--json").stdout)
    norms = [shift["static_norm"] for shift in report["shifts"]]
    table = " ".join(run("explain", SENTENCE, "--weights", str(layer_file)).stdout.split())
    assert f"|s| {min(norms):.1f} to {max(norms):.1f}" in table
    assert "|s|" not in run("explain", SENTENCE).stdout


def test_a_setting_the_layer_fixes_cannot_be_changed(run, layer_file):
    result = run("explain", SENTENCE, "--weights", str(layer_file), "--heads", "4")
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"attn-cli: error: --heads is fixed by weights file {layer_file}, which was "
                                     "trained with 2; leave it out (or train another layer)")
    with pytest.raises(SettingsError, match="mask is fixed by"):
        attn_cli.explain(SENTENCE, weights=layer_file, mask="causal")
    assert run("explain", SENTENCE, "--weights", str(layer_file), "--heads", "2").exit_code == 0  # the same: fine


def test_another_vector_set_is_refused_with_the_fix(run, layer_file, tmp_path):
    result = run("explain", SENTENCE, "--weights", str(layer_file), "--limit", "5000")
    assert result.exit_code == 5 and result.stdout == ""
    assert "was trained on the vector set 'default (minilm-l6-128d)' (21,745 words x 128 dims), not on" in result.stderr
    assert "use the embedded set (leave out --vectors), or train a layer for these vectors" in result.stderr
    with pytest.raises(WeightsError, match="was trained on the vector set"):
        attn_cli.explain(SENTENCE, weights=layer_file, vectors=attn_cli.load_vectors(limit=5000))


def test_what_a_file_says_is_shortened_in_messages(run, layer_file):
    """A vector set named in 100,000 characters and a limit of 4,000 digits made a 100 KB error line."""
    rewritten(layer_file, lambda metadata: metadata["vectors"].update(name="v" * 100_000, default=False,
                                                                      limit=10**3999))
    result = run("explain", SENTENCE, "--weights", str(layer_file), "--limit", "5000")
    assert result.exit_code == 5 and len(result.stderr.splitlines()) == 1
    assert "vvvv… (100,000 characters)" in result.stderr and len(result.stderr) < 1000


def test_an_output_may_not_replace_the_weights_file(run, layer_file):
    before = layer_file.read_bytes()
    result = run("explain", SENTENCE, "--weights", str(layer_file), "--html", str(layer_file))
    assert result.exit_code == 2 and "is the --weights input" in result.stderr
    assert layer_file.read_bytes() == before


def rewritten(path: Path, change) -> None:
    """The file with its metadata passed through `change(dict)`; the matrices as they were."""
    with np.load(path) as stored:
        arrays = {name: stored[name] for name in stored.files}
    metadata = json.loads(str(arrays.pop("metadata")))
    change(metadata)
    np.savez(path, metadata=np.array(json.dumps(metadata)), **arrays)


def hostile(path: Path, kind: str) -> None:
    """Damage a good weights file in one way."""
    if kind == "text":
        path.write_text("W_Q = [[1, 2], [3, 4]]\n")
    elif kind == "truncated":
        path.write_bytes(path.read_bytes()[:2000])
    elif kind == "pickle":
        payload = np.array([{"a": 1}], dtype=object)
        with np.load(path) as stored:
            arrays = {name: stored[name] for name in stored.files}
        arrays["w_q"] = payload
        np.savez(path, **arrays)
    elif kind == "bomb":
        buffer = io.BytesIO()
        np.save(buffer, np.zeros((4096, 4096)))  # 128 MB of zeros: a few hundred KB compressed
        with_w_q(path, lambda _: buffer.getvalue())
    elif kind == "nan":
        with np.load(path) as stored:
            arrays = {name: stored[name] for name in stored.files}
        arrays["w_k"] = arrays["w_k"].copy()
        arrays["w_k"][0, 0] = np.nan
        np.savez(path, **arrays)
    elif kind in ("huge", "float32 max"):  # finite, and a float64 file holds them, but the scores would overflow
        with np.load(path) as stored:
            arrays = {name: stored[name] for name in stored.files}
        arrays["w_v"] = arrays["w_v"].copy()
        arrays["w_v"][3, 5] = 1e30 if kind == "huge" else -3e38
        np.savez(path, **arrays)
    elif kind == "newer":
        rewritten(path, lambda metadata: metadata.update(format_version=99))
    elif kind == "no corpus":
        rewritten(path, lambda metadata: metadata.pop("corpus"))
    elif kind == "other format":
        rewritten(path, lambda metadata: metadata.update(format="something-else"))
    elif kind == "wrong shape":
        rewritten(path, lambda metadata: metadata["layer"].update(d_k=32))
    elif kind == "bad mask":
        rewritten(path, lambda metadata: metadata["layer"].update(mask="bogus"))
    elif kind == "deep":  # nested deeper than Python's recursion limit: written as text, as no dict could hold it
        with np.load(path) as stored:
            arrays = {name: stored[name] for name in stored.files}
        text = str(arrays.pop("metadata"))[:-1] + ', "extra": ' + "[" * 5000 + "]" * 5000 + "}"
        np.savez(path, metadata=np.array(text), **arrays)
    elif kind == "loss of 400 digits":  # a whole number no float holds: math.isfinite overflowed (exit 1)
        rewritten(path, lambda metadata: metadata["training"].update(held_out_loss=10**400))
    elif kind == "infinite loss":
        rewritten(path, lambda metadata: metadata["training"].update(held_out_loss=float("inf")))
    elif kind == "encrypted":  # the general-purpose flag's bit 0, in the local and the central header
        patched(path, "w_q.npy", local=(6, lambda flags: flags | 1), central=(8, lambda flags: flags | 1))
    elif kind == "unknown compression":  # method 99 (AE-x), which zipfile cannot inflate
        patched(path, "w_q.npy", local=(8, lambda _: 99), central=(10, lambda _: 99))
    elif kind == "declared 4 GiB":  # the central directory's uncompressed size of w_q, as large as it can say
        patched(path, "w_q.npy", central=(24, lambda _: 0xFFFFFFFF), width=4)
    elif kind == "many members":  # 5,000 empty members after the layer's five (600,000 took 13.5 s and 712 MB)
        with zipfile.ZipFile(path, "a") as archive:
            for number in range(5_000):
                archive.writestr(f"x{number}", b"")
    elif kind.startswith("forged count"):  # members after the layer's five, the end record still saying 5: zipfile
        with zipfile.ZipFile(path, "a") as archive:  # reads the member list by its size, so 600,000 passed in 9.75 s
            for number in range(20 if kind == "forged count" else 2_000):
                archive.writestr(f"x{number}", b"")
        data = bytearray(path.read_bytes())
        end = data.rfind(b"PK\x05\x06")
        data[end + 8:end + 12] = (5).to_bytes(2, "little") * 2
        path.write_bytes(bytes(data))
    elif kind == "zip64":  # the end record's entry count 0xFFFF: the count is in a ZIP64 record
        data = bytearray(path.read_bytes())
        end = data.rfind(b"PK\x05\x06")
        data[end + 8:end + 12] = b"\xff\xff\xff\xff"
        path.write_bytes(bytes(data))
    elif kind == "bytes before the zip":  # numpy then reads it as one .npy and says "load it unsafely"
        path.write_bytes(b"#!/bin/sh\n" + path.read_bytes())
    elif kind == "metadata of 10**12 texts":  # a small member whose header asks numpy for 10^12 copies of its text
        with_w_q(path, lambda data: fixed_header(data.replace(b"'shape': ()", b"'shape': (1000000000000,)")),
                 "metadata")
    elif kind == "lying header":  # a member of the right size whose .npy header asks for 2^40 x 64 numbers (512 TiB)
        with_w_q(path, lambda data: fixed_header(data.replace(b"'shape': (128, 64)", b"'shape': (1099511627776, 64)")))


def with_w_q(path: Path, change, name: str = "w_q") -> None:
    """The archive written anew, deflated, its w_q (or `name`) member's .npy bytes passed through `change(bytes)`."""
    with np.load(path) as stored:
        arrays = {name: stored[name] for name in stored.files}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for stored_name, array in arrays.items():
            member = io.BytesIO()
            np.save(member, array)
            archive.writestr(f"{stored_name}.npy", change(member.getvalue()) if stored_name == name else
                             member.getvalue())

def fixed_header(data: bytes) -> bytes:
    """A .npy member whose header was lengthened, its length field and padding set again."""
    header_end = data.index(b"\n") + 1
    header = data[10:header_end].rstrip(b" \n")
    padding = (-(10 + len(header) + 1)) % 64
    header += b" " * padding + b"\n"
    return data[:8] + len(header).to_bytes(2, "little") + header + data[data.index(b"\n") + 1:]


def patched(path: Path, member: str, local: tuple | None = None, central: tuple | None = None,
            width: int = 2) -> None:
    """The archive with a field of `member`'s local and/or central header changed: (offset, change) each."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    for signature, name_at, field in ((b"PK\x03\x04", 30, local), (b"PK\x01\x02", 46, central)):
        if field is None:
            continue
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if data[start + name_at:start + name_at + len(name)] == name:
                offset, change = field
                value = int.from_bytes(data[start + offset:start + offset + width], "little")
                data[start + offset:start + offset + width] = change(value).to_bytes(width, "little")
            start += 4
    path.write_bytes(bytes(data))


HOSTILE = {
    "text": "damaged or was not written by attn-cli train",
    "truncated": "damaged or was not written by attn-cli train",
    "pickle": "damaged or was not written by attn-cli train",
    "bomb": "w_q is missing or larger than its 128 x 64 shape",
    "nan": "w_k is not a finite float64 128 x 64 matrix",
    "huge": "w_v holds 1e+30, beyond the ±1e+06 a trained layer's weights may hold",
    "float32 max": "w_v holds -3e+38, beyond the ±1e+06 a trained layer's weights may hold",
    "newer": "was written by a newer attn-cli (format 99); upgrade attn-cli to read it",
    "no corpus": "its metadata lacks the layer, the vector set, the corpus or the training",
    "other format": "another format",
    "wrong shape": "larger than its 128 x 32 shape",
    "infinite loss": "Infinity in the metadata",
    "loss of 400 digits": "its metadata lacks the layer, the vector set, the corpus or the training",
    "bad mask": "its layer settings are not what attn-cli train writes",
    "deep": "damaged or was not written by attn-cli train",
    "encrypted": "damaged or was not written by attn-cli train",
    "unknown compression": "damaged or was not written by attn-cli train",
    "declared 4 GiB": "damaged or was not written by attn-cli train",
    "metadata of 10**12 texts": "the metadata is not text",
    "lying header": "w_q is not a float64 128 x 64 matrix",
    "many members": "it holds 5,005 members, and a layer's file at most 16",
    "forged count": "it holds 25 members, and a layer's file at most 16",
    "forged count, long list": "its member list is longer than a layer's file of at most 16 members",
    "zip64": "it holds 65,535 members, and a layer's file at most 16",
    "bytes before the zip": "it does not start as a zip archive",
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_weights_file_is_one_line_and_exit_5(run, layer_file, kind):
    hostile(layer_file, kind)
    before = layer_file.read_bytes()
    result = run("explain", SENTENCE, "--weights", str(layer_file))
    assert result.exit_code == 5, (result.stdout, result.stderr)
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"attn-cli: error: weights file {layer_file} ")
    assert HOSTILE[kind] in result.stderr and "allow_pickle" not in result.stderr
    assert layer_file.read_bytes() == before


def test_a_pickle_in_the_file_is_never_run(tmp_path, layer_file):
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (marker,))

    with np.load(layer_file) as stored:
        arrays = {name: stored[name] for name in stored.files}
    arrays["metadata"] = np.array([Payload()], dtype=object)
    np.savez(layer_file, **arrays)
    with pytest.raises(WeightsError, match="damaged or was not written"):
        load_layer(layer_file)
    assert not marker.exists()


def test_a_weights_path_that_is_not_a_file_is_refused_at_once(run, tmp_path):
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)  # no writer: reading it would wait for ever
    for path in (fifo, tmp_path):
        result = run("explain", SENTENCE, "--weights", str(path))
        assert result.exit_code == 5 and "is not a regular file" in result.stderr


def test_a_missing_file_names_the_command_that_makes_one(run, tmp_path):
    result = run("explain", SENTENCE, "--weights", str(tmp_path / "nope.npz"))
    assert result.exit_code == 5
    assert "does not exist; train one with attn-cli train CORPUS --out" in result.stderr


def test_settings_with_a_layer_can_be_replaced_and_resolved(layer_file, tmp_path, vectors):
    from dataclasses import replace

    settings = attn_cli.Settings(weights=attn_cli.load_layer(layer_file), neighbors=3)
    assert (settings.mode, settings.heads, settings.mask) == ("trained", 2, "others")
    other = tmp_path / "other.npz"
    stand_in_layer(vectors).save(other)  # one head, the full width
    swapped = attn_cli.Settings.resolve(settings, weights=attn_cli.load_layer(other))
    assert (swapped.heads, swapped.d_k, swapped.neighbors) == (1, 128, 3)
    plain = replace(settings, weights=None)
    assert (plain.mode, plain.heads, plain.mask, plain.scale, plain.neighbors) == ("raw", 1, "none", "none", 3)
    assert attn_cli.explain(SENTENCE, settings=settings, weights=other).settings.heads == 1


def test_settings_read_no_file_the_function_given_them_does(layer_file, tmp_path):
    settings = attn_cli.Settings(weights=layer_file)
    assert settings.weights_file == layer_file and settings.mode == "raw"  # nothing read, nothing adopted yet
    with pytest.raises(SettingsError, match="a file these settings have not read"):
        settings.layer_weights  # noqa: B018
    missing = attn_cli.Settings(weights=tmp_path / "absent.npz")  # constructing never touches the disk
    with pytest.raises(attn_cli.WeightsError):
        attn_cli.explain(SENTENCE, settings=missing)
    assert attn_cli.explain(SENTENCE, settings=settings).settings.mode == "trained"


def test_trained_mode_needs_a_layer():
    with pytest.raises(SettingsError, match="'trained' needs the weights of a layer made by attn-cli train"):
        attn_cli.explain(SENTENCE, mode="trained")


def test_the_schema_lists_the_trained_blocks(explain_schema):
    assert {"weights", "initial"} <= set(explain_schema["properties"])
    jsonschema.Draft202012Validator.check_schema(explain_schema)


def test_a_sentence_of_one_word_names_no_option_the_file_fixes(run, layer_file):
    result = run("explain", "bank bank", "--weights", str(layer_file))
    assert result.exit_code == 3 and "give a sentence of at least two different words" in result.stderr
    assert "--mask" not in result.stderr  # the file fixes the mask: suggesting --mask none would be exit 2


def test_weights_at_the_bound_on_vectors_at_float32s_limit_give_finite_tables(tmp_path):
    """Issue 25.3: every entry at the bound (1e6, signs mixed) on vectors near float32's largest value: the scores,
    weights, outputs, shifts and neighbours of the document are all finite (the engine never makes NaN or inf)."""
    from attn_cli.training.weights import MAX_WEIGHT

    rng = np.random.default_rng(0)
    path = tmp_path / "huge.txt"
    values = rng.choice([-3.0e38, 3.0e38, 1e-38, 1.0], size=(6, 4))
    path.write_text("".join(f"{word} {' '.join(repr(float(v)) for v in row)}\n"
                            for word, row in zip(["money", "bank", "grows", "river", "flows", "cash"], values)))
    vectors = attn_cli.load_vectors(str(path))
    layer = stand_in_layer(vectors, heads=2, d_k=4)
    signs = {name: rng.choice([-MAX_WEIGHT, MAX_WEIGHT], size=getattr(layer.projections, name).shape)
             for name in ("w_q", "w_k", "w_v", "w_o")}
    type(layer)(projections=type(layer.projections)(**signs), layer=layer.layer,
                provenance=layer.provenance).save(tmp_path / "layer.npz")
    result = attn_cli.explain("money bank grows river", vectors=vectors, weights=str(tmp_path / "layer.npz"))
    document = json.loads(result.to_json())
    numbers = [result.scores, result.weights, result.outputs, result.queries, result.keys, result.values]
    assert all(np.isfinite(array).all() for array in numbers)
    assert all(np.isfinite([shift["cosine"], shift["delta_norm"]]).all() for shift in document["shifts"])
    assert "NaN" not in result.to_json() and "Infinity" not in result.to_json()
