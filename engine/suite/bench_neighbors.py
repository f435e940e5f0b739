"""Benchmark: exact k-nearest neighbours over a words index, lexprobe's kernel (:mod:`lexprobe.core.topk`,
through :meth:`VectorIndex.search`) against what users would pick, in the same run, on the same unit vectors and
query words (each query's own word excluded):

- FAISS ``IndexFlatIP`` with small batches (``small_batch`` queries a call) and with one large batch: FAISS
  takes a different internal path for large batches, several times faster per query;
- gensim's ``KeyedVectors.most_similar``, one word at a time (on a sample);
- single-query latency through the API (``WordIndex.neighbors(word)``, p50 / p99) beside FAISS's and gensim's.

For k = 1, 10 and 100. Results are compared query by query: the same ids in the same order, scores equal to
float rounding; an order that differs only between scores closer than 1e-6 counts as a near-tie (reported).
The load average is recorded with each run: other processes on the machine slow every method, FAISS's
OpenMP threads most.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ..kinds.words import WordIndex
from ..analogies.bench_analogy import gensim_vectors
from ..runs.bench_record import record, timed

NEAR_TIE = 1e-6


def faiss_flat(unit: np.ndarray):
    import faiss

    index = faiss.IndexFlatIP(unit.shape[1])
    index.add(np.ascontiguousarray(unit, dtype=np.float32))
    return index


def faiss_neighbors(index, queries: np.ndarray, self_ids: np.ndarray, k: int, batch: int):
    """FAISS as users call it: ``k + 1`` results per query in batches of ``batch``, the query word dropped."""
    D = np.empty((len(queries), k), np.float32)
    I = np.empty((len(queries), k), np.int64)
    for a in range(0, len(queries), batch):
        d, i = index.search(queries[a:a + batch], k + 1)
        keep = i != self_ids[a:a + batch, None]
        order = np.argsort(~keep, axis=1, kind="stable")[:, :k]
        D[a:a + batch], I[a:a + batch] = np.take_along_axis(d, order, 1), np.take_along_axis(i, order, 1)
    return D, I


def compare(D, I, D_ref, I_ref) -> dict:
    """Queries with identical id lists; those whose lists differ but whose scores agree rank by rank within
    ``NEAR_TIE`` (the order of near-equal scores); the others; and the largest score difference rank by rank."""
    same = (I == I_ref).all(axis=1)
    close = (np.abs(D - D_ref) <= NEAR_TIE).all(axis=1)
    return {"identical": float(same.mean()), "near_ties": int((~same & close).sum()),
            "other": int((~same & ~close).sum()), "max_score_diff": float(np.abs(D - D_ref).max(initial=0.0))}


def _percentiles(seconds: list[float]) -> tuple[float, float]:
    ms = np.asarray(seconds) * 1e3
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 99))


def run_neighbors_bench(home: Path, name: str, *, n_queries: int = 8192, small_batch: int = 1000,
                        small_queries: int = 2000, ks: tuple[int, ...] = (1, 10, 100), gensim_sample: int = 200,
                        latency_sample: int = 200, seed: int = 0, record_path: str | None = None) -> dict:
    """Time every method for every k; returns the ratios (``speedup``: against FAISS's large-batch path at
    k = 10, or the middle k) and the markdown record."""
    load_before = os.getloadavg()
    index = WordIndex.open(name, home=home)
    unit = np.ascontiguousarray(index.unit)
    rng = np.random.default_rng(seed)
    live = np.array(sorted(index.word_to_id.values()), dtype=np.int64)
    ids = rng.choice(live, size=min(n_queries, len(live)), replace=False)
    queries = unit[ids]
    small = min(small_queries, len(ids))
    flat = faiss_flat(unit)
    kv = gensim_vectors(index)
    words = index.word_array
    index.searcher.search(queries[:64], 10, exclude=ids[:64, None])  # warm-up: compiled kernels, cheap copy
    rows, ratios, agree = [], {}, {}
    for k in ks:
        t_ours, (D, I) = timed(lambda: index.searcher.search(queries, k, exclude=ids[:, None]))
        t_ours_small, _ = timed(lambda: [index.searcher.search(queries[a:a + small_batch], k,
                                                              exclude=ids[a:a + small_batch, None])
                                         for a in range(0, small, small_batch)])
        t_large, (Dl, Il) = timed(lambda: faiss_neighbors(flat, queries, ids, k, len(queries)))
        t_small, _ = timed(lambda: faiss_neighbors(flat, queries[:small], ids[:small], k, small_batch))
        g = min(gensim_sample, len(ids))
        t_gensim, g_rows = timed(lambda: [kv.most_similar(words[i], topn=k) for i in ids[:g]])
        rates = {"ours": len(ids) / t_ours, "ours_small": small / t_ours_small, "large": len(ids) / t_large,
                 "small": small / t_small, "gensim": g / t_gensim}
        ratios[k] = {"faiss_large": rates["ours"] / rates["large"], "faiss_small": rates["ours"] / rates["small"],
                     "small_vs_small": rates["ours_small"] / rates["small"], "gensim": rates["ours"] / rates["gensim"]}
        agree[k] = compare(D, I, Dl, Il)
        gI = np.array([[index.word_to_id[w] for w, _ in row] for row in g_rows], dtype=np.int64).reshape(g, k)
        gD = np.array([[x for _, x in row] for row in g_rows], dtype=np.float32).reshape(g, k)
        agree[k]["gensim"] = compare(D[:g], I[:g], gD, gI)
        for method, batch, n, key in (
                ("lexprobe exact top-k", len(ids), len(ids), "ours"),
                ("lexprobe exact top-k", small_batch, small, "ours_small"),
                ("FAISS IndexFlatIP, large batch", len(ids), len(ids), "large"),
                ("FAISS IndexFlatIP, small batches", small_batch, small, "small"),
                ("gensim most_similar, one word a call", 1, g, "gensim")):
            rows.append({"k": k, "method": method, "batch": batch, "queries": n, "queries_per_s": rates[key],
                         "lexprobe_speedup": rates["ours"] / rates[key]})
    latency = []
    pick = ids[:latency_sample]
    for label, fn in (("lexprobe WordIndex.neighbors(word, k=10)", lambda i: index.neighbors(words[i], k=10)),
                      ("FAISS IndexFlatIP.search, one query", lambda i: flat.search(unit[i:i + 1], 11)),
                      ("gensim most_similar(word, topn=10)", lambda i: kv.most_similar(words[i], topn=10))):
        fn(pick[0])
        seconds = []
        for i in pick:
            t0 = time.perf_counter()
            fn(i)
            seconds.append(time.perf_counter() - t0)
        p50, p99 = _percentiles(seconds)
        latency.append({"method": label, "queries": len(pick), "p50_ms": p50, "p99_ms": p99})
    load_after = os.getloadavg()
    mid = 10 if 10 in ks else ks[len(ks) // 2]
    notes = [f"index {name}: {index.store.count} words x {index.dim} dims; {len(ids)} query words (seed {seed}), "
             f"each excluded from its own answers; FAISS small batches of {small_batch} over the first {small}",
             f"load average (1, 5, 15 min) before {', '.join(f'{x:.2f}' for x in load_before)}; after "
             f"{', '.join(f'{x:.2f}' for x in load_after)} ({os.cpu_count()} cores)"]
    for k in ks:
        r, a = ratios[k], agree[k]
        notes.append(f"k={k}: **{r['faiss_large']:.1f}x** FAISS large batch, **{r['faiss_small']:.1f}x** FAISS small "
                     f"batches ({r['small_vs_small']:.1f}x at the same batch size), {r['gensim']:.0f}x gensim; "
                     f"identical to FAISS: {a['identical']:.2%} of queries, {a['near_ties']} near-ties (scores "
                     f"within {NEAR_TIE:g}), {a['other']} other; max score difference {a['max_score_diff']:.1e}; "
                     f"against gensim on its {min(gensim_sample, len(ids))} words: "
                     f"identical {a['gensim']['identical']:.2%}, {a['gensim']['near_ties']} near-ties, "
                     f"{a['gensim']['other']} other, max score difference {a['gensim']['max_score_diff']:.1e}")
    for row in latency:
        notes.append(f"single-query latency, {row['method']}: p50 {row['p50_ms']:.2f} ms, p99 {row['p99_ms']:.2f} ms "
                     f"({row['queries']} words)")
    md = record(record_path, "bench neighbors: exact top-k vs FAISS IndexFlatIP and gensim", rows, notes=notes,
                columns=["k", "method", "batch", "queries", "queries_per_s", "lexprobe_speedup"])
    return {"speedup": ratios[mid]["faiss_large"], "ratios": ratios, "agree": agree, "latency": latency,
            "markdown": md}
