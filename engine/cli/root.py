"""The ``lexprobe`` command line: the root group, its sub-groups and error handling.

Commands live beside this module (one module per family); each adds its commands to the groups below. Errors users can cause end in one line ``error: ...`` and exit code 2.
"""

from __future__ import annotations

import copy
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from ..core.version import __version__
from ..core.errors import LexprobeError
from ..core.formatting import FORMATS
from ..core.progress import set_quiet
from ..core.store import default_home


@dataclass
class Context:
    """What every command gets: the index home."""

    home: Path


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--home", envvar="LEXPROBE_HOME", type=click.Path(file_okay=False),
              help="Folder holding the indexes (env LEXPROBE_HOME; default: the checkout's indexes/ when run inside "
                   "one, else ~/.local/share/lexprobe/indexes; `index list` shows it).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@click.version_option(__version__, prog_name="lexprobe")
@click.pass_context
def cli(ctx: click.Context, home: str, quiet: bool) -> None:
    """lexprobe: probe word embeddings through vector indexes.

    Build indexes (``index``), ask them questions (``query``, ``sql``) and run the papers' analyses (``run``)
    and speed benchmarks (``bench``). Indexes live under --home.
    """
    set_quiet(quiet)
    ctx.obj = Context(home=Path(home) if home else default_home())


@cli.group("index")
def index_group() -> None:
    """Build, list, inspect and verify indexes."""


@cli.group("query")
def query_group() -> None:
    """Ask an index questions (neighbours, analogies, senses, ...)."""


@cli.group("run")
def run_group() -> None:
    """Run the papers' analyses into a run folder (--out): tables, plots, a report."""


@cli.group("bench")
def bench_group() -> None:
    """Speed benchmarks: the engine against named baselines, recorded under benchmarks/."""


def paper_command(name: str):
    """Register an analysis command as ``run NAME``, and as a hidden ``bench NAME`` (its name before ``run``
    existed, kept so that old scripts keep working)."""
    def register(f):
        command = run_group.command(name)(f)
        alias = copy.copy(command)
        alias.hidden = True
        bench_group.add_command(alias, name)
        return command
    return register


@cli.group("data")
def data_group() -> None:
    """Datasets: build and list them."""


def format_option(f):
    """``--format table|json|csv``, shared by every query command."""
    return click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
                        help="Output: an aligned table, JSON (a list of objects) or CSV.")(f)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI; user errors become one line on stderr and exit code 2."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        cli.main(args=argv, prog_name="lexprobe", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(1)
    except LexprobeError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:  # full disk, permissions, ...: the file and the reason, nothing else
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(f"error: {where}{exc.strerror or exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        sys.exit(130)
