"""The claims of *BERT has uncommon sense* checked against a run's Table-1 cells, as
:class:`~lexprobe.core.findings.Finding` objects."""

from __future__ import annotations

from typing import Sequence

from ..core.findings import Criterion, Evidence, Finding
from .sense_cells import split_cell

PAPER = "senses"

STATEMENT = ("The paper (Table 1): every model is well above the random baseline in every bucket, and "
             "proportionally rare senses (r < 0.25) score lower than frequent ones.")

TABLE1 = Criterion("every non-empty cell's mean P@k and MAP above the random baseline's, and in every lemma-frequency "
                   "interval the rare-sense cells' P@k below the other cells' (margin > 0)",
                   lambda ev: ev[0].value == ev[0].n and all(e.value > 0 for e in ev[1:]))


def table1(cells: Sequence[dict], checks: dict, *, section: str) -> Finding:
    """Table 1 of one run: ``cells`` its rows of :func:`lexprobe.senses.sense_cells.summarize_cells`, ``checks``
    its entry of :func:`~lexprobe.senses.sense_cells.bucket_checks`."""
    rows = [r for r in cells if r["cell"] != "all" and r["queries"]]
    evidence = [Evidence("cells above random", checks["cells_compared"] - len(checks["cells_not_above_random"]),
                         n=checks["cells_compared"])]
    for l_part in dict.fromkeys(split_cell(r["cell"])[0] for r in rows):
        rare = [r["p_at_k_mean"] for r in rows if split_cell(r["cell"]) == (l_part, True)]
        common = [r["p_at_k_mean"] for r in rows if split_cell(r["cell"]) == (l_part, False)]
        if rare and common:
            evidence.append(Evidence(f"{l_part}: other - rare P@k", float(min(common) - max(rare))))
    details = (STATEMENT, "Mean P@k against the random baseline's: " + "; ".join(
        f"{r['cell']} {r['p_at_k_mean']:.3f} vs {r['random_p_at_k_mean']:.3f}" for r in rows) + ".")
    if checks["cells_not_above_random"]:
        details += ("Not above random (mean P@k or MAP): " + ", ".join(checks["cells_not_above_random"]) + ".",)
    return Finding(PAPER, "Table 1: above random everywhere, rare senses lower", TABLE1, tuple(evidence),
                   section=section, details=details)
