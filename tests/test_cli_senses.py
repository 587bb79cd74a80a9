"""`attn-cli senses WORD --file FILE`: the tables, --json, --html and --svg files, the bar, and its errors."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from attn_cli.cli.outputs import status_bar
from attn_cli.cli.senses import status_line

RIVER = ["the river bank flooded after the rain", "fish swim near the bank of the river",
         "water rose over the muddy bank", "boats rest on the grassy bank of the stream",
         "the river bank is steep and wet", "we walked along the bank beside the water"]
MONEY = ["the bank raised its interest rates", "she paid money into the bank", "the bank lends money to firms",
         "my bank account pays interest", "the bank approved the loan today", "investors sold bank shares"]


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr is when a person runs the command."""

    def isatty(self) -> bool:
        return True


def test_the_status_line_shows_lines_read_then_the_grouping():
    stream = Terminal()
    with status_bar(True, status_line, stream=stream, description="reading", lines=0) as show:
        show(lines=2_345)
        show(description="grouping 40 occurrences")
    assert "grouping 40 occurrences (2,345 lines read)" in stream.getvalue()


@pytest.mark.parametrize("enabled, stream", [(True, io.StringIO()), (False, Terminal())],
                         ids=["not a terminal", "json"])
def test_no_status_line_on_a_pipe_or_with_json(enabled, stream):
    with status_bar(enabled, status_line, stream=stream, description="reading", lines=0) as show:
        show(lines=10)
    assert stream.getvalue() == ""


@pytest.fixture
def scanned_table(run, corpus, tmp_path) -> Path:
    """The corpus's occurrences of "bank" as a Parquet table, written by `senses --parquet`."""
    table = tmp_path / "bank.parquet"
    assert run("senses", "bank", "--file", str(corpus[0]), "--parquet", str(table)).exit_code == 0
    return table


@pytest.fixture
def corpus(tmp_path) -> tuple[Path, Path]:
    text, labels = tmp_path / "bank.txt", tmp_path / "bank.labels.txt"
    text.write_text("\n".join(RIVER + MONEY) + "\n", encoding="utf-8")
    labels.write_text("\n".join(["river"] * len(RIVER) + ["money"] * len(MONEY)) + "\n", encoding="utf-8")
    return text, labels


def test_json_holds_every_occurrence_and_the_probe(run, corpus, schema_validator):
    text, labels = corpus
    result = run("senses", "bank", "--file", str(text), "--labels", str(labels), "--clusters", "2", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    schema_validator("senses").validate(document)
    assert [o["line"] for o in document["occurrences"]] == list(range(1, 13))
    assert document["clusters"] == {**document["clusters"], "chosen": 2, "by": "given"}
    assert set(document["labels"]["probe"]) == {"outputs", "static", "bag_of_words"}


def test_the_tables_match_the_json_and_the_same_seed_gives_the_same_groups(run, corpus):
    text, labels = corpus
    first = json.loads(run("senses", "bank", "--file", str(text), "--json").stdout)
    again = json.loads(run("senses", "bank", "--file", str(text), "--json").stdout)
    assert [o["group"] for o in first["occurrences"]] == [o["group"] for o in again["occurrences"]]
    shown = run("senses", "bank", "--file", str(text), "--labels", str(labels))
    assert shown.exit_code == 0, shown.stderr
    chosen = first["clusters"]["chosen"]
    assert f"Groups: {chosen} groups, chosen by the best silhouette" in shown.stdout
    assert "Sense probe" in shown.stdout and shown.stderr == ""


def test_stdin_is_read_as_the_corpus(run, corpus):
    text, _ = corpus
    from_file = json.loads(run("senses", "bank", "--file", str(text), "--json").stdout)
    from_stdin = run("senses", "bank", "-", "--json", input=text.read_text(encoding="utf-8"))
    assert from_stdin.exit_code == 0, from_stdin.stderr
    assert json.loads(from_stdin.stdout)["occurrences"] == from_file["occurrences"]


def test_blank_lines_keep_the_line_numbers_and_the_labels_in_place(run, corpus, tmp_path):
    text, labels = corpus
    spaced = tmp_path / "spaced.txt"
    spaced.write_text("\n\n".join(RIVER + MONEY) + "\n", encoding="utf-8")
    spaced_labels = tmp_path / "spaced.labels.txt"
    spaced_labels.write_text("\n\n".join(["river"] * len(RIVER) + ["money"] * len(MONEY)) + "\n", encoding="utf-8")
    plain = json.loads(run("senses", "bank", "--file", str(text), "--labels", str(labels), "--json").stdout)
    result = run("senses", "bank", "--file", str(spaced), "--labels", str(spaced_labels), "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert [o["line"] for o in document["occurrences"]] == [2 * o["line"] - 1 for o in plain["occurrences"]]
    assert document["labels"] == plain["labels"]


def test_html_and_svg_are_written_whole(run, corpus, tmp_path):
    text, _ = corpus
    page, picture = tmp_path / "senses.html", tmp_path / "senses.svg"
    result = run("senses", "bank", "--file", str(text), "--html", str(page), "--svg", str(picture), "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert f"attn-cli senses bank --file {text}" in page.read_text(encoding="utf-8")
    svg = picture.read_text(encoding="utf-8")
    assert svg.startswith("<?xml") and svg.count("<circle") == len(document["occurrences"])


@pytest.mark.parametrize("args, code, message", [
    (["--clusters", "0"], 2, "Invalid value for '--clusters'"),
    (["--labels", "missing.txt"], 2, "--labels missing.txt: no such file"),
    (["extra"], 2, "senses takes one WORD, then the corpus from --file FILE or - (stdin)"),
    (["--seed", "3"], 2, "--seed applies only to projected mode"),
    (["-"], 2, "give the corpus once: --file FILE, or - to read it from stdin"),
])
def test_bad_options_say_what_to_do_in_one_line(run, corpus, args, code, message, monkeypatch, tmp_path):
    text, _ = corpus
    monkeypatch.chdir(tmp_path)
    result = run("senses", "bank", *args, "--file", str(text))
    assert result.exit_code == code and message in result.stderr, result.stderr
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1


def test_no_corpus_says_how_to_give_one(run):
    result = run("senses", "bank")
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert all(way in result.stderr for way in ("--file FILE", "- to read it from stdin", "--occurrences FILE",
                                                 "--example"))


def test_unreadable_lines_are_skipped_with_one_warning_and_keep_their_numbers(run, corpus, tmp_path):
    text, _ = corpus
    broken = tmp_path / "broken.txt"
    broken.write_bytes(b"the bank \xff\xfe\n" + text.read_bytes())
    result = run("senses", "bank", "--file", str(broken), "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (f"attn-cli: warning: skipped 1 unreadable line(s); the first: line 1 of {broken}: not "
                             "valid UTF-8; convert it to UTF-8 (e.g. iconv -f LATIN1 -t UTF-8)\n")
    assert [o["line"] for o in json.loads(result.stdout)["occurrences"]] == list(range(2, 14))


def test_too_few_occurrences_and_a_labels_count_mismatch_are_input_errors(run, corpus, tmp_path):
    text, _ = corpus
    few = tmp_path / "few.txt"
    few.write_text("the river bank\nmoney grows\n", encoding="utf-8")
    result = run("senses", "bank", "--file", str(few))
    assert result.exit_code == 3 and "senses needs at least 3" in result.stderr
    short = tmp_path / "short.labels.txt"
    short.write_text("river\nmoney\n", encoding="utf-8")
    result = run("senses", "bank", "--file", str(text), "--labels", str(short))
    assert result.exit_code == 3 and "12" in result.stderr and "2" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_a_picture_never_replaces_the_corpus(run, corpus):
    text, _ = corpus
    before = text.read_bytes()
    result = run("senses", "bank", "--file", str(text), "--svg", str(text))
    assert result.exit_code == 2 and f"--svg {text} is the --file input" in result.stderr
    assert text.read_bytes() == before and result.stdout == ""


def test_hostile_corpus_text_reaches_the_terminal_literally(run, tmp_path):
    hostile = tmp_path / "hostile.txt"
    hostile.write_text("".join(f"\u202e {line} \x1b[2J [red]x[/red]\n" for line in ("the bank", "a bank", "my bank")),
                       encoding="utf-8")
    result = run("senses", "bank", "--file", str(hostile), "--clusters", "1")
    assert result.exit_code == 0, result.stderr
    for line in ("the bank", "a bank", "my bank"):  # the three sentences nearest the centre
        assert f"\\u202e {line} \\x1b[2J [red]x[/red]" in result.stdout
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout


def test_parquet_holds_each_occurrence_with_its_group_label_and_output_as_the_json_says(run, corpus, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    text, labels = corpus
    table = tmp_path / "bank.parquet"
    result = run("senses", "bank", "--file", str(text), "--labels", str(labels), "--json", "--parquet", str(table))
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    rows = pq.read_table(table).to_pylist()
    assert [(row["line"], row["position"], row["group"], row["label"]) for row in rows] == [
        (o["line"], o["position"], o["group"], o["label"]) for o in document["occurrences"]]
    assert [row["label"] for row in rows] == ["river"] * len(RIVER) + ["money"] * len(MONEY)
    assert all(len(row["outputs"]) == document["vectors"]["dims"] for row in rows)


def test_occurrences_groups_a_scans_table_exactly_as_the_corpus_run(run, corpus, tmp_path):
    text, labels = corpus
    table = tmp_path / "bank.parquet"
    direct = run("senses", "bank", "--file", str(text), "--labels", str(labels), "--json", "--parquet", str(table))
    again = run("senses", "bank", "--occurrences", str(table), "--labels", str(labels), "--json")
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(direct.stdout)


@pytest.mark.parametrize("args, message", [
    (["--heads", "2"], "holds what its scan found with its own settings; leave out --heads"),
    (["--file", "CORPUS"], "give the corpus once"),
    (["--oov", "error"], "leave out --oov"),
    (["--max-tokens", "5"], "leave out --max-tokens"),
    (["--mask", "others", "--max-tokens", "5"], "leave out --mask, --max-tokens"),
], ids=["heads", "file", "oov", "max-tokens", "mask-and-max-tokens"])
def test_occurrences_refuses_what_it_would_leave_unused(run, corpus, tmp_path, args, message, scanned_table):
    text, _ = corpus
    table = scanned_table
    result = run("senses", "bank", "--occurrences", str(table), *[str(text) if a == "CORPUS" else a for a in args])
    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""


def test_occurrences_of_another_word_name_the_command_that_reads_them(run, corpus, tmp_path, scanned_table):
    text, _ = corpus
    table = scanned_table
    result = run("senses", "river", "--occurrences", str(table))
    assert result.exit_code == 2 and f"give attn-cli senses bank --occurrences {table}" in result.stderr


def test_a_table_of_more_rows_than_a_scan_keeps_is_refused_from_its_footer(run, corpus, tmp_path, scanned_table):
    """A few KB of Parquet can hold millions of rows of zeros (3 million made 6.9 GB): the row count is read
    from the footer, here of a file whose only column is not even a table's, before any column is read."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    text, _ = corpus
    table = scanned_table
    metadata = pq.read_schema(table).metadata
    pq.write_table(pa.table({"line": pa.array([0] * 100_001, pa.int64())}).replace_schema_metadata(metadata), table)
    result = run("senses", "bank", "--occurrences", str(table))
    assert result.exit_code == 3 and result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert "holds 100,001 occurrences, more than the 100,000" in result.stderr
    assert result.stderr.endswith("or raise --max-occurrences\n")


def test_max_occurrences_bounds_the_rows_an_occurrences_table_may_hold(run, corpus, tmp_path, scanned_table):
    """--max-occurrences bounds a table read as it bounds a scan (it was refused beside --occurrences)."""
    text, _ = corpus
    table = scanned_table
    refused = run("senses", "bank", "--occurrences", str(table), "--max-occurrences", "5")
    assert refused.exit_code == 3 and "--max-occurrences" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert run("senses", "bank", "--occurrences", str(table), "--max-occurrences", "12").exit_code == 0


def test_a_tables_long_word_is_shortened_in_its_one_line(run, corpus, tmp_path, scanned_table):
    """A table of a word of 1,000,000 characters made a 2 MB error line."""
    pq = pytest.importorskip("pyarrow.parquet")
    text, _ = corpus
    table = scanned_table
    stored = pq.read_table(table)
    about = json.loads(stored.schema.metadata[b"attn_cli"])
    pq.write_table(stored.replace_schema_metadata({b"attn_cli": json.dumps({**about, "word": "b" * 1_000_000})}),
                   table)
    result = run("senses", "bank", "--occurrences", str(table))
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1 and len(result.stderr) < 1000
    assert "(1,000,000 characters)" in result.stderr


@pytest.mark.parametrize("option", ["--parquet", "--html", "--svg"])
def test_a_file_that_cannot_be_written_leaves_nothing_on_stdout(run, corpus, option):
    text, _ = corpus
    result = run("senses", "bank", "--file", str(text), option, "/dev/full")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"attn-cli: error: cannot write {option} /dev/full: No space left on device; " \
                            "choose a writable file\n"


def test_occurrences_that_all_share_one_output_are_one_group_said_plainly(run, tmp_path):
    """Copies of one sentence give one output: there is nothing to group (the tables used to end with exit 1, an
    IndexError, after the header was printed)."""
    same = tmp_path / "same.txt"
    same.write_text("we sat on the bank of the river\n" * 5, encoding="utf-8")
    result = run("senses", "bank", "--file", str(same))
    assert result.exit_code == 0, result.stderr
    assert "Groups: 1 group: every occurrence has the same output" in result.stdout
    refused = run("senses", "bank", "--file", str(same), "--clusters", "2")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert "--clusters must be at most the 1 different output among the 5 occurrences" in refused.stderr


@pytest.mark.parametrize("target", ["--parquet", "--html", "--svg"])
def test_the_labels_file_is_never_an_output(run, corpus, target):
    text, labels = corpus
    before = labels.read_bytes()
    result = run("senses", "bank", "--file", str(text), "--labels", str(labels), target, str(labels))
    assert result.exit_code == 2 and f"{target} {labels} is the --labels input" in result.stderr
    assert labels.read_bytes() == before


def test_an_endless_corpus_stops_at_max_occurrences(run):
    """The occurrences are all kept: a stream of them that never ends must stop, at a bound its option raises."""
    result = run("senses", "bank", "-", "--max-occurrences", "300", input="the bank of the river\n" * 2_000)
    assert result.exit_code == 3 and result.stdout == ""
    assert result.stderr.startswith("attn-cli: error: more than 300 occurrences of 'bank' by line ")
    assert result.stderr.endswith("or raise --max-occurrences\n")


def test_labels_are_read_one_past_the_corpus_and_no_further(run, corpus, tmp_path):
    """An endless --labels stream (`--labels <(yes river)`) used to grow without end: reading stops one label
    past the corpus's lines, and the count check says what is wrong."""
    text, _ = corpus
    many = tmp_path / "many.labels.txt"
    many.write_text("river\n" * 100_000, encoding="utf-8")
    result = run("senses", "bank", "--file", str(text), "--labels", str(many))
    assert result.exit_code == 3
    assert "the labels give 13 labels for a corpus of 12 lines" in result.stderr


def test_the_labels_of_a_corpus_label_the_table_of_its_part(run, tmp_path):
    """--labels numbers the corpus's lines, and a part's table keeps them (lines 11 to 40 here): its labels are
    those of its lines, not the file's first ones (a count mismatch, exit 3, before)."""
    import attn_cli

    sentences, labels = attn_cli.example_corpus()
    table, labels_file = tmp_path / "part.parquet", tmp_path / "labels.txt"
    attn_cli.occurrences("bank", sentences[10:], first_line=11).write_parquet(table)
    labels_file.write_text("\n".join(labels) + "\n", encoding="utf-8")
    result = run("senses", "bank", "--occurrences", str(table), "--labels", str(labels_file), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["labels"]["purity"] == 1.0


def test_too_few_occurrences_say_how_many_lines_were_skipped_and_why(run, tmp_path):
    """A line too long for --max-tokens may be where the word was: the message must not blame the corpus alone."""
    corpus = tmp_path / "long.txt"
    corpus.write_text(" ".join(["the bank"] * 700) + "\nthe river bank\nmoney bank\n", encoding="utf-8")
    result = run("senses", "bank", "--file", str(corpus))
    assert result.exit_code == 3 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("attn-cli: error: found 2 occurrences of 'bank'; senses needs at least 3; 1 line "
                                    "that may hold it was skipped, the first (line 1): the sentence has 1,400 tokens, "
                                    "more than --max-tokens 1000; shorten it or pass --max-tokens 1400")


@pytest.mark.parametrize("options, lines, culprit", [
    (["--mask", "others"], "bank\nbank bank\nriver bank\n", "the first (line 1): the mask 'others' hides"),
    (["--oov", "error"], "bank zzqx\nriver bank\nmoney bank\n", 'the first (line 1): not in the vocabulary of '
                                                                   'default (minilm-l6-128d): "zzqx"'),
], ids=["mask-others", "oov-error"])
def test_too_few_occurrences_name_the_setting_that_skipped_lines(run, tmp_path, options, lines, culprit):
    """Lines a mask or --oov error skipped were reported as too long for --max-tokens."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(lines, encoding="utf-8")
    result = run("senses", "bank", "--file", str(corpus), *options)
    assert result.exit_code == 3 and result.stderr.count("\n") == 1
    assert culprit in result.stderr and "max-tokens" not in result.stderr


def test_a_damaged_or_missing_occurrences_table_is_one_line_and_exit_3(run, corpus, tmp_path, scanned_table):
    pq = pytest.importorskip("pyarrow.parquet")
    text, _ = corpus
    table = scanned_table
    stored = pq.read_table(table)
    pq.write_table(stored.replace_schema_metadata({b"attn_cli": b"[" * 100_000 + b"]" * 100_000}), table)
    for path, message in ((table, f"the occurrences table {table} is damaged: its metadata is not JSON"),
                          (tmp_path / "missing.parquet", "no such file")):
        result = run("senses", "bank", "--occurrences", str(path))
        assert result.exit_code == 3 and message in result.stderr, result.stderr
        assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1


def test_a_long_unknown_word_is_shortened_in_its_one_line(run, corpus):
    text, _ = corpus
    result = run("senses", "x" * 10_000, "--file", str(text))
    assert result.exit_code == 3 and len(result.stderr) < 300
    assert "(10,000 characters)" in result.stderr and result.stderr.count("\n") == 1


def test_occurrences_uses_the_neighbour_options_as_the_corpus_run_does(run, corpus, tmp_path, scanned_table):
    """The neighbour searches run on the groups with the vectors given: a table has what they need."""
    text, _ = corpus
    table = scanned_table
    options = ["--neighbors", "2", "--neighbor-vocab", "300", "--json"]
    direct = run("senses", "bank", "--file", str(text), *options)
    again = run("senses", "bank", "--occurrences", str(table), *options)
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(direct.stdout)
    assert all(len(group["neighbors"]) == 2 for group in json.loads(again.stdout)["groups"])


def test_a_cluster_seed_past_what_k_means_takes_is_refused_at_the_command_line(run, corpus):
    from attn_cli.contexts.grouping import MAX_SEED

    text, _ = corpus
    result = run("senses", "bank", "--file", str(text), "--cluster-seed", str(MAX_SEED + 1))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "--cluster-seed" in result.stderr
    assert f"0<=x<={MAX_SEED}" in result.stderr
    assert run("senses", "bank", "--file", str(text), "--cluster-seed", str(MAX_SEED), "--json").exit_code == 0


@pytest.fixture
def mislabelled(tmp_path) -> Path:
    """Labels for the corpus with line 6 (a river sentence, "we walked along the bank beside the water") labelled
    money: its group's majority label is river, so it is misgrouped."""
    path = tmp_path / "mislabelled.txt"
    path.write_text("\n".join(["river"] * 5 + ["money"] * 7) + "\n", encoding="utf-8")
    return path


def test_labels_give_each_occurrence_its_label_and_list_the_misgrouped(run, corpus, mislabelled, schema_validator):
    text, _ = corpus
    result = run("senses", "bank", "--file", str(text), "--labels", str(mislabelled), "--clusters", "2", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    schema_validator("senses").validate(document)
    assert [o["label"] for o in document["occurrences"]] == ["river"] * 5 + ["money"] * 7
    river = document["occurrences"][0]["group"]
    assert [o["group"] == river for o in document["occurrences"]] == [True] * 6 + [False] * 6
    assert document["labels"]["misgrouped"] == [
        {"line": 6, "position": 4, "group": river, "label": "money", "majority_label": "river"}]
    without = json.loads(run("senses", "bank", "--file", str(text), "--json").stdout)
    assert {o["label"] for o in without["occurrences"]} == {None} and without["labels"] is None
    schema_validator("senses").validate(without)

    shown = run("senses", "bank", "--file", str(text), "--labels", str(mislabelled), "--clusters", "2").stdout
    listed = shown[shown.index("Misgrouped"):shown.index("Sense probe")]
    assert [line.split()[:4] for line in listed.splitlines() if "bank beside" in line] == [
        [str(river), "6", "money", "river"]]


def test_the_scatter_is_coloured_by_label_on_demand_and_rings_the_misgrouped(run, corpus, mislabelled, tmp_path):
    from xml.etree import ElementTree

    from attn_cli.render.senses_page import group_colours

    text, _ = corpus
    picture, page = tmp_path / "senses.svg", tmp_path / "senses.html"
    result = run("senses", "bank", "--file", str(text), "--labels", str(mislabelled), "--clusters", "2",
                 "--color-by", "label", "--svg", str(picture), "--html", str(page))
    assert result.exit_code == 0, result.stderr
    points = ElementTree.parse(picture).getroot().findall(".//{http://www.w3.org/2000/svg}circle[@data-index]")
    river, money = group_colours(2)  # labels in the order first met
    assert [point.get("fill") for point in points] == [river] * 5 + [money] * 7
    assert [point.get("data-label") for point in points] == ["river"] * 5 + ["money"] * 7
    assert [point.get("class") for point in points] == [None] * 5 + ["misgrouped"] + [None] * 6
    assert "coloured by label" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("args, culprit", [
    (["--color-by", "label"], "--labels FILE"),
    (["--color-by", "sense"], "'sense'"),
])
def test_color_by_a_label_needs_labels_and_takes_two_values(run, corpus, tmp_path, args, culprit):
    text, _ = corpus
    result = run("senses", "bank", "--file", str(text), *args, "--svg", str(tmp_path / "senses.svg"))
    assert result.exit_code == 2 and "--color-by" in result.stderr and culprit in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1 and not (tmp_path / "senses.svg").exists()


def test_color_by_label_without_a_scatter_is_refused_as_unused(run):
    """Issue 32 audit 12: `senses bank --example --color-by label` without --html or --svg was silently unused."""
    result = run("senses", "bank", "--example", "--color-by", "label", "--json")
    assert result.exit_code == 2 and "--color-by label" in result.stderr and "--html" in result.stderr
    assert result.stdout == ""


def test_long_and_empty_labels_are_shown_shortened_and_named_in_the_tables(run, corpus, tmp_path):
    """Issue 32 audit 12: a 300-character label filled the "majority label" and "Misgrouped" cells whole, and an
    empty one showed as a blank cell."""
    text, labels = corpus
    odd = tmp_path / "odd.labels.txt"
    lines = labels.read_text(encoding="utf-8").splitlines()
    odd.write_text("\n".join(["L" * 300 if label == "river" else "" for label in lines[:-1]] + ["L" * 300]) + "\n",
                   encoding="utf-8")
    result = run("senses", "bank", "--file", str(text), "--labels", str(odd), "--clusters", "1")
    assert result.exit_code == 0, result.stderr
    assert "L" * 41 not in result.stdout and "(300 characters)" in result.stdout and "(empty)" in result.stdout


def test_the_bundled_corpus_runs_from_the_command_line_with_its_labels(run):
    import attn_cli

    result = run("senses", "bank", "--example", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    sentences, labels = attn_cli.example_corpus()
    assert document["corpus"]["lines"] == len(sentences) == 40
    assert [o["label"] for o in document["occurrences"]] == labels
    assert document["labels"]["purity"] == 1.0 and document["labels"]["misgrouped"] == []
    package = Path(attn_cli.__file__).parent
    if "site-packages" in package.parts:  # an installed attn-cli (CI installs it): the corpus is in the wheel
        assert (package / "data" / "senses" / "bank.labels.txt").is_file()


@pytest.mark.parametrize("args, culprit", [(["--labels", "labels.txt"], "--labels"),
                                           (["--file", "corpus.txt"], "--file")])
def test_the_bundled_corpus_is_the_only_corpus_and_brings_its_labels(run, args, culprit):
    result = run("senses", "bank", "--example", *args)
    assert result.exit_code == 2 and culprit in result.stderr and "--example" in result.stderr, result.stderr


def test_the_help_examples_run_as_written_in_an_empty_folder(run, tmp_path, monkeypatch):
    import shlex

    monkeypatch.chdir(tmp_path)
    examples = [line.strip() for line in run("senses", "--help").stdout.splitlines()
                if line.strip().startswith("attn-cli senses")]
    assert len(examples) >= 3
    for example in examples:
        result = run(*shlex.split(example)[1:])
        assert result.exit_code == 0, f"{example}: {result.stderr}"


@pytest.mark.parametrize("blank_corpus_lines", [0, 4])
def test_trailing_blank_labels_are_empty_labels_of_their_lines(run, corpus, tmp_path, blank_corpus_lines):
    """Issue 32 audit 2: a labels file whose last lines are blank was refused ("the labels give 6 labels for a
    corpus of 12 lines"), and a corpus's trailing blank lines were not counted as lines: a blank line is an empty
    label, and a line of the corpus."""
    text, labels = corpus
    trailing, trailing_labels = tmp_path / "trailing.txt", tmp_path / "trailing.labels.txt"
    trailing.write_bytes(text.read_bytes() + b"\n" * blank_corpus_lines)
    kept = labels.read_bytes().splitlines(keepends=True)[:6]
    trailing_labels.write_bytes(b"".join(kept) + b"\n \n\t\r\n\n\n\n" + b"\n" * blank_corpus_lines)
    result = run("senses", "bank", "--file", str(trailing), "--labels", str(trailing_labels), "--json")
    assert result.exit_code == 0, result.stderr
    assert {row["label"] for row in json.loads(result.stdout)["occurrences"]} == {"river", ""}


@pytest.mark.parametrize("content", [b"river\n\xff\xfe money\n", b"river\n\x00\x01\x02\n"], ids=["latin1", "nul"])
def test_labels_that_are_not_text_are_input_errors_as_an_endless_line_is(run, corpus, tmp_path, content):
    """Issue 32 audit 10: `--labels /dev/urandom` was exit 2 (not UTF-8, NUL bytes) and `--labels /dev/zero` exit 3
    (a line over 1 MiB): a labels file that is not text is exit 3, as a corpus line over the cap is."""
    text, _ = corpus
    bad = tmp_path / "bad.labels.txt"
    bad.write_bytes(content)
    result = run("senses", "bank", "--file", str(text), "--labels", str(bad))
    assert result.exit_code == 3 and f"line 2 of --labels {bad}" in result.stderr, result.stderr
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1


def test_labels_dash_points_to_dev_stdin(run, corpus):
    """Issue 32 audit 10: `--labels -` said "no such file", without saying how stdin is read."""
    text, _ = corpus
    result = run("senses", "bank", "--file", str(text), "--labels", "-")
    assert result.exit_code == 2 and "--labels /dev/stdin" in result.stderr, result.stderr


def test_unreadable_corpus_lines_are_counted_in_the_json(run, corpus, tmp_path, schema_validator):
    """Issue 32 audit 11: two unreadable lines were warned about on stderr while the JSON said nothing of them."""
    text, _ = corpus
    broken = tmp_path / "broken.txt"
    broken.write_bytes(text.read_bytes() + b"the bank \xed\xa0\x80 money\nthe bank \xff river\n")
    result = run("senses", "bank", "--file", str(broken), "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    schema_validator("senses").validate(document)
    assert document["corpus"]["unreadable_lines"] == 2 and "skipped 2 unreadable" in result.stderr
    assert "unreadable_lines" not in json.loads(run("senses", "bank", "--file", str(text), "--json").stdout)["corpus"]
