"""The claims of *BERT has uncommon sense* judged on this run's model comparison
(:class:`~lexprobe.senses.sense_compare.ModelComparison`), one :class:`~lexprobe.core.findings.Finding` per part.

The text we hold prints no Table-1 number, so no finding has a paper value; where a verdict rests on a sample,
the effect the paper's words describe is read as stated in each criterion, and an inconclusive interval whose
smallest detectable effect (80% power) exceeds it is called underpowered.
"""

from __future__ import annotations

from typing import Sequence

from ..core.findings import (INCONCLUSIVE, Criterion, Evidence, Finding, intervals_above, intervals_below, number,
                             side, untestable)
from .sense_compare import MIN_LEMMAS, ModelComparison

PAPER = "senses"
WHERE = "Results, Table 1"

ABOVE_QUOTE = ("All models perform well above the random baseline across all buckets, and show little "
               "differentiation for buckets with only non-proportionally-rare senses $r\\geq 0.25$.")
RARE_QUOTE = ("Dramatic differences emerge, however, for buckets with proportionally rare senses $r<0.25$, with "
              "GPT-2 (Radford et\u00a0al. 2019) showing the poorest performance.")
DISTILLED_QUOTE = ("In line with general trends, the distilled variants of models (Sanh et\u00a0al. 2020) generally track "
                   "only a few points behind their undistilled variants.")
NAMED_QUOTE = "Overall, bert-base-cased performance is best."

ABOVE_TEXT = (f"in every cell with {MIN_LEMMAS}+ lemmas, the 95% lemma-clustered bootstrap interval of the lift "
              "(mean P@k / the random ranking's mean P@k) lies above 1. The lift, not raw P@k, because the cells' "
              "random baselines differ several-fold (rare senses have few relevant candidates): raw P@k of a rare "
              "cell against a common one compares baselines, while lift above 1 is exactly 'above the random "
              "baseline' in the paper's own metric. Intervals resample lemmas, whose queries share candidates.")
LITTLE_TEXT = ("in every r >= 0.25 cell, the between-model spread of mean P@k (largest minus smallest; the models "
               "share the random baseline, so it is also the spread of their gains over it) is smaller than the "
               "smallest model's gain over random: the 95% interval of spread / smallest gain lies below 1. The "
               "sentence sets 'little differentiation' beside 'well above the random baseline'; its own yardstick "
               "is that distance: models differ from each other less than from chance.")
DIFFER_TEXT = ("per lemma-frequency interval, the between-model spread in the r < 0.25 cell exceeds the spread "
               "in the r >= 0.25 cell: the 95% interval of the difference lies above 0. Spreads are of the share "
               "of the possible gain over chance, (P@k - random) / (best possible P@k - random), because the rare "
               "cells have a lower floor and more headroom: in raw P@k, room alone would make their spreads "
               "larger. 'Dramatic' is read as a rare-sense spread at least twice the other's: the effect to "
               "detect is the other cell's spread, and an inconclusive interval that could not detect it is "
               "underpowered.")
CAUSAL_TEXT = ("in every r < 0.25 cell, the causal model's lift (mean P@k / random) is the lowest: the 95% "
               "interval of (the other models' lowest lift - the causal model's) lies above 0. SmolLM2's hidden "
               "states stand for GPT-2's (both causal LMs, neither trained for representations). Lift, not raw "
               "P@k, though within one cell the order is the same (the models share the baseline). 'Poorest' "
               "among 'dramatic differences' is read as the causal model keeping at most half the closest "
               "model's gain over chance: the effect to detect is half of (closest lift - 1).")


def _cell(label: str) -> str:
    return label.replace(", ", " ")


def above_random(comparison: ModelComparison, model: str, *, corpus: str, label: str, section: str) -> Finding:
    """One model, one corpus: every cell's lift interval above 1."""
    rows = [r for r in comparison.cells if r["model"] == model and r["queries"]]
    judged = sorted((r for r in rows if r["lemmas"] >= MIN_LEMMAS), key=lambda r: r["lift_low"])
    evidence = [Evidence(f"{_cell(r['cell'])} lift", r["lift"], r["lift_low"], r["lift_high"], n=r["lemmas"])
                for r in judged]
    details = ["Lift per cell (mean P@k / random): " + "; ".join(
        f"{r['cell']} {number(r['p_at_k'])} / {number(r['random_p_at_k'])} = x{number(r['lift'])} "
        f"({r['queries']} queries, {r['lemmas']} lemmas)" for r in rows) + "."]
    few = [r["cell"] for r in rows if r["lemmas"] < MIN_LEMMAS]
    if few:
        details.append(f"Shown, not judged (fewer than {MIN_LEMMAS} lemmas): {', '.join(few)}.")
    return Finding(PAPER, f"{label} above random in every cell ({corpus})", intervals_above(1.0, ABOVE_TEXT),
                   tuple(evidence),
                   section=section, details=tuple(details), quote=ABOVE_QUOTE, where=WHERE)


def little_differentiation(comparison: ModelComparison, *, corpus: str, section: str) -> Finding:
    """Cells of r >= 0.25: the models' spread smaller than their smallest gain over random."""
    rows = [r for r in comparison.spreads if not r["cell"].split(", ")[1].startswith("r<") and r["queries"]
            and r["lemmas"] >= MIN_LEMMAS]
    evidence = [Evidence(f"{_cell(r['cell'])} spread / smallest gain", r["little_ratio"], r["little_ratio_low"],
                         r["little_ratio_high"], n=r["lemmas"]) for r in sorted(rows, key=lambda r: -r["little_ratio_high"])]
    details = ["Spread of mean P@k and the smallest gain over random: " + "; ".join(
        f"{r['cell']} {number(r['spread_p_at_k'])} vs {number(r['gain_min'])}" for r in rows) + "."]
    return Finding(PAPER, f"models differ little where r >= 0.25 ({corpus})",
                   intervals_below(1.0, LITTLE_TEXT), tuple(evidence), section=section, details=tuple(details),
                   quote=ABOVE_QUOTE, where=WHERE)


def _underpowered(evidence: Sequence[Evidence], targets: Sequence[float], verdict: str) -> list[str]:
    """Lines naming each inconclusive interval that could not detect its target effect."""
    if verdict != INCONCLUSIVE:
        return []
    out = []
    for e, target in zip(evidence, targets):
        if e.detectable is not None and side(e, 0.0) == INCONCLUSIVE and e.detectable > target:
            out.append(f"Underpowered: {e.name} could detect {number(e.detectable)} (80% power) but the effect the "
                       f"paper describes is {number(target)} here; more lemmas in the cell would decide it.")
    return out


def rare_differ(comparison: ModelComparison, *, corpus: str, section: str) -> Finding:
    """Per lemma-frequency interval: spread(r < 0.25) - spread(r >= 0.25) above 0."""
    rows = [r for r in comparison.contrasts if min(r["rare_lemmas"], r["other_lemmas"]) >= MIN_LEMMAS]
    spread = {r["cell"]: r["spread_share"] for r in comparison.spreads}
    evidence = [Evidence(f"{r['l']}: rare - other spread", r["difference"], r["low"], r["high"], n=r["rare_lemmas"])
                for r in rows]
    finding = Finding(PAPER, f"models differ much more where r < 0.25 ({corpus})",
                      intervals_above(0.0, DIFFER_TEXT), tuple(evidence), section=section, quote=RARE_QUOTE,
                      where=WHERE)
    details = ["Between-model spread of the share of possible gain: " + "; ".join(
        f"{c} {number(v)}" for c, v in spread.items()) + "."]
    details += _underpowered(evidence, [spread[r["other_cell"]] for r in rows], finding.verdict)
    skipped = [r["rare_cell"] for r in comparison.contrasts if r not in rows]
    if skipped:
        details.append(f"Not judged (a cell with fewer than {MIN_LEMMAS} lemmas): {', '.join(skipped)}.")
    return _with_details(finding, details)


def causal_lowest(comparison: ModelComparison, *, corpus: str, label: str, section: str,
                  names: dict[str, str] | None = None) -> Finding:
    """Per r < 0.25 cell: the other models' lowest lift minus the causal model's, above 0 (``names``: model ->
    its name in the report)."""
    names = names or {}
    rows = [r for r in comparison.causal_gaps if r["lemmas"] >= MIN_LEMMAS]
    evidence = [Evidence(f"{_cell(r['cell'])}: {names.get(r['closest'], r['closest'])} - {label} lift", r["gap"],
                         r["low"], r["high"], n=r["lemmas"]) for r in rows]
    finding = Finding(PAPER, f"{label} (causal) lowest on rare senses ({corpus})", intervals_above(0.0, CAUSAL_TEXT),
                      tuple(evidence), section=section, quote=RARE_QUOTE, where=WHERE)
    details = [f"{label}'s lift in the rare-sense cells: " + "; ".join(
        f"{r['cell']} x{number(r['causal_lift'])}" for r in comparison.causal_gaps) + "."]
    details += _underpowered(evidence, [(r["gap"] + r["causal_lift"] - 1) / 2 for r in rows], finding.verdict)
    return _with_details(finding, details)


def _with_details(finding: Finding, details: Sequence[str]) -> Finding:
    return Finding(finding.paper, finding.claim, finding.criterion, finding.evidence, section=finding.section,
                   details=tuple(details), quote=finding.quote, where=finding.where, paper_value=finding.paper_value)


def not_here(*, section: str) -> list[Finding]:
    """The paper's claims about models this project does not have."""
    def none(reason: str) -> Criterion:
        return Criterion(f"untestable here: {reason}", lambda _e: untestable(reason))

    return [Finding(PAPER, "distilled models a few points behind their teachers", none(
                        "MiniLM is distilled, but no teacher of it is here to compare with"),
                    (Evidence("models here", 3),), section=section, quote=DISTILLED_QUOTE, where=WHERE),
            Finding(PAPER, "bert-base-cased best; RoBERTa, XLNet worse on rare senses", none(
                        "none of BERT, ALBERT, RoBERTa or XLNet is here (no hub access)"),
                    (Evidence("models here", 3),), section=section, quote=NAMED_QUOTE, where=WHERE)]


def comparison_findings(comparison: ModelComparison, *, corpus: str, labels: dict[str, str],
                        section: str) -> list[Finding]:
    """Every finding of one corpus: each model above random, little differentiation where r >= 0.25, much more
    where r < 0.25, and the causal model lowest on rare senses (when the comparison names one)."""
    out = [above_random(comparison, m, corpus=corpus, label=labels.get(m, m), section=section)
           for m in comparison.models]
    out += [little_differentiation(comparison, corpus=corpus, section=section),
            rare_differ(comparison, corpus=corpus, section=section)]
    if comparison.causal:
        out.append(causal_lowest(comparison, corpus=corpus, label=labels.get(comparison.causal, comparison.causal),
                                 section=section, names=labels))
    return out
