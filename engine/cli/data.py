"""``run all`` (the main job: every analysis, one report), ``data fetch`` and ``data list`` (the data home)."""

from __future__ import annotations

from pathlib import Path

import click

from ..sources import datahome
from .root import Context, data_group, format_option, paper_command
from ..core.errors import LexprobeError
from ..core.formatting import render

_DATA_HOME_HELP = "The data home (env LEXPROBE_DATA; default ~/.local/share/lexprobe/data)."


def _stage_list(value: str | None) -> list[str] | None:
    return [s.strip() for s in value.split(",") if s.strip()] if value else None


@paper_command("all")
@click.option("--out", "out", type=click.Path(file_okay=False),
              help="Run folder: report.md, report.html, report.json and one sub-folder per stage (required).")
@click.option("--data", "data", type=click.Path(file_okay=False, exists=True),
              help="A folder holding the datasets (a data home, or ../shared/data). Default: the data home, "
                   "then ../shared/data beside the repository, then the Google set in gensim's test data.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice in every stage.")
@click.option("--stages", help="Comma-separated stages to run (default: all). See --list-stages.")
@click.option("--quick", is_flag=True, help="Subsets everywhere (e.g. 2,000 Google questions): a smoke run.")
@click.option("--list-stages", is_flag=True, help="Print the stages, what each needs, and exit.")
@click.pass_obj
def bench_all(obj: Context, out, data, seed, stages, quick, list_stages) -> None:
    """Run the papers' analyses end to end and write RUN_DIR/report.md and a self-contained report.html.

    Indexes are built under --home once and reused when their manifest matches. A stage whose dataset is
    missing is skipped, saying which `lexprobe data fetch` to run. The total time is printed at the end.
    """
    from ..suite.main_job import STAGES, Settings, locate_data, run_all, select

    if list_stages:
        rows = [{"stage": s.name, "paper": s.paper, "datasets": ",".join(s.datasets), "about": s.about}
                for s in STAGES]
        click.echo(render(rows, "table"))
        return
    if not out:
        raise click.UsageError("Missing option '--out'.")
    chosen = select(_stage_list(stages))
    paths, info = locate_data(Path(data) if data else None)
    settings = Settings(home=obj.home, seed=seed, quick=quick, data=paths, data_info=info)
    report = run_all(Path(out), settings, chosen, echo=click.echo)
    click.echo(f"report: {Path(out) / 'report.md'} and {Path(out) / 'report.html'}")
    failed = [s.key for s in report.sections if s.status == "failed"]
    if failed:
        raise LexprobeError(f"stage(s) failed: {', '.join(failed)} (see the report)")


@data_group.command("fetch")
@click.argument("name", type=click.Choice(list(datahome.DATASETS)))
@click.option("--from", "from_path", type=click.Path(),
              help="Take a local copy instead of downloading: a folder holding the dataset (hard-linked into the "
                   "data home, copied across filesystems), its release archive (.zip/.tar.*), or its single file.")
@click.option("--data-home", envvar="LEXPROBE_DATA", type=click.Path(file_okay=False), help=_DATA_HOME_HELP)
def data_fetch(name, from_path, data_home) -> None:
    """Put dataset NAME into the data home: download the official release (or take --from PATH), unpack it,
    and record its source and SHA-256 in NAME/FETCH.json."""
    record = datahome.fetch(name, from_path, Path(data_home) if data_home else None)
    click.echo(f"fetched {name} ({record['method']}): {record['files']} files, {record['bytes']} bytes, "
               f"sha256 {record['sha256'][:16]}... from {record['source']}")
    if record.get("skipped_links"):
        links = record["skipped_links"]
        click.echo(f"skipped {len(links)} links (to folders, or to files outside the source): "
                   + ", ".join(links[:5]) + (" ..." if len(links) > 5 else ""))


@data_group.command("list")
@click.option("--data-home", envvar="LEXPROBE_DATA", type=click.Path(file_okay=False), help=_DATA_HOME_HELP)
@click.option("--verify", is_flag=True, help="Recompute every checksum: status 'changed' when files differ.")
@format_option
def data_list(data_home, verify, fmt) -> None:
    """The known datasets and what the data home holds: status, path, source, checksum, fetch time."""
    home = Path(data_home) if data_home else datahome.data_home()
    rows = datahome.list_datasets(home, verify=verify)
    if fmt == "table":
        click.echo(f"data home: {home}")
    click.echo(render(rows, fmt, ["name", "status", "path", "source", "sha256", "files", "fetched", "hint"]))
