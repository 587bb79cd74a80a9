"""Every vector file attn-cli reads gives gensim's words and float32 values, bit for bit.

The fixtures are gensim's own test files (real word2vec.c, fastText and GloVe
output) and variants of them made here: Latin-1 words, words that are numbers,
byte order marks, headers that disagree with a binary body. Where gensim fails or
is wrong, the test names the better reading attn-cli documents and checks that.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from attn_cli.errors import VectorsError
from attn_cli.vectors import load_vectors
from attn_cli.vectors.formats import detect_format
from attn_cli.vectors.importer import LoadOptions

from conftest import gensim_datapath

WORD2VEC_TEXT = ["EN.1-10.cbow1_wind5_hs0_neg10_size300_smpl1e-05.txt",
                 "IT.1-10.cbow1_wind5_hs0_neg10_size300_smpl1e-05.txt",
                 "crime-and-punishment.vec", "high_precision.kv.txt", "lee_fasttext.vec",
                 "pang_lee_polarity_fasttext.vec", "toy-model.vec", "word2vec_pre_kv_c",
                 "w2v_keyedvectors_load_test.modeldata"]
WORD2VEC_BINARY = ["euclidean_vectors.bin", "high_precision.kv.bin", "poincare_vectors.bin"]
FASTTEXT_BIN = ["cp852_fasttext.bin", "crime-and-punishment.bin", "lee_fasttext.bin", "lee_fasttext_new.bin",
                "non_ascii_fasttext.bin", "toy-model.bin", "toy-model-pretrained.bin"]
GENSIM_PICKLES = ["compatible-hash-true.model", "model-from-gensim-3.8.0.w2v", "old_keyedvectors_320.dat",
                  "word2vec_3.3", "word2vec_old"]


def gensim_text(path, **kwargs):
    """gensim's reading of a word2vec/GloVe file, with the options its docs give for real-world files."""
    from gensim.models import KeyedVectors

    return KeyedVectors.load_word2vec_format(str(path), unicode_errors="replace", **kwargs)


def assert_bit_equal(vectors, keyed) -> None:
    """Same words in the same order and the same float32 bits (so -0.0 and 0.0 differ too)."""
    assert list(vectors.words) == list(keyed.index_to_key)
    ours = np.ascontiguousarray(vectors.matrix, dtype=np.float32)
    theirs = np.ascontiguousarray(keyed.vectors, dtype=np.float32)
    assert ours.shape == theirs.shape
    assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))


def read(path, **options) -> tuple:
    """attn-cli's reading of `path` and the warnings it gave."""
    messages: list[str] = []
    vectors = load_vectors(str(path), LoadOptions(show_progress=False, warn=messages.append, **options))
    return vectors, messages


FIXTURES = ([(name, "word2vec") for name in WORD2VEC_TEXT] + [(name, "word2vec-binary") for name in WORD2VEC_BINARY]
            + [("test_glove.txt", "glove")] + [(name, "fasttext-bin") for name in FASTTEXT_BIN]
            + [(name, "gensim-pickle") for name in GENSIM_PICKLES])


def gensim_reading(path: str, file_format: str):
    """The KeyedVectors gensim gives for a file of the given format."""
    from gensim.models import KeyedVectors
    from gensim.models.fasttext import load_facebook_vectors

    if file_format == "fasttext-bin":
        return load_facebook_vectors(path)
    if file_format == "gensim-pickle":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = KeyedVectors.load(path)
        return getattr(loaded, "wv", loaded)
    return gensim_text(path, binary=file_format == "word2vec-binary", no_header=file_format == "glove")


@pytest.mark.parametrize("name, file_format", FIXTURES)
def test_gensim_test_files_read_as_gensim_reads_them(name, file_format):
    path = gensim_datapath(name)
    assert detect_format(Path(path)) == file_format
    vectors = read(path, trust_pickle=file_format == "gensim-pickle")[0]
    assert_bit_equal(vectors, gensim_reading(path, file_format))


def test_a_header_larger_than_a_text_body_reads_the_body_where_gensim_fails():
    path = gensim_datapath("pretrained.vec")  # says 3 words, holds 1: gensim raises EOFError
    with pytest.raises(EOFError):
        gensim_text(path)
    vectors, messages = read(path)
    assert_bit_equal(vectors, gensim_text(path, limit=1))
    assert any("announces 3 words but the file holds 1" in message for message in messages)


# 1. Text is never read as binary.

def test_text_with_words_cut_mid_character_is_text():
    """word2vec.c cuts long words mid-character: invalid UTF-8, still text (gensim's own test file)."""
    path = gensim_datapath("w2v_keyedvectors_load_test.modeldata")
    vectors = read(path)[0]
    assert vectors.details["format"] == "word2vec"
    np.testing.assert_array_equal(vectors.matrix[0], np.float32([0.6, 0.6, 0.6]))


def test_a_latin1_word_near_the_top_of_a_vec_file_stays_text(tmp_path):
    lines = Path(gensim_datapath("lee_fasttext.vec")).read_bytes().split(b"\n")
    word, _, values = lines[2].partition(b" ")
    lines[2] = "café".encode("latin-1") + b" " + values  # one Latin-1 word in the first 4 KB
    path = tmp_path / "latin1.vec"
    path.write_bytes(b"\n".join(lines))
    assert detect_format(path) == "word2vec"
    vectors, messages = read(path)
    keyed = gensim_text(path)
    assert len(keyed.index_to_key) == 1762 and "caf\ufffd" in keyed.index_to_key
    assert_bit_equal(vectors, keyed)
    assert any("not valid UTF-8" in message for message in messages)


def test_binary_with_a_non_utf8_first_word_is_binary(tmp_path):
    from gensim.models import KeyedVectors

    keyed = KeyedVectors(vector_size=4)
    keyed.add_vectors(["money", "bank"], np.float32([[0.5, -1, 2, 0.25], [1, 2, 3, 4]]))
    path = tmp_path / "vectors.bin"
    keyed.save_word2vec_format(str(path), binary=True)
    data = path.read_bytes().replace(b"money", b"mon\xe9y", 1)  # a Latin-1 word in binary
    path.write_bytes(data)
    assert detect_format(path) == "word2vec-binary"
    assert_bit_equal(read(path)[0], gensim_text(path, binary=True))


def test_text_whose_first_lines_are_bad_is_still_text_and_names_the_line(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_bytes(b"3 4\n" + b"".join(b"w%d 0.1 0.2 0.3\n" % i for i in range(30)))  # 3 numbers, not 4
    assert detect_format(path) == "word2vec"
    with pytest.raises(VectorsError, match="line 2: expected a word and 4 numbers, found 3"):
        read(path)


# 2. A number can be a word.

@pytest.mark.parametrize("ending", [b"\r\n", b"  \n", b"\t\t\n", b" \r\n"])
def test_words_that_are_numbers_are_words_on_every_line_shape(tmp_path, ending):
    words = [b"1", b"2010", b"nan", b"inf", b"-0.5", b"bank"]
    body = b"".join(word + b" " + b" ".join(b"%.3f" % (i + j / 10) for j in range(3)) + ending
                    for i, word in enumerate(words))
    path = tmp_path / "numbers.vec"
    path.write_bytes(b"6 3" + ending + body)
    vectors = read(path)[0]
    assert list(vectors.words) == [word.decode() for word in words]
    assert_bit_equal(vectors, gensim_text(path))


def test_a_word_with_spaces_that_ends_in_a_number_is_still_a_line_with_too_many_numbers(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_bytes(b"bank 0.1 0.2\nnew york 0.3 0.4 0.5\n")
    with pytest.raises(VectorsError, match="line 2: expected a word and 2 numbers, found 4"):
        read(path)


# 3. A byte order mark before a header.

@pytest.mark.parametrize("name", ["lee_fasttext.vec", "word2vec_pre_kv_c"])
def test_a_byte_order_mark_before_a_header_is_dropped(tmp_path, name):
    original = Path(gensim_datapath(name))
    path = tmp_path / original.name
    path.write_bytes(b"\xef\xbb\xbf" + original.read_bytes())
    assert detect_format(path) == "word2vec"
    vectors, messages = read(path)
    assert_bit_equal(vectors, gensim_text(original))  # gensim itself fails on the BOM
    assert messages == []


# 4. A supervised fastText model.

def test_a_supervised_fasttext_model_is_one_clear_error(run):
    result = run("explain", "money bank grows", "--vectors", gensim_datapath("pang_lee_polarity_fasttext.bin"))
    assert result.exit_code == 4
    assert result.stderr.count("\n") == 1 and "supervised fastText model" in result.stderr
    assert ".vec" in result.stderr and "bug" not in result.stderr and result.stdout == ""


# 5. A binary header that disagrees with the body: the body wins, as with text.

def binary_file(folder: Path, words: list[str], header_count: int) -> tuple[Path, Path]:
    """A gensim-written binary file of `words`, and a copy whose header announces `header_count` words."""
    from gensim.models import KeyedVectors

    keyed = KeyedVectors(vector_size=3)
    keyed.add_vectors(words, np.arange(3 * len(words), dtype=np.float32).reshape(-1, 3) / 7)
    exact = folder / "exact.bin"
    keyed.save_word2vec_format(str(exact), binary=True)
    body = exact.read_bytes().split(b"\n", 1)[1]
    changed = folder / "changed.bin"
    changed.write_bytes(b"%d 3\n" % header_count + body)
    return exact, changed


@pytest.mark.parametrize("header_count", [1, 2, 5])
def test_a_binary_body_wins_over_its_header_with_a_warning(tmp_path, header_count):
    exact, changed = binary_file(tmp_path, ["money", "bank", "grows"], header_count)
    assert detect_format(changed) == "word2vec-binary"
    vectors, messages = read(changed)
    assert_bit_equal(vectors, gensim_text(exact, binary=True))
    assert any(f"announces {header_count} words but the file holds 3" in message for message in messages)


def test_a_binary_file_that_ends_inside_a_record_is_truncated(tmp_path):
    _, changed = binary_file(tmp_path, ["money", "bank", "grows"], 3)
    changed.write_bytes(changed.read_bytes()[:-6])
    with pytest.raises(VectorsError, match="ends inside a record after 2 words.*truncated"):
        read(changed)
