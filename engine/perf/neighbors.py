"""Benchmark: batched FAISS k-NN over a words index against gensim's way, one query at a time in numpy
(a full matrix-vector product and an argpartition per query), on the same unit vectors and queries."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..kinds.words import WordIndex
from .common import record, timed


def numpy_loop_neighbors(unit: np.ndarray, queries: np.ndarray, k: int, exclude: np.ndarray) -> np.ndarray:
    """The baseline: per query, scores = unit @ q, drop the query word, top-k by argpartition + sort."""
    out = np.empty((len(queries), k), dtype=np.int64)
    for row, (q, ex) in enumerate(zip(queries, exclude)):
        scores = unit @ q
        scores[ex] = -np.inf
        top = np.argpartition(-scores, k)[:k]
        out[row] = top[np.argsort(-scores[top], kind="stable")]
    return out


def run_neighbors_bench(home: Path, name: str, *, n_queries: int, k: int, loop_sample: int, seed: int,
                        record_path: str | None) -> dict:
    index = WordIndex.open(home, name)
    unit = index.unit
    rng = np.random.default_rng(seed)
    ids = rng.choice(len(unit), size=min(n_queries, len(unit)), replace=False)
    queries = unit[ids]
    index.vectors.search(queries[:8], k, exclude=ids[:8, None])  # warm-up
    t_batch, (_, I) = timed(lambda: index.vectors.search(queries, k, exclude=ids[:, None]))
    sample = min(loop_sample, len(ids))
    t_loop, I_loop = timed(lambda: numpy_loop_neighbors(unit, queries[:sample], k, ids[:sample]))
    agree = float((I[:sample] == I_loop).all(axis=1).mean())
    qps_batch, qps_loop = len(ids) / t_batch, sample / t_loop
    rows = [
        {"method": "lexprobe batched FAISS flat", "queries": len(ids), "seconds": t_batch, "queries_per_s": qps_batch},
        {"method": "numpy one query at a time (gensim style)", "queries": sample, "seconds": t_loop,
         "queries_per_s": qps_loop},
    ]
    notes = [f"index {name}: {index.store.count} words x {index.dim} dims, k={k}, seed={seed}",
             f"speed-up: **{qps_batch / qps_loop:.1f}x** queries/s",
             f"identical top-{k} lists on the shared sample: {agree:.1%}"]
    md = record(record_path, "bench neighbors: batched k-NN vs one-query numpy loop", rows, notes=notes)
    return {"speedup": qps_batch / qps_loop, "agree": agree, "markdown": md}
