"""``index offsets``, ``query analogy`` and ``bench analogy``."""

from __future__ import annotations

import click

from ..cli import Context, index_group
from ..datasets.bats import ANSWER_POLICIES
from ..output import render

DATASET_HELP = "bats:PATH (the BATS root, a category folder or one relation file) or google:PATH (questions-words.txt)."


def _default_offsets_name(words: str, dataset: str) -> str:
    return f"{words}-{dataset.partition(':')[0]}-offsets"


@index_group.command("offsets")
@click.option("--words", "words_index", required=True, help="The words index whose raw vectors give the offsets.")
@click.option("--dataset", required=True, help=DATASET_HELP)
@click.option("--name", help="Name of the offsets index (default: WORDS-<bats|google>-offsets).")
@click.option("--answers", type=click.Choice(ANSWER_POLICIES), default="first", show_default=True,
              help="first: each pair's first listed answer (the paper); any: its first in-vocabulary answer.")
@click.option("--lowercase", is_flag=True, help="Lowercase the dataset's words (e.g. Google's names for GloVe).")
@click.pass_obj
def index_offsets(obj: Context, words_index, dataset, name, answers, lowercase) -> None:
    """Build an offsets index: one row per word pair (end - start, raw and unit), kind 'true'.

    Pairs whose start word or answer is not in the words index are dropped and reported per relation.
    """
    from ..offset_index import build_offset_index

    name = name or _default_offsets_name(words_index, dataset)
    s = build_offset_index(obj.home, name, words_index, dataset, answers=answers, lowercase=lowercase)
    click.echo(f"built {s['name']}: {s['rows']} offsets in {s['relations']} relations ({s['pairs_dropped']} of "
               f"{s['pairs_read']} pairs dropped as out of vocabulary)")
    dropped = [row for row in s["coverage"] if row["dropped"]]
    if dropped:
        click.echo(render(dropped, "table", ["code", "category", "pairs", "kept", "dropped", "coverage",
                                             "oov_examples"]))
