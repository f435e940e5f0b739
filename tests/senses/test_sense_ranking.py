"""Sense ranking metrics (P@k, recall@k, AP) on hand-computed fixtures, the exact random baseline against a
simulation, and the ranking of real SemCor / evaluation-set subsets with the packaged MiniLM."""

import numpy as np
import pytest

from lexprobe.senses.sense_ranking import random_baseline, rank_metrics


def _at(degrees):
    rad = np.radians(np.asarray(degrees, dtype=np.float64))
    return np.stack([np.cos(rad), np.sin(rad)], axis=1).astype(np.float32)


# candidates at 10, 80, 30, 50, 170 degrees with senses A B B A A; a query at 0 degrees ranks them
# 10 (A), 30 (B), 50 (A), 80 (B), 170 (A): relevance for sense A = 1 0 1 0 1, for sense B = 0 1 0 1 0.
CANDIDATES = _at([10, 80, 30, 50, 170])
SENSES = np.array([0, 1, 1, 0, 0])


def test_rank_metrics_equal_hand_computed_values():
    m = rank_metrics(_at([0, 0]), np.array([0, 1]), CANDIDATES, SENSES, k_max=7)
    # sense A: R = 3, N = 5; hits at ranks 1, 3, 5; ranks 6 and 7 do not exist and count as misses
    assert m.p_at_k[0] == pytest.approx([1, 1 / 2, 2 / 3, 2 / 4, 3 / 5, 3 / 6, 3 / 7])
    assert m.recall_at_k[0] == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3, 1, 1, 1])
    assert m.ap[0] == pytest.approx((1 / 1 + 2 / 3 + 3 / 5) / 3)
    # sense B: hits at ranks 2 and 4
    assert m.p_at_k[1] == pytest.approx([0, 1 / 2, 1 / 3, 2 / 4, 2 / 5, 2 / 6, 2 / 7])
    assert m.recall_at_k[1] == pytest.approx([0, 1 / 2, 1 / 2, 1, 1, 1, 1])
    assert m.ap[1] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert m.n_candidates.tolist() == [5, 5] and m.n_relevant.tolist() == [3, 2]


def test_excluded_candidate_is_neither_ranked_nor_relevant():
    # the query is candidate 0 itself: the rest rank 30 (B), 50 (A), 80 (B), 170 (A)
    m = rank_metrics(_at([0]), np.array([0]), CANDIDATES, SENSES, k_max=5, exclude=np.array([0]))
    assert m.n_candidates.tolist() == [4] and m.n_relevant.tolist() == [2]
    assert m.p_at_k[0] == pytest.approx([0, 1 / 2, 1 / 3, 2 / 4, 2 / 5])
    assert m.ap[0] == pytest.approx((1 / 2 + 2 / 4) / 2)


def test_blocks_do_not_change_results():
    rng = np.random.default_rng(3)
    q, c = rng.standard_normal((37, 8)).astype(np.float32), rng.standard_normal((53, 8)).astype(np.float32)
    qs, cs = rng.integers(0, 3, 37), rng.integers(0, 3, 53)
    whole = rank_metrics(q, qs, c, cs, k_max=60)
    blocked = rank_metrics(q, qs, c, cs, k_max=60, block=100)  # one query per block
    np.testing.assert_allclose(whole.ap, blocked.ap)
    np.testing.assert_allclose(whole.p_at_k, blocked.p_at_k)


def test_no_candidates_and_no_relevant():
    m = rank_metrics(_at([0]), np.array([0]), np.zeros((0, 2), np.float32), np.array([], int), k_max=3)
    assert m.n_candidates.tolist() == [0] and m.p_at_k[0].tolist() == [0, 0, 0] and np.isnan(m.ap[0])
    m = rank_metrics(_at([0]), np.array([9]), CANDIDATES, SENSES, k_max=3)
    assert m.n_relevant.tolist() == [0] and m.p_at_k[0].tolist() == [0, 0, 0] and np.isnan(m.ap[0])


def test_random_baseline_formula_matches_simulation():
    # orthonormal candidates and Gaussian queries: every ranking of the candidates is equally likely
    rng = np.random.default_rng(0)
    cases = [(7, 3), (12, 1), (4, 4), (1, 1)]
    k_max = 10
    for n, r in cases:
        candidates = np.eye(n, dtype=np.float32)
        senses = np.array([0] * r + [1] * (n - r))
        queries = rng.standard_normal((40_000, n)).astype(np.float32)
        sim = rank_metrics(queries, np.zeros(len(queries), int), candidates, senses, k_max=k_max)
        p, recall, ap = random_baseline(np.array([n]), np.array([r]), k_max=k_max)
        np.testing.assert_allclose(sim.p_at_k.mean(axis=0), p[0], atol=0.01)
        np.testing.assert_allclose(sim.recall_at_k.mean(axis=0), recall[0], atol=0.01)
        assert sim.ap.mean() == pytest.approx(ap[0], abs=0.01)
        assert p[0][n:] == pytest.approx(r / np.arange(n + 1, k_max + 1))  # k > N: all retrieved, R / k


def test_random_baseline_hand_values():
    p, recall, ap = random_baseline(np.array([5]), np.array([2]), k_max=6)
    assert p[0] == pytest.approx([0.4, 0.4, 0.4, 0.4, 0.4, 2 / 6])
    assert recall[0] == pytest.approx([0.2, 0.4, 0.6, 0.8, 1, 1])
    h5 = 1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5
    assert ap[0] == pytest.approx((h5 + (1 / 4) * (5 - h5)) / 5)


def _instances(rows, vectors):
    import pyarrow as pa

    from lexprobe.senses.sense_ranking import Instances

    lemma, pos, sense = zip(*rows)
    table = pa.table({"instance_id": [f"i{n}" for n in range(len(rows))], "lemma": list(lemma),
                      "pos": list(pos), "sense": list(sense)})
    return Instances(table, np.asarray(vectors, dtype=np.float32))


def _toy_corpora():
    """D: 'bank' NOUN (5 candidates of the CANDIDATES fixture), 'bank' VERB (3), 'cat' NOUN (6, one sense)."""
    rng = np.random.default_rng(1)
    d_rows = ([("bank", "NOUN", s) for s in ["A", "B", "B", "A", "A"]] + [("bank", "VERB", "V")] * 3
              + [("cat", "NOUN", "C")] * 6 + [("dog", "NOUN", None)])
    d_vecs = np.concatenate([CANDIDATES, _at(rng.uniform(0, 360, 10))])
    q_rows = [("bank", "NOUN", "A"), ("bank", "NOUN", "B"), ("bank", "VERB", "V"), ("cat", "NOUN", "C"),
              ("bank", "NOUN", "Z"), ("owl", "NOUN", "O")]
    return _instances(d_rows, d_vecs), _instances(q_rows, _at([0, 0, 0, 0, 0, 0]))


def test_rank_senses_groups_by_lemma_and_pos_and_filters_rare_senses():
    from lexprobe.senses.sense_ranking import rank_senses

    database, queries = _toy_corpora()
    table, skips = rank_senses(database, queries, k_max=7, min_sense_count=2)
    assert table.column("instance_id").to_pylist() == ["i0", "i1", "i2", "i3"]
    assert skips["sense rarer than min_sense_count in the database"] == 2  # 'Z' unseen, 'owl' unknown
    assert table.column("n_candidates").to_pylist() == [5, 5, 3, 6]
    assert table.column("n_relevant").to_pylist() == [3, 2, 3, 6]
    assert table.column("lemma_freq").to_pylist() == [5, 5, 3, 6]
    assert table.column("sense_ratio").to_pylist() == pytest.approx([3 / 5, 2 / 5, 1, 1])
    # the 'bank' NOUN queries are the hand-computed ones above
    assert table.column("ap").to_pylist()[:2] == pytest.approx([(1 + 2 / 3 + 3 / 5) / 3, (1 / 2 + 2 / 4) / 2])
    p = np.asarray(table.column("p_at_k").to_pylist())
    assert p[0] == pytest.approx([1, 1 / 2, 2 / 3, 2 / 4, 3 / 5, 3 / 6, 3 / 7])
    assert table.column("p_at_k_mean").to_pylist()[0] == pytest.approx(p[0].mean())
    assert table.column("random_p_at_k_mean").to_pylist()[3] == pytest.approx(np.mean([1] * 6 + [6 / 7]))
    assert set(table.column("cell").to_pylist()) == {"l<500, r>=0.25"}

    strict, skips = rank_senses(database, queries, k_max=7, min_sense_count=3)
    assert strict.column("instance_id").to_pylist() == ["i0", "i2", "i3"] and sum(skips.values()) == 3

    pooled, _ = rank_senses(database, queries, k_max=7, min_sense_count=2, match_pos=False)
    assert pooled.column("n_candidates").to_pylist() == [8, 8, 8, 6]  # 'bank' noun and verb together
    everything, _ = rank_senses(database, queries, k_max=7, min_sense_count=2, all_lemmas=True)
    assert everything.column("n_candidates").to_pylist() == [14] * 4  # untagged 'dog' is no candidate


def test_cells_by_lemma_or_by_sense_frequency():
    """l counts the lemma's instances in D (the paper's text) or the query sense's (the authors' code): the toy
    queries have (lemma, sense) counts (5, 3), (5, 2), (3, 3), (6, 6)."""
    from lexprobe.senses.sense_ranking import rank_senses

    database, queries = _toy_corpora()
    by_lemma, _ = rank_senses(database, queries, k_max=7, min_sense_count=2, lemma_edges=[4])
    by_sense, _ = rank_senses(database, queries, k_max=7, min_sense_count=2, lemma_edges=[4], frequency="sense")
    assert by_lemma.column("cell").to_pylist() == ["l>=4, r>=0.25", "l>=4, r>=0.25", "l<4, r>=0.25", "l>=4, r>=0.25"]
    assert by_sense.column("cell").to_pylist() == ["l<4, r>=0.25", "l<4, r>=0.25", "l<4, r>=0.25", "l>=4, r>=0.25"]
    assert by_sense.column("ap").to_pylist() == by_lemma.column("ap").to_pylist()  # only the cells move
    with pytest.raises(ValueError, match="frequency"):
        rank_senses(database, queries, frequency="lemmas")


def test_proper_names_are_person_group_location_instances_named_otherwise():
    import pyarrow as pa

    from lexprobe.senses.sense_ranking import Instances, proper_name_mask, without_proper_names

    table = pa.table({"lemma": ["person", "person", "group", "location", "cat", "group"],
                      "surface": ["John Smith", "persons", "Fulton County Grand Jury", "Atlanta", "cat", "Groups"],
                      "pos": ["NOUN"] * 6, "sense": ["p", "p", "g", "l", "c", "g"]})
    assert proper_name_mask(table).tolist() == [True, False, True, True, False, False]
    kept, dropped = without_proper_names(Instances(table, np.eye(6, dtype=np.float32)))
    assert dropped == 3 and kept.table.column("surface").to_pylist() == ["persons", "cat", "Groups"]
    assert kept.vectors[:, 1].tolist() == [1, 0, 0]  # vectors follow their rows


def test_rank_senses_same_corpus_leaves_each_query_out():
    from lexprobe.senses.sense_ranking import rank_senses

    database, _ = _toy_corpora()
    table, _ = rank_senses(database, database, k_max=5, min_sense_count=2, same_corpus=True)
    ids = table.column("instance_id").to_pylist()
    # sense B has 2 instances: each has only 1 other, fewer than min_sense_count
    assert ids == ["i0", "i3", "i4", "i5", "i6", "i7"] + [f"i{n}" for n in range(8, 14)]
    n = dict(zip(ids, table.column("n_candidates").to_pylist()))
    r = dict(zip(ids, table.column("n_relevant").to_pylist()))
    assert n["i0"] == 4 and r["i0"] == 2 and n["i8"] == 5 and r["i8"] == 5
    assert dict(zip(ids, table.column("lemma_freq").to_pylist()))["i0"] == 4
    # i0 sits at 10 degrees; without itself the 'bank' NOUN ranking is 30 (B), 50 (A), 80 (B), 170 (A)
    assert dict(zip(ids, table.column("ap").to_pylist()))["i0"] == pytest.approx((1 / 2 + 2 / 4) / 2)


def test_bucket_report_writes_tables_curves_and_checks(tmp_path):
    from lexprobe.runs.run_dir import RunDir
    from lexprobe.senses.sense_cells import cell_labels
    from lexprobe.senses.run_senses import write_bucket_report
    from lexprobe.senses.sense_ranking import rank_senses

    database, queries = _toy_corpora()
    table, _ = rank_senses(database, queries, k_max=7, min_sense_count=2, ratio_edges=[0.5])
    labels = cell_labels([500], [0.5])
    summary = write_bucket_report(RunDir(tmp_path), {"toy": table, "toy2": table}, labels, meta={"k": 7})
    cells = {r["cell"]: r for r in summary["cells"] if r["run"] == "toy"}
    assert cells["l<500, r<0.5"]["queries"] == 1 and cells["l<500, r>=0.5"]["queries"] == 3
    assert cells["l<500, r<0.5"]["map"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert cells["l>=500, r<0.5"]["queries"] == 0
    assert summary["checks"]["toy"]["rare_senses_score_lower"]
    md = (tmp_path / "buckets.md").read_text()
    assert "toy P@k" in md and "toy2 MAP" in md and "random P@k" in md
    assert (tmp_path / "queries.parquet").exists()
    # one grid figure (a panel per non-empty cell), as PNG, SVG and PDF
    assert sorted(p.name for p in tmp_path.glob("p_at_k.*")) == ["p_at_k.pdf", "p_at_k.png", "p_at_k.svg"]
    assert summary["plots"] == {"all cells": "p_at_k.png"}


# ------------------------------------------------------------------ real data: SemCor subset, packaged MiniLM

SEMCOR_SENTENCES = 800


@pytest.fixture(scope="module")
def semcor_run(tmp_path_factory, shared_data, cli):
    """'bench senses' on the first 800 SemCor sentences ranked against themselves (each query left out),
    MiniLM's last layer; lemma-frequency edge 50 so that a subset this small fills both l intervals."""
    home = tmp_path_factory.mktemp("senses_home")
    out = tmp_path_factory.mktemp("senses_run")
    spec = f"wsd:{shared_data / 'semcor3.0'}"
    args = ("--home", home, "bench", "senses", "--database", spec, "--queries", spec, "--model", "minilm",
            "--database-sentences", SEMCOR_SENTENCES, "--query-sentences", SEMCOR_SENTENCES,
            "--lemma-edges", "50", "--out", out, "--record", "")
    first = cli(*args)
    assert first.code == 0, first
    return home, out, first, cli(*args)


def test_semcor_subset_cells_beat_their_random_baseline(semcor_run):
    import json

    import pyarrow.parquet as pq

    home, out, result, _ = semcor_run
    summary = json.loads((out / "summary.json").read_text())
    cells = [c for c in summary["cells"] if c["queries"] and c["cell"] != "all"]
    assert len(cells) == 4, cells  # every cell of l<50 / l>=50 x r<0.25 / r>=0.25 has queries
    for c in cells:
        assert c["p_at_k_mean"] > c["random_p_at_k_mean"] and c["map"] > c["random_map"], c
    assert summary["checks"]["minilm"]["every_cell_beats_random"]
    queries = pq.read_table(out / "queries.parquet")
    assert min(queries.column("sense_count").to_pylist()) >= 5  # min sense count, the query left out
    n, r = (np.asarray(queries.column(c).to_pylist()) for c in ("n_candidates", "n_relevant"))
    assert np.allclose(np.asarray(queries.column("sense_ratio").to_pylist()), r / n)  # same-lemma candidates
    assert "minilm P@k" in (out / "buckets.md").read_text() and (out / "p_at_k.png").is_file()
    assert "every cell beats random: True" in result.out


def test_bench_reuses_the_token_index(semcor_run):
    import json

    home, out, first, second = semcor_run
    assert second.code == 0, second
    meta = json.loads((out / "summary.json").read_text())["meta"]["runs"]["minilm"]
    assert meta["built"] == [] and meta["database_index"] == meta["query_index"]
    assert [p.name for p in home.iterdir() if not p.name.startswith(".")] == [meta["database_index"]]


def test_query_senses_marks_targets_and_stays_in_the_lemma(semcor_run, cli):
    import json

    home, out, _, _ = semcor_run
    name = json.loads((out / "summary.json").read_text())["meta"]["runs"]["minilm"]["database_index"]
    r = cli("--home", home, "query", "senses", "--index", name, "--sentence", "The jury said that the vote was fair",
            "--target", "said", "--lemma", "say", "-k", "5", "--format", "json")
    assert r.code == 0, r
    rows = json.loads(r.out)
    assert len(rows) == 5 and all(row["lemma"] == "say" and "[[" in row["sentence"] for row in rows)
    assert [row["score"] for row in rows] == sorted((row["score"] for row in rows), reverse=True)
    table = cli("--home", home, "query", "senses", "--index", name, "--sentence", "The jury said it",
                "--target", "said", "-k", "3", "--definitions")
    assert table.code == 0 and "query: The jury [[said]] it" in table.out
    lines = table.out.splitlines()
    assert "definition" in lines[1] and all(" say " in line for line in lines[3:6])  # WordNet base form
    assert "express in words" in table.out  # say%2:32:00::, the commonest sense of 'say'
    unknown = cli("--home", home, "query", "senses", "--index", name, "--sentence", "The jury xyzzy it",
                  "--target", "xyzzy", "-k", "3", "--format", "csv")
    assert unknown.code == 0 and len(unknown.out.splitlines()) == 4
    assert "no instance of lemma 'xyzzy'" in unknown.err  # unknown lemma: ranks everything, says so


def test_bad_input_is_one_line_error(semcor_run, cli, shared_data):
    home, out, _, _ = semcor_run
    spec = f"wsd:{shared_data / 'semcor3.0'}"
    cases = [
        ("query", "senses", "--index", "nosuchindex", "--sentence", "a b", "--target", "a"),
        ("bench", "senses", "--database", spec, "--queries", spec, "--ratio-edges", "0.5,0.25"),
        ("bench", "senses", "--database", spec, "--queries", spec, "--model", "/no/such/model",
         "--database-sentences", "5", "--query-sentences", "5"),
        ("bench", "senses", "--database", "wsd:/no/such/folder", "--queries", spec),
    ]
    for args in cases:
        r = cli("--home", home, *args)
        assert r.code == 2 and r.err.startswith("error: ") and r.err.strip().count("\n") == 0, (args, r)
    name = next(p.name for p in home.iterdir() if not p.name.startswith("."))
    r = cli("--home", home, "query", "senses", "--index", name, "--sentence", "a b", "--target", "c")
    assert r.code == 2 and "does not occur" in r.err


def test_limit_queries_is_a_seeded_sample():
    from lexprobe.senses.sense_ranking import rank_senses

    database, queries = _toy_corpora()
    a, skips = rank_senses(database, queries, k_max=5, min_sense_count=2, limit_queries=2, seed=7)
    b, _ = rank_senses(database, queries, k_max=5, min_sense_count=2, limit_queries=2, seed=7)
    assert len(a) == 2 and skips["not in the --limit-queries sample"] == 2
    assert a.column("instance_id").to_pylist() == b.column("instance_id").to_pylist()
    draws = {tuple(rank_senses(database, queries, k_max=5, min_sense_count=2, limit_queries=2, seed=s)[0]
                   .column("instance_id").to_pylist()) for s in range(8)}
    assert len(draws) > 1


def test_speed_benchmark_baseline_agrees_with_grouped_ranking(tmp_path):
    from lexprobe.senses.bench_senses import run_ranking_bench

    database, queries = _toy_corpora()
    result = run_ranking_bench(database, queries, label="toy", k_max=7, min_sense_count=2,
                               record_path=str(tmp_path / "senses.md"))
    assert result["agree"]
    text = (tmp_path / "senses.md").read_text()
    assert "one query at a time" in text and "identical average precision on the shared sample: True" in text
