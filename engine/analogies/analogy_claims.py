"""The claims of *Analogies minus analogy test* (Fournier, Dunbar, Dupoux 2020), and of the solvers it cites,
checked against a run's tables, as :class:`~lexprobe.core.findings.Finding` objects, one per claim part: the honest
test returns b (section 3), Figure 1's three claims on the score terms, Figure 8, Figure 2's three, Figure 5,
Table 1's OCS and PCS claims and their footnotes, the link between within-pair similarity and PCS (and, after
Rogers et al., accuracy), Levy and Goldberg's PairDirection and Drozd et al.'s 3CosAvg and LRCos.

How the paper's words are read (our decisions where it is ambiguous):

- A claim about every relation ("always") is judged relation by relation, each with its own interval: it agrees
  when every relation's interval lies on the claim's side, contradicts when one lies wholly on the other,
  else it is inconclusive (:func:`cells_verdict`). "Almost always" allows a tenth of the cells to fail
  (:data:`ALMOST_SHARE`; the paper prints no count: we read "almost" as all but a few of 40 relations).
- An observation about a figure of relation means without a quantifier ("we observe that ...") is judged on the
  mean over relations, with a bootstrap interval over relations; the relations that hold it alone are counted
  beside it.
- "Zero" is an equivalence: the interval lies within one interquartile range (of the same sets) of 0;
  "non-zero" is its negation (:func:`nonzero`). Chance PCS is the paper's own rule, within half an IQR of 0.5.
- Table 1's cells are the broad categories and all relations; a claim on Table 1 is judged in every cell.

The paper's text prints no numbers for these claims (its figures and Table 1 are not in the text we hold),
so ``paper_value`` stays empty. The intervals come from :mod:`lexprobe.core.intervals` and
:func:`lexprobe.analogies.decomposition.relation_intervals`; every resampling takes the run's seed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from ..core.findings import (AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE, Criterion, Evidence, Finding, combine,
                             number, side, within)
from ..core.intervals import correlation_bootstrap, paired_bootstrap
from ..core.seeds import rng_for
from .analogy_evaluation import relation_accuracy

PAPER = "analogies"
ALMOST_SHARE = 0.9   # "almost always": at least this share of the cells hold, at most 1 - it contradict
RESAMPLES = 2000

QUOTES = {
    "honest": ("Linzen 2016 observes that the arithmetic analogy test, as practised, excludes $a$, $a^{*}$, and $b$ "
               "from the $\\argmax$—otherwise, one of these input words tends (incorrectly) to be the response—most "
               "of the time, $b$.", "Section 3 (after Linzen 2016)"),
    "fig1-within": ("Complementing previous analyses, we display means for these three terms in Figure 1, confirming "
                    "that within-pair similarity is indeed positive and large compared to the other terms.",
                    "Section 3, Figure 1"),
    "fig1-smaller": ("Notably, offset similarities vary between relations, but are almost always smaller.",
                     "Section 3, Figure 1"),
    "fig1-positive": ("However, they are always positive.", "Section 3, Figure 1"),
    "fig8": ("Importantly, if we compute the decomposition in (3), but suppose that $b^{*}$ is equal to $b+o_{a}$ "
             "($o_{a}\\!=o_{b}$: the analogy score is thus always 1), we observe empirically that the within-pair "
             "similarity- and offset similarity-driven terms have similar values (Figure 8 in the appendix).",
             "Section 3, Figure 8 (appendix)"),
    "fig2-negative": ("Linzen 2016’s observation that an input word is typically predicted under the 3CosAdd "
                      "objective—and not an unrelated vocabulary word—implies that not only is $\\Delta_{\\text{sim}}$ "
                      "negative, but that the equivalent value is negative for all words in the vocabulary.",
                      "Section 3, Figure 2"),
    "fig2-norm": ("We observe that the first term is indeed small and can be ignored.", "Section 3, Figure 2"),
    "fig2-offset": ("Importantly, we observe that the offset similarity term is smaller in magnitude than the "
                    "negative $b$–$b^{*}$ distance term).", "Section 3, Figure 2"),
    "fig5": ("As above, these similarities are small but generally positive.", "Section 4, Figure 5"),
    "ocs-zero": ("The fully random set has an OCS of zero, confirming that offset concentration is unlikely to occur "
                 "by chance, at least for these word vectors.", "Section 5, Table 1"),
    "ocs-nonzero": ("The other random analogy sets all show non-zero OCS.", "Section 5, Table 1"),
    "ocs-higher": ("Some random sets have even higher OCS scores than the real BATS sets.", "Section 5, Table 1"),
    "start-end": ("We observe a systematic difference between the random start and random end results, which seems "
                  "to indicate a bias in the BATS analogy sets, with the end words being more susceptible to "
                  "forming clusters.", "Section 5, Table 1, footnote 2"),
    "permuted": ("Surprisingly, the OCS is systematically lower for the permuted within-category baseline than for "
                 "the mismatched-category baselines.", "Section 5, Table 1"),
    "pcs-bats": ("The real BATS sets show PCS above chance, contrary to all random analogy sets, which show PCS of "
                 "0.5, as expected.", "Section 5, Table 1"),
    "pcs-random": ("Even where the mean is not precisely 0.5, it is always within one half-interquartile-range of "
                   "0.5.", "Section 5, Table 1, footnote 3"),
    "pcs-semantic": ("The PCS scores are low for the semantic (encyclopedic, lexicographic) relations.",
                     "Section 5, Table 1"),
    "pcs-within": ("Here, the relations which show greater within-pair similarity (Figure 1) also show higher PCS.",
                   "Section 5"),
    "rogers": ("Rogers et al. 2017 showed that within-pair similarity is correlated with performance on the "
               "standard arithmetic analogy test.", "Section 3 (after Rogers et al. 2017)"),
    "pairdir": ("Levy and Goldberg 2014 showed that evaluating on the basis of similarity between offsets, using "
                "PairDirection to determine the nearest neighbours, leads to failure on analogy tests that would "
                "otherwise succeed using the 3CosAdd objective.", "Section 3 (after Levy and Goldberg 2014)"),
}
DROZD = "Drozd, Gladkova, Matsuoka 2016 (vecto's solvers; not among the papers here)"
GLOVE_CAUSE = "Where this differs from the paper: GloVe 50d vectors here, word2vec GoogleNews 300d there."
DROZD_CAUSE = ("Where this differs from Drozd et al.: GloVe 50d vectors here (LRCos's classifier has 50 features); "
               "their embeddings had other dimensions and training data.")


def _finding(key: str, claim: str, criterion: Criterion, evidence, *, section: str, details=()) -> Finding:
    quote, where = QUOTES[key]
    return Finding(PAPER, claim, criterion, tuple(evidence), section=section, details=tuple(details), quote=quote,
                   where=where)


# --------------------------------------------------------------------------------- rules of judgement


def nonzero(e: Evidence, tolerance: float) -> str:
    """A "non-zero" claim: :data:`AGREES` when the interval excludes 0, :data:`CONTRADICTS` when it lies within
    ``tolerance`` of 0 (the same equivalence that calls the fully random set zero), else :data:`INCONCLUSIVE`."""
    if within(e, 0.0, tolerance) == AGREES:
        return CONTRADICTS
    if side(e, 0.0) == AGREES or side(e, 0.0, above=False) == AGREES:
        return AGREES
    return UNTESTABLE if side(e, 0.0) == UNTESTABLE else INCONCLUSIVE


def cells_verdict(holding: int, failing: int, cells: int, *, share: float = 1.0) -> str:
    """A claim over ``cells`` (relations, Table 1 cells) of which ``holding`` agree and ``failing`` contradict:
    :data:`AGREES` when at least ``share`` of them hold, :data:`CONTRADICTS` when more than ``1 - share`` fail
    (``share`` 1: any failing cell), else :data:`INCONCLUSIVE`."""
    if cells == 0:
        return UNTESTABLE
    if failing > (1 - share) * cells + 1e-9:
        return CONTRADICTS
    return AGREES if holding >= share * cells - 1e-9 else INCONCLUSIVE


def exists_verdict(holding: int, failing: int, cells: int) -> str:
    """An existence claim ("some sets ..."): :data:`AGREES` when a cell holds, :data:`CONTRADICTS` when every
    cell fails, else :data:`INCONCLUSIVE`."""
    if cells == 0:
        return UNTESTABLE
    return AGREES if holding else CONTRADICTS if failing == cells else INCONCLUSIVE


def count_criterion(text: str, rule) -> Criterion:
    """A criterion over the cell counts of :func:`cell_evidence` (``rule(holding, failing, cells)``)."""
    return Criterion(text, lambda ev: rule(ev[1].value, ev[2].value, ev[1].n))


def cell_evidence(cells: Sequence[tuple[Evidence, str]], *, exists: bool = False,
                  worst=lambda e: 0.0) -> tuple[tuple[Evidence, ...], str]:
    """The evidence of a claim judged cell by cell, from (cell's evidence, its verdict): the cell that decides
    first (for a claim on every cell a contradicting one, else an inconclusive one, else any; for an existence
    claim an agreeing one first), among those the one with the largest ``worst`` (e.g. the value furthest
    toward the other side of the line), then the cells agreeing and contradicting as counts; and a line listing
    every cell's number and verdict."""
    order = ([AGREES, INCONCLUSIVE, CONTRADICTS] if exists else [CONTRADICTS, INCONCLUSIVE, AGREES])
    deciding = next(([e for e, verdict in cells if verdict == v] for v in order
                     if any(verdict == v for _, verdict in cells)), [])
    key = max(deciding, key=worst) if deciding else None
    n = len(cells)
    evidence = (() if key is None else (key,)) + (
        Evidence("cells agreeing", sum(v == AGREES for _, v in cells), n=n),
        Evidence("cells contradicting", sum(v == CONTRADICTS for _, v in cells), n=n))
    return evidence, "Per cell: " + "; ".join(f"{e.text()} ({v})" for e, v in cells) + "."


# ------------------------------------------------------------------------------------------ intervals


def mean_interval(values, *, seed: int, strata=None) -> tuple[float, float, float]:
    """The mean of ``values`` (one per relation) with its percentile bootstrap interval over them (``strata``:
    resampled within each, e.g. the broad categories of the "all" row)."""
    values = np.asarray(values, dtype=np.float64)
    return paired_bootstrap(values, np.zeros_like(values), strata=strata, resamples=RESAMPLES, seed=seed)


def difference_interval(x, y, *, seed: int) -> tuple[float, float, float]:
    """mean(x) - mean(y) of two independent samples (relations of two groups) with its percentile bootstrap
    interval, each group resampled on its own."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    rng = rng_for(seed, "difference-bootstrap")
    bx = x[rng.integers(0, len(x), (RESAMPLES, len(x)))].mean(axis=1)
    by = y[rng.integers(0, len(y), (RESAMPLES, len(y)))].mean(axis=1)
    low, high = np.quantile(bx - by, [0.025, 0.975])
    return float(x.mean() - y.mean()), float(low), float(high)


def _evidence(name: str, stats: tuple[float, float, float], n: int | None = None) -> Evidence:
    return Evidence(name, float(stats[0]), float(stats[1]), float(stats[2]), n)


# ------------------------------------------------------------------------------------ the honest test


def honest_verdict(b: Evidence, others: Sequence[Evidence]) -> str:
    """b is returned most often: :data:`AGREES` when b's interval lies above every other share's,
    :data:`CONTRADICTS` when some other share's lies wholly above b's, else :data:`INCONCLUSIVE`."""
    if any(o.low > b.high for o in others):
        return CONTRADICTS
    return AGREES if all(b.low > o.high for o in others) else INCONCLUSIVE


HONEST = Criterion("b is returned most often: its Wilson 95% interval lies above every other answer's; contradicted "
                   "when another answer's interval lies wholly above b's. The "
                   "paper's \"most of the time, b\" compares b with the other answers the test can give",
                   lambda ev: honest_verdict(ev[0], ev[1:]))


def honest_returns_b(rows: Sequence[dict], n: int, *, dataset: str, section: str) -> Finding:
    """What the honest test returns (rows of :func:`lexprobe.analogies.analogy.share_intervals` over ``n``
    questions, one of them ``b``): is b the most frequent answer?"""
    b = next(r for r in rows if r["returned"] == "b")
    others = sorted((r for r in rows if r["returned"] != "b"), key=lambda r: -r["high"])
    evidence = tuple(Evidence(r["returned"], float(r["share"]), float(r["low"]), float(r["high"]), n)
                     for r in [b, *others])
    return _finding("honest", f"{dataset}: the honest 3CosAdd returns b most often", HONEST, evidence,
                    section=section)


# ------------------------------------------------------------------------- Figures 1, 8 and 2 (section 3)


def decomposition_columns(table) -> dict[str, np.ndarray]:
    """The per-tuple quantities the section 3 claims are judged on, from a
    :func:`~lexprobe.analogies.decomposition.decompose_relations` table: the terms and the differences the
    claims compare (a difference of means is the mean of the differences, so each gets its own interval)."""
    c = {k: table.column(k).to_numpy() for k in ("within", "offset", "start_offset", "ref_within", "ref_offset",
                                                  "delta_sim", "delta_norm", "delta_offset", "delta_b_ob")}
    return {**c, "within_minus_offset": c["within"] - c["offset"],
            "within_minus_start": c["within"] - c["start_offset"],
            "within_plus_start": c["within"] + c["start_offset"]}


def _code(relation: str) -> str:
    return relation.split()[0]


PART_NAMES = {"within_minus_offset": "within - offset", "within_minus_start": "within - start-offset",
              "within_plus_start": "within + start-offset"}


def _relation_cells(rows: Sequence[dict], parts: Sequence[tuple[str, bool]], label: str) -> list[tuple[Evidence, str]]:
    """One cell per relation: the verdict of all its parts (``(column, above 0)``, each from the relation's
    bootstrap interval) and the evidence of the part that decides it (the first part is named ``label``)."""
    cells = []
    for r in rows:
        evs = [Evidence(f"{_code(r['relation'])} {label if k == 0 else PART_NAMES.get(c, c)}", r[c], r[f"{c}_low"],
                        r[f"{c}_high"], r["tuples"]) for k, (c, _) in enumerate(parts)]
        verdicts = [side(e, 0.0, above=up) for e, (_, up) in zip(evs, parts)]
        verdict = combine(verdicts)
        shown = evs[verdicts.index(verdict)] if verdict in verdicts else evs[0]  # the part that decides
        cells.append((shown, verdict))
    return cells


def figure1(rows: Sequence[dict], *, section: str) -> list[Finding]:
    """Figure 1's three claims from :func:`~lexprobe.analogies.decomposition.relation_intervals` rows over
    :func:`decomposition_columns`, each judged relation by relation."""
    out = []
    specs = [
        ("fig1-within", "Figure 1: within-pair term positive and largest",
         [("within", True), ("within_minus_offset", True), ("within_minus_start", True), ("within_plus_start", True)],
         "within", 1.0,
         "in every relation the within-pair term and its excess over the offset term and over the start-offset "
         "term's magnitude have pair-bootstrap intervals above 0 (\"positive and large compared to the other "
         "terms\", in each relation of the figure)"),
        ("fig1-smaller", "Figure 1: offset term almost always below within-pair",
         [("within_minus_offset", True)], "within - offset", ALMOST_SHARE,
         f"within-pair minus offset term, pair-bootstrap interval per relation: at least {ALMOST_SHARE:.0%} of the "
         f"relations above 0, at most {1 - ALMOST_SHARE:.0%} wholly below (\"almost always\": all but a few)"),
        ("fig1-positive", "Figure 1: offset term positive in every relation", [("offset", True)], "offset", 1.0,
         "the offset term's pair-bootstrap interval lies above 0 in every relation (\"always\"); one interval "
         "wholly below 0 contradicts, one straddling 0 leaves it open"),
    ]
    for key, claim, parts, label, share, text in specs:
        evidence, listing = cell_evidence(_relation_cells(rows, parts, label), worst=lambda e: -e.value)
        crit = count_criterion(text + "; the intervals resample a relation's pairs (tuples sharing a pair are not "
                               "independent)", lambda h, f, n, s=share: cells_verdict(h, f, n, share=s))
        finding = _finding(key, claim, crit, evidence, section=section, details=(listing,))
        out.append(finding if finding.verdict in (AGREES, UNTESTABLE) else _with_cause(finding))
    return out


def _with_cause(finding: Finding) -> Finding:
    return replace(finding, details=finding.details + (GLOVE_CAUSE,))


def _over_relations(rows: Sequence[dict], values, name: str, *, seed: int) -> Evidence:
    """The mean over relations of one value per relation, with its bootstrap interval over relations
    (stratified by broad category)."""
    strata = [r["category"] for r in rows]
    return _evidence(name, mean_interval(values, seed=seed, strata=strata), len(rows))


def _signs(rows: Sequence[dict], column: str, name: str) -> tuple[Evidence, Evidence]:
    """How many relations have ``column``'s interval wholly below 0, and wholly above."""
    return (Evidence(f"relations with {name} < 0", sum(r[f"{column}_high"] < 0 for r in rows), n=len(rows)),
            Evidence(f"relations with {name} > 0", sum(r[f"{column}_low"] > 0 for r in rows), n=len(rows)))


def figure8(rows: Sequence[dict], *, section: str, seed: int) -> Finding:
    """Figure 8: with b* = b + o_a, the within-pair and offset terms are similar. Judged as an equivalence of the
    mean over relations of (within - offset) with 0, the tolerance the two terms' between-relation interquartile
    range (the mean of their IQRs over relations: how much either varies between relations)."""
    diff = np.array([r["ref_within"] - r["ref_offset"] for r in rows])
    spread = float(np.mean([np.subtract(*np.percentile([r[c] for r in rows], [75, 25]))
                            for c in ("ref_within", "ref_offset")]))
    e = _over_relations(rows, diff, "reference within - offset", seed=seed)
    text = (f"mean over relations of (within-pair - offset) with b* = b + o_a, bootstrap interval over relations, "
            f"lies within one between-relation interquartile range of the terms (mean of the two, {number(spread)}) "
            f"of 0: \"similar values\" means a gap no larger than the terms' own spread across relations")
    return _finding("fig8", "Figure 8: with b* = b + o_a, within-pair and offset terms similar",
                    Criterion(text, lambda ev: within(ev[0], 0.0, spread)),
                    (e, Evidence("reference within (mean)", float(np.mean([r["ref_within"] for r in rows]))),
                     Evidence("reference offset (mean)", float(np.mean([r["ref_offset"] for r in rows])))),
                    section=section)


def figure2(rows: Sequence[dict], *, section: str, seed: int) -> list[Finding]:
    """Figure 2's three claims on Delta_sim and its terms, each on the mean over relations."""
    below = lambda text: Criterion(text, lambda ev: side(ev[0], 0.0, above=False))
    out = []
    delta = [r["delta_sim"] for r in rows]
    out.append(_finding(
        "fig2-negative", "Figure 2: Delta_sim negative",
        below("mean over relations of Delta_sim = cos(b + o_a, b*) - cos(b + o_a, b), bootstrap interval over "
              "relations, below 0: the input b is \"typically\" predicted when b* scores below b, so the typical "
              "relation's Delta_sim must be negative"),
        (_over_relations(rows, delta, "Delta_sim", seed=seed),
         *_signs(rows, "delta_sim", "Delta_sim")), section=section))
    norm = np.abs([r["delta_norm"] for r in rows])
    others = np.minimum(np.abs([r["delta_offset"] for r in rows]), np.abs([r["delta_b_ob"] for r in rows]))
    out.append(_finding(
        "fig2-norm", "Figure 2: norm term small",
        below("mean over relations of |norm term| - min(|offset term|, |b-b* distance term|), bootstrap interval "
              "over relations, below 0: \"small and can be ignored\" read as smaller than either other term"),
        (_over_relations(rows, norm - others, "|norm| - min(other terms)", seed=seed),
         Evidence("relations where it is smaller", int((norm < others).sum()), n=len(rows))), section=section))
    gap = np.abs([r["delta_offset"] for r in rows]) - np.abs([r["delta_b_ob"] for r in rows])
    out.append(_finding(
        "fig2-offset", "Figure 2: offset term smaller than the b-b* distance term",
        below("mean over relations of |offset term| - |b-b* distance term| of Delta_sim, bootstrap interval over "
              "relations, below 0"),
        (_over_relations(rows, gap, "|offset| - |distance|", seed=seed),
         Evidence("relations where it is smaller", int((gap < 0).sum()), n=len(rows))), section=section))
    return out


# --------------------------------------------------------------------------- PairDirection and vecto's


def method_gap(better: dict[str, float], worse: dict[str, float], categories: dict[str, str], *,
               seed: int) -> tuple[float, float, float]:
    """Accuracy of one method minus another, mean over the relations both answer (each relation's accuracy over
    its own questions), with a paired bootstrap interval over relations stratified by broad category."""
    names = [r for r in better if r in worse]
    return paired_bootstrap([better[r] for r in names], [worse[r] for r in names],
                            strata=[categories[r] for r in names], resamples=RESAMPLES, seed=seed)


def pairdirection_fails(add_table, pairdir_table, *, section: str, seed: int, population: int | None = None
                        ) -> Finding:
    """Levy and Goldberg: PairDirection fails where 3CosAdd succeeds, on the same questions (rows in the same
    order); ``population``: how many questions the tables sample, when they are a sample."""
    categories = dict(zip(add_table.column("relation").to_pylist(), add_table.column("category").to_pylist()))
    gap = method_gap(relation_accuracy([add_table]), relation_accuracy([pairdir_table]), categories, seed=seed)
    a = add_table.column("correct").to_numpy(zero_copy_only=False)
    p = pairdir_table.column("correct").to_numpy(zero_copy_only=False)
    text = ("3CosAdd accuracy minus PairDirection accuracy on the same questions, mean over relations with a "
            "paired bootstrap interval over relations (stratified by broad category), above 0: PairDirection "
            "\"leads to failure\" where 3CosAdd succeeds")
    evidence = (_evidence("3CosAdd - PairDirection", gap, len(categories)),
                Evidence("questions only 3CosAdd answers", int((a & ~p).sum()), n=len(a)),
                Evidence("questions only PairDirection answers", int((p & ~a).sum()), n=len(a)))
    details = () if population is None else (
        f"A seeded sample of {len(a)} of the {population} questions (the same for both methods). Its interval "
        f"can detect a gap of {number(evidence[0].detectable)} (80% power); the gap to detect is a failure, "
        "PairDirection far below 3CosAdd, so the sample decides unless the gap is smaller than that.",)
    return _finding("pairdir", "PairDirection fails where 3CosAdd succeeds (Levy & Goldberg)",
                    Criterion(text, lambda ev: side(ev[0], 0.0)), evidence, section=section, details=details)


def drozd_findings(accuracy: dict[str, dict[str, float]], categories: dict[str, str], *, lrcos_seeds: Sequence[int],
                   section: str, seed: int) -> list[Finding]:
    """Drozd et al. 2016: 3CosAvg and LRCos beat 3CosAdd, LRCos beats 3CosAvg. ``accuracy``: method (add, avg,
    lrcos) -> relation -> accuracy (LRCos: the mean over ``lrcos_seeds``, its random negatives)."""
    names = {"add": "3CosAdd", "avg": "3CosAvg", "lrcos": "LRCos"}
    out = []
    for better, worse in (("avg", "add"), ("lrcos", "add"), ("lrcos", "avg")):
        gap = method_gap(accuracy[better], accuracy[worse], categories, seed=seed)
        text = (f"{names[better]} accuracy minus {names[worse]} accuracy, mean over relations (each relation's "
                f"accuracy over its own questions: 3CosAdd every tuple, the set methods one question per pair), "
                f"paired bootstrap interval over relations, above 0"
                + (f"; LRCos averaged over {len(lrcos_seeds)} seeds of its random negatives"
                   if "lrcos" in (better, worse) else ""))
        finding = Finding(PAPER, f"{names[better]} beats {names[worse]} (Drozd et al.)",
                          Criterion(text, lambda ev: side(ev[0], 0.0)),
                          (_evidence(f"{names[better]} - {names[worse]}", gap, len(categories)),),
                          section=section, where=DROZD)
        out.append(finding if finding.verdict == AGREES else replace(finding, details=(DROZD_CAUSE,)))
    return out


# ------------------------------------------------------------------------------- Table 1 and Figure 5


def relation_scores(sets: Sequence[dict]) -> dict[str, dict[str, dict]]:
    """Set kind -> relation -> {category, ocs, pcs, positive_share}: the mean over a kind's replicates of
    :func:`lexprobe.analogies.offset_baselines.table1`'s per-set rows (``sets``)."""
    grouped: dict[str, dict[str, list[dict]]] = {}
    for r in sets:
        grouped.setdefault(r["set"], {}).setdefault(r["relation"], []).append(r)
    out = {}
    for kind, rels in grouped.items():
        out[kind] = {}
        for name, rs in rels.items():
            row = {"category": rs[0]["category"]}
            for col in ("ocs", "pcs", "positive_share"):
                vals = [x[col] for x in rs if col in x and x[col] is not None and np.isfinite(x[col])]
                row[col] = float(np.mean(vals)) if vals else float("nan")
            out[kind][name] = row
    return out


def _cells(scores: dict[str, dict], kind: str) -> list[tuple[str, list[str]]]:
    """Table 1's cells: (category, its relations) for every broad category, then ("all", every relation)."""
    rels = scores["bats"]
    cats = list(dict.fromkeys(v["category"] for v in rels.values()))
    return [(c, [r for r in rels if rels[r]["category"] == c and r in scores[kind]]) for c in cats] + \
        [("all", [r for r in rels if r in scores[kind]])]


def _cell_stats(scores, kind: str, col: str, names: list[str], *, seed: int, minus: str | None = None):
    vals = np.array([scores[kind][r][col] for r in names])
    if minus is not None:
        vals = vals - np.array([scores[minus][r][col] for r in names])
    strata = [scores["bats"][r]["category"] for r in names]
    return mean_interval(vals, seed=seed, strata=strata)


def _iqr(sets: Sequence[dict], kind: str, col: str, names: list[str]) -> float:
    """The interquartile range of ``col`` over a kind's sets (relations x replicates) of a cell: the paper's
    spread of Table 1."""
    wanted = set(names)
    vals = [r[col] for r in sets if r["set"] == kind and r["relation"] in wanted and np.isfinite(r[col])]
    return float(np.subtract(*np.percentile(vals, [75, 25]))) if len(vals) > 1 else float("nan")


def _cell_finding(key, claim, text, cells, *, section, worst, rule=cells_verdict, exists=False) -> Finding:
    evidence, listing = cell_evidence(cells, exists=exists, worst=worst)
    return _finding(key, claim, count_criterion(text, rule), evidence, section=section,
                    details=(listing,))


def table1_findings(sets: Sequence[dict], *, section: str, seed: int) -> list[Finding]:
    """Table 1's claims from its per-set rows (:func:`lexprobe.analogies.offset_baselines.table1`'s ``results``):
    every cell (broad category, and all relations) judged with a bootstrap interval over relations (each
    relation's mean over replicates; the "all" cell resampled within categories)."""
    scores = relation_scores(sets)
    kinds = [k for k in scores if k != "bats"]
    out = []
    if "random-both" in scores:
        cells = []
        for cat, names in _cells(scores, "random-both"):
            iqr = _iqr(sets, "random-both", "ocs", names)
            e = _evidence(f"{cat}: random-both OCS", _cell_stats(scores, "random-both", "ocs", names, seed=seed),
                          len(names))
            cells.append((e, within(e, 0.0, iqr)))
        out.append(_cell_finding(
            "ocs-zero", "Table 1: fully random set's OCS zero",
            "in every cell the random-both set's mean OCS, bootstrap interval over relations, lies within one "
            "interquartile range of that set's OCS (over its relations x replicates) of 0: zero up to the set's "
            "own spread", cells, section=section, worst=lambda e: abs(e.value)))
    cells = []
    for kind in (k for k in kinds if k != "random-both"):
        for cat, names in _cells(scores, kind):
            e = _evidence(f"{kind}/{cat} OCS", _cell_stats(scores, kind, "ocs", names, seed=seed), len(names))
            cells.append((e, nonzero(e, _iqr(sets, kind, "ocs", names))))
    out.append(_cell_finding(
        "ocs-nonzero", "Table 1: every other random set's OCS non-zero",
        "in every cell of every other random set the mean OCS's bootstrap interval over relations excludes 0; a "
        "cell contradicts when its interval lies within one interquartile range of its sets' OCS of 0 (the rule "
        "that calls the fully random set zero)", cells, section=section, worst=lambda e: -abs(e.value)))
    cells = []
    for kind in kinds:
        for cat, names in _cells(scores, kind):
            e = _evidence(f"{kind}/{cat} - BATS OCS", _cell_stats(scores, kind, "ocs", names, seed=seed,
                                                                  minus="bats"), len(names))
            cells.append((e, side(e, 0.0)))
    out.append(_cell_finding(
        "ocs-higher", "Table 1: some random sets' OCS above BATS",
        "random set minus BATS OCS, paired by relation, bootstrap interval over relations, in each cell of each "
        "random set: agrees when some cell's interval lies above 0, contradicts when every cell's lies below",
        cells, section=section, rule=exists_verdict, exists=True, worst=lambda e: e.value))
    if {"random-start", "random-end"} <= set(scores):
        cells = []
        for cat, names in _cells(scores, "random-end"):
            e = _evidence(f"{cat}: random-start - random-end OCS",
                          _cell_stats(scores, "random-start", "ocs", names, seed=seed, minus="random-end"),
                          len(names))
            cells.append((e, side(e, 0.0)))
        out.append(_cell_finding(
            "start-end", "Footnote 2: random-start OCS above random-end",
            "random-start minus random-end OCS, paired by relation, bootstrap interval over relations, above 0 in "
            "every cell (\"systematic\"). The footnote gives no sign; its reason does: if the end words cluster "
            "more, the sets that keep them (random-start) have more parallel offsets", cells, section=section,
            worst=lambda e: -e.value))
    if "permuted" in scores:
        cells = []
        for other in (k for k in ("mismatched-within", "mismatched-across") if k in scores):
            for cat, names in _cells(scores, other):
                names = [r for r in names if r in scores["permuted"]]
                e = _evidence(f"{cat}: permuted - {other} OCS",
                              _cell_stats(scores, "permuted", "ocs", names, seed=seed, minus=other), len(names))
                cells.append((e, side(e, 0.0, above=False)))
        out.append(_cell_finding(
            "permuted", "Table 1: permuted OCS below the mismatched sets'",
            "permuted minus mismatched (within and across broad types) OCS, paired by relation, bootstrap interval "
            "over relations, below 0 in every cell (\"systematically\")", cells, section=section,
            worst=lambda e: e.value))
    cells = []
    for cat, names in _cells(scores, "bats"):
        e = _evidence(f"{cat}: BATS PCS", _cell_stats(scores, "bats", "pcs", names, seed=seed), len(names))
        cells.append((e, side(e, 0.5)))
    out.append(_cell_finding(
        "pcs-bats", "Table 1: BATS PCS above chance",
        "in every cell the BATS relations' mean PCS, bootstrap interval over relations, lies above 0.5 (chance: "
        "true offsets no more parallel than shuffled ones)", cells, section=section, worst=lambda e: -e.value))
    cells = []
    for kind in kinds:
        for cat, names in _cells(scores, kind):
            half = _iqr(sets, kind, "pcs", names) / 2
            e = _evidence(f"{kind}/{cat} PCS", _cell_stats(scores, kind, "pcs", names, seed=seed), len(names))
            cells.append((e, within(e, 0.5, half)))
    out.append(_cell_finding(
        "pcs-random", "Table 1: random sets' PCS at chance",
        "the paper's rule with an interval: in every cell of every random set the mean PCS's bootstrap interval "
        "over relations lies within half the interquartile range of the cell's PCS (over relations x "
        "replicates) of 0.5; wholly outside contradicts", cells, section=section,
        worst=lambda e: abs(e.value - 0.5)))
    cats = {v["category"] for v in scores["bats"].values()}
    semantic = [c for c in ("encyclopedic", "lexicographic") if c in cats]
    morph = [r for r, v in scores["bats"].items() if v["category"] in ("inflectional", "derivational")]
    if semantic and morph:
        cells = []
        for cat in semantic:
            sem = [v["pcs"] for v in scores["bats"].values() if v["category"] == cat]
            e = _evidence(f"{cat} - morphological PCS",
                          difference_interval(sem, [scores["bats"][r]["pcs"] for r in morph], seed=seed), len(sem))
            cells.append((e, side(e, 0.0, above=False)))
        out.append(_cell_finding(
            "pcs-semantic", "Table 1: PCS low for semantic relations",
            "\"low\" read as lower than the morphological (inflectional, derivational) relations: each semantic "
            "category's mean BATS PCS minus theirs, bootstrap interval (each group's relations resampled), below 0",
            cells, section=section, worst=lambda e: e.value))
    return out


def figure5(sets: Sequence[dict], *, section: str, seed: int) -> Finding:
    """Figure 5: the true offsets' pairwise similarities are "generally positive": per broad category, the mean
    over relations of the share of positive similarities, above one half."""
    scores = relation_scores(sets)
    cells = []
    for cat, names in _cells(scores, "bats"):
        e = _evidence(f"{cat}: share of sim > 0", _cell_stats(scores, "bats", "positive_share", names, seed=seed),
                      len(names))
        cells.append((e, side(e, 0.5)))
    return _cell_finding(
        "fig5", "Figure 5: offset similarities generally positive",
        "per broad category (and all), the mean over relations of the share of offset pairs with o_i . o_j > 0, "
        "bootstrap interval over relations, above 0.5 (\"generally\": most of them)", cells, section=section,
        worst=lambda e: -e.value)


def _correlation(key: str, claim: str, x: dict[str, float], y: dict[str, float], what: str, *, section: str,
                 seed: int) -> Finding:
    """A positive association over relations: Spearman's correlation of ``x`` and ``y`` (relation -> value) with
    its percentile bootstrap interval (relations resampled), above 0; Pearson's beside it."""
    from scipy.stats import pearsonr, spearmanr

    names = [r for r in x if r in y]
    a, b = [x[r] for r in names], [y[r] for r in names]
    boot = correlation_bootstrap(a, b, seed=seed)
    text = (f"Spearman's correlation over relations between {what}, percentile bootstrap interval (relations "
            "resampled), above 0: the sentence claims a monotone association")
    return _finding(key, claim, Criterion(text, lambda ev: side(ev[0], 0.0)),
                    (Evidence("Spearman r", float(spearmanr(a, b).statistic), *boot["spearman"], len(names)),
                     Evidence("Pearson r", float(pearsonr(a, b).statistic), *boot["pearson"], len(names))),
                    section=section)


def within_pcs(within_term: dict[str, float], sets: Sequence[dict], *, section: str, seed: int) -> Finding:
    """Relations with greater within-pair similarity (Figure 1's term, mean per relation) show higher BATS PCS."""
    pcs = {r: v["pcs"] for r, v in relation_scores(sets)["bats"].items()}
    return _correlation("pcs-within", "Greater within-pair similarity, higher PCS", within_term, pcs,
                        "the within-pair term of Figure 1 (mean per relation) and the relation's PCS", section=section,
                        seed=seed)


def within_accuracy(within_term: dict[str, float], accuracy: dict[str, float], *, section: str,
                    seed: int) -> Finding:
    """Rogers et al. 2017, as the paper cites them: within-pair similarity goes with 3CosAdd accuracy."""
    return _correlation("rogers", "Within-pair similarity goes with 3CosAdd accuracy (Rogers et al.)", within_term,
                        accuracy, "the within-pair term of Figure 1 (mean per relation) and the relation's 3CosAdd "
                        "accuracy", section=section, seed=seed)
