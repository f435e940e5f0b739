"""The claims of *Analogies minus analogy test* checked against a run's tables, as
:class:`~lexprobe.core.findings.Finding` objects: the honest test returns b (section 3), Figure 1's three claims
on the score terms, and Table 1's pairing consistency and offset concentration of the random analogy sets.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ..core.findings import AGREES, Criterion, Evidence, Finding

PAPER = "analogies"

STATEMENTS = {
    "honest": "The paper (section 3, after Linzen 2016): without excluding a, a* and b, 3CosAdd tends to return "
              "one of the inputs, most of the time b.",
    "figure1": "The paper (Figure 1): within-pair similarity is positive and large compared to the other terms; "
               "offset similarities are almost always smaller, but always positive.",
    "pcs": "The paper (Table 1): the real BATS sets show PCS above chance; all random analogy sets show PCS of "
           "0.5 (within one half-interquartile range).",
    "ocs": "The paper (Table 1): the fully random set has an OCS of zero; the other random analogy sets all show "
           "non-zero OCS.",
}
FIGURE1_CAUSE = "Likely cause of a difference: GloVe 50d vectors here, word2vec 300d in the paper."

HONEST = Criterion("b returned most often: its Wilson 95% interval lies above every other share's "
                   "(the next share shown is the one reaching highest)",
                   lambda ev: ev[0].low > ev[1].high)
FIGURE1 = Criterion("(1) and (2) in every relation, (3) in at least 90% of them",
                    lambda ev: ev[0].value == ev[0].n and ev[1].value == ev[1].n and ev[2].value >= 0.9 * ev[2].n)
PCS = Criterion("BATS PCS above 0.5 in every broad category, and every random-set row (category, set) within one "
                "half-interquartile range of 0.5: distance <= IQR/2",
                lambda ev: ev[1].value == ev[1].n and ev[2].value == ev[2].n)
OCS = Criterion("random-both OCS within 0.05 of 0, and every other random set's OCS above its absolute value",
                lambda ev: abs(ev[0].value) < 0.05 and ev[1].value > abs(ev[0].value))


def honest_returns_b(rows: Sequence[dict], n: int, *, dataset: str, section: str) -> Finding:
    """What the honest test returns (rows of :func:`lexprobe.analogies.analogy.share_intervals` over ``n``
    questions, one of them ``b``): is b the most frequent answer, its interval above every other share's?"""
    b = next(r for r in rows if r["returned"] == "b")
    runner_up = max((r for r in rows if r["returned"] != "b"), key=lambda r: r["high"])
    evidence = (Evidence("b", float(b["share"]), float(b["low"]), float(b["high"]), n),
                Evidence(f"next ({runner_up['returned']})", float(runner_up["share"]), float(runner_up["low"]),
                         float(runner_up["high"]), n))
    return Finding(PAPER, f"{dataset}: honest 3CosAdd returns b most often", HONEST, evidence, section=section,
                   details=(STATEMENTS["honest"],))


def figure1(claims: Sequence[dict], *, section: str) -> Finding:
    """Figure 1's three claims (rows of :func:`lexprobe.analogies.decomposition.figure1_claims`, in its order),
    each counted over the relations."""
    names = ("within dominant", "offset > 0", "offset < within")
    evidence = tuple(Evidence(f"({k}) {name}", int(c["holding"]), n=int(c["relations"]))
                     for k, (name, c) in enumerate(zip(names, claims), 1))
    exceptions = [f"({k}) {c['claim']}: {c['exceptions']}" for k, c in enumerate(claims, 1)
                  if c["exceptions"] and c["holding"] > c["relations"] / 2]
    details = (STATEMENTS["figure1"],) + (("Exceptions: " + "; ".join(exceptions) + ".",) if exceptions else ())
    finding = Finding(PAPER, "Figure 1: within-pair term dominates, offset positive", FIGURE1, evidence,
                      section=section, details=details)
    return finding if finding.verdict == AGREES else replace(finding, details=details + (FIGURE1_CAUSE,))


def table1_pcs(table1: Sequence[dict], rule: Sequence[dict], *, section: str) -> Finding:
    """Table 1's PCS: BATS above chance, the random sets at chance by the paper's half-IQR rule (``table1``:
    rows of :func:`lexprobe.analogies.offset_baselines.table1`'s ``by_category``, ``rule``: of its
    ``chance_rows``)."""
    bats = [r for r in table1 if r["set"] == "bats"]
    overall = next(r for r in bats if r["category"] == "all")
    failing = [r for r in rule if not r["within"]]
    evidence = (Evidence("BATS PCS", float(overall["pcs"])),
                Evidence("BATS rows above 0.5", sum(r["pcs"] > 0.5 for r in bats), n=len(bats)),
                Evidence("random rows at chance", len(rule) - len(failing), n=len(rule)))
    details = [STATEMENTS["pcs"],
               f"BATS PCS {overall['pcs']:.3f} (IQR {overall['pcs_iqr']:.3f}), by category "
               + ", ".join(f"{r['category']} {r['pcs']:.3f}" for r in bats if r["category"] != "all") + "."]
    if failing:
        details.append("Random-set rows outside the rule: " + ", ".join(
            f"{r['set']}/{r['category']} (|{r['pcs']:.4f} - 0.5| = {r['distance']:.4f} > {r['half_iqr']:.4f})"
            for r in failing) + ".")
    return Finding(PAPER, "Table 1: PCS above chance for BATS, at chance for random sets", PCS, evidence,
                   section=section, details=tuple(details))


def table1_ocs(table1: Sequence[dict], *, section: str) -> Finding:
    """Table 1's OCS over all relations: zero for the fully random set, non-zero for the other random sets."""
    overall = {r["set"]: r for r in table1 if r["category"] == "all" and r["set"] != "bats"}
    both = overall["random-both"]
    others = [r["ocs"] for k, r in overall.items() if k != "random-both"]
    evidence = (Evidence("random-both OCS", float(both["ocs"])), Evidence("lowest other OCS", float(min(others))))
    return Finding(PAPER, "Table 1: OCS zero only for the fully random set", OCS, evidence, section=section,
                   details=(STATEMENTS["ocs"], f"Other random sets: OCS {min(others):.3f} to {max(others):.3f}."))
