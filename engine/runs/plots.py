"""Figures shared by the analyses: grouped bar charts, histograms, line curves and a grid of line panels
(matplotlib, Agg), fit for a paper.

Every figure is written three times beside each other: PNG at 200 dpi (for the HTML report), SVG and PDF
(vector, for a paper); the functions return the PNG path. All three are byte-for-byte reproducible (no dates,
fixed SVG ids). Labels may use mathtext (``$o_a \\cdot o_b$``). Bars start at zero; a line plot's y axis
includes zero, or spans [0, 1] for shares (``unit_y``), so that no axis exaggerates a difference. Legends sit
outside the plotting area, never over bars or curves, and the saved figure is cut to its contents (tick labels
are never cut off).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

DPI = 200
FORMATS = (".png", ".svg", ".pdf")
_METADATA = {".png": {"Software": None}, ".svg": {"Date": None, "Creator": None},
             ".pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "lexprobe"  # fixed ids inside SVG files: reproducible bytes
    plt.rcParams["font.size"] = 9
    return plt


def _save(fig, path: str | Path) -> Path:
    """Write ``fig`` as PNG (200 dpi), SVG and PDF beside each other; returns the PNG path."""
    path = Path(path).with_suffix(".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in FORMATS:
        fig.savefig(path.with_suffix(suffix), dpi=DPI, bbox_inches="tight", pad_inches=0.05,
                    metadata=_METADATA[suffix])
    _pyplot().close(fig)
    return path


def _legend_outside(ax) -> None:
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, borderaxespad=0.0)


def bar_chart(path: str | Path, labels: Sequence[str], series: Mapping[str, Sequence[float]], *,
              title: str = "", ylabel: str = "", stacked: bool = False, horizontal: bool = False,
              unit_y: bool = False, intervals: Mapping[str, Sequence[tuple | None]] | None = None) -> Path:
    """Grouped (or stacked) bars: one group per label, one bar per series; the value axis includes zero
    (``unit_y``, vertical bars: it spans [0, 1], for shares). ``intervals``: per series, a (low, high) per bar
    (None where the bar has none), drawn as error bars."""
    plt = _pyplot()
    n = len(labels)
    size = (max(5.5, 0.32 * n * max(1, len(series)) ** 0.5 + 2), 4.0) if not horizontal else (6.5, max(3.0, 0.24 * n + 1))
    fig, ax = plt.subplots(figsize=size)
    pos = np.arange(n)
    width = 0.8 if stacked else 0.8 / max(1, len(series))
    bottom = np.zeros(n)
    for j, (name, values) in enumerate(series.items()):
        values = np.asarray([np.nan if v is None else v for v in values], dtype=float)
        offset = 0 if stacked else (j - (len(series) - 1) / 2) * width
        spans = (intervals or {}).get(name)
        errors = None
        if spans is not None:
            low, high = (np.asarray([np.nan if s is None or s[i] is None else s[i] for s in spans], dtype=float)
                         for i in (0, 1))
            errors = np.vstack([values - low, high - values])  # NaN where a bar has no span: nothing drawn
        if horizontal:
            ax.barh(pos + offset, values, height=width, left=bottom if stacked else None, label=name, xerr=errors,
                    capsize=2 if errors is not None else 0)
        else:
            ax.bar(pos + offset, values, width=width, bottom=bottom if stacked else None, label=name, yerr=errors,
                   capsize=2 if errors is not None else 0)
        if stacked:
            bottom = bottom + np.nan_to_num(values)
    if horizontal:
        ax.set_yticks(pos, labels, fontsize=7)
        ax.set_ylim(n - 0.5, -0.5)  # the first label on top, as in the tables; no empty band around the bars
        ax.set_xlabel(ylabel)
        ax.axvline(0, color="black", linewidth=0.6)
        ax.grid(axis="x", alpha=0.3)
    else:
        ax.set_xticks(pos, labels, rotation=45, ha="right", rotation_mode="anchor", fontsize=7)
        ax.set_ylabel(ylabel)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.grid(axis="y", alpha=0.3)
        if unit_y:
            ax.set_ylim(0, 1)
    ax.set_axisbelow(True)
    if len(series) > 1:
        _legend_outside(ax)
    ax.set_title(title)
    return _save(fig, path)


def histograms(path: str | Path, groups: Mapping[str, Sequence[float]], *, bins: int = 50, title: str = "",
               xlabel: str = "") -> Path:
    """Overlaid, density-normalised histograms, one per group, over shared bins."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    arrays = {name: np.asarray(values, dtype=float) for name, values in groups.items()}
    finite = np.concatenate([a[np.isfinite(a)] for a in arrays.values()] or [np.zeros(1)])
    edges = np.histogram_bin_edges(finite, bins=bins) if finite.size else bins
    for name, values in arrays.items():
        ax.hist(values[np.isfinite(values)], bins=edges, density=True, histtype="step", linewidth=1.5, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density")
    ax.set_title(title)
    _legend_outside(ax)
    return _save(fig, path)


def _y_range(ax, unit_y: bool) -> None:
    if unit_y:
        ax.set_ylim(0, 1)
    else:
        low, high = ax.get_ylim()
        ax.set_ylim(min(0.0, low), max(0.0, high))


def line_plot(path: str | Path, x: Sequence[float], curves: Mapping[str, Sequence[float]], *, title: str = "",
              xlabel: str = "", ylabel: str = "", logx: bool = False, unit_y: bool = False) -> Path:
    """One line per curve over a shared x axis; y includes zero (``unit_y``: y spans [0, 1])."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.0))
    for name, values in curves.items():
        ax.plot(x, values, label=name, linewidth=1.5)
    if logx:
        ax.set_xscale("log")
    _y_range(ax, unit_y)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    _legend_outside(ax)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def line_grid(path: str | Path, x: Sequence[float], panels: Mapping[str, Mapping[str, Sequence[float]]], *,
              title: str = "", xlabel: str = "", ylabel: str = "", unit_y: bool = False, columns: int = 3) -> Path:
    """One figure of small panels (one per key of ``panels``, each with its curves) sharing both axes, so
    that panels compare at a glance; one legend for all, outside the panels."""
    plt = _pyplot()
    n = max(1, len(panels))
    cols = min(columns, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols + 1.6, 2.2 * rows + 0.6), sharex=True, sharey=True,
                             squeeze=False)
    handles = {}
    for ax, (name, curves) in zip(axes.flat, panels.items()):
        for label, values in curves.items():
            (line,) = ax.plot(x, values, linewidth=1.3, label=label,
                              color=f"C{list(handles).index(label) if label in handles else len(handles)}")
            handles.setdefault(label, line)
        ax.set_title(name, fontsize=8)
        ax.grid(alpha=0.3)
    for i in range(len(panels), rows * cols):  # empty slots: the panel above shows the x axis instead
        axes.flat[i].set_visible(False)
        axes.flat[i - cols].xaxis.set_tick_params(labelbottom=True)
        axes.flat[i - cols].set_xlabel(xlabel)
    _y_range(axes.flat[0], unit_y)
    for ax in axes[-1][:len(panels) - (rows - 1) * cols]:
        ax.set_xlabel(xlabel)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel)
    fig.legend(list(handles.values()), list(handles), loc="upper left", bbox_to_anchor=(1.0, 0.95), frameon=False,
               fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)


def tradeoff_plot(path: str | Path, curves: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[str]]], *,
                  points: Mapping[str, tuple[float, float]] | None = None, title: str = "", xlabel: str = "",
                  ylabel: str = "", logy: bool = True) -> Path:
    """Curves of (x, y) points, each point labelled (e.g. recall against queries/s per search setting, as
    ann-benchmarks draws them); ``points``: single reference points. y on a log scale by default (rates)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, (name, (xs, ys, labels)) in enumerate(curves.items()):
        ax.plot(xs, ys, marker="o", markersize=3, linewidth=1.3, label=name, color=f"C{i}",
                linestyle="--" if "faiss" in name.lower() else "-")
        for x, y, text in zip(xs, ys, labels):
            ax.annotate(text, (x, y), textcoords="offset points", xytext=(3, 3), fontsize=6, color=f"C{i}")
    for j, (name, (x, y)) in enumerate((points or {}).items()):
        ax.plot([x], [y], marker="*^sD"[j % 4], markersize=8, linestyle="none", label=name, color="k" if j == 0 else "0.5")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    _legend_outside(ax)
    ax.grid(alpha=0.3, which="both")
    return _save(fig, path)
