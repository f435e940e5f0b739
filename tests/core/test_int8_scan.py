"""The int8 scan (core/int8_scan.py): the compiled kernel's integer scores equal numpy's, for the VNNI
instruction and the portable multiply-add alike; the rounding bound holds; a cut lets through exactly the rows
that can reach a score floor; limits, padding and the per-query cap."""

import os
import subprocess
import sys

import numpy as np
import pytest

from lexprobe.core import int8_scan as s8

KERNELS = [True, False] if s8._has_vnni() else [False]  # the VNNI kernel where this CPU runs it


def integer_scores(rows, queries, n, m):
    """The kernel's score v.u of every (query, row), in int64 by numpy."""
    u = rows.packed.transpose(0, 2, 1, 3).reshape(-1, rows.groups * 4)[:n].astype(np.int64)
    v = queries.packed.view(np.int8).reshape(len(queries.packed), -1)[:m].astype(np.int64)
    return v @ u.T


@pytest.mark.parametrize("vnni", KERNELS)
def test_kernel_scores_and_cuts_match_numpy(vnni, monkeypatch):
    monkeypatch.setattr(s8, "_has_vnni", lambda: vnni)
    rng = np.random.default_rng(0)
    n, d, m = 1000, 50, 21  # rows and queries not multiples of a block (16) or a tile (8)
    V = rng.standard_normal((n, d)).astype(np.float32)
    Q = rng.standard_normal((m, d)).astype(np.float32)
    rows = s8.Int8Rows.of(V)
    queries = s8.Int8Queries.of(Q, rows.groups)
    ints = integer_scores(rows, queries, n, m)
    cut = np.full(len(queries.packed), s8.SKIP, np.int32)
    cut[:m] = np.quantile(ints, 0.9, axis=1).astype(np.int32)
    cut[5] = -10 ** 6  # every row passes: the cap stops the list, not the count
    counts, cand, scores = s8.scan(rows, queries, cut, limit=997, cap=150)
    assert (counts[m:] == 0).all()  # padding queries (cut SKIP) find nothing
    for r in range(m):
        want = np.flatnonzero(ints[r, :997] >= cut[r])  # rows past the limit never count
        assert counts[r] == len(want)
        shown = min(counts[r], 150)
        np.testing.assert_array_equal(cand[r, :shown], want[:shown])
        np.testing.assert_array_equal(scores[r, :shown], ints[r, want[:shown]])
    assert counts[5] == 997


def test_rounding_bound_holds_and_cuts_never_drop_a_row_reaching_the_floor():
    rng = np.random.default_rng(1)
    V = rng.standard_normal((3000, 37)).astype(np.float32) * rng.uniform(0.1, 3, (3000, 1)).astype(np.float32)
    Q = rng.standard_normal((40, 37)).astype(np.float32)
    Q[3] = 0.0  # a zero query is never scanned
    rows = s8.Int8Rows.of(V)
    queries = s8.Int8Queries.of(Q, rows.groups)
    exact = Q.astype(np.float64) @ V.T.astype(np.float64)
    approx = (queries.scale[:, None] * rows.scale) * (integer_scores(rows, queries, 3000, 40)
                                                      - queries.offset[:, None])
    max_norm = np.linalg.norm(V, axis=1).max()
    bound = s8.rounding_bound(rows, queries, max_norm)
    assert (np.abs(approx - exact) <= bound[:, None]).all()
    assert (np.abs(approx - exact).max(axis=1) >= bound / 50).all()  # the bound is not vacuous
    floor = np.sort(exact, axis=1)[:, -30]  # each query's 30th best exact score
    counts, cand, _ = s8.scan(rows, queries, s8.integer_cuts(rows, queries, floor, max_norm), 3000, 3000)
    for r in range(40):
        kept = set(cand[r, : counts[r]].tolist())
        if r == 3:
            assert not kept
            continue
        assert set(np.flatnonzero(exact[r] >= floor[r]).tolist()) <= kept
        assert len(kept) < 600  # and it prunes


def half_steps(w, direction, scale):
    """float32 coordinates ``(w + direction (1/2 - 1/64)) scale``: each rounds to ``w`` steps, the worst case of
    rounding to the nearest step but for 1/64 of a step (``direction`` -1: rounded up, +1: rounded down)."""
    return ((np.asarray(w, np.float64) + direction * (0.5 - 1 / 64)) * scale).astype(np.float32)


@pytest.mark.parametrize("term", ["row", "query"])
def test_rounding_bound_is_met_in_both_directions_and_cuts_and_bands_cover_it(term):
    """Worst cases of the bound's two terms, each alone: rows at half steps against a query that int8 holds
    exactly (the query term is 0), then a query at half steps against rows that int8 holds exactly (the row term
    is 0). Row A is rounded up and row B down by (nearly) the whole bound, or 0.7 of it for the query term (each
    row lies along half of the query's residual), so the bound is needed on both sides: a bound without either
    term, an integer cut without it, or a narrowing band covering one bound instead of two fails here."""
    d, s = 16, 1 / 127
    sign = np.where(np.arange(d) % 3 == 0, -1.0, 1.0)  # mixed signs: rint is tested on both sides of zero
    if term == "row":
        q = sign[None]  # 127 steps of 1/127 in every dimension: int8 holds it
        w = np.arange(d) % 7 + 40
        top = [sign * half_steps(w, -1, s), sign * half_steps(w - (np.arange(d) < 15), +1, s)]  # B 0.5 s above A
        share = 0.99  # of the bound each row's rounding reaches
    else:
        # half the query's dimensions rounded up, half down (dimension 0, held exactly, sets the scale)
        first = (np.arange(d) < d // 2) & (np.arange(d) > 0)
        qw = np.where(np.arange(d) == 0, 127, 90)
        q = (sign * np.where(np.arange(d) == 0, qw / 127, half_steps(qw, np.where(first, -1, 1), 1 / 127)))[None]
        top = [sign * np.where(np.arange(d) >= d // 2, 100 * s, 0), sign * np.where(first, 116 * s, 0)]
        share = 0.65
    V = np.zeros((64, d), np.float32)
    V[1, 0] = 1.0  # the rows' scale: 1/127
    V[2:32] = np.float32(s) * np.arange(-15, 15)[:, None]  # rows int8 holds exactly
    A, B = 40, 50
    V[[A, B]] = np.asarray(top, np.float32)
    rows = s8.Int8Rows.of(V)
    queries = s8.Int8Queries.of(q.astype(np.float32), rows.groups)
    assert rows.scale == pytest.approx(s) and queries.scale[0] == pytest.approx(1 / 127)
    exact = (q @ V.T.astype(np.float64))[0]
    unit = queries.scale[0] * rows.scale
    ints = integer_scores(rows, queries, len(V), 1)[0]
    err = unit * (ints - queries.offset[0]) - exact
    max_norm = np.linalg.norm(V.astype(np.float64), axis=1).max()
    bound = s8.rounding_bound(rows, queries, max_norm)[0]
    assert (np.abs(err) <= bound).all()
    assert min(err[A], -err[B]) >= share * bound or min(-err[A], err[B]) >= share * bound, (err[[A, B]], bound)
    for r in (A, B):  # a cut at a row's own exact score keeps it
        cut = s8.integer_cuts(rows, queries, np.array([exact[r]]), max_norm)
        counts, cand, _ = s8.scan(rows, queries, cut, len(V), len(V))
        assert r in cand[0, : counts[0]]
    # the two rows' integer scores lie further apart than their exact distance plus one bound (plus the
    # band's margin of 2 integer steps), yet within the band of two bounds
    width = abs(exact[A] - exact[B])
    apart = abs(int(ints[A]) - int(ints[B]))
    assert (width + bound) / unit + 2 < apart < s8.integer_band(rows, queries, np.array([width]), max_norm)[0]


def test_ir_names_the_instruction_only_when_asked():
    assert "vpdpbusd" in s8.kernel_ir(True) and "vpdpbusd" not in s8.kernel_ir(False)


def test_environment_forces_the_portable_kernel():
    """``LEXPROBE_INT8_PORTABLE=1`` makes a VNNI machine take the portable multiply-add (how the suite tests it)."""
    code = "from lexprobe.core import int8_scan as s; print(s._has_vnni())"
    run = lambda value: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       env={**os.environ, "LEXPROBE_INT8_PORTABLE": value}).stdout.strip()
    assert run("1") == "False"
    if os.environ.get("LEXPROBE_INT8_PORTABLE") != "1":
        assert run("0") == str(s8._has_vnni())
