"""The findings type: four verdicts computed from a criterion and the evidence, the rules of judgement on
hand-made numbers (an interval above, below, straddling or touching its line), and the report's findings table.
Each paper's claims are tested in its own folder (``tests/<slice>/test_*_claims.py``)."""

from __future__ import annotations

import json
import math
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from lexprobe.analogies import analogy_claims
from lexprobe.analogies.analogy import share_intervals
from lexprobe.core.findings import (AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE, Criterion, Evidence, Finding,
                                    combine, count_verdicts, intervals_above, intervals_below, side, untestable,
                                    within)
from lexprobe.rare_words import rare_word_claims
from lexprobe.runs.report import Report, Section, numbers, to_html, to_markdown
from lexprobe.senses import sense_claims
from lexprobe.senses.sense_cells import bucket_checks

ABOVE_ZERO = intervals_above(0, "interval above 0")


def _finding(*evidence: Evidence, criterion: Criterion = ABOVE_ZERO, **kw) -> Finding:
    return Finding("rare-words", "a claim", criterion, evidence, section="s", **kw)


# ------------------------------------------------------------------------------------------ the type


def test_verdict_is_computed_from_criterion_and_evidence():
    assert _finding(Evidence("gap", 0.1, 0.02, 0.2)).verdict == AGREES
    assert _finding(Evidence("gap", -0.1, -0.2, -0.02)).verdict == CONTRADICTS    # wholly below the line
    assert _finding(Evidence("gap", 0.1, -0.01, 0.2)).verdict == INCONCLUSIVE     # straddles the line
    assert _finding(Evidence("gap", 0.1, 0.0, 0.2)).verdict == INCONCLUSIVE       # touches it
    assert _finding(Evidence("gap", -0.1, -0.2, 0.0)).verdict == INCONCLUSIVE     # touches it from below
    assert _finding(Evidence("a", 0.1, 0.02, 0.2), Evidence("b", 0.1, -0.3, 0.2)).verdict == INCONCLUSIVE
    assert _finding(Evidence("a", 0.1, 0.02, 0.2), Evidence("b", -0.5, -0.6, -0.4)).verdict == CONTRADICTS
    assert _finding(Evidence("gap", math.nan)).verdict == UNTESTABLE
    assert _finding(Evidence("gap", 0.1, math.nan, math.nan)).verdict == AGREES   # no interval: the value decides
    empty = _finding()
    assert empty.verdict == UNTESTABLE and empty.reason == "this run has no numbers for it"
    assert _finding(Evidence("x", 1.0), criterion=Criterion("cannot tell", lambda ev: None)).verdict == UNTESTABLE
    why = _finding(Evidence("x", 1.0), criterion=Criterion("c", lambda ev: untestable("no rare keyword has a context")))
    assert why.verdict == UNTESTABLE and why.reason == "no rare keyword has a context"
    assert _finding(Evidence("x", 1.0), criterion=Criterion("c", lambda ev: True)).verdict == AGREES
    assert _finding(Evidence("x", 1.0), criterion=Criterion("c", lambda ev: False)).verdict == CONTRADICTS
    with pytest.raises(ValueError):
        _finding(Evidence("x", 1.0), criterion=Criterion("c", lambda ev: "maybe"))
    with pytest.raises(TypeError):
        Finding("senses", "c", ABOVE_ZERO, (), verdict=AGREES)  # never given, always computed
    with pytest.raises(FrozenInstanceError):
        _finding(Evidence("gap", 0.1, 0.02, 0.2)).verdict = CONTRADICTS


def test_side_below_and_without_interval():
    below = intervals_below(0.5, "below 0.5")
    assert _finding(Evidence("ocs", 0.3, 0.2, 0.4), criterion=below).verdict == AGREES
    assert _finding(Evidence("ocs", 0.7, 0.6, 0.8), criterion=below).verdict == CONTRADICTS
    assert _finding(Evidence("ocs", 0.5, 0.4, 0.6), criterion=below).verdict == INCONCLUSIVE
    assert side(Evidence("count", 3, n=5), 2) == AGREES and side(Evidence("count", 2, n=5), 2) == CONTRADICTS
    assert side(Evidence("v", 0.4), 0.5, above=False) == AGREES


def test_within_a_tolerance():
    # an equivalence claim: OCS of the fully random set is 0 up to one IQR (0.01 here)
    assert within(Evidence("ocs", 0.002, -0.004, 0.008), 0.0, 0.01) == AGREES
    assert within(Evidence("ocs", 0.03, 0.02, 0.04), 0.0, 0.01) == CONTRADICTS
    assert within(Evidence("ocs", 0.01, 0.005, 0.015), 0.0, 0.01) == INCONCLUSIVE
    assert within(Evidence("ocs", 0.005), 0.0, 0.01) == AGREES
    assert within(Evidence("ocs", 0.005), 0.0, math.nan) == UNTESTABLE


def test_combine_parts():
    assert combine([AGREES, AGREES]) == AGREES
    assert combine([AGREES, INCONCLUSIVE]) == INCONCLUSIVE
    assert combine([INCONCLUSIVE, CONTRADICTS, AGREES]) == CONTRADICTS
    assert combine([AGREES, UNTESTABLE]) == INCONCLUSIVE
    assert combine([UNTESTABLE, UNTESTABLE]) == UNTESTABLE and combine([]) == UNTESTABLE


def test_smallest_detectable_effect():
    # a 95% interval of half-width 1.96 SE: the effect detectable with 80% power is (1.96 + 0.84) SE
    e = Evidence("gap", 0.05, 0.05 - 1.959963984540054 * 0.1, 0.05 + 1.959963984540054 * 0.1)
    assert e.detectable == pytest.approx((1.959963984540054 + 0.8416212335729143) * 0.1)
    assert Evidence("gap", 0.1).detectable is None
    straddling = _finding(e)
    assert straddling.verdict == INCONCLUSIVE and "gap: 0.280" in straddling.power_note()
    assert _finding(Evidence("gap", 0.3, 0.1, 0.5)).power_note() == ""


def test_evidence_text_and_json():
    assert Evidence("gap", 0.03125, -0.0012, 0.061, 200).text() == "gap 0.0312 [-0.00120, 0.0610]"
    assert Evidence("gap", 0.5, 0.4, 0.6, 10).text(with_n=True) == "gap 0.500 [0.400, 0.600] (n = 10)"
    assert Evidence("rows at chance", 24, n=25).text() == "rows at chance 24/25"
    assert Evidence("entries", 12649.0).text() == "entries 12,649"
    data = _finding(Evidence("gap", 0.1, 0.02, 0.2, 7), quote="It is so.", where="Table 1",
                    paper_value="BERT: 0.3").as_dict()
    assert data["criterion"] == "interval above 0" and data["verdict"] == AGREES and data["reason"] == ""
    assert (data["quote"], data["where"], data["paper_value"]) == ("It is so.", "Table 1", "BERT: 0.3")
    assert data["evidence"][0]["detectable"] == pytest.approx(1.4294 * 0.09, rel=1e-3)
    assert {k: v for k, v in data["evidence"][0].items() if k != "detectable"} == {
        "name": "gap", "value": 0.1, "low": 0.02, "high": 0.2, "n": 7}
    json.dumps(data)


# ----------------------------------------------------------------------------------------- analogies


def _honest(shares: dict, n: int) -> Finding:
    return analogy_claims.honest_returns_b(share_intervals(shares, n), n, dataset="Google", section="g")


def test_honest_test_claim():
    clear = _honest({"b": 0.55, "a*": 0.1, "a": 0.05, "gold b*": 0.25, "other": 0.05}, 2000)
    assert clear.verdict == AGREES and clear.evidence[1].name == "next (gold b*)"
    close = _honest({"b": 0.40, "a*": 0.05, "a": 0.05, "gold b*": 0.38, "other": 0.12}, 500)  # intervals overlap
    assert close.verdict == DISAGREES
    assert _honest({"b": 0.2, "a*": 0.1, "a": 0.05, "gold b*": 0.6, "other": 0.05}, 2000).verdict == DISAGREES


def test_honest_criterion_is_the_old_rule():
    """b's interval above every other share's interval, on random shares."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = rng.dirichlet(np.ones(5) * 0.7)
        shares = dict(zip(("b", "a*", "a", "gold", "other"), map(float, p)))
        n = int(rng.integers(20, 400))
        rows = share_intervals(shares, n)
        b = rows[0]
        old = all(b["low"] > r["high"] for r in rows[1:])
        assert (analogy_claims.honest_returns_b(rows, n, dataset="BATS", section="a").verdict == AGREES) == old


def _figure1_rows(holding: tuple[int, int, int], n: int) -> list[dict]:
    names = ("within-pair positive and larger than start-offset", "offset term positive",
             "offset term smaller than within-pair")
    return [{"claim": c, "criterion": "", "holding": h, "relations": n, "exceptions": "E01 +0.1" if h < n else ""}
            for c, h in zip(names, holding)]


def test_figure1_claim():
    assert analogy_claims.figure1(_figure1_rows((40, 40, 36), 40), section="a").verdict == AGREES  # 90%
    short = analogy_claims.figure1(_figure1_rows((40, 40, 35), 40), section="a")
    assert short.verdict == DISAGREES and analogy_claims.FIGURE1_CAUSE in short.details
    assert any("Exceptions" in d and "E01" in d for d in short.details)
    assert analogy_claims.figure1(_figure1_rows((40, 39, 40), 40), section="a").verdict == DISAGREES


def _table1(bats_pcs: float, random_pcs: float, iqr: float, both_ocs: float, other_ocs: float) -> list[dict]:
    rows = []
    for category in ("inflectional", "all"):
        rows.append({"category": category, "set": "bats", "ocs": 0.3, "ocs_iqr": 0.1, "pcs": bats_pcs, "pcs_iqr": 0.1})
        for kind, ocs in (("permuted", other_ocs), ("random-both", both_ocs)):
            rows.append({"category": category, "set": kind, "ocs": ocs, "ocs_iqr": 0.1, "pcs": random_pcs,
                         "pcs_iqr": iqr})
    return rows


def test_table1_claims():
    from lexprobe.analogies.offset_baselines import chance_rows

    good = _table1(0.7, 0.51, 0.04, 0.001, 0.2)
    assert analogy_claims.table1_pcs(good, chance_rows(good), section="o").verdict == AGREES
    assert analogy_claims.table1_ocs(good, section="o").verdict == AGREES
    off_chance = _table1(0.7, 0.53, 0.04, 0.001, 0.2)  # |0.53 - 0.5| > 0.04 / 2
    pcs = analogy_claims.table1_pcs(off_chance, chance_rows(off_chance), section="o")
    assert pcs.verdict == DISAGREES and pcs.evidence[2].text() == "random rows at chance 0/4"
    assert any("permuted/all" in d for d in pcs.details)
    low_bats = _table1(0.49, 0.5, 0.04, 0.001, 0.2)
    assert analogy_claims.table1_pcs(low_bats, chance_rows(low_bats), section="o").verdict == DISAGREES
    assert analogy_claims.table1_ocs(_table1(0.7, 0.5, 0.04, 0.06, 0.2), section="o").verdict == DISAGREES
    assert analogy_claims.table1_ocs(_table1(0.7, 0.5, 0.04, -0.01, 0.02), section="o").verdict == AGREES
    assert analogy_claims.table1_ocs(_table1(0.7, 0.5, 0.04, -0.01, 0.005), section="o").verdict == DISAGREES


# -------------------------------------------------------------------------------------------- senses


def _cells(p: dict[str, float], random: float = 0.2) -> list[dict]:
    rows = [{"run": "minilm", "cell": c, "queries": 10, "lemmas": 3, "p_at_k_mean": v, "map": v,
             "random_p_at_k_mean": random, "random_map": random} for c, v in p.items()]
    return rows + [{"run": "minilm", "cell": "all", "queries": 10 * len(p), "lemmas": 9, "p_at_k_mean": 0.5,
                    "map": 0.5, "random_p_at_k_mean": random, "random_map": random}]


def _sense_finding(p: dict[str, float]) -> Finding:
    cells = _cells(p)
    return sense_claims.table1(cells, bucket_checks(cells)["minilm"], section="senses")


def test_sense_table1_claim():
    good = {"l<500, r<0.25": 0.4, "l<500, r>=0.25": 0.6, "l>=500, r<0.25": 0.3, "l>=500, r>=0.25": 0.5}
    below_random = {"l<500, r<0.25": 0.1, "l<500, r>=0.25": 0.6}
    rare_higher = {**good, "l>=500, r<0.25": 0.55}
    assert _sense_finding(good).verdict == AGREES
    assert _sense_finding(good).evidence[0].text() == "cells above random 4/4"
    assert _sense_finding(below_random).verdict == DISAGREES
    assert _sense_finding(below_random).evidence[0].text() == "cells above random 1/2"
    assert "Not above random (mean P@k or MAP): l<500, r<0.25 (10 queries)." in _sense_finding(below_random).details
    assert _sense_finding(rare_higher).verdict == DISAGREES
    assert [e.name for e in _sense_finding(rare_higher).evidence[1:]] == ["l<500: other - rare P@k",
                                                                         "l>=500: other - rare P@k"]
    for p in (good, below_random, rare_higher):  # the same verdict as the checks the run writes
        checks = bucket_checks(_cells(p))["minilm"]
        assert (_sense_finding(p).verdict == AGREES) == (checks["every_cell_beats_random"]
                                                         and checks["rare_senses_score_lower"])


# ---------------------------------------------------------------------------------------- rare words


def _recovery(static: tuple[float, float], random: tuple[float, float]) -> list[dict]:
    return [{"contexts": c, "init": "zeros", "lr": 1e-3, "start": s, "end": e}
            for c, (s, e) in (("static", static), ("random", random))]


def test_ota_recovery_claim():
    assert rare_word_claims.ota_recovery(_recovery((0.9, 0.3), (0.9, 0.2)), section="ota").verdict == AGREES
    assert rare_word_claims.ota_recovery(_recovery((0.9, 0.2), (0.9, 0.3)), section="ota").verdict == DISAGREES
    assert rare_word_claims.ota_recovery(_recovery((0.9, 0.5), (0.9, 0.2)), section="ota").verdict == DISAGREES
    one = [r for r in _recovery((0.9, 0.3), (0.9, 0.2)) if r["contexts"] == "static"]
    assert rare_word_claims.ota_recovery(one, section="ota").verdict == UNTESTABLE


def _versus(ratios: dict[str, tuple[float, float]]) -> list[dict]:
    return [{"model": m, "relation": rel, "bucket": bucket, "entries_ratio": e, "targets_ratio": t}
            for m in ("splade-tiny", "smollm2") for rel, (e, t) in ratios.items() for bucket in ("rare", "all")]


def test_table4_claim():
    within = rare_word_claims.table4(_versus({"antonym": (1.1, 1.0), "hypernym": (0.86, 1.14)}), section="w")
    assert within.verdict == AGREES and within.evidence[0].text() == "entries splade-tiny/hypernym 0.860"
    assert any(d.startswith("antonym: ") for d in within.details)  # the causes go to the section
    outside = rare_word_claims.table4(_versus({"antonym": (2.97, 1.0), "cohyponym": (1.66, 1.3)}), section="w")
    assert outside.verdict == DISAGREES and outside.evidence[1].name == "targets splade-tiny/cohyponym"
    assert rare_word_claims.table4(_versus({"corruption": (1.0, math.nan)}), section="w").verdict == DISAGREES


def test_table4_criterion_is_the_old_rule():
    """Every relation within 15% of the paper (the worst ratio of each kind shown), NaN included."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        values = rng.choice([0.8, 0.86, 0.9, 1.0, 1.1, 1.149, 1.2, math.nan], size=(3, 2))
        rows = _versus({f"r{i}": tuple(map(float, v)) for i, v in enumerate(values)})
        old = all(abs(r["entries_ratio"] - 1) <= 0.15 and abs(r["targets_ratio"] - 1) <= 0.15
                  for r in rows if r["bucket"] == "all")
        assert (rare_word_claims.table4(rows, section="w").verdict == AGREES) == old


def _effect(original: dict[str, tuple[float, float, float]]) -> list[dict]:
    rows = []
    for model, (d, low, high) in original.items():
        for strategy in ("original", "ota"):
            rows.append({"model": model, "strategy": strategy, "rare": 0.1, "frequent": 0.1 + d,
                         "frequent - rare difference": d, "frequent - rare low": low,
                         "frequent - rare high": high, "frequent - rare entries": 120})
    return rows


def test_frequency_effect_claim():
    both = rare_word_claims.frequency_effect(_effect({"splade-tiny": (0.1, 0.05, 0.15), "smollm2": (0.05, 0.01, 0.09)}),
                                             section="w")
    assert both.verdict == AGREES and [e.name for e in both.evidence] == ["splade-tiny", "smollm2"]
    straddles = _effect({"splade-tiny": (0.1, 0.05, 0.15), "smollm2": (0.02, -0.01, 0.05)})
    assert rare_word_claims.frequency_effect(straddles, section="w").verdict == DISAGREES


def _baselines(gaps: dict[str, tuple[float, float, float]]) -> list[dict]:
    return [{"model": m, "original": 0.3, "ota": 0.25, "first": 0.1, "last": 0.12, "avg": 0.15, "best baseline": "avg",
             "ota - best difference": d, "ota - best low": low, "ota - best high": high, "ota - best entries": 200}
            for m, (d, low, high) in gaps.items()]


def test_ota_vs_baselines_claim():
    clear = rare_word_claims.ota_vs_baselines(_baselines({"splade-tiny": (0.1, 0.06, 0.14)}), section="w")
    assert clear.verdict == AGREES and clear.evidence[0].text() == "splade-tiny OTA - avg 0.100 [0.0600, 0.140]"
    mixed = _baselines({"splade-tiny": (0.1, 0.06, 0.14), "smollm2": (0.03, -0.02, 0.08)})
    assert rare_word_claims.ota_vs_baselines(mixed, section="w").verdict == DISAGREES


# ------------------------------------------------------------------------------------------ the report


def _report() -> Report:
    quoted = dict(quote="Offset similarities are always positive.", where="Section 3, Figure 1",
                  paper_value="word2vec: 0.1")
    sections = [
        Section("a", "Analogies", "analogies", findings=[
            _finding(Evidence("offset term", 0.05, 0.02, 0.08, 40), **quoted),
            _finding(Evidence("within - offset", -0.1, -0.2, -0.05))]),
        Section("s", "Senses", "senses", findings=[_finding(Evidence("lift", 0.1, -0.05, 0.3, 120))]),
        Section("w", "Rare words", "rare-words", findings=[
            _finding(Evidence("share", 0.01), criterion=Criterion("c", lambda ev: untestable("too few contexts")))],
            ),
        Section("later", "A stage that did not run", "rare-words", status="skipped", note="needs a package"),
    ]
    return Report("lexprobe", sections)


def test_findings_table_has_one_short_line_per_finding(tmp_path):
    report = _report()
    all_findings = [f for s in report.sections for f in s.findings]
    verdicts = [f.verdict for f in all_findings]
    assert verdicts == [AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE]
    assert count_verdicts(all_findings) == {AGREES: 1, CONTRADICTS: 1, INCONCLUSIVE: 1, UNTESTABLE: 1}
    md = to_markdown(report)
    block = md.split("## Findings")[1].split("\n## ")[0].strip().splitlines()
    assert block[0] == "Verdicts: 1 agrees, 1 contradicts, 1 inconclusive, 1 untestable here."
    table = block[2:]
    rows = table[2:]
    assert len(rows) == len(all_findings) + 1  # and the stage that did not run
    assert all(len(line) < 200 for line in table), max(table, key=len)
    for f, line in zip(all_findings, rows):
        assert f"[{f.claim}](#{f.section})" in line and line.endswith(f"| {f.verdict} |")
        assert f.evidence[0].text() in line
    assert "skipped" in rows[-1] and "#later" in rows[-1]
    # each section quotes the paper's sentence with its place and number, and says why or how much
    a = md.split('<a id="a"></a>')[1].split('<a id="s"></a>')[0]
    assert "\u201cOffset similarities are always positive.\u201d (Section 3, Figure 1)" in a
    assert "**The paper's number:** word2vec: 0.1" in a
    s = md.split('<a id="s"></a>')[1]
    assert "**Power:** Smallest effect this sample could detect" in s and "**Why untestable:** too few contexts" in s
    assert md.count('<a id="') == len(report.sections)

    page = to_html(report, tmp_path)
    findings_html = page.split("<h2>Findings</h2>")[1].split("<h2>")[0]
    assert findings_html.count("<tr>") == len(all_findings) + 2  # the header too
    assert 'class="inconclusive"' in findings_html and 'class="contradicts"' in findings_html
    assert all(f'id="{s.key}"' in page for s in report.sections)

    data = json.loads(json.dumps(numbers(report)))
    assert [f["verdict"] for f in data["findings"]] == verdicts
