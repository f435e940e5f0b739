"""The tie-proof top-k comparison (tests/topk_ties.py): it accepts what float32 rounding can do and nothing more."""

import numpy as np
import pytest

from topk_ties import U32, abs_products, assert_rank_agrees, assert_topk_agrees, dot_error, unit_error

#'s case: float64 ranks 3515 above 3511 by 5.4e-8, less than float32 can resolve at 0.75
ERR = float(dot_error(16, inputs=U32))  # 16-dimensional unit vectors rounded to float32: about 1.1e-6


def row(scores: dict, n=8, fill=0.1):
    s = np.full(n, fill)
    for i, v in scores.items():
        s[i] = v
    return s


def test_accepts_a_swap_within_the_bound():
    s = row({3: 0.7455337783, 1: 0.7455337238, 5: 0.9, 0: -np.inf})
    assert_topk_agrees([5, 3, 1], s, ERR)           # the reference's own order
    assert_topk_agrees([5, 1, 3], s, ERR)           # the near tie swapped
    assert_topk_agrees([5, 3], s, ERR)              # the near tie at the cut: either word may be the k-th
    assert_topk_agrees([5, 1], s, ERR, scores=[0.9, 0.7455337])
    assert_topk_agrees(np.array([[5, 1], [5, 3]]), np.stack([s, s]), ERR)


def test_rejects_a_swap_beyond_the_bound():
    s = row({3: 0.7455, 1: 0.7445, 5: 0.9})
    with pytest.raises(AssertionError, match="ranked after"):
        assert_topk_agrees([5, 1, 3], s, ERR)
    with pytest.raises(AssertionError, match="ranked after"):  # the bound is strict: 2 ERR apart is too much
        assert_topk_agrees([1, 3], row({3: 0.5 + 2.5 * ERR, 1: 0.5}), ERR)
    assert_topk_agrees([1, 3], row({3: 0.5 + 1.5 * ERR, 1: 0.5}), ERR)


def test_rejects_a_wrong_id_at_the_cut():
    s = row({2: 0.9, 4: 0.8, 6: 0.7, 7: 0.69})
    with pytest.raises(AssertionError, match="id 6 .* is missing while id 7"):  # the (k+1)-th for the k-th
        assert_topk_agrees([2, 4, 7], s, ERR)
    with pytest.raises(AssertionError, match="missing"):
        assert_topk_agrees([2, 4, 0], s, ERR)  # a word far below the cut
    with pytest.raises(AssertionError, match="expected 3 ids"):  # a short list where three words are allowed
        assert_topk_agrees([2, 4, -1], s, ERR)


def test_rejects_a_missing_exclusion():
    s = row({2: 0.9, 4: 0.8, 6: -np.inf})  # 6: an excluded input word (it would rank first)
    with pytest.raises(AssertionError, match=r"does not allow"):
        assert_topk_agrees([6, 2, 4], s, ERR)
    with pytest.raises(AssertionError, match="twice"):
        assert_topk_agrees([2, 2, 4], s, ERR)
    few = np.full(5, -np.inf)
    few[[1, 3]] = [0.2, 0.4]  # two allowed words, k = 4: two ids, then -1 padding with -inf scores
    assert_topk_agrees([3, 1, -1, -1], few, ERR, scores=[0.4, 0.2, -np.inf, -np.inf])
    with pytest.raises(AssertionError, match="expected 2 ids"):
        assert_topk_agrees([3, 1, 0, -1], few, ERR)


def test_scores_must_descend_and_match_the_reference():
    s = row({3: 0.8, 1: 0.7})
    with pytest.raises(AssertionError, match="off by more"):
        assert_topk_agrees([3, 1], s, ERR, scores=[0.8, 0.71])
    with pytest.raises(AssertionError, match="descending"):
        assert_topk_agrees([3, 1], row({3: 0.7, 1: 0.7}), ERR, scores=[0.7, 0.7 + ERR / 2])


def test_reference_given_as_its_own_top_k_list():
    ref = ([5, 3, 1], [0.9, 0.7455337783, 0.7455337238])
    assert_topk_agrees([5, 1, 3], ref, 2 * ERR)
    assert_topk_agrees([5, 3, 7], ref, 2 * ERR, scores=[0.9, 0.7455338, 0.7455337])  # 7 at the cut, within the bound
    with pytest.raises(AssertionError, match="no score"):
        assert_topk_agrees([5, 3, 7], ref, 2 * ERR)
    with pytest.raises(AssertionError, match="is missing"):
        assert_topk_agrees([5, 3, 7], ref, 2 * ERR, scores=[0.9, 0.7455338, 0.74])
    with pytest.raises(AssertionError, match="above the reference's k-th"):  # 7 would have been in the reference
        assert_topk_agrees([7, 5, 3], ref, 2 * ERR, scores=[0.95, 0.9, 0.7455338])
    short = ([5, 3, -1], [0.9, 0.8, -np.inf])  # the reference found only two allowed words
    with pytest.raises(AssertionError, match="allowed words"):
        assert_topk_agrees([5, 7, -1], short, 2 * ERR, scores=[0.9, 0.8, -np.inf])
    with pytest.raises(AssertionError, match="expected 2 ids"):
        assert_topk_agrees([5, 3, 7], short, 2 * ERR, scores=[0.9, 0.8, 0.1])


def test_rank_within_the_bound():
    s = row({0: 0.5, 1: 0.5 + ERR / 2, 2: 0.9, 3: -np.inf}, fill=0.1)
    assert_rank_agrees(2, s, [0], ERR)  # word 1 may fall either side of the gold word 0
    assert_rank_agrees(3, s, [0], ERR)
    with pytest.raises(AssertionError, match="outside"):
        assert_rank_agrees(4, s, [0], ERR)
    assert_rank_agrees(1, s, [0, 2], ERR)  # the best accepted answer counts
    assert_rank_agrees(-1, s, [3], ERR)  # the only accepted answer is excluded
    with pytest.raises(AssertionError, match="expected -1"):
        assert_rank_agrees(1, s, [3, 99], ERR)


@pytest.mark.parametrize("d", [16, 300])
def test_the_dot_product_bound_holds_for_float32(d):
    """float32 products (BLAS and a sequential sum) of float32 roundings of float64 vectors stay within the
    bound of the float64 ones, and the bound is not loose by orders of magnitude."""
    rng = np.random.default_rng(d)
    X = rng.standard_normal((200, d))
    Y = rng.standard_normal((300, d)) * rng.uniform(0.1, 10, (300, 1))
    exact = X @ Y.T
    bound = dot_error(d, abs_products(X, Y), inputs=U32)
    X32, Y32 = X.astype(np.float32), Y.astype(np.float32)
    for approx in (X32 @ Y32.T, np.cumsum(X32[:, None, :] * Y32[None, :50, :], axis=2, dtype=np.float32)[..., -1]):
        err = np.abs(approx - exact[:, : approx.shape[1]])
        assert (err <= bound[:, : approx.shape[1]]).all()
        assert err.max() > bound.max() * 1e-4


def test_the_bound_holds_for_vectors_normalised_in_float32():
    rng = np.random.default_rng(5)
    d = 50
    raw = (rng.standard_normal((400, d)) * rng.uniform(0.01, 100, (400, 1))).astype(np.float32)
    exact = raw.astype(np.float64) / np.linalg.norm(raw.astype(np.float64), axis=1, keepdims=True)
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)  # float32 throughout, as the engine's unit_rows
    assert (np.abs(unit - exact) <= unit_error(d) * np.abs(exact)).all()
    err = np.abs(unit @ unit.T - exact @ exact.T)
    assert (err <= dot_error(d, abs_products(exact, exact), inputs=unit_error(d))).all()
