"""A run folder: result tables as Parquet + markdown, a summary JSON and plots, written atomically.

Tables are written byte-for-byte reproducibly (no timestamps inside), so the same command and seed give
identical files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from ..core.formatting import markdown_table


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class RunDir:
    """Where one analysis writes its outputs (``<out>/<name>.parquet``, ``.md``, ``summary.json``, PNGs)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)

    def file(self, name: str) -> Path:
        return self.path / name

    def write_table(self, name: str, table: pa.Table | Sequence[dict], *, markdown: bool = True,
                    columns: Sequence[str] | None = None) -> Path:
        """``<name>.parquet`` (and ``<name>.md`` unless ``markdown=False``) from a table or a list of rows."""
        rows = None
        if not isinstance(table, pa.Table):
            rows = list(table)
            table = pa.Table.from_pylist(rows) if rows else pa.table({})
        target = self.path / f"{name}.parquet"
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        pq.write_table(table, tmp)
        os.replace(tmp, target)
        if markdown:
            rows = rows if rows is not None else table.to_pylist()
            self.write_text(f"{name}.md", markdown_table(rows, columns) + "\n")
        return target

    def write_text(self, name: str, text: str) -> Path:
        path = self.path / name
        _atomic_write_bytes(path, text.encode("utf-8"))
        return path

    def write_json(self, name: str, data: dict) -> Path:
        return self.write_text(name, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False, default=float) + "\n")
