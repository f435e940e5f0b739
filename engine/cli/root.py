"""The ``lexprobe`` command line: the root group, its sub-groups and error handling.

Commands live beside this module, one module per command group; each adds its commands to the groups below. Errors users can cause end in one line ``error: ...`` and exit code 2.
"""

from __future__ import annotations

import contextlib
import copy
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from ..core.version import __version__
from ..core.errors import LexprobeError
from ..core.formatting import FORMATS, printable
from ..core.progress import set_quiet
from .options import check_arguments
from ..core.home import default_home, using


@dataclass
class Context:
    """What every command gets: the index home."""

    home: Path


GLOBAL_FLAGS = ("-q", "--quiet")
GLOBAL_VALUED = ("--home",)
OUT_PARAMS = ("out", "out_dir")        # a command with one of these writes a run folder
LOCATION_PARAMS = OUT_PARAMS + ("record", "results", "overwrite")  # where results go, not what they are
K_ALIASES = ("--topk", "--topn")        # gensim says topn, many say top-k: the same -k


def hoist_global_options(args: list[str]) -> list[str]:
    """Move the root's options given after a subcommand (``--home DIR``, ``--home=DIR``, ``-q``/``--quiet``)
    to the front, and an output ``--format`` given before the subcommand to its end, so that each works at
    any level. Nothing after ``--`` moves."""
    head, rest, i = [], [], 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":  # the root's own options
        if args[i] in GLOBAL_VALUED + ("--format",) and i + 1 < len(args):
            (rest if args[i] == "--format" else head).extend(args[i:i + 2])
            i += 2
        elif args[i].startswith("--format="):
            rest.append(args[i])
            i += 1
        else:
            head.append(args[i])
            i += 1
    tail = []
    while i < len(args):
        a = args[i]
        if a == "--":
            tail.extend(args[i:])
            break
        if a in GLOBAL_FLAGS or a.startswith("--home="):
            head.append(a)
        elif a in GLOBAL_VALUED and i + 1 < len(args):
            head.extend(args[i:i + 2])
            i += 1
        else:
            tail.append(a)
        i += 1
    if rest and "--" in tail:
        cut = tail.index("--")
        tail = tail[:cut] + rest + tail[cut:]
    else:
        tail += rest
    return head + tail


def command_line(ctx: click.Context) -> str:
    """The command with every parameter's value (defaults included) in a form that reruns it; output locations
    (``--out``, ``--record``) left out, so that the same analysis reads the same anywhere."""
    parts = ctx.command_path.split()
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if param.name in LOCATION_PARAMS or value is None or value == ():
            continue
        if isinstance(param, click.Argument):
            parts += [str(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
        elif getattr(param, "is_flag", False) and getattr(param, "is_bool_flag", False):
            if value:
                parts.append(param.opts[0])
            elif param.secondary_opts:
                parts.append(param.secondary_opts[0])
        else:
            for v in value if param.multiple else [value]:
                parts += [param.opts[0], str(v)]
    return shlex.join(parts)


class Command(click.Command):
    """Every lexprobe command. ``-k`` also answers to ``--topk`` and ``--topn``; an option naming a words
    index as ``--words`` also answers to ``--index`` (one name per concept, the old one kept); a command with
    ``--out`` gets ``--overwrite`` and claims its run folder before it runs
    (:func:`lexprobe.runs.run_dir.begin_run`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        taken = {o for p in self.params for o in getattr(p, "opts", [])}
        for p in self.params:
            if isinstance(p, click.Option) and p.opts == ["-k"]:
                p.opts += [a for a in K_ALIASES if a not in taken]
            if isinstance(p, click.Option) and p.name == "words_index" and "--index" not in taken:
                p.opts.insert(0, "--index")
        self.run_folder = next((p.name for p in self.params if p.name in OUT_PARAMS), None)
        self.owns_overwrite = bool(self.run_folder) and not any(p.name == "overwrite" for p in self.params)
        if self.owns_overwrite:
            self.params.append(click.Option(
                ["--overwrite"], is_flag=True,
                help="Replace the previous run in the --out folder: deletes the files its run.json lists, nothing "
                     "else (refused for a folder lexprobe did not record, a home, a repository, a link)."))

    def invoke(self, ctx: click.Context):
        out = ctx.params.get(self.run_folder) if self.run_folder else None
        overwrite = ctx.params.pop("overwrite", False) if self.owns_overwrite else ctx.params.get("overwrite", False)
        if out is None:
            return super().invoke(ctx)
        from ..runs.run_dir import begin_run, end_run, run_record

        home = ctx.obj.home if isinstance(ctx.obj, Context) else None
        begin_run(out, run_record(command_line(ctx), ctx.params, home), overwrite=overwrite, home=home)
        try:
            return super().invoke(ctx)
        finally:
            end_run()


class Group(click.Group):
    """A lexprobe command group: its commands and sub-groups are :class:`Command` and :class:`Group`."""

    command_class = Command
    group_class = type  # sub-groups of the same class


class RootGroup(Group):
    """The root: global options work after the subcommand too (:func:`hoist_global_options`)."""

    group_class = Group

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(list(args)))


@click.group(cls=RootGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--home", envvar="LEXPROBE_HOME", type=click.Path(file_okay=False),
              help="Folder holding the indexes (env LEXPROBE_HOME; default: the checkout's indexes/ when run inside "
                   "one, else ~/.local/share/lexprobe/indexes; 'lexprobe index list' shows it).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
@click.version_option(__version__, prog_name="lexprobe")
@click.pass_context
def cli(ctx: click.Context, home: str, quiet: bool) -> None:
    """lexprobe: probe word embeddings through vector indexes.

    Build indexes (lexprobe index ...), ask them questions (query, sql), run the papers' analyses (run) and
    speed benchmarks (bench). Indexes live under --home. --home, --quiet and --format work before or after the
    subcommand.
    """
    set_quiet(quiet)
    ctx.obj = Context(home=Path(home) if home else default_home())
    ctx.with_resource(using(ctx.obj.home))  # every cache under this home, for this command


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


def skip_unknown_option(f):
    """``--skip-unknown``: answer what the index knows and list what was skipped, instead of stopping."""
    return click.option("--skip-unknown", is_flag=True,
                        help="Answer the known words (questions, pairs) and list the skipped ones on stderr, "
                             "instead of stopping at unknown words.")(f)


def keep_known(index, items: list, words_of=lambda item: [item], *, skip: bool, source: str = "query",
               label=lambda item: None) -> list:
    """``items`` (words, questions, pairs) whose words ``index`` knows. Unknown words stop the command with
    every one named (and its case-folded form where the index has it), unless ``skip``: then the others are
    answered and the skipped ones listed on stderr (``label`` says where an item came from, e.g. its line)."""
    from ..kinds.words import UnknownWords

    known = index.known(w for item in items for w in words_of(item))
    is_bad = [any(w not in known for w in words_of(item)) for item in items]
    bad = [item for item, b in zip(items, is_bad) if b]
    if not bad:
        return items
    unknown = [w for item in bad for w in words_of(item) if w not in known]
    where = [label(item) for item in bad]
    shown = ", ".join(map(str, where[:10])) + (f" and {len(where) - 10:,} more" if len(where) > 10 else "")
    lines = f"line{'s' if len(where) > 1 else ''} {shown}" if None not in where else ""
    if not skip:
        if len(where) == 1 and lines:  # one line: the usual FILE:LINE form
            source, lines = f"{source}:{where[0]}", ""
        raise UnknownWords(index, unknown, source,
                           hint=(f"{lines}; " if lines else "") + "--skip-unknown answers the others")
    click.echo(f"note: skipped {len(bad)} of {len(items)} with unknown words{f' ({lines})' if lines else ''}: "
               f"{index.describe(unknown)}", err=True)
    kept = [item for item, b in zip(items, is_bad) if not b]
    if not kept:
        raise LexprobeError(f"{source}: nothing left to answer: every item has an unknown word")
    return kept


MODEL_HINT_SECONDS = 5.0  # loading a model for longer than this prints the hint below


@contextlib.contextmanager
def model_hint(model: str):
    """Time a model's loading (the block); when it took long, say on stderr that every such command loads it
    again, and where it stays loaded."""
    import time

    start = time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    if seconds >= MODEL_HINT_SECONDS:
        click.echo(f"note: loading {model} took {seconds:.0f} s, and each command loads it again; from Python "
                   "(lexprobe.load_lm, lexprobe.open_index) or with 'lexprobe serve' it stays loaded between "
                   "questions", err=True)


@contextlib.contextmanager
def opened(view, obj: Context, name: str, engine: str, address: str | None, groups: int | None):
    """Index ``name`` opened as ``view`` (``WordIndex``, ``TokenIndex``): locally, or with its vectors served by
    Ray shard-group actors that stop when the block ends."""
    if engine == "local":
        yield view.open(name, home=obj.home)
        return
    from ..scale.search import open_sharded

    with open_sharded(view, obj.home, name, groups=groups, address=address) as index:
        yield index


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI; user errors become one line on stderr and exit code 2."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        check_arguments(sys.argv[1:] if argv is None else argv)
        cli.main(args=argv, prog_name="lexprobe", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # bad usage or option value: one line too, naming the command
        where = f"{exc.ctx.command_path}: " if getattr(exc, "ctx", None) is not None else ""
        message = " ".join(exc.format_message().split())
        hint = f" (see '{exc.ctx.command_path} --help')" if isinstance(exc, click.UsageError) and exc.ctx else ""
        click.echo(printable(f"error: {where}{message}{hint}"), err=True)
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(1)
    except LexprobeError as exc:
        click.echo(printable(f"error: {exc}"), err=True)  # one line, nothing a terminal obeys
        sys.exit(exc.exit_code)
    except OSError as exc:  # full disk, permissions, ...: the file and the reason, nothing else
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(printable(f"error: {where}{exc.strerror or exc}"), err=True)
        sys.exit(2)
    except MemoryError:  # a size option past what this machine holds (e.g. --resamples in the billions)
        click.echo("error: out of memory: the command asked for more memory than this machine has; use smaller "
                   "sizes (-k, --resamples, --shuffles, --batch-size, --limit)", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        sys.exit(130)
