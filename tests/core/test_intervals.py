"""Confidence intervals against published values and large-sample theory (mutation testing)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from lexprobe.core.intervals import Z95, correlation_bootstrap, paired_bootstrap, wilson


def test_wilson_published_values():
    # Wilson 95% intervals as tabulated by Newcombe (1998), Table I: 81/263, 15/148, 0/20, 1/29
    assert wilson(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert wilson(15, 148) == pytest.approx((0.0624, 0.1605), abs=1e-4)
    assert wilson(0, 20) == pytest.approx((0.0, 0.1611), abs=1e-4)
    assert wilson(1, 29) == pytest.approx((0.0061, 0.1718), abs=1e-4)
    assert wilson(20, 20) == pytest.approx((1 - 0.1611, 1.0), abs=1e-4)  # symmetric, clipped at 1
    assert Z95 == pytest.approx(1.959964, abs=1e-6)
    assert all(math.isnan(x) for x in wilson(0, 0))
    low, high = wilson(5, 10, z=1.0)  # a narrower level: centre 0.5, half-width 1/(1.1) * sqrt(0.025 + 0.0025)
    assert (low, high) == pytest.approx((0.5 - math.sqrt(0.0275) / 1.1, 0.5 + math.sqrt(0.0275) / 1.1), abs=1e-9)


def test_bootstrap_matches_the_normal_approximation():
    rng = np.random.default_rng(3)
    a = rng.normal(0.3, 1.0, 900)
    b = a - rng.normal(0.2, 0.5, 900)  # a - b ~ N(0.2, 0.5^2): paired, so a's spread cancels
    diff, low, high = paired_bootstrap(a, b, resamples=20000, seed=1)
    d = a - b
    assert diff == pytest.approx(d.mean(), abs=1e-12)
    se = d.std() / math.sqrt(len(d))  # 20,000 resamples: the quantiles' own noise is about 0.015 se
    assert low == pytest.approx(diff - Z95 * se, abs=0.08 * se)
    assert high == pytest.approx(diff + Z95 * se, abs=0.08 * se)
    _, low90, high90 = paired_bootstrap(a, b, resamples=20000, seed=1, level=0.9)
    assert low90 == pytest.approx(diff - 1.6449 * se, abs=0.08 * se)
    assert high90 == pytest.approx(diff + 1.6449 * se, abs=0.08 * se)
    assert paired_bootstrap(a, b, resamples=20000, seed=1) == (diff, low, high)  # seeded


def test_bootstrap_strata_and_weights_by_hand():
    a = [1.0, 1.0, 1.0, 3.0, 0.0]
    b = [0.0, 0.0, 0.0, 0.0, 0.0]
    strata = ["x", "x", "x", "y", "z"]
    # constant differences inside each stratum: every resample gives the estimate itself
    assert paired_bootstrap(a, b, strata=strata, resamples=50) == pytest.approx((6 / 5, 6 / 5, 6 / 5))
    w = {"x": 1.0, "y": 2.0, "z": 1.0}
    assert paired_bootstrap(a, b, strata=strata, weights=w, resamples=50) == pytest.approx((7 / 4, 7 / 4, 7 / 4))
    # without strata the pairs are pooled: differences 1, 1, 1, 3, 0 resampled together
    diff, low, high = paired_bootstrap(a, b, resamples=2000, seed=0)
    assert diff == pytest.approx(1.2) and 0.0 <= low < 1.2 < high <= 3.0


def test_wilson_at_the_edges_and_its_z():
    """0 and n successes out of n = 10: [0, 0.2775] and [0.7225, 1]. At 0 successes the Wilson score interval
    (Wilson 1927, as given by Brown, Cai & DasGupta 2001, "Interval estimation for a binomial proportion",
    Statistical Science 16:101-133) reduces to [0, z^2 / (n + z^2)]; with z = 1.959964 that is Newcombe's (1998,
    Table I) 0.1611 for n = 20 above and 0.2775 for n = 10. The default z is the normal's 97.5% quantile (scipy),
    not the rounded 1.96: the closed form is met to 1e-12."""
    from scipy.stats import norm

    assert Z95 == pytest.approx(norm.ppf(0.975), abs=1e-12)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    z2 = norm.ppf(0.975) ** 2
    for n in range(1, 300):  # the ends exactly 0 and 1 (the formula left 0.9999999999999999 at n = 1, 10, ...)
        assert wilson(0, n)[0] == 0.0 and wilson(0, n)[1] == pytest.approx(z2 / (n + z2), abs=1e-12)
        assert wilson(n, n)[1] == 1.0 and wilson(n, n)[0] == pytest.approx(n / (n + z2), abs=1e-12)
    z = norm.ppf(0.95)  # a 90% interval: the z passed is the one used
    assert wilson(0, 10, z=z)[1] == pytest.approx(z * z / (10 + z * z), abs=1e-12)


@pytest.mark.parametrize("count,n", [(1, 10), (3, 10), (7, 13), (81, 263), (499, 1000), (999, 1000)])
def test_wilson_inverts_the_score_test(count, n):
    """The Wilson interval is the set of p the score test does not reject: its ends solve (p_hat - p)^2 =
    z^2 p (1 - p) / n, found here by root finding (not the closed form under test), one on each side of p_hat."""
    from scipy.optimize import brentq

    p_hat = count / n
    for z in (Z95, 1.0):
        score = lambda p: (p_hat - p) ** 2 - z * z * p * (1 - p) / n  # noqa: E731
        low, high = brentq(score, 0.0, p_hat, xtol=1e-15), brentq(score, p_hat, 1.0, xtol=1e-15)
        assert wilson(count, n, z=z) == pytest.approx((low, high), abs=1e-10)


# ----------------------------------------------------------------- bootstrap intervals against the exact bootstrap
# On tiny data every resample can be enumerated: the exact distribution of the bootstrap statistic. A returned
# percentile bound must then be a q-quantile of it up to the sampling error of the resamples drawn.


def _cell_mean_distribution(values) -> dict[float, float]:
    """The mean of n values drawn with replacement from ``values`` (n of them): value -> probability, over all n^n
    equally likely draws."""
    n = len(values)
    counts = Counter(round(sum(draw) / n, 12) for draw in itertools.product(values, repeat=n))
    return {m: c / n ** n for m, c in counts.items()}


def exact_stratified(cells) -> tuple[np.ndarray, np.ndarray]:
    """(support, probabilities) of sum_c w_c mean_c / sum_c w_c, each cell resampled on its own: ``cells`` is a
    list of (w_c, values_c)."""
    total = sum(w for w, _ in cells)
    dist = {0.0: 1.0}
    for w, values in cells:
        new: Counter = Counter()
        for x, p in dist.items():
            for m, q in _cell_mean_distribution(values).items():
                new[round(x + w * m / total, 12)] += p * q
        dist = new
    support = np.array(sorted(dist))
    return support, np.array([dist[x] for x in support])


def difference(first, second) -> tuple[np.ndarray, np.ndarray]:
    """The exact distribution of X - Y for independent X ~ ``first``, Y ~ ``second`` ((support, probabilities))."""
    dist: Counter = Counter()
    for x, p in zip(*first):
        for y, q in zip(*second):
            dist[round(x - y, 12)] += p * q
    support = np.array(sorted(dist))
    return support, np.array([dist[x] for x in support])


def is_quantile(value: float, exact: tuple[np.ndarray, np.ndarray], q: float, resamples: int) -> bool:
    """Whether ``value`` is a ``q``-quantile of the exact distribution (P(X < value) <= q <= P(X <= value)) up to
    4.5 standard errors of an empirical CDF over ``resamples`` draws."""
    support, probs = exact
    tol = 4.5 * math.sqrt(q * (1 - q) / resamples)
    return probs[support < value - 1e-9].sum() <= q + tol and probs[support <= value + 1e-9].sum() >= q - tol


def assert_percentile_interval(low: float, high: float, exact, resamples: int, level: float = 0.95) -> None:
    """``low``/``high`` are the exact bootstrap's (1 -+ level) / 2 quantiles, and not those of the neighbouring
    levels (so the check can tell a wrong level or a wrong distribution)."""
    a = (1 - level) / 2
    assert is_quantile(low, exact, a, resamples) and is_quantile(high, exact, 1 - a, resamples), (low, high)
    assert not is_quantile(low, exact, a / 2.5, resamples) and not is_quantile(low, exact, 2 * a, resamples)


def test_paired_bootstrap_matches_the_exact_bootstrap_with_uneven_strata():
    """Three strata of 2, 3 and 5 pairs weighted 5, 1 and 2 (neither their sizes nor equal): the difference is the
    weighted mean of the strata's mean differences, its interval the exact bootstrap's 2.5% and 97.5% points."""
    a = [1.0, 0.0, 0.5, 0.25, 1.0, 0.0, 0.2, 0.5, 1.0, 0.1]
    b = [0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0]
    strata = ["x", "x", "y", "y", "y", "z", "z", "z", "z", "z"]
    weights = {"x": 5.0, "y": 1.0, "z": 2.0}
    d = np.subtract(a, b)
    cells = [(weights[k], [v for v, s in zip(d, strata) if s == k]) for k in "xyz"]
    B = 40_000
    diff, low, high = paired_bootstrap(a, b, strata=strata, weights=weights, resamples=B, seed=2)
    assert diff == pytest.approx((5 * 0.5 + 1 * 1.25 / 3 + 2 * 0.26) / 8, abs=1e-12)
    assert_percentile_interval(low, high, exact_stratified(cells), B)
    # without weights the strata count by their pairs: the plain mean, and the sizes weight the resampled means
    diff, low, high = paired_bootstrap(a, b, strata=strata, resamples=B, seed=2)
    assert diff == pytest.approx(d.mean(), abs=1e-12)
    assert_percentile_interval(low, high, exact_stratified([(len(v), v) for _, v in cells]), B)


def test_correlation_bootstrap_matches_the_exact_bootstrap():
    """Six pairs: all 6^6 resamples enumerated, the ones with constant x or y left out; Pearson's and Spearman's
    (ranks with ties averaged, checked against scipy on the data) bounds are the exact bootstrap's quantiles."""
    from scipy.stats import rankdata, spearmanr

    x = np.array([0.1, 0.9, 1.7, 3.2, 4.0, 5.5])
    y = np.array([1.0, 2.6, 2.2, 4.1, 3.9, 6.3])
    take = np.array(list(itertools.product(range(6), repeat=6)))
    X, Y = x[take], y[take]
    flat = (X == X[:, :1]).all(1) | (Y == Y[:, :1]).all(1)
    X, Y = X[~flat], Y[~flat]

    def pearson(a, b):
        a, b = a - a.mean(1, keepdims=True), b - b.mean(1, keepdims=True)
        return (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))

    exact = {"pearson": pearson(X, Y), "spearman": pearson(rankdata(X, axis=1), rankdata(Y, axis=1))}
    for n in (7, 500, 40_000):  # the enumeration's correlations are numpy's and scipy's
        assert exact["pearson"][n] == pytest.approx(np.corrcoef(X[n], Y[n])[0, 1], abs=1e-12)
        assert exact["spearman"][n] == pytest.approx(spearmanr(X[n], Y[n]).statistic, abs=1e-12)
    dists = {}
    for name, values in exact.items():
        support, counts = np.unique(np.round(values, 12), return_counts=True)
        dists[name] = (support, counts / counts.sum())
    B = 20_000
    got = correlation_bootstrap(x, y, resamples=B, seed=0)
    for name, (low, high) in got.items():
        assert is_quantile(low, dists[name], 0.025, B) and is_quantile(high, dists[name], 0.975, B), name
        assert not is_quantile(low, dists[name], 0.05, B)
    assert not is_quantile(got["pearson"][0], dists["pearson"], 0.01, B)  # Spearman's 21 values: too coarse
    assert got["spearman"][1] == 1.0  # concordant two-point resamples: more than 2.5% of the mass at 1


def test_correlation_bootstrap_leaves_out_constant_resamples():
    """A resample of three copies of one pair has no correlation. Subtracting the float mean of three 0.1s (or
    3.7s) leaves a rounding residue whose "correlation" was +1 here, although every other resample correlates
    negatively: the interval was [-1, 1]. It is [-1, r] (the two-point resamples give -1, the full set r)."""
    x, y = np.array([0.1, 1.0, 2.0]), np.array([3.7, 2.0, 1.0])
    got = correlation_bootstrap(x, y, resamples=4000, seed=0)
    assert got["pearson"] == pytest.approx((-1.0, np.corrcoef(x, y)[0, 1]), abs=1e-12)
    assert got["spearman"] == (-1.0, -1.0)


def test_wnlampro_intervals_match_the_exact_bootstrap_on_uneven_cells():
    """The MRR interval, the bucket gap and the strategy difference of post-stratified WNLaMPro rows whose cells
    hold 3, 5, 1 and 4 sampled entries standing for 10, 60, 5 and 8 in the dataset (the estimates by hand:
    tests/rare_words/test_probing_scores.py). Each cell is resampled on its own and weighted by its population."""
    from lexprobe.rare_words.probing_scores import bucket_gap, compare_strategies, mrr_interval

    cells = {("antonym", "rare"): [1.0, 0.5, 0.0], ("hypernym", "rare"): [0.0, 0.25, 0.5, 1.0, 0.1],
             ("antonym", "frequent"): [1.0], ("hypernym", "frequent"): [0.2, 1.0, 0.5, 0.0]}
    population = {("antonym", "rare"): 10, ("hypernym", "rare"): 60, ("antonym", "frequent"): 5,
                  ("hypernym", "frequent"): 8}
    base = {("antonym", "rare"): [0.5, 0.5, 0.0], ("hypernym", "rare"): [0.0, 0.0, 0.5, 0.25, 0.0],
            ("antonym", "frequent"): [0.5], ("hypernym", "frequent"): [0.2, 0.5, 0.5, 0.0]}
    rows = []
    for strategy, table in (("original", cells), ("first", base)):
        for i, ((relation, bucket), value) in enumerate((c, v) for c, values in table.items() for v in values):
            rows.append({"strategy": strategy, "id": i, "relation": relation, "bucket": bucket, "rr": value})
    B = 40_000
    rare = [(population[c], cells[c]) for c in cells if c[1] == "rare"]
    mrr, low, high = mrr_interval(rows, "original", bucket="rare", population=population, resamples=B, seed=3)
    assert mrr == pytest.approx((10 * 0.5 + 60 * 0.37) / 70, abs=1e-12)
    assert_percentile_interval(low, high, exact_stratified(rare), B)

    frequent = [(population[c], cells[c]) for c in cells if c[1] == "frequent"]
    gap = bucket_gap(rows, "original", "frequent", "rare", population=population, resamples=B, seed=4)
    assert gap["difference"] == pytest.approx((5 * 1.0 + 8 * 0.425) / 13 - (10 * 0.5 + 60 * 0.37) / 70, abs=1e-12)
    assert_percentile_interval(gap["low"], gap["high"], difference(exact_stratified(frequent),
                                                                   exact_stratified(rare)), B)

    paired = [(population[c], list(np.subtract(cells[c], base[c]))) for c in sorted(cells)]
    diff = compare_strategies(rows, "original", "first", population=population, resamples=B, seed=5)
    assert diff["entries"] == 13
    assert diff["difference"] == pytest.approx(sum(w * np.mean(v) for w, v in paired) / 83, abs=1e-12)
    assert_percentile_interval(diff["low"], diff["high"], exact_stratified(paired), B)
