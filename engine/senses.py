"""Query-by-example sense ranking (Gessler & Schneider, "BERT Has Uncommon Sense", section 3).

A query instance (a sense-tagged token of the query corpus Q) ranks the candidate instances of the database
corpus D by cosine similarity of their token vectors. Candidates are D's instances of the query's lemma and
part of speech (WordNet senses belong to a lemma *and* a POS, and the paper's OntoNotes labels are
lemma-POS too; ``match_pos=False`` pools the POS, ``all_lemmas=True`` ranks every sense-tagged instance of D).
A candidate is relevant when its sense equals the query's sense (an instance with two gold keys keeps the
first one, as the gold file lists it).

Metrics of one query with ``R`` relevant among ``N`` candidates, ranked once in full:

- ``P@k`` (k = 1..K, K = 50 by default) = relevant among the top ``min(k, N)`` / ``k``. When fewer than
  ``k`` candidates exist the missing ranks count as misses (the denominator stays ``k``), as the paper's
  scorer does (it divides by ``k`` whatever the list length); so ``P@k = R / k`` for ``k >= N``.
- ``recall@k`` = relevant among the top ``min(k, N)`` / ``R``.
- ``AP`` (true average precision over the full ranking) = mean over the ``R`` relevant candidates of the
  precision at the rank where each is found.

Ties in score are broken by database row order (a stable sort), so results are deterministic.

Headline numbers of a set of queries (a Table-1 cell): **mean P@k** (``p_at_k_mean``) = the mean over
k = 1..K of the queries' mean P@k; this is the number in the paper's Table 1 (its "mean average precision
over precision at k for 50 instances"). **MAP** (``map``) = the mean of the queries' true AP. The random
baseline of a cell is the exact expectation of the same numbers under a uniformly random ranking of each
query's candidates (:func:`random_baseline`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_K = 50
DEFAULT_MIN_SENSE_COUNT = 5
_BLOCK_ELEMENTS = 4_000_000  # scores per matrix-product block (queries x candidates)


@dataclass
class RankMetrics:
    """Per-query metrics of one ranking: arrays with one row per query."""

    p_at_k: np.ndarray       # (m, K) float64, P@1..P@K
    recall_at_k: np.ndarray  # (m, K) float64, recall@1..recall@K (nan when R = 0)
    ap: np.ndarray           # (m,) float64, true average precision (nan when R = 0)
    n_candidates: np.ndarray  # (m,) int64, N
    n_relevant: np.ndarray    # (m,) int64, R


def _empty(m: int, k_max: int) -> RankMetrics:
    return RankMetrics(np.zeros((m, k_max)), np.full((m, k_max), np.nan), np.full(m, np.nan),
                       np.zeros(m, np.int64), np.zeros(m, np.int64))


def rank_metrics(queries: np.ndarray, query_senses: np.ndarray, candidates: np.ndarray,
                 candidate_senses: np.ndarray, *, k_max: int = DEFAULT_K, exclude: np.ndarray | None = None,
                 block: int = _BLOCK_ELEMENTS) -> RankMetrics:
    """Rank ``candidates`` for every query by inner product (cosine for unit rows) and score the rankings.

    ``queries`` (m, d) and ``candidates`` (n, d) are float32 unit vectors; ``*_senses`` are integer sense
    codes (equal code = relevant). ``exclude``: per query, a candidate position never ranked (the query
    itself when Q and D are the same corpus), or -1. One matrix product per block of queries.
    """
    queries = np.asarray(queries, dtype=np.float32)
    candidates = np.asarray(candidates, dtype=np.float32)
    query_senses, candidate_senses = np.asarray(query_senses), np.asarray(candidate_senses)
    m, n = len(queries), len(candidates)
    if k_max < 1:
        raise ValueError(f"k_max must be at least 1, not {k_max}")
    if queries.ndim != 2 or candidates.ndim != 2 or (m and n and queries.shape[1] != candidates.shape[1]):
        raise ValueError(f"query vectors {queries.shape} and candidate vectors {candidates.shape} do not match")
    exclude = np.full(m, -1, np.int64) if exclude is None else np.asarray(exclude, np.int64)
    out = _empty(m, k_max)
    out.n_candidates[:] = n - (exclude >= 0)
    if m == 0 or n == 0:
        return out
    ks = np.arange(1, k_max + 1)
    last = np.minimum(ks, n) - 1  # column of the cumulative hits that P@k reads
    ranks = np.arange(1, n + 1, dtype=np.float64)
    step = max(1, block // n)
    for start in range(0, m, step):
        stop = min(m, start + step)
        scores = queries[start:stop] @ candidates.T
        relevant = query_senses[start:stop, None] == candidate_senses[None, :]
        ex = exclude[start:stop]
        rows = np.flatnonzero(ex >= 0)
        scores[rows, ex[rows]] = -np.inf  # ranked last and never relevant: changes no hit count
        relevant[rows, ex[rows]] = False
        order = np.argsort(-scores, axis=1, kind="stable")
        ranked = np.take_along_axis(relevant, order, axis=1)
        hits = np.cumsum(ranked, axis=1, dtype=np.int64)
        total = hits[:, -1]
        hits_at_k = hits[:, last]
        with np.errstate(invalid="ignore", divide="ignore"):
            out.p_at_k[start:stop] = hits_at_k / ks
            out.recall_at_k[start:stop] = hits_at_k / total[:, None]
            out.ap[start:stop] = (ranked * (hits / ranks)).sum(axis=1) / total
        out.n_relevant[start:stop] = total
    return out


def random_baseline(n_candidates: np.ndarray, n_relevant: np.ndarray, *,
                    k_max: int = DEFAULT_K) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact expected (P@k (m, K), recall@k (m, K), AP (m,)) of a uniformly random ranking.

    With ``R`` relevant among ``N``: E[P@k] = R / N for k <= N and R / k for k > N (every candidate is
    retrieved, missing ranks are misses, as in :func:`rank_metrics`); E[recall@k] = min(k, N) / N;
    E[AP] = (H_N + (R - 1) / (N - 1) * (N - H_N)) / N with H_N the N-th harmonic number (1 when N = 1),
    from E[AP] = 1/R sum_i P(rank i relevant) E[hits_i | rank i relevant] / i.
    """
    N = np.asarray(n_candidates, dtype=np.float64)
    R = np.asarray(n_relevant, dtype=np.float64)
    ks = np.arange(1, k_max + 1, dtype=np.float64)
    retrieved = np.minimum(ks[None, :], N[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        p = R[:, None] * retrieved / (N[:, None] * ks[None, :])
        recall = np.where(R[:, None] > 0, retrieved / N[:, None], np.nan)
        harmonic = _harmonic(N)
        spread = np.where(N > 1, (R - 1) / np.maximum(N - 1, 1), 0.0)
        ap = np.where(R > 0, (harmonic + spread * (N - harmonic)) / N, np.nan)
    p = np.where(N[:, None] > 0, p, 0.0)
    return p, recall, ap


def _harmonic(n: np.ndarray) -> np.ndarray:
    """H_n = sum_{i<=n} 1/i for an array of non-negative integers (exact table up to the largest n)."""
    n = np.asarray(n, dtype=np.int64)
    top = int(n.max()) if n.size else 0
    table = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, top + 1))])
    return table[n]
