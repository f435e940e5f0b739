"""What a new user meets first: a sense query whose lemma the index lacks says so (CLI note,
table metadata, a warning in Python); every public object has a one-line repr; long analogy question files show a
progress bar; model-backed commands say where the model stays loaded; run offsets takes --relation; the help texts
carry no reStructuredText backticks."""

from __future__ import annotations

import json

import click
import pyarrow.parquet as pq
import pytest

import lexprobe
from lexprobe.kinds.tokens import NoLemmaInstances

BANK = [("we sat on the river bank", 5, "slope"), ("the bank lent us money", 1, "money"),
        ("she rowed to the bank of the lake", 4, "slope"), ("my bank charges a fee", 1, "money")]


@pytest.fixture(scope="module")
def bank_home(tmp_path_factory):
    """A MiniLM token index ``bank`` of four sentences, every target of lemma 'bank'."""
    home = tmp_path_factory.mktemp("bank")
    (home / "bank.jsonl").write_text("\n".join(json.dumps({"text": t, "targets": [
        {"position": p, "sense": s, "lemma": "bank"}]}) for t, p, s in BANK))
    lexprobe.build_token_index("bank", "minilm", f"jsonl:{home / 'bank.jsonl'}", home=home)
    return home


def test_sense_query_without_its_lemma_says_so(bank_home, cli):
    index = lexprobe.open_index("bank", home=bank_home)
    with pytest.warns(NoLemmaInstances, match="no instance of lemma 'river'.*ranking all 4 instances"):
        hits = index.query("we swam in the river", "river", k=2)
    assert b"no instance of lemma 'river'" in hits.schema.metadata[b"note"] and hits.num_rows == 2
    r = cli("--home", bank_home, "query", "senses", "--index", "bank", "--sentence", "we swam in the river",
            "--target", "river", "-k", "2")
    assert r.code == 0 and r.err.count("no instance of lemma 'river'") == 1 and "Warning" not in r.err
    r = cli("--home", bank_home, "query", "senses", "--index", "bank", "--sentence", "we sat on the bank",
            "--target", "bank", "-k", "2")
    assert r.code == 0 and "no instance" not in r.err


def _one_short_line(obj):
    text = repr(obj)
    assert "\n" not in text and len(text) <= 220 and " at 0x" not in text and "[[" not in text, text
    assert type(obj).__name__ in text, text
    return text


def test_public_objects_have_short_reprs(bank_home, glove_home, shared_data, tmp_path):
    from lexprobe.kinds.offsets import OffsetIndex, build_offset_index

    glove = lexprobe.open_index("glove", home=glove_home)
    assert _one_short_line(glove) == "<WordIndex glove: 400000 x 50, flat>"
    bats = f"bats:{shared_data / 'BATS_3.0'}"
    relations, coverage = lexprobe.analogy_dataset(glove, bats)
    assert "pairs=list[50]" in _one_short_line(relations[0])
    _one_short_line(coverage[0])
    test = lexprobe.analogy_test(glove, relations[:1], coverage[:1])
    assert "questions=table[" in _one_short_line(test)
    scores = lexprobe.relation_offsets(glove, [("france", "paris"), ("italy", "rome"), ("japan", "tokyo")])
    assert "aucs=float64[50]" in _one_short_line(scores)
    (tmp_path / "r.txt").write_text("man\tking\nwoman\tqueen\nboy\tprince\n")
    build_offset_index(glove_home, "first-use-offsets", "glove", f"bats:{tmp_path / 'r.txt'}")
    offsets = OffsetIndex.open("first-use-offsets", home=glove_home)
    _one_short_line(offsets)
    _one_short_line(offsets.select())
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("king\tqueen\t9\nman\twoman\t8\ncar\tbanana\t1\n")
    _one_short_line(glove.evaluate_word_pairs(pairs, n_resamples=20))
    tokens = lexprobe.open_index("bank", home=bank_home)
    _one_short_line(tokens)
    assert "minilm" in _one_short_line(tokens.encoder())
    _one_short_line(lexprobe.sense_ranking(tokens, k_max=1, min_sense_count=1))
    lm = lexprobe.load_lm("splade-tiny")  # CausalLM shares this repr (the base class's)
    assert "vocabulary" in _one_short_line(lm)


def test_long_question_files_show_a_progress_bar(cli, glove_home, tmp_path, monkeypatch):
    from lexprobe.kinds import analogy_queries

    questions = tmp_path / "q.txt"
    questions.write_text("man king woman\n" * 1200)
    monkeypatch.setattr(analogy_queries, "progress_enabled", lambda: True)  # as on a terminal
    r = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", questions, "-k", "1",
            "--format", "csv")
    assert r.code == 0 and "analogy questions" in r.err and r.out.count("queen") == 1200
    questions.write_text("man king woman\n" * 10)  # a few: no bar
    r = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", questions, "-k", "1")
    assert r.code == 0 and "analogy questions" not in r.err


def test_model_backed_commands_say_where_the_model_stays_loaded(cli, monkeypatch):
    from lexprobe.cli import root

    r = cli("query", "probe", "--model", "splade-tiny", "A kumquat is a kind of [MASK] .", "-k", "2")
    assert r.code == 0 and "lexprobe serve" not in r.err  # a quick load: no hint (threshold seconds)
    monkeypatch.setattr(root, "MODEL_HINT_SECONDS", 0.0)
    r = cli("query", "probe", "--model", "splade-tiny", "A kumquat is a kind of [MASK] .", "-k", "2")
    assert r.code == 0 and "note: loading splade-tiny took" in r.err and "'lexprobe serve'" in r.err


def test_run_offsets_takes_relations(cli, glove_home, tmp_path):
    from lexprobe.kinds.offsets import OffsetIndex

    bats = tmp_path / "BATS"
    for folder, name, pairs in [("1_Inflectional_morphology", "I01 [noun - plural_reg]",
                                 "car\tcars\ndog\tdogs\nhouse\thouses\nbook\tbooks\n"),
                                ("3_Encyclopedic_semantics", "E01 [country - capital]",
                                 "france\tparis\nitaly\trome\njapan\ttokyo\nspain\tmadrid\n"),
                                ("4_Lexicographic_semantics", "L01 [hypernyms - animals]",
                                 "dog\tanimal\ncat\tanimal\nhorse\tanimal\ncow\tanimal\n")]:
        (bats / folder).mkdir(parents=True)
        (bats / folder / f"{name}.txt").write_text(pairs)
    common = ["--home", glove_home, "run", "offsets", "--words", "glove", "--dataset", f"bats:{bats}",
              "--offsets", "first-use-bats", "--shuffles", "5", "--replicates", "1"]
    r = cli(*common, "--relation", "E01", "--relation", "i01", "--out", tmp_path / "two")
    assert r.code == 0, r
    rows = pq.read_table(tmp_path / "two" / "table1_relations.parquet").to_pylist()
    assert sorted(row["relation"] for row in rows) == ["E01 [country - capital]", "I01 [noun - plural_reg]"]
    summary = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert summary["only_relations"] == ["E01 [country - capital]", "I01 [noun - plural_reg]"]
    assert set(OffsetIndex.open("first-use-bats", home=glove_home).kinds()) == {"true", "shuffled"}
    r = cli(*common, "--relation", "X99", "--out", tmp_path / "none")
    assert r.code == 2 and "no relation 'X99'" in r.err and "E01" in r.err
    r = cli(*common, "--relation", "E01", "--compare", "--out", tmp_path / "none2")
    assert r.code == 2 and "--relation" in r.err


def test_help_texts_carry_no_rst_backticks(cli):
    from lexprobe.cli.root import cli as root

    top = cli("--help")
    assert top.code == 0 and "`" not in top.out

    def walk(command, path):
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, [*path, name])

    for path, command in walk(root, ["lexprobe"]):
        text = command.get_help(click.Context(command, info_name=" ".join(path)))
        assert "``" not in text, " ".join(path)
