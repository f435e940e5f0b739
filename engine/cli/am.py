"""``index contexts`` (a word's context windows in a corpus) and ``am train|apply|show`` (Attentive Mimicking:
embeddings of rare words inferred from their form and contexts, inserted into a words index)."""

from __future__ import annotations

import click

from .options import INDEX_NAME, POSITIVE, SEED, replace_option
from .root import Context, index_group

_CORPUS_HELP = ("Corpus as KIND:PATH (repeat for more): text: plain text, one sentence a line (.gz/.bz2/.xz too); "
                "wsd:, streusle:, jsonl: as for index tokens; or a data-home name (semcor, wsd-eval, streusle).")


@index_group.command("contexts")
@click.option("--corpus", "corpora", required=True, multiple=True, help=_CORPUS_HELP)
@click.option("--name", required=True, type=INDEX_NAME, help="Name of the contexts index to build under the home.")
@click.option("--words", "word_args", multiple=True,
              help="Only these words: a word, or @FILE with one word a line (repeatable); default every word.")
@click.option("--window", type=POSITIVE, default=25, show_default=True, help="Words kept on each side of the word.")
@click.option("--cap", type=POSITIVE, default=1000, show_default=True,
              help="Distinct windows kept a word at most (a seeded uniform sample of them).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the sample over the cap.")
@click.option("--keep-case", is_flag=True, help="Do not lowercase the corpus (the authors lowercase).")
@click.option("--max-sentences", type=POSITIVE, help="Only the first N sentences of each corpus (a quick trial).")
@replace_option
@click.pass_obj
def index_contexts(obj: Context, corpora, name, word_args, window, cap, seed, keep_case, max_sentences,
                   replace) -> None:
    """Collect every word's context windows (+-WINDOW words in its sentence, at most CAP distinct ones a word)
    into a contexts index, the input of Attentive Mimicking (lexprobe am train)."""
    from ..kinds.contexts import build_contexts_index
    from .insert import read_words

    words = read_words(word_args) if word_args else None
    s = build_contexts_index(name, corpora, home=obj.home, words=words, window=window, cap=cap, seed=seed,
                             lowercase=not keep_case, max_sentences=max_sentences, replace=replace)
    click.echo(f"built {s['name']}: {s['windows']} windows of {s['words']} words from {s['sentences']} sentences, "
               f"{s['tokens']} tokens at {s['tokens_per_s']:.0f} tokens/s; {s['seconds']} s in all")
    if s["words_without_windows"]:
        click.echo(f"note: {s['words_without_windows']} of the words have no window in the corpora")
