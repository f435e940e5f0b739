"""Algebraic properties of the analogy paper's metrics (property-based, derandomized, bounded examples):
3CosAdd, 3CosMul and PairDirection read cosines only, so scaling each word vector by a positive factor changes no
answer and no score; OCS and PCS read unit offsets' dot products, so a rotation, a uniform scaling or a
translation of the whole space changes neither; the PCS of a relation against itself shuffled is 1/2 in
expectation only through its shuffles, never through the order of the pairs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lexprobe.analogies.offset_consistency import offset_scores
from lexprobe.kinds.analogy_queries import answer_questions
from lexprobe.kinds.words import WordIndex, build_word_index

WORDS, DIM = 300, 8
PROPERTY = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _index(root, name, X):
    root.mkdir(parents=True, exist_ok=True)
    lines = [f"w{i} " + " ".join(repr(float(v)) for v in row) for i, row in enumerate(X)]
    (root / f"{name}.txt").write_text("\n".join(lines) + "\n")
    build_word_index(name, str(root / f"{name}.txt"), home=root / "home")
    return WordIndex.open(name, home=root / "home")


@pytest.fixture(scope="module")
def scaled(tmp_path_factory):
    """The same words twice: rows X, and rows X scaled by factors from 1/64 to 64 (powers of two, so the float32
    unit vectors are bit-identical and only a kernel that reads the raw norms can differ)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(WORDS, DIM)).astype(np.float32)
    scale = 2.0 ** rng.integers(-6, 7, size=(WORDS, 1))
    root = tmp_path_factory.mktemp("scaled")
    return _index(root, "plain", X), _index(root, "scaled", X * scale)


@PROPERTY
@given(method=st.sampled_from(["add", "mul", "pairdir"]), honest=st.booleans(),
       triples=st.lists(st.tuples(*[st.integers(0, WORDS - 1)] * 3).filter(lambda t: len(set(t)) == 3),
                        min_size=1, max_size=6))
def test_analogy_answers_do_not_change_when_words_are_scaled(scaled, method, honest, triples):
    plain, big = scaled
    a, a_star, b = (np.array(x) for x in zip(*triples))
    D1, I1 = answer_questions(plain, a, a_star, b, method=method, k=5, exclude_inputs=not honest)
    D2, I2 = answer_questions(big, a, a_star, b, method=method, k=5, exclude_inputs=not honest)
    np.testing.assert_allclose(D1, D2, rtol=1e-5, atol=1e-6)
    assert (I1 == I2).all()


def _space(seed, n, dim):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(2 * n, dim)), rng


@PROPERTY
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(3, 12), dim=st.integers(2, 9),
       factor=st.floats(0.01, 100.0), shift=st.floats(-5.0, 5.0))
def test_ocs_and_pcs_are_invariant_under_rotation_scaling_and_translation(seed, n, dim, factor, shift):
    X, rng = _space(seed, n, dim)
    Q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))  # a random orthogonal matrix
    starts, ends = np.arange(n), np.arange(n, 2 * n)
    base = offset_scores(X, starts, ends, n_shuffles=20, rng=np.random.default_rng(seed))
    for Y in (X @ Q, factor * X, X + shift):
        got = offset_scores(Y, starts, ends, n_shuffles=20, rng=np.random.default_rng(seed))
        assert (got.permutations == base.permutations).all()  # the same shuffles: the seed, not the space
        assert got.ocs == pytest.approx(base.ocs, abs=1e-9)
        np.testing.assert_allclose(got.similarities, base.similarities, atol=1e-9)
        # an AUC moves only where a true and a shuffled similarity tie within rounding
        close = np.abs(base.similarities[:, None, None] - _shuffled_similarities(X, starts, ends, base)[None]) < 1e-9
        assert got.pcs == pytest.approx(base.pcs, abs=close.sum() / close.size + 1e-12)


def _shuffled_similarities(X, starts, ends, scores):
    """sim(O') of each shuffled set, by hand: (shuffles, n (n - 1) / 2)."""
    rows = []
    for perm in scores.permutations:
        O = X[ends[perm]] - X[starts]
        O /= np.linalg.norm(O, axis=1, keepdims=True)
        G = O @ O.T
        rows.append(G[np.triu_indices(len(O), 1)])
    return np.array(rows)


@PROPERTY
@given(seed=st.integers(0, 2 ** 32 - 1), n=st.integers(3, 10), dim=st.integers(2, 6))
def test_ocs_is_the_mean_pairwise_cosine_and_does_not_depend_on_the_pairs_order(seed, n, dim):
    X, rng = _space(seed, n, dim)
    starts, ends = np.arange(n), np.arange(n, 2 * n)
    O = X[ends] - X[starts]
    O /= np.linalg.norm(O, axis=1, keepdims=True)
    want = np.mean([O[i] @ O[j] for i in range(n) for j in range(i + 1, n)])
    order = rng.permutation(n)
    got = offset_scores(X, starts[order], ends[order], n_shuffles=5, rng=np.random.default_rng(0))
    assert got.ocs == pytest.approx(want, abs=1e-12)
    # the PCS of each shuffled set, by hand (Mann-Whitney with ties half) from the shuffles it drew
    true = np.sort(got.similarities)
    shuffled = _shuffled_similarities(X, starts[order], ends[order], got)
    aucs = [np.mean([(t > s) + 0.5 * (t == s) for t in true for s in row]) for row in shuffled]
    assert got.pcs == pytest.approx(np.mean(aucs), abs=1e-12)


@PROPERTY
@given(labels=st.lists(st.sampled_from(["E01 a", "D02 b", "L03 c"]), min_size=1, max_size=12),
       seed=st.integers(0, 2 ** 32 - 1))
def test_relation_means_are_each_relations_arithmetic_mean_in_table_order(labels, seed):
    """Figure 1's bars: the mean of every term over a relation's tuples (numpy's mean over the rows of each
    relation), relations in the order they first appear; a term's mean does not depend on the rows' order."""
    import pyarrow as pa

    from lexprobe.analogies.decomposition import DELTA, REFERENCE, TERMS, relation_means

    names = ("score",) + TERMS + REFERENCE + ("delta_sim",) + DELTA
    rng = np.random.default_rng(seed)
    values = {c: rng.normal(size=len(labels)) for c in names}
    table = pa.table({"relation": labels, "category": [x[0] for x in labels], **values})
    got = relation_means(table)
    assert [r["relation"] for r in got] == list(dict.fromkeys(labels))
    for row in got:
        mask = np.array(labels) == row["relation"]
        assert row["tuples"] == mask.sum() and row["category"] == row["relation"][0]
        for c in names:
            assert row[c] == pytest.approx(np.mean(values[c][mask]), abs=1e-12)


def test_each_relation_has_its_own_shuffle_stream():
    """The PCS shuffles of a relation come from (seed, its name): the same for every caller, and two relations
    of the same size get different shuffles (their sets do not depend on each other)."""
    from lexprobe.analogies.offset_consistency import shuffle_rng, shuffles

    starts, ends = np.arange(8), np.arange(8, 16)
    draw = lambda name: shuffles(starts, ends, 20, shuffle_rng(3, name))  # noqa: E731
    assert (draw("E01 capitals") == draw("E01 capitals")).all()
    assert not (draw("E01 capitals") == draw("E02 languages")).all()


@PROPERTY
@given(seed=st.integers(0, 2 ** 32 - 1), within=st.booleans())
def test_mismatched_sets_pair_a_relations_starts_with_anothers_ends_and_no_zero_offset(seed, within):
    """Four relations, two per broad type, whose end words are other relations' start words: every mismatched set
    takes its starts from its relation and its ends from its partner (another relation, of the same broad type or
    not), and a start paired with itself (a zero offset) is dropped, so the set has one pair per start that
    differs from the end it drew (R1's within-type partner R0 ends with R1's starts: zero offsets occur)."""
    from lexprobe.analogies.offset_baselines import mismatched_sets
    from lexprobe.analogies.offset_consistency import PairSet

    starts = [np.arange(0, 6), np.arange(6, 12), np.arange(12, 18), np.arange(18, 24)]
    rels = [PairSet(f"R{i}", "AB"[i // 2], starts[i], starts[(i + 1) % 4]) for i in range(4)]
    for ps in mismatched_sets(rels, np.random.default_rng(seed), within=within):
        own = next(r for r in rels if r.relation == ps.relation)
        partner = next(r for r in rels if r.relation == ps.partner)
        assert partner is not own and (partner.category == own.category) == within
        assert np.isin(ps.start_ids, own.start_ids).all() and np.isin(ps.end_ids, partner.end_ids).all()
        assert (ps.start_ids != ps.end_ids).all()
        assert len(ps) >= 6 - len(np.intersect1d(own.start_ids, partner.end_ids))  # only zero offsets dropped
