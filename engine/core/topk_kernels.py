"""The top-k kernels (:mod:`lexprobe.core.topk`) compiled by numba, each working on a range of queries without
the GIL (:func:`lexprobe.core.cores.in_parallel` spreads the ranges over the cores). Module-level functions, not
closures: numba keys a closure's cache entry by its pickled cell contents, which differ in every process, so a
closure is compiled again in each one. Compiled on first use per signature and kept in the compiled-code folder
(:mod:`lexprobe.core.compile_cache`)."""

import numpy as np
from numba import njit

from .compile_cache import cached_on_disk


@njit(inline="always", boundscheck=False)
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


@cached_on_disk
@njit(nogil=True, boundscheck=False)
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


@njit(inline="always", boundscheck=False)
def push(best, x):  # pragma: no cover - compiled
    """Insert ``x`` into ``best`` (descending, its length the k kept) if it beats the last, which drops out;
    most values fail that one comparison, where a partition would move them all."""
    if x > best[-1]:
        p = len(best) - 1
        while p > 0 and best[p - 1] < x:
            best[p] = best[p - 1]
            p -= 1
        best[p] = x


@cached_on_disk
@njit(nogil=True, boundscheck=False)
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


@cached_on_disk
@njit(nogil=True, boundscheck=False)
def kth_best(S, k, out):  # pragma: no cover - compiled
    """``out[r]``: the k-th largest of ``S[r]`` (k <= 32, k <= row length), through a buffer of the k
    largest so far."""
    for r in range(S.shape[0]):
        best = np.full(k, -np.inf, dtype=np.float32)
        for x in S[r]:
            push(best, x)
        out[r] = best[k - 1]


@cached_on_disk
@njit(nogil=True, boundscheck=False)
def dots(Q, V, R):  # pragma: no cover - compiled
    """Every score ``R[r, j] = Q[r] . V[j]`` with the ranking's arithmetic."""
    for j in range(V.shape[0]):
        for r in range(Q.shape[0]):
            R[r, j] = dot(Q, r, V, j)
