"""The contexts index: windows around each word, deduplicated, capped by a seeded sample, built atomically and
verified like every index."""

from __future__ import annotations

import gzip
import random

import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.kinds import open_index
from lexprobe.kinds.contexts import ContextIndex, WindowSampler, build_contexts_index


def write_text(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"text:{path}"


def distinct_lines(n):
    return [f"w{i} saw the Bank near x{i} ." for i in range(n)]


def test_windows_keep_the_word_its_position_and_the_window_size(tmp_path, home):
    spec = write_text(tmp_path / "c.txt", ["a b c d e Bank f g h i j"])
    build_contexts_index("c", spec, home=home, window=2)
    index = open_index("c", home=home)
    assert isinstance(index, ContextIndex) and index.words[:3] == ["a", "b", "bank"]
    assert index.windows("bank") == [["d", "e", "bank", "f", "g"]] and index.positions("bank") == [2]
    assert index.windows("a") == [["a", "b", "c"]] and index.positions("a") == [0]
    assert index.windows("j") == [["h", "i", "j"]] and index.positions("j") == [2]
    assert index.store.dim == 5 and index.windows("absent") == [] and index.occurrences("absent") == 0


def test_duplicates_count_once_and_every_occurrence_is_counted(tmp_path, home):
    spec = write_text(tmp_path / "c.txt", ["the bank rose ."] * 5 + ["a bank fell ."] + ["bank"])
    summary = build_contexts_index("c", spec, home=home)
    index = open_index("c", home=home)
    assert sorted(map(tuple, index.windows("bank"))) == [("a", "bank", "fell", "."), ("the", "bank", "rose", ".")]
    assert index.occurrences("bank") == 7  # the one-word sentence counts, gives no window; '.' is no word
    assert summary["duplicates"] == 4 * 3 and summary["one_word_sentences"] == 1
    assert "." not in index and "the" in index  # punctuation gets no windows without a vocabulary


def test_the_cap_keeps_a_seeded_sample_independent_of_corpus_order(tmp_path, home):
    lines = distinct_lines(50)
    build_contexts_index("a", write_text(tmp_path / "a.txt", lines), home=home, cap=5, seed=1)
    shuffled = lines[:]
    random.Random(0).shuffle(shuffled)
    build_contexts_index("b", write_text(tmp_path / "b.txt", shuffled), home=home, cap=5, seed=1)
    build_contexts_index("c", write_text(tmp_path / "c.txt", lines), home=home, cap=5, seed=2)
    a, b, c = (open_index(n, home=home) for n in "abc")
    assert len(a.windows("bank")) == 5 and a.occurrences("bank") == 50
    assert a.windows("bank") == b.windows("bank")  # same seed: same windows in the same order
    assert sorted(map(tuple, a.windows("bank"))) != sorted(map(tuple, c.windows("bank")))
    assert a.windows("bank", 2) == a.windows("bank")[:2]


def test_the_sample_is_the_bottom_k_of_the_seeded_priorities():
    """The kept windows are exactly the cap smallest priorities among the distinct windows, in that order."""
    sampler = WindowSampler(window=3, cap=4, seed=7)
    sentences = [line.lower().split() for line in distinct_lines(30)] * 2
    for s in sentences:
        sampler.add(s)
    distinct = {tuple(s) for s in sentences}
    expected = sorted(distinct, key=sampler.priority)[:4]
    (word, count, kept, positions), = [r for r in sampler.rows() if r[0] == "bank"]
    assert count == 60 and kept == expected and positions == [3] * 4


def test_a_vocabulary_lowercases_and_reports_missing_words(tmp_path, home):
    spec = write_text(tmp_path / "c.txt", ["The Bank rose", "a river"])
    summary = build_contexts_index("c", spec, home=home, words=["BANK", "river", "absent"])
    index = open_index("c", home=home)
    assert index.words == ["bank", "river"] and summary["words_without_windows"] == 1
    assert index.settings["lowercase"] is True and index.settings["vocabulary"] == 3
    build_contexts_index("k", spec, home=home, lowercase=False)
    assert "Bank" in open_index("k", home=home)


def test_compressed_text_streams_and_max_sentences_limits(tmp_path, home):
    path = tmp_path / "c.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(distinct_lines(20)) + "\n")
    summary = build_contexts_index("c", f"text:{path}", home=home, max_sentences=3)
    assert summary["sentences"] == 3 and open_index("c", home=home).occurrences("bank") == 3
    assert summary["tokens"] == 3 * 7 and summary["tokens_per_s"] > 0


def test_bad_arguments_and_an_existing_name(tmp_path, home):
    spec = write_text(tmp_path / "c.txt", ["a b"])
    build_contexts_index("c", spec, home=home)
    with pytest.raises(LexprobeError, match="exists"):
        build_contexts_index("c", spec, home=home)
    with pytest.raises(LexprobeError, match="at least 1"):
        build_contexts_index("d", spec, home=home, cap=0)
    with pytest.raises(LexprobeError, match="no context window"):
        build_contexts_index("d", spec, home=home, words=["zebra"])
    with pytest.raises(LexprobeError, match="KIND:PATH"):
        build_contexts_index("d", "nope:x", home=home)
    assert [p.name for p in home.iterdir() if not p.name.startswith(".")] == ["c"]


def test_cli_builds_lists_verifies_and_queries_semcor(shared_data, cli, home):
    semcor = f"wsd:{shared_data / 'semcor3.0'}"
    result = cli("--home", home, "index", "contexts", "--corpus", semcor, "--corpus", "streusle", "--name", "ctx",
                 "--max-sentences", "150", "--window", "5", "--cap", "3", "--seed", "4")
    assert result.code == 0, result
    assert "ctx" in result.out and "tokens/s" in result.out
    listed = cli("--home", home, "index", "list", "--format", "json")
    assert '"kind": "contexts"' in listed.out
    assert cli("--home", home, "index", "verify", "ctx").out.startswith("ok: ctx (contexts, ")
    sql = cli("--home", home, "sql", "select max(len(c)) as w, max(n) as n from "
              "(select word, count(*) as n, max(context) as c from ctx group by word)", "--format", "csv")
    assert sql.code == 0 and sql.out.splitlines()[1] == "11,3"
    index = open_index("ctx", home=home)
    assert len(index.settings["corpora"]) == 2 and index.settings["corpora"][0]["corpus_sha256"]
    (index.store.path / "shards" / "part-00000.arrow").write_bytes(b"damaged")
    assert cli("--home", home, "index", "verify", "ctx").code == 2


def test_priority_is_blake2b_keyed_by_the_seed_as_eight_little_endian_bytes():
    """Pins the documented priority (a keyed 64-bit BLAKE2b of the window's words joined by U+001F, key: the seed
    as 8 little-endian bytes), computed here independently: a seed chooses the same windows in every version."""
    import hashlib

    window = ("the", "river", "bank", "was", "muddy")
    for seed in (0, 7, 2**40 + 3):
        digest = hashlib.blake2b("\x1f".join(window).encode(), digest_size=8, key=seed.to_bytes(8, "little"))
        assert WindowSampler(seed=seed).priority(window) == int.from_bytes(digest.digest(), "little")


def test_the_smallest_window_and_cap_are_one():
    """Pins the settings' lower bound: window 1 and cap 1 are allowed (one neighbour a side, the single window of
    smallest priority kept), 0 for either is refused."""
    sampler = WindowSampler(window=1, cap=1, seed=3)
    sentences = [["a", "bank", "b"], ["c", "bank", "d"], ["e", "bank"]]
    for s in sentences:
        sampler.add(s)
    (word, count, kept, positions), = [r for r in sampler.rows() if r[0] == "bank"]
    assert count == 3 and kept == [min(map(tuple, sentences), key=sampler.priority)] and len(positions) == 1
    for bad in ({"window": 0}, {"cap": 0}):
        with pytest.raises(LexprobeError, match="window and cap must be at least 1"):
            WindowSampler(**bad)
