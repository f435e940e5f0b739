"""Printing result rows as a table, JSON (a list of objects) or CSV, the same way for every query command."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from typing import Any, Sequence

FORMATS = ("table", "json", "csv")


# C0/C1 control characters (escape sequences that drive a terminal) and the bidirectional overrides that
# reorder what is shown: printed as \xNN / \uNNNN in tables and CSV (JSON escapes controls itself)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with control characters and bidi overrides escaped, safe to print on a terminal."""
    return _UNPRINTABLE.sub(lambda m: repr(m.group())[1:-1] if ord(m.group()) < 0x100 else
                            f"\\u{ord(m.group()):04x}", text)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return "" if value is None else printable(str(value))


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def render(rows: Sequence[dict], fmt: str = "table", columns: Sequence[str] | None = None) -> str:
    """Render ``rows`` (dicts sharing keys) in ``fmt``; ``columns`` fixes the order and selection."""
    if columns is None:
        columns = list(rows[0].keys()) if rows else []
    if fmt == "json":
        return json.dumps([{c: _jsonable(r.get(c)) for c in columns} for r in rows], ensure_ascii=False)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        for r in rows:
            writer.writerow([printable(v) if isinstance(v, str) else v for v in (_jsonable(r.get(c)) for c in columns)])
        return buf.getvalue().rstrip("\n")
    if fmt != "table":
        raise ValueError(f"unknown format {fmt!r}")
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def markdown_table(rows: Sequence[dict], columns: Sequence[str] | None = None) -> str:
    """A GitHub markdown table of ``rows``, for reports and benchmark records."""
    if columns is None:
        columns = list(rows[0].keys()) if rows else []
    out = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    out += ["| " + " | ".join(_cell(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(out)
