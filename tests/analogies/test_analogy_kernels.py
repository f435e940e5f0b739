"""The analogy kernels against a brute-force reference on a small clustered vocabulary (mutation testing).

The vocabulary is built so that the question words are among each other's nearest neighbours (clusters of
close words): leaving any of a, a*, b out of the excluded set, or scoring with a wrong sign, changes the top-k.
The reference scores every word from the index's vectors normalised in float64, with no pruning and no shared
helpers; the float32 kernels may order two words differently only where their reference scores lie within float32
rounding of each other (tests/topk_ties.py), which a wrong exclusion, sign or cut never does here.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lexprobe.analogies import analogy
from lexprobe.analogies.analogy import accuracy_tables, honest_shares, share_intervals, solve_relation
from lexprobe.kinds.analogy_queries import answer_questions, excluded_cells, topk_rows
from lexprobe.kinds.words import WordIndex, build_word_index
from topk_ties import add_error, assert_rank_agrees, assert_topk_agrees, dot_error, mul_error, pairdir_error, unit_error

DIM, CLUSTERS, PER = 16, 400, 10  # 4,000 words: above the kernel's 2,048 candidates, so pruning is exercised
EPS = 1e-3
G = float(dot_error(DIM, inputs=unit_error(DIM)))  # a float32 cosine's error: float32-normalised or rounded inputs


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(CLUSTERS, DIM))
    X = (centres[:, None, :] + 0.35 * rng.normal(size=(CLUSTERS, PER, DIM))).reshape(-1, DIM)
    root = tmp_path_factory.mktemp("tiny")
    lines = [f"w{i} " + " ".join(f"{v:.6f}" for v in row) for i, row in enumerate(X)]
    (root / "v.txt").write_text("\n".join(lines) + "\n")
    build_word_index("tiny", str(root / "v.txt"), home=root / "home")
    words = WordIndex.open("tiny", home=root / "home")
    assert words.words[:3] == ["w0", "w1", "w2"]  # row ids are file order
    raw = words.raw.astype(np.float64)  # the vectors the index holds (the file has 6 decimals)
    U = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    return words, U


def reference(U, a, a_star, b, method, *, honest=False, V=None):
    """Scores of every word 0..V-1 for a:a*::b:? (float64) with the inputs at -inf unless ``honest``."""
    W = U[: len(U) if V is None else V]
    if method == "add":
        q = U[b] - U[a] + U[a_star]
        s = W @ q / np.linalg.norm(q)
    elif method == "mul":
        sh = lambda c: (c + 1) / 2
        s = sh(W @ U[b]) * sh(W @ U[a_star]) / (sh(W @ U[a]) + EPS)
    else:  # cos(x - b, a* - a); x = b scores 0
        d, o = W - U[b], U[a_star] - U[a]
        n = np.linalg.norm(d, axis=1)
        s = np.where(n > 1e-6, d @ o / np.maximum(n, 1e-12) / np.linalg.norm(o), 0.0)
    if not honest:
        s[[x for x in (a, a_star, b) if x < len(W)]] = -np.inf
    return s


def error(U, a, a_star, b, method, s, V=None):
    """Per word, a bound of |float32 score - reference score ``s``| (tests/topk_ties.py)."""
    W = U[: len(U) if V is None else V]
    if method == "add":
        return add_error(G, np.linalg.norm(U[b] - U[a] + U[a_star]))
    if method == "mul":
        return mul_error(G, W @ U[b], W @ U[a_star], W @ U[a], EPS)
    return pairdir_error(G, W @ U[b], np.where(np.isfinite(s), s, 0.0), np.linalg.norm(U[a_star] - U[a]))


def questions(rng, m):
    """m questions with a, a*, b from one cluster (the inputs are each other's neighbours)."""
    c = rng.integers(0, CLUSTERS, size=m)
    pick = np.array([rng.choice(PER, 3, replace=False) for _ in range(m)])
    return tuple(c * PER + pick[:, t] for t in range(3))


@pytest.mark.parametrize("method", ["add", "mul", "pairdir"])
@pytest.mark.parametrize("honest", [False, True])
def test_answer_questions_equal_brute_force(tiny, method, honest):
    words, U = tiny
    a, a_star, b = questions(np.random.default_rng(1), 24)
    k = 12  # more than a cluster: the inputs are in the honest top-k
    D, I = answer_questions(words, a, a_star, b, method=method, k=k, exclude_inputs=not honest)
    for q in range(len(a)):
        s = reference(U, a[q], a_star[q], b[q], method, honest=honest)
        assert_topk_agrees(I[q], s, error(U, a[q], a_star[q], b[q], method, s), scores=D[q], what=f"question {q}")
        np.testing.assert_allclose(D[q], s[I[q]], rtol=1e-4, atol=1e-5)
    # the inputs are near the top: a test that excluded nothing would return them
    if honest:
        assert np.isin(I[:, 0], np.stack([a, a_star, b], axis=1)).any()


def test_answer_questions_exclude_each_input_on_both_paths(tiny):
    words, U = tiny
    a, a_star, b = questions(np.random.default_rng(2), 40)
    for method in ("add", "mul", "pairdir"):
        _, honest = answer_questions(words, a, a_star, b, method=method, k=12, exclude_inputs=False)
        _, I = answer_questions(words, a, a_star, b, method=method, k=12)
        for name, x in (("a", a), ("a*", a_star), ("b", b)):
            assert not (I == x[:, None]).any(), (method, name)
        # each input word shows up in the honest top-12 of some question, so the exclusion above is tested
        # (pairdir scores b itself 0 and need not rank a high)
        for name, x in (("a", a), ("a*", a_star), ("b", b)):
            if method != "pairdir" or name == "a*":
                assert (honest == x[:, None]).any(), (method, name)


def test_restricted_vocabulary_with_inputs_outside(tiny):
    words, U = tiny
    V = 1500
    a, a_star, b = questions(np.random.default_rng(3), 20)
    for method in ("add", "mul", "pairdir"):
        D, I = answer_questions(words, a, a_star, b, method=method, k=3, restrict_vocab=V)
        for q in range(len(a)):
            s = reference(U, a[q], a_star[q], b[q], method, V=V)
            assert_topk_agrees(I[q], s, error(U, a[q], a_star[q], b[q], method, s, V=V), scores=D[q],
                               what=f"{method} question {q}")


def relation_case(rng, n=8):
    """A relation of n pairs in n/2 groups: both pairs of a group (starts and ends) lie in one cluster, so a
    question within a group has a, a*, b and the answer among each other's neighbours."""
    c = rng.choice(CLUSTERS, size=n // 2, replace=False)
    members = np.array([rng.choice(PER, 4, replace=False) for _ in c])
    starts = (c[:, None] * PER + members[:, :2]).reshape(-1)
    ends = (c[:, None] * PER + members[:, 2:]).reshape(-1)
    gold = [[int(e)] for e in ends]
    gold[0].append(int(starts[0]))      # an accepted answer that is an input word for some questions
    gold[1].append(int(starts[0]) + 1 if starts[0] % PER < PER - 1 else int(starts[0]) - 1)  # two accepted
    return starts, ends, gold


@pytest.mark.parametrize("method", ["add", "mul", "pairdir"])
@pytest.mark.parametrize("honest, k, prune", [(False, 1, True), (False, 12, True), (True, 3, True), (False, 12, False)])
def test_solve_relation_equals_brute_force(tiny, method, honest, k, prune):
    _, U = tiny
    rng = np.random.default_rng(4)
    for V in (len(U), 2600):
        starts, ends, gold = relation_case(rng)
        n = len(starts)
        word_ids = np.concatenate([starts, ends])
        W = U[word_ids].astype(np.float32)
        P = W @ U[:V].astype(np.float32).T
        ii, jj, ans = solve_relation(P, n, gold=gold, word_ids=word_ids, method=method, k=k, honest=honest,
                                     eps=EPS, gram=W @ W.T, prune=prune)
        assert sorted(zip(ii.tolist(), jj.tolist())) == [(i, j) for i in range(n) for j in range(n) if i != j]
        for q, (i, j) in enumerate(zip(ii, jj)):
            s = reference(U, starts[i], ends[i], starts[j], method, honest=honest, V=V)
            e, what = error(U, starts[i], ends[i], starts[j], method, s, V=V), f"V={V} i={i} j={j}"
            # add: the reported scores are divided by |q| from the Gram matrix (checked just below)
            assert_topk_agrees(ans.ids[q], s, e, scores=None if method == "add" else ans.scores[q], what=what)
            np.testing.assert_allclose(ans.scores[q], s[ans.ids[q]], rtol=1e-4, atol=1e-5)
            assert_rank_agrees(ans.gold_rank[q], s, gold[j], e, what=what)


@pytest.fixture(scope="module")
def big():
    """20,000 unit vectors in 2,000 clusters of 10 (arrays only: the relation kernel takes no index)."""
    rng = np.random.default_rng(8)
    X = (rng.normal(size=(2000, 1, DIM)) + 0.35 * rng.normal(size=(2000, PER, DIM))).reshape(-1, DIM)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


@pytest.mark.parametrize("method", ["add", "mul"])
def test_solve_relation_falls_back_past_the_candidates(big, method):
    """200 pairs in 200 clusters: the bound (max over all start words) is high near every start word, so the
    ~2,048 candidates are those words, and a question's 15th best answer (its own cluster has 10 words) lies
    below the threshold: the kernel scans past the candidates, the words whose bound reaches the k-th best
    score so far (about a tenth of the vocabulary)."""
    U = big
    rng = np.random.default_rng(6)
    c = rng.choice(len(U) // PER, size=200, replace=False)
    members = np.array([rng.choice(PER, 2, replace=False) for _ in c])
    starts, ends = c * PER + members[:, 0], c * PER + members[:, 1]
    word_ids = np.concatenate([starts, ends])
    W = U[word_ids].astype(np.float32)
    ii, jj = rng.choice(200, size=12, replace=False), rng.choice(200, size=12, replace=False)
    keep = ii != jj
    ii, jj = ii[keep], jj[keep]
    gold = [[int(e)] for e in ends]
    _, _, ans = solve_relation(W @ U.astype(np.float32).T, 200, gold=gold, word_ids=word_ids, method=method, k=15,
                               eps=EPS, gram=W @ W.T, questions=(ii, jj))
    for q, (i, j) in enumerate(zip(ii, jj)):
        s = reference(U, starts[i], ends[i], starts[j], method)
        e, what = error(U, starts[i], ends[i], starts[j], method, s), f"i={i} j={j}"
        assert_topk_agrees(ans.ids[q], s, e, scores=None if method == "add" else ans.scores[q], what=what)
        assert_rank_agrees(ans.gold_rank[q], s, gold[j], e, what=what)


def test_solve_relation_gold_excluded_or_outside_is_minus_one(tiny):
    _, U = tiny
    starts, ends, gold = relation_case(np.random.default_rng(5), n=4)
    gold = [[int(starts[0])], [int(len(U) - 1)], [int(ends[2])], [int(ends[3])]]  # an input; outside V
    word_ids = np.concatenate([starts, ends])
    W = U[word_ids].astype(np.float32)
    V = len(U) - 10
    ii, jj, ans = solve_relation(W @ U[:V].astype(np.float32).T, 4, gold=gold, word_ids=word_ids, method="add",
                                 gram=W @ W.T)
    for q, (i, j) in enumerate(zip(ii, jj)):
        if j == 1 or (j == 0 and i != 0):  # outside the vocabulary; or b = starts[0] itself (excluded)
            assert ans.gold_rank[q] == -1
        else:
            assert ans.gold_rank[q] >= 1


def test_topk_rows_ties_in_column_order_and_short_rows():
    R = np.array([[1.0, 3.0, 3.0, -np.inf, 2.0], [0.0, 0.0, 0.0, 0.0, 0.0]], np.float32)
    top, vals = topk_rows(R.copy(), 3)
    assert top.tolist() == [[1, 2, 4], [0, 1, 2]] and vals.tolist() == [[3, 3, 2], [0, 0, 0]]
    top, vals = topk_rows(R.copy(), 1)
    assert top.tolist() == [[1], [0]] and vals.tolist() == [[3], [0]]
    top, vals = topk_rows(R.copy(), 9)  # more than the row: all of it, -inf last
    assert top.tolist() == [[1, 2, 4, 0, 3], [0, 1, 2, 3, 4]] and vals[0, -1] == -np.inf
    top, vals = topk_rows(R.copy(), 0)
    assert top.shape == (2, 0) and vals.shape == (2, 0)
    top, _ = topk_rows(R.copy(), 4)  # k = width - 1: the partition path
    assert top.tolist() == [[1, 2, 4, 0], [0, 1, 2, 3]]


def test_excluded_cells_drop_padding_and_ids_outside():
    rows, cols = excluded_cells(5, np.array([[0, 4, 5], [-1, 2, 3]]))
    assert sorted(zip(rows.tolist(), cols.tolist())) == [(0, 0), (0, 4), (1, 2), (1, 3)]


def test_accuracy_and_mrr_by_hand():
    t = pa.table({"relation": ["r1", "r1", "r1", "r2"], "category": ["c", "c", "c", "c"],
                  "correct": [True, False, False, True], "rank": [1, 2, -1, 1]})
    by_relation, by_category = accuracy_tables(t)
    assert by_relation == [
        {"relation": "r1", "category": "c", "questions": 3, "accuracy": pytest.approx(1 / 3),
         "mrr": pytest.approx((1 + 0.5 + 0) / 3)},
        {"relation": "r2", "category": "c", "questions": 1, "accuracy": 1.0, "mrr": 1.0}]
    assert by_category == [{"category": "c", "questions": 4, "accuracy": 0.5, "mrr": pytest.approx(2.5 / 4)}]


def test_honest_shares_by_hand():
    t = pa.table({"pred_is_b": [True, False, False, False, False], "pred_is_a": [False, True, False, False, False],
                  "pred_is_a_star": [False, False, True, False, False],
                  "correct": [False, False, False, True, False]})
    assert honest_shares(t) == {"questions": 5, "b": 0.2, "a": 0.2, "a_star": 0.2, "gold": 0.2, "other": 0.2}


def test_fewer_allowed_words_than_k_pad_with_minus_one_and_minus_inf(tiny):
    """A 10-word vocabulary with 3 inputs excluded has 7 answers: k = 10 pads 3 slots (id -1, score -inf)."""
    words, U = tiny
    a, a_star, b = np.array([0, 2]), np.array([1, 3]), np.array([2, 4])
    for method in ("add", "mul", "pairdir"):
        D, I = answer_questions(words, a, a_star, b, method=method, k=10, restrict_vocab=10)
        assert I.shape == (2, 10) and (I[:, 7:] == -1).all() and np.isneginf(D[:, 7:]).all(), method
        D, I = answer_questions(words, a, a_star, b, method=method, k=12, restrict_vocab=10)  # k > the words
        assert I.shape == (2, 12) and (I[:, 7:] == -1).all() and np.isneginf(D[:, 7:]).all(), method
        for q in range(2):
            s = reference(U, a[q], a_star[q], b[q], method, V=10)
            assert_topk_agrees(I[q, :7], s, error(U, a[q], a_star[q], b[q], method, s, V=10), what=method)
    starts, ends = np.array([0, 2, 4]), np.array([1, 3, 5])
    word_ids = np.concatenate([starts, ends])
    W = U[word_ids].astype(np.float32)
    for method in ("add", "mul", "pairdir"):
        for k in range(1, 13):  # up to more than the 10 words
            ii, jj, ans = solve_relation(W @ U[:10].astype(np.float32).T, 3, gold=[[1], [3], [5]], word_ids=word_ids,
                                         method=method, k=k, eps=EPS, gram=W @ W.T)
            for q, (i, j) in enumerate(zip(ii, jj)):
                s = reference(U, starts[i], ends[i], starts[j], method, V=10)
                assert_topk_agrees(ans.ids[q], s, error(U, starts[i], ends[i], starts[j], method, s, V=10),
                                   what=f"{method} k={k}")
                assert np.isneginf(ans.scores[q][ans.ids[q] < 0]).all(), (method, k)


def test_default_k_and_k2_and_more_questions_than_a_block(tiny):
    words, U = tiny
    a, a_star, b = questions(np.random.default_rng(9), 150)  # more than one block of 64 questions
    for method in ("add", "mul", "pairdir"):
        D, I = answer_questions(words, a, a_star, b, method=method)  # k = 1 by default
        assert I.shape == (150, 1) and D.shape == (150, 1)
        _, I2 = answer_questions(words, a, a_star, b, method=method, k=2)
        for q in range(150):
            s = reference(U, a[q], a_star[q], b[q], method)
            assert_topk_agrees(I2[q], s, error(U, a[q], a_star[q], b[q], method, s), what=f"{method} question {q}")
            assert I[q, 0] == I2[q, 0], (method, q)


@pytest.mark.parametrize("method", ["add", "mul"])
def test_ranks_false_gives_the_same_answers_and_no_ranks(tiny, method):
    _, U = tiny
    starts, ends, gold = relation_case(np.random.default_rng(10))
    word_ids = np.concatenate([starts, ends])
    W = U[word_ids].astype(np.float32)
    P = W @ U.astype(np.float32).T
    _, _, with_ranks = solve_relation(P, len(starts), gold=gold, word_ids=word_ids, method=method, k=3, gram=W @ W.T)
    _, _, without = solve_relation(P, len(starts), gold=gold, word_ids=word_ids, method=method, k=3, gram=W @ W.T,
                                   ranks=False)
    assert (without.gold_rank == -1).all() and (with_ranks.gold_rank >= 1).any()
    assert (without.ids == with_ranks.ids).all()


def test_share_intervals_published_wilson_values():
    rows = share_intervals({"b": 81 / 263, "other": 182 / 263}, 263)  # Newcombe (1998), Table I: 81/263
    assert [(r["returned"], r["count"], r["share"]) for r in rows] == [("b", 81, 81 / 263), ("other", 182, 182 / 263)]
    assert (rows[0]["low"], rows[0]["high"]) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert (rows[1]["low"], rows[1]["high"]) == pytest.approx((1 - 0.3662, 1 - 0.2553), abs=1e-4)


def test_add_scores_are_cosines_when_the_query_is_short(tiny):
    """||b - a + a*|| < 0.9 (a near b, a* far from both): the reported 3CosAdd scores are still cosines."""
    words, U = tiny
    G = U[:300] @ U[:300].T
    short = [(a, s, b) for a in range(0, 300, 7) for s in range(1, 300, 11) for b in range(2, 300, 13)
             if len({a, s, b}) == 3 and 3 + 2 * (G[b, s] - G[b, a] - G[a, s]) < 0.8]
    assert len(short) >= 5
    a, a_star, b = (np.array(x[:20]) for x in zip(*short))
    D, I = answer_questions(words, a, a_star, b, method="add", k=3)
    for q in range(len(a)):
        s = reference(U, a[q], a_star[q], b[q], "add")
        assert_topk_agrees(I[q], s, error(U, a[q], a_star[q], b[q], "add", s), scores=D[q], what=f"question {q}")
        np.testing.assert_allclose(D[q], s[I[q]], rtol=1e-4, atol=1e-5)


# --- the relation kernel's pruning at exact ties (dyadic scores: float32 and float64 compute them exactly) ---

def relation_brute(P, n, i, j, method, word_ids, honest=False, eps=EPS):
    """Scores of question (i, j) of a relation from its cosine rows ``P`` (2n x V) in float64 by the papers'
    formulas, ``-inf`` for the excluded inputs unless ``honest``."""
    P = P.astype(np.float64)
    cb, cas, ca = P[j], P[n + i], P[i]
    if method == "add":
        s = cas - ca + cb
    else:
        sh = lambda c: (c + 1) / 2
        s = sh(cb) * sh(cas) / (sh(ca) + eps)
    if not honest:
        s[[x for x in (word_ids[i], word_ids[n + i], word_ids[j]) if x < len(s)]] = -np.inf
    return s


def ranked(s, k):
    """The first k ids by score, then id (-1 padding past the allowed words)."""
    allowed = np.flatnonzero(np.isfinite(s))
    top = allowed[np.lexsort((allowed, -s[allowed]))][:k]
    return np.r_[top, -np.ones(k - len(top), np.int64)]


def tie_case(which: str):
    """A relation of two pairs over 32,768 words (8 times the 2,048 candidates plus room, so that the kernel
    prunes and its second pass gathers columns) built on exact ties of question (0, 1), a:a* = pair 0 and
    b = start of pair 1. Its a:a* part is 0 for every word (a* = a as rows of P), so a word's score is
    ``cos(x, b)`` and its bound ``max(cos(x, a), cos(x, b))``. Question (1, 0) the same with the roles swapped.

    ``floor``: 3,000 words (ids 10,000 on) score 0 with bound 0.75 (the candidates; threshold 0.75), word 20,000
    scores 0.25 with bound 0.75, word 5 scores 0.25 with bound 0.25: the question's best candidate reaches only
    0.25, so the kernel scans the words whose bound reaches 0.25, and word 5 ties with word 20,000 at exactly
    that bound: it comes first (id order) only if a bound equal to the floor is scanned.
    ``threshold``: the 3,000 words have bound 0.5 and score 0 (threshold 0.5), word 20,000 scores 0.5 with bound
    0.75, word 5 scores 0.5 with bound 0.5: it comes first only if a bound equal to the threshold is a candidate.
    Every other word scores -0.5; the inputs' own words are the last four (excluded)."""
    V = 32_768
    S0, S1 = np.full(V, -0.5, np.float32), np.full(V, -0.5, np.float32)
    group = np.arange(10_000, 13_000)
    high = 0.75 if which == "floor" else 0.5
    S0[group], S1[group] = high, 0.0
    S0[20_000], S1[20_000] = 0.75, high - 0.5 if which == "floor" else 0.5
    S0[5], S1[5] = (0.0, 0.25) if which == "floor" else (0.5, 0.5)
    P = np.stack([S0, S1, S0, S1])  # ends equal to starts: a* = a
    return P, np.arange(V - 4, V)


@pytest.mark.parametrize("which, k", [("floor", 1), ("floor", 3), ("threshold", 1)])
def test_solve_relation_pruning_keeps_words_whose_bound_equals_the_cut(which, k):
    """A word whose bound equals the threshold or the floor exactly, and scores it, ties with a candidate of
    higher id: the kernel's pruning (``bound >= thr`` for the candidates, ``bound >= floor`` for the second pass)
    must keep it, since ties go by id. The ids are compared exactly with the float64 brute force (the scores are
    multiples of 1/4: no rounding anywhere), and the gold ranks count only words scoring strictly more: gold
    20,000 ties with word 5 (rank 1), gold 10,001 ties with 3,000 words (rank 1), a gold at -0.5 is beaten by
    exactly the 3,002 words above it, not by its 29,000 equals."""
    P, word_ids = tie_case(which)
    gold = [[10_001], [20_000]] if k == 1 else [[10_001], [7]]  # question (0, 1) asks for pair 1's gold
    ii, jj, ans = solve_relation(P, 2, gold=gold, word_ids=word_ids, method="add", k=k, eps=EPS, gram=np.eye(4))
    for q, (i, j) in enumerate(zip(ii, jj)):
        s = relation_brute(P, 2, i, j, "add", word_ids)
        assert ans.ids[q].tolist() == ranked(s, k).tolist(), (which, i, j)
        assert_rank_agrees(ans.gold_rank[q], s, gold[j], 0.0, what=f"{which} ({i}, {j})")
    assert ans.ids[list(zip(ii, jj)).index((0, 1)), 0] == 5
    if k == 3:  # gold 7 scores -0.5, like 29,763 other words
        assert ans.gold_rank[list(zip(ii, jj)).index((0, 1))] == 3003


@pytest.mark.parametrize("k", [1, 10, 32, 33, 100])
def test_solve_relation_wide_gap_below_the_candidates(k):
    """Three pairs, a* = a (scores ``cos(x, b)``, bounds the max over the starts): 3,000 candidate words have
    bound 0.75 (start 0) and score -0.25 for b = start 1 (one of them 0.75) and -0.5 for b = start 2; k - 1 words
    outside the candidates score 0.5 for both; below them, outside the candidates too, a word at 0.25 for
    b = start 1 and one at -0.375 for b = start 2 (the k-th answer). A question whose best candidate reaches the
    threshold but whose k-th does not must still scan past the candidates, and the second pass must reach the
    lowest k-th score of the questions sharing a:a*; every answer and gold rank equals the float64 brute force
    exactly."""
    V = 32_768
    rng = np.random.default_rng(k)
    S = np.full((3, V), -0.5, np.float32)
    group = np.arange(10_000, 13_000)
    S[0, group], S[1, group] = 0.75, -0.25
    S[1, group[5]] = 0.75
    far, kth1, kth2 = np.split(rng.choice(np.r_[0:10_000, 13_000:V - 6], k + 1, replace=False), [k - 1, k])
    S[1:, far] = 0.5
    S[1, kth1], S[2, kth2] = 0.25, -0.375
    P, word_ids = np.concatenate([S, S]), np.arange(V - 6, V)
    gold = [[int(group[0])], [int(kth1[0])], [int(kth2[0])]]
    ii, jj, ans = solve_relation(P, 3, gold=gold, word_ids=word_ids, method="add", k=k, eps=EPS, gram=np.eye(6))
    for q, (i, j) in enumerate(zip(ii, jj)):
        s = relation_brute(P, 3, i, j, "add", word_ids)
        assert ans.ids[q].tolist() == ranked(s, k).tolist(), (k, i, j)
        assert_rank_agrees(ans.gold_rank[q], s, gold[j], 0.0, what=f"k={k} ({i}, {j})")
    at = {pair: q for q, pair in enumerate(zip(ii.tolist(), jj.tolist()))}
    assert ans.ids[at[0, 1]].tolist() == [group[5], *np.sort(far)][:k] and ans.gold_rank[at[0, 1]] == k + 1
    assert ans.ids[at[0, 2]].tolist() == [*np.sort(far), kth2[0]] and ans.gold_rank[at[0, 2]] == k


@st.composite
def relations(draw):
    """A relation's cosine rows P (2n x V), multiples of 1/4 or 1/8 (exact in float32), with adversarial
    structure drawn on top: duplicate words (equal columns), start words equal to each other (ties in the
    bound's max), words whose bound is their score, most words far below the rest (so that the second pass
    gathers columns rather than scanning all); input words and gold answers inside or outside V."""
    sparse = draw(st.booleans())  # most words far from all: the second pass gathers the few that can reach
    n = draw(st.integers(2, 5))
    V, k = draw(st.integers(300, 400) if sparse else st.integers(8, 400)), draw(st.integers(1, 3 if sparse else 6))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    levels = draw(st.sampled_from([4, 8]))
    P = rng.integers(-levels, levels + 1, (2 * n, V)) / levels
    if draw(st.booleans()):  # duplicate words
        P[:, rng.integers(0, V, V // 2)] = P[:, rng.integers(0, V, 1)]
    if draw(st.booleans()):  # two start words alike: one bound is both questions' exact score
        P[1] = P[0]
    if draw(st.booleans()):  # a:a* parts that are 0 (a* = a): scores are cos(x, b), bounds the max over starts
        P[n:] = P[:n]
    if sparse:
        P[:, rng.uniform(size=V) < 0.8] = -1
    word_ids = rng.choice(V + 3, 2 * n, replace=False)
    gold = [rng.integers(0, V + 2, draw(st.integers(1, 2))).tolist() for _ in range(n)]
    return P.astype(np.float32), word_ids, gold, k, draw(st.sampled_from(["add", "mul"])), draw(st.booleans())


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(relations())
def test_solve_relation_pruning_on_small_relations_equals_brute_force(relation):
    """The relation kernel with its candidate count and counting block made small (so that small vocabularies
    prune, scan past the candidates and count block by block) against the float64 brute force: 3CosAdd on
    multiples of 1/8 is exact, so ids (ties by id) and ranks must equal it; 3CosMul rounds, so the pruned
    answers must equal the unpruned scan's bit for bit and that scan the brute force within the tie rule."""
    P, word_ids, gold, k, method, honest = relation
    n = len(P) // 2
    run = lambda prune: solve_relation(P, n, gold=gold, word_ids=word_ids, method=method, k=k, honest=honest,
                                       eps=EPS, gram=np.eye(2 * n, dtype=np.float32), prune=prune)
    with mock.patch.object(analogy, "_CANDIDATES", 1), mock.patch.object(analogy, "_BLOCK", 7):
        ii, jj, ans = run(True)
        _, _, full = run(False)
    np.testing.assert_array_equal(ans.ids, full.ids)
    np.testing.assert_array_equal(ans.gold_rank, full.gold_rank)
    np.testing.assert_array_equal(ans.scores, full.scores)
    for q, (i, j) in enumerate(zip(ii, jj)):
        s = relation_brute(P, n, i, j, method, word_ids, honest)
        what = f"{method} k={k} ({i}, {j})"
        if method == "add":
            assert ans.ids[q].tolist() == ranked(s, k).tolist(), what
            assert_rank_agrees(ans.gold_rank[q], s, gold[j], 0.0, what=what)
        else:
            c = P.astype(np.float64)
            e = mul_error(0.0, c[j], c[n + i], c[i], EPS)
            assert_topk_agrees(ans.ids[q], s, e, scores=ans.scores[q], what=what)
            assert_rank_agrees(ans.gold_rank[q], s, gold[j], e, what=what)
