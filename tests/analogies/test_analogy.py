"""The analogy engine on the packaged GloVe and real BATS: gensim agreement, the pruned kernel against the full
scan, the honest test, ranks, and the CLI's outputs and errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lexprobe.analogies.analogy import honest_shares, run_relations

from lexprobe.kinds.analogy_queries import answer_questions
from lexprobe.sources.datasets.analogy_sets import usable_relations
from topk_ties import (analogy_scores, assert_rank_agrees, assert_topk_agrees, dot_error, pairdir_error, unit_error,
                       unit_float64)

G = float(dot_error(50, inputs=unit_error(50)))  # a float32 cosine of GloVe's vectors normalised in float32


@pytest.fixture(scope="module")
def kv(glove):
    from lexprobe.analogies.bench_analogy import gensim_vectors

    return gensim_vectors(glove)


def _sample(table, n, seed=0):
    pick = np.random.default_rng(seed).choice(len(table), size=n, replace=False)
    return table.take(np.sort(pick)).to_pylist()


@pytest.fixture(scope="module")
def exact(glove):
    """GloVe's vectors normalised in float64: the reference for the float32 scores."""
    return unit_float64(glove.raw)


def _agrees_with(glove, exact, method, question, ours, theirs, eps=1e-3):
    """Our top-k ``(words, scores)`` against another float32 implementation's, both sides' rounding allowed."""
    ids = lambda words: glove.ids(words).tolist()
    err = 2 * analogy_scores(exact, method, *ids(question), G, ids(ours[0]) + ids(theirs[0]), eps)[1].max()
    assert_topk_agrees(ids(ours[0]), (ids(theirs[0]), theirs[1]), err, scores=ours[1], what=" ".join(question))


@pytest.mark.parametrize("method", ["add", "mul"])
def test_same_answers_as_gensim(glove, exact, bats, kv, method):
    # gensim's most_similar_cosmul uses eps 1e-6 (and ignores restrict_vocab): compare with the same eps
    rows = _sample(run_relations(glove, [bats["I01"], bats["E01"]], method=method, eps=1e-6).table, 30)
    call = kv.most_similar if method == "add" else kv.most_similar_cosmul
    for row in rows:
        (word, score), = call(positive=[row["a_star"], row["b"]], negative=[row["a"]], topn=1)
        question = [row["a"], row["a_star"], row["b"]]
        ours = ([row["prediction"]], [row["score"]])
        _agrees_with(glove, exact, method, question, ours, ([word], [score]), eps=1e-6)
        assert row["score"] == pytest.approx(score, abs=1e-5)


def test_restricted_vocabulary_matches_gensim(glove, exact, bats, kv):
    rows = _sample(run_relations(glove, [bats["I03"]], restrict_vocab=10000).table, 20, seed=1)
    for row in rows:
        (word, score), = kv.most_similar(positive=[row["a_star"], row["b"]], negative=[row["a"]], topn=1,
                                         restrict_vocab=10000)
        question = [row["a"], row["a_star"], row["b"]]
        _agrees_with(glove, exact, "add", question, ([row["prediction"]], [row["score"]]), ([word], [score]))
        assert glove.word_to_id[row["prediction"]] < 10000 and glove.word_to_id[word] < 10000


@pytest.mark.parametrize("method, honest", [("add", False), ("add", True), ("mul", False), ("pairdir", True)])
def test_pruned_kernel_equals_full_scan_and_generic_path(glove, exact, bats, method, honest):
    rels = [bats["E02"]]
    fast = run_relations(glove, rels, method=method, k=3, honest=honest, restrict_vocab=30000).table
    full = run_relations(glove, rels, method=method, k=3, honest=honest, restrict_vocab=30000, prune=False).table
    for col in ("prediction", "rank", "top_k"):
        assert fast.column(col).to_pylist() == full.column(col).to_pylist()
    np.testing.assert_allclose(fast.column("score").to_numpy(), full.column("score").to_numpy(), rtol=1e-5)
    ids = lambda c: glove.ids(fast.column(c).to_pylist())
    D, I = answer_questions(glove, ids("a"), ids("a_star"), ids("b"), method=method, k=3, exclude_inputs=not honest,
                            restrict_vocab=30000)
    # the generic path computes the scores another way: where the two top 3 differ, and on a sample, both agree with
    # the exact (float64) scores up to float32 rounding (tests/topk_ties.py)
    top_k = fast.column("top_k").to_pylist()
    sample = set(np.random.default_rng(0).choice(len(top_k), 50, replace=False).tolist())
    for q, (a, a_star, b, top) in enumerate(zip(ids("a"), ids("a_star"), ids("b"), top_k)):
        if q not in sample and glove.ids(top).tolist() == I[q].tolist():
            continue
        s, err = analogy_scores(exact, method, a, a_star, b, G, slice(30000))
        if not honest:
            s[[x for x in (a, a_star, b) if x < 30000]] = -np.inf
        assert_topk_agrees(I[q], s, err, scores=D[q], what=f"generic path, question {q}")
        assert_topk_agrees(glove.ids(top), s, err, what=f"relation kernel, question {q}")
    np.testing.assert_allclose(D[:, 0], fast.column("score").to_numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("method", ["add", "mul"])
def test_pruned_kernel_on_the_whole_vocabulary_k1(glove, bats, method):
    """k = 1 over all 400k words: the argmax path and the sampled candidate threshold (a strided sample, used
    only above 32k words) give the full scan's answers, scores and gold ranks."""
    rels = [bats["L05"]]
    fast = run_relations(glove, rels, method=method).table
    full = run_relations(glove, rels, method=method, prune=False).table
    for col in ("prediction", "rank"):
        assert fast.column(col).to_pylist() == full.column(col).to_pylist()
    np.testing.assert_allclose(fast.column("score").to_numpy(), full.column("score").to_numpy(), rtol=1e-6)


def test_add_ranks_by_brute_force_over_the_whole_vocabulary(glove, exact, bats):
    """Gold ranks far down the list (counted block by block over all 400k words, excluded words removed) equal a
    brute-force count of the words scoring above the gold answer."""
    rows = sorted(run_relations(glove, [bats["L05"]]).table.to_pylist(), key=lambda r: -r["rank"])[:4]
    assert rows[0]["rank"] > 1000
    for row in rows:
        a, a_star, b, gold = (glove.word_to_id[row[c]] for c in ("a", "a_star", "b", "gold"))
        scores, err = analogy_scores(exact, "add", a, a_star, b, G)
        scores[[a, a_star, b]] = -np.inf
        assert_rank_agrees(row["rank"], scores, [gold], err, what=str(row))  # words within rounding: either way


def test_pairdir_and_rank_by_brute_force(glove, exact, bats):
    table = run_relations(glove, [bats["I05"]], method="pairdir", restrict_vocab=20000).table
    U = exact[:20000]
    rows = table.to_pylist()
    assert all(r["rank"] == -1 for r in rows if glove.word_to_id[r["gold"]] >= 20000)  # gold outside the candidates
    for row in [r for r in rows if glove.word_to_id[r["gold"]] < 20000][:5]:
        a, a_star, b = (exact[glove.word_to_id[row[c]]] for c in ("a", "a_star", "b"))
        o = a_star - a
        diff = U - b
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = diff @ o / (np.linalg.norm(diff, axis=1) * np.linalg.norm(o))
        for w in ("a", "a_star", "b"):
            cos[glove.word_to_id[row[w]]] = -np.inf
        err = pairdir_error(G, U @ b, np.nan_to_num(cos, neginf=0.0), np.linalg.norm(o))  # float32 rounding
        assert_topk_agrees(glove.ids([row["prediction"]]), cos, err, scores=[row["score"]], what=str(row))
        assert_rank_agrees(row["rank"], cos, [glove.word_to_id[row["gold"]]], err, what=str(row))


def test_rank_one_means_correct_and_any_answers(glove, bats, shared_data):
    table = run_relations(glove, [bats["I01"]]).table
    rank, correct = table.column("rank").to_numpy(), table.column("correct").to_numpy(zero_copy_only=False)
    assert ((rank == 1) == correct).all() and (rank >= 1).all()
    any_rel, _ = usable_relations(glove, f"bats:{shared_data / 'BATS_3.0/4_Lexicographic_semantics'}", answers="any")
    first = run_relations(glove, [bats["L02"]]).table
    anyt = run_relations(glove, [r for r in any_rel if r.code == "L02"]).table
    acc = lambda t: t.column("correct").to_numpy(zero_copy_only=False).mean()
    assert acc(anyt) > acc(first)  # more accepted answers: more correct
    assert first.column("prediction").to_pylist() == anyt.column("prediction").to_pylist()


def test_honest_test_returns_b_most_often(glove, bats):
    sample = [bats[c] for c in ("I01", "I07", "D02", "E01", "E10", "L05")]
    shares = honest_shares(run_relations(glove, sample, honest=True, ranks=False).table)
    assert shares["b"] > max(shares["a"], shares["a_star"], shares["gold"], shares["other"])
    assert 0.2 < shares["b"] < 0.7 and shares["a"] < 0.05


def test_cli_query_and_questions_file(cli, glove_home, tmp_path):
    r = cli("--home", glove_home, "query", "analogy", "--index", "glove", "man", "king", "woman", "-k", "2",
            "--format", "json")
    assert r.code == 0, r
    rows = json.loads(r.out)
    assert rows[0] == {**rows[0], "a": "man", "a_star": "king", "b": "woman", "rank": 1, "word": "queen"}
    q = tmp_path / "q.txt"
    q.write_text("france paris italy\n\n# comment\ngood better bad\n")
    r = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", q, "-k", "1", "--method",
            "mul", "--format", "json")
    assert r.code == 0, r
    assert [row["word"] for row in json.loads(r.out)] == ["rome", "worse"]
    q.write_text("france paris italy\ngood better\n")
    r = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", q)
    assert r.code == 2 and f"{q}:2: expected 3 words" in r.err
    q.write_text("france paris xqzzyv\n")
    r = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", q)
    assert r.code == 2 and f"{q}:1" in r.err and "xqzzyv" in r.err
    r = cli("--home", glove_home, "query", "analogy", "--index", "glove", "a", "b", "c", "--method", "cos")
    assert r.code == 2 and "cos" in r.err


def test_cli_bench_writes_run_folder_and_reports_skips(cli, glove_home, tmp_path):
    data = tmp_path / "bats" / "1_Inflectional_morphology"
    data.mkdir(parents=True)
    (data / "I01 [noun - plural_reg].txt").write_text("cat\tcats\ndog\tdogs\r\ncar\tcars\nhouse\thouses\n")
    (data / "I03 [adj - comparative].txt").write_text("good\tbetter\nxqzzyv\txqzzyver\n")
    out = tmp_path / "run"
    r = cli("--home", glove_home, "--quiet", "bench", "analogy", "--words", "glove", "--dataset",
            f"bats:{tmp_path / 'bats'}", "--restrict-vocab", "30000", "--out", out)
    assert r.code == 0, r
    assert "skipped I03 [adj - comparative]: fewer than two usable pairs" in r.out
    for name in ("questions.parquet", "accuracy_relation.md", "accuracy_category.parquet", "coverage.md",
                 "honest_shares.parquet", "decomposition.parquet", "decomposition_means.md",
                 "decomposition_score.png", "decomposition_reference.png", "decomposition_delta_sim.png"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["questions"] == 12 and summary["pairs_dropped"] == 1
    r = cli("--home", glove_home, "bench", "analogy", "--words", "glove", "--dataset", f"bats:{tmp_path}/none",
            "--out", tmp_path / "run-none")
    assert r.code == 2 and "no such" in r.err


def test_listed_questions_are_the_matching_rows_of_the_full_run(glove):
    from lexprobe.analogies.decomposition import decompose_relations
    from lexprobe.sources.datasets.bats import Relation

    pairs = [("boy", ["girl"]), ("brother", ["sister"]), ("king", ["queen"]), ("man", ["woman"])]
    full = run_relations(glove, [Relation("family", "family", "semantic", "-", pairs)], restrict_vocab=30000).table
    listed = Relation("family", "family", "semantic", "-", pairs, questions=[(2, 3), (0, 1), (3, 0)])
    table = run_relations(glove, [listed], restrict_vocab=30000).table
    key = lambda r: (r["a"], r["b"])
    by_question = {key(r): r for r in full.to_pylist()}
    assert [key(r) for r in table.to_pylist()] == [("king", "man"), ("boy", "brother"), ("man", "boy")]
    assert all(r == by_question[key(r)] for r in table.to_pylist())
    assert decompose_relations(glove, [listed]).column("b_star").to_pylist() == ["woman", "sister", "girl"]


def test_wilson_intervals_of_shares_by_hand():
    from lexprobe.analogies.analogy import share_intervals
    from lexprobe.core.intervals import wilson

    # 8/10: centre (0.8 + z^2/20) / (1 + z^2/10) = 0.7167, half-width 0.2266 (z = 1.96)
    assert wilson(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    rows = share_intervals({"b": 0.8, "other": 0.2}, 10)
    assert [(r["returned"], r["count"]) for r in rows] == [("b", 8), ("other", 2)]
    assert (rows[1]["low"], rows[1]["high"]) == pytest.approx((1 - 0.9433, 1 - 0.4902), abs=1e-4)


def test_cli_google_answers_the_files_own_questions_by_default(cli, glove_home, tmp_path):
    q = tmp_path / "q.txt"
    q.write_text(": family\nboy girl brother sister\nboy girl king queen\nbrother sister Man Woman\n")
    counts = {}
    for mode in ("file", "pairs"):
        out = tmp_path / mode
        r = cli("--home", glove_home, "--quiet", "run", "analogy", "--words", "glove", "--dataset", f"google:{q}",
                "--lowercase", "--google-questions", mode, "--restrict-vocab", "30000", "--no-honest", "--out", out)
        assert r.code == 0, r
        counts[mode] = json.loads((out / "summary.json").read_text())["questions"]
    assert counts == {"file": 3, "pairs": 12}  # the file's 3 questions; every ordered pair of its 4 pairs
