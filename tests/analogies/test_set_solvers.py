"""vecto's solvers (3CosAvg, LRCos, SimilarToAny): hand-computed answers on tiny vector files, the LRCos training
set as vecto builds it, exactness of SimilarToAny's pruned answers on GloVe, accuracy bounds on real BATS
relations that a broken solver fails, and the CLI."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

import lexprobe
from lexprobe.analogies.analogy import accuracy_tables
from lexprobe.analogies.set_solvers import answer_relations, lrcos_models
from lexprobe.kinds.analogy_queries import answer_questions
from lexprobe.kinds.words import WordIndex
from lexprobe.sources.datasets.analogy_sets import usable_relations
from lexprobe.sources.datasets.bats import Relation


def _vectors(folder, rows: dict[str, tuple]) -> WordIndex:
    path = folder / "v.txt"
    dim = len(next(iter(rows.values())))
    path.write_text(f"{len(rows)} {dim}\n" + "".join(f"{w} {' '.join(map(str, v))}\n" for w, v in rows.items()))
    return lexprobe.load_vectors(str(path))


def _relation(name: str, pairs: list[tuple[str, str]]) -> Relation:
    return Relation(name, name, "test", "hand", [(s, [e]) for s, e in pairs])


def _rows(words, relation, method, **kw):
    return answer_relations(words, [relation], method=method, **kw).table.to_pylist()


def test_3cosavg_hand_computed(tmp_path):
    # starts u1, u2, u3; answers (u_i + u4) / sqrt 2; the question b = u3 learns from the other two pairs:
    # q = mean(answers) - mean(starts) + b = (c, c, 1, 1/sqrt 2) with c = 1/(2 sqrt 2) - 1/2 = -0.146447,
    # |q| = sqrt(2 c^2 + 1.5) = 1.242132; cos(q, y3) = (1 + 1/sqrt 2) / sqrt 2 / |q| = 0.971803 (best);
    # cos(q, u4) = 0.569270, cos(q, y1) = 0.319168. Keeping pair 3 in its own means would give 0.985588.
    words = _vectors(tmp_path, {"x1": (1, 0, 0, 0), "x2": (0, 1, 0, 0), "x3": (0, 0, 1, 0), "y1": (1, 0, 0, 1),
                                "y2": (0, 1, 0, 1), "y3": (0, 0, 1, 1), "dir": (0, 0, 0, 1)})
    rows = _rows(words, _relation("R", [("x1", "y1"), ("x2", "y2"), ("x3", "y3")]), "avg", k=3)
    assert [r["b"] for r in rows] == ["x1", "x2", "x3"] and all(r["a"] is None for r in rows)
    assert [r["prediction"] for r in rows] == ["y1", "y2", "y3"]
    assert [r["score"] for r in rows] == pytest.approx([0.971803] * 3, abs=2e-6)
    assert rows[2]["top_k"] == ["y3", "dir", "y1"]  # y1 and y2 tie (0.319168): the lower id first
    assert all(r["rank"] == 1 and r["correct"] for r in rows)
    # only b is excluded: with nothing excluded (the honest test) b = x3 scores 1 / |q| = 0.805068, below y3
    honest = answer_relations(words, [_relation("R", [("x1", "y1"), ("x2", "y2"), ("x3", "y3")])], method="avg",
                           k=3, honest=True).table.to_pylist()
    assert honest[2]["top_k"] == ["y3", "x3", "dir"]


def test_similar_to_any_hand_computed(tmp_path):
    # unit vectors at angles: a 0, a* 90, b 180, b* 270, c1 100, c2 200, c3 45 degrees. a:a*::b:? excludes a, a*, b;
    # c1 scores max(cos 100, cos 10, cos 80) = cos 10 = 0.984808; b* scores max(cos 270, cos 180, cos 90) = 0,
    # below c1, c2 (cos 20 = 0.939693) and c3 (cos 45 = 0.707107): rank 4. b:b*::a:? gives c2 (cos 20).
    angle = lambda d: (np.cos(np.radians(d)), np.sin(np.radians(d)))
    words = _vectors(tmp_path, {w: angle(d) for w, d in
                                [("a", 0), ("as", 90), ("b", 180), ("bs", 270), ("c1", 100), ("c2", 200), ("c3", 45)]})
    rows = _rows(words, _relation("R", [("a", "as"), ("b", "bs")]), "simany", k=2)
    assert [(r["a"], r["b"], r["prediction"], r["rank"]) for r in rows] == [("a", "b", "c1", 4), ("b", "a", "c2", 4)]
    assert [r["score"] for r in rows] == pytest.approx([0.984808, 0.939693], abs=2e-6)
    assert rows[0]["top_k"] == ["c1", "c2"]
    D, I = answer_questions(words, words.ids(["a"]), words.ids(["as"]), words.ids(["b"]), method="simany", k=1)
    assert words.words[I[0, 0]] == "c1" and D[0, 0] == pytest.approx(0.984808, abs=2e-6)
    honest = _rows(words, _relation("R", [("a", "as"), ("b", "bs")]), "simany", honest=True)
    # nothing excluded: every input scores 1 (its cosine with itself), the inputs fill the top
    assert [r["prediction"] in {r["a"], r["a_star"], r["b"]} for r in honest] == [True, True]


def _lrcos_words(tmp_path):
    # four pairs: starts on the u1-u2 plane at 0, 90, 180, 270 degrees, answers the same plus u3 (normalised);
    # the distractor "near" is the closest word to the start s0 (cos 0.95) but has no u3 part
    rows = {}
    for k, deg in enumerate((0, 90, 180, 270)):
        c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
        rows[f"s{k}"], rows[f"t{k}"] = (c, s, 0.0), (c, s, 1.0)
    rows["near"] = (0.95, np.sqrt(1 - 0.95 ** 2), 0.0)
    return _vectors(tmp_path, rows)


def test_lrcos_training_set_is_vectos():
    # pair j's classifier: positives the other pairs' answers, negatives their starts four times and one random
    # word per start; the fit equals scikit-learn's on that set listed by hand (any order)
    rng = np.random.default_rng(1)
    S, E = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    noise = rng.normal(size=(3, 5))
    W, c = lrcos_models(S, E, lambda m: noise[:m])
    for j in range(4):
        o = [i for i in range(4) if i != j]
        X = np.concatenate([S[o][[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]], noise, E[o]])
        y = np.r_[np.zeros(15), np.ones(3)]
        ref = LogisticRegression(solver="liblinear", class_weight="balanced", C=1.0, random_state=0).fit(X, y)
        assert W[j] == pytest.approx(ref.coef_[0], abs=1e-3) and c[j] == pytest.approx(ref.intercept_[0], abs=1e-3)


def test_lrcos_hand_computed(tmp_path):
    # the nearest word to s0 is "near" (cos 0.95), a negative; LRCos answers t0 (cos 1/sqrt 2 with s0) because
    # the classifier of the target class (the u3 part) gives it the higher probability: score = P(x) cos(x, b)
    words = _lrcos_words(tmp_path)
    rel = _relation("L", [(f"s{k}", f"t{k}") for k in range(4)])
    rows = _rows(words, rel, "lrcos", k=2)
    assert [r["prediction"] for r in rows] == ["t0", "t1", "t2", "t3"] and all(r["rank"] == 1 for r in rows)
    assert rows[0]["top_k"][1] == "near"
    # the score, from the same classifier (noise: the documented seeded draws, one per other start word)
    unit = words.unit
    rng = np.random.default_rng([0, zlib.crc32(b"L")])
    S, E = unit[words.ids([f"s{k}" for k in range(4)])], unit[words.ids([f"t{k}" for k in range(4)])]
    W, c = lrcos_models(S, E, lambda m: unit[rng.integers(0, len(unit), size=m)])
    t0, near = unit[words.ids(["t0", "near"])]
    assert rows[0]["score"] == pytest.approx(expit(W[0] @ t0 + c[0]) * 0.5 ** 0.5, abs=1e-5)
    assert expit(W[0] @ near + c[0]) * 0.95 < rows[0]["score"]


def test_similar_to_any_pruned_equals_whole_rows(glove, bats):
    # the candidates from each row's top list give the same answers and ranks as scoring every word (within the
    # 50,000 most frequent), both for golds inside the candidates and for the ones counted on whole rows
    V = 50_000
    rel = Relation(**{**bats["I07"].__dict__, "pairs": bats["I07"].pairs[:10]})
    rows = answer_relations(glove, [rel], method="simany", k=3, restrict_vocab=V).table
    n = len(rel.pairs)
    ids = np.concatenate([glove.ids(rel.starts), glove.ids(rel.ends)])
    P = glove.unit[ids] @ glove.unit[:V].T
    ii, jj = rel.question_index()
    top, ranks = [], []
    for i, j in zip(ii, jj):
        R = np.maximum(np.maximum(P[i], P[n + i]), P[j])
        R[[ids[i], ids[n + i], ids[j]]] = -np.inf
        top.append([glove.words[x] for x in np.lexsort((np.arange(V), -R))[:3]])
        ranks.append(1 + int((R > R[ids[n + j]]).sum()) if ids[n + j] < V else -1)
    assert rows.column("top_k").to_pylist() == top
    assert rows.column("rank").to_pylist() == ranks
    assert max(ranks) > 300 and min(ranks) < 30  # both ways of counting were used


def test_bats_accuracy_bounds(glove, bats):
    # I01 (regular plurals): 3CosAvg 0.78 and LRCos 0.56 of 50 pairs against 3CosAdd's 0.571 of 2,450 questions;
    # SimilarToAny, which ignores the offset, 0.219; E01 (country - capital): 3CosAvg 0.84, LRCos 0.80
    acc = lambda method, code: accuracy_tables(answer_relations(glove, [bats[code]], method=method).table)[0][0]
    add, avg, lrcos, simany = (acc(m, "I01") for m in ("add", "avg", "lrcos", "simany"))
    assert avg["questions"] == lrcos["questions"] == 50 and simany["questions"] == add["questions"] == 2450
    assert avg["accuracy"] > add["accuracy"] + 0.1
    assert 0.4 < lrcos["accuracy"] and 0.1 < simany["accuracy"] < add["accuracy"] - 0.2
    assert acc("avg", "E01")["accuracy"] > 0.7 and acc("lrcos", "E01")["accuracy"] > 0.7


def test_cli_methods(cli, glove_home, shared_data, tmp_path):
    # a four-column file's section is a relation of its distinct pairs: Google's first section has 23 pairs
    lines = (shared_data / "google_analogy" / "questions-words.txt").read_text().splitlines()
    section = lines[: next(i for i, line in enumerate(lines) if i and line.startswith(":"))]
    path = tmp_path / "q.txt"
    path.write_text("\n".join(section) + "\n")
    out = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", path, "--method", "avg",
              "--case-insensitive", "--format", "json")
    assert out.code == 0, out
    first, total = json.loads(out.out)
    assert (first["section"], first["questions"], first["oov"], first["answered"]) == ("capital-common-countries",
                                                                                        23, 0, 23)
    assert total["section"] == "total" and first["accuracy"] > 0.8
    vecto = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", path, "--method",
                "3CosAvg", "--case-insensitive", "--format", "json")  # vecto's name of avg
    assert vecto.code == 0 and json.loads(vecto.out) == [first, total], vecto
    one = cli("--home", glove_home, "query", "analogy", "--index", "glove", "man", "king", "woman", "--method",
              "simany", "-k", 1, "--format", "json")
    # the word nearest to any input: girl (cosine 0.907 with woman), above prince (0.824 with king)
    assert json.loads(one.out)[0]["word"] == "girl"
    refused = cli("--home", glove_home, "query", "analogy", "--index", "glove", "man", "king", "woman", "--method",
                  "lrcos")
    assert refused.code == 2 and "four-column --questions file" in refused.err and "Traceback" not in refused.err
    bats = f"bats:{shared_data / 'BATS_3.0' / '3_Encyclopedic_semantics' / 'E01 [country - capital].txt'}"
    run = cli("--home", glove_home, "run", "analogy", "--words", "glove", "--dataset", bats, "--method", "lrcos",
              "--out", tmp_path / "run")
    assert run.code == 0, run
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["method"] == "lrcos" and summary["questions"] == 50 and summary["accuracy"] > 0.7
    assert summary["seed"] == 0
    # --seed reaches LRCos's random negatives: the questions equal analogy_test's with the same seed
    import pyarrow.parquet as pq

    from lexprobe.analogies.analogy_evaluation import analogy_test

    again = cli("--home", glove_home, "run", "analogy", "--words", "glove", "--dataset", bats, "--method", "lrcos",
                "--seed", 7, "--out", tmp_path / "run7")
    assert again.code == 0, again
    words = WordIndex.open("glove", home=glove_home)
    relations, coverage = usable_relations(words, bats)
    scores = {}
    for seed, folder in ((0, "run"), (7, "run7")):
        expected = analogy_test(words, relations, coverage, method="lrcos", seed=seed).questions
        got = pq.read_table(tmp_path / folder / "questions.parquet")
        assert got.column("prediction").to_pylist() == expected.column("prediction").to_pylist()
        assert np.allclose(got.column("score").to_numpy(), expected.column("score").to_numpy(), atol=1e-6)
        scores[seed] = got.column("score").to_numpy()
    assert not np.allclose(scores[0], scores[7])  # other negatives, other probabilities


def test_vecto_exclusion_leaves_out_as_other_answers(tmp_path):
    # unit vectors at angles (degrees): a 0 with answers a* 90 and alt 91, b 10 with b* 130, other 97. For
    # a:a*::b:? the 3CosAdd query u(10) - u(0) + u(90) points at 90.7 degrees: alt (0.3 off) is the usual answer;
    # vecto also leaves out alt (a's other answer), so other (6.3 off) answers. The reference scores every word.
    angle = lambda d: np.array([np.cos(np.radians(d)), np.sin(np.radians(d))])
    placed = {"a": 0, "as": 90, "alt": 91, "b": 10, "bs": 130, "other": 97}
    words = _vectors(tmp_path, {w: tuple(angle(d)) for w, d in placed.items()})
    relation = Relation("R", "R", "test", "hand", [("a", ["as", "alt"]), ("b", ["bs"])])

    def reference(a, a_star, b, excluded):
        q = angle(placed[b]) - angle(placed[a]) + angle(placed[a_star])
        return max((w for w in placed if w not in excluded), key=lambda w: angle(placed[w]) @ q)

    usual = _rows(words, relation, "add")
    vecto = _rows(words, relation, "add", exclude="vecto")
    assert [r["prediction"] for r in usual] == [reference("a", "as", "b", {"a", "as", "b"}),
                                                reference("b", "bs", "a", {"b", "bs", "a"})]
    assert [r["prediction"] for r in vecto] == [reference("a", "as", "b", {"a", "as", "alt", "b"}),
                                                reference("b", "bs", "a", {"b", "bs", "a"})]
    assert usual[0]["prediction"] == "alt" and vecto[0]["prediction"] == "other"  # the rule changes this answer
    # gold ranks: b* (130) below other, and alt too under the usual rule; b:b*::a:? has other above alt
    assert [r["rank"] for r in usual] == [3, 2] and [r["rank"] for r in vecto] == [2, 2]
    assert _rows(words, relation, "3CosAdd", exclude="vecto") == vecto  # vecto's name of the method
    with pytest.raises(lexprobe.LexprobeError, match="unknown exclusion"):
        _rows(words, relation, "add", exclude="everything")
    with pytest.raises(lexprobe.LexprobeError, match="not mul"):
        _rows(words, relation, "mul", exclude="vecto")


def test_vecto_method_names_are_accepted(tmp_path):
    from lexprobe.kinds.analogy_queries import check_method, method_name

    assert [method_name(m) for m in ("3CosAvg", "3cosavg", "LRCos", "SimilarToAny", "3CosAdd", "3CosMul",
                                     "PairDistance", "add")] == ["avg", "avg", "lrcos", "simany", "add", "mul",
                                                                 "pairdir", "add"]
    with pytest.raises(lexprobe.LexprobeError, match="unknown analogy method '3CosSub'"):
        check_method("3CosSub")


def test_seed_interval_by_hand():
    from lexprobe.analogies.set_solvers import seed_interval

    # values 0.5, 0.6, 0.7: mean 0.6, sd 0.1, t(0.975, 2) = 4.302653: half width 4.302653 * 0.1 / sqrt 3 = 0.248414
    assert seed_interval(np.array([0.5, 0.6, 0.7])) == pytest.approx((0.6 - 0.248414, 0.6 + 0.248414), abs=1e-6)
    assert seed_interval(np.array([0.4])) == (0.4, 0.4)


def test_lrcos_over_seeds_spreads_the_seeds(tmp_path):
    from lexprobe.analogies.set_solvers import lrcos_over_seeds

    words = _lrcos_words(tmp_path)
    relation = _relation("L", [(f"s{k}", f"t{k}") for k in range(4)])
    spread = lrcos_over_seeds(words, [relation], seeds=3, seed=4)
    singles = [np.mean([r["correct"] for r in _rows(words, relation, "lrcos", seed=s, ranks=False)]) for s in (4, 5, 6)]
    assert spread.seeds == [4, 5, 6] and spread.accuracies.tolist() == pytest.approx(singles)
    assert spread.mean == pytest.approx(np.mean(singles))
    assert spread.interval[0] <= spread.mean <= spread.interval[1]
    assert spread.to_arrow().column("accuracy").to_pylist() == pytest.approx(singles)
    assert 0 <= spread.agreement <= 1 and spread.questions == len(relation.pairs)


def test_cli_lrcos_reports_the_seeds_mean_and_interval(cli, glove_home, shared_data, tmp_path):
    from lexprobe.analogies.set_solvers import pair_section_accuracy, seed_interval

    lines = (shared_data / "google_analogy" / "questions-words.txt").read_text().splitlines()
    section = lines[: next(i for i, line in enumerate(lines) if i and line.startswith(":"))]
    path = tmp_path / "q.txt"
    path.write_text("\n".join(section) + "\n")
    out = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", path, "--method",
              "LRCos", "--seeds", 3, "--seed", 2, "--restrict-vocab", 50000, "--case-insensitive", "--format", "json")
    assert out.code == 0, out
    first, total = json.loads(out.out)
    glove = WordIndex.open("glove", home=glove_home)
    shares = [pair_section_accuracy(glove, path, method="lrcos", restrict_vocab=50000, case_insensitive=True,
                                    seed=s)[0]["accuracy"] for s in (2, 3, 4)]
    assert first["seeds"] == 3 and first["accuracy"] == pytest.approx(np.mean(shares))
    assert (first["accuracy_low"], first["accuracy_high"]) == pytest.approx(seed_interval(np.array(shares)))
