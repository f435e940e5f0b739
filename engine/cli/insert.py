"""``lexprobe ota`` (one-token approximations into a words index), ``bench ota`` and ``bench ota-recovery``."""

from __future__ import annotations

import os

import click

from .root import Context, bench_group, cli, format_option, paper_command
from .options import NON_NEGATIVE, NON_NEGATIVE_FLOAT, POSITIVE, POSITIVE_FLOAT, SEED
from ..core.errors import InputError, LexprobeError
from ..rare_words.ota import DEFAULTS as _DEFAULTS
from ..core.formatting import render


def read_words(values) -> list[str]:
    """Words from the arguments: ``@FILE`` is read (one word a line), any other value is a word (even when a
    file of that name exists: a word must not silently become a word list)."""
    words: list[str] = []
    for value in values:
        if value.startswith("@") and len(value) > 1:
            value = value[1:]
            if os.path.isdir(value):
                raise InputError(value, "is a folder, not a word list")
            if not os.path.isfile(value):
                raise InputError(value, "word list not found (write @FILE for a file of words)")
            with open(value, "rb") as f:
                for lineno, raw in enumerate(f, 1):
                    try:
                        line = raw.decode("utf-8").strip()
                    except UnicodeDecodeError:
                        raise InputError(value, "not valid UTF-8", lineno) from None
                    if line:
                        words.append(line)
        else:
            words.append(value)
    words = list(dict.fromkeys(words))
    if not words:
        raise LexprobeError("no words to approximate (the files are empty?)")
    return words


def ota_options(f):
    """The optimisation options shared by ``ota`` and the benchmarks."""
    for option in reversed([
        click.option("--iterations", type=POSITIVE, default=_DEFAULTS["iterations"], show_default=True,
                     help="Adam steps per word at most (the paper: 4000 with random contexts)."),
        click.option("--contexts", type=click.Choice(["random", "static"]), default=_DEFAULTS["contexts"],
                     show_default=True, help="static: [CLS] w . [SEP]; random: [CLS] t_l w t_r . [SEP] with new "
                                             "random whole words every iteration."),
        click.option("--init", type=click.Choice(["zeros", "mean"]), default=_DEFAULTS["init"], show_default=True,
                     help="Start from zeros (the paper) or the mean of the word's subword embeddings."),
        click.option("--lr", type=POSITIVE_FLOAT, default=_DEFAULTS["lr"], show_default=True, help="Adam learning rate."),
        click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the random contexts."),
    ]):
        f = option(f)
    return f


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
@format_option
@click.pass_obj
def ota_cmd(obj: Context, model, into, word_args, more_words, iterations, contexts, init, lr, seed, layers,
            batch_size, patience, tol, replace, fmt) -> None:
    """One-token approximations of WORDS, inserted into the words index --into (origin 'ota').

    Each word's OTA vector is the single input embedding whose effect on the hidden states of the
    surrounding context tokens best matches that of the word's subword tokens (Schick & Schuetze 2020).
    Rows printed: word, tokens (subword count), iterations run, final loss.
    """
    from ..rare_words.ota import insert_ota, word_pieces

    words = read_words(list(word_args) + list(more_words))
    result, summary = insert_ota(obj.home, into, model, words, replace=replace, iterations=iterations,
                                 contexts=contexts, init=init, lr=lr, layers=layers, seed=seed,
                                 batch_size=batch_size, patience=patience or None, tol=tol)
    from ..sources.models import load_tokenizer

    pieces = word_pieces(load_tokenizer(model), words)
    rows = [{"word": w, "tokens": len(p), "iterations": int(i), "final_loss": float(l)}
            for w, p, i, l in zip(words, pieces, result.iterations, result.final_loss)]
    click.echo(render(rows, fmt, ["word", "tokens", "iterations", "final_loss"]))
    if fmt == "table":
        click.echo(f"inserted {summary['inserted']} words into {into} ({summary['replaced']} replaced, "
                   f"{summary['count']} rows)")


@bench_group.command("ota")
@click.option("--model", default="splade-tiny", show_default=True, help="The model to approximate words with.")
@click.option("--words", "n_words", type=POSITIVE, default=64, show_default=True, help="Words in the batched run.")
@click.option("--loop-words", type=POSITIVE, default=16, show_default=True,
              help="Words of those optimised one at a time (its rate is per word).")
@ota_options
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/ota.md", show_default=True,
              help="Markdown file the result is appended to.")
def bench_ota(model, n_words, loop_words, iterations, contexts, init, lr, seed, record) -> None:
    """OTA words/s: one batch of many words against one word at a time, same settings and iterations."""
    from ..rare_words.bench_ota import run_ota_bench

    result = run_ota_bench(model, n_words=n_words, loop_words=loop_words, iterations=iterations, contexts=contexts,
                           init=init, lr=lr, seed=seed, record_path=record)
    click.echo(result["markdown"])


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas, not {text!r}") from None


@paper_command("ota-recovery")
@click.option("--model", default="minilm", show_default=True, help="The model.")
@click.option("--words", "n_words", type=POSITIVE, default=32, show_default=True,
              help="One-token words approximated as if unknown (the paper: 1000).")
@click.option("--iterations", type=POSITIVE, default=1000, show_default=True, help="Iterations (the paper: up to 5000).")
@click.option("--contexts", default="static,random", show_default=True, help="Context variants, comma-separated.")
@click.option("--inits", default="zeros", show_default=True, help="Inits, comma-separated (zeros, mean).")
@click.option("--lrs", default="0.001", show_default=True, help="Learning rates, comma-separated.")
@click.option("--every", type=POSITIVE, default=50, show_default=True, help="Iterations between measurements.")
@click.option("--layers", default="all", show_default=True, help="Layers in the loss (see lexprobe ota).")
@click.option("--patience", type=NON_NEGATIVE, default=_DEFAULTS["patience"], show_default=True,
              help="Early stop evaluated on the recorded losses.")
@click.option("--tol", type=NON_NEGATIVE_FLOAT, default=_DEFAULTS["tol"], show_default=True,
              help="Relative improvement for --patience.")
@click.option("--batch-size", type=POSITIVE, default=256, show_default=True, help="Rows (word x setting) per batch.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the word sample and contexts.")
@click.option("--out", type=click.Path(file_okay=False), default="runs/ota_recovery", show_default=True,
              help="Run folder: curve and summary tables (Parquet + markdown), recovery.png.")
@click.option("--record", type=click.Path(dir_okay=False), default="", show_default=False,
              help="Also append the printed summary to this markdown file (default: none; the run writes only "
                   "into --out).")
def bench_ota_recovery(model, n_words, iterations, contexts, inits, lrs, every, layers, patience, tol, batch_size,
                       seed, out, record) -> None:
    """Single-token recovery (the paper's Figure 1): mean cosine distance of OTA to the true embedding of
    one-token words against iterations, per context variant, init and learning rate; plus how many
    iterations each setting needs for 95% of its final quality and where the early stop would end."""
    from ..rare_words.ota_recovery import REFERENCE, winner
    from ..runs.bench_record import record as record_md
    from ..rare_words.run_rare_words import run_ota_recovery

    variants = [c.strip() for c in contexts.split(",") if c.strip()]
    init_list = [i.strip() for i in inits.split(",") if i.strip()]
    res = run_ota_recovery(model, out, n_words=n_words, iterations=iterations, contexts=variants, inits=init_list,
                           lrs=_floats(lrs), every=every, layers=layers, patience=patience, tol=tol,
                           batch_size=batch_size, seed=seed)
    png = res["png"]
    best = winner(res["summary"], *REFERENCE[1:]) or winner(res["summary"], init_list[0], _floats(lrs)[0])
    notes = [f"model {model}, {n_words} one-token words (seed {seed}), {iterations} iterations, layers {layers}; "
             f"curve and PNG in {out} ({png.name})",
             "start/end: mean cosine distance to the true input embedding at iteration 0 and at the last iteration",
             "its_to_95: first iteration with mean similarity >= 95% of the same setting's final similarity; "
             f"its_to_95_ref: the same against the reference setting {REFERENCE}",
             f"stop_it / dist_at_stop: mean iteration where the early stop (patience {patience}, tol {tol}) ends a "
             "word, and the mean distance there",
             "read_start/read_end: the same distance with both vectors weighted by the first normalisation layer's "
             "weights (the embedding as the model reads it)"] + \
            ([f"winning context variant (lower final distance): **{best}**"] if best else [])
    md = record_md(record or None, f"bench ota-recovery: {model}", res["summary"], notes=notes,
                   columns=["contexts", "init", "lr", "start", "end", "best_iteration", "its_to_95", "its_to_95_ref",
                            "stop_it", "dist_at_stop", "read_start", "read_end"])
    click.echo(md)
