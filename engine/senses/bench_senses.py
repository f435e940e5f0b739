"""Benchmark: sense ranking grouped by lemma (one matrix product per lemma block) against the paper's way,
one query at a time (cosine against its lemma's candidates, a full sort, then the metrics), on the same
database and queries."""

from __future__ import annotations

import numpy as np

from .sense_ranking import DEFAULT_K, Instances, rank_metrics, rank_senses
from ..runs.bench_record import record, timed


def one_query_at_a_time(database: Instances, queries: Instances, *, k_max: int, match_pos: bool) -> np.ndarray:
    """The baseline: a lemma -> candidates map built once (as the paper's retriever does), then per query its
    candidates' cosines, a full sort and the metrics, alone. Returns the APs."""
    d_key, q_key = _keys(database, match_pos), _keys(queries, match_pos)
    by_lemma: dict[str, list[int]] = {}
    for row, key in enumerate(d_key):
        by_lemma.setdefault(key, []).append(row)
    d_sense = np.asarray(database.table.column("sense").to_pylist(), dtype=object)
    q_sense = np.asarray(queries.table.column("sense").to_pylist(), dtype=object)
    aps = np.empty(len(q_key))
    for row, key in enumerate(q_key):
        cand = np.asarray(by_lemma.get(key, []), dtype=np.int64)
        m = rank_metrics(queries.vectors[row:row + 1], np.array([0]), database.vectors[cand],
                         np.where(d_sense[cand] == q_sense[row], 0, 1), k_max=k_max)
        aps[row] = m.ap[0]
    return aps


def _keys(instances: Instances, match_pos: bool) -> np.ndarray:
    lemma = instances.table.column("lemma").to_pylist()
    pos = instances.table.column("pos").to_pylist() if match_pos else [""] * len(lemma)
    return np.asarray([f"{a}\t{b}" for a, b in zip(lemma, pos)], dtype=object)


def run_ranking_bench(database: Instances, queries: Instances, *, label: str, loop_sample: int = 300,
                      k_max: int = DEFAULT_K, min_sense_count: int = 5, match_pos: bool = True,
                      record_path: str | None = None) -> dict:
    """Queries/s of :func:`rank_senses` over all eligible queries and of the one-at-a-time loop over a
    sample of them (its rate is per query); both rank the same candidates, and their APs must agree."""
    database = database.tagged()
    t_batch, (table, _) = timed(lambda: rank_senses(database, queries.tagged(), k_max=k_max,
                                                    min_sense_count=min_sense_count, match_pos=match_pos))
    ids = set(table.column("instance_id").to_pylist()[:loop_sample])
    tagged = queries.tagged()
    rows = np.flatnonzero([i in ids for i in tagged.table.column("instance_id").to_pylist()])
    sample = Instances(tagged.table.take(rows), tagged.vectors[rows])
    t_loop, aps = timed(lambda: one_query_at_a_time(database, sample, k_max=k_max, match_pos=match_pos))
    by_id = dict(zip(table.column("instance_id").to_pylist(), table.column("ap").to_pylist()))
    agree = bool(np.allclose(aps, [by_id[i] for i in sample.table.column("instance_id").to_pylist()]))
    qps_batch, qps_loop = len(table) / t_batch, len(rows) / t_loop
    result_rows = [
        {"method": "lexprobe grouped by lemma (one product per block)", "queries": len(table), "seconds": t_batch,
         "queries_per_s": qps_batch},
        {"method": "one query at a time (the paper's loop)", "queries": len(rows), "seconds": t_loop,
         "queries_per_s": qps_loop},
    ]
    notes = [f"{label}: database {len(database.table)} instances, k = {k_max}, min sense count {min_sense_count}",
             f"speed-up: **{qps_batch / qps_loop:.1f}x** queries/s",
             f"identical average precision on the shared sample: {agree}"]
    md = record(record_path, "bench senses: sense ranking grouped by lemma vs one query at a time", result_rows,
                notes=notes)
    return {"speedup": qps_batch / qps_loop, "agree": agree, "markdown": md}
