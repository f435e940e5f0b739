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

The kernels are compiled by numba (:mod:`lexprobe.core.topk_kernels`, kept on disk between processes). Loading
them still costs seconds (tens with an empty compiled-code folder), so a process does not wait for them: its first
few single queries take the full scan in BLAS and numpy (:func:`ranking_scores` reproduces the kernel's arithmetic
bit for bit), and a batch of up to :data:`_BLAS_QUERIES` queries asked before the kernels are ready starts loading
them in a background thread and is answered meanwhile by the same sample threshold in BLAS, every word reaching
it ranked exactly in numpy (:meth:`TopK._sampled_in_numpy`), its blocks left when the kernels are ready by them:
the same answers as the kernels, in about the time of one BLAS product, so a notebook's first ``neighbors`` returns as soon as gensim's first ``most_similar`` would;
later batches find the kernels loaded. Larger batches load them first (they amortise it); :func:`load_kernels`
loads them now (a server before its first request).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from .compile_cache import compiled_once
from .cores import in_parallel
from .int8_scan import Int8Queries, Int8Rows, integer_band, integer_cuts, scan

_QUERY_BLOCK = 1024   # queries per block of the pruned path
_EXACT_BLOCK = 64     # queries per block of the full float32 scan (64 x 400k floats = 100 MB)
_SERIAL_MAX = 4       # at most this many queries: scores by the ranking's kernel on one thread, not by BLAS
# multiply-adds of a searcher's few-query scans done in BLAS and numpy while this process has not loaded the
# kernels (seconds, even from the disk cache; a whole numba compile without it): about what loading them costs
_UNCOMPILED_WORK = 1 << 31
_BLAS_QUERIES = 1000  # at most this many queries are answered in BLAS while the kernels load in the background
_ready = threading.Event()  # the kernels are loaded (load_kernels ran to its end) in this process
_loader: list[threading.Thread] = []  # the background loader, once started
_loader_lock = threading.Lock()


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


@compiled_once
def _kernels():
    """The compiled kernels (:mod:`lexprobe.core.topk_kernels`, imported on first use: numba takes a second to
    import)."""
    from . import topk_kernels as kernels

    return kernels.rank, kernels.dots, kernels.kth_best, kernels.narrow


def load_kernels() -> None:
    """Compile the kernels, or load them from the compiled-code folder, for every signature the searches use (a
    small seeded search through each path: the sample's and the few-query scores, the k-th best, the int8 scan,
    the narrowing and the ranking), then mark them ready; at once when they are."""
    if _ready.is_set():
        return
    rng = np.random.default_rng(0)
    V = rng.standard_normal((33_000, 8)).astype(np.float32)  # above the full scan's 32768 rows: the pruned path
    searcher = TopK(V)
    for m, k in ((1, 10), (_SERIAL_MAX + 1, 10), (_SERIAL_MAX + 1, 40)):  # few-query scores; BLAS; k > 32
        Q = V[:m].copy()
        excl = np.arange(m, dtype=np.int64)[:, None]
        searcher._pruned(Q, V, k, _sorted_exclusions(excl, len(V)), 32)
        exact_topk(Q, V[:1000], k, excl)
    _ready.set()


def _load_in_background() -> None:
    """Start :func:`load_kernels` in a daemon thread, once per process."""
    with _loader_lock:
        if _loader or _ready.is_set():
            return
        thread = threading.Thread(target=load_kernels, name="lexprobe-kernels", daemon=True)
        _loader.append(thread)
        thread.start()


def _slack(Q: np.ndarray, V: np.ndarray, max_norm: float) -> np.ndarray:
    """Per query, the float32 rounding allowed between a BLAS product and the ranking's: each is within
    gamma_d |q| |v| of the exact product, whatever the summation order; the fixed term is kept as a floor for tiny
    norms."""
    qn = np.linalg.norm(Q, axis=1)
    gamma = V.shape[1] * 2.0 ** -24 / (1 - V.shape[1] * 2.0 ** -24)
    return 1e-5 * (qn + 1) + 2 * gamma * qn * max_norm


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


def ranking_scores(Q: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``Q . V^T`` with the ranking kernel's arithmetic (:func:`lexprobe.core.topk_kernels.dot`: eight float32
    running sums over the dimensions u mod 8, added pairwise) in numpy, vectorised over the rows of ``V``: the
    same floats, bit for bit, without compiled code."""
    m, d = Q.shape
    full = d - d % 8
    R = np.empty((m, len(V)), dtype=np.float32)
    for r in range(m):
        acc = np.zeros((len(V), 8), dtype=np.float32)
        for u in range(0, full, 8):
            acc += V[:, u:u + 8] * Q[r, u:u + 8]
        for u in range(full, d):
            acc[:, 0] += V[:, u] * Q[r, u]
        R[r] = ((acc[:, 0] + acc[:, 1]) + (acc[:, 2] + acc[:, 3])) + ((acc[:, 4] + acc[:, 5]) + (acc[:, 6] + acc[:, 7]))
    return R


def _ranked_in_numpy(Q, V, cand, counts, excl, k):
    """:func:`_ranked` without compiled code: the same scores (:func:`ranking_scores`) and order (score, then
    column)."""
    D = np.full((len(Q), k), -np.inf, dtype=np.float32)
    I = np.full((len(Q), k), -1, dtype=np.int64)
    for r in range(len(Q)):
        cols = cand[r, :counts[r]]
        cols = cols[~np.isin(cols, excl[r])]
        s = ranking_scores(Q[r:r + 1], V[cols])[0]
        best = np.lexsort((cols, -s))[:k]
        D[r, :len(best)], I[r, :len(best)] = s[best], cols[best]
    return D, I


def _scores(Q: np.ndarray, V: np.ndarray, compiled: bool = True) -> np.ndarray:
    """Every score ``Q . V^T`` in float32: BLAS for a batch; for a few queries the ranking's kernel on one
    thread (BLAS wakes its threads even for one row: milliseconds on a busy machine), unless ``compiled`` is
    False."""
    if len(Q) > _SERIAL_MAX or not compiled:
        return Q @ V.T
    R = np.empty((len(Q), len(V)), dtype=np.float32)
    _kernels()[1](Q, V, R)
    return R


def exact_topk(Q: np.ndarray, V: np.ndarray, k: int, excl: np.ndarray | None = None, *, compiled: bool = True
               ) -> tuple[np.ndarray, np.ndarray]:
    """The full scan: every score in float32, each query's k-th best allowed score, and every word reaching it
    (less a rounding slack) ranked exactly. ``excl``: (m, e) excluded columns, -1 padded. Returns ``(D, I)``
    (m, k), ``-inf`` / ``-1`` where fewer than k columns are allowed. ``compiled=False``: BLAS and numpy only,
    the same answers (:func:`ranking_scores`)."""
    Q = np.ascontiguousarray(Q, dtype=np.float32)
    m, n = len(Q), len(V)
    excl = _sorted_exclusions(np.zeros((m, 0), np.int64) if excl is None else excl, n)
    D = np.full((m, k), -np.inf, dtype=np.float32)
    I = np.full((m, k), -1, dtype=np.int64)
    for a in range(0, m, _EXACT_BLOCK):
        q, ex = Q[a:a + _EXACT_BLOCK], excl[a:a + _EXACT_BLOCK]
        R = _scores(q, V, compiled)
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
        D[a:a + len(q)], I[a:a + len(q)] = (_ranked if compiled else _ranked_in_numpy)(q, V, cand, counts, ex, k)
    return D, I


@dataclass
class TopK:
    """Exact top-k over fixed rows ``V`` (n, d float32); row i has id ``ids[i]`` (ascending, so that ties by
    row are ties by id; default: the row number). Build once per vector set: it keeps the int8 copy."""

    V: np.ndarray
    ids: np.ndarray | None = None
    _int8: Int8Rows | None = field(default=None, repr=False)
    _samples: dict = field(default_factory=dict, repr=False)
    _uncompiled: int = field(default=0, repr=False)  # multiply-adds scanned without the kernels

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
            small = n < max(32768, 16 * step * k)  # the full scan costs less than the pruned path
            if not _ready.is_set() and m <= _SERIAL_MAX and self._uncompiled < _UNCOMPILED_WORK:
                self._uncompiled += m * n * V.shape[1]  # a one-query process never loads the kernels
                D, I = exact_topk(Q, V, k, excl, compiled=False)
            elif not _ready.is_set() and m <= _BLAS_QUERIES:
                _load_in_background()
                D, I = exact_topk(Q, V, k, excl, compiled=False) if small else \
                    self._while_loading(Q, V, k, _sorted_exclusions(excl, n), step)
            elif small:
                D, I = exact_topk(Q, V, k, excl)
            else:
                load_kernels()  # a large batch amortises the wait (a no-op once loaded)
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
        slack = _slack(Q, V, self.max_norm)
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

    def _while_loading(self, Q, V, k, excl, step):
        """A batch while the kernels load: a block at a time in numpy (:meth:`_sampled_in_numpy`), the blocks left
        when they are ready by the compiled pruned path (the same answers either way)."""
        D = np.full((len(Q), k), -np.inf, dtype=np.float32)
        I = np.full((len(Q), k), -1, dtype=np.int64)
        for a in range(0, len(Q), _EXACT_BLOCK):
            if _ready.is_set():
                D[a:], I[a:] = self._pruned(Q[a:], V, k, excl[a:], step)
                break
            b = a + _EXACT_BLOCK
            D[a:b], I[a:b] = self._sampled_in_numpy(Q[a:b], V, k, excl[a:b], step)
        return D, I

    def _sampled_in_numpy(self, Q, V, k, excl, step):
        """The pruned path without compiled code: each query's threshold ``tau`` is the k-th best allowed score of
        the strided sample (BLAS), every word whose BLAS score reaches ``tau`` less the rounding slack is kept, and
        those are ranked exactly (:func:`_ranked_in_numpy`: the kernel's floats and order), so the answers are the
        kernels'. A query without k allowed sample words or keeping too many words: the full scan in numpy."""
        m, n = len(Q), len(V)
        cap = 4 * k * step + 1024
        sample = self._sample(step, n)
        slack = _slack(Q, V, self.max_norm)
        D = np.full((m, k), -np.inf, dtype=np.float32)
        I = np.full((m, k), -1, dtype=np.int64)
        for a in range(0, m, _EXACT_BLOCK):
            q, ex = Q[a:a + _EXACT_BLOCK], excl[a:a + _EXACT_BLOCK]
            at = np.repeat(np.arange(len(q)), ex.shape[1])
            cols = ex.reshape(-1)
            S = q @ sample.T
            hit = (cols >= 0) & (cols % step == 0)
            S[at[hit], cols[hit] // step] = -np.inf
            tau = np.partition(S, S.shape[1] - k, axis=1)[:, -k] if S.shape[1] >= k else \
                np.full(len(q), -np.inf, np.float32)
            R = q @ V.T
            R[at[cols >= 0], cols[cols >= 0]] = -np.inf
            keep = R >= (tau - slack[a:a + len(q)])[:, None]
            counts = keep.sum(axis=1)
            lost = ~np.isfinite(tau) | (counts > cap)
            keep[lost] = False
            counts[lost] = 0
            cand = np.zeros((len(q), max(1, counts.max(initial=0))), dtype=np.int64)
            r, c = np.nonzero(keep)
            cand[r, np.arange(len(r)) - np.repeat(np.cumsum(counts) - counts, counts)] = c
            D[a:a + len(q)], I[a:a + len(q)] = _ranked_in_numpy(q, V, cand, counts, ex, k)
            if lost.any():
                rows = np.flatnonzero(lost)
                D[a + rows], I[a + rows] = exact_topk(q[rows], V, k, ex[rows], compiled=False)
        return D, I
