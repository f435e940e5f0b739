"""Confidence intervals that verdicts show beside their numbers."""

from __future__ import annotations

import math

from .errors import LexprobeError

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile
MIN_CORRELATION_PAIRS = 2  # scipy's (and so gensim's) least: one pair has no correlation at all


def check_correlation_input(x, y, what: str = "pairs") -> None:
    """Refuse, in one line naming ``what``, paired values whose correlation means nothing or cannot be computed:
    fewer than :data:`MIN_CORRELATION_PAIRS` pairs, or a value that is not finite (NaN, inf)."""
    import numpy as np

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) != len(y):
        raise LexprobeError(f"{what}: {len(x)} values against {len(y)}: not paired")
    if len(x) < MIN_CORRELATION_PAIRS:
        raise LexprobeError(f"{what}: {len(x)} pair{'' if len(x) == 1 else 's'} scored, too few for a correlation "
                            f"(at least {MIN_CORRELATION_PAIRS})")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise LexprobeError(f"{what}: a value that is not a finite number (NaN or infinite): no correlation")


def wilson(count: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval (95% by default) of a share ``count / n``: it stays inside [0, 1] and is sound for
    shares near 0 or 1, unlike the normal approximation. At 0 and at ``n`` successes its end is exactly 0 or 1
    (the formula meets it only up to rounding). ``n == 0`` gives (nan, nan)."""
    if n == 0:
        return float("nan"), float("nan")
    p = count / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (0.0 if count == 0 else max(0.0, centre - half)), (1.0 if count == n else min(1.0, centre + half))


def paired_bootstrap(a, b, *, strata=None, weights=None, resamples: int = 2000, seed: int = 0,
                     level: float = 0.95) -> tuple[float, float, float]:
    """The mean difference of paired observations ``a - b`` and its percentile bootstrap interval (95% by
    default): (difference, low, high).

    Pairs are resampled together (each resample draws observations with replacement, keeping a[i] with b[i]),
    so what both share (the entry's difficulty) cancels. With ``strata`` (one label per pair) each stratum is
    resampled on its own and the difference is the mean of the strata's means weighted by ``weights``
    (label -> weight, e.g. the stratum's size in the population a stratified sample stands for); without
    ``weights`` a stratum counts by its number of pairs, which gives the plain mean.
    """
    import numpy as np

    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if not len(d):
        raise LexprobeError("no paired observations: no difference and no interval")
    labels = np.zeros(len(d), np.int64) if strata is None else np.asarray(strata)
    rng = np.random.default_rng(seed)
    keys = sorted(set(labels.tolist()))
    w = np.array([weights[k] if weights is not None else np.sum(labels == k) for k in keys], dtype=np.float64)
    means, boots = [], []
    for k in keys:
        values = d[labels == k]
        means.append(values.mean())
        boots.append(values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1))
    estimate = float(np.dot(w, means) / w.sum())
    resampled = np.dot(w, np.array(boots)) / w.sum()
    low, high = np.quantile(resampled, [(1 - level) / 2, (1 + level) / 2])
    return estimate, float(low), float(high)


def correlation_bootstrap(x, y, *, resamples: int = 1000, seed: int = 0, level: float = 0.95
                          ) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap intervals (95% by default) of Pearson's and Spearman's correlation of paired
    observations: ``{"pearson": (low, high), "spearman": (low, high)}``. Pairs are resampled together with
    replacement (too few pairs, or a value not finite: :func:`check_correlation_input`); ranks average ties, as
    scipy's ``spearmanr``; a resample whose x or y values are all equal has no
    correlation and is left out (found by comparing the values: subtracting their float mean can leave a rounding
    residue whose "correlation" is +-1)."""
    import numpy as np
    from scipy.stats import rankdata

    from .seeds import rng_for

    check_correlation_input(x, y)
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    take = rng_for(seed, "correlation-bootstrap").integers(0, len(x), size=(resamples, len(x)))
    X, Y = x[take], y[take]

    def pearson(a, b):
        flat = (a == a[:, :1]).all(axis=1) | (b == b[:, :1]).all(axis=1)
        a, b = a - a.mean(axis=1, keepdims=True), b - b.mean(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
        return np.where(flat, np.nan, np.clip(r, -1.0, 1.0))

    values = {"pearson": pearson(X, Y), "spearman": pearson(rankdata(X, axis=1), rankdata(Y, axis=1))}
    bounds = [(1 - level) / 2, (1 + level) / 2]
    return {name: tuple(float(v) for v in np.nanquantile(r, bounds)) for name, r in values.items()}
