"""PNG plots shared by the analyses: grouped bar charts, histograms and line curves (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
    return path


def bar_chart(path: str | Path, labels: Sequence[str], series: Mapping[str, Sequence[float]], *,
              title: str = "", ylabel: str = "", stacked: bool = False, horizontal: bool = False) -> Path:
    """Grouped (or stacked) bars: one group per label, one bar per series."""
    plt = _pyplot()
    n = len(labels)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * n * max(1, len(series)) ** 0.5 + 2), 4.5) if not horizontal
                           else (7, max(4.0, 0.3 * n + 1)))
    pos = np.arange(n)
    width = 0.8 if stacked else 0.8 / max(1, len(series))
    bottom = np.zeros(n)
    for j, (name, values) in enumerate(series.items()):
        values = np.asarray(values, dtype=float)
        offset = 0 if stacked else (j - (len(series) - 1) / 2) * width
        if horizontal:
            ax.barh(pos + offset, values, height=width, left=bottom if stacked else None, label=name)
        else:
            ax.bar(pos + offset, values, width=width, bottom=bottom if stacked else None, label=name)
        if stacked:
            bottom = bottom + values
    if horizontal:
        ax.set_yticks(pos, labels, fontsize=7)
        ax.set_xlabel(ylabel)
        ax.axvline(0, color="black", linewidth=0.6)
    else:
        ax.set_xticks(pos, labels, rotation=75, ha="right", fontsize=7)
        ax.set_ylabel(ylabel)
        ax.axhline(0, color="black", linewidth=0.6)
    if len(series) > 1:
        ax.legend(fontsize=8)
    ax.set_title(title)
    return _save(fig, path)


def histograms(path: str | Path, groups: Mapping[str, Sequence[float]], *, bins: int = 50, title: str = "",
               xlabel: str = "") -> Path:
    """Overlaid, density-normalised histograms, one per group."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, values in groups.items():
        ax.hist(np.asarray(values, dtype=float), bins=bins, density=True, histtype="step", linewidth=1.5, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("density")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _save(fig, path)


def line_plot(path: str | Path, x: Sequence[float], curves: Mapping[str, Sequence[float]], *, title: str = "",
              xlabel: str = "", ylabel: str = "", logx: bool = False) -> Path:
    """One line per curve over a shared x axis."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, values in curves.items():
        ax.plot(x, values, label=name, linewidth=1.5)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, path)
