"""WNLaMPro's metrics by hand on arrays (no model): rank = min over the entry's queries, RR with the cut-off
inclusive (rank <= cutoff counts), precision@i = max over queries, means over every entry of a group (RR 0
included). Mutation testing."""

from __future__ import annotations

import numpy as np
import pytest

from lexprobe.rare_words.probing import aggregate
from lexprobe.rare_words.probing_scores import entry_scores, random_scores


def test_entry_scores_by_hand_with_the_cutoff_boundary():
    # entry 0: queries rank 7 and 3; entry 1: 100 and 120 (rank = cutoff: counts); entry 2: 101 (just past it)
    query_entry = np.array([0, 0, 1, 1, 2])
    ranks = np.array([7, 3, 120, 100, 101])
    targets = [[10, 11], [20], [30, 31, 32]]
    tops = np.array([
        [1, 10, 2, 3, 4, 5, 6, 7, 8, 11],       # entry 0, query 0: targets at places 2 and 10
        [10, 11, 2, 3, 4, 5, 6, 7, 8, 9],       # entry 0, query 1: both in the top 3
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 20],        # entry 1: place 10
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 0],         # entry 1: none
        [30, 31, 32, 1, 2, 3, 4, 5, 6, 7],      # entry 2: all three in the top 3
    ])
    out = entry_scores(query_entry, ranks, tops, targets, 3, cutoff=100)
    assert out["rank"].tolist() == [3, 100, 101]
    assert out["rr"].tolist() == pytest.approx([1 / 3, 1 / 100, 0.0])
    assert out["p@3"].tolist() == pytest.approx([2 / 3, 0.0, 1.0])
    assert out["p@10"].tolist() == pytest.approx([2 / 10, 1 / 10, 3 / 10])
    assert entry_scores(query_entry, ranks, tops, targets, 3, cutoff=101)["rr"].tolist() == \
        pytest.approx([1 / 3, 1 / 100, 1 / 101])
    assert entry_scores(query_entry, ranks, tops, targets, 3, cutoff=99)["rr"].tolist() == pytest.approx([1 / 3, 0, 0])
    one = entry_scores(np.array([0]), np.array([1]), tops[:1], [[1]], 1, cutoff=1, at=(1,))
    assert one["rr"].tolist() == [1.0] and one["p@1"].tolist() == [1.0]


def _row(strategy, entry, relation, bucket, rr, p3=0.0, p10=0.0):
    return {"strategy": strategy, "id": entry, "relation": relation, "bucket": bucket, "rr": rr, "p@3": p3,
            "p@10": p10, "random_rr": 0.01}


def test_bucket_means_count_every_entry_misses_included():
    rows = [_row("original", 0, "antonym", "rare", 0.0), _row("original", 1, "antonym", "rare", 0.5, 1 / 3, 0.1),
            _row("original", 2, "antonym", "rare", 0.0), _row("original", 3, "antonym", "frequent", 0.25),
            _row("ota", 0, "antonym", "rare", 1.0, 2 / 3, 0.2)]
    got = {(r["strategy"], r["bucket"]): r for r in aggregate(rows, by=("strategy", "bucket"))}
    assert got[("original", "rare")]["mrr"] == pytest.approx(0.5 / 3) and got[("original", "rare")]["n"] == 3
    assert got[("original", "rare")]["p@3"] == pytest.approx(1 / 9)
    assert got[("original", "rare")]["p@10"] == pytest.approx(0.1 / 3)
    assert got[("original", "all")]["mrr"] == pytest.approx(0.75 / 4) and got[("original", "all")]["n"] == 4
    assert got[("original", "frequent")]["mrr"] == 0.25 and got[("ota", "rare")]["mrr"] == 1.0
    assert got[("original", "rare")]["random_mrr"] == pytest.approx(0.01)
    # the rows come in the paper's order: strategies, then buckets, 'all' last
    assert list(got) == [("original", "rare"), ("original", "frequent"), ("original", "all"), ("ota", "rare"),
                         ("ota", "all")]


def test_random_baseline_single_target_and_many_patterns():
    # one target among V tokens, one query: E[RR] = (1/V) sum_{j<=cutoff} 1/j; P@i = 1/V * (1/i) * i = 1/V
    V = 50
    got = random_scores(np.array([1]), np.array([1]), V, cutoff=10, at=(3, 10))
    assert got["rr"][0] == pytest.approx(sum(1 / j for j in range(1, 11)) / V)
    assert got["p@3"][0] == pytest.approx(1 / V) and got["p@10"][0] == pytest.approx(1 / V)
    # P independent queries: the best rank is the minimum of P uniform ranks
    P = 3
    surv = lambda j: ((V - j + 1) / V) ** P  # P(min rank >= j)
    rr = sum((surv(j) - surv(j + 1)) / j for j in range(1, 11))
    got = random_scores(np.array([1]), np.array([P]), V, cutoff=10, at=(3,))
    assert got["rr"][0] == pytest.approx(rr)
    assert got["p@3"][0] == pytest.approx((1 - (1 - 3 / V) ** P) / 3)


def test_token_zero_is_not_a_padding_target():
    # entry 0 has two targets, entry 1 one: its row is padded; token 0 in its top must not count
    tops = np.array([[5, 6, 7], [0, 8, 9]])
    out = entry_scores(np.array([0, 1]), np.array([1, 4]), tops, [[5, 6], [3]], 2, cutoff=100, at=(3,))
    assert out["p@3"].tolist() == pytest.approx([2 / 3, 0.0])


def test_random_precision_when_targets_fill_the_top():
    """Brute force over every placement of 3 targets among 6 tokens, 2 independent queries: P@3 = max of the
    two queries' hits / 3, where all 3 of the top can be targets."""
    import itertools

    V, t = 6, 3
    hits = [sum(x < 3 for x in c) for c in itertools.combinations(range(V), t)]
    p3 = np.mean([max(a, b) / 3 for a in hits for b in hits])
    got = random_scores(np.array([t]), np.array([2]), V, cutoff=3, at=(3,))
    assert got["p@3"][0] == pytest.approx(p3)


def test_post_stratified_means_with_uneven_cells_by_hand():
    """Cells sampled unevenly: within bucket 'rare' antonym has 2 sampled entries standing for 10, hypernym 3 for
    60; bucket 'frequent' holds 1 (for 5) and 4 (for 8). Each entry weighs its cell's population / its cell's
    sampled entries of the same strategy, so a bucket's mean is sum_c N_c mean_c / sum_c N_c. Strategy 'ota' misses
    two hypernym entries (its cells' own counts divide). The bootstrap intervals of the same cells:
    tests/core/test_intervals.py."""
    from lexprobe.rare_words.probing_scores import bucket_gap, cell_weights, compare_strategies, mrr_interval

    population = {("antonym", "rare"): 10, ("hypernym", "rare"): 60, ("antonym", "frequent"): 5,
                  ("hypernym", "frequent"): 8}
    rows = [_row("original", 0, "antonym", "rare", 1.0, 1 / 3, 0.1),
            _row("original", 1, "antonym", "rare", 0.5, 0, 0.2),
            _row("original", 2, "hypernym", "rare", 0.0, 0, 0.0), _row("original", 3, "hypernym", "rare", 0.25, 0, 0.1),
            _row("original", 4, "hypernym", "rare", 0.5, 2 / 3, 0.3),
            _row("original", 5, "antonym", "frequent", 1.0, 1 / 3, 0.1),
            *[_row("original", 6 + i, "hypernym", "frequent", rr, 0, 0.1) for i, rr in enumerate((0.2, 0.2, 1.0, 0))],
            _row("ota", 0, "antonym", "rare", 0.5), _row("ota", 1, "antonym", "rare", 0.5),
            _row("ota", 2, "hypernym", "rare", 1.0), _row("ota", 5, "antonym", "frequent", 0.0),
            _row("ota", 6, "hypernym", "frequent", 0.25), _row("ota", 7, "hypernym", "frequent", 0.75)]
    for r, random_rr in zip(rows, (0.02, 0.04, 0.01, 0.01, 0.04, 0.05, 0.03, 0.03, 0.03, 0.03)):
        r["random_rr"] = random_rr
    assert cell_weights(rows, population).tolist() == pytest.approx(
        [5, 5, 20, 20, 20, 5, 2, 2, 2, 2, 5, 5, 60, 5, 4, 4])
    got = {(r["strategy"], r["bucket"]): r for r in aggregate(rows, by=("strategy", "bucket"), population=population)}
    rare, frequent, every = got[("original", "rare")], got[("original", "frequent")], got[("original", "all")]
    assert rare["mrr"] == pytest.approx((10 * 0.75 + 60 * 0.25) / 70)  # 0.3214; the sample's plain mean is 0.45
    assert rare["p@3"] == pytest.approx((10 * (1 / 6) + 60 * (2 / 9)) / 70)
    assert rare["p@10"] == pytest.approx((10 * 0.15 + 60 * 0.4 / 3) / 70)
    assert rare["random_mrr"] == pytest.approx((10 * 0.03 + 60 * 0.02) / 70)
    assert (rare["n"], rare["n_dataset"]) == (5, 70)
    assert frequent["mrr"] == pytest.approx((5 * 1.0 + 8 * 0.35) / 13)
    assert frequent["p@3"] == pytest.approx(5 / 3 / 13)
    assert frequent["random_mrr"] == pytest.approx((5 * 0.05 + 8 * 0.03) / 13)
    assert every["mrr"] == pytest.approx((10 * 0.75 + 60 * 0.25 + 5 * 1.0 + 8 * 0.35) / 83)
    assert (every["n"], every["n_dataset"]) == (10, 83)
    assert got[("ota", "rare")]["mrr"] == pytest.approx((10 * 0.5 + 60 * 1.0) / 70)
    assert got[("ota", "frequent")]["mrr"] == pytest.approx((5 * 0.0 + 8 * 0.5) / 13)
    by_cell = {(r["strategy"], r["relation"], r["bucket"]): r for r in aggregate(rows, population=population)}
    assert by_cell[("original", "hypernym", "all")]["mrr"] == pytest.approx((60 * 0.25 + 8 * 0.35) / 68)
    assert by_cell[("original", "hypernym", "rare")]["mrr"] == pytest.approx(0.25)  # one cell: the plain mean
    # the intervals' estimates are the table's numbers
    assert mrr_interval(rows, "original", bucket="rare", population=population, resamples=10)[0] == \
        pytest.approx(rare["mrr"])
    assert mrr_interval(rows, "original", relation="hypernym", bucket="all", population=population,
                        resamples=10)[0] == pytest.approx(by_cell[("original", "hypernym", "all")]["mrr"])
    assert bucket_gap(rows, "ota", "frequent", "rare", population=population, resamples=10)["difference"] == \
        pytest.approx(got[("ota", "frequent")]["mrr"] - got[("ota", "rare")]["mrr"])
    # paired over the 6 entries both strategies scored: cells' mean differences, weighted by their populations
    diff = compare_strategies(rows, "ota", "original", population=population, resamples=10)
    assert diff["entries"] == 6
    assert diff["difference"] == pytest.approx((10 * (0.0 - 0.5) / 2 + 60 * 1.0 + 5 * -1.0 + 8 * (0.05 + 0.55) / 2)
                                               / 83)


def test_relation_gap_within_relations_by_hand():
    """Frequent minus rare within each relation holding both buckets, weighted by the relations' entries in the
    two buckets: antonym (rare 1.0, 0.5; frequent 1.0) counts 10 + 5, hypernym (rare 0, 0.25, 0.5; frequent 0.2,
    0.2, 1.0, 0) 60 + 8; corruption has no frequent bucket and is left out."""
    from lexprobe.rare_words.probing_scores import relation_gap

    population = {("antonym", "rare"): 10, ("hypernym", "rare"): 60, ("antonym", "frequent"): 5,
                  ("hypernym", "frequent"): 8, ("corruption", "rare"): 500}
    values = {("antonym", "rare"): (1.0, 0.5), ("antonym", "frequent"): (1.0,),
              ("hypernym", "rare"): (0.0, 0.25, 0.5), ("hypernym", "frequent"): (0.2, 0.2, 1.0, 0.0),
              ("corruption", "rare"): (0.0, 0.0)}
    rows = [_row("original", n, rel, b, rr) for n, ((rel, b), rr) in enumerate(
        (c, rr) for c, v in values.items() for rr in v)]
    got = relation_gap(rows, "original", "frequent", "rare", population=population, resamples=500)
    assert got["relations"] == ["antonym", "hypernym"] and got["entries"] == 10
    assert got["difference"] == pytest.approx((15 * (1.0 - 0.75) + 68 * (0.35 - 0.25)) / 83)
    assert got["low"] <= got["difference"] <= got["high"]
    # pooled sd: squared deviations 0.125 + 0 + 0.125 + 0.59 over 10 - 4 degrees of freedom
    assert got["sd"] == pytest.approx(np.sqrt((0.125 + 0.125 + 0.59) / 6))
    plain = relation_gap(rows, "original", "frequent", "rare", resamples=10)  # the rows' own cell sizes weigh
    assert plain["difference"] == pytest.approx((3 * 0.25 + 7 * 0.1) / 10)
    none = relation_gap(rows, "original", "medium", "rare", resamples=10)
    assert np.isnan(none["difference"]) and none["relations"] == []
