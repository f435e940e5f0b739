"""Typed sentences and token-index provenance: a query sentence is split into words
the way the corpora are (``banks.`` -> ``banks .``); long sentences are cut around the marked target in table
output (JSON keeps them whole); a token index records its corpus as a resolved path with a content checksum, and
runs reuse an index of the same corpus however its path was typed."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from lexprobe.sources.typed_text import split_words

LONG = ("the committee that met on a cold and windy morning in the old hall beside the market square finally "
        "agreed after many hours of talk that the bank should lend the money to the small farmers of the valley "
        "who had asked for it many times before without any answer from anyone")


def test_split_words_like_the_corpora():
    assert split_words("I put my money in banks.") == ["I", "put", "my", "money", "in", "banks", "."]
    assert split_words('"The bank\'s rate (twice) was 3.5%!"') == [
        '"', "The", "bank", "'s", "rate", "(", "twice", ")", "was", "3.5%", "!", '"']
    assert split_words("Don't go to the U.S. now...") == ["Do", "n't", "go", "to", "the", "U.S", ".", "now", "..."]
    assert split_words("I put it in banks .") == ["I", "put", "it", "in", "banks", "."]
    assert split_words("a well-known river-bank") == ["a", "well-known", "river-bank"]


@pytest.fixture(scope="module")
def bank_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    rows = [("we sat on the river bank", 5, "slope"), ("the bank lent us money", 1, "money"),
            ("she rowed to the bank of the lake", 4, "slope"), (LONG, LONG.split().index("bank"), "money")]
    path = folder / "bank.jsonl"
    path.write_text("\n".join(json.dumps({"text": t, "targets": [{"position": p, "sense": s, "lemma": "bank"}]})
                              for t, p, s in rows) + "\n")
    return path


@pytest.fixture(scope="module")
def bank_home(cli, bank_corpus, tmp_path_factory):
    """A home with token index ``bank`` built from the corpus named by a path relative to its folder."""
    home = tmp_path_factory.mktemp("home")
    here = os.getcwd()
    os.chdir(bank_corpus.parent)
    try:
        r = cli("--home", home, "-q", "index", "tokens", "--corpus", "jsonl:bank.jsonl", "--name", "bank")
    finally:
        os.chdir(here)
    assert r.code == 0, r
    return home


def test_typed_sentence_and_cut_table(cli, bank_home):
    home = bank_home
    r = cli("--home", home, "query", "senses", "--index", "bank", "--sentence", "I put my money in banks.",
            "--target", "banks.", "-k", "4")
    assert r.code == 0, r
    assert r.out.splitlines()[0] == "query: I put my money in [[banks]] ."
    long_row = next(line for line in r.out.splitlines() if "committee" in line or "farmers" in line)
    assert "[[bank]]" in long_row and "…" in long_row and "committee that met" not in long_row
    assert len(long_row) < len(LONG)
    full = cli("--home", home, "query", "senses", "--index", "bank", "--sentence", "I put my money in banks.",
               "--target", "banks", "-k", "4", "--format", "json")
    assert any(row["sentence"].startswith("the committee that met") for row in json.loads(full.out))


def test_token_index_provenance_and_reuse(bank_home, tmp_path, bank_corpus, monkeypatch):
    from lexprobe.core.store import read_manifest
    from lexprobe.senses.run_senses import token_index_for
    from lexprobe.sources.datahome import tree_checksum

    home = bank_home
    manifest = read_manifest(home / "bank" / "manifest.json")
    assert manifest["source"] == f"jsonl:{bank_corpus.resolve()}"
    assert manifest["meta"]["corpus"] == f"jsonl:{bank_corpus.resolve()}"
    assert manifest["meta"]["corpus_typed"] == "jsonl:bank.jsonl"
    assert manifest["meta"]["corpus_sha256"] == tree_checksum(bank_corpus)["sha256"]
    # from another folder, by absolute path, and a copy with the same content elsewhere: reused, not rebuilt
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "elsewhere" / "bank.jsonl"
    copy.parent.mkdir()
    shutil.copy(bank_corpus, copy)
    for spec in (f"jsonl:{bank_corpus}", f"jsonl:{copy}"):
        assert token_index_for(home, spec, "minilm", None, "mean", None,
                               build=lambda *a, **k: pytest.fail("rebuilt")) == ("bank", False)
    copy.write_text(copy.read_text().replace("river", "canal"))  # other content: a new index
    built = []
    assert token_index_for(home, f"jsonl:{copy}", "minilm", None, "mean", None,
                           build=lambda *a, **k: built.append(a))[1] is True and built


def test_around_target_cuts_at_word_boundaries():
    from lexprobe.cli.query import around_target

    assert around_target("short [[x]] y") == "short [[x]] y"
    marked = LONG.replace(" bank ", " [[bank]] ")
    assert around_target(marked) == ("… agreed after many hours of talk that the [[bank]] should lend the money to "
                                     "the small farmers …")
    start = around_target("[[bank]] " + "word " * 40)
    assert start.startswith("[[bank]] word") and start.endswith(" …") and len(start) <= 100
