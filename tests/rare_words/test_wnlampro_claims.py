"""The OTA and WNLaMPro claims of "Rare words" on hand-made numbers: each criterion with an interval above, below
and straddling its line, the quotes verbatim from the paper, and the power sizing by hand."""

from __future__ import annotations

import pytest

from lexprobe.core.findings import AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE
from lexprobe.rare_words import wnlampro_claims as claims


def test_every_quote_is_the_papers_own_sentence(shared_data):
    text = (shared_data.parent / "papers" / "rare-words-one-token-approximation.txt").read_text()
    for quote, where in claims.QUOTES.values():
        assert quote in text, quote
        assert where.startswith("Section ")


# ------------------------------------------------------------------------------------------------ Figure 1


def _paired(diffs: dict[int, tuple[float, float, float]]) -> list[dict]:
    return [{"iteration": at, "init": "zeros", "lr": 1e-3, "static": 0.5, "random": 0.5 - d, "difference": d,
             "low": lo, "high": hi, "words": 100} for at, (d, lo, hi) in diffs.items()]


def _summary(best: int) -> list[dict]:
    return [{"contexts": "static", "best_iteration": 400, "best": 0.3, "iterations_run": 900},
            {"contexts": "random", "best_iteration": best, "best": 0.2, "iterations_run": best + 500}]


def test_checkpoints_are_a_quarter_half_three_quarters_and_the_minimum():
    rows = _paired({at: (0.1, 0.05, 0.15) for at in range(100, 1300, 100)})
    assert [r["iteration"] for r in claims.checkpoints(rows, 800)] == [200, 400, 600, 800]
    assert [r["iteration"] for r in claims.checkpoints(rows, 1000)] == [200, 500, 700, 1000]  # ties: the earlier
    assert claims.checkpoints(rows, 50) == []


def test_random_beats_static_above_below_straddling():
    above = _paired({at: (0.1, 0.05, 0.15) for at in range(100, 900, 100)})
    f = claims.figure1_random_beats_static(above, _summary(800), section="ota", model="m")
    assert f.verdict == AGREES and f.evidence[0].name == "static - random at 800" and len(f.evidence) == 4
    assert f.quote == claims.QUOTES["figure1"][0] and f.paper_value
    below = _paired({at: (-0.1, -0.15, -0.05) for at in range(100, 900, 100)})
    assert claims.figure1_random_beats_static(below, _summary(800), section="o", model="m").verdict == CONTRADICTS
    straddles = _paired({**{at: (0.1, 0.05, 0.15) for at in range(100, 900, 100)}, 200: (0.02, -0.01, 0.05)})
    assert claims.figure1_random_beats_static(straddles, _summary(800), section="o",
                                                        model="m").verdict == INCONCLUSIVE
    # a checkpoint after the minimum does not count
    late = _paired({**{at: (0.1, 0.05, 0.15) for at in range(100, 900, 100)}, 1200: (-0.1, -0.2, -0.05)})
    assert claims.figure1_random_beats_static(late, _summary(800), section="o", model="m").verdict == AGREES
    assert claims.figure1_random_beats_static([], [], section="o", model="m").verdict == UNTESTABLE


def test_the_minimum_is_shown_not_judged():
    f = claims.figure1_minimum(_summary(2300), section="ota", model="splade-tiny", words=100)
    assert f.verdict == UNTESTABLE and "splade-tiny" in f.reason
    assert f.evidence[0].text() == "random minimum at iteration 2300" and f.paper_value.endswith("4000 iterations")


# ------------------------------------------------------------------------------------------------ Table 4


def _versus(model: str, ratios: dict[str, float]) -> list[dict]:
    paper = {"antonym": 366, "hypernym": 7726, "cohyponym": 10826, "corruption": 2880}
    return [{"model": model, "relation": rel, "bucket": bucket, "entries": round(ratio * paper[rel]),
             "paper_entries": paper[rel], "entries_ratio": ratio, "mean_targets": 4.0, "paper_mean_targets": 4.0,
             "targets_ratio": 1.25}
            for rel, ratio in ratios.items() for bucket in ("rare", "all")]


def test_poisson_tolerance_by_hand():
    assert claims.poisson_tolerance(10000) == pytest.approx(0.0196, abs=1e-5)
    assert claims.poisson_tolerance(366) == pytest.approx(1.959964 / 19.131126, rel=1e-6)


def test_table4_judged_only_for_berts_vocabulary():
    inside = _versus("splade-tiny", {"antonym": 1.05, "hypernym": 0.99, "cohyponym": 1.01, "corruption": 1.0})
    outside = _versus("splade-tiny", {"antonym": 2.97, "hypernym": 1.64, "cohyponym": 1.66, "corruption": 1.0})
    edge = _versus("splade-tiny", {"antonym": 1.05, "hypernym": 1.03, "cohyponym": 1.0, "corruption": 1.0})
    (a,), (b,) = claims.table4(inside, section="w"), claims.table4(outside, section="w")
    assert a.verdict == AGREES and b.verdict == CONTRADICTS
    assert b.evidence[0].name == "entries antonym rebuilt/paper"  # the farthest first
    assert all("corruption" not in e.name for e in a.evidence)
    causes = {d.split(":")[0]: d for d in b.details}  # the causes carry this run's ratios
    assert "antonym 2.97x" in causes["V"] and "rare 2.97x, all 2.97x" in causes["antonym"]
    assert "mean targets 1.25x" in causes["cohyponym"]
    # hypernym 3% off is outside its +-2.2% spread: a single value decides
    assert claims.table4(edge, section="w")[0].verdict == CONTRADICTS
    assert claims.table4(_versus("smollm2", {"antonym": 1.0, "hypernym": 1.0}), section="w") == []  # shown only


# ------------------------------------------------------------------------------------------------ Figure 2


def test_entries_for_power_by_hand():
    # (1.959964 + 0.841621)^2 = 7.84888; * 2 * 0.25^2 * (0.5^2 + 0.5^2) / 0.12^2 = 34.07 -> 35
    assert claims.entries_for_power(0.25, 0.12, [0.5, 0.5]) == 35
    assert claims.entries_for_power(0.25, 0.12, [1.0]) == 69  # 68.1 -> 69
    assert claims.entries_for_power(0.0, 0.12, [1.0]) == 2
    with pytest.raises(ValueError):
        claims.entries_for_power(0.2, 0.0, [1.0])


def _effect(model: str, d: float, lo: float, hi: float) -> dict:
    return {"model": model, "difference": d, "low": lo, "high": hi, "entries": 240, "per_cell": 40,
            "bucket_difference": d, "bucket_low": lo, "bucket_high": hi, "others": "Other strategies: none."}


def test_frequency_effect_above_below_straddling_and_its_power():
    above, below, straddles = (claims.frequency_effect([_effect("m", *v)], section="w")[0]
                               for v in ((0.1, 0.05, 0.15), (-0.1, -0.15, -0.05), (0.05, -0.09, 0.18)))
    assert (above.verdict, below.verdict, straddles.verdict) == (AGREES, CONTRADICTS, INCONCLUSIVE)
    # half-width 0.025 -> detects 0.0357 < 0.122; half-width 0.135 -> 0.193: underpowered
    assert "(powered;" in above.details[0] and "underpowered" in straddles.details[0]
    assert above.paper_value == claims.FIGURE2_VALUE and above.where == "Section 6.2, Figure 2"


def _gaps(model: str, values: dict[tuple[str, str], tuple[float, float, float]]) -> dict:
    return {(model, b, bucket): {"difference": d, "low": lo, "high": hi, "entries": 50}
            for (b, bucket), (d, lo, hi) in values.items()}


def test_ota_against_each_baseline_per_bucket():
    good = (0.1, 0.05, 0.15)
    gaps = _gaps("m", {(b, k): good for b in claims.BASELINES for k in claims.BUCKETS})
    gaps[("m", "avg", "rare")] = {"difference": 0.001, "low": -0.0001, "high": 0.002, "entries": 50}
    gaps[("m", "last", "frequent")] = {"difference": -0.05, "low": -0.08, "high": -0.02, "entries": 50}
    rare, medium, frequent = claims.ota_vs_baselines(gaps, section="w")
    assert (rare.verdict, medium.verdict, frequent.verdict) == (INCONCLUSIVE, AGREES, CONTRADICTS)
    assert rare.claim == "OTA beats first, last and avg on rare keywords (m)"
    assert rare.evidence[0].name == "OTA - avg" and frequent.evidence[0].name == "OTA - last"  # the weakest first


def _marginal(d: float, lo: float, hi: float) -> dict:
    return {"model": "m", "difference": d, "low": lo, "high": hi, "entries": 200, "original": 0.2,
            "original_low": 0.15, "original_high": 0.25}


def test_ota_close_to_the_original_within_the_originals_half_width():
    inside, outside, straddles = (claims.ota_vs_original([_marginal(*v)], section="w")[0]
                                  for v in ((-0.01, -0.03, 0.01), (-0.1, -0.14, -0.07), (-0.04, -0.08, 0.0)))
    assert (inside.verdict, outside.verdict, straddles.verdict) == (AGREES, CONTRADICTS, INCONCLUSIVE)
    assert "+-0.0500" in inside.criterion.text


def test_the_frequency_sample_is_sized_by_the_power_argument():
    """Four cells of RR (0, 1): pooled sd sqrt(0.5); relation weights 20 and 60 of 80 (sum w^2 = 0.625):
    7.84888 * 2 * 0.5 * 0.625 / 0.122^2 = 329.6 -> 330 entries per cell, then the floor and the cap."""
    from lexprobe.rare_words.run_rare_words import frequency_sample_size

    rows = [{"strategy": "original", "id": n, "relation": rel, "bucket": b, "rr": rr}
            for n, (rel, b, rr) in enumerate((rel, b, rr) for rel in ("antonym", "hypernym")
                                             for b in ("rare", "frequent") for rr in (0.0, 1.0))]
    population = {("antonym", "rare"): 10, ("antonym", "frequent"): 10, ("hypernym", "rare"): 30,
                  ("hypernym", "frequent"): 30}
    assert frequency_sample_size(rows, population, cap=500) == {"per_cell": 330, "needed": 330,
                                                                 "sd": pytest.approx(0.5 ** 0.5)}
    assert frequency_sample_size(rows, population, cap=120)["per_cell"] == 120
    steady = [dict(r, rr=0.5) for r in rows]  # no spread: the floor
    assert frequency_sample_size(steady, population, cap=120, floor=20)["per_cell"] == 20
