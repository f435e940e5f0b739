"""The claims of "Rare words" (Schick & Schütze) checked against a run's tables, as
:class:`~lexprobe.core.findings.Finding` objects: OTA's single-token recovery (Figure 1), the rebuilt Table 4, the
frequency effect and OTA against the subword baselines (Figure 2). Attentive Mimicking's are in :mod:`.am_claims`."""

from __future__ import annotations

import math
from typing import Sequence

from ..core.findings import Criterion, Evidence, Finding, intervals_above

PAPER = "rare-words"

STATEMENTS = {
    "recovery": "The paper (Figure 1): both context variants move far from their start towards the true "
                "embeddings; random contexts end closer than static ones.",
    "table4": "The paper's Table 4: antonym 366, hypernym 7,726, cohyponym+ 10,826, corruption 2,880 entries.",
    "frequency": "The paper: for all models the score depends heavily on the word frequency (rare words score "
                 "lowest).",
    "ota": "The paper: OTA performs much better than the first, last and avg baselines, and close to the original "
           "multi-token keyword.",
}
TABLE4_TOLERANCE = 0.15

# Why the rebuilt Table 4 still differs from the paper's, measured on WordNet 3.0 with bert-base-uncased's vocabulary
# (SPLADE-tiny's) and the defaults (min_depth 6, one part of speech per word, hyponyms within 4 of each hypernym).
# Table 4 counts entries after the one-token filter (an entry needs its targets in T), as the rebuild does.
TABLE4_CAUSES = {
    "V": "(numbers for bert-base-uncased's vocabulary, SPLADE-tiny's) the paper's V is the vocabulary of the "
         "Westbury Wikipedia corpus (not available): here every lowercased "
         "WordNet lemma name is a keyword, and those wordfreq lacks count as rare, so the rare buckets are too "
         "large (hypernym 1,867 vs 1,191, cohyponym 3,573 vs 1,960; all of them absent from wordfreq). No offline "
         "list stands in: GloVe's 400k vocabulary as V stops near the same threshold and leaves 139 rare hypernym "
         "entries (antonym 2, cohyponym 205).",
    "antonym": "1,087 entries (2.97x), 1.0 targets: the most frequent sense by WordNet's sense counts (Table 2's "
               "general -> specific needs it). Every bucket is too large (rare 2.3x, medium 2.5x, frequent 3.2x) "
               "with about the paper's shares (9/14/78% vs 11/16/73%). Other readings measured: WordNet's first "
               "synset over all parts of speech 902 (loses general, whose first synset is the noun; 791 when NLTK's "
               "morphological base forms come first, as for adopted -> adopt), the first adjective sense 1,190, "
               "the base forms' senses competing by count 993, mirrored pairs kept once 906, a tagged (count > 0) "
               "sense required 597 (but 4/12 rare/medium vs 41/59). No rule tried reaches 366: not explained.",
    "hypernym": "12,649 entries (1.64x; rare 1.57x, medium 1.48x, frequent 1.71x), 4.2/4.2/4.4 targets (within "
                "15%). The minimum depth decides the count: NLTK min_depth >= 7 gives 7,109 (0.92x) with "
                "3.9/3.9/4.1 targets, but the paper's text says 6 and its Table 2 needs 6 (game for basketball, "
                "product for book sit at depth 6): the depth stays 6 (--min-depth 7 on data build-wnlampro). "
                "Depth from a root at 1 (min_depth >= 5) gives 20,388, max_depth >= 6 19,939; leaving out "
                "instance hypernyms 10,250 (1.33x); the most frequent sense only (not the text's two) 9,783 "
                "(1.27x). Not explained at depth 6.",
    "cohyponym": "17,964 entries (1.66x), 33.7/32.6/32.9 targets against 26/26/25 (1.30x). Same V and depth as "
                 "hypernym: min_depth 7 gives 10,951 (1.01x) with 32.4/30.2/30.3 targets, but Table 2's samosa "
                 "gets pizza, sandwich, salad only through dish at depth 6. Hyponyms within 4 of each hypernym "
                 "(the text; Table 2's harmonium -> sax is 4 below wind_instrument); within 4 of the keyword "
                 "(up + down) instead gives 17,121 with 30.6/29.6/30.4 targets and loses sax. The extra targets "
                 "per entry are not explained.",
}

RECOVERY = Criterion("both variants end below half their start distance, random contexts closer than static",
                     lambda ev: ev[0].value < 0.5 * ev[2].value and ev[1].value < 0.5 * ev[3].value
                     and ev[0].value < ev[1].value)
TABLE4 = Criterion(f"every model's relations within {TABLE4_TOLERANCE:.0%} of the paper's entries and mean targets "
                   "(ratio rebuilt / paper; the worst ratio of each shown)",
                   lambda ev: all(abs(e.value - 1) <= TABLE4_TOLERANCE for e in ev))
FREQUENCY = intervals_above(0, "the bootstrap 95% interval of frequent minus rare MRR lies above 0 for every model's "
                               "original keywords")
OTA = intervals_above(0, "the paired bootstrap 95% interval of OTA minus the best subword baseline lies above 0 for "
                         "every model (how much better, the size of the difference, is not judged)")


def ota_recovery(summary: Sequence[dict], *, section: str, init: str = "zeros", lr: float = 1e-3) -> Finding:
    """Figure 1 from the recovery's summary rows (:func:`lexprobe.rare_words.ota_recovery.run_recovery`) of one
    init and rate: untestable unless both context variants ran."""
    ends = {r["contexts"]: r for r in summary if r["init"] == init and r["lr"] == lr}
    evidence = ()
    if {"static", "random"} <= set(ends):
        evidence = tuple(Evidence(f"{c} {k}", float(ends[c][k])) for k in ("end", "start") for c in ("random", "static"))
    return Finding(PAPER, "Figure 1: OTA recovers e(w), random contexts closer", RECOVERY, evidence,
                   section=section, details=(STATEMENTS["recovery"],))


def _worst(rows: Sequence[dict], column: str) -> dict:
    """The row whose ``column`` ratio is farthest from 1 (NaN farthest of all)."""
    return max(rows, key=lambda r: math.inf if math.isnan(r[column]) else abs(r[column] - 1))


def table4(versus: Sequence[dict], *, section: str) -> Finding:
    """The rebuilt Table 4 against the paper's: ``versus`` rows of
    :func:`lexprobe.rare_words.wnlampro_build.table4_against_paper` with a ``model`` column."""
    overall = [r for r in versus if r["bucket"] == "all"]
    evidence = ()
    if overall:
        evidence = tuple(Evidence(f"{what} {r['model']}/{r['relation']}", float(r[column]))
                         for what, column in (("entries", "entries_ratio"), ("targets", "targets_ratio"))
                         for r in [_worst(overall, column)])
    causes = tuple(f"{key}: {text}" for key, text in TABLE4_CAUSES.items())
    return Finding(PAPER, "Table 4: rebuilt WNLaMPro matches the paper's sizes", TABLE4, evidence, section=section,
                   details=(STATEMENTS["table4"], "Causes of the differences:") + causes)


def frequency_effect(effect: Sequence[dict], *, section: str) -> Finding:
    """The frequency effect from rows (model, strategy, ``frequent - rare difference|low|high|entries``): frequent
    minus rare MRR of the original keywords, per model."""
    evidence = tuple(Evidence(r["model"], float(r["frequent - rare difference"]), float(r["frequent - rare low"]),
                              float(r["frequent - rare high"]), int(r["frequent - rare entries"]))
                     for r in effect if r["strategy"] == "original")
    above = sum(r["frequent - rare low"] > 0 for r in effect)
    return Finding(PAPER, "frequent keywords score higher than rare ones", FREQUENCY, evidence, section=section,
                   details=(STATEMENTS["frequency"],
                            f"The interval lies above 0 in {above}/{len(effect)} (model, strategy) rows. Entries are "
                            "resampled within relation and bucket; the buckets are different entries, so the "
                            "difference is not paired."))


def ota_vs_baselines(rows: Sequence[dict], *, section: str) -> Finding:
    """OTA against the best subword baseline from rows (model, MRR per strategy, ``best baseline``,
    ``ota - best difference|low|high|entries``), one per model."""
    evidence = tuple(Evidence(f"{r['model']} OTA - {r['best baseline']}", float(r["ota - best difference"]),
                              float(r["ota - best low"]), float(r["ota - best high"]), int(r["ota - best entries"]))
                     for r in rows)
    mrrs = "; ".join(f"{r['model']}: OTA {r['ota']:.4f}, best baseline ({r['best baseline']}) "
                     f"{r[r['best baseline']]:.4f}, original {r['original']:.4f}" for r in rows)
    return Finding(PAPER, "OTA beats the subword baselines", OTA, evidence, section=section,
                   details=(STATEMENTS["ota"], f"MRR over all entries: {mrrs}. Paired bootstrap 95% intervals, "
                                               "entries resampled within relation and bucket."))
