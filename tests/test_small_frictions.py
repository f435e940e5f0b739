"""The smaller frictions of issue 16: a relation named twice, pairs left out never silently."""

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
