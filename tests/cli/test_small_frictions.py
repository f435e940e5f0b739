"""Smaller frictions: a relation named twice, pairs left out never silently."""

from __future__ import annotations

import json


def test_query_offsets_several_relations_and_left_out_pairs(cli, glove_home, shared_data):
    r = cli("--home", glove_home, "query", "offsets", "--index", "glove", "--relation", "I01", "--relation", "I02",
            "--relation", "i01", "--dataset", f"bats:{shared_data / 'BATS_3.0'}", "--shuffles", "5", "--format", "json")
    assert r.code == 0, r
    rows = json.loads(r.out)
    assert [row["relation"] for row in rows] == ["I01 [noun - plural_reg]", "I02 [noun - plural_irreg]"]
    assert rows[1]["n_pairs"] == 48  # and why: said on stderr
    assert "I02 [noun - plural_irreg]: 2 of 50 pairs left out: 2 with the answer equal to the start word" in r.err
    assert "I01" not in r.err  # nothing left out there


def test_sense_cell_check_reports_its_evidence():
    """'every cell beats random: False' says which cells and on how many queries; empty cells are left out."""
    from lexprobe.senses.sense_cells import bucket_checks

    def row(cell, queries, p, rp):
        return {"run": "m", "cell": cell, "queries": queries, "p_at_k_mean": p, "random_p_at_k_mean": rp,
                "map": p, "random_map": rp}

    rows = [row("l<500, r<0.25", 1, 0.1, 0.2), row("l<500, r>=0.25", 40, 0.6, 0.3),
            row("l>=500, r<0.25", 0, 0.0, 0.0), row("all", 41, 0.5, 0.3)]
    checks = bucket_checks(rows)["m"]
    assert checks["every_cell_beats_random"] is False and checks["cells_compared"] == 2
    assert checks["cells_not_above_random"] == ["l<500, r<0.25 (1 query)"]
    assert bucket_checks(rows[1:])["m"] == {"every_cell_beats_random": True, "rare_senses_score_lower": True,
                                            "cells_compared": 1, "cells_not_above_random": []}


def test_run_offsets_says_which_random_sets_it_cannot_build(cli, glove_home, shared_data, tmp_path):
    """One category folder has one broad type: mismatched-across cannot be built, and the run says so."""
    r = cli("--home", glove_home, "-q", "run", "offsets", "--index", "glove", "--dataset",
            f"bats:{shared_data / 'BATS_3.0' / '1_Inflectional_morphology'}", "--shuffles", "2", "--replicates", "1",
            "--pool", "1000", "--out", tmp_path / "run")
    assert r.code == 0, r
    assert "note: random set mismatched-across not built (needs 2 broad types or more; the dataset's types: " \
           "inflectional)" in r.err
    assert "mismatched-within" not in r.err  # 10 inflectional relations: that one is built


def test_sql_lists_only_the_views_and_offers_unquoted_aliases(cli, home):
    assert cli("--home", home, "-q", "index", "words", "--vectors", "glove-6b-50d", "--limit", "500",
               "--name", "glove-small").code == 0
    r = cli("--home", home, "sql", "show tables", "--format", "json")
    assert r.code == 0 and sorted(row["name"] for row in __import__("json").loads(r.out)) == [
        "glove-small", "glove_small", "words"]  # no internal tables
    r = cli("--home", home, "sql", "select count(*) as n from glove_small", "--format", "csv")
    assert r.code == 0 and r.out.split() == ["n", "500"]
