"""Properties of WNLaMPro's rank, RR and precision (property-based, derandomized, bounded examples): a rank does not
depend on where the vocabulary's tokens sit (columns permuted with the targets); it is 1 + the tokens scored
strictly above the best target (brute force); and over every shuffled ranking of a small vocabulary (all V!
orders, each of P patterns on its own) the mean RR and P@i are exactly the random baseline's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lexprobe.rare_words.probing_scores import entry_scores, random_scores, rank_targets

PROPERTY = settings(max_examples=30, deadline=None, derandomize=True)


@st.composite
def logit_rows(draw):
    V = draw(st.integers(2, 12))
    rows = draw(st.integers(1, 4))
    logits = np.array(draw(st.lists(st.lists(st.integers(-4, 4), min_size=V, max_size=V), min_size=rows,
                                    max_size=rows)), np.float32)  # small integers: many ties
    targets = [sorted(draw(st.sets(st.integers(0, V - 1), min_size=1, max_size=V))) for _ in range(rows)]
    perm = np.array(draw(st.permutations(range(V))))
    top = draw(st.integers(1, V))
    return logits, targets, perm, top


@PROPERTY
@given(logit_rows())
def test_rank_is_one_plus_the_tokens_strictly_above_the_best_target_wherever_they_sit(case):
    logits, targets, perm, top = case
    ranks, tops = rank_targets(logits, targets, top)
    want = [1 + sum(v > max(row[i] for i in t) for v in row) for row, t in zip(logits.tolist(), targets)]
    assert ranks.tolist() == want
    want_top = [sorted(range(len(row)), key=lambda i: (-row[i], i))[:top] for row in logits.tolist()]
    assert tops.tolist() == want_top  # ties: lower id first
    # the columns moved: column j of the new logits is token perm[j]; the targets follow their tokens
    where = np.argsort(perm)
    moved, _ = rank_targets(logits[:, perm], [sorted(where[t].tolist()) for t in targets], top)
    assert moved.tolist() == ranks.tolist()


@PROPERTY
@given(V=st.integers(2, 5), data=st.data())
def test_mean_over_every_shuffled_ranking_is_the_random_baseline(V, data):
    """Every ordering of V distinct logits for each of P patterns (V!^P equally likely rankings): the mean RR with
    the cut-off, and the mean P@i, equal :func:`random_scores`' exact expectation."""
    P = data.draw(st.integers(1, 2 if V <= 4 else 1))
    t = data.draw(st.integers(1, V))
    cutoff = data.draw(st.integers(1, V + 1))
    at = tuple(sorted(data.draw(st.sets(st.integers(1, V), min_size=1, max_size=2))))
    targets = list(range(t))  # which tokens are targets does not matter over all orders
    orders = np.array(list(itertools.permutations(range(V))), np.float32)
    combos = list(itertools.product(range(len(orders)), repeat=P))
    logits = np.concatenate([orders[[c[p] for c in combos]] for p in range(P)])  # pattern-major
    query_entry = np.tile(np.arange(len(combos)), P)
    ranks, tops = rank_targets(logits, [targets] * len(logits), max(at))
    out = entry_scores(query_entry, ranks, tops, [targets] * len(combos), len(combos), cutoff=cutoff, at=at)
    want = random_scores(np.array([t]), np.array([P]), V, cutoff=cutoff, at=at)
    assert out["rr"].mean() == pytest.approx(want["rr"][0], abs=1e-12)
    for i in at:
        assert out[f"p@{i}"].mean() == pytest.approx(want[f"p@{i}"][0], abs=1e-12)
