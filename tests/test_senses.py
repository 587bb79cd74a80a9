"""attn_cli.senses (issue 27, library side): the scan, the groups, the labels' figures and the document."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import attn_cli
from attn_cli.contexts.grouping import nearest_labels, numbered, probe
from attn_cli import example_corpus
from attn_cli.contexts.scan import could_hold, folded
from attn_cli.errors import InputTypeError, SettingsTypeError
from conftest import stand_in_layer

BANK, BANK_LABELS = example_corpus()


@pytest.fixture(scope="module")
def bank_senses():
    return attn_cli.senses("bank", BANK, labels=BANK_LABELS)


def test_the_bundled_corpus_separates_river_from_money(bank_senses):
    assert bank_senses.clusters == 2 and bank_senses.chosen_by == "silhouette"
    assert bank_senses.labels_report.purity == 1.0 and bank_senses.labels_report.adjusted_rand == 1.0
    assert {label for _, label, _ in bank_senses.labels_report.groups} == {"river", "money"}
    near = {group.number: [n.word for n in group.neighbors] for group in bank_senses.groups}
    assert any("river" in words for words in near.values()) and any("money" in words for words in near.values())


def test_the_bundled_corpus_uses_only_words_of_the_embedded_set():
    from attn_cli.engine.tokenize import split_words

    vectors = attn_cli.load_vectors()
    assert len(BANK) == len(BANK_LABELS) == 40 and BANK_LABELS == ["river"] * 20 + ["money"] * 20
    assert [word for line in BANK for word in split_words(line) if vectors.lookup(word) is None] == []


def test_the_groups_report_their_figures(bank_senses):
    assert sorted(bank_senses.silhouettes) == list(range(2, 9))
    assert bank_senses.silhouette == max(bank_senses.silhouettes.values())
    assert [group.number for group in bank_senses.groups] == [1, 2]
    assert sum(group.size for group in bank_senses.groups) == len(bank_senses.occurrences) == 40
    for group in bank_senses.groups:
        assert len(group.examples) == 3 and len(group.neighbors) == 5
        assert "bank" not in [n.word for n in group.neighbors]
        cosines = [example.cosine for example in group.examples]
        assert cosines == sorted(cosines, reverse=True)
        assert all(bank_senses.assignments[example.index] == group.number - 1 for example in group.examples)
    assert "banks" in [n.word for n in bank_senses.static_neighbors]
    assert bank_senses.projection.shape == (40, 2)


def test_pulled_by_is_the_mean_share_of_the_shift_over_the_group(bank_senses):
    table = bank_senses.occurrences
    group = bank_senses.groups[0]
    top = group.pulled_by[0]
    total = sum(share for i in group.members.tolist()
                for word, share in zip(table.context_words[i], table.context_shares[i].tolist())
                if word.casefold() == top.word)
    assert top.share == pytest.approx(total / group.size, abs=1e-12)
    assert [pull.share for pull in group.pulled_by] == sorted((pull.share for pull in group.pulled_by), reverse=True)


def test_the_same_seed_gives_the_same_groups():
    first = attn_cli.senses("bank", BANK, seed=3)
    again = attn_cli.senses("bank", BANK, seed=3)
    assert np.array_equal(first.assignments, again.assignments)
    assert first.to_dict() == again.to_dict()


def test_groups_are_numbered_by_size_then_first_occurrence():
    assert numbered(np.array([5, 2, 2, 5, 7, 7, 7])).tolist() == [1, 2, 2, 1, 0, 0, 0]


def test_clusters_fixes_k(bank_senses):
    three = attn_cli.group_senses(bank_senses.occurrences, clusters=3)
    assert three.clusters == 3 and three.chosen_by == "given" and list(three.silhouettes) == [3]
    with pytest.raises(attn_cli.SettingsError, match="clusters"):
        attn_cli.group_senses(bank_senses.occurrences, clusters=0)


def test_the_document_validates_against_the_schema(bank_senses, schema_validator):
    document = bank_senses.to_dict()
    schema_validator("senses").validate(document)
    assert document["command"] == "senses" and document["corpus"] == {"lines": 40, "lines_with_word": 40,
                                                                       "skipped_lines": 0}
    assert [item["group"] for item in document["occurrences"]] == (bank_senses.assignments + 1).tolist()
    assert document["labels"]["probe"]["outputs"]["accuracy"] >= 0.9
    schema_validator("senses").validate(attn_cli.senses("bank", BANK[:5], clusters=1).to_dict())


def test_str_repr_and_pandas(bank_senses):
    assert repr(bank_senses) == (f"<SensesResult 'bank': 40 occurrences in 2 groups (silhouette "
                                 f"{bank_senses.silhouette:.2f})>")
    text = str(bank_senses)
    assert "  1   20 (50%)" in text and "purity 1.000" in text  # group 1: 20 occurrences, half of them
    frame = bank_senses.to_pandas()
    assert list(frame["group"]) == (bank_senses.assignments + 1).tolist() and len(frame["output"][0]) == 128
    assert list(frame["label"]) == BANK_LABELS


def test_each_occurrence_has_its_label_and_the_misgrouped_are_those_off_their_groups_majority():
    labels = BANK_LABELS[:]
    labels[3], labels[30] = "money", "river"  # a river sentence called money, a money one river
    result = attn_cli.senses("bank", BANK, labels=labels)
    assert result.labels_report.labels == tuple(labels) == result.occurrence_labels
    assert result.labels_report.misgrouped == (3, 30)
    assert result.labels_report.purity == 38 / 40
    assert attn_cli.senses("bank", BANK).occurrence_labels is None


@pytest.mark.parametrize("color_by, culprit", [("label", "labels"), ("colour", "'colour'")])
def test_coloring_by_label_needs_labels(color_by, culprit, tmp_path):
    result = attn_cli.senses("bank", BANK)
    with pytest.raises(attn_cli.SettingsError, match=culprit) as raised:
        result.to_svg(tmp_path / "senses.svg", color_by=color_by)
    assert raised.value.setting == "color_by" and not (tmp_path / "senses.svg").exists()


def test_the_scatter_coloured_by_label_names_the_labels(bank_senses):
    assert "river (20)" in bank_senses.to_svg(color_by="label") and "coloured by label" in bank_senses.to_html(
        color_by="label")


# --- the probe and its tie rule ------------------------------------------------------------------------------


def test_the_probe_takes_the_nearest_other_occurrences_label():
    unit = np.array([[1.0, 0.0], [0.99, 0.14], [0.0, 1.0], [0.14, 0.99]])
    assert nearest_labels(unit, np.array([0, 0, 1, 1]), 2).tolist() == [0, 0, 1, 1]


def test_ties_go_to_the_commonest_label_then_the_first_seen():
    same = np.ones((5, 2)) / np.sqrt(2)  # every other occurrence equally near: the static baseline
    # occurrence 0 (label 1) sees labels 1, 0, 0, 1 among the others: a tie, the first-seen label (0) wins;
    # occurrence 1 (label 0) sees 1, 0, 1, 1: the commonest, 1
    truth = np.array([1, 0, 0, 1, 1])
    assert nearest_labels(same, truth, 2).tolist() == [0, 1, 1, 0, 0]
    assert probe(same, truth, ["a", "b"])["accuracy"] == 0.0


def test_the_static_baseline_predicts_the_majority_of_the_others(bank_senses):
    assert bank_senses.labels_report.probe["static"] == {"accuracy": 0.0, "macro_f1": 0.0}  # 20 / 20: the others'


def test_the_probe_on_real_text_puts_the_outputs_above_the_static_vector(gensim_sample):
    """gensim's lee_background.cor: "West Bank" (a place) against banks (finance), labelled by a rule on the text."""
    text = Path(gensim_sample("lee_background.cor")).read_text(encoding="utf-8")
    sentences = [s for document in text.splitlines() for s in re.split(r"(?<=[.!?])\s+", document)
                 if re.search(r"\bbank\b", s, re.IGNORECASE)]
    labels = ["place" if "west bank" in s.lower() else "finance" for s in sentences]
    assert len(sentences) == 47 and labels.count("place") == 30
    probes = attn_cli.senses("bank", sentences, labels=labels).labels_report.probe
    assert probes["outputs"]["macro_f1"] > probes["static"]["macro_f1"] + 0.3
    assert probes["outputs"]["accuracy"] > probes["static"]["accuracy"]


def test_labels_must_number_the_lines():
    with pytest.raises(attn_cli.InputError, match="the labels give 39 labels for a corpus of 40 lines"):
        attn_cli.senses("bank", BANK, labels=BANK_LABELS[:-1])
    with pytest.raises(attn_cli.InputError, match="the labels give 41 labels for a corpus of 40 lines"):
        attn_cli.senses("bank", BANK, labels=[*BANK_LABELS, "river"])


def test_endless_labels_are_read_one_past_the_lines_and_refused():
    """Issue 32 audit 3: `senses("bank", lines, labels=itertools.repeat("river"))` ran for ever in group_senses,
    listing the labels; they are read one past the corpus's lines, as the command line reads them."""
    def endless():
        for read in itertools.count():
            assert read <= 1_000, "labels read past the corpus's 40 lines"
            yield "river"

    with pytest.raises(attn_cli.InputError, match="the labels give 41 labels for a corpus of 40 lines"):
        attn_cli.senses("bank", BANK, labels=endless())


def test_labels_may_stop_at_the_last_line_holding_the_word():
    """Later labels are never used, and a table may claim more lines (2**62) than any list of labels holds."""
    corpus = [*BANK, "no such word here", "nor here"]
    full = attn_cli.senses("bank", corpus, labels=[*BANK_LABELS, "x", "y"]).to_dict()
    assert attn_cli.senses("bank", corpus, labels=BANK_LABELS).to_dict() == full


# --- too few occurrences --------------------------------------------------------------------------------------


def test_fewer_than_three_occurrences_is_an_error_naming_the_fix():
    with pytest.raises(attn_cli.InputError, match="found 2 occurrences of 'bank'; senses needs at least 3: give a "
                                                  "larger corpus"):
        attn_cli.senses("bank", ["the river bank", "the money bank", "no word here"])


def test_no_occurrence_is_an_error_naming_the_word_and_the_rule():
    with pytest.raises(attn_cli.InputError, match="found no occurrence of 'bank' in 2 lines .*vocabulary"):
        attn_cli.senses("bank", ["the river", "banks of money"])


def test_a_word_the_vectors_lack_is_an_error():
    with pytest.raises(attn_cli.InputError, match="'bnakq' is not in the vocabulary"):
        attn_cli.occurrences("bnakq", ["the river bank"])


# --- the scan -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("changes", [{}, {"mask": "others", "positions": "sinusoidal"},
                                     {"mode": "projected", "heads": 4, "d_k": 64, "mask": "causal", "seed": 2},
                                     "trained"])
def test_the_rows_equal_explains_outputs(changes):
    if changes == "trained":
        changes = {"weights": stand_in_layer(attn_cli.load_vectors(), heads=2, d_k=64)}
    lines = ["the bank of the river", "money in the bank and the bank of the river", "no word",
             "Bank loans grew", "a bank"]
    table = attn_cli.occurrences("bank", lines, **changes)
    assert table.line.tolist() == [1, 2, 2, 4, 5] and table.position.tolist() == [1, 3, 6, 0, 1]
    for row, (number, position) in enumerate(zip(table.line.tolist(), table.position.tolist())):
        result = attn_cli.explain(lines[number - 1], **changes)
        index = [token.position for token in result.tokenized.tokens].index(position)
        np.testing.assert_allclose(table.outputs[row], result.outputs[index], rtol=1e-10, atol=1e-12)
        shares = {c.index: c.shift_share for c in result.shifts[index].contributions}
        mine = dict(zip(table.context_words[row], table.context_shares[row].tolist()))
        for key, share in shares.items():
            if key != index and result.tokens.count(result.tokens[key]) == 1:
                assert mine[result.tokens[key]] == pytest.approx(share, abs=1e-10)
        np.testing.assert_allclose(table.bags[row], result.embeddings.mean(axis=0), rtol=1e-12)


def test_every_occurrence_is_found_whatever_its_spelling():
    """The pre-filter never drops a line whose tokens match the word: the same occurrences as tokenizing every
    line (case, accents, clitics, NFD text, Greek final sigma)."""
    from attn_cli.engine.tokenize import tokenize

    lines = ["BANK's loans", "the Bank", "bänk", "ba\u0308nk of the river", "the riverbank", "banks", "the b-ank",
             "the bank-side", "the \u0392\u0391\u039d\u039a", "bank", "no"]
    vectors = attn_cli.load_vectors()
    expected = [(number, token.position) for number, line in enumerate(lines, 1)
                for token in tokenize(line, vectors, oov="zero").tokens if token.key == "bank"]
    table = attn_cli.occurrences("bank", lines, oov="zero")
    assert list(zip(table.line.tolist(), table.position.tolist())) == expected
    assert len(expected) == 5


def test_the_prefilter_rule_holds_for_every_character():
    """folded(c) equals folded(s) for every spelling the vocabulary lookup tries for c (lower, title, without
    accents), and folded works character by character: so no token that matches can be filtered out."""
    from attn_cli.vectors.store import without_accents

    broken = []
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        spellings = {char.lower(), char.title(), without_accents(char), without_accents(char.lower()),
                     without_accents(char.title())} - {char}  # folded(char) is folded(char): only others can differ
        if spellings and any(folded(spelling) != folded(char) for spelling in spellings):
            broken.append(hex(code))
    assert broken == ["0x345"]  # the combining ypogegrammeni, which cannot start a word (a word starts with \w)
    assert could_hold("the BÄNK", folded("bank")) and not could_hold("the river", folded("bank"))


def test_skipped_lines_are_counted_and_the_scan_goes_on():
    lines = ["bank " * 30, "the bank of the river", "bank bank", "zzqx bank river", ["money", "bank"], "a bank"]
    table = attn_cli.occurrences("bank", lines, max_tokens=20, mask="others")
    assert table.skipped_lines == 2 and table.line.tolist() == [2, 4, 5, 6] and table.lines_read == 6
    assert table.sentence[2] == "money bank"


def test_progress_reports_the_lines_read():
    seen = []
    attn_cli.occurrences("bank", ["a bank"] * 600, progress=seen.append)
    assert seen == [256, 512, 600]


def test_only_the_occurrences_are_kept():
    table = attn_cli.occurrences("bank", (f"line {i} of the river" if i % 100 else "the bank" for i in range(1, 3001)))
    assert len(table) == 30 and table.lines_read == 3000 and table.lines_with_word == 30


def test_parts_of_a_corpus_concatenate_to_the_whole():
    whole = attn_cli.occurrences("bank", BANK)
    parts = [attn_cli.occurrences("bank", BANK[:15]), attn_cli.occurrences("bank", BANK[15:], first_line=16)]
    joined = attn_cli.Occurrences.concat(parts)
    assert joined.line.tolist() == whole.line.tolist() and joined.lines_read == 40
    np.testing.assert_array_equal(joined.outputs, whole.outputs)
    assert (attn_cli.group_senses(joined, labels=BANK_LABELS).to_dict()
            == attn_cli.group_senses(whole, labels=BANK_LABELS).to_dict())
    with pytest.raises(attn_cli.InputError, match="consecutive"):
        attn_cli.Occurrences.concat(parts[::-1])


def test_importing_attn_cli_and_its_senses_names_loads_no_scikit_learn():
    code = ("import sys, attn_cli\nattn_cli.senses, attn_cli.occurrences, attn_cli.SensesResult\n"
            "assert 'sklearn' not in sys.modules and 'pandas' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_attn_cli_senses_is_callable_in_any_import_order():
    code = ("import attn_cli.contexts.table, attn_cli\nfrom attn_cli import senses\n"
            "print(senses('bank', ['the river bank', 'money bank', 'bank loan']).clusters)")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert done.stdout.strip() == "2"


def test_a_files_lines_keep_their_text_without_the_line_break(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the river bank\r\nmoney bank\nbank loan\n", encoding="utf-8")
    with corpus.open(encoding="utf-8", newline="") as lines:
        table = attn_cli.occurrences("bank", lines)
    assert table.sentence == ["the river bank", "money bank", "bank loan"]


def test_to_pandas_without_pandas_names_the_install(bank_senses, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(attn_cli.InputError, match="pip install pandas"):
        bank_senses.to_pandas()


def _table():
    return attn_cli.occurrences("bank", BANK[:3])


@pytest.mark.parametrize("call, error, message", [
    (lambda tmp: attn_cli.senses("bank", 42), InputTypeError, "lines must be an iterable"),
    (lambda tmp: attn_cli.occurrences("bank", BANK, first_line=2**70), attn_cli.SettingsError,
     "first_line must be a whole number from 1 to 2\\*\\*62"),
    (lambda tmp: attn_cli.occurrences("bank", BANK, first_line="2"), SettingsTypeError, "first_line"),
    (lambda tmp: attn_cli.Occurrences.read_parquet(42), SettingsTypeError, "path must be a file path"),
    (lambda tmp: attn_cli.Occurrences.read_parquet(None), SettingsTypeError, "path must be a file path"),
    (lambda tmp: attn_cli.Occurrences.concat(42), InputTypeError, "parts must be an iterable"),
    (lambda tmp: attn_cli.Occurrences.concat([1, 2]), InputTypeError,
     r"parts\[0\] must be an Occurrences table, not int"),
    (lambda tmp: _table().write_parquet(42), SettingsTypeError, "path must be a file path"),
    (lambda tmp: _table().write_parquet("/dev/full"), attn_cli.OutputError, "cannot write /dev/full: .*; choose"),
    (lambda tmp: _table().write_parquet(tmp), attn_cli.OutputError, "cannot write .*; choose a writable file"),
    (lambda tmp: attn_cli.senses("bank", [b"the bank"] * 5), InputTypeError,
     "line 1 must be a str or a list of words \\(str\\), not bytes"),
    (lambda tmp: attn_cli.senses("bank", [None] * 5), InputTypeError, "line 1 .* not NoneType"),
    (lambda tmp: attn_cli.senses("bank", ["the bank", 2, 3]), InputTypeError, "line 2 .* not int"),
    (lambda tmp: attn_cli.occurrences("bank", [["the", 1]], first_line=7), InputTypeError,
     "line 7 .* not list"),
])
def test_wrong_arguments_are_the_librarys_own_errors(tmp_path, call, error, message):
    with pytest.raises(error, match=message):
        call(tmp_path)


# --- arguments refused in our errors (issue 32) ---------------------------------------------------------------


def never_read():
    raise AssertionError("the corpus was read before the arguments were checked")
    yield ""  # a generator


@pytest.mark.parametrize("call, error, culprit", [
    (lambda: attn_cli.senses("bank", never_read(), seed=2**32), attn_cli.SettingsError, "seed must be a whole "
     "number from 0 to 2**32 - 1 (got 4294967296)"),
    (lambda: attn_cli.group_senses(attn_cli.occurrences("bank", BANK), seed=2**32), attn_cli.SettingsError,
     "seed must be"),
    (lambda: attn_cli.group_senses(attn_cli.occurrences("bank", BANK), seed=-1), attn_cli.SettingsError,
     "(got -1)"),
    (lambda: attn_cli.occurrences("bank", never_read(), progress=5), SettingsTypeError,
     "progress must be a function taking the lines read, or None, not int"),
    (lambda: attn_cli.senses("bank", BANK, labels=42), InputTypeError, "labels must be an iterable of str"),
    (lambda: attn_cli.senses("bank", BANK, labels="river"), InputTypeError, "labels must be an iterable of str"),
], ids=["senses-seed-2**32", "group-seed-2**32", "seed-negative", "progress-int", "labels-int", "labels-str"])
def test_a_wrong_argument_is_refused_naming_it(call, error, culprit):
    with pytest.raises(error, match=re.escape(culprit)) as caught:
        call()
    assert isinstance(caught.value, attn_cli.AttnError)


def test_the_largest_seed_groups():
    assert attn_cli.senses("bank", BANK, seed=2**32 - 1, clusters=2).clusters == 2


def test_labels_given_as_a_generator_are_read_once(bank_senses):
    again = attn_cli.senses("bank", BANK, labels=(label for label in BANK_LABELS))
    assert again.labels_report == bank_senses.labels_report


@pytest.mark.parametrize("lines, changes, culprit", [
    (["bank", "bank bank", "river bank"], {"mask": "others"}, "the first (line 1): the mask 'others' hides"),
    (["bank zzqx", "the bank", "river"], {"oov": "error"}, "the first (line 1): not in the vocabulary"),
    (["river", "the bank " * 600, "a bank"], {}, "the first (line 2): the sentence has 1,200 tokens, more than "
                                                 "max_tokens=1000"),
], ids=["mask-others", "oov-error", "max-tokens"])
def test_too_few_occurrences_name_the_first_skipped_line_and_its_cause(lines, changes, culprit):
    with pytest.raises(attn_cli.InputError, match=re.escape(culprit)) as caught:
        attn_cli.senses("bank", lines, **changes)
    assert ("max_tokens" in str(caught.value)) == ("max-tokens" in culprit or "max_tokens" in culprit)
    table = attn_cli.occurrences("bank", lines, **changes)
    assert table.first_skipped.line == int(culprit.split("line ")[1].split(")")[0])


def test_the_first_skipped_line_of_joined_parts_is_the_first_in_corpus_order():
    parts = [attn_cli.occurrences("bank", ["a bank", "river"], mask="others"),
             attn_cli.occurrences("bank", ["bank", "bank"], first_line=3, mask="others")]
    joined = attn_cli.Occurrences.concat(parts)
    assert joined.skipped_lines == 2 and joined.first_skipped.line == 3
