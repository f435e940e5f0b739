"""The exact top-k searcher's edges that a mutation run of core/topk.py found untested (benchmarks/mutation.md):
each test pins one behaviour by hand."""

import numpy as np

from lexprobe.core.topk import TopK


def test_rows_of_an_empty_searcher_with_ids_are_all_missing():
    """Pins TopK.rows_of on a searcher with no rows: every id, with or without an id column, maps to -1."""
    for searcher in (TopK(np.zeros((0, 4), np.float32), ids=np.zeros(0, np.int64)),
                     TopK(np.zeros((0, 4), np.float32))):
        assert searcher.rows_of(np.array([5, 0, -1])).tolist() == [-1, -1, -1]
    with_ids = TopK(np.eye(3, dtype=np.float32), ids=np.array([10, 20, 30]))
    assert with_ids.rows_of(np.array([20, 10, 31, 30, 0])).tolist() == [1, 0, -1, 2, -1]


def test_fewer_rows_than_k_pad_with_minus_one_ids_and_minus_inf_with_an_id_column():
    """Pins search's padding through the id column: with k above the allowed rows, the missing places are id -1
    and score -inf (not an id of the column, nor a row number), the found ones by score then id."""
    V = np.array([[1, 0], [0, 1], [1, 1]], np.float32)
    searcher = TopK(V, ids=np.array([10, 20, 30]))
    D, I = searcher.search(np.array([[1, 0.5]], np.float32), 5, exclude=np.array([[1]]))
    assert I.tolist() == [[30, 10, -1, -1, -1]]
    assert D[0, :2].tolist() == [1.5, 1.0] and np.isneginf(D[0, 2:]).all()


def test_the_uncompiled_full_scan_pads_like_the_compiled_one():
    """Pins exact_topk without compiled code (a fresh process's first queries): with fewer allowed rows than k
    it pads with -1 / -inf exactly as the compiled kernel does, and both give the same rows and scores."""
    from lexprobe.core.topk import exact_topk

    V = np.array([[1, 0], [0, 1], [1, 1], [2, 2]], np.float32)
    Q = np.array([[1, 0.5], [0, 1]], np.float32)
    excl = np.array([[3, -1], [2, 3]])
    for compiled in (False, True):
        D, I = exact_topk(Q, V, 4, excl, compiled=compiled)
        assert I.tolist() == [[2, 0, 1, -1], [1, 0, -1, -1]], compiled
        assert D[0, :3].tolist() == [1.5, 1.0, 0.5] and D[1, :2].tolist() == [1.0, 0.0], compiled
        assert np.isneginf(D[0, 3]) and np.isneginf(D[1, 2:]).all(), compiled
