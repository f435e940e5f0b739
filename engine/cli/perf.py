"""``bench perf``: every speed benchmark in one run (see perf/suite.py)."""

from __future__ import annotations

from pathlib import Path

import click

from .root import Context, bench_group


@bench_group.command("perf")
@click.option("--out", type=click.Path(file_okay=False), default="runs/perf", show_default=True,
              help="Run folder: one detailed record per benchmark, perf.parquet/.md and RESULTS.md.")
@click.option("--only", help="Comma-separated benchmarks to run (neighbors, analogy, offsets, encode, senses, ota, "
                             "probing, ota-smollm2, probing-smollm2); default all.")
@click.option("--data", "data_path", type=click.Path(exists=True, file_okay=False),
              help="Folder holding the datasets (default: the data home, then ../shared/data).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--results", default="benchmarks/RESULTS.md", show_default=True,
              help="Markdown file the summary table is appended to ('' for none).")
@click.pass_obj
def bench_perf(obj: Context, out, only, data_path, seed, results) -> None:
    """Every speed benchmark, each as a ratio against its named baseline on this machine, in one table."""
    from ..core.formatting import render
    from ..suite.bench_perf import run_perf
    from ..suite.main_job import locate_data

    data, _ = locate_data(Path(data_path) if data_path else None)
    rows = run_perf(obj.home, out, data, seed=seed, only=[s.strip() for s in only.split(",")] if only else None,
                    results_path=results or None, echo=click.echo)
    click.echo(render(rows, "table", ["benchmark", "ratio", "floor", "status", "seconds", "unit", "baseline"]))
