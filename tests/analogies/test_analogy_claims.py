"""The analogies paper's claims: every criterion on hand-made numbers (an interval above, below, straddling its
line), the findings built from hand-made tables, and the new computations (the pair bootstrap of the score terms,
method accuracies) against brute-force references."""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pytest

from lexprobe.analogies import analogy_claims as ac
from lexprobe.analogies.analogy import share_intervals
from lexprobe.analogies.analogy_evaluation import (accuracy_intervals, matching_rows, relation_accuracy,
                                                   sampled_questions, seed_interval)
from lexprobe.analogies.decomposition import (decompose, pair_set_terms, relation_intervals,
                                              resampled_means)
from lexprobe.core.findings import AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE, Evidence
from lexprobe.core.intervals import wilson
from lexprobe.sources.datasets.bats import Relation


# ------------------------------------------------------------------------------------ rules of judgement


def test_nonzero_rule():
    assert ac.nonzero(Evidence("ocs", 0.1, 0.05, 0.15), 0.01) == AGREES          # excludes 0, above
    assert ac.nonzero(Evidence("ocs", -0.1, -0.15, -0.05), 0.01) == AGREES       # excludes 0, below
    assert ac.nonzero(Evidence("ocs", 0.002, -0.004, 0.008), 0.01) == CONTRADICTS  # inside the zero band
    assert ac.nonzero(Evidence("ocs", 0.01, -0.004, 0.03), 0.01) == INCONCLUSIVE  # straddles 0, leaves the band
    assert ac.nonzero(Evidence("ocs", 0.01, 0.0, 0.03), 0.01) == INCONCLUSIVE     # touches 0
    assert ac.nonzero(Evidence("ocs", float("nan")), 0.01) == UNTESTABLE


def test_cells_verdict_every_and_almost_every_cell():
    assert ac.cells_verdict(40, 0, 40) == AGREES
    assert ac.cells_verdict(39, 0, 40) == INCONCLUSIVE          # one interval straddles: open
    assert ac.cells_verdict(39, 1, 40) == CONTRADICTS           # one wholly on the other side
    assert ac.cells_verdict(36, 4, 40, share=0.9) == AGREES     # "almost always": four may fail
    assert ac.cells_verdict(35, 4, 40, share=0.9) == INCONCLUSIVE
    assert ac.cells_verdict(35, 5, 40, share=0.9) == CONTRADICTS
    assert ac.cells_verdict(0, 0, 0) == UNTESTABLE


def test_exists_verdict():
    assert ac.exists_verdict(1, 20, 25) == AGREES
    assert ac.exists_verdict(0, 25, 25) == CONTRADICTS
    assert ac.exists_verdict(0, 24, 25) == INCONCLUSIVE
    assert ac.exists_verdict(0, 0, 0) == UNTESTABLE


def test_cell_evidence_shows_the_deciding_cell():
    cells = [(Evidence("A", 0.3, 0.2, 0.4), AGREES), (Evidence("B", 0.05, -0.01, 0.1), INCONCLUSIVE),
             (Evidence("C", 0.01, -0.02, 0.04), INCONCLUSIVE)]
    evidence, listing = ac.cell_evidence(cells, worst=lambda e: -e.value)
    assert evidence[0].name == "C" and evidence[1].text() == "cells agreeing 1/3"
    assert evidence[2].text() == "cells contradicting 0/3" and "B 0.0500" in listing
    assert ac.cell_evidence(cells, exists=True)[0][0].name == "A"


def _honest(shares: dict, n: int):
    return ac.honest_returns_b(share_intervals(shares, n), n, dataset="Google", section="g")


def test_honest_test_claim():
    clear = _honest({"b": 0.55, "a*": 0.1, "a": 0.05, "gold b*": 0.25, "other": 0.05}, 2000)
    assert clear.verdict == AGREES and clear.evidence[1].name == "gold b*"  # the runner-up next
    assert clear.quote.startswith("Linzen 2016 observes") and clear.where.startswith("Section 3")
    close = _honest({"b": 0.40, "a*": 0.05, "a": 0.05, "gold b*": 0.38, "other": 0.12}, 500)  # intervals overlap
    assert close.verdict == INCONCLUSIVE
    assert _honest({"b": 0.2, "a*": 0.1, "a": 0.05, "gold b*": 0.6, "other": 0.05}, 2000).verdict == CONTRADICTS


def test_honest_verdict_on_random_shares():
    """Agrees exactly when b's interval lies above every other one, contradicts exactly when one lies above b's."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = rng.dirichlet(np.ones(5) * 0.7)
        n = int(rng.integers(20, 400))
        rows = share_intervals(dict(zip(("b", "a*", "a", "gold", "other"), map(float, p))), n)
        above = all(rows[0]["low"] > r["high"] for r in rows[1:])
        below = any(r["low"] > rows[0]["high"] for r in rows[1:])
        verdict = ac.honest_returns_b(rows, n, dataset="BATS", section="a").verdict
        assert (verdict == AGREES) == above and (verdict == CONTRADICTS) == below


# ------------------------------------------------------------------------------ Figures 1, 8 and 2


def _interval_rows(values: dict[str, list[tuple[float, float, float]]], n: int = 40) -> list[dict]:
    """Rows of relation_intervals: column -> (mean, low, high) per relation (the last given repeats)."""
    rows = []
    for k in range(n):
        row = {"relation": f"R{k:02d} [r]", "category": "inflectional" if k < n // 2 else "lexicographic",
               "pairs": 50, "tuples": 2450}
        for col, triples in values.items():
            mean, low, high = triples[min(k, len(triples) - 1)]
            row.update({col: mean, f"{col}_low": low, f"{col}_high": high})
        rows.append(row)
    return rows


def _figure1_rows(offset_last=(0.1, 0.05, 0.15), gap_bad: int = 0, gap_open: int = 0) -> list[dict]:
    gaps = [(0.3, 0.2, 0.4)] * (40 - gap_bad - gap_open) + [(-0.2, -0.3, -0.1)] * gap_bad + \
        [(0.0, -0.1, 0.1)] * gap_open
    return _interval_rows({"within": [(0.6, 0.5, 0.7)], "offset": [(0.1, 0.05, 0.15)] * 39 + [offset_last],
                           "within_minus_offset": gaps, "within_minus_start": [(0.4, 0.3, 0.5)],
                           "within_plus_start": [(0.8, 0.7, 0.9)]})


def test_figure1_parts():
    within, smaller, positive = ac.figure1(_figure1_rows(), section="a")
    assert (within.verdict, smaller.verdict, positive.verdict) == (AGREES, AGREES, AGREES)
    # L10's -0.0008 with an interval around 0: open, not contradicting
    positive = ac.figure1(_figure1_rows(offset_last=(-0.0008, -0.02, 0.018)), section="a")[2]
    assert positive.verdict == INCONCLUSIVE and positive.evidence[0].name == "R39 offset"
    assert positive.power_note()  # the smallest detectable effect is shown
    assert ac.figure1(_figure1_rows(offset_last=(-0.05, -0.08, -0.02)), section="a")[2].verdict == CONTRADICTS
    # "almost always": 4 of 40 may fail, 5 contradict
    assert ac.figure1(_figure1_rows(gap_bad=4), section="a")[1].verdict == AGREES
    assert ac.figure1(_figure1_rows(gap_bad=3, gap_open=2), section="a")[1].verdict == INCONCLUSIVE
    smaller = ac.figure1(_figure1_rows(gap_bad=5), section="a")[1]
    assert smaller.verdict == CONTRADICTS and ac.GLOVE_CAUSE in smaller.details
    # part (1) fails in a relation where the offset term beats the within-pair term: that part is shown
    first = ac.figure1(_figure1_rows(gap_bad=1), section="a")[0]
    assert first.verdict == CONTRADICTS and first.evidence[0].name == "R39 within - offset"


def _means(**columns) -> list[dict]:
    """Relation rows with the given per-relation means (lists of 8) and categories in two strata."""
    return [{"relation": f"R{k}", "category": "a" if k < 4 else "b", **{c: v[k] for c, v in columns.items()}}
            for k in range(8)]


def test_figure8_similar_terms():
    spread = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65]
    similar = _means(ref_within=spread, ref_offset=[v - 0.01 for v in spread])
    assert ac.figure8(similar, section="a", seed=0).verdict == AGREES
    apart = _means(ref_within=[v + 0.5 for v in spread], ref_offset=spread)  # gap 0.5, spread about 0.4
    assert ac.figure8(apart, section="a", seed=0).verdict == CONTRADICTS
    noisy = _means(ref_within=[0.5, 0.5, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5],  # gap 0.4 in one relation only
                   ref_offset=[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5])
    assert ac.figure8(noisy, section="a", seed=0).verdict == INCONCLUSIVE


def _delta_rows(delta, norm, offset, bob):
    rows = _means(delta_sim=delta, delta_norm=norm, delta_offset=offset, delta_b_ob=bob)
    for r in rows:
        r.update({"delta_sim_low": r["delta_sim"] - 0.01, "delta_sim_high": r["delta_sim"] + 0.01})
    return rows


def test_figure2_parts():
    rows = _delta_rows([-0.2] * 8, [0.01] * 8, [0.1] * 8, [-0.3] * 8)
    negative, norm, offset = ac.figure2(rows, section="a", seed=0)
    assert (negative.verdict, norm.verdict, offset.verdict) == (AGREES, AGREES, AGREES)
    assert negative.evidence[0].value == pytest.approx(-0.2) and negative.evidence[1].text() == \
        "relations with Delta_sim < 0 8/8"
    assert norm.evidence[0].value == pytest.approx(0.01 - 0.1)
    rows = _delta_rows([0.2] * 8, [0.35] * 8, [0.4] * 8, [-0.3] * 8)
    assert [f.verdict for f in ac.figure2(rows, section="a", seed=0)] == [CONTRADICTS] * 3
    mixed = _delta_rows([-0.3, 0.3] * 4, [0.01] * 8, [0.1, 0.5] * 4, [-0.3] * 8)
    assert [f.verdict for f in ac.figure2(mixed, section="a", seed=0)][::2] == [INCONCLUSIVE, INCONCLUSIVE]


# ------------------------------------------------------------------------------------- solvers


def _questions(relations: dict[str, list[bool]]) -> pa.Table:
    rel = [r for r, c in relations.items() for _ in c]
    return pa.table({"relation": rel, "category": [("inflectional" if r < "M" else "lexicographic") for r in rel],
                     "correct": [x for c in relations.values() for x in c]})


def test_relation_accuracy_and_intervals_by_hand():
    t1 = _questions({"A": [True, False, True, True], "Z": [False, False]})
    t2 = _questions({"A": [False, False, True, True], "Z": [True, False]})
    assert relation_accuracy([t1]) == {"A": 0.75, "Z": 0.0}
    assert relation_accuracy([t1, t2]) == {"A": 0.625, "Z": 0.25}  # mean over seeds
    rows = accuracy_intervals({"add": [t1], "lrcos": [t1, t2]})
    add_all = next(r for r in rows if r["method"] == "add" and r["category"] == "all")
    assert (add_all["questions"], add_all["accuracy"]) == (6, 0.5)
    assert (add_all["low"], add_all["high"]) == pytest.approx(wilson(3, 6))
    lr_inf = next(r for r in rows if r["method"] == "lrcos" and r["category"] == "inflectional")
    assert (lr_inf["seeds"], lr_inf["questions"], lr_inf["accuracy"]) == (2, 4, 0.625)
    assert (lr_inf["low"], lr_inf["high"]) == pytest.approx(wilson(2, 4))  # 0.625 x 4 = 2.5 rounds to 2


def test_seed_interval_by_hand():
    mean, low, high = seed_interval([0.5, 0.6, 0.7])  # sd 0.1, se 0.1 / sqrt 3, t(2) 97.5% = 4.302653
    assert mean == pytest.approx(0.6) and (high - mean) == pytest.approx(4.302653 * 0.1 / np.sqrt(3), rel=1e-5)
    assert low == pytest.approx(2 * mean - high)
    one = seed_interval([0.4])
    assert one[0] == 0.4 and np.isnan(one[1]) and np.isnan(one[2])


def _method_tables(gap: float, noise: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    rels = {f"{c}{k:02d}": [] for c in "AZ" for k in range(10)}
    better, worse = {}, {}
    for r in rels:
        p = rng.uniform(0.3, 0.6)
        worse[r] = rng.random(200) < p
        better[r] = rng.random(200) < p + gap + rng.normal(0, noise)
    return _questions(better), _questions(worse)


def test_pairdirection_fails():
    add, pairdir = _method_tables(0.3, 0.02)
    finding = ac.pairdirection_fails(add, pairdir, section="a", seed=0)
    assert finding.verdict == AGREES and finding.quote.startswith("Levy and Goldberg 2014 showed")
    a, p = (t.column("correct").to_numpy(zero_copy_only=False) for t in (add, pairdir))
    assert finding.evidence[1].value == int((a & ~p).sum()) and finding.evidence[1].n == len(a)
    assert ac.pairdirection_fails(pairdir, add, section="a", seed=0).verdict == CONTRADICTS
    same, other = _method_tables(0.0, 0.2, seed=3)
    assert ac.pairdirection_fails(same, other, section="a", seed=0).verdict == INCONCLUSIVE


def test_sampled_questions_and_matching_rows():
    pairs = [(f"s{k}", [f"e{k}"]) for k in range(6)]
    big, small = Relation("R01 [big]", "R01", "c", "f", pairs), Relation("R02 [small]", "R02", "c", "f", pairs[:2])
    sample = sampled_questions([big, small], 5, seed=0)
    ii, jj = sample[0].question_index()
    assert len(ii) == 5 and len(set(zip(ii.tolist(), jj.tolist()))) == 5 and (ii != jj).all()
    assert sample[1].questions is None                      # 2 questions, fewer than 5: kept whole
    assert sampled_questions([big], 5, seed=0)[0].questions == sample[0].questions  # seeded
    assert sampled_questions([big], 5, seed=1)[0].questions != sample[0].questions
    table = pa.table({"relation": ["R"] * 3, "a": ["x", "y", "z"], "a_star": ["X", "Y", "Z"], "b": ["y", "z", "x"],
                      "correct": [True, False, True]})
    like = pa.table({"relation": ["R", "R"], "a": ["z", "x"], "a_star": ["Z", "X"], "b": ["x", "y"]})
    assert matching_rows(table, like).column("correct").to_pylist() == [True, True]
    assert matching_rows(table, like).column("a").to_pylist() == ["z", "x"]


def test_pairdirection_on_a_sample_names_its_power():
    add, pairdir = _method_tables(0.3, 0.02)
    finding = ac.pairdirection_fails(add, pairdir, section="a", seed=0, population=100_000)
    assert "of the 100000 questions" in finding.details[0]
    assert f"{finding.evidence[0].detectable:.3g}"[:4] in finding.details[0]


def test_drozd_findings_order_of_methods():
    categories = {f"{c}{k:02d}": c for c in "AZ" for k in range(10)}
    base = {r: 0.3 + 0.01 * k for k, r in enumerate(categories)}
    accuracy = {"add": base, "avg": {r: v + 0.1 for r, v in base.items()},
                "lrcos": {r: v + 0.05 + (0.02 if k % 2 else -0.02) for k, (r, v) in enumerate(base.items())}}
    avg_add, lrcos_add, lrcos_avg = ac.drozd_findings(accuracy, categories, lrcos_seeds=(0, 1, 2), section="a",
                                                      seed=0)
    assert (avg_add.verdict, lrcos_add.verdict, lrcos_avg.verdict) == (AGREES, AGREES, CONTRADICTS)
    assert avg_add.evidence[0].value == pytest.approx(0.1) and "3 seeds" in lrcos_add.criterion.text
    assert lrcos_avg.where.startswith("Drozd") and lrcos_avg.details == (ac.DROZD_CAUSE,)
    assert avg_add.details == ()


# -------------------------------------------------------------------------------- Table 1, Figure 5


CATS = ("inflectional", "derivational", "encyclopedic", "lexicographic")


def _sets(ocs: dict[str, float], pcs: dict[str, float], *, relations: int = 10, replicates: int = 10,
          jitter: float = 0.002, bats_pcs=None, positive: float = 0.9, seed: int = 0) -> list[dict]:
    """Per-set rows as table1 writes them: every kind's OCS and PCS about the given value in every relation."""
    rng = np.random.default_rng(seed)
    rows = []
    for c, cat in enumerate(CATS):
        for k in range(relations):
            rel = f"{cat[0].upper()}{k:02d}"
            p = bats_pcs[cat] if bats_pcs else pcs["bats"]
            rows.append({"set": "bats", "replicate": -1, "relation": rel, "category": cat, "ocs": ocs["bats"],
                         "pcs": p + rng.normal(0, jitter), "positive_share": positive + rng.normal(0, jitter)})
            for kind in (k for k in ocs if k != "bats"):
                for rep in range(replicates):
                    rows.append({"set": kind, "replicate": rep, "relation": rel, "category": cat,
                                 "ocs": ocs[kind] + rng.normal(0, jitter), "pcs": pcs[kind] + rng.normal(0, jitter),
                                 "positive_share": float("nan")})
    return rows


GOOD_OCS = {"bats": 0.2, "permuted": 0.1, "mismatched-within": 0.15, "mismatched-across": 0.14,
            "random-start": 0.12, "random-end": 0.08, "random-both": 0.0}
CHANCE = {k: 0.5 for k in GOOD_OCS} | {"bats": 0.7}
SEMANTIC_LOW = {"inflectional": 0.8, "derivational": 0.75, "encyclopedic": 0.6, "lexicographic": 0.55}


def _by_key(findings):
    keys = {v: k for k, v in ac.QUOTES.items()}
    return {keys[(f.quote, f.where)]: f for f in findings}


def test_table1_findings_agree_on_the_papers_pattern():
    found = _by_key(ac.table1_findings(_sets(GOOD_OCS | {"mismatched-within": 0.25}, CHANCE,
                                             bats_pcs=SEMANTIC_LOW), section="o", seed=0))
    assert {k: f.verdict for k, f in found.items()} == {
        "ocs-zero": AGREES, "ocs-nonzero": AGREES, "ocs-higher": AGREES, "start-end": AGREES, "permuted": AGREES,
        "pcs-bats": AGREES, "pcs-random": AGREES, "pcs-semantic": AGREES}
    assert found["ocs-higher"].evidence[0].name.startswith("mismatched-within/")  # the cell above BATS
    assert found["pcs-bats"].evidence[1].text() == "cells agreeing 5/5"        # four categories and all
    assert found["ocs-nonzero"].evidence[1].n == 25                            # five kinds x five cells


def test_table1_findings_contradicted():
    bad_ocs = GOOD_OCS | {"bats": 0.4, "random-both": 0.1, "permuted": 0.3, "random-start": 0.05,
                          "random-end": 0.12, "mismatched-within": 0.0, "mismatched-across": 0.0}
    bad_pcs = {k: 0.6 for k in GOOD_OCS}
    semantic_high = {"inflectional": 0.42, "derivational": 0.4, "encyclopedic": 0.47, "lexicographic": 0.48}
    found = _by_key(ac.table1_findings(_sets(bad_ocs, bad_pcs, bats_pcs=semantic_high), section="o", seed=0))
    assert {k: f.verdict for k, f in found.items()} == {
        "ocs-zero": CONTRADICTS, "ocs-nonzero": CONTRADICTS, "ocs-higher": CONTRADICTS, "start-end": CONTRADICTS,
        "permuted": CONTRADICTS, "pcs-bats": CONTRADICTS, "pcs-random": CONTRADICTS, "pcs-semantic": CONTRADICTS}
    assert found["ocs-nonzero"].evidence[0].name.startswith("mismatched")  # a zero cell decides


def test_table1_findings_open_where_intervals_straddle():
    # every relation's value alternates around the line, so the mean's interval straddles it
    rows = _sets(GOOD_OCS | {"random-start": 0.1, "random-end": 0.1}, CHANCE, jitter=0.0)
    for r in rows:
        if r["set"] == "random-start":
            r["ocs"] += 0.05 if int(r["relation"][1:]) % 2 else -0.05
    found = _by_key(ac.table1_findings(rows, section="o", seed=0))
    assert found["start-end"].verdict == INCONCLUSIVE and found["start-end"].power_note()


def test_table1_zero_tolerance_is_the_sets_iqr():
    """The fully random set is zero up to one IQR of its own OCS: a mean at 0.3 IQR agrees, at 3 IQR contradicts."""
    for offset, verdict in ((0.3, AGREES), (3.0, CONTRADICTS)):
        rows = _sets(GOOD_OCS, CHANCE, jitter=0.01, seed=1)
        both = [r for r in rows if r["set"] == "random-both"]
        iqr = np.subtract(*np.percentile([r["ocs"] for r in both], [75, 25]))
        shift = offset * iqr - np.mean([r["ocs"] for r in both])
        for r in both:
            r["ocs"] += shift
        assert _by_key(ac.table1_findings(rows, section="o", seed=0))["ocs-zero"].verdict == verdict


def test_figure5_and_within_pcs():
    rows = _sets(GOOD_OCS, CHANCE, positive=0.9)
    assert ac.figure5(rows, section="o", seed=0).verdict == AGREES
    assert ac.figure5(_sets(GOOD_OCS, CHANCE, positive=0.3), section="o", seed=0).verdict == CONTRADICTS
    bats = [r for r in rows if r["set"] == "bats"]
    order = sorted(bats, key=lambda r: r["pcs"])
    rising = {r["relation"]: 0.1 + 0.01 * k for k, r in enumerate(order)}
    assert ac.within_pcs(rising, rows, section="o", seed=0).verdict == AGREES
    falling = {k: -v for k, v in rising.items()}
    found = ac.within_pcs(falling, rows, section="o", seed=0)
    assert found.verdict == CONTRADICTS and found.evidence[0].value == pytest.approx(-1.0)
    accuracy = {r: 0.5 + 0.1 * np.sin(k) for k, r in enumerate(rising)}  # unrelated to the order
    unrelated = ac.within_accuracy(rising, accuracy, section="a", seed=0)
    assert unrelated.verdict == INCONCLUSIVE and unrelated.quote.startswith("Rogers et al. 2017")
    assert ac.within_accuracy(rising, {r: 2 * v for r, v in rising.items()}, section="a", seed=0).verdict == AGREES


def test_difference_and_mean_intervals():
    d, low, high = ac.difference_interval([0.2, 0.2, 0.2], [0.5, 0.5], seed=0)
    assert (d, low, high) == pytest.approx((-0.3, -0.3, -0.3))
    m, low, high = ac.mean_interval([1.0, 2.0, 3.0, 4.0], seed=0)
    assert m == pytest.approx(2.5) and 1.0 <= low < 2.5 < high <= 4.0


# ------------------------------------------------------------------------- the pair bootstrap


def test_resampled_means_brute_force():
    """A resample's mean over the tuples of drawn pairs equals the mean over every ordered pair of draw positions
    whose pairs differ (a pair drawn twice pairs with itself in no tuple)."""
    rng = np.random.default_rng(4)
    n = 5
    values = rng.normal(size=(n, n))
    counts = np.ones((n, n)) - np.eye(n)
    sums = values * counts
    draws = np.array([[2, 0, 1, 1, 1], [5, 0, 0, 0, 0], [0, 3, 0, 0, 2]], dtype=float)
    got = resampled_means(sums, counts, draws)
    for row, value in zip(draws, got):
        positions = np.repeat(np.arange(n), row.astype(int))
        pairs = [(i, j) for i, j in itertools.permutations(positions.tolist(), 2) if i != j]
        if not pairs:
            assert np.isnan(value)          # one pair drawn n times: no tuple
        else:
            assert value == pytest.approx(np.mean([values[i, j] for i, j in pairs]))


def _tuple_table(values: np.ndarray, relation: str = "R01 [r]") -> pa.Table:
    n = values.shape[0]
    ii, jj = np.nonzero(~np.eye(n, dtype=bool))
    return pa.table({"relation": [relation] * len(ii), "category": ["c"] * len(ii),
                     "a": [f"w{i}" for i in ii], "b": [f"w{j}" for j in jj], "x": values[ii, jj]})


def test_relation_intervals():
    rng = np.random.default_rng(5)
    values = rng.normal(0.3, 0.1, size=(12, 12))
    table = _tuple_table(values)
    row = relation_intervals(table, {"x": table.column("x").to_numpy()}, seed=0)[0]
    assert (row["pairs"], row["tuples"]) == (12, 132)
    assert row["x"] == pytest.approx(values[~np.eye(12, dtype=bool)].mean())
    assert row["x_low"] < row["x"] < row["x_high"]
    flat = _tuple_table(np.full((6, 6), 0.25))
    row = relation_intervals(flat, {"x": flat.column("x").to_numpy()}, seed=0)[0]
    assert (row["x"], row["x_low"], row["x_high"]) == pytest.approx((0.25, 0.25, 0.25))
    # a pair bootstrap is wider than a tuple bootstrap when a pair carries its effect into all its tuples
    pair_effect = rng.normal(0, 0.2, 12)
    clustered = 0.3 + pair_effect[:, None] + pair_effect[None, :] + rng.normal(0, 0.01, (12, 12))
    table = _tuple_table(clustered)
    row = relation_intervals(table, {"x": table.column("x").to_numpy()}, seed=0)[0]
    x = table.column("x").to_numpy()
    tuple_means = x[rng.integers(0, len(x), (1000, len(x)))].mean(axis=1)
    assert row["x_high"] - row["x_low"] > 3 * np.subtract(*np.quantile(tuple_means, [0.975, 0.025]))


def test_pair_set_terms_brute_force():
    rng = np.random.default_rng(6)
    vectors = rng.normal(size=(10, 4))
    starts, ends = np.array([0, 1, 2, 3]), np.array([5, 6, 7, 8])
    terms = pair_set_terms(vectors, starts, ends)
    rows = [decompose(vectors[[starts[i]]], vectors[[ends[i]]], vectors[[starts[j]]], vectors[[ends[j]]])
            for i in range(4) for j in range(4) if i != j]
    for name in ("within", "offset", "delta_sim"):
        assert terms[name] == pytest.approx(np.mean([r[name][0] for r in rows]))
    b, bs = vectors[starts[1]], vectors[ends[1]]
    q = b + vectors[ends[0]] - vectors[starts[0]]
    assert rows[0]["within"][0] == pytest.approx(b @ bs / (np.linalg.norm(q) * np.linalg.norm(bs)))
