"""``lexprobe sql``: ad-hoc SQL over every index's shards (DuckDB)."""

from __future__ import annotations

import click

from ..core import catalog
from .root import Context, cli, format_option
from ..core.formatting import render


@cli.command("sql")
@click.argument("statement")
@format_option
@click.pass_obj
def sql_cmd(obj: Context, statement: str, fmt: str) -> None:
    """Run a SQL STATEMENT over the indexes.

    Each index is a view named after it; ``words``, ``offsets`` and ``tokens`` are views over all indexes of
    that kind (without vector columns, with ``index_name``). Example: lexprobe sql "select count(*) from words".
    """
    columns, rows = catalog.query(obj.home, statement)
    click.echo(render([dict(zip(columns, r)) for r in rows], fmt, columns))
