"""FAISS word index: neighbours equal brute-force numpy; exclusion is exact; restriction; ANN index types."""

import json

import numpy as np
import pytest

from lexprobe.core import vector_index as vindex
from lexprobe.kinds.words import WordIndex
from topk_ties import abs_products, assert_topk_agrees, dot_error


def _brute(unit, q, k, exclude=()):
    """The top k ids and scores of a float64 scan (ties by id), every score (-inf: excluded) and its float32
    rounding bound (tests/topk_ties.py)."""
    scores = unit.astype(np.float64) @ np.asarray(q, np.float64)
    scores[list(exclude)] = -np.inf
    order = np.argsort(-scores, kind="stable")[:k]
    return order, scores[order], scores, dot_error(unit.shape[1], abs_products(np.asarray(q)[None], unit)[0])


def test_neighbors_equal_brute_force_on_glove(glove_home):
    index = WordIndex.open("glove", home=glove_home)
    unit = index.unit
    rng = np.random.default_rng(1)
    ids = rng.choice(len(unit), 50, replace=False)
    D, I = index.vectors.search(unit[ids], 10, exclude=ids[:, None])
    for row, qid in enumerate(ids):
        order, scores, every, err = _brute(unit, unit[qid], 10, exclude=[qid])
        np.testing.assert_allclose(D[row], scores, rtol=1e-5, atol=1e-5)
        # the same ids in the same order, except where the scores lie within float32 rounding
        assert_topk_agrees(I[row], every, err, scores=D[row], what=f"query {qid}")


def test_exclusion_never_returns_excluded_ids():
    rng = np.random.default_rng(2)
    unit, _ = vindex.unit_rows(rng.standard_normal((500, 16)).astype(np.float32))
    vi = vindex.VectorIndex(vindex.build(unit, np.arange(500)))
    queries = unit[:40]
    # exclude each query's own true top-5 plus random ids: the answers must skip all of them
    _, top = vi.search(queries, 5)
    exclude = [list(t) + list(rng.choice(500, 7)) for t in top]
    D, I = vi.search(queries, 10, exclude=exclude)
    for row, ex in enumerate(exclude):
        assert not set(I[row]) & set(ex)
        _, _, every, err = _brute(unit, queries[row], 10, exclude=ex)
        assert_topk_agrees(I[row], every, err, scores=D[row], what=f"query {row}")


def test_restriction_to_most_frequent_and_to_subset():
    rng = np.random.default_rng(3)
    unit, _ = vindex.unit_rows(rng.standard_normal((300, 8)).astype(np.float32))
    vi = vindex.VectorIndex(vindex.build(unit, np.arange(300)))
    q = rng.standard_normal((5, 8)).astype(np.float32)
    _, I = vi.search(q, 4, restrict=50)
    assert (I < 50).all()
    for row in range(5):
        _, _, every, err = _brute(unit[:50], q[row], 4)
        assert_topk_agrees(I[row], every, err, what=f"query {row}")
    subset = rng.choice(300, 30, replace=False)
    _, I = vi.search(q, 4, restrict=subset, exclude=[[int(subset[0])]] * 5)
    assert np.isin(I, subset).all() and (I != subset[0]).all()


def test_fewer_candidates_than_k_pads_with_minus_one():
    unit, _ = vindex.unit_rows(np.eye(3, dtype=np.float32))
    vi = vindex.VectorIndex(vindex.build(unit, np.arange(3)))
    D, I = vi.search(unit[:1], 5, exclude=[[0]])
    assert I[0].tolist()[:2] in ([1, 2], [2, 1]) and I[0].tolist()[2:] == [-1, -1, -1]
    assert np.isneginf(D[0, 2:]).all()


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_ann_index_types_find_most_true_neighbours(kind):
    rng = np.random.default_rng(4)
    unit, _ = vindex.unit_rows(rng.standard_normal((3000, 16)).astype(np.float32))
    params = vindex.IndexParams(kind, nprobe=32)
    vi = vindex.VectorIndex(vindex.build(unit, np.arange(3000), params), params)
    q = unit[:100]
    _, I = vi.search(q, 10, exclude=np.arange(100)[:, None])
    exact = np.stack([_brute(unit, unit[i], 10, exclude=[i])[0] for i in range(100)])
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(I, exact)])
    assert recall > 0.8
    _, I = vi.search(q, 5, restrict=1000)
    assert ((I < 1000) | (I == -1)).all()


def test_cli_neighbors_king_lists_prince_and_queen(cli, glove_home):
    r = cli("--home", glove_home, "query", "neighbors", "--index", "glove", "king", "-k", "5", "--format", "json")
    rows = json.loads(r.out)
    assert [set(x) for x in rows] == [{"query", "rank", "word", "score"}] * 5
    assert {"prince", "queen"} <= {x["word"] for x in rows}
    r = cli("--home", glove_home, "query", "neighbors", "--index", "glove", "king", "-k", "3", "--format", "csv")
    assert r.out.splitlines()[0] == "query,rank,word,score" and len(r.out.splitlines()) == 4


def test_cli_build_with_hnsw_and_verify(tmp_path, cli):
    home = tmp_path / "h"
    r = cli("--home", home, "index", "words", "--vectors", "glove-6b-50d", "--name", "g", "--limit", "20000",
            "--index-type", "hnsw", "--hnsw-m", "16", "--shard-rows", "5000")
    assert r.code == 0, r
    assert cli("--home", home, "index", "verify", "g").code == 0
    info = json.loads(cli("--home", home, "index", "info", "g").out)
    assert info["meta"]["index"]["index_type"] == "hnsw" and len(info["shards"]) == 4 and info["count"] == 20000
    r = cli("--home", home, "query", "neighbors", "--index", "g", "france", "-k", "5", "--format", "json")
    assert "spain" in {x["word"] for x in json.loads(r.out)} or "belgium" in {x["word"] for x in json.loads(r.out)}


def test_ann_curve_recall_rises_with_the_search_setting(tmp_path):
    from lexprobe.suite.bench_ann_curve import choose_default, recall_at_k, record_ann_curve, run_ann_curve

    assert recall_at_k(np.array([[1, 2, -1]]), np.array([[2, 3, 1]])) == pytest.approx(2 / 3)
    rng = np.random.default_rng(5)
    unit, _ = vindex.unit_rows(rng.standard_normal((4000, 12)).astype(np.float32))
    result = run_ann_curve(unit, n_queries=200, k=10, ef_search=(16, 64, 256), nprobe=(1, 8, 64),
                           params=vindex.IndexParams(hnsw_m=8, ef_construction=40), log=lambda s: None)
    by = {(c.index_type, c.via): c for c in result["curves"]}
    for t in ("hnsw", "ivf"):
        ours, raw = by[t, "lexprobe"], by[t, "faiss"]
        assert ours.recall[-1] > ours.recall[0] and ours.recall[-1] >= 0.95
        np.testing.assert_allclose(ours.recall, raw.recall, atol=0.02)  # the same searches, two ways
        assert all(q > 0 for q in ours.qps + raw.qps)
        assert result["defaults"][t] == choose_default(ours) and result["defaults"][t] in ours.values
        ok = [v for v, r in zip(ours.values, ours.recall) if r >= 0.95]
        assert result["defaults"][t] in ok
    md = record_ann_curve(result, str(tmp_path / "curve.md"), str(tmp_path / "curve.png"))
    assert (tmp_path / "curve.png").stat().st_size > 0 and "ef_search=256" in md and "nprobe=64" in md


def test_known_and_subword_vectors_mixed_in_one_lookup_equal_gensims():
    """Pins the mixed lookup of a fastText model loaded in memory (load_vectors keeps its n-grams): in one
    ``index[...]`` call, known words (row 0 among them) get their stored rows and an unseen word its character
    n-gram vector, each equal to gensim's."""
    from pathlib import Path

    import gensim
    from gensim.models.fasttext import load_facebook_vectors

    from lexprobe.kinds.words import load_vectors

    path = Path(gensim.__file__).parent / "test" / "test_data" / "lee_fasttext.bin"
    index, kv = load_vectors(str(path)), load_facebook_vectors(str(path))
    words = [kv.index_to_key[0], "qwertyuiop", kv.index_to_key[5]]
    np.testing.assert_array_equal(index[words], np.stack([kv[w] for w in words]))


def test_zero_vectors_and_empty_queries_are_clear_errors_only_when_they_are(tmp_path):
    """Pins the per-word zero-vector check of neighbors (a word with some zero coordinates is fine, a zero
    vector is the error) and most_similar's input check (negative words alone are a query; none is an error);
    evaluate_word_pairs' default restrict_vocab is gensim's."""
    import inspect

    from gensim.models import KeyedVectors

    from lexprobe.core.errors import LexprobeError
    from lexprobe.kinds.words import build_word_index

    (tmp_path / "v.txt").write_text("a 1 0\nb 0 1\nc 1 1\nz 0 0\n")
    build_word_index("small", str(tmp_path / "v.txt"), home=tmp_path)
    index = WordIndex.open("small", home=tmp_path)
    assert index.neighbors("a", k=1).column("word").to_pylist() == ["c"]
    with pytest.raises(LexprobeError, match="word 'z' has a zero vector"):
        index.neighbors(["a", "z"], k=1)
    assert [w for w, _ in index.most_similar(negative=["a"], topn=1)] == ["b"]
    with pytest.raises(LexprobeError, match="give at least one word"):
        index.most_similar()
    default = lambda f: inspect.signature(f).parameters["restrict_vocab"].default
    assert default(WordIndex.evaluate_word_pairs) == default(KeyedVectors.evaluate_word_pairs) == 300000
