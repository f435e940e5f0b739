"""The exact top-k kernel (core/topk.py) against brute force (every score in float64, a full sort by score
then id): the pruned path, the full scan, ties, exclusions, restrictions, k above the candidate count, zero
vectors; and the batch API ``WordIndex.neighbors`` on the real GloVe index."""

import numpy as np
import pyarrow as pa
import pytest

from lexprobe.core import int8_scan, topk
from lexprobe.core import vector_index as vindex
from lexprobe.kinds.words import WordIndex
from topk_ties import abs_products, assert_topk_agrees, dot_error

N = 40_000  # above the kernel's small-problem cut (32,768 rows), so the pruned path runs


def brute(Q, V, k, exclude=None, limit=None):
    """(scores, ids) by a full float64 sort: score descending, then id; and every score ``S`` (-inf where not
    allowed) with its float32 rounding bound ``E`` (tests/topk_ties.py)."""
    n = len(V) if limit is None else min(limit, len(V))
    S = Q.astype(np.float64) @ V[:n].astype(np.float64).T
    D = np.full((len(Q), k), -np.inf)
    I = np.full((len(Q), k), -1)
    for r in range(len(Q)):
        allowed = np.ones(n, bool)
        if exclude is not None:
            ex = np.asarray(exclude[r])
            allowed[ex[(ex >= 0) & (ex < n)]] = False
        S[r, ~allowed] = -np.inf
        cols = np.flatnonzero(allowed)
        order = cols[np.lexsort((cols, -S[r, cols]))][:k]
        D[r, : len(order)], I[r, : len(order)] = S[r, order], order
    return D, I, S, dot_error(Q.shape[1], abs_products(Q, V[:n]))


def assert_same(D, I, Dr, Ir, S, E, atol=2e-6):
    """Same scores to float rounding and the same ids, except for swaps and a cut between words whose reference
    scores lie within float32 rounding of each other (tests/topk_ties.py)."""
    np.testing.assert_array_equal(I >= 0, Ir >= 0)
    np.testing.assert_allclose(D[I >= 0], Dr[Ir >= 0], atol=atol)
    assert_topk_agrees(I, S, E, scores=D)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    V, _ = vindex.unit_rows(rng.standard_normal((N, 16)).astype(np.float32))
    Q = np.concatenate([V[rng.choice(N, 60, replace=False)],  # words of the set
                        rng.standard_normal((20, 16)).astype(np.float32) * 3])  # other points, not unit
    return V, Q


@pytest.mark.parametrize("vnni", [True, False] if int8_scan._has_vnni() else [False])
@pytest.mark.parametrize("k", [1, 10, 100])
def test_pruned_equals_brute_force_with_exclusions(data, k, vnni, monkeypatch):
    monkeypatch.setattr(int8_scan, "_has_vnni", lambda: vnni)
    V, Q = data
    rng = np.random.default_rng(k)
    exclude = rng.integers(-1, N, size=(len(Q), 5))
    exclude[:, 0] = brute(Q, V, 1)[1][:, 0]  # each query's own best is excluded
    searcher = topk.TopK(V)
    D, I = searcher.search(Q, k, exclude=exclude)
    assert_same(D, I, *brute(Q, V, k, exclude))
    assert not (I[:, :, None] == exclude[:, None, :]).any()


def test_full_scan_equals_pruned(data, monkeypatch):
    V, Q = data
    D2, I2 = topk.exact_topk(Q, V, 10)
    with monkeypatch.context() as m:  # ordinary queries never fall back to the full scan
        m.setattr(topk, "exact_topk", None)
        D1, I1 = topk.TopK(V).search(Q, 10)
    np.testing.assert_array_equal(I1, I2)
    np.testing.assert_allclose(D1, D2, atol=1e-6)


def test_ties_are_broken_by_id_across_the_cut():
    rng = np.random.default_rng(1)
    V, _ = vindex.unit_rows(rng.standard_normal((N, 8)).astype(np.float32))
    twins = rng.choice(N, 300, replace=False)
    V[twins] = V[twins[0]]  # 300 equal rows: every query ties on all of them
    q = V[twins[:1]] * 0.9 + V[:8] * 0.1  # 8 queries: the threaded kernels; one: the serial ones
    for k in (1, 7, 299, 400):
        for rows in (q, q[:1]):
            D, I = topk.TopK(V).search(rows, k)
            assert_same(D, I, *brute(rows, V, k))
            for r in range(len(rows)):  # equal rows score equal in float32 too: the twins come in id order
                tw = I[r][np.isin(I[r], twins)]
                assert tw.tolist() == np.sort(twins)[: len(tw)].tolist(), (k, r)
            np.testing.assert_array_equal(I[0, : min(k, 300)], np.sort(twins)[: min(k, 300)])


def test_zero_vectors_score_zero_in_id_order():
    rng = np.random.default_rng(2)
    V, _ = vindex.unit_rows(rng.standard_normal((N, 8)).astype(np.float32))
    V[[5, 17, 30000]] = 0.0
    queries = np.concatenate([np.zeros((1, 8), np.float32), V[100:107]])  # a batch: the pruned path
    for rows in (queries, queries[:1]):
        D, I = topk.TopK(V).search(rows, 6, exclude=np.array([[1, -1]] * len(rows)))
        assert I[0].tolist() == [0, 2, 3, 4, 5, 6] and (D[0] == 0).all()
        assert_same(D, I, *brute(rows, V, 6, np.array([[1, -1]] * len(rows))))
    # a query whose best scores are negative still meets the zero rows in id order
    q = -np.ones((8, 8), np.float32) + np.eye(8, dtype=np.float32) * 0.01
    D, I = topk.TopK(V).search(q, 200)
    assert_same(D, I, *brute(q, V, 200))


def test_k_above_the_candidates_and_restriction_to_a_prefix(data):
    V, Q = data
    searcher = topk.TopK(V)
    D, I = searcher.search(Q[:5], 50, limit=30, exclude=np.array([[0, 1]] * 5))
    assert ((I >= 0).sum(axis=1) == 28).all() and (I[:, 28:] == -1).all() and np.isneginf(D[:, 28:]).all()
    assert_same(D, I, *brute(Q[:5], V, 50, np.array([[0, 1]] * 5), limit=30))
    D, I = searcher.search(Q, 20, limit=35_000)
    assert (I < 35_000).all()
    assert_same(D, I, *brute(Q, V, 20, limit=35_000))


def test_ids_map_rows_and_must_ascend(data):
    V, Q = data
    ids = np.arange(N) * 3 + 7
    D, I = topk.TopK(V, ids).search(Q[:10], 5)
    assert_same(D, (I - 7) // 3, *brute(Q[:10], V, 5))
    with pytest.raises(ValueError):
        topk.TopK(V[:3], np.array([2, 1, 0]))


def test_topk_rows_ties_across_the_cut():
    R = np.array([[0.5, 0.9, 0.5, 0.5, -np.inf, 0.9], [1, 1, 1, 1, 1, 1.0]], dtype=np.float32)
    cols, vals = topk.topk_rows(R, 3)
    assert cols.tolist() == [[1, 5, 0], [0, 1, 2]]
    assert vals.tolist() == [[0.9, 0.9, 0.5], [1, 1, 1]] or np.allclose(vals, [[0.9, 0.9, 0.5], [1, 1, 1]])
    assert topk.topk_rows(R, 1)[0].tolist() == [[1], [0]]
    wide = np.zeros((2, 50_000), np.float32)  # argpartition alone picks equal scores from anywhere
    wide[1, 40_000:] = 1.0
    assert topk.topk_rows(wide, 5)[0].tolist() == [[0, 1, 2, 3, 4], list(range(40_000, 40_005))]


def test_vector_index_search_uses_the_kernel_with_id_restriction():
    rng = np.random.default_rng(3)
    unit, _ = vindex.unit_rows(rng.standard_normal((N, 12)).astype(np.float32))
    vi = vindex.VectorIndex(vindex.build(unit, np.arange(N)))
    subset = np.sort(rng.choice(N, 5000, replace=False))
    q = unit[subset[:8]]
    D, I = vi.search(q, 10, restrict=subset, exclude=subset[:8, None])
    pos = np.where(np.isin(I, subset), np.searchsorted(subset, I), len(subset))  # an id outside: past the subset
    assert_same(D, np.where(I >= 0, pos, -1), *brute(q, unit[subset], 10, exclude=np.arange(8)[:, None]))


def test_word_index_neighbors_batch_as_arrow(glove_home):
    index = WordIndex.open("glove", home=glove_home)
    table = index.neighbors(["king", "paris", "king"], k=5)
    assert isinstance(table, pa.Table) and table.column_names == ["query", "rank", "word", "score"]
    assert table.num_rows == 15 and table.column("rank").to_pylist()[:5] == [1, 2, 3, 4, 5]
    one = index.neighbors("king", k=5)  # a str is one word, never its letters
    assert one.column("query").to_pylist() == ["king"] * 5
    assert one.column("word").to_pylist() == table.column("word").to_pylist()[:5]
    assert "queen" in one.column("word").to_pylist()
    unit = index.unit
    q = index.ids(["paris"])[0]
    Dr, _, S, E = brute(unit[q][None], unit, 5, exclude=[[q]])
    assert_topk_agrees(index.ids(table.column("word").to_pylist()[5:10]), S[0], E[0],
                       scores=table.column("score").to_numpy()[5:10])
    np.testing.assert_allclose(table.column("score").to_numpy()[5:10], Dr[0], atol=2e-6)
    king = index.ids(["king"])[0]
    _, _, S, E = brute(unit[[king]], unit, 3, [[king]], 1000)
    assert_topk_agrees(index.ids(index.neighbors("king", k=3, restrict_vocab=1000).column("word").to_pylist()), S[0],
                       E[0])


def test_first_searches_from_eight_threads_compile_once(tmp_path):
    """Eight threads making a new process's first pruned searches together (a server's first requests): the int8
    scan's LLVM kernel and numba's kernels are compiled under one lock, so the process neither crashes (LLVM's
    initialisation is not thread-safe) nor answers differently from a single thread."""
    import os
    import subprocess
    import sys

    script = r'''
import threading, numpy as np
from lexprobe.core import topk
rng = np.random.default_rng(0)
V = rng.standard_normal((40000, 32)).astype(np.float32)
Q = rng.standard_normal((8, 32)).astype(np.float32)
searcher, barrier, answers = topk.TopK(V), threading.Barrier(8), [None] * 8
def run(t):
    barrier.wait()
    answers[t] = searcher.search(Q, 10)[1]
threads = [threading.Thread(target=run, args=(t,)) for t in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(sum(np.array_equal(a, answers[0]) for a in answers), " ".join(map(str, answers[0].ravel())))
'''
    env = {**os.environ, "LEXPROBE_CACHE": str(tmp_path / "compiled")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    same, *ids = map(int, done.stdout.split())
    assert same == 8
    rng = np.random.default_rng(0)
    V = rng.standard_normal((40000, 32)).astype(np.float32)
    Q = rng.standard_normal((8, 32)).astype(np.float32)
    assert_topk_agrees(np.array(ids).reshape(8, 10), Q.astype(np.float64) @ V.astype(np.float64).T,
                       dot_error(32, abs_products(Q, V)))
