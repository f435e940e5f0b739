"""Models compared cell by cell: the best possible P@k, lift and share of the possible gain by hand, the spreads,
contrasts and causal gaps by hand, and the lemma-clustered bootstrap against a hand enumeration of its
resamples."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from lexprobe.senses.sense_compare import cluster_means, compare_models, lemma_weights, oracle_p_at_k_mean

LABELS = ["l<500, r<0.25", "l<500, r>=0.25"]


def test_oracle_p_at_k_by_hand():
    # R = 1, K = 2: P@1 = 1, P@2 = 1/2; R = 3, K = 2: 1 and 1; R = 0: 0
    np.testing.assert_allclose(oracle_p_at_k_mean([1, 3, 0], 2), [0.75, 1.0, 0.0])
    np.testing.assert_allclose(oracle_p_at_k_mean([2], 4), [(1 + 1 + 2 / 3 + 2 / 4) / 4])


def test_lemma_weights_draw_as_many_lemmas_as_there_are():
    w = lemma_weights(7, 50, np.random.default_rng(1))
    assert w.shape == (50, 7) and (w.sum(axis=1) == 7).all() and (w >= 0).all()
    assert len({tuple(row) for row in w}) > 1


def test_cluster_means_by_hand_weights():
    # lemma 0: queries 0.2, 0.4 (cell 0); lemma 1: 0.9 (cell 0), 0.5 (cell 1)
    values = np.array([0.2, 0.4, 0.9, 0.5])
    lemma, cell = np.array([0, 0, 1, 1]), np.array([0, 0, 0, 1])
    weights = np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 2.0]])
    means = cluster_means(values, lemma, cell, 2, weights)[:, 0, :]
    np.testing.assert_allclose(means[0], [(0.2 + 0.4 + 0.9) / 3, 0.5])
    np.testing.assert_allclose(means[1, 0], 0.3)   # lemma 0 twice: (0.2 + 0.4) * 2 / 4
    assert np.isnan(means[1, 1])                    # no query of cell 1 in that resample
    np.testing.assert_allclose(means[2], [0.9, 0.5])


def _run(values: dict[str, list], random: list, relevant: list, k_max: int = 2) -> pa.Table:
    """A per-query table as rank_senses writes it (only the columns the comparison reads)."""
    n = len(random)
    return pa.table({"instance_id": [f"q{i}" for i in range(n)], "lemma": values["lemma"], "pos": ["NOUN"] * n,
                     "cell": values["cell"], "p_at_k_mean": values["p"], "random_p_at_k_mean": random,
                     "n_relevant": relevant,
                     "p_at_k": pa.FixedSizeListArray.from_arrays(pa.array([0.0] * (n * k_max), pa.float32()), k_max)})


def test_bootstrap_resamples_lemmas_not_queries():
    """Two lemmas: A with three queries of 0.2, B with one of 0.6. Resampling lemmas gives only AA, AB, BA, BB:
    cell means 0.2, (0.6 + 0.6) / 4 = 0.3 and 0.6 (resampling queries would give many more values)."""
    meta = {"lemma": ["a", "a", "a", "b"], "cell": [LABELS[0]] * 4}
    runs = {"m": _run({**meta, "p": [0.2, 0.2, 0.2, 0.6]}, [0.1] * 4, [1] * 4)}
    cmp = compare_models(runs, LABELS, resamples=400, seed=3)
    row = next(r for r in cmp.cells if r["cell"] == LABELS[0])
    assert row["lemmas"] == 2 and row["queries"] == 4
    assert row["lift"] == pytest.approx(0.3 / 0.1)
    assert (row["lift_low"], row["lift_high"]) == (pytest.approx(2.0), pytest.approx(6.0))
    from lexprobe.core.seeds import rng_for
    w = lemma_weights(2, 400, rng_for(3, "senses-lemma-bootstrap", ""))
    means = cluster_means(np.array([0.2, 0.2, 0.2, 0.6]), np.array([0, 0, 0, 1]), np.zeros(4, np.int64), 1, w)
    assert set(np.round(means.ravel(), 9)) <= {0.2, 0.3, 0.6}


def test_compare_models_by_hand():
    """Two lemmas x two cells, two models and a causal one; every number by hand (k_max 2, R = 1: the best
    possible mean P@k is 0.75)."""
    meta = {"lemma": ["a", "a", "b", "b"], "cell": [LABELS[0], LABELS[1], LABELS[0], LABELS[1]]}
    random = [0.1, 0.5, 0.1, 0.5]
    runs = {"enc": _run({**meta, "p": [0.5, 0.7, 0.3, 0.7]}, random, [1] * 4),
            "mlm": _run({**meta, "p": [0.3, 0.6, 0.3, 0.6]}, random, [1] * 4),
            "lm": _run({**meta, "p": [0.2, 0.6, 0.2, 0.6]}, random, [1] * 4)}
    cmp = compare_models(runs, LABELS, causal="lm", resamples=200, seed=0)
    cell = {(r["model"], r["cell"]): r for r in cmp.cells}
    assert cell[("enc", LABELS[0])]["p_at_k"] == pytest.approx(0.4)
    assert cell[("enc", LABELS[0])]["lift"] == pytest.approx(4.0)
    assert cell[("enc", LABELS[0])]["oracle_p_at_k"] == pytest.approx(0.75)
    assert cell[("enc", LABELS[0])]["share"] == pytest.approx((0.4 - 0.1) / (0.75 - 0.1))
    assert cell[("lm", LABELS[1])]["share"] == pytest.approx((0.6 - 0.5) / (0.75 - 0.5))
    spread = {r["cell"]: r for r in cmp.spreads}
    assert spread[LABELS[0]]["spread_share"] == pytest.approx((0.4 - 0.2) / 0.65)
    assert spread[LABELS[1]]["spread_share"] == pytest.approx((0.7 - 0.6) / 0.25)
    assert spread[LABELS[1]]["spread_p_at_k"] == pytest.approx(0.1)
    assert spread[LABELS[1]]["gain_min"] == pytest.approx(0.1)
    assert spread[LABELS[1]]["little_ratio"] == pytest.approx(1.0)
    (contrast,) = cmp.contrasts
    assert (contrast["rare_cell"], contrast["other_cell"]) == (LABELS[0], LABELS[1])
    assert contrast["difference"] == pytest.approx(0.2 / 0.65 - 0.4)
    (gap,) = cmp.causal_gaps
    assert gap["closest"] == "mlm" and gap["gap"] == pytest.approx(3.0 - 2.0) and gap["causal_lift"] == 2.0
    assert gap["low"] <= gap["gap"] <= gap["high"]
    assert cmp.queries == 4 and cmp.lemmas == 2 and cmp.to_arrow().num_rows == 6


def test_only_queries_every_model_ranked_are_compared():
    meta = {"lemma": ["a", "b"], "cell": [LABELS[0], LABELS[0]]}
    one = _run({**meta, "p": [0.5, 0.1]}, [0.1, 0.1], [1, 1])
    other = one.slice(0, 1)
    cmp = compare_models({"x": one, "y": other}, LABELS, resamples=10)
    assert cmp.queries == 1 and next(r for r in cmp.cells if r["model"] == "x")["p_at_k"] == pytest.approx(0.5)
