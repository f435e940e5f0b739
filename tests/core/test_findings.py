"""The findings type: four verdicts computed from a criterion and the evidence, the rules of judgement on
hand-made numbers (an interval above, below, straddling or touching its line), and the report's findings table.
Each paper's claims are tested in its own folder (``tests/<slice>/test_*_claims.py``)."""

from __future__ import annotations

import json
import math
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

from lexprobe.core.findings import (AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE, Criterion, Evidence, Finding,
                                    combine, count_verdicts, intervals_above, intervals_below, side, untestable,
                                    within)
from lexprobe.runs.report import Report, Section, numbers, to_html, to_markdown

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
    assert count_verdicts(verdicts) == {AGREES: 1, CONTRADICTS: 1, INCONCLUSIVE: 1, UNTESTABLE: 1}
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
