"""Adversarial inputs for the exact top-k kernel (core/topk.py, core/int8_scan.py, core/topk_kernels.py): rows at
the int8 scan's proven rounding bound in opposite directions, wide gaps at the cut, ties across it, zero and
duplicate rows, for k on both sides of the kernels' k = 32 switch up to 1,000; then random and adversarial small
matrices (hypothesis) through the pruned path itself. Every answer is checked against every score in float64
within the tie rule (tests/topk_ties.py).

Random vectors never come near the bound: a narrowing band that covers one rounding bound instead of two, or a
k-th best integer score taken one place off, passes on them. Here each case is built so that such a bug returns
a wrong id or too few, and the big cases run with the full scan disabled, so that the pruned path answers.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lexprobe.core import int8_scan, topk
from topk_ties import abs_products, assert_topk_agrees, dot_error

D = 16
S = 1 / 127  # the rows' int8 step: every row set below holds a coordinate of magnitude 1


def reference(Q, V, exclude=None):
    """Every score in float64 (``-inf`` where excluded) and its float32 rounding bound (tests/topk_ties.py)."""
    R = np.asarray(Q, np.float64) @ np.asarray(V, np.float64).T
    if exclude is not None:
        for r, ex in enumerate(np.asarray(exclude)):
            R[r, ex[(ex >= 0) & (ex < len(V))]] = -np.inf
    return R, dot_error(Q.shape[1], abs_products(Q, V))


def check(Q, V, k, Dk, Ik, exclude=None):
    R, E = reference(Q, V, exclude)
    assert Ik.shape == Dk.shape == (len(Q), k)
    assert_topk_agrees(Ik, R, E, scores=Dk)


@pytest.fixture
def pruned_only(monkeypatch):
    """The compiled kernels loaded (a process's first few queries otherwise take the full scan in numpy) and the
    full scan disabled: the answers below come from the pruned path."""
    topk.load_kernels()

    def refuse(*args, **kwargs):
        raise AssertionError("the full scan ran: the pruned path was not tested")

    monkeypatch.setattr(topk, "exact_topk", refuse)


def half_steps(w, direction):
    """Coordinates ``(w + direction (1/2 - 1/64)) S``: each rounds to ``w`` int8 steps, off by nearly half a step
    (``direction`` -1: rounded up, +1: rounded down)."""
    return ((np.asarray(w, np.float64) + direction * (0.5 - 1 / 64)) * S).astype(np.float32)


def background(rng, n, q, steps=127):
    """n rows that int8 holds exactly (whole steps: they add nothing to the rows' rounding residual), each
    coordinate 10 to ``steps`` steps against the sign of ``q``'s, so that every one scores below -0.07 |q|;
    row 0 is ``steps`` in every dimension (127: it sets the step to 1/127)."""
    X = -np.sign(q) * rng.integers(10, steps + 1, size=(n, D)) * S
    X[0] = -np.sign(q) * steps * S
    return X.astype(np.float32)


def rows_for(k: int) -> int:
    """Enough rows for :meth:`TopK.search` to prune at this k (the full scan costs less below)."""
    step = 32 if k <= 16 else 16 if k <= 64 else 8
    return max(40_000, 16 * step * k + 4096)


@pytest.mark.parametrize("signs", ["positive", "mixed"])
@pytest.mark.parametrize("k", [1, 10, 33, 100])
def test_row_rounded_down_beside_rows_rounded_up_is_kept(pruned_only, k, signs):
    """k rows rounded up by the whole bound beside one row z rounded down by the whole bound and 0.5/127 above
    them exactly: z is the best answer, yet its integer score lies about two bounds (15 steps of the query,
    1,905 integer units) below theirs. A band of one bound (986 units) drops it."""
    sigma = np.ones(D) if signs == "positive" else np.where(np.arange(D) % 3 == 1, -1.0, 1.0)
    rng = np.random.default_rng(k)
    n = rows_for(k)
    V = background(rng, n, sigma)
    w = 100 + np.arange(D) % 7
    up = sigma * half_steps(w, -1)
    z = sigma * half_steps(w - (np.arange(D) < 15), +1)  # 15 steps less, each coordinate 31/32 of a step more
    spots = rng.choice(np.arange(1, n), size=k + 1, replace=False)
    V[spots[:k]], V[spots[k]] = up, z  # duplicates rounded up; z anywhere, in the sample or not
    Q = np.tile(sigma.astype(np.float32), (9, 1))  # a 127-step query int8 holds exactly; two tiles of 8
    Dk, Ik = topk.TopK(V).search(Q, k)
    check(Q, V, k, Dk, Ik)
    assert (Ik[:, 0] == spots[k]).all()
    assert (Ik[:, 1:] == np.sort(spots[:k])[: k - 1]).all()  # equal rows score equal: id order
    # the construction is adversarial: z's integer score lies more than one bound below the up rows'
    rows = int8_scan.Int8Rows.of(V)
    queries = int8_scan.Int8Queries.of(Q[:1], rows.groups)
    unit = queries.scale[0] * rows.scale
    bound = int8_scan.rounding_bound(rows, queries, topk.TopK(V).max_norm)[0]
    ints = lambda x: int(np.rint(sigma * 127) @ np.rint(x / rows.scale))  # the query is 127 sigma in int8
    assert (ints(up) - ints(z)) * unit > 1.9 * bound


@pytest.mark.parametrize("k", [1, 10, 33, 100])
def test_row_beside_a_query_rounded_by_the_whole_bound_is_kept(pruned_only, k):
    """The bound's query term: a query at half steps (dimension 0 at 127 steps sets its scale), dimensions 1-7
    rounded up and 8-15 down; k equal rows A at 127 steps along dimensions 1-7 (the largest norm: the bound's
    ``max_norm``) and one row z at 110 steps along 8-15, 47 integer units above A exactly but 810 below in
    integers (one bound is 631). The other rows are shorter, one is zero. A bound taken with the smallest row norm
    instead of the largest, or a band of one bound, drops z."""
    sigma = np.where(np.arange(D) % 3 == 1, -1.0, 1.0)
    first, second = (np.arange(D) >= 1) & (np.arange(D) < 8), np.arange(D) >= 8
    q = sigma * np.where(first, 90 - (0.5 - 1 / 64), np.where(second, 90 + 0.5 - 1 / 64, 127)) / 127
    rng = np.random.default_rng(400 + k)
    n = rows_for(k)
    V = background(rng, n, sigma, steps=40)
    spots = rng.choice(np.arange(2, n), size=k + 1, replace=False)
    V[1] = 0.0
    V[spots[:k]] = sigma * np.where(first, 127, 0) * S
    V[spots[k]] = sigma * np.where(second, 110, 0) * S
    Q = np.tile(q.astype(np.float32), (9, 1))
    Dk, Ik = topk.TopK(V).search(Q, k)
    check(Q, V, k, Dk, Ik)
    assert (Ik[:, 0] == spots[k]).all() and (Ik[:, 1:] == np.sort(spots[:k])[: k - 1]).all()
    rows = int8_scan.Int8Rows.of(V)
    queries = int8_scan.Int8Queries.of(Q[:1], rows.groups)
    unit = queries.scale[0] * rows.scale
    bound = int8_scan.rounding_bound(rows, queries, topk.TopK(V).max_norm)[0]
    assert 625 < bound / unit < 640 and rows.residual * queries.rounded_norm[0] < 1e-3 * bound  # the query term


def spread(rng, n, counts, sampled=()):
    """Disjoint random row positions (not row 0), one array per count; the groups numbered in ``sampled`` on
    multiples of 32, which every sample of the pruned path holds (its step is 32, 16 or 8), the others off them."""
    on, off = np.arange(32, n, 32), np.setdiff1d(np.arange(1, n), np.arange(0, n, 8))
    on, off = rng.permutation(on), rng.permutation(off)
    out = []
    for g, c in enumerate(counts):
        pool = on if g in sampled else off
        out.append(pool[:c])
        pool_left = pool[c:]
        on, off = (pool_left, off) if g in sampled else (on, pool_left)
    return out


def along(q, cos, rng, m):
    """m unit rows at cosine ``cos`` (scalar or per row) to the unit vector ``q``."""
    X = rng.standard_normal((m, D))
    X -= (X @ q)[:, None] * q
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    cos = np.broadcast_to(cos, (m,))[:, None]
    return (cos * q + np.sqrt(1 - cos ** 2) * X).astype(np.float32)


@pytest.mark.parametrize("k", [1, 10, 32, 33, 100, 1000])
def test_wide_gap_at_the_cut(pruned_only, k):
    """k - 1 rows far above the k-th (cosines 0.95 to 0.9 against 0.6), 40 equal rows below it (0.3), the rest
    below zero: the k-th best integer score is far below the (k-1)-th. The far rows lie in the threshold's
    sample, the k-th row not: taking the (k-1)-th best integer score for the k-th, or the (k-1)-th best sample
    score for the threshold, drops the k-th row."""
    rng = np.random.default_rng(100 + k)
    n = rows_for(k)
    q = rng.standard_normal(D)
    q /= np.linalg.norm(q)
    V = background(rng, n, q)
    far, kth, below = spread(rng, n, [k - 1, 1, 40], sampled=(0,))  # the k-th off the sample
    V[far] = along(q, np.linspace(0.95, 0.9, k - 1), rng, k - 1)
    V[kth] = along(q, 0.6, rng, 1)
    V[below] = along(q, 0.3, rng, 1)
    Q = np.stack([q, q * 3, q * 0.1]).astype(np.float32)  # the same order at three query norms
    Dk, Ik = topk.TopK(V).search(Q, k)
    check(Q, V, k, Dk, Ik)
    assert (Ik[:, -1] == kth).all()


@pytest.mark.parametrize("group", ["duplicates", "zeros"])
@pytest.mark.parametrize("k", [1, 10, 32, 33, 100, 1000])
def test_ties_across_the_cut(pruned_only, k, group):
    """k // 2 rows above, then 2k + 5 equal rows (equal vectors, or zero rows against a query that every other
    row scores below zero) across the cut: the top k take the equal rows with the smallest ids, in id order."""
    rng = np.random.default_rng(200 + k)
    n = rows_for(k)
    q = rng.standard_normal(D)
    q /= np.linalg.norm(q)
    V = background(rng, n, q)
    above, *tied = spread(rng, n, [k // 2, k + 3, k + 2], sampled=(2,))  # equal rows on and off the sample
    tied = np.concatenate(tied)
    V[above] = along(q, np.linspace(0.9, 0.8, k // 2), rng, k // 2)
    V[tied] = 0.0 if group == "zeros" else along(q, 0.5, rng, 1)
    Q = np.stack([q, 2 * q]).astype(np.float32)
    Dk, Ik = topk.TopK(V).search(Q, k)
    check(Q, V, k, Dk, Ik)
    want = np.sort(tied)[: k - k // 2]
    assert (Ik[:, k // 2:] == want).all()
    assert (Dk[:, k // 2:] == Dk[:, -1:]).all()  # equal vectors, equal float32 scores


def test_exclusions_around_the_constructed_cut(pruned_only):
    """The best row z of the rounding case and half the rows rounded up excluded: the next ones come in."""
    k, rng = 10, np.random.default_rng(300)
    n = rows_for(k)
    sigma = np.where(np.arange(D) % 2 == 0, 1.0, -1.0)
    V = background(rng, n, sigma)
    w = 100 + np.arange(D) % 7
    up, z = spread(rng, n, [2 * k, 1])
    V[up] = sigma * half_steps(w, -1)
    V[z] = sigma * half_steps(w - (np.arange(D) < 15), +1)
    Q = np.tile(sigma.astype(np.float32), (2, 1))
    exclude = np.stack([np.r_[z, np.sort(up)[::2]], np.r_[np.sort(up)[1::2], -1]])
    Dk, Ik = topk.TopK(V).search(Q, k, exclude=exclude)
    check(Q, V, k, Dk, Ik, exclude)
    assert Ik[0].tolist() == np.sort(up)[1::2].tolist()
    assert Ik[1].tolist() == [z[0], *np.sort(up)[::2][: k - 1]]


# --- random and adversarial small matrices through the pruned path ---

@st.composite
def problems(draw):
    """(Q, V, k, exclusions, sample step). Rows: normal; whole int8 steps; half steps in random directions;
    ``worst``: every row rounded up or down by nearly the whole bound against a sign-vector query, the ones
    rounded down exactly above the others but more than one bound below them in integers (the band must cover
    two bounds); ``gap``: about k - 1 rows ten times above the rest
    (the narrowing's k-th best score must be the k-th). Some rows duplicated, some zero; queries from the rows,
    sign vectors (exact in int8), zero or random."""
    n, d, m = draw(st.integers(1, 150)), draw(st.integers(1, 12)), draw(st.integers(1, 10))
    k = draw(st.sampled_from([1, 2, 3, 5, 10, 31, 32, 33, 40, 64, 100, 200]))
    step = draw(st.sampled_from([1, 2, 3, 8, 16, 32]))
    kind = draw(st.sampled_from(["normal", "steps", "half_steps", "worst", "gap"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    sigma = rng.choice([-1.0, 1.0], d)
    if kind == "normal":
        V = rng.standard_normal((n, d)) * rng.uniform(0.1, 3, (n, 1))
    elif kind == "gap":
        V = rng.uniform(0, 1, (n, d)) * sigma
        V[rng.permutation(n)[: max(0, k - 1 + draw(st.integers(-1, 1)))]] *= 10
    else:
        w = rng.integers(-120, 121, (n, d))
        down = rng.choice([-1, 1], (n, 1))  # worst: rows rounded down have 3d/4 steps less, d/2 - d/64 more
        if kind == "worst":
            w = sigma * (rng.integers(90, 111) - (down > 0) * (np.arange(d) < round(0.75 * d)))
        off = {"steps": 0, "half_steps": rng.choice([-1, 1], (n, d)), "worst": down * sigma}
        V = (w + off[kind] * (0.5 - 1 / 64)) / 127
        V[0] = sigma  # a whole row of 127 steps sets the step to 1/127
    if draw(st.booleans()):  # duplicates
        V[rng.integers(0, n, n // 2)] = V[rng.integers(0, n)]
    if draw(st.booleans()):  # zero rows
        V[rng.integers(0, n, max(1, n // 5))] = 0
    V = V.astype(np.float32)
    aimed = kind in ("worst", "gap")  # mostly the sign vector the rows were built against
    sources = np.where(rng.uniform(size=m) < 0.7, 1, 3) if aimed else rng.integers(0, 4, m)
    signs = sigma if aimed else rng.choice([-1.0, 1.0], (m, d))
    Q = np.where((sources == 0)[:, None], V[rng.integers(0, n, m)],
                 np.where((sources == 1)[:, None], signs,
                          np.where((sources == 2)[:, None], 0.0, rng.standard_normal((m, d))))).astype(np.float32)
    excl = rng.integers(-1, n + 3, (m, draw(st.integers(0, 4))))
    return Q, V, k, excl, step


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_pruned_path_on_small_matrices_equals_brute_force(problem):
    """The pruned path run directly at any sample step (the search takes it only past 32,768 rows), and the full
    scan, on small random and adversarial matrices."""
    Q, V, k, excl, step = problem
    searcher = topk.TopK(V)
    Dk, Ik = searcher._pruned(Q, searcher.V, k, topk._sorted_exclusions(excl, len(V)), step)
    check(Q, V, k, Dk, Ik, excl)
    Df, If = topk.exact_topk(Q, V, k, excl)
    check(Q, V, k, Df, If, excl)
