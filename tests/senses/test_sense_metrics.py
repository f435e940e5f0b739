"""Table 1's cell summaries and checks by hand (mutation testing)."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from lexprobe.senses.sense_cells import bucket_checks, summarize_cells


def _cell(cell, queries, p, rp, ap, rap, run="m"):
    return {"run": run, "cell": cell, "queries": queries, "p_at_k_mean": p, "random_p_at_k_mean": rp, "map": ap,
            "random_map": rap}


def test_bucket_checks_need_both_p_at_k_and_map_strictly_above_random():
    rows = [_cell("l<500, r<0.25", 1, 0.30, 0.20, 0.10, 0.20),        # P@k above, MAP below
            _cell("l<500, r>=0.25", 4, 0.50, 0.50, 0.60, 0.20),       # P@k equal: not above
            _cell("l>=500, r<0.25", 0, float("nan"), 0.1, 0.1, 0.1),   # empty: left out
            _cell("l>=500, r>=0.25", 2, 0.60, 0.20, 0.70, 0.20),
            _cell("all", 7, 0.5, 0.3, 0.5, 0.2)]
    got = bucket_checks(rows)["m"]
    assert got == {"every_cell_beats_random": False, "rare_senses_score_lower": True, "cells_compared": 3,
                   "cells_not_above_random": ["l<500, r<0.25 (1 query)", "l<500, r>=0.25 (4 queries)"]}
    ok = bucket_checks([_cell("l<500, r<0.25", 3, 0.3, 0.2, 0.3, 0.2, run="x"),
                        _cell("l<500, r>=0.25", 3, 0.3, 0.2, 0.3, 0.2, run="x")])["x"]
    assert ok["every_cell_beats_random"] and not ok["rare_senses_score_lower"]  # equal P@k: not lower
    assert ok["cells_not_above_random"] == []
    tie = bucket_checks([_cell("l<500, r<0.25", 3, 0.2, 0.2, 0.3, 0.2), _cell("l<500, r>=0.25", 3, 0.3, 0.2, 0.3, 0.2)])
    assert not tie["m"]["every_cell_beats_random"]  # P@k equal to random's is not above it


def test_summarize_cells_means_per_cell_and_all():
    t = pa.table({"cell": ["A", "A", "B"], "lemma": ["x", "y", "x"],
                  "p_at_k": [[1.0, 0.5], [0.0, 0.5], [1.0, 1.0]], "random_p_at_k": [[0.2, 0.2], [0.4, 0.4], [0.1, 0.3]],
                  "ap": [1.0, 0.0, 0.5], "random_ap": [0.3, 0.1, 0.2]})
    rows, curves = summarize_cells(t, ["A", "B", "C"])
    by = {r["cell"]: r for r in rows}
    assert [r["cell"] for r in rows] == ["A", "B", "C", "all"]
    assert by["A"] == {"cell": "A", "queries": 2, "lemmas": 2, "p_at_k_mean": 0.5, "map": 0.5,
                       "random_p_at_k_mean": pytest.approx(0.3), "random_map": pytest.approx(0.2)}
    assert by["all"]["queries"] == 3 and by["all"]["lemmas"] == 2 and by["all"]["map"] == pytest.approx(0.5)
    assert by["C"]["queries"] == 0 and all(math.isnan(by["C"][k]) for k in
                                           ("p_at_k_mean", "map", "random_p_at_k_mean", "random_map"))
    assert set(curves) == {"A", "B", "all"}
    np.testing.assert_allclose(curves["A"]["p_at_k"], [0.5, 0.5])
    np.testing.assert_allclose(curves["all"]["random_p_at_k"], [0.7 / 3, 0.9 / 3])


def test_equal_edges_are_refused():
    from lexprobe.senses.sense_cells import check_edges

    assert check_edges("r", [0.1, 0.25]) == [0.1, 0.25]
    with pytest.raises(ValueError, match=r"r edges must be strictly ascending, got \[0.25, 0.25\]"):
        check_edges("r", [0.25, 0.25])


def test_random_baseline_edge_cases_by_hand():
    from lexprobe.senses.sense_ranking import DEFAULT_K, random_baseline

    # no relevant candidate: P@k 0, recall and AP undefined; no candidate at all: P@k 0 (nothing retrieved)
    p, recall, ap = random_baseline(np.array([4, 0, 1]), np.array([0, 0, 1]), k_max=3)
    assert p.tolist() == [[0, 0, 0], [0, 0, 0], [1, 0.5, 1 / 3]]
    assert np.isnan(recall[:2]).all() and recall[2].tolist() == [1, 1, 1]
    assert np.isnan(ap[:2]).all() and ap[2] == 1.0  # N = 1: H_1 = 1
    assert random_baseline(np.array([], int), np.array([], int))[2].shape == (0,)
    assert random_baseline(np.array([3]), np.array([1]))[0].shape == (1, DEFAULT_K) and DEFAULT_K == 50  # k = 1..50 (README)


def _instances(rows, vectors):
    from lexprobe.senses.sense_ranking import Instances

    lemma, pos, sense, surface = zip(*rows)
    table = pa.table({"instance_id": [f"i{n}" for n in range(len(rows))], "lemma": list(lemma), "pos": list(pos),
                      "sense": list(sense), "surface": list(surface)})
    return Instances(table, np.asarray(vectors, dtype=np.float32))


def test_same_corpus_leaves_out_every_query_last_of_its_group_too():
    from lexprobe.senses.sense_ranking import rank_senses, without_proper_names

    rows = [("x", "NOUN", s, "x") for s in "AABBA"] + [("y", "NOUN", "C", "y")] * 4
    db = _instances(rows, np.random.default_rng(2).normal(size=(9, 4)))
    table, skips = rank_senses(db, db, k_max=3, min_sense_count=1, same_corpus=True)
    assert table.column("n_candidates").to_pylist() == [4] * 5 + [3] * 4  # each query's group without itself
    assert table.column("n_relevant").to_pylist() == [2, 2, 1, 1, 2, 3, 3, 3, 3]
    assert "not in the --limit-queries sample" not in rank_senses(db, db, k_max=3, min_sense_count=1,
                                                                   same_corpus=True, limit_queries=9)[1]
    kept, dropped = without_proper_names(db)
    assert dropped == 0 and kept is db
    named = _instances([("person", "NOUN", "P", "John"), ("person", "NOUN", "P", "person")], np.ones((2, 4)))
    kept, dropped = without_proper_names(named)
    assert dropped == 1 and kept.table.column("surface").to_pylist() == ["person"]
