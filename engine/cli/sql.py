"""``lexprobe sql``: ad-hoc SQL over every index's shards (DuckDB), sandboxed unless ``--unsafe``."""

from __future__ import annotations

import click

from ..core import catalog
from .root import Context, cli, format_option
from ..core.formatting import printable, render


@cli.command("sql")
@click.argument("statement")
@click.option("--unsafe", is_flag=True,
              help="Give the statement DuckDB's full powers: read and write any file, ATTACH databases, install "
                   "and load extensions. Default: only the index views can be read.")
@format_option
@click.pass_obj
def sql(obj: Context, statement: str, unsafe: bool, fmt: str) -> None:
    """Run a SQL STATEMENT over the indexes.

    Each index is a view named after it; words, offsets and tokens are views over all indexes of
    that kind (without vector columns, with index_name). Example: lexprobe sql "select count(*) from words".
    Index folders that cannot be served (damaged, or names SQL cannot tell apart) are named on stderr.
    """
    columns, rows, skipped = catalog.query(obj.home, statement, unsafe=unsafe)
    for name, reason in skipped.items():
        click.echo(printable(f"note: {obj.home / name}: not served: {reason}"), err=True)
    click.echo(render([dict(zip(columns, r)) for r in rows], fmt, columns))
