"""The claims of *BERT has uncommon sense* judged on hand-made comparisons: each criterion with intervals above,
below and straddling its line, cells with too few lemmas shown but not judged, the underpowered note, and every
quote verbatim from the paper."""

from __future__ import annotations

import pytest

from lexprobe.core.findings import AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE
from lexprobe.senses import sense_claims as sc
from lexprobe.senses.sense_compare import ModelComparison

RARE, COMMON = "l<500, r<0.25", "l<500, r>=0.25"


def _cells(lifts: dict[str, tuple[float, float, float]], lemmas: int = 20) -> list[dict]:
    return [{"model": "m", "cell": cell, "queries": 40, "lemmas": lemmas, "p_at_k": v * 0.1, "random_p_at_k": 0.1,
             "oracle_p_at_k": 0.9, "lift": v, "lift_low": lo, "lift_high": hi, "share": 0.5, "share_low": 0.4,
             "share_high": 0.6} for cell, (v, lo, hi) in lifts.items()]


def _comparison(cells=(), spreads=(), contrasts=(), gaps=(), causal="lm") -> ModelComparison:
    return ModelComparison(list(cells), list(spreads), list(contrasts), list(gaps), ["m", "lm"], causal, 80, 20, 100)


def test_every_quote_is_the_papers_own_sentence(shared_data):
    paper = (shared_data.parent / "papers" / "bert-has-uncommon-sense.txt").read_text(encoding="utf-8")
    for quote in (sc.ABOVE_QUOTE, sc.RARE_QUOTE, sc.DISTILLED_QUOTE, sc.NAMED_QUOTE):
        assert quote in paper


@pytest.mark.parametrize("rare, verdict", [((1.8, 1.3, 2.4), AGREES), ((0.8, 0.6, 0.95), CONTRADICTS),
                                           ((1.2, 0.9, 1.6), INCONCLUSIVE)])
def test_above_random_by_lift_interval(rare, verdict):
    cmp = _comparison(_cells({RARE: rare, COMMON: (1.2, 1.1, 1.3)}))
    finding = sc.above_random(cmp, "m", corpus="SemCor", label="M", section="senses")
    assert finding.verdict == verdict and finding.quote == sc.ABOVE_QUOTE
    weakest = RARE if rare[1] < 1.1 else COMMON
    assert finding.evidence[0].name == f"{weakest.replace(', ', ' ')} lift"  # the weakest cell first


def test_above_random_leaves_out_cells_of_few_lemmas():
    cells = _cells({COMMON: (1.2, 1.1, 1.3)}) + _cells({RARE: (0.5, 0.2, 0.9)}, lemmas=3)
    finding = sc.above_random(_comparison(cells), "m", corpus="SemCor", label="M", section="senses")
    assert finding.verdict == AGREES and len(finding.evidence) == 1
    assert any("fewer than 5 lemmas" in d and RARE in d for d in finding.details)
    only_few = sc.above_random(_comparison(_cells({RARE: (2.0, 1.5, 3.0)}, lemmas=2)), "m", corpus="SemCor",
                               label="M", section="senses")
    assert only_few.verdict == UNTESTABLE


def _spread(cell: str, ratio: tuple[float, float, float], share: float = 0.1) -> dict:
    return {"cell": cell, "queries": 40, "lemmas": 20, "spread_p_at_k": 0.05, "gain_min": 0.2,
            "spread_share": share, "spread_share_low": 0.0, "spread_share_high": 0.2, "little_ratio": ratio[0],
            "little_ratio_low": ratio[1], "little_ratio_high": ratio[2]}


@pytest.mark.parametrize("ratio, verdict", [((0.3, 0.1, 0.6), AGREES), ((1.5, 1.2, 2.0), CONTRADICTS),
                                            ((0.8, 0.4, 1.3), INCONCLUSIVE)])
def test_little_differentiation_against_the_gain_over_random(ratio, verdict):
    cmp = _comparison(spreads=[_spread(RARE, (9.0, 8.0, 10.0)), _spread(COMMON, ratio)])
    finding = sc.little_differentiation(cmp, corpus="SemCor", section="senses")
    assert finding.verdict == verdict and len(finding.evidence) == 1  # the rare cell is not this claim's


def _contrast(diff: float, low: float, high: float, lemmas: int = 20) -> dict:
    return {"l": "l<500", "rare_cell": RARE, "other_cell": COMMON, "rare_lemmas": lemmas, "other_lemmas": 20,
            "difference": diff, "low": low, "high": high}


@pytest.mark.parametrize("contrast, verdict", [((0.2, 0.05, 0.35), AGREES), ((-0.2, -0.3, -0.1), CONTRADICTS),
                                               ((0.05, -0.1, 0.2), INCONCLUSIVE)])
def test_rare_cells_differ_more(contrast, verdict):
    cmp = _comparison(spreads=[_spread(RARE, (1, 1, 1), 0.3), _spread(COMMON, (1, 1, 1), 0.1)],
                      contrasts=[_contrast(*contrast)])
    finding = sc.rare_differ(cmp, corpus="SemCor", section="senses")
    assert finding.verdict == verdict and finding.quote == sc.RARE_QUOTE


def test_an_interval_too_wide_for_the_papers_effect_is_underpowered():
    spreads = [_spread(RARE, (1, 1, 1), 0.3), _spread(COMMON, (1, 1, 1), 0.1)]
    wide = sc.rare_differ(_comparison(spreads=spreads, contrasts=[_contrast(0.05, -0.2, 0.3)]), corpus="SemCor",
                          section="senses")
    # half-width 0.25: detectable 1.43 * 0.25 = 0.36 > the effect to detect, the other cell's spread 0.1
    assert wide.verdict == INCONCLUSIVE and any(d.startswith("Underpowered") for d in wide.details)
    narrow = sc.rare_differ(_comparison(spreads=spreads, contrasts=[_contrast(0.01, -0.03, 0.05)]),
                            corpus="SemCor", section="senses")
    assert narrow.verdict == INCONCLUSIVE and not any(d.startswith("Underpowered") for d in narrow.details)
    few = sc.rare_differ(_comparison(spreads=spreads, contrasts=[_contrast(0.2, 0.1, 0.3, lemmas=2)]),
                         corpus="SemCor", section="senses")
    assert few.verdict == UNTESTABLE and any("Not judged" in d for d in few.details)


@pytest.mark.parametrize("gap, verdict", [((0.5, 0.2, 0.8), AGREES), ((-0.4, -0.7, -0.1), CONTRADICTS),
                                          ((0.1, -0.2, 0.4), INCONCLUSIVE)])
def test_causal_model_lowest_on_rare_senses(gap, verdict):
    row = {"cell": RARE, "lemmas": 20, "causal": "lm", "closest": "m", "causal_lift": 1.5, "gap": gap[0],
           "low": gap[1], "high": gap[2]}
    finding = sc.causal_lowest(_comparison(gaps=[row]), corpus="STREUSLE", label="LM", section="senses",
                               names={"m": "M"})
    assert finding.verdict == verdict and finding.evidence[0].name == f"{RARE.replace(', ', ' ')}: M - LM lift"


def test_claims_about_absent_models_are_untestable_with_a_reason():
    for finding in sc.not_here(section="senses"):
        assert finding.verdict == UNTESTABLE and finding.reason and finding.quote


def test_comparison_findings_one_row_per_model_and_part():
    cmp = _comparison(_cells({RARE: (1.8, 1.3, 2.4), COMMON: (1.2, 1.1, 1.3)})
                      + [{**c, "model": "lm"} for c in _cells({RARE: (1.4, 1.2, 1.6), COMMON: (1.2, 1.1, 1.3)})],
                      [_spread(RARE, (1, 1, 1), 0.3), _spread(COMMON, (0.3, 0.1, 0.6), 0.1)],
                      [_contrast(0.2, 0.05, 0.35)],
                      [{"cell": RARE, "lemmas": 20, "causal": "lm", "closest": "m", "causal_lift": 1.4, "gap": 0.4,
                        "low": 0.1, "high": 0.7}])
    found = sc.comparison_findings(cmp, corpus="SemCor", labels={"m": "M", "lm": "LM"}, section="senses")
    assert [f.claim for f in found] == ["M above random in every cell (SemCor)", "LM above random in every cell (SemCor)",
                                        "models differ little where r >= 0.25 (SemCor)",
                                        "models differ much more where r < 0.25 (SemCor)",
                                        "LM (causal) lowest on rare senses (SemCor)"]
    assert all(f.verdict == AGREES for f in found)
