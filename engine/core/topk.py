"""Exact batched top-k by inner product, ties broken by id: the engine's nearest-neighbour kernel.

Brute force over a 400k x 50 vocabulary is one score per (query, word); at float32 speed that matrix is the
limit, and picking the top k out of it with generic tools (argpartition, ``torch.topk``, FAISS's heaps) costs
as much again. So the kernel prunes, with the analogy kernel's idea (:mod:`lexprobe.analogies.analogy`): a
threshold from a sample, then exact work only on the words that can still reach the top k.

1. **Threshold from a strided sample.** Every ``step``-th row is scored in float32; a query's k-th best allowed
   sample score ``tau`` is a lower bound of its true k-th best score (the sample is a subset of the candidates).
2. **Int8 pass** (:mod:`lexprobe.core.int8_scan`). Every word is scored in 8-bit integers, four times float32's
   rate, and compared with ``tau`` less the rounding's proven error bound ``e`` inside the compiled kernel: no
   score matrix is stored, and every word that can tie or beat the k-th best is kept, with its integer score.
3. **Narrowing.** If ``A`` is the k-th best integer-scored kept word (in score units), the k words above it
   score at least ``A - e`` exactly, so a word of the top k scores at least ``A - 2e`` in integers (less float
   rounding): the rest of the kept words are dropped without touching their vectors.
4. **Exact ranking.** The remaining words are scored again in float32, one dot product each in the same order
   for every word (equal vectors score equal), and ranked by score, then id.

A query with too many kept words (a zero query ties with every word) or fewer than k allowed sample words is
answered by the full float32 scan (:func:`exact_topk`): every score, the k-th best, and the same exact ranking
of every word that reaches it. That path is also the reference the pruned one is tested against. Exclusions
(per query) and the restriction to the first N rows are exact in both paths.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .cores import in_parallel
from .int8_scan import Int8Queries, Int8Rows, integer_band, integer_cuts, scan

_QUERY_BLOCK = 1024   # queries per block of the pruned path
_EXACT_BLOCK = 64     # queries per block of the full float32 scan (64 x 400k floats = 100 MB)
_SERIAL_MAX = 4       # at most this many queries: scores by the ranking's kernel on one thread, not by BLAS


def topk_rows(R: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise top-k of a score matrix (``-inf`` for excluded): ``(columns, scores)``, scores descending and
    equal scores in column order, also across the cut. ``k`` is clamped to the number of columns."""
    m, n = R.shape
    k = min(k, n)
    if k == 0:
        return np.zeros((m, 0), dtype=np.int64), np.zeros((m, 0), dtype=R.dtype)
    if k == 1:  # argmax returns the first of equal scores
        best = R.argmax(axis=1)[:, None]
        return best, np.take_along_axis(R, best, axis=1)
    part = np.argpartition(-R, k - 1, axis=1)[:, :k] if k < n else np.tile(np.arange(n), (m, 1))
    vals = np.take_along_axis(R, part, axis=1)
    order = np.lexsort((part, -vals), axis=1)
    part, vals = np.take_along_axis(part, order, axis=1), np.take_along_axis(vals, order, axis=1)
    kth = vals[:, -1]
    tied = np.flatnonzero((R >= kth[:, None]).sum(axis=1) > k)  # more columns reach the k-th score than fit
    for row in tied:  # rare: take the equal scores at the cut in column order
        above = np.flatnonzero(R[row] > kth[row])
        above = above[np.lexsort((above, -R[row, above]))]
        equal = np.flatnonzero(R[row] == kth[row])[: k - len(above)]
        part[row] = np.concatenate([above, equal])
        vals[row] = R[row, part[row]]
    return part, vals


@cache
def _kernels():
    """The compiled kernels (numba; compiled on first use, cached on disk). Each works on a range of queries
    without the GIL: :func:`lexprobe.core.cores.in_parallel` spreads the ranges over the cores."""
    from numba import njit

    @njit(inline="always", cache=True, boundscheck=False)
    def dot(Q, r, V, j):  # pragma: no cover - compiled
        """``Q[r] . V[j]`` in float32: eight running sums over the dimensions (u mod 8) added pairwise, the same
        order for every pair (equal vectors score equal) and eight independent chains instead of one."""
        d = Q.shape[1]
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = np.float32(0.0)
        full = d - d % 8
        for u in range(0, full, 8):
            a0 += Q[r, u] * V[j, u]
            a1 += Q[r, u + 1] * V[j, u + 1]
            a2 += Q[r, u + 2] * V[j, u + 2]
            a3 += Q[r, u + 3] * V[j, u + 3]
            a4 += Q[r, u + 4] * V[j, u + 4]
            a5 += Q[r, u + 5] * V[j, u + 5]
            a6 += Q[r, u + 6] * V[j, u + 6]
            a7 += Q[r, u + 7] * V[j, u + 7]
        for u in range(full, d):
            a0 += Q[r, u] * V[j, u]
        return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))

    @njit(cache=True, nogil=True, boundscheck=False)
    def rank(Q, V, cand, counts, excl, k, D, I):  # pragma: no cover - compiled
        """Per query: exact float32 scores of its candidate columns (ascending), the excluded ones (``excl[r]``
        sorted, -1 padded at the front) dropped, the best ``k`` by score then column into ``D[r]``, ``I[r]``
        (``-inf`` / ``-1`` on entry). Small k: each word is inserted into the k best so far (most fail one
        comparison); large k: every score, then a stable sort."""
        m = Q.shape[0]
        for r in range(m):
            c = counts[r]
            scores = np.empty(c if k > 32 else 0, dtype=np.float32)
            cols = np.empty(c if k > 32 else 0, dtype=np.int64)
            kept = 0
            for t in range(c):
                j = cand[r, t]
                pos = np.searchsorted(excl[r], j)
                if pos < excl.shape[1] and excl[r, pos] == j:
                    continue
                s = dot(Q, r, V, j)
                if k > 32:
                    scores[kept] = s
                    cols[kept] = j
                elif kept < k or s > D[r, k - 1]:  # an equal score comes later in column order: it stays out
                    p = min(kept, k - 1)
                    while p > 0 and D[r, p - 1] < s:
                        D[r, p] = D[r, p - 1]
                        I[r, p] = I[r, p - 1]
                        p -= 1
                    D[r, p] = s
                    I[r, p] = j
                kept += 1
            if k > 32:
                order = np.argsort(-scores[:kept], kind="mergesort")  # stable: equal scores keep column order
                for t in range(min(k, kept)):
                    D[r, t] = scores[order[t]]
                    I[r, t] = cols[order[t]]

    @njit(inline="always", cache=True, boundscheck=False)
    def push(best, x):  # pragma: no cover - compiled
        """Insert ``x`` into ``best`` (descending, its length the k kept) if it beats the last, which drops out;
        most values fail that one comparison, where a partition would move them all."""
        if x > best[-1]:
            p = len(best) - 1
            while p > 0 and best[p - 1] < x:
                best[p] = best[p - 1]
                p -= 1
            best[p] = x

    @njit(cache=True, nogil=True, boundscheck=False)
    def narrow(cand, scores, counts, excl, k, band):  # pragma: no cover - compiled
        """In place, per query: drop the excluded candidates, then those whose integer score lies more than
        ``band[r]`` below the k-th best allowed one (see :meth:`TopK._pruned`); ascending order kept."""
        for r in range(counts.shape[0]):
            kept = 0
            for t in range(counts[r]):
                j = cand[r, t]
                pos = np.searchsorted(excl[r], j)
                if pos < excl.shape[1] and excl[r, pos] == j:
                    continue
                cand[r, kept] = j
                scores[r, kept] = scores[r, t]
                kept += 1
            counts[r] = kept
            if kept <= k:
                continue
            if k > 32:
                kth = np.int64(np.sort(scores[r, :kept])[kept - k])
            else:
                best = np.full(k, np.iinfo(np.int32).min, dtype=np.int64)
                for t in range(kept):
                    push(best, np.int64(scores[r, t]))
                kth = best[k - 1]
            floor = kth - band[r]
            short = 0
            for t in range(kept):
                if scores[r, t] >= floor:
                    cand[r, short] = cand[r, t]
                    short += 1
            counts[r] = short

    @njit(cache=True, nogil=True, boundscheck=False)
    def kth_best(S, k, out):  # pragma: no cover - compiled
        """``out[r]``: the k-th largest of ``S[r]`` (k <= 32, k <= row length), through a buffer of the k
        largest so far."""
        for r in range(S.shape[0]):
            best = np.full(k, -np.inf, dtype=np.float32)
            for x in S[r]:
                push(best, x)
            out[r] = best[k - 1]

    @njit(cache=True, nogil=True, boundscheck=False)
    def dots(Q, V, R):  # pragma: no cover - compiled
        """Every score ``R[r, j] = Q[r] . V[j]`` with the ranking's arithmetic."""
        for j in range(V.shape[0]):
            for r in range(Q.shape[0]):
                R[r, j] = dot(Q, r, V, j)

    return rank, dots, kth_best, narrow


def _sorted_exclusions(excl: np.ndarray, n: int) -> np.ndarray:
    """(m, e) excluded columns sorted per row, out-of-range ones as -1 (sorted to the front)."""
    excl = np.where((excl >= 0) & (excl < n), excl, -1).astype(np.int64)
    return np.sort(excl, axis=1)


def _ranked(Q, V, cand, counts, excl, k):
    D = np.full((len(Q), k), -np.inf, dtype=np.float32)
    I = np.full((len(Q), k), -1, dtype=np.int64)
    rank = _kernels()[0]
    in_parallel(len(Q), lambda a, b: rank(Q[a:b], V, cand[a:b], counts[a:b], excl[a:b], k, D[a:b], I[a:b]))
    return D, I


def _scores(Q: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Every score ``Q . V^T`` in float32: BLAS for a batch; for a few queries the ranking's kernel on one
    thread (BLAS wakes its threads even for one row: milliseconds on a busy machine)."""
    if len(Q) > _SERIAL_MAX:
        return Q @ V.T
    R = np.empty((len(Q), len(V)), dtype=np.float32)
    _kernels()[1](Q, V, R)
    return R


def exact_topk(Q: np.ndarray, V: np.ndarray, k: int, excl: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """The full scan: every score in float32, each query's k-th best allowed score, and every word reaching it
    (less a rounding slack) ranked exactly. ``excl``: (m, e) excluded columns, -1 padded. Returns ``(D, I)``
    (m, k), ``-inf`` / ``-1`` where fewer than k columns are allowed."""
    Q = np.ascontiguousarray(Q, dtype=np.float32)
    m, n = len(Q), len(V)
    excl = _sorted_exclusions(np.zeros((m, 0), np.int64) if excl is None else excl, n)
    D = np.full((m, k), -np.inf, dtype=np.float32)
    I = np.full((m, k), -1, dtype=np.int64)
    for a in range(0, m, _EXACT_BLOCK):
        q, ex = Q[a:a + _EXACT_BLOCK], excl[a:a + _EXACT_BLOCK]
        R = _scores(q, V)
        rows = np.repeat(np.arange(len(q)), ex.shape[1])
        ok = ex.reshape(-1) >= 0
        R[rows[ok], ex.reshape(-1)[ok]] = -np.inf
        _, vals = topk_rows(R, k)
        kth = vals[:, -1] if vals.shape[1] else np.full(len(q), np.inf, np.float32)  # -inf: fewer than k allowed
        slack = 1e-5 * (np.abs(kth) + np.linalg.norm(q, axis=1) + 1)  # product vs one-by-one rounding
        keep = (R >= np.where(np.isfinite(kth), kth - slack, -np.inf)[:, None]) & (R > -np.inf)
        counts = keep.sum(axis=1)
        cand = np.zeros((len(q), max(1, counts.max(initial=0))), dtype=np.int64)
        r, c = np.nonzero(keep)
        cand[r, np.arange(len(r)) - np.repeat(np.cumsum(counts) - counts, counts)] = c
        D[a:a + len(q)], I[a:a + len(q)] = _ranked(q, V, cand, counts, ex, k)
    return D, I


@dataclass
class TopK:
    """Exact top-k over fixed rows ``V`` (n, d float32); row i has id ``ids[i]`` (ascending, so that ties by
    row are ties by id; default: the row number). Build once per vector set: it keeps the int8 copy."""

    V: np.ndarray
    ids: np.ndarray | None = None
    _int8: Int8Rows | None = field(default=None, repr=False)
    _samples: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.V = np.ascontiguousarray(self.V, dtype=np.float32)
        if self.ids is not None and len(self.ids) > 1 and (np.diff(self.ids) <= 0).any():
            raise ValueError("TopK ids must be strictly ascending")
        squares = np.einsum("ij,ij->i", self.V, self.V) if len(self.V) else np.zeros(1, np.float32)
        self.max_norm = float(np.sqrt(squares.max())) * (1 + 1e-5)  # float32 sums: a margin for their rounding

    @property
    def n(self) -> int:
        return len(self.V)

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """Row of each id (-1 where the searcher has no such id)."""
        ids = np.asarray(ids, dtype=np.int64)
        if self.ids is None:
            return np.where((ids >= 0) & (ids < self.n), ids, -1)
        if not self.n:
            return np.full(ids.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.ids, ids), self.n - 1)
        return np.where(self.ids[pos] == ids, pos, -1)

    def search(self, Q: np.ndarray, k: int, *, exclude: np.ndarray | None = None, limit: int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` rows by inner product: ``(D, I)`` of shape (m, k) with ids, ``-inf`` / ``-1`` where fewer
        than k rows are allowed. ``exclude``: (m, e) row numbers never returned (-1 padded); ``limit``: only
        rows ``< limit``."""
        Q = np.ascontiguousarray(Q, dtype=np.float32)
        m = len(Q)
        n = self.n if limit is None else max(0, min(int(limit), self.n))
        excl = np.zeros((m, 0), np.int64) if exclude is None else np.asarray(exclude, dtype=np.int64)
        V = self.V[:n]
        if m == 0 or k <= 0 or n == 0:
            D, I = np.full((m, max(k, 0)), -np.inf, np.float32), np.full((m, max(k, 0)), -1, np.int64)
        else:
            step = 32 if k <= 16 else 16 if k <= 64 else 8
            if n < max(32768, 16 * step * k):  # the full scan costs less
                D, I = exact_topk(Q, V, k, excl)
            else:
                D, I = self._pruned(Q, V, k, _sorted_exclusions(excl, n), step)
        if self.ids is not None:
            I = np.where(I >= 0, self.ids[np.maximum(I, 0)], -1)
        return D, I

    def _sample(self, step: int, n: int) -> np.ndarray:
        """Rows 0, step, 2 step, ... below ``n`` (contiguous, kept per step)."""
        if step not in self._samples:
            self._samples[step] = np.ascontiguousarray(self.V[::step])
        return self._samples[step][: -(-n // step)]

    def _int8_rows(self) -> Int8Rows:
        if self._int8 is None:
            self._int8 = Int8Rows.of(self.V)
        return self._int8

    def _pruned(self, Q, V, k, excl, step):
        m, n = len(Q), len(V)
        cap = 4 * k * step + 1024  # kept words per query beyond which the full scan is cheaper
        sample = self._sample(step, n)
        slack = 1e-5 * (np.linalg.norm(Q, axis=1) + 1)  # float32 rounding: the sample's product vs the ranking's
        rows = self._int8_rows()
        D = np.full((m, k), -np.inf, dtype=np.float32)
        I = np.full((m, k), -1, dtype=np.int64)
        fallback = []
        block = max(1, min(_QUERY_BLOCK, (64 << 20) // (8 * cap)))
        for a in range(0, m, block):
            b = min(m, a + block)
            S = _scores(Q[a:b], sample)
            ex = excl[a:b]
            at = np.repeat(np.arange(b - a), ex.shape[1])
            cols = ex.reshape(-1)
            ok = (cols >= 0) & (cols % step == 0)
            S[at[ok], cols[ok] // step] = -np.inf
            tau = np.full(b - a, -np.inf, dtype=np.float32)
            if S.shape[1] >= k > 32:
                S.partition(S.shape[1] - k, axis=1)  # in place: the k-th best lands at column -k
                tau = S[:, -k]
            elif S.shape[1] >= k:
                kth_best = _kernels()[2]
                in_parallel(b - a, lambda x, y: kth_best(S[x:y], k, tau[x:y]))
            queries = Int8Queries.of(Q[a:b], rows.groups)
            cut = integer_cuts(rows, queries, tau - slack[a:b], self.max_norm)
            counts, cand, scores = scan(rows, queries, cut, n, cap)
            lost = ~np.isfinite(tau) | (counts[: b - a] > cap) | (queries.rounded_norm == 0)
            counts = np.where(lost, 0, counts[: b - a])
            band = integer_band(rows, queries, 2 * slack[a:b], self.max_norm)
            narrow = _kernels()[3]
            in_parallel(b - a, lambda x, y: narrow(cand[x:y], scores[x:y], counts[x:y], ex[x:y], k, band[x:y]))
            fallback.append(np.flatnonzero(lost) + a)
            D[a:b], I[a:b] = _ranked(Q[a:b], V, cand, counts, ex, k)
        fallback = np.concatenate(fallback)
        if len(fallback):
            D[fallback], I[fallback] = exact_topk(Q[fallback], V, k, excl[fallback])
        return D, I
