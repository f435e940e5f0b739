"""The claims page is generated from a run's findings: every finding one table row and one paragraph with the
paper's sentence, its number, the criterion, this run's numbers and the verdict, and the reason or the power."""

from __future__ import annotations

from lexprobe.core.findings import Criterion, Evidence, Finding, intervals_above, untestable
from lexprobe.runs.claims_page import claims_page
from lexprobe.runs.report import PAPERS, Report, Section, numbers, write_report

ABOVE = intervals_above(0, "the interval of the gap lies above 0")


def _report() -> Report:
    return Report("r", [
        Section("a", "A", "analogies", findings=[
            Finding("analogies", "offset term positive", ABOVE, (Evidence("offset", 0.05, 0.01, 0.09, 40),),
                    quote="However, they are always positive.", where="Section 3, Figure 1",
                    paper_value="word2vec GoogleNews: every relation"),
            Finding("analogies", "L10 offset positive", ABOVE, (Evidence("L10", -0.0008, -0.004, 0.002, 50),))]),
        Section("w", "W", "rare-words", findings=[
            Finding("rare-words", "contexts help", Criterion("c", lambda ev: untestable("no contexts")),
                    (Evidence("share", 0.007),))])])


def test_page_from_findings():
    page = claims_page(numbers(_report())["findings"], PAPERS, source="a test")
    assert page.startswith("# What each paper claims and what lexprobe finds\n")
    assert "Verdicts: 1 agrees, 0 contradicts, 1 inconclusive, 1 untestable here." in page
    analogies = page.split(f"## {PAPERS['analogies']}")[1].split("\n## ")[0]
    assert "| offset term positive | offset 0.0500 [0.0100, 0.0900] (n = 40) | agrees |" in analogies
    assert "> However, they are always positive. (Section 3, Figure 1)" in analogies
    assert "- **The paper's number:** word2vec GoogleNews: every relation" in analogies
    assert "- **Criterion:** the interval of the gap lies above 0" in analogies
    # the inconclusive part: 1.4286 x half-width 0.003 = 0.00429
    assert "| L10 offset positive | L10 -0.000800 [-0.00400, 0.00200] (n = 50) | inconclusive |" in analogies
    assert "- **Smallest detectable effect** (80% power): L10: 0.00429" in analogies
    rare = page.split(f"## {PAPERS['rare-words']}")[1]
    assert "- **Verdict:** untestable here (no contexts)" in rare
    assert PAPERS["senses"] not in page   # a paper without findings gets no section


def test_report_writes_the_page(tmp_path):
    paths = write_report(_report(), tmp_path)
    assert paths["claims"].read_text(encoding="utf-8").count("### ") == 3
