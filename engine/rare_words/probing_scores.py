"""The scores of probing on WNLaMPro (Schick & Schütze, "Rare words", section 6.2), pure functions over arrays.

For an entry x = (k, r, T), a pattern p of relation r and a target w in T, the model fills the blank of p[k];
its answers a_1..a_n are the whole vocabulary sorted by logit, and

    rank(p[k], w) = j such that a_j = w          (1 + the number of tokens with a strictly higher logit)
    rank(x)       = min over p and w of rank(p[k], w)
    precision_i(x) = max over p of |{a_1..a_i} ∩ T| / i
    RR(x)         = 1 / rank(x) when rank(x) <= cutoff (default 100), else 0;  MRR = mean RR

The random baseline is exact: the expected RR, P@3 and P@10 of a model that answers every query with an
independent uniformly random ranking of the V vocabulary tokens, given each entry's number of targets and patterns.

A sample capped per relation stands for its dataset through cell weights (post-stratification over (relation,
bucket) cells); the MRRs' and their differences' bootstrap intervals resample entries within their cells.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

PRECISION_AT = (3, 10)
DEFAULT_CUTOFF = 100


def rank_targets(logits, targets: Sequence[Sequence[int]], top: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``logits`` (B, V; a tensor or an array): min over its targets of 1 + #tokens with a strictly
    higher logit, and the ``top`` token ids by logit (ties: lower id first).

    The top set comes from ``torch.topk`` (a partial selection on all cores, far cheaper than sorting or numpy's
    single-threaded argpartition); only a row whose tie straddles the cut is sorted fully.
    """
    import torch

    logits = torch.as_tensor(logits)
    width = max(len(t) for t in targets)
    tid = torch.zeros((len(targets), width), dtype=torch.long)
    valid = torch.zeros((len(targets), width), dtype=torch.bool)
    for j, t in enumerate(targets):
        tid[j, :len(t)], valid[j, :len(t)] = torch.as_tensor(t, dtype=torch.long), True
    best = torch.where(valid, logits.gather(1, tid), float("-inf")).amax(1)  # the best target's logit
    ranks = 1 + (logits > best[:, None]).sum(1)
    vals, part = torch.topk(logits, top, dim=1)
    vals, part = vals.numpy(), part.numpy()
    top_ids = np.take_along_axis(part, np.lexsort((part, -vals), axis=1), 1)
    tied = ((logits >= torch.from_numpy(vals.min(1, keepdims=True))).sum(1) > top).numpy()  # a tie across the cut
    for row in np.flatnonzero(tied):
        top_ids[row] = np.argsort(-logits[row].numpy(), kind="stable")[:top]
    return ranks.numpy().astype(np.int64), top_ids.astype(np.int64)

def entry_scores(query_entry: np.ndarray, ranks: np.ndarray, tops: np.ndarray, target_ids: Sequence[Sequence[int]],
                 n_entries: int, *, cutoff: int = DEFAULT_CUTOFF, at: Sequence[int] = PRECISION_AT,
                 query_targets: Sequence[Sequence[int]] | None = None) -> dict:
    """rank(x) = min over x's queries, RR with the cut-off, precision_i(x) = max over x's queries. ``query_targets``
    (one list per query) replace the entry's ``target_ids`` in precision where a query's targets are other tokens
    (a causal model's form at the blank)."""
    rank = np.full(n_entries, np.iinfo(np.int64).max)
    np.minimum.at(rank, query_entry, ranks)
    out = {"rank": rank, "rr": np.where(rank <= cutoff, 1.0 / rank, 0.0)}
    per_query = query_targets if query_targets is not None else [target_ids[n] for n in query_entry]
    padded = np.full((len(per_query), max(len(t) for t in per_query)), -1, np.int64)
    for n, t in enumerate(per_query):
        padded[n, :len(t)] = t
    is_target = (tops[:, :, None] == padded[:, None, :]).any(2)  # (Q, top)
    for i in at:
        p = np.zeros(n_entries)
        np.maximum.at(p, query_entry, is_target[:, :i].sum(1) / i)
        out[f"p@{i}"] = p
    return out


def random_scores(n_targets: np.ndarray, n_patterns: np.ndarray, vocab_size: int, *, cutoff: int = DEFAULT_CUTOFF,
                  at: Sequence[int] = PRECISION_AT) -> dict:
    """Expected RR and P@i per entry when each of its ``n_patterns`` queries gets an independent uniformly random
    ranking of ``vocab_size`` tokens and ``n_targets`` of them are targets (exact; computed once per target count)."""
    from math import comb

    n_targets, n_patterns = np.asarray(n_targets), np.asarray(n_patterns, float)
    V = vocab_size
    j = np.arange(1, cutoff + 2)
    out = {"rr": np.zeros(len(n_targets)), **{f"p@{i}": np.zeros(len(n_targets)) for i in at}}
    for t in np.unique(n_targets):
        rows = n_targets == t
        P = n_patterns[rows][:, None]
        # P(a query's best target rank >= j) = C(V-j+1, t) / C(V, t), then best over the patterns
        surv = np.array([comb(V - jj + 1, int(t)) / comb(V, int(t)) if V - jj + 1 >= t else 0.0 for jj in j])
        best = surv[None, :] ** P
        out["rr"][rows] = ((best[:, :-1] - best[:, 1:]) / j[None, :-1]).sum(1)
        for i in at:  # hits in the top i: hypergeometric; E[max over patterns] = sum_m P(max > m)
            pmf = np.array([comb(int(t), m) * comb(V - int(t), i - m) / comb(V, i) for m in range(i + 1)])
            cdf = np.cumsum(pmf)[None, :-1]
            out[f"p@{i}"][rows] = (1 - cdf ** P).sum(1) / i
    return out


def cell_weights(rows: Sequence[dict], population: Mapping[tuple[str, str], int] | None) -> np.ndarray:
    """Per row, the weight that makes a sample stand for the dataset it was drawn from (post-stratification):
    ``population[(relation, bucket)] / the rows of that cell among the rows of the row's strategy``; all 1 without
    a ``population``. A per-relation cap over-samples small relations, and each relation fills the frequency
    buckets differently, so unweighted bucket means mix the relations in the sample's proportions, not the
    dataset's."""
    if population is None:
        return np.ones(len(rows))
    sampled: dict[tuple, int] = {}
    for r in rows:
        key = (r["strategy"], r["relation"], r["bucket"])
        sampled[key] = sampled.get(key, 0) + 1
    return np.array([population.get((r["relation"], r["bucket"]), 0) / sampled[(r["strategy"], r["relation"],
                                                                               r["bucket"])] for r in rows])


def compare_strategies(rows: Sequence[dict], first: str, second: str, *,
                       population: Mapping[tuple[str, str], int] | None = None, resamples: int = 2000,
                       seed: int = 0) -> dict:
    """MRR of ``first`` minus MRR of ``second`` over the same entries, with its paired bootstrap 95% interval
    (:func:`lexprobe.core.intervals.paired_bootstrap`; entries resampled within their (relation, bucket)
    cell, cells weighted by ``population`` when the entries are a sample of it): ``difference``, ``low``,
    ``high``, ``entries``."""
    from ..core.intervals import paired_bootstrap

    rr = {s: {r["id"]: r for r in rows if r["strategy"] == s} for s in (first, second)}
    ids = sorted(set(rr[first]) & set(rr[second]))
    cells = [(rr[first][i]["relation"], rr[first][i]["bucket"]) for i in ids]
    diff, low, high = paired_bootstrap([rr[first][i]["rr"] for i in ids], [rr[second][i]["rr"] for i in ids],
                                       strata=[f"{r}/{b}" for r, b in cells], resamples=resamples, seed=seed,
                                       weights=None if population is None else
                                       {f"{r}/{b}": population[(r, b)] for r, b in set(cells)})
    return {"difference": diff, "low": low, "high": high, "entries": len(ids)}


def _cells(rows: Sequence[dict], strategy: str, relation: str | None = None,
           bucket: str | None = None) -> dict[tuple[str, str], np.ndarray]:
    """RR values of ``strategy`` per (relation, bucket) cell, keeping ``relation`` / ``bucket`` when given
    ("all" or None: every bucket)."""
    out: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r["strategy"] == strategy and relation in (None, r["relation"]) and bucket in (None, "all", r["bucket"]):
            out.setdefault((r["relation"], r["bucket"]), []).append(r["rr"])
    return {c: np.asarray(v) for c, v in sorted(out.items())}


def _weighted_mean_bootstrap(cells: Mapping[tuple[str, str], np.ndarray],
                             population: Mapping[tuple[str, str], int] | None, rng, resamples: int):
    """(the cells' means weighted by ``population`` (by the cells' sizes without it), the same over
    ``resamples`` resamples that draw each cell's values on their own)."""
    w = np.array([population.get(c, 0) if population is not None else len(v) for c, v in cells.items()], float)
    estimate = float(w @ [v.mean() for v in cells.values()] / w.sum())
    boots = w @ np.array([v[rng.integers(0, len(v), size=(resamples, len(v)))].mean(1)
                          for v in cells.values()]) / w.sum()
    return estimate, boots


def mrr_interval(rows: Sequence[dict], strategy: str, *, relation: str | None = None, bucket: str | None = None,
                 population: Mapping[tuple[str, str], int] | None = None, resamples: int = 2000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float, float]:
    """MRR of ``strategy`` over a relation and/or bucket with its percentile bootstrap interval: (mrr, low, high).
    Entries are resampled within their (relation, bucket) cell and the cells weighted as
    :func:`lexprobe.rare_words.probing.aggregate` weights them, so the MRR is the table's."""
    cells = _cells(rows, strategy, relation, bucket)
    if not cells:
        return float("nan"), float("nan"), float("nan")
    estimate, boots = _weighted_mean_bootstrap(cells, population, np.random.default_rng(seed), resamples)
    low, high = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return estimate, float(low), float(high)


def bucket_gap(rows: Sequence[dict], strategy: str, high: str, low: str, *,
               population: Mapping[tuple[str, str], int] | None = None, resamples: int = 2000, seed: int = 0,
               level: float = 0.95) -> dict:
    """MRR of bucket ``high`` minus MRR of bucket ``low`` for ``strategy`` (the frequency effect: frequent minus
    rare) with a percentile bootstrap interval. The two buckets hold different entries (not paired): each
    (relation, bucket) cell is resampled on its own, a bucket's MRR is its cells' means weighted as in
    :func:`lexprobe.rare_words.probing.aggregate`. Returns ``difference``, ``low``, ``high``, ``entries``; NaN when
    a bucket has no entry."""
    rng = np.random.default_rng(seed)
    parts = [_cells(rows, strategy, bucket=b) for b in (high, low)]
    entries = sum(len(v) for cells in parts for v in cells.values())
    if not all(parts):
        return {"difference": float("nan"), "low": float("nan"), "high": float("nan"), "entries": entries}
    (e_high, b_high), (e_low, b_low) = [_weighted_mean_bootstrap(c, population, rng, resamples) for c in parts]
    lo, hi = np.quantile(b_high - b_low, [(1 - level) / 2, (1 + level) / 2])
    return {"difference": e_high - e_low, "low": float(lo), "high": float(hi), "entries": entries}


def relation_gap(rows: Sequence[dict], strategy: str, high: str, low: str, *,
                 population: Mapping[tuple[str, str], int] | None = None, resamples: int = 2000, seed: int = 0,
                 level: float = 0.95) -> dict:
    """MRR of bucket ``high`` minus bucket ``low`` within each relation that has both, weighted by the relations'
    entries in the two buckets (``population``'s, else the rows'): the frequency effect with the relation mix held
    fixed. Percentile bootstrap interval, each (relation, bucket) cell resampled on its own. Returns
    ``difference``, ``low``, ``high``, ``entries``, ``relations``, ``sd`` (the pooled within-cell standard deviation
    of RR, for sizing a sample); NaN without a relation holding both buckets."""
    rng = np.random.default_rng(seed)
    cells = {b: _cells(rows, strategy, bucket=b) for b in (high, low)}
    relations = sorted({r for r, _ in cells[high]} & {r for r, _ in cells[low]})
    used = [cells[b][(r, b)] for r in relations for b in (high, low)]
    entries = sum(len(v) for v in used)
    dof = sum(len(v) - 1 for v in used)
    sd = float(np.sqrt(sum(((v - v.mean()) ** 2).sum() for v in used) / dof)) if dof > 0 else float("nan")
    if not relations:
        return {"difference": float("nan"), "low": float("nan"), "high": float("nan"), "entries": entries,
                "relations": [], "sd": sd}
    size = lambda r, b: population.get((r, b), 0) if population is not None else len(cells[b][(r, b)])  # noqa: E731
    w = np.array([size(r, high) + size(r, low) for r in relations], float)
    w /= w.sum()
    diff = np.zeros(resamples)
    estimate = 0.0
    for weight, r in zip(w, relations):
        for b, sign in ((high, 1), (low, -1)):
            v = cells[b][(r, b)]
            estimate += sign * weight * v.mean()
            diff += sign * weight * v[rng.integers(0, len(v), size=(resamples, len(v)))].mean(1)
    lo, hi = np.quantile(diff, [(1 - level) / 2, (1 + level) / 2])
    return {"difference": float(estimate), "low": float(lo), "high": float(hi), "entries": entries,
            "relations": relations, "sd": sd}
