"""OCS, AUC and PCS (lexprobe.analogies.offset_consistency): hand-computed examples, shuffle constraints, synthetic geometry,
and ``query offsets`` on the packaged GloVe and the real BATS."""

import json
from itertools import permutations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lexprobe.analogies import offset_consistency as off
from lexprobe.core.errors import LexprobeError
from lexprobe.analogies.offset_consistency import auc, forbidden_pairings, ocs, offset_scores, pairwise_similarities, shuffles
from types import SimpleNamespace
from lexprobe.analogies.offset_consistency import PairSet, missing_shuffles, relation_sets, stored_shuffle_units
from lexprobe.core.seeds import rng_for

BATS_I01 = "1_Inflectional_morphology/I01 [noun - plural_reg].txt"


def test_auc_hand_example_with_ties():
    # positives 0.1 0.4 0.4 0.8; negatives 0.4 0.2 0.8:
    # vs 0.4: one positive above, two tied -> 1 + 2 * 0.5 = 2; vs 0.2: three above -> 3;
    # vs 0.8: none above, one tied -> 0.5. AUC = 5.5 / (4 * 3).
    assert auc([0.1, 0.4, 0.4, 0.8], [0.4, 0.2, 0.8]) == pytest.approx(5.5 / 12)
    # one call scores several negative sets against the same positives
    np.testing.assert_allclose(auc([0.1, 0.4, 0.4, 0.8], [[0.4, 0.2, 0.8], [0.9, 0.9, 0.9], [0.4, 0.4, 0.4]]),
                               [5.5 / 12, 0.0, 6 / 12])
    assert auc([1.0, 2.0], [0.0, 0.5]) == 1.0
    with pytest.raises(LexprobeError):
        auc([], [1.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=30), st.lists(st.integers(0, 5), min_size=1, max_size=30))
def test_auc_equals_brute_force_mann_whitney(pos, neg):
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    assert auc(pos, neg) == pytest.approx(wins / (len(pos) * len(neg)))


def test_ocs_is_mean_of_upper_triangle_by_hand():
    unit = np.array([[1.0, 0.0], [0.0, 1.0], [np.sqrt(0.5), np.sqrt(0.5)]])
    # o1.o2 = 0, o1.o3 = o2.o3 = sqrt(0.5)
    np.testing.assert_allclose(pairwise_similarities(unit), [0.0, np.sqrt(0.5), np.sqrt(0.5)])
    assert ocs(unit) == pytest.approx(2 * np.sqrt(0.5) / 3)


def _valid(perm, starts, ends):
    n = len(starts)
    true = set(zip(starts.tolist(), ends.tolist()))
    return all(perm[i] != i and (starts[i], ends[perm[i]]) not in true and ends[perm[i]] != starts[i]
               and ends[perm[i]] != ends[i] for i in range(n))


def test_every_shuffle_is_a_derangement_without_true_pairs_or_zero_offsets():
    # lexicographic-like set: repeated ends (5 x 0) and starts that are other pairs' ends
    starts = np.array([10, 11, 12, 13, 14, 30, 1, 2, 3, 4, 20, 21])
    ends = np.array([0, 0, 0, 0, 0, 5, 6, 10, 11, 12, 1, 2])
    perms = shuffles(starts, ends, 200, np.random.default_rng(3))
    assert perms.shape == (200, len(starts))
    assert (np.sort(perms, axis=1) == np.arange(len(starts))).all()
    assert all(_valid(p, starts, ends) for p in perms)
    assert len({tuple(p) for p in perms}) > 150  # random, not one repeated answer
    # impossible: 7 x end 0 but only 6 starts that may take a 0 (start 0 would make a zero offset)
    with pytest.raises(LexprobeError, match="no shuffle exists"):
        shuffles(np.array([10, 11, 12, 13, 14, 15, 16, 0, 1, 2, 3, 4, 20, 21]),
                 np.array([0, 0, 0, 0, 0, 0, 0, 5, 6, 10, 11, 12, 1, 2]), 5, np.random.default_rng(0))


def test_hard_relation_falls_back_to_chains_and_stays_valid():
    # E09-like: 13 x white, 10 x green, 10 x black, 9 x red, ... -- valid derangements are rare
    ends = np.array([1] * 13 + [2] * 10 + [3] * 10 + [4] * 9 + [5] * 5 + [6, 7, 8])
    starts = np.arange(100, 150)
    perms = shuffles(starts, ends, 50, np.random.default_rng(0))
    assert all(_valid(p, starts, ends) for p in perms) and len({tuple(p) for p in perms}) == 50


def test_chain_sampler_is_close_to_uniform(monkeypatch):
    monkeypatch.setattr(off, "REJECTION_DRAWS", 0)  # force the matching + transposition chains
    starts, ends = np.arange(10, 15), np.arange(5)
    perms = shuffles(starts, ends, 8800, np.random.default_rng(1))
    valid = [p for p in permutations(range(5)) if all(p[i] != i for i in range(5))]  # 44 derangements
    counts = {p: 0 for p in valid}
    for p in map(tuple, perms):
        counts[p] += 1  # KeyError if a non-derangement came out
    assert min(counts.values()) > 140 and max(counts.values()) < 260  # expected 200 each


def test_impossible_shuffle_is_a_clear_error():
    with pytest.raises(LexprobeError, match="no shuffle exists"):
        shuffles(np.arange(10, 16), np.array([1, 1, 1, 1, 2, 3]), 5, np.random.default_rng(0), what="X01")


def _synthetic(n, d, rng, parallel):
    starts = rng.standard_normal((n, d))
    direction = rng.standard_normal(d)
    ends = starts + (direction + 0.1 * rng.standard_normal((n, d)) if parallel else rng.standard_normal((n, d)))
    vectors = np.concatenate([starts, ends]).astype(np.float32)
    return vectors, np.arange(n), np.arange(n, 2 * n)


def test_parallel_offsets_give_pcs_near_one():
    vectors, s, e = _synthetic(50, 100, np.random.default_rng(0), parallel=True)
    r = offset_scores(vectors, s, e, n_shuffles=30, rng=np.random.default_rng(0))
    assert r.ocs > 0.9 and r.pcs > 0.97 and r.n_pairs == 50 and len(r.aucs) == 30


def test_random_offsets_give_ocs_near_zero_and_pcs_near_half():
    vectors, s, e = _synthetic(50, 300, np.random.default_rng(1), parallel=False)
    r = offset_scores(vectors, s, e, n_shuffles=50, rng=np.random.default_rng(1))
    assert abs(r.ocs) < 0.02 and abs(r.pcs - 0.5) < 0.04


def test_same_seed_same_numbers():
    vectors, s, e = _synthetic(30, 20, np.random.default_rng(2), parallel=False)
    a = offset_scores(vectors, s, e, n_shuffles=10, rng=np.random.default_rng(7))
    b = offset_scores(vectors, s, e, n_shuffles=10, rng=np.random.default_rng(7))
    assert a.pcs == b.pcs and (a.permutations == b.permutations).all()


def test_forbidden_pairings_marks_true_pairs_and_zero_offsets():
    f = forbidden_pairings(np.array([1, 2, 3]), np.array([9, 9, 1]))
    # start 1 may not get 9 (its true end) nor 1 (zero offset); start 2 may not get 9; start 3 may not get 1
    assert f.tolist() == [[True, True, True], [True, True, False], [False, False, True]]


# ------------------------------------------------------------------------------ real data, CLI


def test_query_offsets_i01_on_glove_matches_independent_numbers(cli, glove_home, shared_data):
    r = cli("--home", glove_home, "query", "offsets", "--index", "glove", "--relation", "I01",
            "--dataset", f"bats:{shared_data / 'BATS_3.0'}", "--format", "json")
    assert r.code == 0, r
    row = json.loads(r.out)[0]
    assert row["relation"] == "I01 [noun - plural_reg]" and row["n_pairs"] == 50
    assert row["ocs"] == pytest.approx(0.276, abs=0.002)
    assert row["pcs"] == pytest.approx(0.787, abs=0.02)


def test_query_offsets_pair_file_and_errors(cli, glove_home, shared_data, tmp_path):
    lines = (shared_data / "BATS_3.0" / BATS_I01).read_text().splitlines()[:20]
    pairs = tmp_path / "plurals.txt"
    pairs.write_text("# my pairs\n" + "\n".join(f"{a} {b.split('/')[0]}" for a, b in (l.split("\t") for l in lines)))
    r = cli("--home", glove_home, "query", "offsets", "--index", "glove", "--pairs", pairs, "--shuffles", "20",
            "--format", "json")
    assert r.code == 0, r
    row = json.loads(r.out)[0]
    assert row["n_pairs"] == 20 and row["pcs"] > 0.6 and 0.1 < row["ocs"] < 0.5

    bad = tmp_path / "bad.txt"
    bad.write_text("cat cats\ndog dogs extra\n")
    r = cli("--home", glove_home, "query", "offsets", "--index", "glove", "--pairs", bad)
    assert r.code == 2 and f"{bad}:2:" in r.err and "Traceback" not in r.err
    bad.write_text("cat cats\nqqxyzzy dogs\n")
    r = cli("--home", glove_home, "query", "offsets", "--index", "glove", "--pairs", bad)
    assert r.code == 2 and f"{bad}:2:" in r.err and "qqxyzzy" in r.err
    r = cli("--home", glove_home, "query", "offsets", "--index", "glove", "--relation", "Z99",
            "--dataset", f"bats:{shared_data / 'BATS_3.0'}")
    assert r.code == 2 and "Z99" in r.err and "I01" in r.err
    r = cli("--home", glove_home, "query", "offsets", "--index", "glove")
    assert r.code == 2 and "--pairs" in r.err


# --- The offsets index glue by hand: true pair sets, missing shuffles and their read-back (mutation testing, ---

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
