"""The contexts index on Ray equals the local build row for row and shard for shard (SemCor and a WSD set, a
plain-text corpus read by the tasks in byte ranges), its parts by hand, and the lazy word spans AM reads
through. One local Ray (2 CPUs) for the module."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import ray

from lexprobe.kinds.contexts import ContextIndex, build_contexts_index, word_spans
from lexprobe.scale.contexts_ray import build_contexts_index_ray, read_range, word_bounds

ORDER_DEPENDENT = ("duplicates", "over_cap", "dropped", "one_word_sentences", "engine")


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def assert_same(home, local, onray):
    a, b = ContextIndex.open(local, home=home), ContextIndex.open(onray, home=home)
    assert a.store.table().equals(b.store.table())  # ids, words, counts, windows and positions, in order
    assert [s["rows"] for s in a.store.manifest["shards"]] == [s["rows"] for s in b.store.manifest["shards"]]
    ma, mb = a.settings, b.settings
    assert {k: v for k, v in ma.items() if k not in ORDER_DEPENDENT} == \
        {k: v for k, v in mb.items() if k not in ORDER_DEPENDENT}
    assert mb["dropped"] == ma.get("duplicates", 0) + ma.get("over_cap", 0)
    assert mb.get("one_word_sentences") == ma.get("one_word_sentences")
    return a, b


@pytest.mark.parametrize("cap, window", [(3, 4), (1000, 25)])
def test_ray_build_equals_local_on_semcor_and_a_wsd_set(cluster, shared_data, home, cap, window):
    """The first 400 SemCor and 150 SemEval-2007 sentences, in blocks of 37 sentences and 3 word ranges: a
    small cap (most words over it, windows of one word in several blocks) and the authors' settings."""
    corpora = [f"wsd:{shared_data / 'semcor3.0'}", f"wsd:{shared_data / 'wsd_eval/semeval2007'}"]
    kwargs = dict(home=home, window=window, cap=cap, seed=5, max_sentences=400, shard_rows=700)
    local = build_contexts_index("local", corpora, **kwargs)
    onray = build_contexts_index_ray("onray", corpora, block_sentences=37, reducers=3, **kwargs)
    a, b = assert_same(home, "local", "onray")
    assert onray["blocks"] == 11 + 4 and onray["reducers"] == 3 and local["windows"] == onray["windows"]
    if cap == 3:
        assert a.settings["over_cap"] > 100 and len(a.store.manifest["shards"]) > 3
    assert not list(home.glob(".onray.*"))


def test_plain_text_read_in_byte_ranges_equals_local(cluster, tmp_path, home, cli):
    """A plain-text corpus (byte-order mark, blank lines, a line that is one word) read by the tasks in ranges
    of 300 bytes, lines straddling them; with a word list; through the CLI."""
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(40)] + ["The", "a", "bank"]
    lines = [" ".join(rng.choice(vocab, size=rng.integers(1, 30))) + "." for _ in range(300)]
    lines[7], lines[20] = "", "solo"
    path = tmp_path / "corpus.txt"
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    spec = f"text:{path}"
    build_contexts_index("local", spec, home=home, window=3, cap=5, seed=1, shard_rows=100)
    build_contexts_index_ray("onray", spec, home=home, window=3, cap=5, seed=1, shard_rows=100, block_bytes=300)
    _, b = assert_same(home, "local", "onray")
    assert b.settings["engine"]["blocks"] > 20 and "\ufeffw" not in "".join(b.words)
    words = ["the", "bank", "w3", "nowhere"]
    build_contexts_index("listed", spec, home=home, words=words, window=3, cap=5, seed=1)
    r = cli("--home", home, "index", "contexts", "--corpus", spec, "--name", "listed-ray", "--window", 3, "--cap", 5,
            "--seed", 1, "--words", "the", "--words", "bank", "--words", "w3", "--words", "nowhere", "--engine", "ray")
    assert r.code == 0, r
    assert "note: 1 of the words have no window" in r.out
    assert_same(home, "listed", "listed-ray")


def test_read_range_gives_each_line_to_one_range(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes("\ufeffab cd\n\nef\ngh ij kl\n".encode())  # lines start at bytes 0, 9, 10, 13
    ends = [0, 5, 9, 10, 11, 13, 14, 23]
    for cut in ends:
        assert list(read_range(str(path), 0, cut)) + list(read_range(str(path), cut, 23)) == \
            [["ab", "cd"], ["ef"], ["gh", "ij", "kl"]]
    assert list(read_range(str(path), 1, 10)) == []          # line 1 belongs to range 0; the blank line has no word
    assert list(read_range(str(path), 10, 11)) == [["ef"]]


def test_word_bounds_split_the_sample_evenly():
    assert word_bounds(list("abcdef"), 3) == [(None, "c"), ("c", "e"), ("e", None)]
    assert word_bounds(["a", "a", "b"], 4) == [(None, "a"), ("a", "b"), ("b", None)]
    assert word_bounds([], 3) == [(None, None)]


def test_select_reads_the_words_rows(cluster, shared_data, home):
    """A few words' windows read through the spans equal those rows of the whole table, in the words' order."""
    build_contexts_index_ray("sel", f"wsd:{shared_data / 'wsd_eval/semeval2007'}", home=home, window=3, cap=4,
                             shard_rows=40, block_sentences=50)
    index = ContextIndex.open("sel", home=home)
    whole = index.store.table(["word", "occurrences", "context"]).to_pylist()
    words = ["the", "no-such-word", index.words[0], "of", index.words[-1]]
    expected = [r for w in words for r in [x for x in whole if x["word"] == w][:2]]
    assert index.select(words, k=2).to_pylist() == expected and len(expected) >= 6
    assert index.select([]).num_rows == 0


def test_word_spans_across_shards_equal_a_scan():
    """A word running over a shard's end keeps one span from its first row to its last."""
    shards = [["a", "a", "b"], ["b", "b", "c"], ["c"], [], ["d", "e", "e"]]
    tables = [pa.table({"word": pa.array(s, pa.string())}) for s in shards]
    flat = [w for s in shards for w in s]
    expected = {w: (flat.index(w), len(flat) - flat[::-1].index(w)) for w in flat}
    assert word_spans(tables) == expected
