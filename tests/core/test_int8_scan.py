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
    bound = queries.residual * max_norm + queries.rounded_norm * rows.residual
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
