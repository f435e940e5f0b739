"""Sense ranking metrics (P@k, recall@k, AP) on hand-computed fixtures, the exact random baseline against a
simulation, and the ranking of real SemCor / evaluation-set subsets with the packaged MiniLM."""

import numpy as np
import pytest

from engine.senses import random_baseline, rank_metrics


def _at(degrees):
    rad = np.radians(np.asarray(degrees, dtype=np.float64))
    return np.stack([np.cos(rad), np.sin(rad)], axis=1).astype(np.float32)


# candidates at 10, 80, 30, 50, 170 degrees with senses A B B A A; a query at 0 degrees ranks them
# 10 (A), 30 (B), 50 (A), 80 (B), 170 (A): relevance for sense A = 1 0 1 0 1, for sense B = 0 1 0 1 0.
CANDIDATES = _at([10, 80, 30, 50, 170])
SENSES = np.array([0, 1, 1, 0, 0])


def test_rank_metrics_equal_hand_computed_values():
    m = rank_metrics(_at([0, 0]), np.array([0, 1]), CANDIDATES, SENSES, k_max=7)
    # sense A: R = 3, N = 5; hits at ranks 1, 3, 5; ranks 6 and 7 do not exist and count as misses
    assert m.p_at_k[0] == pytest.approx([1, 1 / 2, 2 / 3, 2 / 4, 3 / 5, 3 / 6, 3 / 7])
    assert m.recall_at_k[0] == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3, 1, 1, 1])
    assert m.ap[0] == pytest.approx((1 / 1 + 2 / 3 + 3 / 5) / 3)
    # sense B: hits at ranks 2 and 4
    assert m.p_at_k[1] == pytest.approx([0, 1 / 2, 1 / 3, 2 / 4, 2 / 5, 2 / 6, 2 / 7])
    assert m.recall_at_k[1] == pytest.approx([0, 1 / 2, 1 / 2, 1, 1, 1, 1])
    assert m.ap[1] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert m.n_candidates.tolist() == [5, 5] and m.n_relevant.tolist() == [3, 2]


def test_excluded_candidate_is_neither_ranked_nor_relevant():
    # the query is candidate 0 itself: the rest rank 30 (B), 50 (A), 80 (B), 170 (A)
    m = rank_metrics(_at([0]), np.array([0]), CANDIDATES, SENSES, k_max=5, exclude=np.array([0]))
    assert m.n_candidates.tolist() == [4] and m.n_relevant.tolist() == [2]
    assert m.p_at_k[0] == pytest.approx([0, 1 / 2, 1 / 3, 2 / 4, 2 / 5])
    assert m.ap[0] == pytest.approx((1 / 2 + 2 / 4) / 2)


def test_blocks_do_not_change_results():
    rng = np.random.default_rng(3)
    q, c = rng.standard_normal((37, 8)).astype(np.float32), rng.standard_normal((53, 8)).astype(np.float32)
    qs, cs = rng.integers(0, 3, 37), rng.integers(0, 3, 53)
    whole = rank_metrics(q, qs, c, cs, k_max=60)
    blocked = rank_metrics(q, qs, c, cs, k_max=60, block=100)  # one query per block
    np.testing.assert_allclose(whole.ap, blocked.ap)
    np.testing.assert_allclose(whole.p_at_k, blocked.p_at_k)


def test_no_candidates_and_no_relevant():
    m = rank_metrics(_at([0]), np.array([0]), np.zeros((0, 2), np.float32), np.array([], int), k_max=3)
    assert m.n_candidates.tolist() == [0] and m.p_at_k[0].tolist() == [0, 0, 0] and np.isnan(m.ap[0])
    m = rank_metrics(_at([0]), np.array([9]), CANDIDATES, SENSES, k_max=3)
    assert m.n_relevant.tolist() == [0] and m.p_at_k[0].tolist() == [0, 0, 0] and np.isnan(m.ap[0])


def test_random_baseline_formula_matches_simulation():
    # orthonormal candidates and Gaussian queries: every ranking of the candidates is equally likely
    rng = np.random.default_rng(0)
    cases = [(7, 3), (12, 1), (4, 4), (1, 1)]
    k_max = 10
    for n, r in cases:
        candidates = np.eye(n, dtype=np.float32)
        senses = np.array([0] * r + [1] * (n - r))
        queries = rng.standard_normal((40_000, n)).astype(np.float32)
        sim = rank_metrics(queries, np.zeros(len(queries), int), candidates, senses, k_max=k_max)
        p, recall, ap = random_baseline(np.array([n]), np.array([r]), k_max=k_max)
        np.testing.assert_allclose(sim.p_at_k.mean(axis=0), p[0], atol=0.01)
        np.testing.assert_allclose(sim.recall_at_k.mean(axis=0), recall[0], atol=0.01)
        assert sim.ap.mean() == pytest.approx(ap[0], abs=0.01)
        assert p[0][n:] == pytest.approx(r / np.arange(n + 1, k_max + 1))  # k > N: all retrieved, R / k


def test_random_baseline_hand_values():
    p, recall, ap = random_baseline(np.array([5]), np.array([2]), k_max=6)
    assert p[0] == pytest.approx([0.4, 0.4, 0.4, 0.4, 0.4, 2 / 6])
    assert recall[0] == pytest.approx([0.2, 0.4, 0.6, 0.8, 1, 1])
    h5 = 1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5
    assert ap[0] == pytest.approx((h5 + (1 / 4) * (5 - h5)) / 5)
