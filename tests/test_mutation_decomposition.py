"""The analogy score's decomposition on a hand-made 2-d vocabulary and Figure 1's claims at their boundaries
(mutation testing, issue 20)."""

from __future__ import annotations

import numpy as np
import pytest

from lexprobe.analogies.decomposition import decompose_relations, figure1_claims
from lexprobe.kinds.words import WordIndex, build_word_index
from lexprobe.sources.datasets.bats import Relation


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


def test_figure1_claims_at_their_boundaries():
    means = [{"relation": "A [eq]", "within": 0.3, "offset": 0.3, "start_offset": 0.1},   # offset == within
             {"relation": "B [zero]", "within": 0.0, "offset": 0.0, "start_offset": -0.5},  # both zero
             {"relation": "C [neg]", "within": -0.2, "offset": 0.1, "start_offset": -0.4}]  # within < 0
    claims = figure1_claims(means)
    assert [c["holding"] for c in claims] == [1, 2, 0]
    assert [c["exceptions"] for c in claims] == ["B +0.0000/-0.5000, C -0.2000/-0.4000", "B +0.0000",
                                                 "A +0.3000/+0.3000, B +0.0000/+0.0000, C +0.1000/-0.2000"]
