"""``index ...``: build indexes (words, tokens, offsets), export, list, inspect, verify and remove them.

``index contexts`` sits with Attentive Mimicking in :mod:`.am`.
"""

from __future__ import annotations

import json
import warnings

import click

from ..core import vector_index as vindex
from .root import Context, format_option, index_group
from ..core.formatting import render
from ..core.errors import LexprobeError
from ..core.store import (DEFAULT_SHARD_ROWS, MANIFEST, WORD_RULE, Store, is_valid_name, list_indexes, open_index,
                          read_manifest, remove_index)
from ..kinds.words import WordIndex, build_word_index
from ..sources.datasets.bats import ANSWER_POLICIES
from ..sources.vectors import FORMATS
from .options import (CORPUS_HELP, DATASET_HELP, INDEX_NAME, POSITIVE, SEED, build_engine_options, device_options,
                      default_offsets_name, int_range, model_options, replace_option)


@index_group.command("words")
@click.option("--vectors", "spec", required=True,
              help="A vector file (word2vec .bin/.txt, GloVe .txt, fastText .vec and .bin, .npy; gzip/bz2/xz read as "
                   "they are; a gensim .kv/.model through gensim: a pickle, open only files you trust), 'glove-6b-50d' (the "
                   "packaged GloVe) or 'hf:MODEL' (a transformer's whole-word input embeddings; MODEL may be "
                   "'minilm', 'splade-tiny', a Hugging Face name or a local path).")
@click.option("--name", required=True, type=INDEX_NAME, help="Name of the index to build under the home.")
@replace_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Vector file format; 'auto' guesses from the extension and the file's layout (a pickle only as "
                   ".kv/.model).")
@click.option("--vocab", type=click.Path(dir_okay=False), help="Vocabulary file for .npy vectors (one word a line).")
@click.option("--limit", type=POSITIVE, help="Keep the first N words (files list the most frequent first).")
@click.option("--lowercase/--keep-case", default=False, show_default=True,
              help="Lowercase words; duplicates that creates are dropped (first wins).")
@click.option("--index-type", type=click.Choice(vindex.INDEX_TYPES), default="flat", show_default=True,
              help="flat: exact search; hnsw: graph ANN; ivf: inverted lists ANN.")
@click.option("--hnsw-m", type=int_range(*vindex.PARAM_RANGES["hnsw_m"]), default=32, show_default=True, help="HNSW: neighbours per node.")
@click.option("--ef-construction", type=int_range(*vindex.PARAM_RANGES["ef_construction"]), default=200, show_default=True, help="HNSW: build beam width.")
@click.option("--ef-search", type=int_range(*vindex.PARAM_RANGES["ef_search"]), default=vindex.IndexParams.ef_search, show_default=True, help="HNSW: search beam width (default: the fastest with recall@10 >= 0.95 on GloVe 400k, benchmarks/ann_curve.md).")
@click.option("--nlist", type=int_range(*vindex.PARAM_RANGES["nlist"]),
              help="IVF: number of lists, at most the number of words (default about 4*sqrt(n)).")
@click.option("--nprobe", type=int_range(*vindex.PARAM_RANGES["nprobe"]), default=vindex.IndexParams.nprobe, show_default=True, help="IVF: lists visited per query (default: the fastest with recall@10 >= 0.95 on GloVe 400k).")
@click.option("--shard-rows", type=POSITIVE, default=DEFAULT_SHARD_ROWS, show_default=True, help="Rows per Arrow shard.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed for IVF training.")
@click.pass_obj
def index_words(obj: Context, spec, name, replace, fmt, vocab, limit, lowercase, index_type, hnsw_m, ef_construction,
                ef_search, nlist, nprobe, shard_rows, seed) -> None:
    """Build a words index from static vectors (duplicates: first wins, counted)."""
    params = vindex.IndexParams(index_type, hnsw_m, ef_construction, ef_search, nlist, nprobe)
    s = build_word_index(name, spec, home=obj.home, fmt=fmt, vocab=vocab, limit=limit, lowercase=lowercase,
                         params=params, shard_rows=shard_rows, seed=seed, replace=replace)
    meta = read_manifest(obj.home / s["name"] / MANIFEST)["meta"]
    refused = (f", {meta['words_refused']} words refused (first {meta['first_word_refused']}; {WORD_RULE})"
               if meta.get("words_refused") else "")
    click.echo(f"built {s['name']}: {s['count']} words x {s['dim']} dims ({s['duplicates_dropped']} duplicates "
               f"dropped{refused}, {s['rows_read']} rows read) in {s['seconds']} s")


@index_group.command("tokens")
@model_options
@click.option("--corpus", "corpus_spec", required=True, help=CORPUS_HELP)
@click.option("--name", required=True, type=INDEX_NAME, help="Name of the token index to build under the home.")
@replace_option
@click.option("--max-sentences", type=POSITIVE, help="Only the first N sentences of the corpus (a quick trial).")
@click.option("--index-type", type=click.Choice(vindex.INDEX_TYPES), default="flat", show_default=True,
              help="flat: exact search; hnsw: graph ANN; ivf: inverted lists ANN.")
@click.option("--shard-rows", type=POSITIVE, default=DEFAULT_SHARD_ROWS, show_default=True, help="Rows per Arrow shard.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed for IVF training.")
@build_engine_options
@device_options
@click.pass_obj
def index_tokens(obj: Context, model, layer, layers, pooling, batch_tokens, threads, corpus_spec, name, replace,
                 max_sentences, index_type, shard_rows, seed, engine, ray_address, workers, block_sentences, device,
                 dtype) -> None:
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
        if dtype != "float32" or device not in ("auto", "cpu"):
            raise LexprobeError("--device and --dtype need --engine local (Ray's encoder actors run on their CPUs "
                                "in float32)")
        extra = {"workers": workers, "block_sentences": block_sentences, "address": ray_address}
    else:
        from ..kinds.tokens import build_token_index as build
        extra = {"device": device, "dtype": dtype}
    with warnings.catch_warnings():  # long sentences and lost targets are printed below as one plain line
        warnings.simplefilter("ignore", UserWarning)
        s = build(name, model, corpus_spec, home=obj.home, layers=parse_layers(layer, layers),
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


@index_group.command("offsets")
@click.option("--words", "words_index", required=True, help="The words index whose raw vectors give the offsets.")
@click.option("--dataset", required=True, help=DATASET_HELP)
@click.option("--name", type=INDEX_NAME, help="Name of the offsets index (default: WORDS-<bats|google>-offsets).")
@replace_option
@click.option("--answers", type=click.Choice(ANSWER_POLICIES), default="first", show_default=True,
              help="first: each pair's first listed answer (the paper); any: its first in-vocabulary answer.")
@click.option("--lowercase", is_flag=True, help="Lowercase the dataset's words (e.g. Google's names for GloVe).")
@click.pass_obj
def index_offsets(obj: Context, words_index, dataset, name, replace, answers, lowercase) -> None:
    """Build an offsets index: one row per word pair (end - start, raw and unit), kind 'true'.

    Pairs whose start word or answer is not in the words index are dropped and reported per relation.
    """
    from ..kinds.offsets import build_offset_index

    name = name or default_offsets_name(words_index, dataset)
    s = build_offset_index(obj.home, name, words_index, dataset, answers=answers, lowercase=lowercase,
                           replace=replace)
    click.echo(f"built {s['name']}: {s['rows']} offsets in {s['relations']} relations ({s['pairs_dropped']} of "
               f"{s['pairs_read']} pairs dropped as out of vocabulary, {s['identity_dropped']} identity pairs "
               "a = a* left out)")
    dropped = [row for row in s["coverage"] if row["dropped"]]
    if dropped:
        click.echo(render(dropped, "table", ["code", "category", "pairs", "kept", "dropped", "coverage",
                                             "oov_examples"]))


@index_group.command("export")
@click.argument("name", type=INDEX_NAME)
@click.option("--out", "target", required=True, type=click.Path(dir_okay=False),
              help="The file to write; ending in .gz, .bz2 or .xz compresses it.")
@click.option("--format", "fmt", type=click.Choice(["w2v-text", "w2v-bin"]), default="w2v-text", show_default=True,
              help="word2vec text (header 'count dim', a word and its values per line) or word2vec binary.")
@click.pass_obj
def index_export(obj: Context, name, target, fmt) -> None:
    """Write a words index's live words and raw vectors, in id order (= frequency order), as a word2vec file
    that gensim, fastText tools and `lexprobe index words` read. The file goes outside the index home, and
    replaces only a regular file (not a link, a FIFO or a device); the export reads one version of the index,
    as every reader does, whatever a writer commits meanwhile."""
    from pathlib import Path

    import numpy as np

    from ..sources.vectors import write_word2vec

    home = obj.home.resolve()
    where = Path(target).parent.resolve() / Path(target).name
    if where == home or home in where.parents:
        raise LexprobeError(f"{target}: inside the index home {obj.home}: export writes outside it (a file "
                            "there could take an index's place or damage one)")
    index = WordIndex.open(name, home=obj.home)
    ids = np.array(sorted(index.word_to_id.values()), dtype=np.int64)
    path = write_word2vec(target, [index.words[i] for i in ids], index.raw[ids], binary=fmt == "w2v-bin")
    click.echo(f"wrote {len(ids)} words x {index.dim} dims to {path} ({fmt})")


@index_group.command("list")
@click.option("--verify", is_flag=True, help="Also recompute every file's checksum (reads every byte).")
@format_option
@click.pass_obj
def index_list(obj: Context, verify: bool, fmt: str) -> None:
    """List the indexes under the home: name, status, kind, rows, dimension, source.

    A damaged index is listed with 'damaged: <reason>' as its status (a folder whose name no command can take,
    'unusable: ...'); the others are listed as usual."""
    rows = []
    for path in list_indexes(obj.home):
        row = {"name": path.name, "status": "ok"}
        if not is_valid_name(path.name):
            rows.append({**row, "status": "unusable: not a valid index name (rename the folder)"})
            continue
        try:
            store = Store.open(path, verify=verify)
            if verify:
                verify_store(store)
            m = store.manifest
            row.update({"kind": m["kind"], "count": m["count"], "dim": m["dim"], "shards": len(m["shards"]),
                        "source": m["source"], "created": m["created"]})
        except LexprobeError as exc:
            row["status"] = f"damaged: {exc}"
        rows.append(row)
    if not rows and fmt == "table":
        click.echo(f"no indexes under {obj.home}")
        return
    if fmt == "table":
        click.echo(f"index home: {obj.home}")
    click.echo(render(rows, fmt, ["name", "status", "kind", "count", "dim", "shards", "source", "created"]))


@index_group.command("info")
@click.argument("name")
@click.pass_obj
def index_info(obj: Context, name: str) -> None:
    """Print an index's manifest (JSON): source, dimension, count, shards, checksums, settings, history."""
    store = open_index(obj.home, name, verify=False)
    click.echo(json.dumps(store.manifest, indent=1, ensure_ascii=False))


def verify_store(store: Store) -> dict:
    """Structural checks beyond the checksums Store.open already did: the FAISS index matches the shards."""
    report = {"name": store.name, "kind": store.kind, "count": store.count, "shards": len(store.manifest["shards"])}
    if "faiss" in store.manifest.get("files", {}):
        index = vindex.load_for(store, sample=None)  # every vector against the shards
        report["faiss_vectors"] = index.ntotal
    return report


@index_group.command("verify")
@click.argument("name")
@click.pass_obj
def index_verify(obj: Context, name: str) -> None:
    """Recompute every checksum (manifest, shards, FAISS file) and check row counts; names the bad file."""
    report = verify_store(open_index(obj.home, name, verify=True))
    click.echo(f"ok: {report['name']} ({report['kind']}, {report['count']} rows in {report['shards']} shards"
               + (f", {report['faiss_vectors']} FAISS vectors" if "faiss_vectors" in report else "") + ")")


@index_group.command("rm")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_obj
def index_rm(obj: Context, name: str, yes: bool) -> None:
    """Delete an index."""
    if not yes:
        click.confirm(f"delete index {name!r} under {obj.home}?", abort=True)
    remove_index(obj.home, name)
    click.echo(f"removed {name}")
