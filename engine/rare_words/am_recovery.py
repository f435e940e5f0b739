"""Mimicking recovery, AM's analogue of the rare-words paper's Figure 1 check for OTA: known words held out of
training are inferred from their form and k of their contexts, and each inferred vector is compared with the word's
true embedding, by cosine and by the nearest-neighbour rank of the true embedding among all target vectors (1: the
inferred vector is nearer to its own word than to any other).

Methods, for each k (0, 1, 8 and 32 contexts by default): each AM model given (e.g. ``am``, clustering attention,
and ``fcm``, the uniform form-context model), ``form`` (the first model's form vector alone) and ``mean`` (the mean
of the k context vectors v_C, the baseline AM must beat; undefined at k = 0). At each k the words are the held-out
words with at least k contexts that hold a known word, their first k such contexts (a contexts index lists a word's
windows in a seeded random order). Intervals: percentile bootstrap of the mean cosine and of each method minus
``mean`` over the same words (:func:`lexprobe.core.intervals.paired_bootstrap`), Wilson for the top-10 share.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from ..core.errors import LexprobeError
from ..core.intervals import paired_bootstrap, wilson
from ..core.seeds import rng_for
from .am_targets import TargetTable
from .mimicking import AMModel, context_vectors

DEFAULT_KS = (0, 1, 8, 32)


def recovery_words(targets: TargetTable, contexts, n: int, *, seed: int = 0, min_contexts: int = 1) -> list[str]:
    """``n`` words to hold out (seeded): target words made of letters with at least ``min_contexts`` windows in the
    contexts index (a :class:`lexprobe.kinds.contexts.ContextIndex`)."""
    pool = sorted(w for w in contexts.words
                  if w.isalpha() and targets.row(w) is not None and len(contexts.rows_of(w, min_contexts)) >= min_contexts)
    if len(pool) < n:
        raise LexprobeError(f"recovery: only {len(pool)} target words have {min_contexts}+ contexts, {n} asked")
    pick = rng_for(seed, "am-recovery").choice(len(pool), size=n, replace=False)
    return [pool[i] for i in sorted(pick)]


def _cosines(vectors: np.ndarray, truth: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(truth, axis=1)
    return (vectors * truth).sum(1) / np.maximum(norms, 1e-12)


def _ranks(vectors: np.ndarray, rows: np.ndarray, targets: TargetTable) -> np.ndarray:
    """Rank of each true row among all target vectors by cosine to the inferred vector (1 = nearest; ties count
    against the true word)."""
    unit = targets.matrix / np.maximum(np.linalg.norm(targets.matrix, axis=1, keepdims=True), 1e-12)
    query = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    out = np.empty(len(rows), np.int64)
    step = max(1, (1 << 24) // len(unit))  # about 64 MB of scores at a time
    for start in range(0, len(rows), step):
        scores = query[start:start + step] @ unit.T
        own = scores[np.arange(len(scores)), rows[start:start + step]]
        out[start:start + step] = (scores >= own[:, None]).sum(1)
    return out


def am_recovery(models: dict[str, AMModel], words: Sequence[str], contexts: Sequence[Sequence], *,
                ks: Sequence[int] = DEFAULT_KS, seed: int = 0, resamples: int = 2000) -> pa.Table:
    """The recovery table (one row per method and k): ``method, contexts, words, cosine`` (mean) with its 95%
    interval, ``median_rank``, ``top10`` (share of words whose true embedding is among the 10 nearest) with its
    Wilson interval, and ``minus_mean`` (mean cosine minus the ``mean`` baseline's, paired) with its interval.
    ``models``: name -> trained AM model (same target table; the words held out of their training);
    ``contexts``: each word's windows (lists of words) in the order to take them."""
    if not models:
        raise LexprobeError("recovery: give at least one AM model")
    first = next(iter(models.values()))
    targets = first.targets
    if any(m.targets.checksum != targets.checksum for m in models.values()):
        raise LexprobeError("recovery: the models mimic different target tables")
    words = list(words)
    rows = np.array([targets.row(w) if targets.row(w) is not None else -1 for w in words])
    if (rows < 0).any():
        raise LexprobeError(f"recovery: {words[int(np.argmax(rows < 0))]!r} is not in the target table")
    truth = targets.matrix[rows]
    flat = [list(w) for c in contexts for w in c]
    owners = [w for w, c in zip(words, contexts) for _ in c]
    V, counts = context_vectors(flat, owners, targets) if flat else (np.zeros((0, targets.dim), np.float32),
                                                                     np.zeros(0, np.int64))
    starts = np.cumsum([0] + [len(c) for c in contexts])
    usable = [np.flatnonzero(counts[a:b] > 0) for a, b in zip(starts[:-1], starts[1:])]
    form = first.form(words)
    out = []
    for k in ks:
        keep = np.array([len(u) >= k for u in usable])
        idx = np.flatnonzero(keep)
        if not len(idx):
            continue
        chosen = [[flat[starts[i] + j] for j in usable[i][:k]] for i in idx]
        methods = {name: model.infer([words[i] for i in idx], chosen if k else None).vectors
                   for name, model in models.items()}
        methods["form"] = form[idx]
        if k:
            methods["mean"] = np.stack([V[starts[i] + usable[i][:k]].mean(0) for i in idx])
        cos = {name: _cosines(vec, truth[idx]) for name, vec in methods.items()}
        for name, vec in methods.items():
            ranks = _ranks(vec, rows[idx], targets)
            mean, low, high = paired_bootstrap(cos[name], np.zeros(len(idx)), resamples=resamples, seed=seed)
            top = int((ranks <= 10).sum())
            top_low, top_high = wilson(top, len(idx))
            diff = paired_bootstrap(cos[name], cos["mean"], resamples=resamples, seed=seed) \
                if k and name != "mean" else (np.nan, np.nan, np.nan)
            out.append({"method": name, "contexts": k, "words": len(idx), "cosine": mean, "cosine_low": low,
                        "cosine_high": high, "median_rank": float(np.median(ranks)), "top10": top / len(idx),
                        "top10_low": top_low, "top10_high": top_high, "minus_mean": diff[0],
                        "minus_mean_low": diff[1], "minus_mean_high": diff[2]})
    return pa.Table.from_pylist(out)
