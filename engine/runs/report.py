"""The run report: first the findings table (one line per finding: the paper's claim in a few words, the key
numbers with their intervals, the verdict, a link to its section), then the details: sections grouped by
paper, each with its findings (the paper's words, the criterion, every number, causes), tables, plots and
settings.

Written three times from the same model: ``report.md`` (images linked, relative to the run folder),
``report.html``, self-contained (images embedded as base64 ``data:`` URIs, minimal inline CSS), so it opens in
any browser, alone, by mail or offline, and ``report.json``: the findings as structured data and the sections'
numbers, without timings, so two runs with the same seed can be compared file to file.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

from ..core.errors import LexprobeError
from ..core.findings import AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE, Finding, verdict_line
from ..core.formatting import _cell, markdown_table
from .claims_page import claims_page
from .run_dir import RunDir

PAPERS = {
    "analogies": "Analogies minus analogy test: measuring regularities in word embeddings (Fournier, Dunbar, Dupoux 2020)",
    "senses": "BERT has uncommon sense: similarity ranking for word sense BERTology (Gessler, Schneider 2021)",
    "rare-words": "Rare words: a major problem for contextualized embeddings and how to fix it by attentive mimicking "
                  "(Schick, Schütze 2020): one-token approximation and WNLaMPro",
}
_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml"}


@dataclass
class Table:
    """A result table."""

    title: str
    rows: list[dict]
    columns: list[str] | None = None


@dataclass
class Image:
    """A plot in the run folder (``path`` relative to it)."""

    path: str
    caption: str = ""


@dataclass
class Section:
    """One stage's part of the report; ``key`` is its anchor (what its findings' ``section`` names)."""

    key: str
    title: str
    paper: str                                   # a key of PAPERS
    status: str = "done"                         # done | skipped | failed
    note: str = ""
    text: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    images: list[Image] = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    seconds: float | None = None


@dataclass
class Report:
    title: str
    sections: list[Section]
    settings: dict = field(default_factory=dict)   # run-wide: seed, models, data versions and checksums
    seconds: float | None = None


def _grouped(report: Report) -> list[tuple[str, list[Section]]]:
    keys = list(PAPERS) + [s.paper for s in report.sections if s.paper not in PAPERS]
    groups = [(k, [s for s in report.sections if s.paper == k]) for k in dict.fromkeys(keys)]
    return [(k, ss) for k, ss in groups if ss]


FINDINGS_COLUMNS = ["paper", "claim", "this run", "verdict"]


def findings(report: Report) -> list[dict]:
    """The report's opening table: one row per finding (a claim part), and one per stage that did not run, in
    report order. ``claim`` and ``section`` are the link's text and anchor; ``this run`` is the key number with
    its interval."""
    rows = []
    for paper, sections in _grouped(report):
        for s in sections:
            if s.status != "done":
                rows.append({"paper": paper, "claim": s.title, "section": s.key, "this run": "not run",
                             "verdict": s.status})
            rows += [{"paper": paper, "claim": f.claim, "section": f.section or s.key, "this run": f.key_number,
                      "verdict": f.verdict} for f in s.findings]
    return rows


def verdict_counts(report: Report) -> str:
    """The line above the findings table: how many claim parts got each verdict."""
    return verdict_line(f.verdict for s in report.sections for f in s.findings)


def _settings_rows(settings: dict) -> list[dict]:
    return [{"setting": k, "value": v if not isinstance(v, (dict, list)) else _compact(v)} for k, v in settings.items()]


def _compact(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_compact(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_compact(v) for v in value)
    return str(value)


def _status_line(section: Section) -> str:
    time = f" in {section.seconds:.1f} s" if section.seconds is not None else ""
    return f"{section.status}{time}" + (f": {section.note}" if section.note else "")


# ------------------------------------------------------------------------------------------- markdown


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def _md_findings(rows: list[dict]) -> str:
    linked = [{**r, "claim": f"[{_md_cell(r['claim'])}](#{r['section']})", "this run": _md_cell(r["this run"])}
              for r in rows]
    return markdown_table(linked, FINDINGS_COLUMNS)


def _paper_line(f: Finding) -> str:
    """The paper's own sentence and its place (the claim's short name where no sentence is quoted)."""
    said = f"\u201c{f.quote}\u201d" if f.quote else f.claim
    return said + (f" ({f.where})" if f.where else "")


def _finding_lines(f: Finding) -> list[tuple[str, str]]:
    """A finding's labelled lines, shared by the markdown and the HTML."""
    lines = [("Claim", f.claim), ("Paper", _paper_line(f))]
    if f.paper_value:
        lines.append(("The paper's number", f.paper_value))
    lines += [("Criterion", f.criterion.text), ("This run", f.observed(with_n=True))]
    if f.reason:
        lines.append(("Why untestable", f.reason))
    if f.power_note():
        lines.append(("Power", f.power_note()))
    return lines


def _md_finding(f: Finding) -> list[str]:
    out = [f"> **{label}:** {text}  " for label, text in _finding_lines(f)]
    out += [f"> **Verdict:** **{f.verdict}**", ""]
    return out + [p for d in f.details for p in (d, "")]


def to_markdown(report: Report) -> str:
    out = [f"# {report.title}", ""]
    if report.seconds is not None:
        out += [f"Total time: {report.seconds:.1f} s", ""]
    rows = findings(report)
    if rows:
        out += ["## Findings", "", verdict_counts(report), "", _md_findings(rows), ""]
    if report.settings:
        out += ["## Settings", "", markdown_table(_settings_rows(report.settings), ["setting", "value"]), ""]
    for paper, sections in _grouped(report):
        out += [f"## {PAPERS.get(paper, paper)}", ""]
        for s in sections:
            out += [f'<a id="{s.key}"></a>', "", f"### {s.title}", "", f"*{_status_line(s)}*", ""]
            out += [p for t in s.text for p in (t, "")]
            out += [line for f in s.findings for line in _md_finding(f)]
            for t in s.tables:
                out += [f"#### {t.title}", "", markdown_table(t.rows, t.columns) if t.rows else "(no rows)", ""]
            for im in s.images:
                out += [f"![{im.caption}]({im.path})", ""] + ([f"*{im.caption}*", ""] if im.caption else [])
            if s.settings:
                out += ["Settings: " + "; ".join(f"{k} = {_compact(v)}" for k, v in s.settings.items()), ""]
    return "\n".join(out).rstrip() + "\n"


# ----------------------------------------------------------------------------------------------- html

_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;background:#fff}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}img{max-width:100%;border:1px solid #ddd}
blockquote{border-left:4px solid #89a;margin:.5em 0;padding:.2em 1em;background:#f6f8fa}.agrees{color:#176b2c}
.contradicts{color:#a11}.inconclusive{color:#8a5a00}.untestable{color:#555}.status{color:#555;font-style:italic}.skipped{color:#a60}code{background:#f3f3f3;padding:0 .2em}"""
_VERDICT_CLASS = {AGREES: "agrees", CONTRADICTS: "contradicts", INCONCLUSIVE: "inconclusive", UNTESTABLE: "untestable"}


def _inline(text: str) -> str:
    """Escape ``text``; keep ``code`` and **bold** from the markdown."""
    text = html.escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


def _html_table(rows: Sequence[dict], columns: Sequence[str] | None = None) -> str:
    if not rows:
        return "<p>(no rows)</p>"
    columns = list(columns or rows[0].keys())
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows:
        cells = []
        for c in columns:
            v = r.get(c)
            cls = ' class="n"' if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
            cells.append(f"<td{cls}>{_inline(_cell(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _html_findings(rows: list[dict]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in FINDINGS_COLUMNS)
    body = "".join(
        f"<tr><td>{html.escape(r['paper'])}</td>"
        f'<td><a href="#{html.escape(r["section"])}">{html.escape(r["claim"])}</a></td>'
        f"<td>{html.escape(r['this run'])}</td>"
        f'<td class="{_VERDICT_CLASS.get(r["verdict"], "status")}">{html.escape(r["verdict"])}</td></tr>'
        for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_finding(f: Finding) -> str:
    verdict = f'<strong class="{_VERDICT_CLASS.get(f.verdict, "status")}">{html.escape(f.verdict)}</strong>'
    lines = "".join(f"<p><strong>{html.escape(label)}:</strong> {_inline(text)}</p>"
                    for label, text in _finding_lines(f))
    return (f"<blockquote>{lines}<p><strong>Verdict:</strong> {verdict}</p></blockquote>"
            + "".join(f"<p>{_inline(d)}</p>" for d in f.details))


def data_uri(path: Path) -> str:
    """A file as a base64 ``data:`` URI (PNG, JPEG, SVG)."""
    mime = _MIME.get(path.suffix.lower())
    if mime is None:
        raise LexprobeError(f"{path}: cannot embed images of type {path.suffix!r} in the report")
    try:
        payload = base64.b64encode(path.read_bytes()).decode("ascii")
    except FileNotFoundError:
        raise LexprobeError(f"{path}: image referenced by the report is missing") from None
    return f"data:{mime};base64,{payload}"


def to_html(report: Report, run_dir: Path) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{html.escape(report.title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{html.escape(report.title)}</h1>"]
    if report.seconds is not None:
        out.append(f"<p>Total time: {report.seconds:.1f} s</p>")
    rows = findings(report)
    if rows:
        out += ["<h2>Findings</h2>", f"<p>{html.escape(verdict_counts(report))}</p>", _html_findings(rows)]
    if report.settings:
        out += ["<h2>Settings</h2>", _html_table(_settings_rows(report.settings), ["setting", "value"])]
    for paper, sections in _grouped(report):
        out.append(f"<h2>{html.escape(PAPERS.get(paper, paper))}</h2>")
        for s in sections:
            cls = "status" + ("" if s.status == "done" else " skipped")
            out += [f'<h3 id="{html.escape(s.key)}">{html.escape(s.title)}</h3>',
                    f'<p class="{cls}">{_inline(_status_line(s))}</p>']
            out += [f"<p>{_inline(t)}</p>" for t in s.text]
            out += [_html_finding(f) for f in s.findings]
            for t in s.tables:
                out += [f"<h4>{html.escape(t.title)}</h4>", _html_table(t.rows, t.columns)]
            for im in s.images:
                src = data_uri(run_dir / im.path)
                out.append(f'<figure><img src="{src}" alt="{html.escape(im.caption)}">'
                           + (f"<figcaption>{_inline(im.caption)}</figcaption>" if im.caption else "") + "</figure>")
            if s.settings:
                out.append("<p>Settings: " + "; ".join(f"{html.escape(k)} = {_inline(_compact(v))}"
                                                        for k, v in s.settings.items()) + "</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------- writing


def numbers(report: Report) -> dict:
    """The report's content without timings, what two runs with the same seed must share: every finding as
    structured data (``section`` names its section's ``key``), then the sections."""
    sections = []
    for s in report.sections:
        d = asdict(s)
        for key in ("findings", "seconds"):
            d.pop(key)
        sections.append(d)
    return {"title": report.title, "findings": [f.as_dict() for s in report.sections for f in s.findings],
            "sections": sections}


def write_report(report: Report, run_dir: str | Path) -> dict[str, Path]:
    """Write ``report.md``, ``report.html``, ``report.json`` and the claims page ``claims.md``
    (:func:`lexprobe.runs.claims_page.claims_page`) into ``run_dir`` (atomically, each)."""
    run = RunDir(run_dir)
    page = to_html(report, run.path)  # first: a missing image fails before anything is replaced
    data = numbers(report)
    return {"md": run.write_text("report.md", to_markdown(report)),
            "html": run.write_text("report.html", page),
            "json": run.write_json("report.json", data),
            "claims": run.write_text("claims.md", claims_page(data["findings"], PAPERS, source=f"`{run.path.name}`"))}
