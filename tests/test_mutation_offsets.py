"""The offsets index glue by hand: true pair sets, missing shuffles and their read-back (mutation testing,
issue 20)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from lexprobe.analogies.offset_consistency import PairSet, missing_shuffles, ocs, relation_sets, stored_shuffle_units
from lexprobe.core.seeds import rng_for
from lexprobe.core.errors import LexprobeError


def test_seed_and_pair_count_errors():
    with pytest.raises(LexprobeError, match="seed must be >= 0, got -1"):
        rng_for(-1)
    assert rng_for(0, "x").integers(1 << 30) == rng_for(0, "x").integers(1 << 30)
    with pytest.raises(LexprobeError, match="OCS needs at least 2 pairs, got 1"):
        ocs(np.ones((1, 3)))


def test_relation_sets_in_index_order_without_zero_offsets():
    rows = SimpleNamespace(relation=np.array(["r2", "r1", "r2", "r1", "r3"], dtype=object),
                           category=np.array(["c2", "c1", "c2", "c1", "c3"], dtype=object),
                           start_id=np.array([1, 2, 3, 4, 5]), end_id=np.array([6, 7, 3, 8, 5]))
    sets = relation_sets(rows)
    assert [(s.relation, s.category, s.start_ids.tolist(), s.end_ids.tolist()) for s in sets] == [
        ("r2", "c2", [1], [6]), ("r1", "c1", [2, 4], [7, 8]), ("r3", "", [], [])]


def test_missing_shuffles_and_their_read_back():
    words = SimpleNamespace(raw=np.arange(40, dtype=np.float32).reshape(10, 4) ** 1.5,
                            words=[f"w{i}" for i in range(10)])
    rel = PairSet("r", "c", np.array([0, 1, 2, 3]), np.array([4, 5, 6, 7]))
    lone = PairSet("one", "c", np.array([8]), np.array([9]))
    stored = SimpleNamespace(relation=np.array(["r", "r", "r"], dtype=object), seed=np.array([5, 5, 6]),
                             replicate=np.array([0, 2, 1]))
    t = missing_shuffles(words, [rel, lone], stored, 4, seed=5)  # seed 5 holds shuffles 0 and 2
    assert t.column("replicate").to_pylist() == [1] * 4 + [3] * 4
    assert t.column("start_id").to_pylist() == [0, 1, 2, 3] * 2
    for r in range(2):
        ends = t.column("end_id").to_pylist()[4 * r: 4 * r + 4]
        assert sorted(ends) == [4, 5, 6, 7] and all(e != 4 + i for i, e in enumerate(ends))  # no true pair kept
    assert set(t.column("relation").to_pylist()) == {"r"} and set(t.column("seed").to_pylist()) == {5}
    full = SimpleNamespace(relation=np.array(["r"] * 4, dtype=object), seed=np.full(4, 5), replicate=np.arange(4))
    assert missing_shuffles(words, [rel, lone], full, 4, seed=5) is None
    # read back: rows ordered by (replicate, id), reshaped (shuffles, pairs, d)
    unit = np.eye(4)[[0, 1, 2, 3, 3, 2, 1, 0]]
    back = SimpleNamespace(relation=np.array(["r"] * 8 + ["q"], dtype=object), seed=np.array([5] * 8 + [5]),
                           replicate=np.array([1, 1, 1, 1, 0, 0, 0, 0, 0]), id=np.array([4, 5, 6, 7, 0, 1, 2, 3, 9]),
                           unit=np.vstack([unit, np.ones((1, 4))]))
    got = stored_shuffle_units(SimpleNamespace(name="ix"), "r", 4, 2, 5, stored=back)
    assert got.shape == (2, 4, 4)
    assert (got[0] == np.eye(4)[[3, 2, 1, 0]]).all() and (got[1] == np.eye(4)).all()
    with pytest.raises(LexprobeError, match="holds 8 shuffled offsets for seed 5, expected 3 x 4"):
        stored_shuffle_units(SimpleNamespace(name="ix"), "r", 4, 3, 5, stored=back)


def test_two_pair_relations_are_shuffled_and_score_pairs_defaults():
    from lexprobe.analogies.offset_consistency import score_pairs

    words = SimpleNamespace(raw=np.random.default_rng(0).normal(size=(10, 4)), words=[f"w{i}" for i in range(10)])
    empty = SimpleNamespace(relation=np.array([], dtype=object), seed=np.array([], int), replicate=np.array([], int))
    t = missing_shuffles(words, [PairSet("two", "c", np.array([0, 1]), np.array([2, 3]))], empty, 3, seed=0)
    assert t.column("end_id").to_pylist() == [3, 2] * 3  # the one shuffle of two pairs: the swap
    s = score_pairs(words, "r", np.array([0, 1, 2, 3, 4]), np.array([5, 6, 7, 8, 4]))  # (4, 4) is a zero offset
    assert s.n_pairs == 4 and s.aucs.shape == (50,) and s.permutations.shape == (50, 4)  # 50 shuffles by default
    with pytest.raises(LexprobeError, match="r: 2 usable pairs; OCS and PCS need at least 3"):
        score_pairs(words, "r", np.array([0, 1, 2]), np.array([5, 6, 2]))


def test_unit_offsets_any_shape_and_relation_offsets_words_in():
    from lexprobe.analogies.offset_consistency import relation_offsets, score_pairs, unit_offsets

    vectors = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0], [4.0, 3.0]])
    raw, unit = unit_offsets(vectors, np.array([[0, 0], [1, 2]]), np.array([[1, 2], [3, 3]]))  # (2, 2) pairs
    assert raw.tolist() == [[[1, 0], [0, 3]], [[3, 3], [4, 0]]]
    np.testing.assert_allclose(unit, [[[1, 0], [0, 1]], [[2 ** -0.5, 2 ** -0.5], [1, 0]]])  # norms on the last axis
    with pytest.raises(LexprobeError, match="an offset is zero"):
        unit_offsets(vectors, np.array([1]), np.array([1]))
    words = SimpleNamespace(raw=np.random.default_rng(1).normal(size=(8, 3)),
                            ids=lambda ws: np.array([int(w[1:]) for w in ws]))
    pairs = [("w0", "w4"), ("w1", "w5"), ("w2", "w6"), ("w3", "w7")]
    s = relation_offsets(words, pairs, name="r", n_shuffles=5, seed=2)
    t = score_pairs(words, "r", np.array([0, 1, 2, 3]), np.array([4, 5, 6, 7]), n_shuffles=5, seed=2)
    assert s.n_pairs == 4 and (s.ocs, s.pcs) == (t.ocs, t.pcs) and (s.permutations == t.permutations).all()
    d = relation_offsets(words, pairs, name="r", n_shuffles=5)  # seed 0 by default
    z = score_pairs(words, "r", np.array([0, 1, 2, 3]), np.array([4, 5, 6, 7]), n_shuffles=5, seed=0)
    assert (d.permutations == z.permutations).all()
    assert score_pairs(words, "r", np.array([0, 1, 2]), np.array([4, 5, 6]), n_shuffles=5).n_pairs == 3  # 3: enough


def test_offset_scores_default_fifty_shuffles():
    from lexprobe.analogies.offset_consistency import offset_scores

    s = offset_scores(np.random.default_rng(3).normal(size=(8, 3)), np.array([0, 1, 2]), np.array([4, 5, 6]),
                      rng=rng_for(0))
    assert s.aucs.shape == (50,)


def test_forbidden_pairings_equal_brute_force():
    from lexprobe.analogies.offset_consistency import forbidden_pairings

    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(2, 6))
        s, e = rng.integers(0, 5, n), rng.integers(0, 5, n)
        pairs = set(zip(s.tolist(), e.tolist()))
        want = [[i == j or (int(s[i]), int(e[j])) in pairs or e[j] == s[i] for j in range(n)] for i in range(n)]
        assert forbidden_pairings(s, e).tolist() == want, (s, e)


def test_auc_needs_both_sides_and_takes_zero_sets():
    from lexprobe.analogies.offset_consistency import auc

    assert auc(np.array([0.1, 0.5]), np.zeros((0, 4))).shape == (0,)  # no shuffled set: no AUC, no error
    for neg in (np.zeros((3, 0)), np.zeros(0)):
        with pytest.raises(LexprobeError, match="at least one positive and one negative"):
            auc(np.array([0.1, 0.5]), neg)
    with pytest.raises(LexprobeError):
        auc(np.zeros(0), np.array([0.2]))


def test_matching_finds_a_permutation_inside_allowed_or_says_none_exists():
    import itertools

    from lexprobe.analogies.offset_consistency import _matching

    rng = np.random.default_rng(5)
    for _ in range(150):
        n = int(rng.integers(2, 6))
        allowed = rng.random((n, n)) < 0.45
        exists = any(all(allowed[i, p[i]] for i in range(n)) for p in itertools.permutations(range(n)))
        if exists:
            perm = _matching(allowed, rng, "s")
            assert sorted(perm.tolist()) == list(range(n)) and all(allowed[i, perm[i]] for i in range(n))
        else:
            with pytest.raises(LexprobeError, match="s: no shuffle exists"):
                _matching(allowed, rng, "s")


def test_pair_file_ids_uses_the_rows_given(tmp_path):
    from lexprobe.analogies.offset_consistency import pair_file_ids

    words = SimpleNamespace(ids=lambda ws, source=None: np.array([int(w[1:]) for w in ws]),
                            word_to_id={f"w{i}": i for i in range(6)})
    starts, ends = pair_file_ids(words, tmp_path / "not-read.txt", rows=[("w1", "w4", 1), ("w2", "w5", 2)])
    assert starts.tolist() == [1, 2] and ends.tolist() == [4, 5]
