"""Properties of the sense-ranking metrics (property-based, derandomized, bounded examples): P@k, recall@k and AP
do not change when candidates of equal score and equal relevance are permuted, nor when the candidates are
permuted and no tie mixes relevant with irrelevant ones; where a tie does mix them, database row order decides
(a stable sort). Expected values from a brute-force reference written here (sorted ranking, counted hits)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lexprobe.senses.sense_ranking import random_baseline, rank_metrics

PROPERTY = settings(max_examples=40, deadline=None, derandomize=True)


def reference(q, qs, C, cs, k_max):
    """P@1..K, AP and R of one query by brute force: candidates sorted by score, ties by row (Python's stable sort);
    P@k divides by k even past the end of the list."""
    scores = [float(np.dot(q.astype(np.float64), c)) for c in C]
    order = sorted(range(len(C)), key=lambda i: -scores[i])
    rel = [cs[i] == qs for i in order]
    p = [sum(rel[:k]) / k for k in range(1, k_max + 1)]
    R = sum(rel)
    ap = sum(sum(rel[:i + 1]) / (i + 1) for i in range(len(rel)) if rel[i]) / R if R else float("nan")
    return p, ap, R


@st.composite
def tied_space(draw, mixed: bool):
    """Candidates drawn from a few distinct small-integer vectors (dot products exact in float32, so equal vectors
    tie exactly). Unless ``mixed``, a candidate's sense is a function of its score: every tie is pure."""
    dim = draw(st.integers(1, 4))
    n_points = draw(st.integers(1, 5))
    points = np.array(draw(st.lists(st.lists(st.integers(-3, 3), min_size=dim, max_size=dim),
                                    min_size=n_points, max_size=n_points)), np.float32)
    n = draw(st.integers(1, 14))
    which = np.array(draw(st.lists(st.integers(0, n_points - 1), min_size=n, max_size=n)))
    q = np.array(draw(st.lists(st.integers(-3, 3), min_size=dim, max_size=dim)), np.float32)[None]
    if mixed:
        senses = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    else:  # one sense per score value: distinct points of equal score share it too
        score_sense = {}
        for point in points:
            score_sense.setdefault(float(point @ q[0]), draw(st.integers(0, 2)))
        senses = np.array([score_sense[float(points[w] @ q[0])] for w in which])
    perm = np.array(draw(st.permutations(range(n))))
    return q, points[which], senses, perm


@PROPERTY
@given(tied_space(mixed=False), st.integers(1, 20))
def test_pure_ties_permuted_change_nothing(space, k_max):
    q, C, senses, perm = space
    got = rank_metrics(q, np.array([1]), C, senses, k_max=k_max)
    moved = rank_metrics(q, np.array([1]), C[perm], senses[perm], k_max=k_max)
    np.testing.assert_array_equal(got.p_at_k, moved.p_at_k)
    np.testing.assert_array_equal(got.ap, moved.ap)
    np.testing.assert_array_equal(got.recall_at_k, moved.recall_at_k)
    p, ap, R = reference(q[0], 1, C, senses, k_max)
    np.testing.assert_allclose(got.p_at_k[0], p, atol=1e-12)
    assert got.n_relevant[0] == R and got.n_candidates[0] == len(C)
    assert (np.isnan(got.ap[0]) and R == 0) or got.ap[0] == pytest.approx(ap, abs=1e-12)


@PROPERTY
@given(tied_space(mixed=True), st.integers(1, 20))
def test_mixed_ties_follow_row_order(space, k_max):
    q, C, senses, perm = space
    for rows in (np.arange(len(C)), perm):
        got = rank_metrics(q, np.array([1]), C[rows], senses[rows], k_max=k_max)
        p, ap, R = reference(q[0], 1, C[rows], senses[rows], k_max)
        np.testing.assert_allclose(got.p_at_k[0], p, atol=1e-12)
        assert (np.isnan(got.ap[0]) and R == 0) or got.ap[0] == pytest.approx(ap, abs=1e-12)


@PROPERTY
@given(tied_space(mixed=True), st.integers(1, 20))
def test_mean_over_every_order_of_a_tie_is_the_random_baseline(space, k_max):
    """All candidates tied (the query orthogonal to every candidate): over every cyclic shift of the rows the
    ranking is each rotation of the list, and the mean of P@k over the n rotations is the exact random expectation
    R min(k, N) / (N k) (each candidate occupies each rank once); the random baseline gives the same."""
    _, C, senses, _ = space
    n = len(C)
    q = np.zeros((1, C.shape[1]), np.float32)
    rotations = [rank_metrics(q, np.array([1]), C[np.roll(np.arange(n), s)], senses[np.roll(np.arange(n), s)],
                              k_max=k_max).p_at_k[0] for s in range(n)]
    R = int((senses == 1).sum())
    want = [R * min(k, n) / (n * k) for k in range(1, k_max + 1)]
    np.testing.assert_allclose(np.mean(rotations, axis=0), want, atol=1e-12)
    p, _, _ = random_baseline(np.array([n]), np.array([R]), k_max=k_max)
    np.testing.assert_allclose(p[0], want, atol=1e-12)


@PROPERTY
@given(n=st.integers(1, 7), data=st.data())
def test_random_baseline_is_the_mean_over_every_ranking(n, data):
    """Every one of the C(N, R) placements of R relevant among N candidates is equally likely under a random
    ranking: the mean P@k, recall@k and AP over all of them, by brute force, equal random_baseline's."""
    from itertools import combinations

    R = data.draw(st.integers(0, n))
    k_max = data.draw(st.integers(1, n + 3))
    ps, recalls, aps = [], [], []
    for places in combinations(range(n), R):
        rel = [i in places for i in range(n)]
        ps.append([sum(rel[:k]) / k for k in range(1, k_max + 1)])
        if R:
            recalls.append([sum(rel[:k]) / R for k in range(1, k_max + 1)])
            aps.append(sum(sum(rel[:i + 1]) / (i + 1) for i in range(n) if rel[i]) / R)
    p, recall, ap = random_baseline(np.array([n]), np.array([R]), k_max=k_max)
    np.testing.assert_allclose(p[0], np.mean(ps, axis=0), atol=1e-12)
    if R:
        np.testing.assert_allclose(recall[0], np.mean(recalls, axis=0), atol=1e-12)
        assert ap[0] == pytest.approx(np.mean(aps), abs=1e-12)
    else:
        assert np.isnan(ap[0]) and np.isnan(recall[0]).all()
