"""The claims of "Rare words" (Schick & Schuetze) about Attentive Mimicking, checked against the am stage's tables
as :class:`~lexprobe.core.findings.Finding` objects, one per part of a claim:

- from the recovery at fixed words (:mod:`.am_recovery`; one evidence per target table): the contexts add
  evidence (AM at the largest k above AM at k = 1); AM beats the learned context-only map at 1 and 2 contexts, and
  its lead shrinks by the largest k; attention beats uniform averaging (AM - FCM at the largest k);
  ``am-context`` leans on the contexts more (its mean gate below AM's at its minimum of 8 contexts);
- from WNLaMPro: AM against the original keywords (which half of AM it tests depends on how many rare keywords
  have contexts), its context half, and simulated rarity (frequent keywords given only k of their windows).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..core.findings import (Criterion, Evidence, Finding, combine, intervals_above, intervals_below, side,
                             untestable)

PAPER = "rare-words"

QUOTES = {
    "contexts": ("The key idea of the form-context model is to compute two distinct embeddings per word, where the "
                 "first one exclusively uses the word\u2019s surface-form and the other the word\u2019s contexts, "
                 "i.e., sentences in which the word was observed.", "section 3.1"),
    "state of the art": ("The form-context model and its Attentive Mimicking variant [schick2019attentive] achieve "
                         "a new state-of-the-art for high-quality representations of rare words.", "section 2"),
    "two types": ("There are roughly two types of approaches for explicitly learning high-quality embeddings of "
                  "rare words: surface-form-based approaches and context-based approaches.", "section 2"),
    "attention": ("While the form-context model treats all contexts equally, AM extends it with a self-attention "
                  "mechanism that is applied to all contexts, allowing the model to distinguish informative from "
                  "uninformative contexts.", "section 3.1"),
    "am+context": ("As we found in preliminary experiments that AM focuses heavily on the word\u2019s surface form "
                   "\u2013 an observation that is in line with results reported by ? (?) \u2013, in addition to the "
                   "default AM configuration of ? (?), we investigate another configuration AM+context, which "
                   "pushes the model to put more emphasis on a word\u2019s contexts.", "section 3.2"),
    "bert": ("Using this dataset, we show that adding our adapted version of Attentive Mimicking to BERT does "
             "substantially improve its understanding of rare words.", "abstract; section 6 (Table 5)"),
}
# The authors' numbers for AM in BERT, not in the rare-words paper's stored text (its Table 5 is missing there):
# BERTRAM (Schick & Schuetze 2020), Table 1, WNLaMPro test MRR of BERT-base, quoted second-hand.
BERT_NUMBERS = "BERT-base WNLaMPro test MRR rare .112 -> .251, medium .234 -> .267 with AM (BERTRAM, Table 1)"
# The context half of AM is judged only where at least this share of the probed rare keywords has a context.
AM_CONTEXT_SHARE = 0.5


def _finding(key: str, claim: str, criterion: Criterion, evidence, *, section: str, details=(),
             paper_value: str = "") -> Finding:
    quote, where = QUOTES[key]
    return Finding(PAPER, claim, criterion, tuple(evidence), section=section, details=tuple(details), quote=quote,
                   where=where, paper_value=paper_value)


# ------------------------------------------------------------------------------ recovery at fixed words


def _diff(tables: Mapping[str, Sequence[dict]], what: str, comparison: str, k: int | None = None) -> list[Evidence]:
    """One evidence per target table: its ``differences`` row (:func:`lexprobe.rare_words.am_recovery.
    differences`) of kind ``what`` and ``comparison`` at ``k`` contexts (None: the row whatever its k)."""
    out = []
    for name, rows in tables.items():
        for r in rows:
            if r["what"] == what and r["comparison"] == comparison and (k is None or r["contexts"] == k):
                label = f"{name}: {comparison}" + ("" if k is None else f" ({k} contexts)")
                out.append(Evidence(label, float(r["difference"]), float(r["low"]), float(r["high"]),
                                    int(r["words"])))
    return out


def _k_max(tables: Mapping[str, Sequence[dict]]) -> int:
    return max((r["contexts"] for rows in tables.values() for r in rows), default=0)


CONTEXTS_ADD = intervals_above(0, "for each target table, the paired bootstrap 95% interval (the same held-out words "
                                  "at every k, nested windows) of AM's cosine to the true embedding with the most "
                                  "contexts minus with one lies above 0: the context path is the half that reads "
                                  "contexts, so more of them must bring it closer; the form is the same at every k, "
                                  "so this is also the growth of AM - form")


def contexts_accumulate(tables: Mapping[str, Sequence[dict]], *, section: str) -> Finding:
    """AM at the largest k minus AM at k = 1, per target table (``tables``: name -> differences rows)."""
    k = _k_max(tables)
    return _finding("contexts", "AM's context path accumulates evidence (more contexts, closer)", CONTEXTS_ADD,
                    _diff(tables, "contexts", f"am ({k}) - am (1)"), section=section,
                    details=("Held-out words with 32+ usable windows, each read at k = 1, 2, 4, 8, 16, 32 of its "
                             "windows (the same words in every column).",))


BEATS_CONTEXT_ONLY = intervals_above(0, "for each target table, the paired bootstrap 95% interval of AM's cosine minus "
                                        "the learned context-only baseline's (a least-squares linear map of the mean "
                                        "context vector, Khodak et al. 2018) lies above 0 with 1 and with 2 contexts: "
                                        "rare words come with few contexts, where the state-of-the-art claim must hold "
                                        "against a context-only model trained on the same words")


def beats_context_only(tables: Mapping[str, Sequence[dict]], *, section: str) -> Finding:
    """AM minus the linear map at k = 1 and 2, per target table."""
    evidence = [e for k in (1, 2) for e in _diff(tables, "cosine", "am - linear map", k)]
    return _finding("state of the art", "AM beats a learned context-only map with few contexts", BEATS_CONTEXT_ONLY,
                    evidence, section=section)


LEAD_SHRINKS = intervals_below(0, "for each target table, the paired bootstrap 95% interval of (AM - linear map) with "
                                  "the most contexts minus (AM - linear map) with one lies below 0: the form is what "
                                  "a context-only model lacks, and its share should fall as contexts accumulate, so "
                                  "the two curves approach (meet or cross) at large k")


def lead_shrinks(tables: Mapping[str, Sequence[dict]], *, section: str) -> Finding:
    """(AM - linear map) at the largest k minus at k = 1, per target table."""
    k = _k_max(tables)
    return _finding("two types", "AM's lead over the context-only map shrinks with more contexts", LEAD_SHRINKS,
                    _diff(tables, "gap", f"(am - linear map) at {k} - at 1"), section=section)


ATTENTION = intervals_above(0, "for each target table, the paired bootstrap 95% interval of AM's cosine minus the "
                               "form-context model's (the same network and training, uniform weights over the "
                               "contexts) lies above 0 with the most contexts, where there are most contexts to tell "
                               "apart; the other k are in the differences table")


def attention_beats_uniform(tables: Mapping[str, Sequence[dict]], *, section: str) -> Finding:
    """AM minus FCM at the largest k, per target table; every k in the details."""
    k = _k_max(tables)
    rest = "; ".join(e.text() for kk in sorted({r["contexts"] for rows in tables.values() for r in rows})
                     if 0 < kk < k for e in _diff(tables, "cosine", "am - fcm", kk))
    return _finding("attention", "AM's attention beats uniform averaging (AM - FCM)", ATTENTION,
                    _diff(tables, "cosine", "am - fcm", k), section=section,
                    details=(f"At fewer contexts: {rest or 'none'}.",))


CONTEXT_PRESET = intervals_below(0, "for each target table with both models, the paired bootstrap 95% interval of "
                                    "am-context's mean gate alpha (the form's weight) minus AM's, the same words with "
                                    "8 contexts (am-context's minimum), lies below 0: more emphasis on the contexts "
                                    "is a smaller weight on the form")


def context_preset_weighs_contexts(tables: Mapping[str, Sequence[dict]], *, section: str) -> Finding:
    """am-context's gate minus AM's at 8 contexts, per target table."""
    return _finding("am+context", "AM+context weighs contexts more (its gate alpha below AM's)", CONTEXT_PRESET,
                    _diff(tables, "alpha", "am-context - am", 8), section=section)


# ---------------------------------------------------------------------------------------------- WNLaMPro


def _am_evidence(gap: dict, first: str, bucket: str) -> Evidence:
    r = gap[(f"{first} - original", bucket)]
    return Evidence(f"{first} - original ({bucket})", float(r["difference"]), float(r["low"]), float(r["high"]),
                    int(r["entries"]))


def _context_note(share: dict) -> str:
    return "; ".join(f"{b}: {share[('am', b)]['>= 1 context']:.1%} with >= 1 context, "
                     f"{share[('am', b)]['>= 8 contexts']:.1%} with >= 8" for b in ("rare", "medium", "frequent"))


AM_FORM = intervals_above(0, "the paired bootstrap 95% interval of MRR(am) - MRR(original) lies above 0 for rare and "
                             "for medium keywords: the sentence claims an improvement for rare words (how much, "
                             "the authors' doubling, is not judged)")


def am_form_half(gap: dict, share: dict, *, section: str) -> Finding:
    """AM against the original keywords in WNLaMPro, rare and medium buckets. ``gap``: (``"am - original"``,
    bucket) -> :func:`lexprobe.rare_words.probing_scores.compare_strategies`; ``share``: (strategy, bucket) -> the
    share of probed keywords with >= 1 / >= 8 contexts. Where the rare keywords have almost no contexts their AM
    vector is their form vector: the half of AM this tests is in the claim."""
    rare = share[("am", "rare")][">= 1 context"]
    half = ("the form half only (the rare keywords' AM vectors are their n-gram form vectors)"
            if rare < AM_CONTEXT_SHARE else "form and contexts")
    return _finding("bert", f"AM improves rare-word MRR over the original keywords (tested here: {half})", AM_FORM,
                    (_am_evidence(gap, "am", "rare"), _am_evidence(gap, "am", "medium")), section=section,
                    paper_value=BERT_NUMBERS,
                    details=(f"Probed keywords with contexts in the corpora: {_context_note(share)}.",
                             "Paired bootstrap 95% intervals, entries resampled within relation and bucket."))


def _context_half(evidence: tuple[Evidence, ...]):
    if evidence[0].value < AM_CONTEXT_SHARE:
        return untestable(f"only {evidence[0].value:.1%} of the probed rare keywords have a context in these corpora "
                          f"(judged from {AM_CONTEXT_SHARE:.0%}): their AM vectors are form vectors")
    return combine(side(e, 0) for e in evidence[1:])


AM_CONTEXT = Criterion(f"where at least {AM_CONTEXT_SHARE:.0%} of the probed rare keywords have a context (else the "
                       "contexts cannot act): the paired bootstrap 95% interval of MRR(am-context) - MRR(original) "
                       "above 0 for rare and medium keywords", _context_half)


def am_context_half(gap: dict, share: dict, *, section: str) -> Finding:
    """The context half of AM (``am-context``) on the rare WNLaMPro keywords: untestable where fewer than
    ``AM_CONTEXT_SHARE`` of them have any context, else judged as :func:`am_form_half`."""
    rare = share[("am-context", "rare")][">= 1 context"]
    evidence = (Evidence("rare keywords with >= 1 context", float(rare)), _am_evidence(gap, "am-context", "rare"),
                _am_evidence(gap, "am-context", "medium"))
    return _finding("am+context", "AM's contexts help rare words (am-context over the original keywords)",
                    AM_CONTEXT, evidence, section=section,
                    details=(f"Probed keywords with contexts in the corpora: {_context_note(share)}.",
                             "The corpora here (SemCor, the WSD sets, STREUSLE: about 0.9M tokens) hold contexts for "
                             "few rare WordNet keywords, where the authors read a 1e9-word Wikipedia; simulated "
                             "rarity (frequent keywords given k of their windows) tests the contexts instead."))


RARITY = intervals_above(0, "on frequent WNLaMPro keywords made rare (AM given only k of their windows), the paired "
                            "bootstrap 95% interval of MRR(am, 8 windows) - MRR(am, form only) lies above 0: what AM's "
                            "contexts recover of the cost of rarity on the paper's own task, where the context half "
                            "can act")


def simulated_rarity(rows: Sequence[dict], *, section: str) -> Finding:
    """From :func:`lexprobe.rare_words.run_am.rarity_differences` rows (``comparison, entries, difference, low,
    high``): AM with 8 windows against AM with its form alone; the cost of rarity in the details."""
    by = {r["comparison"]: r for r in rows}

    def ev(name):
        r = by[name]
        return Evidence(name, float(r["difference"]), float(r["low"]), float(r["high"]), int(r["entries"]))

    evidence = [ev("am (8) - am (0)")] if "am (8) - am (0)" in by else []
    cost = "; ".join(ev(n).text() for n in by if n.endswith("- original"))
    return _finding("bert", "With simulated rarity, AM's contexts recover part of the cost (WNLaMPro MRR)", RARITY,
                    evidence, section=section, paper_value=BERT_NUMBERS,
                    details=(f"The cost of rarity (MRR with k windows minus the keyword's own embedding): {cost}.",))

