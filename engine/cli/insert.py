"""``lexprobe ota``: one-token approximations inserted into an existing words index.

A top-level command, not an ``index`` one: it adds rows to a words index built before (``index words --vectors
hf:MODEL``) with the model whose input embeddings that index holds, rather than building one.
"""

from __future__ import annotations

import os

import click

from .root import Context, cli, format_option
from .options import NON_NEGATIVE, NON_NEGATIVE_FLOAT, POSITIVE, device_option, ota_options
from ..core.errors import InputError, LexprobeError
from ..rare_words.ota import DEFAULTS as _DEFAULTS
from ..core.formatting import render
from ..sources.datasets.word_lines import bounded_lines


def read_words(values) -> list[str]:
    """Words from the arguments: ``@FILE`` is read (one word a line), any other value is a word (even when a
    file of that name exists: a word must not silently become a word list)."""
    words: list[str] = []
    for value in values:
        if value.startswith("@") and len(value) > 1:
            value = value[1:]
            if os.path.isdir(value):
                raise InputError(value, "is a folder, not a word list")
            if not os.path.exists(value):  # a FIFO or a device is refused by name when read
                raise InputError(value, "word list not found (write @FILE for a file of words)")
            words += [line.strip() for _, line in bounded_lines(value) if line.strip()]
        else:
            words.append(value)
    words = list(dict.fromkeys(words))
    if not words:
        raise LexprobeError("no words to approximate (the files are empty?)")
    return words


@cli.command("ota")
@click.option("--model", required=True, help="The model: 'minilm', 'splade-tiny', a Hugging Face name or a local "
                                             "path. Must be the model whose input embeddings the index holds.")
@click.option("--into", "into", required=True,
              help="A words index built with: lexprobe index words --vectors hf:MODEL.")
@click.option("--words", "word_args", multiple=True,
              help="A word, or @FILE for a file with one word a line; repeat the option for more (words may also "
                   "follow as arguments).")
@click.argument("more_words", nargs=-1)
@ota_options
@click.option("--layers", default=_DEFAULTS["layers"], show_default=True,
              help="Layers in the loss: 'all' (1..L, the paper), 'all-but-last' (the authors' code) or '1,2,3'.")
@click.option("--batch-size", type=POSITIVE, default=64, show_default=True, help="Words optimised together.")
@click.option("--patience", type=NON_NEGATIVE, default=_DEFAULTS["patience"], show_default=True,
              help="Stop a word once its loss (mean over 50 iterations) has not improved by --tol for this many "
                   "iterations; 0 runs all --iterations.")
@click.option("--tol", type=NON_NEGATIVE_FLOAT, default=_DEFAULTS["tol"], show_default=True,
              help="Relative improvement that counts for --patience.")
@click.option("--replace", is_flag=True, help="Replace words the index already has (otherwise an error).")
@device_option
@format_option
@click.pass_obj
def ota(obj: Context, model, into, word_args, more_words, iterations, contexts, init, lr, seed, layers,
        batch_size, patience, tol, replace, device, fmt) -> None:
    """One-token approximations of WORDS, inserted into the words index --into (origin 'ota').

    Each word's OTA vector is the single input embedding whose effect on the hidden states of the
    surrounding context tokens best matches that of the word's subword tokens (Schick & Schuetze 2020).
    Rows printed: word, tokens (subword count), iterations run, final loss.
    """
    from ..rare_words.inserted_vectors import insert_ota

    words = read_words(list(word_args) + list(more_words))
    summary = insert_ota(into, model, words, home=obj.home, replace=replace, iterations=iterations,
                         contexts=contexts, init=init, lr=lr, layers=layers, seed=seed, batch_size=batch_size,
                         patience=patience or None, tol=tol, device=device)
    rows = summary["words"]
    click.echo(render(rows, fmt, ["word", "tokens", "iterations", "final_loss"]))
    if fmt == "table":
        click.echo(f"inserted {summary['inserted']} words into {into} ({summary['replaced']} replaced, "
                   f"{summary['count']} rows)")
