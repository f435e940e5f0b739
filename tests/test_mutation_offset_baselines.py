"""Table 1's chance rule and pair-count floor by hand (mutation testing, issue 20)."""

from __future__ import annotations

import math

import numpy as np

from lexprobe.analogies.offset_baselines import chance_rows, score_set
from lexprobe.analogies.offset_consistency import PairSet
from lexprobe.core.seeds import rng_for


def test_chance_rule_includes_its_boundary():
    rows = chance_rows([{"category": "all", "set": "bats", "pcs": 0.9, "pcs_iqr": 0.1},
                        {"category": "all", "set": "permuted", "pcs": 0.75, "pcs_iqr": 0.5},   # |0.25| <= 0.25
                        {"category": "all", "set": "random-end", "pcs": 0.25, "pcs_iqr": 0.25}])  # 0.25 > 0.125
    assert [(r["set"], r["distance"], r["half_iqr"], r["within"]) for r in rows] == [
        ("permuted", 0.25, 0.25, True), ("random-end", 0.25, 0.125, False)]


def test_sets_under_three_pairs_score_nan():
    vectors = np.random.default_rng(0).normal(size=(8, 3))
    two = score_set(vectors, PairSet("r", "c", np.array([0, 1]), np.array([4, 5])), 5, rng_for(0))
    assert all(math.isnan(x) for x in two)
    three = score_set(vectors, PairSet("r", "c", np.array([0, 1, 2]), np.array([4, 5, 6])), 5, rng_for(0))
    assert all(math.isfinite(x) for x in three) and -1 <= three[0] <= 1 and 0 <= three[1] <= 1


def test_possible_kinds_by_category_counts():
    from lexprobe.analogies.offset_baselines import KINDS, possible_kinds

    sets = lambda *cats: [PairSet(f"r{i}", c, np.array([0]), np.array([1])) for i, c in enumerate(cats)]
    assert possible_kinds(sets("a", "a", "b", "b")) == list(KINDS)  # 2 relations per broad type: enough
    assert "mismatched-within" not in possible_kinds(sets("a", "a", "b"))
    assert possible_kinds(sets("a", "a")) == [k for k in KINDS if k != "mismatched-across"]


def test_iqr_of_two_values_and_nan_left_out():
    from lexprobe.analogies.offset_baselines import _iqr

    assert _iqr(np.array([0.0, 1.0, np.nan])) == 0.5  # quartiles 0.25 and 0.75 (linear interpolation)
    assert math.isnan(_iqr(np.array([0.3, np.nan])))


def test_random_set_rows_are_end_minus_start():
    from types import SimpleNamespace

    from lexprobe.analogies.offset_baselines import _set_rows_table

    words = SimpleNamespace(raw=np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [5.0, 1.0]], np.float32),
                            words=["a", "b", "c", "d"])
    t = _set_rows_table(words, "permuted", 2, 7, [PairSet("r", "c1", np.array([0, 1]), np.array([2, 3])),
                                                  PairSet("q", "c2", np.array([3]), np.array([0]))])
    assert t.column("offset").to_pylist() == [[2, 3], [5, -1], [-4, -1]]
    assert t.column("relation").to_pylist() == ["r", "r", "q"] and t.column("end").to_pylist() == ["c", "d", "a"]
    assert set(t.column("replicate").to_pylist()) == {2} and set(t.column("seed").to_pylist()) == {7}
