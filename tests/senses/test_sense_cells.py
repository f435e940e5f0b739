"""Table-1 buckets: DuckDB counts of lemma frequency l and sense ratio r, and cell assignment by edges."""

import numpy as np
import pyarrow as pa
import pytest

from lexprobe.senses.sense_cells import assign_cells, interval_labels, query_statistics


def _table(rows):
    lemma, pos, sense = zip(*rows)
    return pa.table({"lemma": list(lemma), "pos": list(pos), "sense": list(sense)})


def test_query_statistics_counts_lemma_and_sense_in_database():
    database = _table([("bank", "NOUN", "bank%1")] * 3 + [("bank", "NOUN", "bank%2")]
                      + [("bank", "VERB", "bank%v")] * 2 + [("run", "VERB", None)])
    queries = _table([("bank", "NOUN", "bank%2"), ("bank", "VERB", "bank%v"), ("bank", "NOUN", "bank%9"),
                      ("walk", "VERB", "walk%1"), ("bank", "NOUN", "bank%1")])
    l, c = query_statistics(database, queries)
    assert l.tolist() == [4, 2, 4, 0, 4]
    assert c.tolist() == [1, 2, 0, 0, 3]
    l_any, c_any = query_statistics(database, queries, match_pos=False)
    assert l_any.tolist() == [6, 6, 6, 0, 6]  # untagged 'run' is not counted; POS pooled
    assert c_any.tolist() == [1, 2, 0, 0, 3]


def test_assign_cells_default_edges_on_hand_made_table():
    lemma_freq = np.array([10, 499, 500, 2000, 600, 1])
    ratio = np.array([0.1, 0.25, 0.24, 0.9, 0.25, 0.2499])
    cells, labels = assign_cells(lemma_freq, ratio)
    assert labels == ["l<500, r<0.25", "l<500, r>=0.25", "l>=500, r<0.25", "l>=500, r>=0.25"]
    assert [labels[c] for c in cells] == ["l<500, r<0.25", "l<500, r>=0.25", "l>=500, r<0.25",
                                          "l>=500, r>=0.25", "l>=500, r>=0.25", "l<500, r<0.25"]


def test_assign_cells_configurable_edges():
    cells, labels = assign_cells(np.array([5, 50, 5000]), np.array([0.5, 0.05, 0.15]),
                                 lemma_edges=[10, 1000], ratio_edges=[0.1, 0.2])
    assert interval_labels("l", [10, 1000]) == ["l<10", "10<=l<1000", "l>=1000"]
    assert len(labels) == 9
    assert [labels[c] for c in cells] == ["l<10, r>=0.2", "10<=l<1000, r<0.1", "l>=1000, 0.1<=r<0.2"]
    with pytest.raises(ValueError, match="ascending"):
        assign_cells(np.array([1]), np.array([0.1]), ratio_edges=[0.5, 0.25])


def test_summarize_cells_with_every_query_skipped_gives_empty_cells():
    """A ranking where every query was skipped (e.g. min_sense_count above every sense) summarises to cells of 0
    queries with NaN scores and no curves, instead of failing to shape an empty P@k matrix."""
    from lexprobe.senses.sense_cells import cell_labels, summarize_cells

    floats = pa.list_(pa.float64())
    empty = pa.table({"cell": pa.array([], pa.string()), "lemma": pa.array([], pa.string()),
                      "p_at_k": pa.array([], floats), "random_p_at_k": pa.array([], floats),
                      "ap": pa.array([], pa.float64()), "random_ap": pa.array([], pa.float64())})
    labels = cell_labels()
    rows, curves = summarize_cells(empty, labels)
    assert [r["cell"] for r in rows] == list(labels) + ["all"]
    assert all(r["queries"] == 0 and r["lemmas"] == 0 and np.isnan(r["map"]) for r in rows)
    assert curves == {}
