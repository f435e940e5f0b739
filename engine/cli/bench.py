"""``index words``, ``query neighbors`` and ``bench neighbors``."""

from __future__ import annotations

import click

from ..core import vector_index as vindex
from .root import Context, bench_group, format_option, index_group, keep_known, query_group, skip_unknown_option
from ..core.formatting import render
from ..core.store import DEFAULT_SHARD_ROWS
from ..sources.vector_files import FORMATS
from ..kinds.words import WordIndex, build_word_index
from .options import INDEX_NAME, K, POSITIVE, SEED, clamp_k, int_range, replace_option
from .scale import opened, search_engine_options


@index_group.command("words")
@click.option("--vectors", "spec", required=True,
              help="A vector file (word2vec .bin/.txt, GloVe .txt, fastText .vec, .npy; gzip/bz2/xz read as they are; "
                   "a fastText .bin model or gensim .kv through gensim), 'glove-6b-50d' (the "
                   "packaged GloVe) or 'hf:MODEL' (a transformer's whole-word input embeddings; MODEL may be "
                   "'minilm', 'splade-tiny', a Hugging Face name or a local path).")
@click.option("--name", required=True, type=INDEX_NAME, help="Name of the index to build under the home.")
@replace_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Vector file format; 'auto' guesses from the extension and the first line.")
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
    s = build_word_index(obj.home, name, spec, fmt=fmt, vocab=vocab, limit=limit, lowercase=lowercase,
                         params=params, shard_rows=shard_rows, seed=seed, replace=replace)
    click.echo(f"built {s['name']}: {s['count']} words x {s['dim']} dims ({s['duplicates_dropped']} duplicates "
               f"dropped, {s['rows_read']} rows read) in {s['seconds']} s")


@query_group.command("neighbors")
@click.option("--index", "name", required=True, help="A words index.")
@click.argument("words", nargs=-1, required=True)
@click.option("-k", "k", type=K, default=10, show_default=True, help="Neighbours per word.")
@click.option("--restrict-vocab", type=POSITIVE, help="Search only the N most frequent words.")
@click.option("--include-self", is_flag=True, help="Do not exclude the query word itself.")
@skip_unknown_option
@search_engine_options
@format_option
@click.pass_obj
def neighbors_cmd(obj: Context, name, words, k, restrict_vocab, include_self, skip_unknown, engine, ray_address,
                  shard_groups, fmt) -> None:
    """Nearest neighbours of WORDS by cosine. Rows: query, rank, word, score. With --engine ray the index's
    shards are searched by Ray actors and their top-k merged: the same rows as the local exact search."""
    with opened(WordIndex, obj, name, engine, ray_address, shard_groups) as index:
        candidates = min(restrict_vocab or index.vectors.ntotal, index.vectors.ntotal) - (not include_self)
        words = keep_known(index, list(words), skip=skip_unknown)
        rows = index.neighbors(words, clamp_k(k, max(candidates, 1), "words to rank"),
                               include_self=include_self, restrict_vocab=restrict_vocab).to_pylist()
    click.echo(render(rows, fmt, ["query", "rank", "word", "score"]))


@bench_group.command("neighbors")
@click.option("--index", "name", default="glove", show_default=True, help="A words index (e.g. the 400k GloVe).")
@click.option("--queries", type=POSITIVE, default=8192, show_default=True,
              help="Query words, searched as one large batch (FAISS's large-batch path starts near 4,000).")
@click.option("--small-batch", type=POSITIVE, default=1000, show_default=True,
              help="Queries per call for the small-batch comparison.")
@click.option("--small-queries", type=POSITIVE, default=2000, show_default=True,
              help="Query words answered in small batches.")
@click.option("-k", "ks", type=K, multiple=True, default=(1, 10, 100), show_default=True,
              help="Neighbours per word (repeat for several).")
@click.option("--gensim-sample", type=POSITIVE, default=200, show_default=True,
              help="Query words answered by gensim's most_similar, one a call.")
@click.option("--latency-sample", type=POSITIVE, default=200, show_default=True,
              help="Single queries timed through the API for p50/p99 latency.")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/neighbors.md", show_default=True,
              help="Markdown file the result is appended to.")
@click.pass_obj
def bench_neighbors(obj: Context, name, queries, small_batch, small_queries, ks, gensim_sample, latency_sample, seed,
                    record) -> None:
    """Exact top-k (lexprobe's kernel) against FAISS IndexFlatIP in small and large batches and gensim's
    most_similar, for each k, with identical results checked; plus single-query latency through the API."""
    from ..suite.bench_neighbors import run_neighbors_bench

    result = run_neighbors_bench(obj.home, name, n_queries=queries, small_batch=small_batch,
                                 small_queries=small_queries, ks=tuple(ks), gensim_sample=gensim_sample,
                                 latency_sample=latency_sample, seed=seed, record_path=record)
    click.echo(result["markdown"])


@bench_group.command("ann-curve")
@click.option("--index", "name", default="glove", show_default=True, help="A words index (e.g. the 400k GloVe).")
@click.option("--queries", type=POSITIVE, default=2000, show_default=True, help="Query words (a sample).")
@click.option("-k", "k", type=K, default=10, show_default=True, help="Recall at k.")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/ann_curve.md", show_default=True,
              help="Markdown file the points are appended to.")
@click.option("--plot", "plot", type=click.Path(dir_okay=False), default="benchmarks/ann_curve.png",
              show_default=True, help="The figure (PNG, with SVG and PDF beside it).")
@click.pass_obj
def bench_ann_curve(obj: Context, name, queries, k, seed, record, plot) -> None:
    """Recall@k against queries/s for HNSW (ef_search 16-512) and IVF (nprobe 1-256) built from a words index,
    through lexprobe and through FAISS directly, with the exact kernel as reference; picks each type's default
    setting (the fastest with recall >= 0.95)."""
    from ..suite.bench_ann_curve import record_ann_curve, run_ann_curve

    index = WordIndex.open(obj.home, name)
    result = run_ann_curve(index.unit, n_queries=queries, k=k, seed=seed, log=lambda s: click.echo(s, err=True))
    click.echo(record_ann_curve(result, record, plot))


@index_group.command("export")
@click.argument("name", type=INDEX_NAME)
@click.option("--out", "target", required=True, type=click.Path(dir_okay=False),
              help="The file to write; ending in .gz, .bz2 or .xz compresses it.")
@click.option("--format", "fmt", type=click.Choice(["w2v-text", "w2v-bin"]), default="w2v-text", show_default=True,
              help="word2vec text (header 'count dim', a word and its values per line) or word2vec binary.")
@click.pass_obj
def index_export(obj: Context, name, target, fmt) -> None:
    """Write a words index's live words and raw vectors, in id order (= frequency order), as a word2vec file
    that gensim, fastText tools and `lexprobe index words` read."""
    import numpy as np

    from ..sources.vector_files import write_word2vec

    index = WordIndex.open(obj.home, name)
    ids = np.array(sorted(index.word_to_id.values()), dtype=np.int64)
    path = write_word2vec(target, [index.words[i] for i in ids], index.raw[ids], binary=fmt == "w2v-bin")
    click.echo(f"wrote {len(ids)} words x {index.dim} dims to {path} ({fmt})")
