"""Benchmark: the whole Table 1 run (every relation and random set, each with its shuffles) against the way
the paper's scripts compute the same numbers: offsets built pair by pair, each pairwise similarity a separate
cosine in a Python double loop, one AUC per shuffled set (rank based, as sklearn's). The baseline runs on a
sample of relations, in the same process, with the same shuffles, and must give the same OCS and PCS."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .offset_consistency import offset_scores, relation_sets, shuffle_rng, shuffles
from ..kinds.offsets import OffsetIndex
from ..kinds.words import WordIndex
from .run_analogies import run_table1
from ..runs.bench_record import numpy_gflops, record, timed


def _rank_auc(pos: list[float], neg: list[float]) -> float:
    """Mann-Whitney AUC with average ranks for ties, one set at a time (what roc_auc_score computes)."""
    values = np.array(pos + neg)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    start = 0
    for end in range(1, len(values) + 1):
        if end == len(values) or sorted_values[end] != sorted_values[start]:
            ranks[order[start:end]] = (start + end + 1) / 2
            start = end
    m, n = len(pos), len(neg)
    return (ranks[:m].sum() - m * (m + 1) / 2) / (m * n)


def loop_scores(vectors: np.ndarray, start_ids: np.ndarray, end_ids: np.ndarray,
                perms: np.ndarray) -> tuple[float, float]:
    """The baseline: (OCS, PCS) with a Python loop over pairs, as the paper's ``similarite_offsets``."""
    def sims(ends):
        offs = [vectors[e].astype(np.float64) - vectors[s].astype(np.float64) for s, e in zip(start_ids, ends)]
        out = []
        for j in range(len(offs)):
            for k in range(j + 1, len(offs)):
                out.append(float(offs[j] @ offs[k] / (np.linalg.norm(offs[j]) * np.linalg.norm(offs[k]))))
        return out

    true = sims(end_ids)
    aucs = [_rank_auc(true, sims(end_ids[p])) for p in perms]
    return float(np.mean(true)), float(np.mean(aucs))


def run_offsets_bench(home: Path, words_name: str, dataset: str, *, offsets_name: str, n_shuffles: int,
                      replicates: int, seed: int, pool_size: int, out: str | None, loop_sample: int,
                      record_path: str | None) -> dict:
    t_table, summary = timed(lambda: run_table1(words_name, dataset, home=home, offsets_name=offsets_name,
                                                n_shuffles=n_shuffles, replicates=replicates, seed=seed,
                                                pool_size=pool_size, out=out))
    n_kinds = 6 - len(summary["skipped_kinds"])
    n_sets = summary["relations"] * (1 + n_kinds * replicates)
    words = WordIndex.open(words_name, home=home)
    sample = relation_sets(OffsetIndex.open(offsets_name, home=home).select(kind="true"))[:loop_sample]
    perms = [shuffles(r.start_ids, r.end_ids, n_shuffles, shuffle_rng(seed, r.relation)) for r in sample]
    t_loop, loop = timed(lambda: [loop_scores(words.raw, r.start_ids, r.end_ids, p) for r, p in zip(sample, perms)])
    t_vec, vec = timed(lambda: [offset_scores(words.raw, r.start_ids, r.end_ids, n_shuffles=n_shuffles,
                                              rng=shuffle_rng(seed, r.relation)) for r in sample], repeat=3)
    gap = max(max(abs(a[0] - b.ocs), abs(a[1] - b.pcs)) for a, b in zip(loop, vec))
    loop_rate, vec_rate, table_rate = len(sample) / t_loop, len(sample) / t_vec, n_sets / t_table
    rows = [
        {"method": "lexprobe: whole Table 1 run (index build/append, all sets, outputs)", "sets": n_sets,
         "seconds": t_table, "sets_per_s": table_rate},
        {"method": "lexprobe: vectorised OCS+PCS on the sample", "sets": len(sample), "seconds": t_vec,
         "sets_per_s": vec_rate},
        {"method": "baseline: per-pair Python loop (paper scripts) on the sample", "sets": len(sample),
         "seconds": t_loop, "sets_per_s": loop_rate},
    ]
    notes = [f"words {words_name}, {dataset}: {summary['relations']} relations, {n_shuffles} shuffles per set, "
             f"{n_kinds} random-set kinds x {replicates} replicates, pool {summary['pool_size']} words, seed {seed}",
             f"speed-up on the sample (same shuffles): **{vec_rate / loop_rate:.0f}x** sets/s; the baseline would "
             f"need about {n_sets / loop_rate / 60:.0f} min for the whole table, lexprobe took {t_table:.0f} s",
             f"largest OCS/PCS difference baseline vs lexprobe on the sample: {gap:.1e}",
             f"numpy float32 GEMM yardstick: {numpy_gflops():.1f} GFLOP/s"]
    md = record(record_path, "bench offsets: Table 1 (OCS, PCS, random sets) vs per-pair Python loop", rows,
                notes=notes)
    return {"table1": summary["table1"], "summary": summary, "markdown": md, "gap": gap,
            "speedup": vec_rate / loop_rate}
