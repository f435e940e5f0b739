"""``index tokens`` (a contextual token index of a sense-annotated corpus) and ``bench encode``."""

from __future__ import annotations

import warnings

import click

from ..core import vector_index as vindex
from .root import Context, bench_group, index_group
from ..core.store import DEFAULT_SHARD_ROWS
from .options import INDEX_NAME, POSITIVE, SEED, THREADS, replace_option
from .scale import build_engine_options

_CORPUS_HELP = ("Corpus as KIND:PATH. wsd: the Raganato et al. XML + gold keys (a folder holding one *.data.xml, "
                "or the .data.xml file: SemCor, senseval2, ..., ALL); streusle: STREUSLE .conllulex/.vis files or a "
                "folder of them (SNACS-labelled adpositions and possessives are the targets); jsonl: one sentence a "
                "line, {\"words\": [...], \"targets\": [{\"position\": 3, \"sense\": \"...\"}]} (see README).")


def model_options(f):
    """--model, --layer/--layers, --pooling, --batch-tokens, --threads: how token vectors are made."""
    f = click.option("--threads", type=THREADS, help="Torch threads (default: every core this process may use; "
                                          "on a busy shared machine, 1 is faster).")(f)
    f = click.option("--batch-tokens", type=POSITIVE, default=512, show_default=True,
                     help="Padded subword tokens per batch (sentences are sorted by length first).")(f)
    f = click.option("--pooling", type=click.Choice(["mean", "first", "last"]), default="mean", show_default=True,
                     help="How a word's (or multi-word target's) subword vectors become one vector.")(f)
    f = click.option("--layers", help="Average several hidden states: A-B (e.g. 3-6) or a list (2,4).")(f)
    f = click.option("--layer", type=int, help="One hidden state: 0 = embeddings, 1..L = transformer layers "
                                               "(default: the last; negative counts from the end).")(f)
    f = click.option("--model", default="minilm", show_default=True,
                     help="Encoder: 'minilm' (packaged all-MiniLM-L6-v2), a Hugging Face name or a local path.")(f)
    return f


@index_group.command("tokens")
@model_options
@click.option("--corpus", "corpus_spec", required=True, help=_CORPUS_HELP)
@click.option("--name", required=True, type=INDEX_NAME, help="Name of the token index to build under the home.")
@replace_option
@click.option("--max-sentences", type=POSITIVE, help="Only the first N sentences of the corpus (a quick trial).")
@click.option("--index-type", type=click.Choice(vindex.INDEX_TYPES), default="flat", show_default=True,
              help="flat: exact search; hnsw: graph ANN; ivf: inverted lists ANN.")
@click.option("--shard-rows", type=POSITIVE, default=DEFAULT_SHARD_ROWS, show_default=True, help="Rows per Arrow shard.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed for IVF training.")
@build_engine_options
@click.pass_obj
def index_tokens(obj: Context, model, layer, layers, pooling, batch_tokens, threads, corpus_spec, name, replace,
                 max_sentences, index_type, shard_rows, seed, engine, ray_address, workers, block_sentences) -> None:
    """Embed every sense-annotated target of a corpus with a transformer and index the vectors.

    One index per (corpus, model, layers, pooling); the manifest records them. Rows: the target's corpus,
    split, document, sentence_id, position, length, surface, lemma, pos, sense, senses; sentences are kept
    once beside the shards. Skipped inputs (keys without instances, spans outside a sentence, targets longer
    than the model's length limit) are counted and printed. With --engine ray the encoding runs on a pool of
    Ray actors and the result equals the local build.
    """
    from ..sources.encoder import LOST_PAST_LIMIT, parse_layers

    if engine == "ray":
        from ..scale.build import build_token_index_ray as build
        extra = {"workers": workers, "block_sentences": block_sentences, "address": ray_address}
    else:
        from ..kinds.tokens import build_token_index as build
        extra = {}
    with warnings.catch_warnings():  # long sentences and lost targets are printed below as one plain line
        warnings.simplefilter("ignore", UserWarning)
        s = build(obj.home, name, model, corpus_spec, layers=parse_layers(layer, layers),
                  pooling=pooling, batch_tokens=batch_tokens, max_sentences=max_sentences,
                  threads=threads, params=vindex.IndexParams(index_type=index_type),
                  shard_rows=shard_rows, seed=seed, replace=replace, **extra)
    e = s["encode"]
    if engine == "ray":
        click.echo(f"ray: {s['workers']} encoder actors, {s['blocks']} blocks, "
                   f"{s['wall_tokens_per_s']:.0f} tokens/s together")
    click.echo(f"built {s['name']}: {s['targets']} targets of {s['sentences']} sentences ({s['corpus']}), "
               f"{model} layers {s['layers']} {s['pooling']}-pooled, dim {s['dim']}; {e.subword_tokens} subword "
               f"tokens at {e.tokens_per_s:.0f} tokens/s; {s['seconds']} s in all")
    if e.split_sentences:
        lost = e.lost_targets.get(LOST_PAST_LIMIT, 0)
        click.echo(f"note: {e.split_sentences} sentences longer than the model's limit were read in {e.windows} "
                   f"overlapping windows" + (f"; {lost} targets longer than a window were skipped" if lost else ""))
    if s["skipped"].counts:
        click.echo(f"skipped: {s['skipped'].summary()}")


@bench_group.command("encode")
@model_options
@click.option("--corpus", "corpus_spec", default="wsd:../shared/data/semcor3.0", show_default=True, help=_CORPUS_HELP)
@click.option("--sentences", "n_sentences", type=POSITIVE, default=400, show_default=True,
              help="Sentences sampled from the corpus for both methods.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the sentence sample.")
@click.option("--build-index", "build_name",
              help="Also time a whole token-index build of the corpus into this index name (under --home).")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/encode.md", show_default=True,
              help="Markdown file the result is appended to.")
@click.pass_obj
def bench_encode(obj: Context, model, layer, layers, pooling, batch_tokens, threads, corpus_spec, n_sentences,
                 seed, build_name, record) -> None:
    """Token-embedding throughput: the batched, length-sorted encoder against one sentence per forward pass
    (the paper's code), on the same model and sentences; and the model GFLOP/s against numpy's matmul."""
    from ..sources.encoder import parse_layers
    from ..suite.bench_encode import run_encode_bench

    result = run_encode_bench(model, corpus_spec, layers=parse_layers(layer, layers), pooling=pooling,
                              batch_tokens=batch_tokens, threads=threads, n_sentences=n_sentences, seed=seed,
                              record_path=record, build_index=(obj.home, build_name) if build_name else None)
    click.echo(result["markdown"])
