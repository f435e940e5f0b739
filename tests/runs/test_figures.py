"""Figures fit for a paper and a report that opens with its findings: PNG at 200 dpi with
SVG and PDF beside it, mathtext labels, one P@k grid, axes from zero, legends outside the bars, and the
findings table (the paper says / this run / verdict) before the details."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image as PILImage

from lexprobe.runs import plots
from lexprobe.core.findings import Criterion, Evidence, Finding
from lexprobe.runs.report import Report, Section, Table, to_html, to_markdown


@pytest.fixture
def captured(monkeypatch):
    """The figures the plot functions would save (saved as usual too)."""
    figures = []
    save = plots._save

    def keep(fig, path):
        figures.append((fig, [ax.get_ylim() for ax in fig.axes], [ax.get_legend() for ax in fig.axes],
                        fig.legends[:]))
        return save(fig, path)

    monkeypatch.setattr(plots, "_save", keep)
    return figures


def test_three_formats_dpi_and_mathtext(tmp_path, captured):
    from lexprobe.analogies.decomposition import DELTA, REFERENCE, TERMS
    from lexprobe.analogies.run_analogies import plot_decomposition

    rows = [{"relation": name, **{c: float(v) for c, v in zip(TERMS + REFERENCE + DELTA, np.linspace(-0.2, 0.4, 9) + i)}}
            for i, name in enumerate(["E01 [country - capital]", "I01 [noun - plural_reg]"])]
    pngs = plot_decomposition(rows, tmp_path, normalized=False)
    for png in pngs:
        assert {p.suffix for p in tmp_path.glob(png.stem + ".*")} == {".png", ".svg", ".pdf"}
        assert min(PILImage.open(png).info["dpi"]) >= 199.9
        assert (tmp_path / f"{png.stem}.pdf").read_bytes().startswith(b"%PDF")
    texts = [t.get_text() for fig, *_ in captured for ax in fig.axes
             for t in [ax.title, *ax.get_legend().get_texts()]]
    assert r"$\Delta_{sim}$ terms, mean per relation (raw vectors)" in texts and r"offset $o_a \cdot o_b$" in texts
    assert not any("Delta_sim" in t.replace("$\\Delta_{sim}$", "") or "o_a.o_b" in t for t in texts)
    assert "DejaVuSans-Oblique" in (tmp_path / "decomposition_delta_sim.svg").read_text()  # typeset maths
    again = tmp_path / "again"
    plot_decomposition(rows, again, normalized=False)
    for suffix in (".png", ".svg", ".pdf"):  # reproducible bytes in every format
        assert (again / f"decomposition_score{suffix}").read_bytes() == (tmp_path / f"decomposition_score{suffix}").read_bytes()


def test_axes_do_not_exaggerate_and_legends_sit_outside(tmp_path, captured):
    x = np.arange(1, 51)
    plots.line_plot(tmp_path / "line.png", x, {"a": 0.45 + 0.01 * np.sin(x), "b": np.full(50, 0.44)}, ylabel="P@k")
    plots.bar_chart(tmp_path / "bars.png", ["capital-common-countries", "gram3-comparative"],
                    {"excluded": [0.9, 0.85], "honest": [0.1, 0.88]})
    plots.bar_chart(tmp_path / "shares.png", ["a", "b"], {"x": [0.3, 0.4]}, unit_y=True)
    plots.line_grid(tmp_path / "grid.png", x, {f"cell {i}": {"model": 0.4 + 0.01 * i + 0 * x, "random": 0.2 + 0 * x}
                                                for i in range(5)}, unit_y=True, xlabel="k", ylabel="P@k")
    (line_fig, line_ylim, line_leg, _), (bar_fig, bar_ylim, bar_leg, _), (_, share_ylim, _, _), \
        (grid_fig, grid_ylim, _, grid_legs) = captured
    assert share_ylim[0] == (0.0, 1.0)  # shares on their whole scale
    assert line_ylim[0][0] <= 0 < 0.46 < line_ylim[0][1]  # 0.44 vs 0.46 not blown up to the full height
    assert bar_ylim[0][0] <= 0
    for legend in (line_leg[0], bar_leg[0]):
        assert legend.get_bbox_to_anchor().transformed(legend.axes.transAxes.inverted()).x0 >= 1.0
    visible = [ax for ax in grid_fig.axes if ax.get_visible()]
    assert len(visible) == 5 and all(ylim == (0.0, 1.0) for ylim in grid_ylim[:5]) and len(grid_legs) == 1
    assert sorted(p.name for p in tmp_path.glob("grid.*")) == ["grid.pdf", "grid.png", "grid.svg"]


def test_report_opens_with_findings_table(tmp_path):
    high = Finding("analogies", "PCS is high for inflections.", Criterion("PCS above 0.5", lambda ev: ev[0].low > 0.5),
                   (Evidence("mean PCS", 0.9, 0.85, 0.94),), section="offsets")
    section = Section("offsets", "Offsets", "analogies", findings=[high], tables=[
        Table("Table 1", [{"relation": "I01", "pcs": 0.9}]), Table("coverage", [{"relation": "I01", "kept": 48}])])
    skipped = Section("senses", "Word senses", "senses", status="skipped", note="dataset 'semcor' not found")
    report = Report("lexprobe", [section, skipped], settings={"seed": 0})
    md = to_markdown(report)
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Findings" and md.index("## Findings") < md.index("## Settings")
    table = md.split("## Findings")[1].split("## ")[0]
    assert "| paper | claim | this run | verdict |" in table
    assert "| analogies | [PCS is high for inflections.](#offsets) | mean PCS 0.900 [0.850, 0.940] | agrees |" in table
    assert "Word senses" in table and "skipped" in table and "coverage" not in table
    page = to_html(report, tmp_path)
    assert page.index("<h2>Findings</h2>") < page.index("<h2>Settings</h2>") and "<th>claim</th>" in page


def test_bar_chart_draws_the_intervals_it_is_given(tmp_path, captured):
    """``intervals`` become error bars spanning exactly (low, high) of each bar; a bar without one gets none."""
    plots.bar_chart(tmp_path / "ci.png", ["a", "b", "c"], {"x": [0.5, 0.2, 0.7], "y": [0.4, None, 0.1]},
                    intervals={"x": [(0.4, 0.65), None, (0.6, 0.75)], "y": [(0.3, 0.5), None, None]})
    (fig, *_), = captured
    spans = []
    for container in fig.axes[0].containers:
        if type(container).__name__ == "ErrorbarContainer":
            segments = container.lines[2][0].get_segments()
            spans += [tuple(round(float(v), 6) for v in (seg[0][1], seg[1][1])) for seg in segments
                      if len(seg) == 2 and np.isfinite(seg).all()]
    assert sorted(spans) == sorted([(0.4, 0.65), (0.6, 0.75), (0.3, 0.5)])
