"""The Attentive Mimicking findings on hand-made numbers: each criterion with its interval above, below and
straddling its line; which half of AM WNLaMPro tests; the context half untestable without contexts; every quote
verbatim in the paper's text."""

from __future__ import annotations

import pytest

from lexprobe.core.findings import AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE
from lexprobe.rare_words import am_claims


def _row(what, comparison, k, low, width=0.04, words=50):
    return {"what": what, "comparison": comparison, "contexts": k, "words": words, "difference": low + width / 2,
            "low": low, "high": low + width}


def _tables(what, comparison, k, lows):
    """Recovery differences for two target tables, with the given interval lows (plus a 32-context row that
    makes 32 the largest k)."""
    return {name: [_row(what, comparison, k, low), _row("cosine", "am - mean", 32, 0.0)]
            for name, low in zip(("splade-tiny", "GloVe"), lows)}


@pytest.mark.parametrize("lows, verdict", [((0.01, 0.02), AGREES), ((-0.1, -0.2), CONTRADICTS),
                                           ((0.01, -0.02), INCONCLUSIVE)])
def test_the_contexts_accumulate(lows, verdict):
    found = am_claims.contexts_accumulate(_tables("contexts", "am (32) - am (1)", 32, lows), section="am")
    assert found.verdict == verdict and len(found.evidence) == 2
    assert found.evidence[0].name == "splade-tiny: am (32) - am (1)" and found.evidence[0].n == 50


@pytest.mark.parametrize("lows, verdict", [((0.01, 0.02), AGREES), ((-0.1, -0.2), CONTRADICTS),
                                           ((-0.02, 0.02), INCONCLUSIVE)])
def test_am_beats_the_context_only_map_at_one_and_two_contexts(lows, verdict):
    tables = {name: [_row("cosine", "am - linear map", k, low) for k in (1, 2, 32)]
              for name, low in zip(("splade-tiny", "GloVe"), lows)}
    found = am_claims.beats_context_only(tables, section="am")
    assert found.verdict == verdict and len(found.evidence) == 4  # k = 1 and 2, both tables; 32 not judged


@pytest.mark.parametrize("lows, verdict", [((-0.1, -0.2), AGREES), ((0.01, 0.02), CONTRADICTS),
                                           ((-0.02, -0.1), INCONCLUSIVE)])
def test_the_lead_over_the_map_shrinks(lows, verdict):
    found = am_claims.lead_shrinks(_tables("gap", "(am - linear map) at 32 - at 1", 32, lows), section="am")
    assert found.verdict == verdict


@pytest.mark.parametrize("lows, verdict", [((0.01, 0.02), AGREES), ((-0.1, -0.2), CONTRADICTS),
                                           ((-0.02, 0.02), INCONCLUSIVE)])
def test_attention_against_uniform_is_judged_at_the_most_contexts(lows, verdict):
    tables = {name: [_row("cosine", "am - fcm", 32, low), _row("cosine", "am - fcm", 8, -0.5)]
              for name, low in zip(("splade-tiny", "GloVe"), lows)}
    found = am_claims.attention_beats_uniform(tables, section="am")
    assert found.verdict == verdict and len(found.evidence) == 2
    assert "splade-tiny: am - fcm (8 contexts) -0.480" in found.details[0]  # shown, not judged


@pytest.mark.parametrize("lows, verdict", [((-0.1, -0.2), AGREES), ((0.01, 0.02), CONTRADICTS),
                                           ((-0.02, -0.1), INCONCLUSIVE)])
def test_am_context_weighs_the_contexts_more(lows, verdict):
    found = am_claims.context_preset_weighs_contexts(_tables("alpha", "am-context - am", 8, lows), section="am")
    assert found.verdict == verdict


def test_a_table_without_the_row_has_no_evidence():
    assert am_claims.context_preset_weighs_contexts({"GloVe": []}, section="am").verdict == UNTESTABLE


def _gap(rare_low: float, medium_low: float) -> dict:
    out = {}
    for first in ("am", "am-context"):
        for bucket, low in (("rare", rare_low), ("medium", medium_low)):
            out[(f"{first} - original", bucket)] = {"difference": low + 0.02, "low": low, "high": low + 0.04,
                                                    "entries": 100}
    return out


def _share(rare: float) -> dict:
    return {(s, b): {">= 1 context": rare if b == "rare" else 0.9, ">= 8 contexts": rare / 2 if b == "rare" else 0.5}
            for s in ("am", "am-context") for b in ("rare", "medium", "frequent")}


def test_form_half_verdict_and_which_half():
    few = am_claims.am_form_half(_gap(0.01, 0.02), _share(0.01), section="am")
    assert few.verdict == AGREES and "form half only" in few.claim
    assert am_claims.am_form_half(_gap(-0.01, 0.02), _share(0.01), section="am").verdict == INCONCLUSIVE
    assert am_claims.am_form_half(_gap(0.01, -0.1), _share(0.01), section="am").verdict == CONTRADICTS
    assert "form and contexts" in am_claims.am_form_half(_gap(0.01, 0.02), _share(0.8), section="am").claim
    assert "1.0% with >= 1 context" in few.details[0] and ".112" in few.paper_value


def test_context_half_is_untestable_without_contexts():
    none = am_claims.am_context_half(_gap(0.01, 0.02), _share(0.01), section="am")
    assert none.verdict == UNTESTABLE and "1.0% of the probed rare keywords" in none.reason
    assert am_claims.am_context_half(_gap(0.01, 0.02), _share(0.8), section="am").verdict == AGREES
    assert am_claims.am_context_half(_gap(-0.1, 0.02), _share(0.8), section="am").verdict == CONTRADICTS


@pytest.mark.parametrize("low, verdict", [(0.01, AGREES), (-0.1, CONTRADICTS), (-0.02, INCONCLUSIVE)])
def test_simulated_rarity(low, verdict):
    rows = [{"comparison": "am (8) - am (0)", "entries": 80, "difference": low + 0.02, "low": low,
             "high": low + 0.04},
            {"comparison": "am (8) - original", "entries": 80, "difference": -0.1, "low": -0.15, "high": -0.05}]
    found = am_claims.simulated_rarity(rows, section="am")
    assert found.verdict == verdict and found.evidence[0].n == 80
    assert "am (8) - original -0.100 [-0.150, -0.0500]" in found.details[0]
    assert am_claims.simulated_rarity([], section="am").verdict == UNTESTABLE


def test_every_quote_is_the_papers_own_sentence(shared_data):
    text = (shared_data.parent / "papers" / "rare-words-one-token-approximation.txt").read_text(encoding="utf-8")
    for key, (quote, where) in am_claims.QUOTES.items():
        assert quote in text, key
        assert where
