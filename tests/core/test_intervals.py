"""Confidence intervals against published values and large-sample theory (mutation testing)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lexprobe.core.intervals import Z95, paired_bootstrap, wilson


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
