"""The exact top-k's definition against a brute-force sort (property-based, derandomized, bounded examples): scores
descending, equal scores in column order (inside the top and at the cut), k clamped to the columns, excluded
columns (column 0 included) never returned, fewer allowed columns than k padded with -1 / -inf. Small-integer
vectors make every product exact in float32, so ties are exact and the reference needs no tolerance."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lexprobe.core.topk import exact_topk, topk_rows

PROPERTY = settings(max_examples=40, deadline=None, derandomize=True)


def brute_force(scores, k, excluded=()):
    cols = sorted((c for c in range(len(scores)) if c not in excluded), key=lambda c: (-scores[c], c))[:k]
    return cols, [scores[c] for c in cols]


@PROPERTY
@given(rows=st.integers(1, 4), n=st.integers(1, 12), k=st.integers(1, 14), data=st.data())
def test_topk_rows_is_a_stable_sort_by_score(rows, n, k, data):
    R = np.array(data.draw(st.lists(st.lists(st.integers(-3, 3), min_size=n, max_size=n), min_size=rows,
                                    max_size=rows)), np.float32)
    cols, vals = topk_rows(R, k)
    for r in range(rows):
        want_cols, want_vals = brute_force(R[r].tolist(), k)
        assert cols[r].tolist() == want_cols and vals[r].tolist() == want_vals


@PROPERTY
@given(n=st.integers(1, 30), dim=st.integers(1, 5), k=st.integers(1, 8), compiled=st.booleans(), data=st.data())
def test_exact_topk_is_a_stable_sort_by_score_without_the_excluded(n, dim, k, compiled, data):
    V = np.array(data.draw(st.lists(st.lists(st.integers(-2, 2), min_size=dim, max_size=dim), min_size=n,
                                    max_size=n)), np.float32)
    Q = np.array(data.draw(st.lists(st.lists(st.integers(-2, 2), min_size=dim, max_size=dim), min_size=1,
                                    max_size=3)), np.float32)
    excl = np.array(data.draw(st.lists(st.lists(st.integers(-1, n - 1), min_size=2, max_size=2), min_size=len(Q),
                                       max_size=len(Q))), np.int64)
    excl[0, 0] = 0  # column 0 excluded for the first query
    D, I = exact_topk(Q, V, k, excl, compiled=compiled)
    for r in range(len(Q)):
        cols, vals = brute_force((V @ Q[r]).tolist(), k, excluded=set(excl[r].tolist()))
        pad = k - len(cols)
        assert I[r].tolist() == cols + [-1] * pad
        assert D[r].tolist() == vals + [-np.inf] * pad


def test_exact_topk_ranks_every_row_within_rounding_of_the_cut():
    """Near-duplicate rows (differences at float32 rounding) and eight queries (the BLAS path, whose products round
    otherwise than the ranking's): every row the ranking's arithmetic (ranking_scores: the compiled kernel's
    floats, bit for bit) puts in the top k is returned, in its order (ties by column). A cut at BLAS's k-th score
    without the rounding slack drops some."""
    from lexprobe.core.topk import ranking_scores

    rng = np.random.default_rng(0)
    for _ in range(4):
        V = (rng.normal(size=48) + rng.normal(size=(300, 48)) * 3e-7).astype(np.float32)
        Q = rng.normal(size=(8, 48)).astype(np.float32)
        _, I = exact_topk(Q, V, 5)
        for r in range(len(Q)):
            s = ranking_scores(Q[r:r + 1], V)[0]
            assert I[r].tolist() == np.lexsort((np.arange(len(V)), -s))[:5].tolist()
