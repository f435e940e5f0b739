"""Benchmark: recall@k against queries/s for the approximate index types, in the manner of ann-benchmarks.

HNSW (``ef_search`` 16 to 512) and IVF (``nprobe`` 1 to 256) are built from a words index's unit vectors with the
engine's own builder and defaults (:func:`lexprobe.core.vector_index.build`); each setting answers the same
query words (each excluded from its own answers) twice: through lexprobe (:meth:`VectorIndex.search`) and
through FAISS directly (``index.search`` with ``k + 1`` results, the query word dropped), so the engine's
overhead shows as the gap between the two curves. Recall@k is the share of the exact top k (lexprobe's exact
kernel) that a setting returns, averaged over queries. The exact kernel and FAISS IndexFlatIP are single points
at recall 1. The default setting of each type is the fastest whose recall reaches ``target`` (0.95).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from ..core import vector_index as vindex
from ..runs.bench_record import timed

EF_SEARCH = (16, 32, 64, 128, 256, 512)
NPROBE = (1, 2, 4, 8, 16, 32, 64, 128, 256)
TARGET_RECALL = 0.95


def recall_at_k(found: np.ndarray, exact: np.ndarray) -> float:
    """Mean over queries of |found ∩ exact| / |exact| (ids; -1 in ``found`` never counts)."""
    hits = [(np.isin(e[e >= 0], f[f >= 0])).sum() / max((e >= 0).sum(), 1) for f, e in zip(found, exact)]
    return float(np.mean(hits)) if hits else 0.0


def _set(vi: vindex.VectorIndex, index_type: str, value: int) -> None:
    """Point the search parameter of ``vi`` (the engine's params and FAISS's own) at ``value``."""
    import faiss

    inner = faiss.downcast_index(vi.index.index)
    if index_type == "hnsw":
        vi.params.ef_search = value
        inner.hnsw.efSearch = value
    else:
        vi.params.nprobe = value
        inner.nprobe = value


def _faiss_direct(vi: vindex.VectorIndex, queries: np.ndarray, self_ids: np.ndarray, k: int) -> np.ndarray:
    _, i = vi.index.search(queries, k + 1)
    keep = i != self_ids[:, None]
    order = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(i, order, axis=1)


@dataclass
class Curve:
    """Points (one per setting) of one index type through one path."""

    index_type: str
    via: str            # "lexprobe" or "faiss"
    parameter: str      # "ef_search" / "nprobe"
    values: list
    recall: list
    qps: list


def sweep(vi: vindex.VectorIndex, index_type: str, values, queries: np.ndarray, self_ids: np.ndarray,
          exact: np.ndarray, k: int, repeat: int = 2) -> list[Curve]:
    """Recall@k and queries/s of each setting, through lexprobe and through FAISS directly."""
    ours = Curve(index_type, "lexprobe", "ef_search" if index_type == "hnsw" else "nprobe", [], [], [])
    raw = Curve(index_type, "faiss", ours.parameter, [], [], [])
    for value in values:
        _set(vi, index_type, value)
        t, (_, I) = timed(lambda: vi.search(queries, k, exclude=self_ids[:, None]), repeat)
        ours.values.append(value), ours.recall.append(recall_at_k(I, exact)), ours.qps.append(len(queries) / t)
        _set(vi, index_type, value)
        t, I = timed(lambda: _faiss_direct(vi, queries, self_ids, k), repeat)
        raw.values.append(value), raw.recall.append(recall_at_k(I, exact)), raw.qps.append(len(queries) / t)
    return [ours, raw]


def choose_default(curve: Curve, target: float = TARGET_RECALL) -> int | None:
    """The setting with the most queries/s among those whose recall reaches ``target`` (None: none does)."""
    ok = [i for i, r in enumerate(curve.recall) if r >= target]
    return curve.values[max(ok, key=lambda i: curve.qps[i])] if ok else None


def run_ann_curve(unit: np.ndarray, *, n_queries: int = 2000, k: int = 10, seed: int = 0,
                  ef_search=EF_SEARCH, nprobe=NPROBE, params: vindex.IndexParams | None = None,
                  log=print) -> dict:
    """Build HNSW and IVF over ``unit`` (rows = ids), sweep both, and return the curves, the exact and FAISS
    flat reference points, the build times and the chosen defaults."""
    import faiss

    base = params or vindex.IndexParams()
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(len(unit), size=min(n_queries, len(unit)), replace=False))
    queries = np.ascontiguousarray(unit[ids])
    all_ids = np.arange(len(unit), dtype=np.int64)
    flat = vindex.VectorIndex(vindex.build(unit, all_ids))
    flat.search(queries[:32], k, exclude=ids[:32, None])  # warm-up
    t_exact, (_, exact) = timed(lambda: flat.search(queries, k, exclude=ids[:, None]), 2)
    plain = faiss.IndexFlatIP(unit.shape[1])
    plain.add(np.ascontiguousarray(unit))
    t_flat, _ = timed(lambda: plain.search(queries, k + 1), 1)
    out = {"queries": len(ids), "k": k, "n": len(unit), "dim": unit.shape[1], "curves": [], "builds": {},
           "exact_qps": len(ids) / t_exact, "faiss_flat_qps": len(ids) / t_flat,
           "load": os.getloadavg()}
    for index_type, values in (("ivf", nprobe), ("hnsw", ef_search)):
        p = vindex.IndexParams(**{**base.as_dict(), "index_type": index_type})
        log(f"building {index_type} over {len(unit)} x {unit.shape[1]} ...")
        t0 = time.perf_counter()
        vi = vindex.VectorIndex(vindex.build(unit, all_ids, p, seed=seed), p)
        out["builds"][index_type] = {"seconds": time.perf_counter() - t0, **{key: getattr(p, key) for key in (
            ("hnsw_m", "ef_construction") if index_type == "hnsw" else ("nlist",))}}
        out["curves"] += sweep(vi, index_type, values, queries, ids, exact, k)
        del vi
    out["defaults"] = {c.index_type: choose_default(c) for c in out["curves"] if c.via == "lexprobe"}
    out["load_after"] = os.getloadavg()
    return out


def curve_rows(result: dict) -> list[dict]:
    rows = [{"index": "flat (exact kernel)", "via": "lexprobe", "setting": "-", "recall_at_k": 1.0,
             "queries_per_s": result["exact_qps"]},
            {"index": "flat (IndexFlatIP)", "via": "faiss", "setting": "-", "recall_at_k": 1.0,
             "queries_per_s": result["faiss_flat_qps"]}]
    for c in result["curves"]:
        for v, r, q in zip(c.values, c.recall, c.qps):
            rows.append({"index": c.index_type, "via": c.via, "setting": f"{c.parameter}={v}", "recall_at_k": r,
                         "queries_per_s": q})
    return rows


def record_ann_curve(result: dict, record_path: str | None, plot_path: str | None) -> str:
    """Append the points, build times, defaults and load to ``record_path`` and draw the figure."""
    from ..runs.plots import tradeoff_plot
    from ..runs.bench_record import record

    k = result["k"]
    notes = [f"{result['queries']} query words (each excluded from its own answers), k={k}, over "
             f"{result['n']} x {result['dim']}; recall@{k} against the exact kernel's top {k}",
             *(f"build {t}: {b['seconds']:.0f} s ({', '.join(f'{key} {v}' for key, v in b.items() if key != 'seconds')})"
               for t, b in result["builds"].items()),
             *(f"default for --index-type {t}: {c.parameter} = {result['defaults'][t]} (the fastest setting with "
               f"recall@{k} >= {TARGET_RECALL})" for t, c in ((c.index_type, c) for c in result["curves"]
                                                           if c.via == "lexprobe")),
             f"load average (1, 5, 15 min) before {', '.join(f'{x:.2f}' for x in result['load'])}, after "
             f"{', '.join(f'{x:.2f}' for x in result['load_after'])} ({os.cpu_count()} cores)"]
    if plot_path:
        curves = {f"{c.index_type} ({c.parameter}) via {c.via}": (c.recall, c.qps, [str(v) for v in c.values])
                  for c in result["curves"]}
        points = {"exact kernel (lexprobe flat)": (1.0, result["exact_qps"]),
                  "FAISS IndexFlatIP": (1.0, result["faiss_flat_qps"])}
        png = tradeoff_plot(plot_path, curves, points=points, xlabel=f"recall@{k}", ylabel="queries/s (log)",
                            title=f"{result['n']} x {result['dim']}, {result['queries']} queries, k={k}")
        notes.append(f"figure: {png}")
    return record(record_path, "bench ann-curve: recall against queries/s (HNSW ef_search, IVF nprobe)",
                  curve_rows(result), notes=notes)
