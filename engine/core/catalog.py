"""DuckDB catalog: SQL over the shards of every index under the home.

Each index is a view named after it (``"glove"``) with all its columns. Each kind also has a view over
all indexes of that kind (``words``, ``offsets``, ``tokens``, ...), without the vector columns (their
dimensions differ between indexes) and with an ``index_name`` column. Tombstoned rows (replaced words)
are left out. Only verified indexes are served: a corrupt one is an error naming its file.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from .errors import LexprobeError
from .store import Store, list_indexes


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def connect(home: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a view per index and per kind over the memory-mapped shards."""
    con = duckdb.connect(":memory:")
    by_kind: dict[str, list[str]] = {}
    paths = list_indexes(home)
    for n, path in enumerate(paths):
        store = Store.open(path)
        table = store.table()
        dead = store.tombstones
        if len(dead) and "id" in table.column_names:
            import pyarrow.compute as pc

            table = table.filter(pc.invert(pc.is_in(table.column("id"), pa.array(dead))))
        base = f"_shards_{n}"
        con.register(base, table)
        con.execute(f"CREATE VIEW {_quote(path.name)} AS SELECT * FROM {base}")
        scalar_cols = [f.name for f in table.schema if not pa.types.is_fixed_size_list(f.type)
                       and not pa.types.is_list(f.type)]
        by_kind.setdefault(store.kind, []).append(
            f"SELECT '{path.name}' AS index_name, {', '.join(_quote(c) for c in scalar_cols)} FROM {base}")
    for kind, selects in by_kind.items():
        if kind in {p.name for p in paths}:
            continue  # an index named like a kind keeps its own view
        con.execute(f"CREATE VIEW {_quote(kind)} AS " + " UNION ALL BY NAME ".join(selects))
    return con


def query(home: Path, sql: str) -> tuple[list[str], list[tuple]]:
    """Run ``sql`` against the catalog: (column names, rows)."""
    con = connect(home)
    try:
        rel = con.execute(sql)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0]
        raise LexprobeError(f"sql: {first}") from None
    if rel.description is None:
        return [], []
    return [d[0] for d in rel.description], rel.fetchall()
