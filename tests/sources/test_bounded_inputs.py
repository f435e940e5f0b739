"""Inputs checked before they are read: non-regular files refused by name before anything opens or hashes them,
every line reader under the line limit (compressed input included) with a byte-order mark dropped, scores that
are finite numbers or refused with file and line, correlations of too few pairs in one line, one rule for a word
entering an index, and fastText n-gram sums in time linear in the words' lengths."""

from __future__ import annotations

import gzip
import json
import os
import struct
from pathlib import Path

import numpy as np
import pytest

import crash_helpers as ch
from lexprobe.core.errors import InputError, LexprobeError

GUARD = 60  # seconds: a reader still running after this is stuck (on a FIFO, or in quadratic work)



def _one_line(r, name: str) -> str:
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and name in lines[0], r
    return lines[0]


# ------------------------------------------------------------------ files checked before they are opened


@pytest.mark.parametrize("odd", ["fifo", "zero"])
@pytest.mark.parametrize("kind,valid", [
    ("streusle", ("a.conllulex", "")),
    ("wsd", ("x.data.xml", "<corpus/>")),
])
def test_a_fifo_or_a_link_to_a_device_in_a_corpus_folder_is_refused_by_name(tmp_path, kind, valid, odd):
    from lexprobe.sources.datasets.corpora import provenance

    folder = tmp_path / "c"
    folder.mkdir()
    (folder / valid[0]).write_text(valid[1])
    (folder / "x.gold.key.txt").write_text("d.s.t a%1:00:00::\n")
    if odd == "fifo":
        os.mkfifo(folder / "odd")
    else:
        (folder / "odd").symlink_to("/dev/zero")
    with ch.time_limit(GUARD), pytest.raises(InputError, match=r"c/odd: a (FIFO|character device), not a regular file"):
        provenance(f"{kind}:{folder}")


@pytest.mark.parametrize("kind", ["text", "jsonl"])
def test_a_one_file_corpus_given_as_a_folder_is_refused_before_anything_is_hashed(cli, tmp_path, kind,
                                                                                   monkeypatch):
    import lexprobe.sources.datahome as datahome

    def no_hashing(*a, **k):
        raise AssertionError("hashed before the spec was checked")

    monkeypatch.setattr(datahome, "file_sha256", no_hashing)
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "a.txt").write_text("some words here\n")
    line = _one_line(cli("--home", tmp_path / "home", "index", "contexts", "--corpus", f"{kind}:{tmp_path / 'big'}",
                         "--name", "c"), "big")
    assert "one file, not a folder" in line


def test_a_fifo_given_as_a_corpus_is_refused(cli, tmp_path):
    os.mkfifo(tmp_path / "c.txt")
    with ch.time_limit(GUARD):
        line = _one_line(cli("--home", tmp_path / "home", "index", "contexts", "--corpus", f"text:{tmp_path / 'c.txt'}",
                             "--name", "c"), "c.txt")
    assert "FIFO" in line


def test_a_tree_past_its_file_or_byte_bound_is_refused_before_hashing(tmp_path, monkeypatch):
    from lexprobe.sources.datahome import tree_checksum

    for i in range(5):
        (tmp_path / f"f{i}").write_bytes(b"x" * 100)
    assert tree_checksum(tmp_path)["files"] == 5
    monkeypatch.setenv("LEXPROBE_MAX_MEMBERS", "4")
    with pytest.raises(InputError, match=r"more than 4 files in this folder \(LEXPROBE_MAX_MEMBERS"):
        tree_checksum(tmp_path)
    monkeypatch.setenv("LEXPROBE_MAX_MEMBERS", "10")
    monkeypatch.setenv("LEXPROBE_MAX_TREE_BYTES", "450")
    with pytest.raises(InputError, match=r"more than 450 bytes in this folder \(LEXPROBE_MAX_TREE_BYTES"):
        tree_checksum(tmp_path)


# ------------------------------------------------------------------------------- line limit and BOM


def _readers():
    from lexprobe.sources.datasets.bats import read_relation_file
    from lexprobe.sources.datasets.google import read_questions
    from lexprobe.sources.datasets.json_lines import json_objects
    from lexprobe.sources.datasets.plain_text import read_plain_text
    from lexprobe.sources.datasets.word_lines import word_lines
    from lexprobe.sources.datasets.word_pairs import read_word_pairs
    from lexprobe.sources.datasets.wsd import read_gold_keys

    # (file name, a valid first line, a reader, the first word it reads)
    return {
        "corpus.txt": ("cat sat\n", lambda p: read_plain_text(p).sentences.column("words")[0].as_py()[0]),
        "pairs.txt": ("cat\tdog\t7.5\n", lambda p: read_word_pairs(p).column("word1")[0].as_py()),
        "questions.txt": (": s\nA B C D\n", lambda p: read_questions(p)[0].section),
        "relation.txt": ("cat\tcats\n", lambda p: read_relation_file(p).pairs[0][0]),
        "rows.jsonl": ('{"w": "cat"}\n', lambda p: next(json_objects(p))[1]["w"]),
        "triples.txt": ("cat dog cow\n", lambda p: word_lines(p, 3, "3 words", "triples")[0][0]),
        "gold.key.txt": ("cat k1\n", lambda p: next(iter(read_gold_keys(p)))),
    }


@pytest.mark.parametrize("name", sorted(_readers()))
def test_every_line_reader_drops_a_byte_order_mark(tmp_path, name):
    first, read = _readers()[name]
    path = tmp_path / name
    path.write_text("\ufeff" + first, encoding="utf-8")
    assert read(path) in ("cat", "s")


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("name", sorted(_readers()))
def test_every_line_reader_refuses_a_line_past_the_limit(tmp_path, monkeypatch, name, compress):
    first, read = _readers()[name]
    monkeypatch.setenv("LEXPROBE_MAX_LINE", "1000")
    data = b"x" * 5000 + b"\n" + first.encode()
    path = tmp_path / (name + (".gz" if compress else ""))
    path.write_bytes(gzip.compress(data) if compress else data)
    with pytest.raises(InputError, match=rf"{path.name}:\d+: line longer than 1000 bytes \(LEXPROBE_MAX_LINE"):
        read(path)


def test_a_small_compressed_corpus_of_one_huge_line_is_refused_not_inflated(tmp_path):
    """300 KB of gzip holding one 300 MB line: refused at the first megabyte (the line limit), not read whole."""
    from lexprobe.sources.datasets.plain_text import read_plain_text

    path = tmp_path / "bomb.txt.gz"
    with gzip.open(path, "wb", compresslevel=9) as f:
        for _ in range(300):
            f.write(b"a" * (1 << 20))
    assert path.stat().st_size < 400_000
    with ch.time_limit(GUARD), pytest.raises(InputError, match=r"bomb.txt.gz:1: line longer than 1048576 bytes"):
        read_plain_text(path)


@pytest.mark.parametrize("name", sorted(_readers()))
def test_every_line_reader_refuses_a_fifo(tmp_path, name):
    _, read = _readers()[name]
    os.mkfifo(tmp_path / name)
    with ch.time_limit(GUARD), pytest.raises(InputError, match=rf"{name}: a FIFO, not a regular file"):
        read(tmp_path / name)


# --------------------------------------------------------------------------------- finite numbers


@pytest.mark.parametrize("score", ["nan", "inf", "-inf", "1e999", "NaN"])
def test_a_score_that_is_not_a_finite_number_is_refused_with_file_and_line(tmp_path, score):
    from lexprobe.sources.datasets.word_pairs import read_word_pairs

    path = tmp_path / "pairs.tsv"
    path.write_text(f"a\tb\t1\nc\td\t{score}\ne\tf\t3\n")
    with pytest.raises(InputError, match=rf"pairs.tsv:2: score '{score}' is not a finite number"):
        read_word_pairs(path)


def test_a_correlation_of_one_pair_is_one_line(cli, tmp_path):
    home = ch.words_home(tmp_path, 20, 4, 0)
    (tmp_path / "pairs.tsv").write_text("word0\tword2\t5\nword0\tnothere\t3\n")
    line = _one_line(cli("--home", home, "query", "similarity", "--index", "w", "--pairs", tmp_path / "pairs.tsv"),
                     "1 pair scored")
    assert "too few for a correlation (at least 2)" in line
    (tmp_path / "pairs.tsv").write_text("word0\tword2\t5\nword0\tword4\t3\nword2\tword4\t1\n")
    assert cli("--home", home, "query", "similarity", "--index", "w", "--pairs", tmp_path / "pairs.tsv").code == 0


def test_correlation_input_rules_by_hand():
    from lexprobe.core.intervals import check_correlation_input, correlation_bootstrap, paired_bootstrap

    check_correlation_input([1, 2], [2, 1])  # two pairs: scipy's (and gensim's) least
    for x, y, problem in (([1], [2], "1 pair scored"), ([], [], "0 pairs scored"),
                          ([1, 2, float("nan")], [1, 2, 3], "not a finite number"),
                          ([1, 2, 3], [1, float("inf"), 3], "not a finite number"), ([1, 2], [1], "not paired")):
        with pytest.raises(LexprobeError, match=problem):
            correlation_bootstrap(x, y, resamples=10)
    with pytest.raises(LexprobeError, match="no paired observations"):
        paired_bootstrap([], [])


# --------------------------------------------------------------------------- words entering an index


@pytest.mark.parametrize("word,problem", [("", "empty"), ("a b", "whitespace"), ("a\tb", "whitespace"),
                                          ("a\x00b", "control"), ("a\x85", "control"), ("a\u2028b", "whitespace"),
                                          ("x" * 100_000, "longer than 4096 bytes"),
                                          ("é" * 2049, "longer than 4096 bytes")])
def test_a_word_breaking_the_rule_is_refused_at_insert_and_the_index_is_unchanged(tmp_path, word, problem):
    from lexprobe.kinds.words import insert_words

    home = ch.words_home(tmp_path, 20, 4, 0)
    before = ch.fingerprint(home, "w")
    with pytest.raises(LexprobeError) as info:
        insert_words(home, "w", ["fine", word], np.ones((2, 4), np.float32), origin="am", settings={})
    message = str(info.value)
    assert problem in message and "at most 4096 bytes" in message and "\n" not in message and len(message) < 300
    assert ch.fingerprint(home, "w") == before
    insert_words(home, "w", ["fine", "é" * 2048], np.ones((2, 4), np.float32), origin="am", settings={})


def test_a_vector_file_s_words_breaking_the_rule_are_dropped_counted_and_named(cli, tmp_path):
    (tmp_path / "v.txt").write_bytes(b"good 1 2\nbad\x01w 3 4\nok 5 6\n" + b"y" * 5000 + b" 7 8\n")
    r = cli("--home", tmp_path / "home", "index", "words", "--vectors", tmp_path / "v.txt", "--name", "t")
    assert r.code == 0, r
    assert "2 words x 2 dims" in r.out and "2 words refused (first 'bad\\x01w': holds whitespace" in r.out
    words, _ = ch.word_state(tmp_path / "home", "t")
    assert words == ["good", "ok"]
    assert cli("--home", tmp_path / "home", "index", "export", "t", "--out", tmp_path / "t.txt").code == 0


def test_a_bom_in_an_at_file_word_list_is_not_part_of_the_first_word(tmp_path):
    from lexprobe.cli.insert import read_words

    (tmp_path / "words.txt").write_text("\ufeffcat\ndog\n", encoding="utf-8")
    assert read_words([f"@{tmp_path / 'words.txt'}"]) == ["cat", "dog"]


# ------------------------------------------------------------------------ fastText n-grams: linear work


def _fasttext_bin(path: Path, words: list[str], dim: int = 4, bucket: int = 1000, minn: int = 3, maxn: int = 6):
    """A fastText .bin (the layout since 2017) of ``words`` with random input rows."""
    rng = np.random.default_rng(0)
    head = (793712314).to_bytes(4, "little") + struct.pack("<13i", 12, dim, 5, 5, 1, 5, 1, 2, 1, bucket, minn, maxn,
                                                           100)
    head += struct.pack("<d", 1e-4) + struct.pack("<3iqq", len(words), len(words), 0, 10 * len(words), -1)
    body = b"".join(w.encode() + b"\0" + struct.pack("<qb", 1, 0) for w in words)
    matrix = rng.normal(size=(len(words) + bucket, dim)).astype("<f4")
    path.write_bytes(head + body + b"\0" + struct.pack("<2q", *matrix.shape) + matrix.tobytes())
    return matrix


def test_a_fasttext_bin_of_long_words_reads_in_linear_time_and_sums_as_gensim_hashes(tmp_path):
    """120 words of 4,000 letters (a 500 KB file): the n-gram sums took minutes when each n-gram rank was a pass
    over all n-grams; each word's vector is its row and its n-grams' rows (gensim's hashes), averaged."""
    from gensim.models.fasttext import ft_ngram_hashes

    from lexprobe.sources.vectors import read_fasttext_bin

    words = [f"{i:03d}" + "abcdefghij"[i % 10] * 3997 for i in range(120)]
    matrix = _fasttext_bin(tmp_path / "long.bin", words)
    with ch.time_limit(GUARD):
        model = read_fasttext_bin(tmp_path / "long.bin")
        vectors = model.word_vectors()
    for i in (0, 57, 119):
        hashes = ft_ngram_hashes(words[i], 3, 6, 1000)
        expected = (matrix[i].astype(np.float64) + matrix[120 + np.array(hashes)].sum(axis=0)) / (len(hashes) + 1)
        np.testing.assert_allclose(vectors[i], expected, rtol=1e-4, atol=1e-5)
    unseen = "z" * 3000
    hashes = ft_ngram_hashes(unseen, 3, 6, 1000)
    np.testing.assert_allclose(model.vector(unseen), matrix[120 + np.array(hashes)].mean(axis=0), rtol=1e-4,
                               atol=1e-5)
    assert model.vector("z" * 5000) is None  # longer than any word an index takes: no n-gram vector
