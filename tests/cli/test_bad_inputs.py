"""Hostile inputs: repeated sentence ids, directory links in
``data fetch --from``, numbers out of range, text that is not text, terminal escapes in words, byte-order marks,
a GloVe line with a number too many, repeated pairs, zero and tiny vectors, and a word that names a file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import crash_helpers as ch


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A home with a words index ``w`` of 300 x 8 random vectors, plus two odd words (a third, holding terminal
    escapes, is refused by the word rule and left out)."""
    from lexprobe.kinds.words import build_word_index

    root = tmp_path_factory.mktemp("inputs")
    path = root / "v.txt"
    ch.write_glove(path, 300, 8, 3)
    with open(path, "a", encoding="utf-8") as f:
        f.write("\x1b[31mred\x1b]0;pwned\x07 " + " ".join(["0.5"] * 8) + "\n")
        f.write("zero " + " ".join(["0"] * 8) + "\n")
        f.write("tiny " + " ".join(["1e-22"] * 8) + "\n")
    build_word_index("w", str(path), home=root / "home")
    return root / "home"


def _one_error(r, *needles: str) -> str:
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.err, r
    for needle in needles:
        assert needle in lines[0], (needle, r.err)
    return lines[0]


# ---------------------------------------------------------------------------------------- numbers (item 9)


@pytest.mark.parametrize("argv,option", [
    (("query", "neighbors", "--index", "w", "word0", "-k", "-5"), "-k"),
    (("query", "neighbors", "--index", "w", "word0", "-k", "10000000000"), "-k"),
    (("query", "neighbors", "--index", "w", "word0", "--restrict-vocab", "0"), "--restrict-vocab"),
    (("query", "analogy", "--index", "w", "word0", "word2", "word4", "-k", "-5"), "-k"),
    (("query", "analogy", "--index", "w", "word0", "word2", "word4", "-k", "10000000000"), "-k"),
    (("query", "analogy", "--index", "w", "word0", "word2", "word4", "--method", "mul", "--eps", "-1"), "--eps"),
    (("query", "analogy", "--index", "w", "word0", "word2", "word4", "--method", "mul", "--eps", "nan"), "--eps"),
    (("query", "analogy", "--index", "w", "word0", "word2", "word4", "--method", "mul", "--eps", "inf"), "--eps"),
    (("query", "probe", "-k", "1e8", "a ___ ."), "-k"),
    (("query", "senses", "--index", "t", "--sentence", "a b", "--target", "a", "--occurrence", "-1"), "--occurrence"),
    (("query", "senses", "--index", "t", "--sentence", "a b", "--target", "a", "--occurrence", "0"), "--occurrence"),
    (("bench", "probing", "--threads", "-3"), "--threads"),
    (("index", "words", "--vectors", "glove-6b-50d", "--name", "x", "--limit", "0"), "--limit"),
    (("index", "words", "--vectors", "glove-6b-50d", "--name", "x", "--shard-rows", "-1"), "--shard-rows"),
    (("ota", "--model", "splade-tiny", "--into", "w", "kumquat", "--lr", "nan"), "--lr"),
    (("ota", "--model", "splade-tiny", "--into", "w", "kumquat", "--iterations", "-1"), "--iterations"),
    (("ota", "--model", "splade-tiny", "--into", "w", "kumquat", "--seed", "-1"), "--seed"),
])
def test_numbers_out_of_range_are_one_line(cli, home, argv, option):
    _one_error(cli("--home", home, *argv), option)


def test_k_above_the_candidates_is_clamped_with_a_note(cli, home):
    r = cli("--home", home, "query", "neighbors", "--index", "w", "word0", "-k", "5000", "--format", "json")
    assert r.code == 0 and "note: -k 5000" in r.err, r
    assert len(json.loads(r.out)) == 301  # every other word
    r = cli("--home", home, "query", "analogy", "--index", "w", "word0", "word2", "word4", "-k", "5000",
            "--format", "json")
    assert r.code == 0 and "note: -k 5000" in r.err and len(json.loads(r.out)) == 299, r


# ------------------------------------------------------------------------------------------- text (item 10)


def test_terminal_escapes_in_words_are_not_printed_raw(cli, home):
    from lexprobe.core.formatting import render

    from lexprobe.kinds.words import WordIndex

    assert not [w for w in WordIndex.open("w", home=home).words if "red" in w]  # refused by the word rule
    for fmt in ("table", "csv"):
        out = render([{"word": "\x1b[31mred\x1b]0;pwned\x07", "score": 0.5}], fmt)
        assert "\x1b" not in out and "\x07" not in out and "\\x1b[31mred" in out, out
    r = cli("--home", home, "sql", "select '\x1b[31mred' as word", "--format", "table")
    assert r.code == 0 and "\x1b" not in r.out and "\\x1b" in r.out


@pytest.mark.parametrize("argv", [
    ("query", "senses", "--index", "t", "--sentence", "caf\udce9 au lait", "--target", "caf\udce9"),
    ("query", "probe", "caf\udce9 is a ___ ."),
    ("ota", "--model", "splade-tiny", "--into", "w", "caf\udce9"),
    ("query", "neighbors", "--index", "w", "caf\udce9"),
])
def test_arguments_that_are_not_utf8_are_one_line(cli, home, argv):
    _one_error(cli("--home", home, *argv), "UTF-8")


def test_a_lone_surrogate_in_a_jsonl_corpus_is_refused_with_its_line(cli, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"words": ["a", "b"], "targets": [{"position": 0, "sense": "x"}]}\n'
                      '{"words": ["\\ud800", "b"], "targets": [{"position": 1, "sense": "y"}]}\n')
    _one_error(cli("--home", tmp_path / "home", "index", "tokens", "--model", "splade-tiny", "--corpus",
                   f"jsonl:{corpus}", "--name", "t"), f"{corpus}:2", "surrogate")


# ------------------------------------------------------------------------------ repeated sentence ids (item 4)


def test_repeated_sentence_ids_are_refused_with_file_and_line(cli, tmp_path):
    xml = tmp_path / "x.data.xml"
    xml.write_text('<?xml version="1.0"?>\n<corpus lang="en" source="x">\n<text id="d000">\n'
                   '<sentence id="d000.s000">\n<wf lemma="the" pos="DET">the</wf>\n'
                   '<instance id="d000.s000.t000" lemma="bank" pos="NOUN">bank</instance>\n</sentence>\n'
                   '<sentence id="d000.s000">\n<instance id="d000.s000.t001" lemma="money" pos="NOUN">money'
                   '</instance>\n</sentence>\n</text>\n</corpus>\n')
    (tmp_path / "x.gold.key.txt").write_text("d000.s000.t000 bank%1:14:00::\nd000.s000.t001 money%1:21:00::\n")
    _one_error(cli("--home", tmp_path / "home", "index", "tokens", "--model", "splade-tiny", "--corpus",
                   f"wsd:{xml}", "--name", "t"), f"{xml}:8", "d000.s000")
    cols = ["_"] * 19
    row = lambda i, word, ss: "\t".join([str(i), word] + cols[2:13] + [ss] + cols[14:])
    lex = tmp_path / "s.conllulex"
    lex.write_text("# sent_id = doc-001\n" + row(1, "on", "p.Locus") + "\n\n"
                   "# sent_id = doc-001\n" + row(1, "at", "p.Time") + "\n\n")
    _one_error(cli("--home", tmp_path / "home", "index", "tokens", "--model", "splade-tiny", "--corpus",
                   f"streusle:{lex}", "--name", "t"), f"{lex}:5", "doc-001")
    vis = tmp_path / "s.vis"
    vis.write_text("doc-001\ton|P-p.Locus\ndoc-001\tat|P-p.Time\n")
    _one_error(cli("--home", tmp_path / "home", "index", "tokens", "--model", "splade-tiny", "--corpus",
                   f"streusle:{vis}", "--name", "t"), f"{vis}:2", "doc-001")


# ------------------------------------------------------------------------------- directory links (item 7)


def test_fetch_from_a_folder_does_not_follow_directory_links(tmp_path):
    src = tmp_path / "src" / "BATS_3.0"
    (src / "1_Inflectional_morphology").mkdir(parents=True)
    (src / "1_Inflectional_morphology" / "I01 [noun - plural_reg].txt").write_text("cat\tcats\n")
    (src / "notes.txt").write_text("hello\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    os.symlink("..", src / "up1")
    os.symlink("../..", src / "1_Inflectional_morphology" / "up2")
    os.symlink(outside / "secret.txt", src / "secret.txt")
    os.symlink("notes.txt", src / "notes-link.txt")  # a file link inside the source: fine to copy
    data = tmp_path / "data"
    proc = subprocess.run([sys.executable, "-m", "lexprobe", "data", "fetch", "bats", "--from", str(src.parent),
                           "--data-home", str(data)], env=ch.env(tmp_path / "h"), capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    record = json.loads((data / "bats" / "FETCH.json").read_text())
    assert record["files"] == 3 and sorted(record["skipped_links"]) == ["1_Inflectional_morphology/up2",
                                                                       "secret.txt", "up1"]
    assert "skipped 3 links" in proc.stdout
    assert not any(p.name == "secret.txt" for p in data.rglob("*"))


# ------------------------------------------------------------------------------------------------ lesser


def test_a_byte_order_mark_does_not_hide_the_first_word(cli, tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeffalpha 1 0\nbeta 0 1\ngamma 1 1\n".encode("utf-8"))
    assert cli("--home", tmp_path / "h", "index", "words", "--vectors", path, "--name", "b").code == 0
    r = cli("--home", tmp_path / "h", "query", "neighbors", "--index", "b", "alpha", "-k", "1", "--format", "json")
    assert r.code == 0 and json.loads(r.out)[0]["word"] == "gamma", r


def test_a_glove_line_with_a_number_too_many_is_refused(cli, tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("a 1 2\nb 3 1 2\nc 0 1\n")
    _one_error(cli("--home", tmp_path / "h", "index", "words", "--vectors", path, "--name", "g"), f"{path}:2")
    # a GloVe word holding a space (Common Crawl releases have them) still reads
    path.write_text("a 1 2\n. . . 3 1\nc 0 1\n")
    assert cli("--home", tmp_path / "h", "index", "words", "--vectors", path, "--name", "g").code == 0


def test_a_repeated_pair_is_refused_rather_than_counted_twice(cli, glove_home, tmp_path):
    pairs = ["france paris", "germany berlin", "italy rome", "spain madrid", "japan tokyo"]
    once, twice = tmp_path / "once.txt", tmp_path / "twice.txt"
    once.write_text("\n".join(pairs) + "\n")
    twice.write_text("\n".join(pairs + pairs[:2]) + "\n")
    r = cli("--home", glove_home, "query", "offsets", "--index", "glove", "--pairs", once, "--format", "json")
    assert r.code == 0 and json.loads(r.out)[0]["n_pairs"] == 5, r
    _one_error(cli("--home", glove_home, "query", "offsets", "--index", "glove", "--pairs", twice), f"{twice}:6",
               "repeats line 1")


def test_zero_and_tiny_vectors_have_no_neighbours(cli, home):
    for word in ("zero", "tiny"):
        _one_error(cli("--home", home, "query", "neighbors", "--index", "w", word), word, "zero")
    from lexprobe.core.vector_index import unit_rows

    unit, _ = unit_rows(np.full((1, 8), 1e-22, np.float32))
    assert not unit.any()  # not a direction with a self-cosine of 1.02


def test_a_word_is_a_word_even_when_a_file_has_its_name(tmp_path, monkeypatch):
    from lexprobe.cli.insert import read_words

    monkeypatch.chdir(tmp_path)
    (tmp_path / "kumquat").write_text("persimmon\n")
    assert read_words(["kumquat"]) == ["kumquat"]
    assert read_words([f"@{tmp_path / 'kumquat'}"]) == ["persimmon"]


def test_a_vocabulary_that_is_not_parquet_is_one_line(cli, tmp_path):
    np.save(tmp_path / "m.npy", np.ones((3, 2), np.float32))
    (tmp_path / "v.parquet").write_text("garbage")
    _one_error(cli("--home", tmp_path / "h", "index", "words", "--vectors", tmp_path / "m.npy", "--vocab",
                   tmp_path / "v.parquet", "--name", "m"), "v.parquet", "Parquet")


def test_out_of_memory_is_one_line(cli, monkeypatch):
    """A command that runs out of memory (a size option past what the machine holds) ends in one line and exit
    code 2, not a MemoryError traceback."""
    import lexprobe.cli.root as root

    def too_big(argv):
        raise MemoryError

    monkeypatch.setattr(root, "check_arguments", too_big)
    r = cli("index", "list")
    assert r.code == 2 and r.err.strip().splitlines() == [r.err.strip()] and "out of memory" in r.err
    assert "Traceback" not in r.err
