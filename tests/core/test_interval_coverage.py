"""The intervals the findings use, checked by what they promise: drawn many times from a known distribution (fixed
seeds), a 95% interval covers the true value at a rate inside the binomial bounds of the number of draws; and the
ends are recomputed by hand (sorted resamples, numpy's linear order-statistic rule) from the very resamples the
function draws, one generator per call, so two mirrored strata cannot cancel."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, rankdata

from lexprobe.core.intervals import correlation_bootstrap, paired_bootstrap, wilson
from lexprobe.core.seeds import rng_for
from lexprobe.rare_words.probing_scores import bucket_gap, compare_strategies, mrr_interval

DRAWS = 400  # datasets per coverage check


def binomial_bounds(draws: int, rate: float = 0.95, tail: float = 0.0005) -> tuple[int, int]:
    """The counts of covering intervals out of ``draws`` that a true coverage ``rate`` gives with probability
    1 - 2 * ``tail`` (scipy's binomial quantiles)."""
    return int(binom.ppf(tail, draws, rate)), int(binom.ppf(1 - tail, draws, rate))


def percentile(values, q: float) -> float:
    """numpy's default quantile by hand: the sorted values' linear interpolation at position q (n - 1)."""
    s = sorted(values)
    h = q * (len(s) - 1)
    lo = math.floor(h)
    return s[lo] + (h - lo) * (s[min(lo + 1, len(s) - 1)] - s[lo])


def covered(intervals, truth) -> int:
    return sum(low <= truth <= high for low, high in intervals)


# ------------------------------------------------------------------------------------------------ coverage


def test_wilson_covers_a_binomial_share_at_its_level():
    """Wilson's coverage at (n, p) summed exactly over the binomial pmf is near 95% (Brown, Cai & DasGupta 2001,
    Fig. 4: within about 0.93-0.97 for n >= 40 away from the edges), and the share of DRAWS sampled counts covering
    p is inside the binomial bounds of that exact rate."""
    rng = np.random.default_rng(11)
    for n, p in ((40, 0.3), (100, 0.1), (250, 0.62)):
        ends = np.array([wilson(k, n) for k in range(n + 1)])
        exact = binom.pmf(np.arange(n + 1), n, p)[(ends[:, 0] <= p) & (p <= ends[:, 1])].sum()
        assert 0.93 <= exact <= 0.97, (n, p, exact)
        counts = rng.binomial(n, p, DRAWS)
        lo, hi = binomial_bounds(DRAWS, exact)
        assert lo <= covered([wilson(int(k), n) for k in counts], p) <= hi


def test_paired_bootstrap_covers_the_mean_difference():
    """Pairs (a, a - e) with e ~ N(0.2, 1): the true mean difference is 0.2; a's own spread (sd 3) must cancel."""
    rng = np.random.default_rng(12)
    got = []
    for i in range(DRAWS):
        a = rng.normal(0.0, 3.0, 60)
        b = a - rng.normal(0.2, 1.0, 60)
        got.append(paired_bootstrap(a, b, resamples=400, seed=i)[1:])
    lo, hi = binomial_bounds(DRAWS)
    assert lo <= covered(got, 0.2) <= hi  # the percentile bootstrap under-covers slightly at n = 60
    assert np.mean([h - l for l, h in got]) == pytest.approx(2 * 1.96 / math.sqrt(60), rel=0.1)  # not a's spread


def test_stratified_bootstrap_covers_the_population_mean_with_and_without_weights():
    """Two strata sampled 20 and 40 pairs, true mean differences 0 and 1. Weighted 3 : 1 (the strata's sizes in
    the population) the true value is 0.25; unweighted (the sample proportional) it is 40/60."""
    rng = np.random.default_rng(13)
    strata = ["s"] * 20 + ["t"] * 40
    weighted, plain = [], []
    for i in range(DRAWS):
        d = np.concatenate([rng.normal(0.0, 1.0, 20), rng.normal(1.0, 1.0, 40)])
        weighted.append(paired_bootstrap(d, np.zeros(60), strata=strata, weights={"s": 3, "t": 1}, resamples=400,
                                         seed=i)[1:])
        plain.append(paired_bootstrap(d, np.zeros(60), strata=strata, resamples=400, seed=i)[1:])
    lo, hi = binomial_bounds(DRAWS)
    assert lo <= covered(weighted, 0.25) <= hi
    assert lo <= covered(plain, 40 / 60) <= hi


def test_correlation_bootstrap_covers_pearson_and_spearman():
    """Bivariate normal with rho = 0.5: Pearson's true value is rho, Spearman's (6 / pi) asin(rho / 2)
    (Pearson 1907; Kendall & Stuart)."""
    rng = np.random.default_rng(14)
    rho, n = 0.5, 120
    cov = [[1.0, rho], [rho, 1.0]]
    got = {"pearson": [], "spearman": []}
    for i in range(DRAWS):
        x, y = rng.multivariate_normal([0.0, 0.0], cov, n).T
        for name, ends in correlation_bootstrap(x, y, resamples=250, seed=i).items():
            got[name].append(ends)
    lo, hi = binomial_bounds(DRAWS)
    assert lo <= covered(got["pearson"], rho) <= hi
    assert lo <= covered(got["spearman"], 6 / math.pi * math.asin(rho / 2)) <= hi


def _rows(rng, cells: dict, strategy: str = "original") -> list[dict]:
    """Rows of RR values: cell (relation, bucket) -> (count, probability of RR 1 else RR drawn uniform on [0, 1/2])."""
    rows = []
    for (relation, bucket), (count, p) in cells.items():
        rr = np.where(rng.random(count) < p, 1.0, rng.uniform(0.0, 0.5, count))
        rows += [{"strategy": strategy, "id": len(rows) + j, "relation": relation, "bucket": bucket, "rr": float(v)}
                 for j, v in enumerate(rr)]
    return rows


def test_post_stratified_mrr_and_bucket_gap_cover_the_population_values():
    """Cells sampled 30 entries each, standing for populations 100, 20, 50 and 10: a cell's true mean RR is
    p + (1 - p) / 4, the bucket's MRR the population-weighted mean of its cells' means."""
    rng = np.random.default_rng(15)
    cells = {("antonym", "rare"): (30, 0.2), ("hypernym", "rare"): (30, 0.6),
             ("antonym", "frequent"): (30, 0.5), ("hypernym", "frequent"): (30, 0.9)}
    population = {("antonym", "rare"): 100, ("hypernym", "rare"): 20, ("antonym", "frequent"): 50,
                  ("hypernym", "frequent"): 10}
    mean = {c: p + (1 - p) / 4 for c, (_, p) in cells.items()}

    def truth(bucket):
        keys = [c for c in cells if c[1] == bucket]
        return sum(population[c] * mean[c] for c in keys) / sum(population[c] for c in keys)

    mrr, gaps = [], []
    for i in range(DRAWS):
        rows = _rows(rng, cells)
        mrr.append(mrr_interval(rows, "original", bucket="rare", population=population, resamples=400, seed=i)[1:])
        g = bucket_gap(rows, "original", "frequent", "rare", population=population, resamples=400, seed=i)
        gaps.append((g["low"], g["high"]))
    lo, hi = binomial_bounds(DRAWS)
    assert lo <= covered(mrr, truth("rare")) <= hi
    assert lo <= covered(gaps, truth("frequent") - truth("rare")) <= hi


# ------------------------------------------------------------------------------- the ends from the same resamples


def test_paired_bootstrap_ends_by_hand_from_its_resamples():
    """One generator per call, default_rng(seed), drawing each stratum's indices in the strata's sorted order;
    the ends are the 2.5% and 97.5% order statistics (interpolated) of the weighted resampled means."""
    d = np.array([0.3, -1.2, 2.0, 0.7, 1.1, -0.4, 0.0, 2.5, 0.9])
    strata = ["y", "x", "y", "x", "y", "y", "x", "z", "z"]
    weights = {"x": 2.0, "y": 1.0, "z": 5.0}
    R, seed = 301, 7
    rng = np.random.default_rng(seed)
    draws = {k: rng.integers(0, strata.count(k), size=(R, strata.count(k))) for k in ("x", "y", "z")}
    values = {k: d[[s == k for s in strata]] for k in "xyz"}
    means = [sum(weights[k] * values[k][draws[k][r]].mean() for k in "xyz") / 8 for r in range(R)]
    diff, low, high = paired_bootstrap(d, np.zeros(len(d)), strata=strata, weights=weights, resamples=R, seed=seed)
    assert diff == pytest.approx(sum(weights[k] * values[k].mean() for k in "xyz") / 8, abs=1e-12)
    assert (low, high) == pytest.approx((percentile(means, 0.025), percentile(means, 0.975)), abs=1e-12)
    _, low90, high90 = paired_bootstrap(d, np.zeros(len(d)), strata=strata, weights=weights, resamples=R, seed=seed,
                                        level=0.9)
    assert (low90, high90) == pytest.approx((percentile(means, 0.05), percentile(means, 0.95)), abs=1e-12)
    # no strata: one stratum, its draws the generator's first
    idx = np.random.default_rng(seed).integers(0, len(d), size=(R, len(d)))
    pooled = [d[i].mean() for i in idx]
    assert paired_bootstrap(d, np.zeros(len(d)), resamples=R, seed=seed)[1:] == pytest.approx(
        (percentile(pooled, 0.025), percentile(pooled, 0.975)), abs=1e-12)


def test_correlation_bootstrap_ends_by_hand_from_its_resamples():
    """The resamples are rng_for(seed, "correlation-bootstrap")'s; each one's Pearson (numpy's corrcoef) and
    Spearman (Pearson's of the ranks with ties averaged), constant resamples left out."""
    x = np.array([1.0, 2.0, 2.0, 3.5, 4.0, 7.0, 7.5])
    y = np.array([2.0, 1.0, 3.0, 3.0, 6.0, 5.0, 9.0])
    R, seed = 257, 4
    take = rng_for(seed, "correlation-bootstrap").integers(0, len(x), size=(R, len(x)))
    pearson, spearman = [], []
    for t in take:
        a, b = x[t], y[t]
        if len(set(a)) > 1 and len(set(b)) > 1:
            pearson.append(np.corrcoef(a, b)[0, 1])
            spearman.append(np.corrcoef(rankdata(a), rankdata(b))[0, 1])
    got = correlation_bootstrap(x, y, resamples=R, seed=seed)
    assert got["pearson"] == pytest.approx((percentile(pearson, 0.025), percentile(pearson, 0.975)), abs=1e-12)
    assert got["spearman"] == pytest.approx((percentile(spearman, 0.025), percentile(spearman, 0.975)), abs=1e-12)


def test_mrr_interval_and_bucket_gap_ends_by_hand_from_their_resamples():
    """One generator per call: mrr_interval draws its cells in sorted (relation, bucket) order; bucket_gap draws
    the high bucket's cells, then the low bucket's, from the same generator."""
    sizes = {("a", "rare"): 6, ("b", "rare"): 7, ("a", "frequent"): 8, ("b", "frequent"): 5}
    rr = iter(np.random.default_rng(21).random(sum(sizes.values())))  # distinct values: no plateau at the ends
    rows = [{"strategy": "s", "id": i, "relation": rel, "bucket": b, "rr": float(next(rr))}
            for i, (rel, b) in enumerate(c for c, size in sizes.items() for _ in range(size))]
    population = {("a", "rare"): 4, ("b", "rare"): 9, ("a", "frequent"): 7, ("b", "frequent"): 2}
    cells = {c: np.array([r["rr"] for r in rows if (r["relation"], r["bucket"]) == c]) for c in population}
    R, seed = 211, 9

    def boots(keys, rng):
        draws = {c: rng.integers(0, len(cells[c]), size=(R, len(cells[c]))) for c in keys}
        total = sum(population[c] for c in keys)
        return [sum(population[c] * cells[c][draws[c][r]].mean() for c in keys) / total for r in range(R)]

    rare = boots([("a", "rare"), ("b", "rare")], np.random.default_rng(seed))
    got = mrr_interval(rows, "s", bucket="rare", population=population, resamples=R, seed=seed)
    assert got[1:] == pytest.approx((percentile(rare, 0.025), percentile(rare, 0.975)), abs=1e-12)
    rng = np.random.default_rng(seed)
    high = boots([("a", "frequent"), ("b", "frequent")], rng)
    low = boots([("a", "rare"), ("b", "rare")], rng)
    gap = [h - l for h, l in zip(high, low)]
    g = bucket_gap(rows, "s", "frequent", "rare", population=population, resamples=R, seed=seed)
    assert (g["low"], g["high"]) == pytest.approx((percentile(gap, 0.025), percentile(gap, 0.975)), abs=1e-12)
    # without a population every cell weighs its number of entries (6 and 7 of 13), not 1 each
    rng = np.random.default_rng(seed)
    ia, ib = rng.integers(0, 6, size=(R, 6)), rng.integers(0, 7, size=(R, 7))
    a, b = cells[("a", "rare")], cells[("b", "rare")]
    plain = [(6 * a[ia[r]].mean() + 7 * b[ib[r]].mean()) / 13 for r in range(R)]
    got = mrr_interval(rows, "s", bucket="rare", resamples=R, seed=seed)
    assert got[0] == pytest.approx((a.sum() + b.sum()) / 13, abs=1e-12)
    assert got[1:] == pytest.approx((percentile(plain, 0.025), percentile(plain, 0.975)), abs=1e-12)


# ----------------------------------------------------------------------------------- one generator per call


def test_mirrored_strata_do_not_cancel():
    """Two strata of equal size, one the other's negation, weighted equally: the true difference is 0 and every
    resample's is 0 only if both strata draw the same indices. With one generator per call they draw different
    ones, so the interval has the width of two independent strata's (a generator re-created per stratum collapses
    it to zero)."""
    d = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    strata = ["p"] * 6 + ["q"] * 6
    diff, low, high = paired_bootstrap(np.concatenate([d, -d]), np.zeros(12), strata=strata, resamples=2000, seed=3)
    se = d.std() / math.sqrt(6) / math.sqrt(2)  # half the sum of two independent resampled means
    assert diff == 0.0
    assert high - low == pytest.approx(2 * 1.96 * se, rel=0.15)

    rows = [{"strategy": "s", "id": i, "relation": rel, "bucket": "rare", "rr": float(v)}
            for i, (rel, v) in enumerate([("p", v) for v in d / 5] + [("q", 1 - v) for v in d / 5])]
    mrr, low, high = mrr_interval(rows, "s", resamples=2000, seed=3)
    assert mrr == pytest.approx(0.5) and high - low == pytest.approx(2 * 1.96 * se / 5, rel=0.15)


def test_bucket_gap_of_two_equal_buckets_has_the_width_of_two_independent_ones():
    """The high and low buckets hold the same values: the gap is 0, and its interval is that of the difference of
    two independent resampled means (a generator per bucket would draw the same indices and give [0, 0])."""
    v = [0.0, 0.25, 0.5, 1.0, 1.0, 0.1, 0.0, 0.75]
    rows = [{"strategy": "s", "id": i, "relation": "r", "bucket": b, "rr": x}
            for i, (b, x) in enumerate([("rare", x) for x in v] + [("frequent", x) for x in v])]
    g = bucket_gap(rows, "s", "frequent", "rare", resamples=2000, seed=1)
    se = np.std(v) / math.sqrt(len(v)) * math.sqrt(2)
    assert g["difference"] == 0.0 and g["high"] - g["low"] == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_compare_strategies_resamples_pairs_within_cells_with_one_generator():
    """Two cells of equal size whose differences mirror each other: one generator per call gives a positive width."""
    rows = []
    for i, (rel, first, second) in enumerate([("p", x, 0.0) for x in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)]
                                             + [("q", 0.0, x) for x in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)]):
        rows += [{"strategy": "a", "id": i, "relation": rel, "bucket": "rare", "rr": first},
                 {"strategy": "b", "id": i, "relation": rel, "bucket": "rare", "rr": second}]
    got = compare_strategies(rows, "a", "b", resamples=2000, seed=2)
    se = np.std([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]) / math.sqrt(6) / math.sqrt(2)
    assert got["difference"] == pytest.approx(0.0, abs=1e-15) and got["entries"] == 12
    assert got["high"] - got["low"] == pytest.approx(2 * 1.96 * se, rel=0.15)


# ------------------------------------------------------------------- the analogy decomposition's pair bootstrap


def _tuples(relation: str, values) -> list[dict]:
    """Every ordered pair (i, j), i != j, of pairs named p0..p(n-1): its a is pair i's start, its b pair j's."""
    n = len(values)
    return [{"relation": relation, "category": "c", "a": f"{relation}{i}", "b": f"{relation}{j}",
             "score": (values[i] + values[j]) / 2} for i in range(n) for j in range(n) if i != j]


def test_relation_intervals_cover_the_mean_of_pair_values():
    """Tuple (i, j) scores (u_i + u_j) / 2 with u ~ N(0.3, 1) per pair: the relation's true mean is 0.3. The
    bootstrap resamples pairs (the tuples share them), so its 95% interval covers 0.3 at its level."""
    import pyarrow as pa

    from lexprobe.analogies.decomposition import relation_intervals

    rng = np.random.default_rng(16)
    got = []
    for i in range(DRAWS):
        table = pa.Table.from_pylist(_tuples("r", rng.normal(0.3, 1.0, 30)))
        row = relation_intervals(table, {"score": table.column("score").to_numpy()}, resamples=400, seed=i)[0]
        got.append((row["score_low"], row["score_high"]))
    lo, hi = binomial_bounds(DRAWS)
    assert lo <= covered(got, 0.3) <= hi


def test_relation_intervals_ends_by_hand_from_their_draws():
    """Each relation's generator is rng_for(seed, "decomposition-bootstrap", its name); a resample's mean counts
    tuple (i, j) draws[i] * draws[j] times (pairs in sorted order of their words), NaN resamples left out."""
    import pyarrow as pa

    from lexprobe.analogies.decomposition import relation_intervals

    rng = np.random.default_rng(22)
    values = {"r": rng.normal(size=9).tolist(), "s": rng.normal(size=9).tolist()}  # distinct: no plateaus
    table = pa.Table.from_pylist(_tuples("r", values["r"]) + _tuples("s", values["s"]))
    R, seed = 199, 6
    rows = relation_intervals(table, {"score": table.column("score").to_numpy()}, resamples=R, seed=seed)
    for row, (name, u) in zip(rows, values.items()):
        n = len(u)
        draws = rng_for(seed, "decomposition-bootstrap", name).multinomial(n, np.full(n, 1 / n), size=R)
        means = []
        for d in draws:
            w = [(d[i] * d[j], (u[i] + u[j]) / 2) for i in range(n) for j in range(n) if i != j]
            total = sum(c for c, _ in w)
            if total:
                means.append(sum(c * v for c, v in w) / total)
        assert row["score"] == pytest.approx(np.mean(u), abs=1e-12) and row["pairs"] == n
        assert (row["score_low"], row["score_high"]) == pytest.approx(
            (percentile(means, 0.025), percentile(means, 0.975)), abs=1e-12)


# ------------------------------------------------------------------- the frequency gap within relations


def test_relation_gap_ends_by_hand_and_its_weights():
    """relation_gap: per relation holding both buckets, mean(high) - mean(low), weighted by the relation's entries
    in the two buckets (population's, else the rows'); one generator per call drawing, relation by relation in
    sorted order, the high cell then the low cell. A relation with one bucket only is left out."""
    from lexprobe.rare_words.probing_scores import relation_gap

    rng = np.random.default_rng(23)
    sizes = {("a", "frequent"): 5, ("a", "rare"): 7, ("b", "frequent"): 6, ("b", "rare"): 4, ("c", "rare"): 3}
    values = {c: rng.random(n) for c, n in sizes.items()}
    rows = [{"strategy": "s", "id": i, "relation": rel, "bucket": b, "rr": float(v)}
            for i, ((rel, b), v) in enumerate((c, v) for c, vs in values.items() for v in vs)]
    R, seed = 233, 5
    for population in (None, {("a", "frequent"): 50, ("a", "rare"): 10, ("b", "frequent"): 5, ("b", "rare"): 35,
                              ("c", "rare"): 99}):
        size = population or sizes
        w = {r: (size[(r, "frequent")] + size[(r, "rare")]) / sum(size[(x, b)] for x in "ab"
                                                                  for b in ("frequent", "rare")) for r in "ab"}
        draws = np.random.default_rng(seed)
        boots = np.zeros(R)
        for r in "ab":
            for b, sign in (("frequent", 1), ("rare", -1)):
                v = values[(r, b)]
                boots += sign * w[r] * np.array([v[i].mean() for i in draws.integers(0, len(v), size=(R, len(v)))])
        got = relation_gap(rows, "s", "frequent", "rare", population=population, resamples=R, seed=seed)
        want = sum(w[r] * (values[(r, "frequent")].mean() - values[(r, "rare")].mean()) for r in "ab")
        assert got["relations"] == ["a", "b"] and got["entries"] == 22
        assert got["difference"] == pytest.approx(want, abs=1e-12)
        assert (got["low"], got["high"]) == pytest.approx((percentile(boots, 0.025), percentile(boots, 0.975)),
                                                          abs=1e-12)


def test_relation_gap_covers_the_within_relation_frequency_effect():
    """Two relations, each with a frequent and a rare cell of 30 entries (RR as in the MRR coverage test): the true
    gap is the relations' mean(frequent) - mean(rare) weighted by their populations' entries."""
    from lexprobe.rare_words.probing_scores import relation_gap

    rng = np.random.default_rng(24)
    cells = {("antonym", "rare"): (30, 0.2), ("antonym", "frequent"): (30, 0.5),
             ("hypernym", "rare"): (30, 0.6), ("hypernym", "frequent"): (30, 0.7)}
    population = {("antonym", "rare"): 100, ("antonym", "frequent"): 20, ("hypernym", "rare"): 30,
                  ("hypernym", "frequent"): 50}
    mean = {c: p + (1 - p) / 4 for c, (_, p) in cells.items()}
    truth = sum((population[(r, "frequent")] + population[(r, "rare")]) * (mean[(r, "frequent")] - mean[(r, "rare")])
                for r in ("antonym", "hypernym")) / sum(population.values())
    got = []
    for i in range(DRAWS):
        g = relation_gap(_rows(rng, cells), "original", "frequent", "rare", population=population, resamples=400,
                         seed=i)
        got.append((g["low"], g["high"]))
    lo, hi = binomial_bounds(DRAWS)
    assert lo <= covered(got, truth) <= hi


def test_relation_gap_of_equal_buckets_keeps_its_width():
    """A relation whose frequent and rare cells hold the same values: the gap is 0 and its interval has the width
    of a difference of two independent resampled means (a generator per cell would draw the same indices)."""
    from lexprobe.rare_words.probing_scores import relation_gap

    v = [0.0, 0.25, 0.5, 1.0, 1.0, 0.1, 0.0, 0.75]
    rows = [{"strategy": "s", "id": i, "relation": "r", "bucket": b, "rr": x}
            for i, (b, x) in enumerate([("rare", x) for x in v] + [("frequent", x) for x in v])]
    g = relation_gap(rows, "s", "frequent", "rare", resamples=2000, seed=1)
    se = np.std(v) / math.sqrt(len(v)) * math.sqrt(2)
    assert g["difference"] == 0.0 and g["high"] - g["low"] == pytest.approx(2 * 1.96 * se, rel=0.15)
