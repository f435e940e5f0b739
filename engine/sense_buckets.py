"""Table-1 buckets of sense-ranking queries: ``l`` = how often the query's lemma occurs in the database D,
``r`` = the proportion of the lemma's instances in D that carry the query's sense.

Default cells: l < 500 / l >= 500 x r < 0.25 / r >= 0.25 (the paper's); both edge lists are configurable.
The counts come from DuckDB over D's token table (the index's memory-mapped shards).
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
    l_labels, r_labels = interval_labels("l", lemma_edges), interval_labels("r", ratio_edges)
    labels = [f"{a}, {b}" for a in l_labels for b in r_labels]
    return li * len(r_labels) + ri, labels
