"""The OTA and WNLaMPro claims of "Rare words" (Schick & Schütze) checked against a run's tables, one
:class:`~lexprobe.core.findings.Finding` per claim part: Figure 1 (random against static contexts, where the random
variant's minimum lies), Table 4's sizes, the frequency effect per model, OTA against each subword baseline per
frequency bucket, and OTA against the original multi-token keyword.

Decisions where the paper leaves room (each documented in its criterion):

- "much better" and "heavily" are judged as a direction (the interval above 0); how much is shown, not judged.
- "only marginal": the OTA - original difference must lie within the half-width of the original's own MRR
  interval: a difference smaller than the precision to which the original's score is known here is marginal.
- The frequency effect compares frequent with rare keywords within each relation that has both (antonym,
  hypernym, cohyponym+), weighted by the relations' sizes: the rare bucket alone holds the corruptions, so a bucket
  mean mixes relations differently in each bucket. The bucket means themselves (Figure 2) are in the details.
- Table 4's sizes depend on V (the Westbury corpus's vocabulary) and T (BERT's): judged where T is BERT's, each
  relation's entries within the Poisson spread of the paper's count (1.96 / sqrt(n), the chance spread of a count
  of n); the corruptions' count is set by construction and only shown.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from ..core.findings import Z80, Z95, Criterion, Evidence, Finding, combine, number, side, untestable, within

PAPER = "rare-words"

QUOTES = {
    "figure1": ("after only a few iterations random consistently outperforms static.", "Section 6.1, Figure 1"),
    "minimum": ("For the random variant, the average cosine distance reaches its minimum at 4000 iterations.",
                "Section 6.1, Figure 1"),
    "table4": ("Statistics about the sizes of these subsets and the mean number of target words per relation are "
               "listed in Table\u00a04.", "Section 5, Table 4"),
    "frequency": ("We can see that for all models, the score depends heavily on the word frequency.",
                  "Section 6.2, Figure 2"),
    "baselines": ("Notably, OTA performs much better than all of the above baselines, regardless of word frequency.",
                  "Section 6.2, Figure 2"),
    "marginal": ("Furthermore, the difference in performance between OTA’s single embeddings and BERT’s original, "
                 "multi-token embeddings is only marginal, allowing us to conclude that OTA is indeed able to infer "
                 "single-token embeddings of decent quality for multi-token words.", "Section 6.2, Figure 2"),
}
# The paper prints Figure 2 as bars only. Its authors' BERTRAM paper (Table 1, WNLaMPro test MRR of BERT-base, read
# second-hand: /work/shared/ATTENTIVE-MIMICKING.md) gives rare 0.112 and medium 0.234: a frequency effect of at least
# 0.12 (frequent keywords score higher still), the effect size the frequency sample is sized for.
PAPER_FREQUENCY_EFFECT = 0.234 - 0.112
FIGURE2_VALUE = ("BERT-base: bars only (Figure 2); BERTRAM's Table 1 (same authors, test, second-hand): rare 0.112, "
                 "medium 0.234")
BUCKETS = ("rare", "medium", "frequent")
BASELINES = ("first", "last", "avg")
TABLE4_JUDGED = {"splade-tiny": "its vocabulary is bert-base-uncased's, the paper's T"}


def _finding(key: str, claim: str, criterion: Criterion, evidence, *, section: str, paper_value: str = "",
             details: Sequence[str] = ()) -> Finding:
    quote, where = QUOTES[key]
    return Finding(PAPER, claim, criterion, tuple(evidence), section=section, details=tuple(details), quote=quote,
                   where=where, paper_value=paper_value)


def _interval(name: str, row: Mapping) -> Evidence:
    """A difference with its interval from a :func:`lexprobe.rare_words.probing_scores.compare_strategies` row."""
    return Evidence(name, float(row["difference"]), float(row["low"]), float(row["high"]), int(row["entries"]))


# ------------------------------------------------------------------------------------------------ Figure 1


def checkpoints(paired: Sequence[Mapping], until: int, parts: int = 4) -> list[Mapping]:
    """The paired rows at ``parts`` evenly spaced iterations up to ``until`` (the last at ``until`` or the nearest
    before it): the first a quarter of the way, "after only a few iterations"."""
    rows = [r for r in paired if r["iteration"] <= until]
    if not rows:
        return []
    picks = {min(rows, key=lambda r: abs(r["iteration"] - until * k / parts))["iteration"] for k in range(1, parts + 1)}
    return [r for r in rows if r["iteration"] in picks]


def figure1_random_beats_static(paired: Sequence[Mapping], summary: Sequence[Mapping], *, section: str,
                                model: str) -> Finding:
    """Static minus random distance at four checkpoints up to the random variant's minimum, each a paired
    bootstrap interval over the words: all above 0 = "consistently outperforms" (the paper's "after only a few
    iterations": from a quarter of the way on)."""
    best = next((int(r["best_iteration"]) for r in summary if r["contexts"] == "random"), None)
    rows = checkpoints(paired, best) if best else []
    evidence = [Evidence(f"static - random at {r['iteration']}", float(r["difference"]), float(r["low"]),
                         float(r["high"]), int(r["words"])) for r in rows[::-1]]
    above = sum(r["low"] > 0 for r in paired)
    criterion = Criterion(
        "static minus random mean cosine distance to e(w), paired over the same words (bootstrap 95% interval), "
        "above 0 at a quarter, half, three quarters and all of the way to the random variant's minimum: one "
        "variant 'consistently outperforms' the other when it is closer at every stage of the run, not only at "
        "its end; the first checkpoint stands for 'after only a few iterations'",
        lambda ev: combine(side(e, 0) for e in ev))
    return _finding("figure1", f"Figure 1: random contexts beat static ones ({model})", criterion, evidence,
                    section=section, paper_value="BERT-base, 1,000 words: random below static after a few "
                                                 "iterations (curves only)",
                    details=(f"The paired interval lies above 0 at {above} of the {len(paired)} logged iterations.",))


def figure1_minimum(summary: Sequence[Mapping], *, section: str, model: str, words: int) -> Finding:
    """Where the random variant's mean distance is lowest: shown; the paper's iteration count is BERT-base's."""
    random = next((r for r in summary if r["contexts"] == "random"), None)
    evidence = () if random is None else (Evidence("random minimum at iteration", int(random["best_iteration"])),
                                          Evidence("mean distance there", float(random["best"])),
                                          Evidence("iterations run", int(random["iterations_run"])))
    criterion = Criterion(
        "shown, not judged: the iteration of the minimum depends on the model's size and depth (BERT-base, 12 "
        "layers of 768, against the model here) at the same Adam rate and start",
        lambda ev: untestable(f"the paper's count is BERT-base's; {model} is another model (the minimum found here, "
                              f"over {words} words, is shown)"))
    return _finding("minimum", f"Figure 1: the random variant's minimum ({model})", criterion, evidence,
                    section=section, paper_value="BERT-base: 4000 iterations")


# ------------------------------------------------------------------------------------------------ Table 4

# Why the rebuilt Table 4 differs from the paper's; the ratios come from the run's rows, the other readings of the
# text measured once are in docs/rare-words.md ("Table 4: other readings measured").
TABLE4_CAUSES = {
    "V": "the paper's V is the vocabulary of the Westbury Wikipedia corpus (not available): here every lowercased "
         "WordNet lemma name is a keyword, and those wordfreq lacks count as rare, so rare buckets run large "
         "(rare entries, rebuilt / paper: {rare}).",
    "antonym": "the most frequent sense by WordNet's sense counts (Table 2's general -> specific needs it); every "
               "bucket is larger than the paper's ({antonym}); no other reading of the text measured reaches the "
               "paper's count: not explained.",
    "hypernym": "minimum depth 6, as the text says and Table 2 needs (game for basketball, product for book sit at "
                "depth 6); depth 7 comes near the paper's count but loses those examples ({hypernym}).",
    "cohyponym": "the same V and depth as hypernym; hyponyms within 4 of each hypernym (the text; Table 2's harmonium "
                 "-> sax is 4 below wind_instrument); mean targets {targets} of the paper's, not explained "
                 "({cohyponym}).",
}


def table4_causes(rows: Sequence[Mapping]) -> list[str]:
    """:data:`TABLE4_CAUSES` filled with one model's ratios (rows of
    :func:`lexprobe.rare_words.wnlampro_build.table4_against_paper`)."""
    ratio = {(r["relation"], r["bucket"]): r for r in rows}

    def buckets(relation: str) -> str:
        return ", ".join(f"{b} {number(ratio[(relation, b)]['entries_ratio'])}x" for b in BUCKETS + ("all",)
                         if (relation, b) in ratio and ratio[(relation, b)]["paper_entries"])

    fill = {rel: buckets(rel) or "not built" for rel in ("antonym", "hypernym", "cohyponym")}
    fill["rare"] = ", ".join(f"{rel} {number(ratio[(rel, 'rare')]['entries_ratio'])}x"
                             for rel in ("antonym", "hypernym", "cohyponym") if (rel, "rare") in ratio) or "none"
    fill["targets"] = (f"{number(ratio[('cohyponym', 'all')]['targets_ratio'])}x" if ("cohyponym", "all") in ratio
                       else "unknown")
    return [f"{key}: {text.format(**fill)}" for key, text in TABLE4_CAUSES.items()]



def poisson_tolerance(n: int) -> float:
    """The relative 95% chance spread of a count of ``n``: 1.96 / sqrt(n)."""
    return Z95 / math.sqrt(n)


def table4(versus: Sequence[Mapping], *, section: str) -> list[Finding]:
    """Table 4's sizes from rows of :func:`lexprobe.rare_words.wnlampro_build.table4_against_paper` with a
    ``model`` column, one finding per model whose vocabulary is the paper's (``TABLE4_JUDGED``; the others' sizes
    differ by construction: their tables are shown, not judged). Each relation but the corruptions (their count
    is the build's setting) is one evidence: the rebuilt / paper ratio of its entries, the farthest first."""
    out = []
    for model, why in TABLE4_JUDGED.items():
        rows = [r for r in versus if r["model"] == model and r["bucket"] == "all"]
        if not rows:
            continue
        judged = sorted((r for r in rows if r["relation"] != "corruption"), key=lambda r: -abs(r["entries_ratio"] - 1))
        evidence = tuple(Evidence(f"entries {r['relation']} rebuilt/paper", float(r["entries_ratio"])) for r in judged)
        tol = {f"entries {r['relation']} rebuilt/paper": poisson_tolerance(r["paper_entries"]) for r in judged}
        spreads = ", ".join(f"{r['relation']} +-{poisson_tolerance(r['paper_entries']):.1%}" for r in judged)
        criterion = Criterion(
            "each relation's entries (rebuilt / paper) within 1 +- 1.96/sqrt(n) of the paper's count n, the chance "
            f"spread of a count ({spreads}); the corruptions' count is the build's setting, not judged; only where "
            "the model's vocabulary is the paper's T", lambda ev, tol=tol: combine(within(e, 1.0, tol[e.name])
                                                                               for e in ev))
        targets = "; ".join(f"{r['relation']} {number(r['mean_targets'])} vs {number(r['paper_mean_targets'])}"
                            for r in rows)
        out.append(_finding("table4", f"Table 4: the rebuilt sizes ({model})", criterion, evidence, section=section,
                            paper_value="BERT-base-uncased's T: antonym 366, hypernym 7,726, cohyponym+ 10,826, "
                                        "corruption 2,880 entries",
                            details=(f"Judged for {model}: {why}. Mean targets (rebuilt vs paper): {targets}.",
                                     "Causes of the differences:",
                                     *table4_causes([r for r in versus if r["model"] == model]))))
    return out


# ------------------------------------------------------------------------------------------------ Figure 2


def entries_for_power(sd: float, effect: float, weights: Sequence[float]) -> int:
    """Entries per (relation, bucket) cell for a difference of two buckets, standardised over relations with
    ``weights`` (summing to 1), to be detected at ``effect`` by its 95% interval with 80% power when each entry's
    RR has standard deviation ``sd``: n = (z_0.975 + z_0.8)^2 * 2 sd^2 * sum w^2 / effect^2, rounded up."""
    if effect <= 0 or sd < 0:
        raise ValueError("the effect must be positive and the standard deviation not negative")
    return max(2, math.ceil((Z95 + Z80) ** 2 * 2 * sd ** 2 * sum(w * w for w in weights) / effect ** 2))


def frequency_effect(effects: Sequence[Mapping], *, section: str) -> list[Finding]:
    """One finding per model from rows (``model``, ``difference``, ``low``, ``high``, ``entries``, ``per_cell``,
    ``bucket_difference|low|high``, ``others``: text): frequent minus rare MRR of the original keywords within
    relations (:func:`lexprobe.rare_words.probing_scores.relation_gap`)."""
    out = []
    for r in effects:
        e = Evidence("frequent - rare (within relations)", float(r["difference"]), float(r["low"]), float(r["high"]),
                     int(r["entries"]))
        detectable = e.detectable
        verdict = "powered" if detectable is not None and detectable <= PAPER_FREQUENCY_EFFECT else "underpowered"
        power = ("" if detectable is None else
                 f"Smallest effect this sample detects: {number(detectable)} against the paper's "
                 f"{number(PAPER_FREQUENCY_EFFECT)} ({verdict}; {r['per_cell']} entries per cell sized by the power "
                 "argument).")
        criterion = Criterion(
            "frequent minus rare MRR of the original keywords, within each relation that has both buckets (antonym, "
            "hypernym, cohyponym+) and weighted by the relations' sizes, its bootstrap 95% interval (cells "
            "resampled on their own) above 0: 'depends on the word frequency' read as 'frequent words score "
            "higher', with the relation mix held fixed (the rare bucket alone holds the corruptions)",
            lambda ev: side(ev[0], 0))
        out.append(_finding("frequency", f"frequent keywords score higher than rare ones ({r['model']})", criterion,
                            (e,), section=section, paper_value=FIGURE2_VALUE,
                            details=tuple(d for d in (
                                power, f"Bucket means as in Figure 2 (all relations): frequent - rare "
                                       f"{number(r['bucket_difference'])} [{number(r['bucket_low'])}, "
                                       f"{number(r['bucket_high'])}].", r.get("others", "")) if d)))
    return out


def ota_vs_baselines(gaps: Mapping[tuple[str, str, str], Mapping], *, section: str) -> list[Finding]:
    """One finding per (model, bucket): OTA minus each of first, last, avg, paired over the bucket's entries
    (``gaps[(model, baseline, bucket)]``: :func:`lexprobe.rare_words.probing_scores.compare_strategies` rows);
    the closest baseline first."""
    criterion = Criterion(
        "OTA minus each subword baseline (first, last, avg), MRR paired over the same entries of the bucket "
        "(bootstrap 95% interval, entries resampled within their cell), above 0 for all three: 'better than all "
        "of the above baselines' in each frequency bucket ('regardless of word frequency'); how much better "
        "('much') is shown, not judged", lambda ev: combine(side(e, 0) for e in ev))
    out = []
    for model in dict.fromkeys(k[0] for k in gaps):
        for bucket in BUCKETS:
            rows = [(b, gaps[(model, b, bucket)]) for b in BASELINES if (model, b, bucket) in gaps]
            if not rows:
                continue
            evidence = sorted((_interval(f"OTA - {b}", g) for b, g in rows), key=lambda e: e.low)
            out.append(_finding("baselines", f"OTA beats first, last and avg on {bucket} keywords ({model})",
                                criterion, evidence, section=section, paper_value="BERT-base: bars only (Figure 2)"))
    return out


def ota_vs_original(rows: Sequence[Mapping], *, section: str) -> list[Finding]:
    """One finding per model from rows (``model``, OTA - original ``difference|low|high|entries``, the original's
    MRR interval ``original``, ``original_low``, ``original_high``): the paired difference within the half-width of
    the original's own interval."""
    out = []
    for r in rows:
        margin = (float(r["original_high"]) - float(r["original_low"])) / 2
        e = _interval("OTA - original", r)
        criterion = Criterion(
            f"the paired bootstrap 95% interval of OTA minus original MRR (all entries) inside +-{number(margin)}, "
            "the half-width of the original's own MRR interval here: a difference smaller than the precision to "
            "which the original's score is known is 'only marginal'; an interval wholly outside contradicts",
            lambda ev, m=margin: within(ev[0], 0.0, m))
        out.append(_finding("marginal", f"OTA is close to the original multi-token keyword ({r['model']})", criterion,
                            (e,), section=section, paper_value="BERT-base: bars only (Figure 2)",
                            details=(f"Original MRR {number(r['original'])} [{number(r['original_low'])}, "
                                     f"{number(r['original_high'])}]; the margin is its half-width.",)))
    return out

