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
