"""DuckDB catalog: per-index and per-kind views over the shards, and the sql command."""

import json

import numpy as np

from lexprobe.kinds.words import insert_words


def test_sql_counts_the_glove_words(cli, glove_home):
    r = cli("--home", glove_home, "sql", "select count(*) as n from words", "--format", "json")
    assert r.code == 0, r
    assert json.loads(r.out) == [{"n": 400000}]
    r = cli("--home", glove_home, "sql", "select word from glove where rank <= 3 order by rank", "--format", "csv")
    assert r.out.splitlines() == ["word", "the", "\",\"", "."]  # CSV quotes the comma


def test_sql_error_is_one_line(cli, glove_home):
    r = cli("--home", glove_home, "sql", "select nope from words")
    assert r.code == 2 and r.err.startswith("error: sql:") and len(r.err.strip().splitlines()) == 1


def test_replaced_rows_leave_the_views(cli, tmp_path):
    home = tmp_path / "h"
    vec = tmp_path / "v.txt"
    vec.write_text("a 1 0\nb 0 1\nc 1 1\n")
    assert cli("--home", home, "index", "words", "--vectors", vec, "--name", "w").code == 0
    insert_words(home, "w", ["b", "d"], np.array([[2, 2], [3, 1]], np.float32), origin="test", settings={},
                 replace=True)
    r = cli("--home", home, "sql", "select word, origin from w order by id", "--format", "json")
    assert [(x["word"], x["origin"]) for x in json.loads(r.out)] == [
        ("a", "v.txt"), ("c", "v.txt"), ("b", "test"), ("d", "test")]
    r = cli("--home", home, "query", "neighbors", "--index", "w", "d", "-k", "4", "--format", "json")
    assert [x["word"] for x in json.loads(r.out)][0] == "a"
    assert cli("--home", home, "index", "verify", "w").code == 0
