"""Table-1 buckets of sense-ranking queries: ``l`` = how often the query's lemma occurs in the database D,
``r`` = the proportion of the lemma's instances in D that carry the query's sense.

Default cells: l < 500 / l >= 500 x r < 0.25 / r >= 0.25 (the paper's); both edge lists are configurable.
The counts come from DuckDB over D's token table (the index's memory-mapped shards). Pure computation: the
run layer (:mod:`lexprobe.senses.run_senses`) writes the tables and plots.
"""

from __future__ import annotations

from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa


DEFAULT_LEMMA_EDGES = (500,)
DEFAULT_RATIO_EDGES = (0.25,)


def query_statistics(database: pa.Table, queries: pa.Table, *, match_pos: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """For every query row (in order): (``l``, the number of D's sense-tagged instances of its lemma, and the
    number of those with the query's sense). Tables need columns ``lemma``, ``pos``, ``sense``; the lemma is
    (lemma, POS) when ``match_pos``."""
    key = "lemma, pos" if match_pos else "lemma"
    con = duckdb.connect(":memory:")
    try:
        con.register("d", database.select(["lemma", "pos", "sense"]))
        con.register("q", queries.select(["lemma", "pos", "sense"]).append_column(
            "qrow", pa.array(np.arange(len(queries), dtype=np.int64))))
        rows = con.execute(f"""
            WITH lem AS (SELECT {key}, count(*) AS l FROM d WHERE sense IS NOT NULL GROUP BY {key}),
                 sen AS (SELECT {key}, sense, count(*) AS c FROM d WHERE sense IS NOT NULL GROUP BY {key}, sense)
            SELECT coalesce(lem.l, 0) AS l, coalesce(sen.c, 0) AS c
            FROM q LEFT JOIN lem USING ({key}) LEFT JOIN sen USING ({key}, sense)
            ORDER BY q.qrow""").fetchnumpy()
    finally:
        con.close()
    return np.asarray(rows["l"], dtype=np.int64), np.asarray(rows["c"], dtype=np.int64)


def interval_labels(name: str, edges: Sequence[float]) -> list[str]:
    """Labels of the intervals cut by ascending ``edges``: ``["l<500", "l>=500"]``, ``["l<10", "10<=l<500",
    "l>=500"]``."""
    edges = [_fmt(e) for e in edges]
    if not edges:
        return ["all"]
    labels = [f"{name}<{edges[0]}"]
    labels += [f"{lo}<={name}<{hi}" for lo, hi in zip(edges, edges[1:])]
    return labels + [f"{name}>={edges[-1]}"]


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def check_edges(name: str, edges: Sequence[float]) -> list[float]:
    """Edges as a strictly ascending list, or a ValueError saying what is wrong."""
    edges = [float(e) for e in edges]
    if any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"{name} edges must be strictly ascending, got {edges}")
    return edges


def assign_cells(lemma_freq: np.ndarray, ratio: np.ndarray, *, lemma_edges: Sequence[float] = DEFAULT_LEMMA_EDGES,
                 ratio_edges: Sequence[float] = DEFAULT_RATIO_EDGES) -> tuple[np.ndarray, list[str]]:
    """(cell number of every query, the cell labels in order). A value equal to an edge falls in the upper
    interval (``l >= 500``). Cells run lemma-frequency-major: ``l<500, r<0.25``, ``l<500, r>=0.25``, ..."""
    lemma_edges = check_edges("lemma frequency", lemma_edges)
    ratio_edges = check_edges("sense ratio", ratio_edges)
    li = np.searchsorted(lemma_edges, np.asarray(lemma_freq, dtype=np.float64), side="right")
    ri = np.searchsorted(ratio_edges, np.asarray(ratio, dtype=np.float64), side="right")
    return li * (len(ratio_edges) + 1) + ri, cell_labels(lemma_edges, ratio_edges)


def cell_labels(lemma_edges: Sequence[float] = DEFAULT_LEMMA_EDGES,
                ratio_edges: Sequence[float] = DEFAULT_RATIO_EDGES) -> list[str]:
    """The labels of all cells, lemma-frequency-major."""
    return [f"{a}, {b}" for a in interval_labels("l", lemma_edges) for b in interval_labels("r", ratio_edges)]


def _matrix(column: pa.ChunkedArray) -> np.ndarray:
    """A list column as a (rows, K) matrix; (0, 0) when no query is left (every one skipped)."""
    if len(column) == 0:
        return np.zeros((0, 0))
    return np.asarray(column.combine_chunks().flatten().to_numpy(zero_copy_only=False)).reshape(len(column), -1)


def summarize_cells(per_query: pa.Table, labels: Sequence[str]) -> tuple[list[dict], dict[str, dict]]:
    """One row per cell (in ``labels`` order) and one for ``all`` queries of a per-query table of
    :func:`lexprobe.senses.sense_ranking.rank_senses`: ``queries``, ``lemmas``, ``p_at_k_mean`` (the paper's Table-1 number:
    the mean over k of mean P@k), ``map`` (mean true AP) and the random baseline's ``random_p_at_k_mean``
    and ``random_map``; and per cell its curves ``{"p_at_k": (K,), "random_p_at_k": (K,)}``."""
    cell = np.asarray(per_query.column("cell").to_pylist(), dtype=object)
    lemma = np.asarray(per_query.column("lemma").to_pylist(), dtype=object)
    p, rand_p = _matrix(per_query.column("p_at_k")), _matrix(per_query.column("random_p_at_k"))
    ap, rand_ap = (per_query.column(c).to_numpy().astype(np.float64) for c in ("ap", "random_ap"))
    rows, curves = [], {}
    for label in list(labels) + ["all"]:
        mask = np.ones(len(cell), bool) if label == "all" else cell == label
        n = int(mask.sum())
        rows.append({"cell": label, "queries": n, "lemmas": len(set(lemma[mask])),
                     "p_at_k_mean": float(p[mask].mean()) if n else float("nan"),
                     "map": float(ap[mask].mean()) if n else float("nan"),
                     "random_p_at_k_mean": float(rand_p[mask].mean()) if n else float("nan"),
                     "random_map": float(rand_ap[mask].mean()) if n else float("nan")})
        if n:
            curves[label] = {"p_at_k": p[mask].mean(axis=0), "random_p_at_k": rand_p[mask].mean(axis=0)}
    return rows, curves


def summarize_runs(runs: dict[str, pa.Table], labels: Sequence[str]) -> tuple[list[dict], dict[str, dict]]:
    """:func:`summarize_cells` of several runs (models or layers): the cell rows with a ``run`` column, and per
    run its curves."""
    cell_rows, curves = [], {}
    for name, table in runs.items():
        rows, curves[name] = summarize_cells(table, labels)
        cell_rows += [{"run": name, **row} for row in rows]
    return cell_rows, curves


def bucket_checks(cell_rows: Sequence[dict]) -> dict:
    """Per run: whether every non-empty cell's mean P@k and MAP beat the random baseline (empty cells are left
    out; how many were compared and which did not beat it, with their query counts, are reported beside), and
    whether the cells of rare senses (the lowest r interval) score a lower mean P@k than the other cells of the
    same lemma-frequency interval."""
    out = {}
    for name in dict.fromkeys(r["run"] for r in cell_rows):
        rows = [r for r in cell_rows if r["run"] == name and r["cell"] != "all" and r["queries"]]
        beats = all(r["p_at_k_mean"] > r["random_p_at_k_mean"] and r["map"] > r["random_map"] for r in rows)
        rare_lower = True
        for l_part in dict.fromkeys(split_cell(r["cell"])[0] for r in rows):
            rare = [r["p_at_k_mean"] for r in rows if split_cell(r["cell"]) == (l_part, True)]
            common = [r["p_at_k_mean"] for r in rows if split_cell(r["cell"]) == (l_part, False)]
            if rare and common:
                rare_lower &= max(rare) < min(common)
        below = [f"{r['cell']} ({r['queries']} quer{'y' if r['queries'] == 1 else 'ies'})" for r in rows
                 if not (r["p_at_k_mean"] > r["random_p_at_k_mean"] and r["map"] > r["random_map"])]
        out[name] = {"every_cell_beats_random": bool(beats), "rare_senses_score_lower": bool(rare_lower),
                     "cells_compared": len(rows), "cells_not_above_random": below}
    return out


def split_cell(cell: str) -> tuple[str, bool]:
    """(the lemma-frequency part of a cell label, whether its ratio part is the lowest interval)."""
    l_part, r_part = cell.split(", ")
    return l_part, r_part.startswith("r<")
