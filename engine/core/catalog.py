"""DuckDB catalog: SQL over the shards of every index under the home.

Each index is a view named after it (``"glove"``) with all its columns; a name SQL would need quoted
(``"glove-6b"``) also gets an alias with ``_`` for every other character (``glove_6b``) unless that names
something else. ``show tables`` lists exactly these views. Each kind also has a view over
all indexes of that kind (``words``, ``offsets``, ``tokens``), without the vector columns (their
dimensions differ between indexes) and with an ``index_name`` column. Tombstoned rows (replaced words)
are left out.

What is on disk is never trusted: a folder whose name is not a valid index name, is named like a kind's view,
or differs only in case from another (DuckDB's names are case-insensitive) is skipped, and so is an index
that fails verification; each skipped folder is reported with its reason, and the healthy indexes are served.
Names reach SQL only quoted, after validation; the shards are registered as Arrow tables, not read by path.

The connection is sandboxed unless ``unsafe``: no file system, no network, no extensions, no Python variables
(DuckDB's ``enable_external_access``, ``autoload/autoinstall_known_extensions``, ``python_enable_replacements``),
and the configuration is locked so that a statement cannot undo it. Only the views are readable; tables a
statement creates live in memory and vanish with the connection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from .errors import LexprobeError
from .formatting import printable
from .store import RESERVED_NAMES, Store, is_valid_name, list_indexes

SANDBOX = {"enable_external_access": False, "autoinstall_known_extensions": False,
           "autoload_known_extensions": False, "allow_community_extensions": False,
           "python_enable_replacements": False}


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Catalog:
    """An open connection with its views, and the folders left out (name -> reason)."""

    connection: duckdb.DuckDBPyConnection
    served: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # unquoted alias -> index name (glove_6b -> glove-6b)


def _usable_folders(home: Path, skipped: dict[str, str]) -> list[Path]:
    """Index folders whose names can be views: valid, not a kind view's name, unique ignoring case."""
    by_lower: dict[str, list[Path]] = {}
    for path in list_indexes(home):
        name = path.name
        if not is_valid_name(name):
            skipped[name] = "not a valid index name (letters, digits, '_', '-', '.')"
        elif name.lower() in RESERVED_NAMES:
            skipped[name] = f"named like the view over all {name.lower()} indexes"
        else:
            by_lower.setdefault(name.lower(), []).append(path)
    usable = []
    for paths in by_lower.values():
        if len(paths) == 1:
            usable.append(paths[0])
            continue
        names = ", ".join(repr(p.name) for p in paths)
        for p in paths:
            skipped[p.name] = f"names {names} differ only in case (SQL names are case-insensitive): rename one"
    return sorted(usable)


def connect(home: Path, *, unsafe: bool = False) -> Catalog:
    """An in-memory DuckDB connection with a view per healthy index and per kind over the memory-mapped shards."""
    con = duckdb.connect(":memory:", config={} if unsafe else dict(SANDBOX))
    catalog = Catalog(con)
    by_kind: dict[str, list[str]] = {}
    for path in _usable_folders(home, catalog.skipped):
        try:
            store = Store.open(path)
        except LexprobeError as exc:
            catalog.skipped[path.name] = f"damaged ({exc})"
            continue
        table = store.table()
        dead = store.tombstones
        if len(dead) and "id" in table.column_names:
            table = table.filter(pc.invert(pc.is_in(table.column("id"), pa.array(dead))))
        base = quote_identifier(path.name)
        con.from_arrow(table).create_view(path.name)  # the view itself holds the shards: no helper table to list
        catalog.served.append(path.name)
        scalar_cols = [f.name for f in table.schema if not pa.types.is_fixed_size_list(f.type)
                       and not pa.types.is_list(f.type)]
        if store.kind in RESERVED_NAMES:
            by_kind.setdefault(store.kind, []).append(
                f"SELECT {quote_literal(path.name)} AS index_name, "
                f"{', '.join(quote_identifier(c) for c in scalar_cols)} FROM {base}")
    for kind, selects in by_kind.items():
        con.execute(f"CREATE VIEW {quote_identifier(kind)} AS " + " UNION ALL BY NAME ".join(selects))
    taken = {n.lower() for n in catalog.served} | set(RESERVED_NAMES)
    for name in catalog.served:  # glove-6b -> glove_6b too: a name SQL takes without quotes
        alias = re.sub(r"[^A-Za-z0-9_]", "_", name)
        if alias != name and alias.lower() not in taken:
            taken.add(alias.lower())
            con.execute(f"CREATE VIEW {quote_identifier(alias)} AS SELECT * FROM {quote_identifier(name)}")
            catalog.aliases[alias] = name
    if not unsafe:
        con.execute("SET lock_configuration = true")
    return catalog


def query(home: Path, sql: str, *, unsafe: bool = False) -> tuple[list[str], list[tuple], dict[str, str]]:
    """Run ``sql`` against the catalog: (column names, rows, skipped folders with their reasons)."""
    if not sql.strip():
        raise LexprobeError("sql: the statement is empty")
    catalog = connect(home, unsafe=unsafe)
    try:
        rel = catalog.connection.execute(sql)
        if rel is None or rel.description is None:
            return [], [], catalog.skipped
        return [d[0] for d in rel.description], rel.fetchall(), catalog.skipped
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        left_out = "; ".join(f"{name}: {reason}" for name, reason in catalog.skipped.items())
        left_out = f" (not served: {left_out})" if left_out else ""
        raise LexprobeError(printable(f"sql: {first}{left_out}")) from None
    finally:
        catalog.connection.close()
