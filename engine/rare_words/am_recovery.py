"""AM's analogue of Figure 1, made to test AM's own mechanism: held-out known words inferred again from their form
and k of their contexts, compared with their true embedding, with the baselines that isolate each part of AM.

**Fixed words** (:func:`recovery_words`): one seeded set of held-out words, each with at least ``min_contexts``
(32) usable windows (a window with a known word other than the word) among its first 2 x ``min_contexts`` in the
contexts index, and its first ``min_contexts`` usable windows drawn once (the index keeps a word's windows in a
seeded random order). Every column k = 1, 2, 4, 8, 16, 32 reads the **first k** of them: the same words in every
column and nested windows (the 8 include the 4), so the curve over k shows what more contexts add and nothing else
(different words per column would mix more contexts with more frequent words). k = 0 is the form alone.

**Methods** at every k (:func:`am_recovery`): the AM-family models given (``am``, ``am-context``, ``fcm``: the
form-context model, uniform attention; all trained on the same words, targets and seed), ``form`` (the first
model's form path: AM with no context), ``mean`` (the plain mean of the k context vectors) and ``linear map`` (the
"a la carte" baseline of Khodak et al., 2018: the mean of the k context vectors times a d x d matrix fitted in
closed form, by least squares, on the training words' mean context vectors against their embeddings,
:func:`fit_linear_map`; a learned context-only model).

**Measures**: the cosine to the true embedding, the rank of the true word among all targets by cosine (1 =
nearest; ties count against it) and the top-10 share, with bootstrap (cosine) and Wilson (top-10) intervals; and
:func:`differences`: paired bootstrap intervals (the same words resampled) of one method minus another at each k,
of a method at the largest k minus itself at k = 1 (what the contexts add), of a gap at the largest k minus the
same gap at k = 1, and of the models' mean gate alpha (the form's weight) minus the first model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from ..core.conventions import Result
from ..core.errors import LexprobeError
from ..core.intervals import paired_bootstrap, wilson
from ..core.seeds import rng_for
from .am_targets import TargetTable
from .mimicking import AMModel, ContextData, TrainingSet, context_vectors

DEFAULT_KS = (0, 1, 2, 4, 8, 16, 32)
MIN_CONTEXTS = 32


def recovery_words(targets: TargetTable, data: ContextData, n: int, *, seed: int = 0,
                   min_contexts: int = MIN_CONTEXTS) -> tuple[list[str], list[list[list[str]]]]:
    """``n`` words to hold out (a seeded sample of the target words made of letters with ``min_contexts`` usable
    windows among their first 2 x ``min_contexts`` in ``data``) and each one's first ``min_contexts`` usable
    windows, in the index's order."""
    owners = data.owners.to_numpy(zero_copy_only=False)
    if not len(owners):
        raise LexprobeError("recovery: the contexts index is empty")
    starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    sizes = np.diff(np.r_[starts, len(owners)])
    scan = 2 * min_contexts
    first = [(owners[a], a, min(s, scan)) for a, s in zip(starts, sizes)
             if s >= min_contexts and owners[a].isalpha() and targets.row(owners[a]) is not None]
    rows = np.concatenate([np.arange(a, a + m) for _, a, m in first]) if first else np.zeros(0, np.int64)
    taken = pa.array(rows, pa.int64())
    _, counts = context_vectors(data.windows.take(taken), data.owners.take(taken), targets) if len(rows) else (
        None, np.zeros(0, np.int64))
    pool, offset = [], 0
    for word, a, m in first:
        usable = np.flatnonzero(counts[offset:offset + m] > 0)[:min_contexts]
        if len(usable) == min_contexts:
            pool.append((word, rows[offset + usable]))
        offset += m
    if len(pool) < n:
        raise LexprobeError(f"recovery: only {len(pool)} target words have {min_contexts} usable contexts, {n} asked")
    pick = sorted(rng_for(seed, "am-recovery").choice(len(pool), size=n, replace=False).tolist())
    words = [pool[i][0] for i in pick]
    chosen = data.windows.take(pa.array(np.concatenate([pool[i][1] for i in pick]), pa.int64())).to_pylist()
    return words, [chosen[j * min_contexts:(j + 1) * min_contexts] for j in range(n)]


def word_means(ts: TrainingSet) -> np.ndarray:
    """Each training word's mean context vector (the mean of all its usable contexts' v_C)."""
    sums = np.add.reduceat(ts.ctx_vectors, ts.word_start, axis=0) if len(ts.words) else ts.ctx_vectors[:0]
    return sums / ts.word_contexts[:, None]


def fit_linear_map(means: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """The "a la carte" matrix (Khodak et al., 2018): the d x d ``M`` minimising sum_w |u_w M - v_w|^2 over the
    training words' mean context vectors ``means`` (u_w, rows) and embeddings ``targets`` (v_w), closed form (least
    squares). A word's estimate is then ``u M``."""
    if len(means) < means.shape[1]:
        raise LexprobeError(f"linear map: {len(means)} training words for {means.shape[1]} dimensions")
    solution, *_ = np.linalg.lstsq(means.astype(np.float64), targets.astype(np.float64), rcond=None)
    return solution.astype(np.float32)


def _cosines(vectors: np.ndarray, truth: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(truth, axis=1)
    return (vectors * truth).sum(1) / np.maximum(norms, 1e-12)


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def _ranks(vectors: np.ndarray, rows: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Rank of each true row among all target vectors (``unit``: the targets normalised) by cosine to the
    inferred vector (1 = nearest; ties count against the true word)."""
    query = _unit(vectors)
    out = np.empty(len(rows), np.int64)
    step = max(1, (1 << 24) // len(unit))  # about 64 MB of scores at a time
    for start in range(0, len(rows), step):
        scores = query[start:start + step] @ unit.T
        own = scores[np.arange(len(scores)), rows[start:start + step]]
        out[start:start + step] = (scores >= own[:, None]).sum(1)
    return out


@dataclass
class Recovery(Result):
    """:func:`am_recovery`'s result: ``rows`` (one per method and k, :meth:`to_arrow`), and per word the cosine
    and top-10 hit of each (method, k) and the gate alpha of each (model, k), for :func:`differences`."""

    rows: list[dict]
    words: list[str]
    cosine: dict[tuple[str, int], np.ndarray]
    top10: dict[tuple[str, int], np.ndarray]
    alpha: dict[tuple[str, int], np.ndarray]
    models: list[str]

    def to_arrow(self) -> pa.Table:
        return pa.Table.from_pylist(self.rows)


def am_recovery(models: dict[str, AMModel], words: Sequence[str], windows: Sequence[Sequence], *,
                linear_map: np.ndarray | None = None, ks: Sequence[int] = DEFAULT_KS, seed: int = 0,
                resamples: int = 2000) -> Recovery:
    """The recovery of ``words`` (see the module doc) by each model of ``models`` (name -> AM model, the same
    target table, the words held out of their training; the first one's form is ``form``), the ``mean`` of the
    context vectors and, given ``linear_map`` (:func:`fit_linear_map`), the ``linear map``, each word reading the
    first k of its ``windows`` (every word needs max(ks) usable windows: :func:`recovery_words`). Rows:
    ``method, contexts, words, cosine`` with its 95% interval, ``median_rank``, ``top10`` with its Wilson interval,
    ``alpha`` (models: the mean gate)."""
    if not models:
        raise LexprobeError("recovery: give at least one AM model")
    first = next(iter(models.values()))
    targets = first.targets
    if any(m.targets.checksum != targets.checksum for m in models.values()):
        raise LexprobeError("recovery: the models mimic different target tables")
    words, windows = list(words), [list(w) for w in windows]
    rows = np.array([targets.row(w) if targets.row(w) is not None else -1 for w in words])
    if (rows < 0).any():
        raise LexprobeError(f"recovery: {words[int(np.argmax(rows < 0))]!r} is not in the target table")
    k_max = max(ks)
    flat = [list(w) for c in windows for w in c[:k_max]]
    owners = [w for w, c in zip(words, windows) for _ in c[:k_max]]
    V, counts = context_vectors(flat, owners, targets) if flat else (np.zeros((0, targets.dim), np.float32),
                                                                     np.zeros(0, np.int64))
    if any(len(c) < k_max for c in windows) or (counts == 0).any():
        raise LexprobeError(f"recovery: every word needs {k_max} usable windows (see recovery_words)")
    V = V.reshape(len(words), k_max, targets.dim) if k_max else V
    truth, unit = targets.matrix[rows], _unit(targets.matrix)
    cosine, top10, alpha, out = {}, {}, {}, []
    for k in ks:
        methods, gates = {}, {}
        for name, model in models.items():
            got = model.infer(words, [c[:k] for c in windows] if k else None)
            methods[name], gates[name] = got.vectors, got.alpha
        if k == 0:
            methods["form"] = first.form(words)
        else:
            mean = V[:, :k].mean(1)
            methods["mean"] = mean
            if linear_map is not None:
                methods["linear map"] = mean @ linear_map
        for name, vectors in methods.items():
            cos = _cosines(vectors, truth)
            ranks = _ranks(vectors, rows, unit)
            hits = (ranks <= 10).astype(np.float64)
            cosine[(name, k)], top10[(name, k)] = cos, hits
            mean_cos, low, high = paired_bootstrap(cos, np.zeros(len(cos)), resamples=resamples, seed=seed)
            top_low, top_high = wilson(int(hits.sum()), len(words))
            row = {"method": name, "contexts": k, "words": len(words), "cosine": mean_cos, "cosine_low": low,
                   "cosine_high": high, "median_rank": float(np.median(ranks)), "top10": float(hits.mean()),
                   "top10_low": top_low, "top10_high": top_high, "alpha": np.nan}
            if name in gates and k:
                alpha[(name, k)] = gates[name].astype(np.float64)
                row["alpha"] = float(np.mean(gates[name]))
            out.append(row)
    return Recovery(out, words, cosine, top10, alpha, list(models))


def differences(result: Recovery, *, main: str = "am", seed: int = 0, resamples: int = 2000) -> list[dict]:
    """Paired bootstrap 95% intervals over the same words: ``main`` minus every other method at each k (cosine
    and top-10 share); each model at the largest k minus itself at k = 1 (``what: contexts``); ``main`` minus
    each other method at the largest k minus the same at k = 1 (``what: gap``); and each other model's mean gate
    alpha minus ``main``'s at each k (``what: alpha``). Rows: ``what, comparison, contexts, words, difference,
    low, high`` (and the top-10 share's ``top10``, ``top10_low``, ``top10_high`` for cosine rows)."""
    ks = sorted({k for _, k in result.cosine})
    k_lo, k_hi = (min(k for k in ks if k > 0), max(ks)) if any(k > 0 for k in ks) else (0, 0)
    out = []

    def row(what, comparison, k, a, b, extra=None):
        d, lo, hi = paired_bootstrap(a, b, resamples=resamples, seed=seed)
        out.append({"what": what, "comparison": comparison, "contexts": k, "words": len(a), "difference": d,
                    "low": lo, "high": hi, **(extra or {})})

    if main not in result.models:
        raise LexprobeError(f"recovery differences: {main!r} is not one of the models ({', '.join(result.models)})")
    for k in ks:
        for (other, kk), cos in result.cosine.items():
            if kk != k or other == main:
                continue
            t = paired_bootstrap(result.top10[(main, k)], result.top10[(other, k)], resamples=resamples, seed=seed)
            row("cosine", f"{main} - {other}", k, result.cosine[(main, k)], cos,
                {"top10": t[0], "top10_low": t[1], "top10_high": t[2]})
        if k:
            for other in result.models:
                if other != main and (other, k) in result.alpha:
                    row("alpha", f"{other} - {main}", k, result.alpha[(other, k)], result.alpha[(main, k)])
    if k_hi > k_lo:
        for name in result.models:
            row("contexts", f"{name} ({k_hi}) - {name} ({k_lo})", k_hi, result.cosine[(name, k_hi)],
                result.cosine[(name, k_lo)])
        for other in sorted({m for m, k in result.cosine if k == k_hi and m != main}):
            if (other, k_lo) in result.cosine:
                row("gap", f"({main} - {other}) at {k_hi} - at {k_lo}", k_hi,
                    result.cosine[(main, k_hi)] - result.cosine[(other, k_hi)],
                    result.cosine[(main, k_lo)] - result.cosine[(other, k_lo)])
    return out
