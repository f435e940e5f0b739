"""The documentation page "What each paper claims and what lexprobe finds", generated from a run's findings (the
``findings`` of its ``report.json``), never written by hand: per paper, each claim part with the paper's sentence,
its place and printed number, the criterion, this run's numbers and the verdict. ``tools/claims_page.py`` writes
it from the main job's run into ``docs/claims.md``; the main job also writes it into its run folder."""

from __future__ import annotations

from typing import Sequence

from ..core.findings import INCONCLUSIVE, Evidence, number, verdict_line

TITLE = "What each paper claims and what lexprobe finds"


def _evidence_text(e: dict) -> str:
    return Evidence(e["name"], e["value"], e.get("low"), e.get("high"), e.get("n")).text(with_n=True)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def claims_page(findings: Sequence[dict], papers: dict[str, str], *, source: str) -> str:
    """The page's markdown from ``findings`` (dicts of :meth:`lexprobe.core.findings.Finding.as_dict`, in report
    order); ``papers`` maps a paper key to its title; ``source`` says which run the numbers come from."""
    out = [f"# {TITLE}", "",
           f"Generated from the findings of {source} by `python tools/claims_page.py RUN_DIR`; do not edit by hand.",
           "Verdicts: *agrees* (the interval lies on the claim's side of its line), *contradicts* (wholly on the "
           "other side), *inconclusive* (it straddles the line: no evidence either way; the smallest effect the "
           "sample could have detected is given), *untestable here* (the data cannot speak; the reason is given).",
           "", verdict_line(f["verdict"] for f in findings), ""]
    keys = list(dict.fromkeys([*papers, *(f["paper"] for f in findings)]))
    for key in keys:
        mine = [f for f in findings if f["paper"] == key]
        if not mine:
            continue
        out += [f"## {papers.get(key, key)}", "", "| claim | this run | verdict |", "|---|---|---|"]
        out += [f"| {_cell(f['claim'])} | {_cell(_evidence_text(f['evidence'][0]) if f['evidence'] else '')} | "
                f"{f['verdict']} |" for f in mine]
        out.append("")
        for f in mine:
            out += [f"### {f['claim']}", ""]
            if f.get("quote"):
                out += [f"> {f['quote']}" + (f" ({f['where']})" if f.get("where") else ""), ""]
            if f.get("paper_value"):
                out += [f"- **The paper's number:** {f['paper_value']}"]
            out += [f"- **Criterion:** {f['criterion']}",
                    f"- **This run:** " + ("; ".join(_evidence_text(e) for e in f["evidence"]) or "no numbers"),
                    f"- **Verdict:** {f['verdict']}" + (f" ({f['reason']})" if f.get("reason") else "")]
            if f["verdict"] == INCONCLUSIVE:
                detectable = [f"{e['name']}: {number(e['detectable'])}" for e in f["evidence"]
                              if e.get("detectable") is not None]
                if detectable:
                    out.append("- **Smallest detectable effect** (80% power): " + "; ".join(detectable))
            out.append("")
    return "\n".join(out).rstrip() + "\n"
