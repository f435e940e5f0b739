"""The score decomposition: a hand-computed example, and exact sums on every tuple of real BATS relations."""

from __future__ import annotations

import numpy as np
import pytest

from lexprobe.analogies.decomposition import (DELTA, REFERENCE, TERMS, decompose, decompose_relations,
                                            relation_means)
from lexprobe.kinds.words import WordIndex
from lexprobe.analogies.run_analogies import plot_decomposition
from lexprobe.sources.datasets.analogy_sets import usable_relations
from lexprobe.kinds.words import build_word_index
from lexprobe.sources.datasets.bats import Relation


def test_hand_computed_example():
    a, a_star, b, b_star = (np.array([v], dtype=float) for v in ([1, 0], [1, 1], [0, 2], [1, 2]))
    t = {k: float(v[0]) for k, v in decompose(a, a_star, b, b_star).items()}
    # o_a = (0, 1), o_b = (1, 0), q = b + o_a = (0, 3); |q| = 3, |b*| = sqrt 5, |b| = 2
    r5 = np.sqrt(5)
    assert t["score"] == pytest.approx(6 / (3 * r5))
    assert (t["within"], t["offset"], t["start_offset"]) == pytest.approx((4 / (3 * r5), 0.0, 2 / (3 * r5)))
    assert (t["ref_within"], t["ref_offset"], t["ref_start_offset"]) == pytest.approx((6 / 9, 1 / 9, 2 / 9))
    assert t["delta_sim"] == pytest.approx(6 / (3 * r5) - 1.0)
    assert (t["delta_norm"], t["delta_offset"], t["delta_b_ob"]) == pytest.approx((6 * (1 / r5 - 0.5) / 3, 0.0, 0.0))


@pytest.mark.parametrize("normalize", [False, True])
def test_terms_sum_to_score_on_every_tuple(glove_home, shared_data, normalize, tmp_path):
    words = WordIndex.open("glove", home=glove_home)
    relations, _ = usable_relations(words, f"bats:{shared_data / 'BATS_3.0'}")
    relations = [r for r in relations if r.code in ("I02", "D08", "E04", "L09")]
    table = decompose_relations(words, relations, normalize=normalize)
    assert len(table) == sum(len(r.pairs) * (len(r.pairs) - 1) for r in relations)
    col = lambda c: table.column(c).to_numpy()
    np.testing.assert_allclose(sum(col(c) for c in TERMS), col("score"), atol=1e-9)
    np.testing.assert_allclose(sum(col(c) for c in DELTA), col("delta_sim"), atol=1e-9)
    np.testing.assert_allclose(sum(col(c) for c in REFERENCE), 1.0, atol=1e-9)
    # the score is cos(b - a + a*, b*) on the chosen vectors
    row = table.slice(7, 1).to_pylist()[0]
    vec = lambda w: words.raw[words.word_to_id[w]].astype(float)
    v = {k: vec(row[k]) for k in ("a", "a_star", "b", "b_star")}
    if normalize:
        v = {k: x / np.linalg.norm(x) for k, x in v.items()}
    q = v["b"] + v["a_star"] - v["a"]
    assert row["score"] == pytest.approx(q @ v["b_star"] / np.linalg.norm(q) / np.linalg.norm(v["b_star"]), rel=1e-6)
    if normalize:  # unit vectors: no norm term, and the b-o_b term is (cos(b, b*) - 1) / |q|
        np.testing.assert_allclose(col("delta_norm"), 0.0, atol=1e-6)
        assert row["delta_b_ob"] * np.linalg.norm(q) == pytest.approx(v["b"] @ v["b_star"] - 1.0, abs=1e-6)
    means = relation_means(table)
    assert [m["relation"] for m in means] == [r.name for r in relations]
    # the paper's Figure 1 (word2vec): offset terms positive, within-pair terms larger on average
    assert all(m["offset"] > 0 for m in means)
    assert np.mean([m["within"] for m in means]) > 1.5 * np.mean([m["offset"] for m in means])
    paths = plot_decomposition(means, tmp_path, normalized=normalize)
    assert all(p.stat().st_size > 1000 for p in paths)


# --- The analogy score's decomposition on a hand-made 2-d vocabulary ---

@pytest.fixture(scope="module")
def words(tmp_path_factory):
    root = tmp_path_factory.mktemp("dec")
    (root / "v.txt").write_text("a 2 0\nas 2 1\nb 0 2\nbs -1 2\nc 3 0\ncs 3 3\n")
    build_word_index("w", str(root / "v.txt"), home=root / "home")
    return WordIndex.open("w", home=root / "home")


def test_two_pair_relation_by_hand(words):
    """a=(2,0), a*=(2,1), b=(0,2), b*=(-1,2): o_a=(0,1), o_b=(-1,0), q=b+o_a=(0,3), |q|=3, |b*|=sqrt5."""
    rel = Relation("R01 [two]", "R01", "test", "r.txt", [("a", ["as"]), ("b", ["bs"])])
    one = Relation("R02 [one]", "R02", "test", "r.txt", [("c", ["cs"])])  # one pair: no question
    t = decompose_relations(words, [rel, one]).to_pylist()
    assert [(r["a"], r["a_star"], r["b"], r["b_star"]) for r in t] == [("a", "as", "b", "bs"), ("b", "bs", "a", "as")]
    r = t[0]
    s5 = np.sqrt(5)
    assert r["score"] == pytest.approx(6 / (3 * s5))          # q.b* = 6
    assert r["within"] == pytest.approx(4 / (3 * s5))         # b.b* = 4
    assert r["offset"] == pytest.approx(0.0)                  # o_a.o_b = 0
    assert r["start_offset"] == pytest.approx(2 / (3 * s5))   # o_a.b = 2
    assert (r["ref_within"], r["ref_offset"], r["ref_start_offset"]) == pytest.approx((6 / 9, 1 / 9, 2 / 9))
    assert r["delta_sim"] == pytest.approx(6 / (3 * s5) - 6 / 6)  # cos(q, b) = 6 / (3 * 2)
    assert r["delta_norm"] == pytest.approx(6 * (1 / s5 - 1 / 2) / 3)
    assert r["delta_offset"] == pytest.approx(0.0) and r["delta_b_ob"] == pytest.approx(0.0)  # b.o_b = 0
    unit = decompose_relations(words, [rel], normalize=True).to_pylist()[0]
    assert unit["delta_norm"] == pytest.approx(0.0, abs=1e-6)  # unit vectors: no norm term
    assert decompose_relations(words, [one]).num_rows == 0
