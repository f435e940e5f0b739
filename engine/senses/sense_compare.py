"""Several models' rankings of the same queries compared cell by cell, with lemma-clustered bootstrap intervals.

Per (model, cell), from the per-query tables of :func:`lexprobe.senses.sense_ranking.rank_senses`:

- ``p_at_k``: the paper's Table-1 number (mean over k of the mean P@k); ``random_p_at_k`` the random ranking's;
  ``oracle_p_at_k`` the best any ranking could score (every relevant candidate first: P@k = min(R, k) / k);
- ``lift`` = p_at_k / random_p_at_k: how many times better than chance. Rare-sense cells have a far lower
  random baseline than the others (few relevant candidates), so raw P@k compares the baselines as much as the
  models; the lift does not;
- ``share`` = (p_at_k - random) / (oracle - random): the share of the possible gain over chance the model
  achieves, 0 for chance, 1 for a perfect ranking. The cells differ in both floor (random) and ceiling (oracle),
  so differences between models are compared across cells on this scale.

Per cell, the between-model ``spread`` (largest minus smallest ``share``; and of ``p_at_k``, which equals the
spread of the gain over random since the models share the random baseline), and ``little_ratio`` = spread of
p_at_k / the smallest model's gain over random. Per lemma-frequency interval, ``spread(rare) - spread(other)``;
per rare-sense cell, the other models' lowest lift minus the named causal model's.

Intervals: percentile bootstrap (95%) that resamples **lemmas** (lemma and POS: the candidate set), not queries:
queries of one lemma share their candidates and are not independent. One resample draws as many lemmas as there
are, with replacement, and every statistic (all models, all cells) is computed on it, so paired differences keep
their pairing. A cell left empty by a resample counts as missing in it. Pure computation.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from ..core.conventions import Result
from ..core.seeds import rng_for
from .sense_cells import split_cell

DEFAULT_RESAMPLES = 2000
MIN_LEMMAS = 5  # a cell's bootstrap over fewer lemmas says nothing: it is shown, not judged


def oracle_p_at_k_mean(n_relevant, k_max: int) -> np.ndarray:
    """The best mean over k = 1..K of P@k any ranking reaches with ``R`` relevant candidates: mean of
    min(R, k) / k (all relevant first; missing ranks count as misses, as in the ranking's P@k)."""
    ks = np.arange(1, k_max + 1, dtype=np.float64)
    r = np.asarray(n_relevant, dtype=np.float64)
    return (np.minimum(r[:, None], ks[None, :]) / ks[None, :]).mean(axis=1)


def lemma_weights(n_lemmas: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(resamples, n_lemmas) counts: how often each lemma is drawn in each resample of ``n_lemmas`` draws with
    replacement."""
    draws = rng.integers(0, n_lemmas, size=(resamples, n_lemmas))
    flat = (np.arange(resamples)[:, None] * n_lemmas + draws).ravel()
    return np.bincount(flat, minlength=resamples * n_lemmas).reshape(resamples, n_lemmas).astype(np.float64)


def cluster_means(values: np.ndarray, lemma: np.ndarray, cell: np.ndarray, n_cells: int,
                  weights: np.ndarray) -> np.ndarray:
    """Cell means of ``values`` (queries, S statistics) when lemma ``i`` counts ``weights[b, i]`` times:
    (B, S, n_cells); NaN where a resample holds no query of the cell. ``lemma`` (codes 0..L-1) and ``cell``
    (0..n_cells-1) are per query."""
    values = np.asarray(values, dtype=np.float64).reshape(len(lemma), -1)
    n_lemmas = weights.shape[1]
    key = np.asarray(lemma) * n_cells + np.asarray(cell)
    counts = np.bincount(key, minlength=n_lemmas * n_cells).reshape(n_lemmas, n_cells)
    sums = np.stack([np.bincount(key, weights=values[:, s], minlength=n_lemmas * n_cells)
                     .reshape(n_lemmas, n_cells) for s in range(values.shape[1])], axis=1)  # (L, S, C)
    total = weights @ counts  # (B, C)
    summed = np.einsum("bl,lsc->bsc", weights, sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total[:, None, :] > 0, summed / total[:, None, :], np.nan)


def _interval(replicates: np.ndarray) -> tuple[float, float]:
    finite = replicates[np.isfinite(replicates)]
    if len(finite) < 2:
        return float("nan"), float("nan")
    low, high = np.quantile(finite, [0.025, 0.975])
    return float(low), float(high)


@dataclass
class ModelComparison(Result):
    """What :func:`compare_models` computed; :meth:`to_arrow` is the (model, cell) table."""

    cells: list[dict]       # per (model, cell): queries, lemmas, p_at_k, random, oracle, lift, share (+ intervals)
    spreads: list[dict]     # per cell: between-model spread of share and of p_at_k, little_ratio (+ intervals)
    contrasts: list[dict]   # per lemma-frequency interval: spread(rare) - spread(other) (+ interval)
    causal_gaps: list[dict]  # per rare-sense cell: the other models' lowest lift - the causal model's (+ interval)
    models: list[str]
    causal: str | None
    queries: int             # queries ranked by every model (the compared ones)
    lemmas: int
    resamples: int

    def to_arrow(self) -> pa.Table:
        return pa.Table.from_pylist(self.cells)


def _aligned(runs: dict[str, pa.Table]) -> tuple[list[str], dict[str, dict[str, np.ndarray]]]:
    """The queries every run ranked (by instance id, in the first run's order) and each run's columns on them."""
    tables = list(runs.values())
    common = set(tables[0].column("instance_id").to_pylist())
    for t in tables[1:]:
        common &= set(t.column("instance_id").to_pylist())
    ids = [i for i in tables[0].column("instance_id").to_pylist() if i in common]
    out = {}
    for name, t in runs.items():
        row = {i: r for r, i in enumerate(t.column("instance_id").to_pylist())}
        take = np.array([row[i] for i in ids], dtype=np.int64)
        k_max = t.schema.field("p_at_k").type.list_size
        cols = {c: np.asarray(t.column(c).to_numpy(zero_copy_only=False))[take] if len(take) else np.zeros(0)
                for c in ("p_at_k_mean", "random_p_at_k_mean", "n_relevant")}
        cols["oracle"] = oracle_p_at_k_mean(cols["n_relevant"], k_max)
        out[name] = cols
    first = tables[0]
    row = {i: r for r, i in enumerate(first.column("instance_id").to_pylist())}
    take = np.array([row[i] for i in ids], dtype=np.int64)
    meta = {c: np.asarray(first.column(c).to_pylist(), dtype=object)[take] if len(take) else np.zeros(0, object)
            for c in ("lemma", "pos", "cell")}
    return ids, {"meta": meta, **out}


def compare_models(runs: dict[str, pa.Table], labels: Sequence[str], *, causal: str | None = None,
                   resamples: int = DEFAULT_RESAMPLES, seed: int = 0, key: str = "") -> ModelComparison:
    """Compare the per-query tables ``runs`` (model -> table, the same queries and database) over the cells
    ``labels``. ``causal`` names the causal model whose rare-sense lift is compared with the others'. ``key``
    keys the bootstrap's random stream (the corpus name), ``seed`` seeds it."""
    models = list(runs)
    ids, data = _aligned(runs)
    meta = data["meta"]
    labels = list(labels)
    cell_code = {c: i for i, c in enumerate(labels)}
    cell = np.array([cell_code[c] for c in meta["cell"]], dtype=np.int64)
    lemma_key = np.array([f"{a}\t{b}" for a, b in zip(meta["lemma"], meta["pos"])], dtype=object)
    names, lemma = np.unique(lemma_key, return_inverse=True) if len(ids) else (np.zeros(0), np.zeros(0, np.int64))
    n_lemmas, n_cells = len(names), len(labels)
    stats = np.stack([data[m][c] for m in models for c in ("p_at_k_mean", "random_p_at_k_mean", "oracle")],
                     axis=1) if len(ids) else np.zeros((0, 3 * len(models)))
    point_w = np.ones((1, n_lemmas))
    boot_w = lemma_weights(n_lemmas, resamples, rng_for(seed, "senses-lemma-bootstrap", key)) if n_lemmas else \
        np.zeros((0, 0))

    def derived(weights: np.ndarray) -> dict[str, np.ndarray]:
        means = cluster_means(stats, lemma, cell, n_cells, weights).reshape(len(weights), len(models), 3, n_cells)
        p, rand, oracle = means[:, :, 0], means[:, :, 1], means[:, :, 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            lift, share = p / rand, (p - rand) / (oracle - rand)
            gain = p - rand
            out = {"p": p, "rand": rand, "oracle": oracle, "lift": lift, "share": share,
                   "spread_share": share.max(axis=1) - share.min(axis=1), "spread_p": p.max(axis=1) - p.min(axis=1),
                   "gain_min": gain.min(axis=1)}
            out["little_ratio"] = out["spread_p"] / out["gain_min"]
        return out

    point, boot = derived(point_w), (derived(boot_w) if n_lemmas else None)

    def est(name: str, *index) -> tuple[float, float, float]:
        value = float(point[name][(0, *index)])
        low, high = _interval(boot[name][(slice(None), *index)]) if boot is not None else (np.nan, np.nan)
        return value, low, high

    lemmas_in = [len(set(lemma[cell == c].tolist())) for c in range(n_cells)]
    queries_in = [int((cell == c).sum()) for c in range(n_cells)]
    cell_rows = []
    for m, model in enumerate(models):
        for c, label in enumerate(labels):
            row = {"model": model, "cell": label, "queries": queries_in[c], "lemmas": lemmas_in[c],
                   "p_at_k": float(point["p"][0, m, c]), "random_p_at_k": float(point["rand"][0, m, c]),
                   "oracle_p_at_k": float(point["oracle"][0, m, c])}
            for name in ("lift", "share"):
                row[name], row[f"{name}_low"], row[f"{name}_high"] = est(name, m, c)
            cell_rows.append(row)
    spreads = []
    for c, label in enumerate(labels):
        row = {"cell": label, "queries": queries_in[c], "lemmas": lemmas_in[c],
               "spread_p_at_k": float(point["spread_p"][0, c]), "gain_min": float(point["gain_min"][0, c])}
        for name in ("spread_share", "little_ratio"):
            row[name], row[f"{name}_low"], row[f"{name}_high"] = est(name, c)
        spreads.append(row)
    contrasts = []
    parts = [split_cell(label) for label in labels]
    for l_part in dict.fromkeys(p[0] for p in parts):
        rare = [c for c, p in enumerate(parts) if p == (l_part, True)]
        other = [c for c, p in enumerate(parts) if p == (l_part, False)]
        for r in rare:
            for o in other:
                diff = point["spread_share"][0, r] - point["spread_share"][0, o]
                reps = boot["spread_share"][:, r] - boot["spread_share"][:, o] if boot is not None else np.zeros(0)
                low, high = _interval(reps)
                contrasts.append({"l": l_part, "rare_cell": labels[r], "other_cell": labels[o],
                                  "rare_lemmas": lemmas_in[r], "other_lemmas": lemmas_in[o],
                                  "difference": float(diff), "low": low, "high": high})
    gaps = []
    if causal is not None and causal in models and len(models) > 1:
        k = models.index(causal)
        others = [m for m in range(len(models)) if m != k]
        for c, label in enumerate(labels):
            if not parts[c][1]:
                continue
            lifts = point["lift"][0, others, c]
            closest = models[others[int(np.nanargmin(lifts))]] if np.isfinite(lifts).any() else ""
            diff = float(np.nanmin(lifts) - point["lift"][0, k, c]) if np.isfinite(lifts).any() else float("nan")
            with warnings.catch_warnings():  # a resample without the cell: all-NaN, left out
                warnings.simplefilter("ignore", RuntimeWarning)
                reps = (np.nanmin(boot["lift"][:, others, c], axis=1) - boot["lift"][:, k, c]) \
                    if boot is not None else np.zeros(0)
            low, high = _interval(reps)
            gaps.append({"cell": label, "lemmas": lemmas_in[c], "causal": causal, "closest": closest,
                         "causal_lift": float(point["lift"][0, k, c]), "gap": diff, "low": low, "high": high})
    return ModelComparison(cell_rows, spreads, contrasts, gaps, models, causal, len(ids), n_lemmas, resamples)
