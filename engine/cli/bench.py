"""``bench ...``: speed benchmarks, each against a named baseline, recorded under benchmarks/ (``bench perf`` runs
them all)."""

from __future__ import annotations

from pathlib import Path

import click

from ..kinds.words import WordIndex
from .root import Context, bench_group
from ..core.errors import LexprobeError
from .options import (CORPUS_HELP, INDEX_NAME, K, POSITIVE, SEED, THREADS, device_option, device_options,
                      language_model_option, model_options, ota_options)


@bench_group.command("perf")
@click.option("--out", type=click.Path(file_okay=False), default="runs/perf", show_default=True,
              help="Run folder: one detailed record per benchmark, perf.parquet/.md and RESULTS.md.")
@click.option("--only", help="Comma-separated benchmarks to run (neighbors, analogy, offsets, encode, senses, ota, "
                             "probing, ota-smollm2, probing-smollm2, bf16-encode, bf16-probing, "
                             "bf16-probing-smollm2); default all.")
@click.option("--data", "data_path", type=click.Path(exists=True, file_okay=False),
              help="Folder holding the datasets (default: the data home, then ../shared/data).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--results", default="benchmarks/RESULTS.md", show_default=True,
              help="Markdown file the summary table is appended to ('' for none).")
@click.pass_obj
def bench_perf(obj: Context, out, only, data_path, seed, results) -> None:
    """Every speed benchmark, each as a ratio against its named baseline on this machine, in one table."""
    from ..core.formatting import render
    from ..suite.bench_perf import run_perf
    from ..suite.main_job import locate_data

    data, _ = locate_data(Path(data_path) if data_path else None)
    rows = run_perf(obj.home, out, data, seed=seed, only=[s.strip() for s in only.split(",")] if only else None,
                    results_path=results or None, echo=click.echo)
    click.echo(render(rows, "table", ["benchmark", "ratio", "floor", "status", "seconds", "unit", "baseline"]))


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


@bench_group.command("startup")
@click.option("--index", "name", default="glove", show_default=True, help="A words index (e.g. the 400k GloVe).")
@click.option("--word", default="king", show_default=True, help="The query word.")
@click.option("-k", "k", type=K, default=5, show_default=True, help="Neighbours asked.")
@click.option("--batch-words", type=click.IntRange(0), default=8, show_default=True,
              help="Words of the batch question (the compiled kernels' path); 0 for none.")
@click.option("--repeat", type=POSITIVE, default=3, show_default=True,
              help="Warm processes per command after the cold one (the median is reported).")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/startup.md", show_default=True,
              help="Markdown file the result is appended to.")
@click.pass_obj
def bench_startup(obj: Context, name, word, k, batch_words, repeat, record) -> None:
    """A new process's first answer, cold (nothing compiled yet) and warm, as whole processes: lexprobe's
    query neighbors and query analogy against gensim (KeyedVectors.load of the same vectors as .kv, memory-mapped,
    then most_similar) and FAISS (read_index, one search), with the time to open the index beside them."""
    from ..suite.bench_startup import run_startup_bench

    result = run_startup_bench(obj.home, name, word=word, k=k, batch_words=batch_words, repeat=repeat,
                               record_path=record)
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

    index = WordIndex.open(name, home=obj.home)
    result = run_ann_curve(index.unit, n_queries=queries, k=k, seed=seed, log=lambda s: click.echo(s, err=True))
    click.echo(record_ann_curve(result, record, plot))


@bench_group.command("encode")
@model_options
@click.option("--corpus", "corpus_spec", default="wsd:../shared/data/semcor3.0", show_default=True, help=CORPUS_HELP)
@click.option("--sentences", "n_sentences", type=POSITIVE, default=400, show_default=True,
              help="Sentences sampled from the corpus for both methods.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the sentence sample.")
@click.option("--build-index", "build_name",
              help="Also time a whole token-index build of the corpus into this index name (under --home).")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/encode.md", show_default=True,
              help="Markdown file the result is appended to.")
@device_options
@click.pass_obj
def bench_encode(obj: Context, model, layer, layers, pooling, batch_tokens, threads, corpus_spec, n_sentences,
                 seed, build_name, record, device, dtype) -> None:
    """Token-embedding throughput: the batched, length-sorted encoder against one sentence per forward pass
    (the paper's code), on the same model and sentences; and the model GFLOP/s against numpy's matmul."""
    from ..sources.encoder import parse_layers
    from ..suite.bench_encode import run_encode_bench

    result = run_encode_bench(model, corpus_spec, layers=parse_layers(layer, layers), pooling=pooling,
                              batch_tokens=batch_tokens, threads=threads, n_sentences=n_sentences, seed=seed,
                              record_path=record, build_index=(obj.home, build_name) if build_name else None,
                              device=device, dtype=dtype)
    click.echo(result["markdown"])


@bench_group.command("ota")
@click.option("--model", default="splade-tiny", show_default=True, help="The model to approximate words with.")
@click.option("--words", "n_words", type=POSITIVE, default=64, show_default=True, help="Words in the batched run.")
@click.option("--loop-words", type=POSITIVE, default=16, show_default=True,
              help="Words of those optimised one at a time (its rate is per word).")
@ota_options
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/ota.md", show_default=True,
              help="Markdown file the result is appended to.")
@device_option
def bench_ota(model, n_words, loop_words, iterations, contexts, init, lr, seed, record, device) -> None:
    """OTA words/s: one batch of many words against one word at a time, same settings and iterations."""
    from ..rare_words.bench_ota import run_ota_bench

    result = run_ota_bench(model, n_words=n_words, loop_words=loop_words, iterations=iterations, contexts=contexts,
                           init=init, lr=lr, seed=seed, record_path=record, device=device)
    click.echo(result["markdown"])


def _set_threads(threads: int | None) -> None:
    if threads is not None:
        if threads < 1:
            raise LexprobeError("--threads must be at least 1")
        import torch

        torch.set_num_threads(threads)


@bench_group.command("probing")
@language_model_option
@click.option("--dataset", type=click.Path(),
              help="WNLaMPro folder/file whose entries give the sentences (default: hypernym patterns around "
                   "vocabulary words drawn with --seed).")
@click.option("--sentences", type=POSITIVE, default=512, show_default=True, help="Sentences probed the batched way.")
@click.option("--loop-sample", type=POSITIVE, default=128, show_default=True,
              help="Sentences probed one at a time with full-vocabulary logits (its rate is per sentence).")
@click.option("--batch-size", type=POSITIVE, default=64, show_default=True, help="Sentences per batched forward pass.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the sentence sample.")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/probing.md", show_default=True,
              help="Markdown file the result is appended to.")
@click.option("--threads", type=THREADS, help="torch CPU threads (default: torch's choice).")
@device_options
def bench_probing(model, dataset, sentences, loop_sample, batch_size, seed, record, threads, device, dtype) -> None:
    """Sentences/s: batched, mask-only logits against one sentence at a time with full-vocabulary logits."""
    from ..rare_words.bench_probing import run_probing_bench

    _set_threads(threads)
    result = run_probing_bench(model, dataset=dataset, n_sentences=sentences, loop_sample=loop_sample,
                               batch_size=batch_size, seed=seed, record_path=record, device=device, dtype=dtype)
    click.echo(result["markdown"])


@bench_group.command("scale")
@click.option("--corpus", "corpus_spec", default="wsd:../shared/data/semcor3.0", show_default=True,
              help="Corpus as KIND:PATH (see 'index tokens --help').")
@click.option("--sentences", "n_sentences", type=int, default=400, show_default=True,
              help="Sentences (from the start of the corpus) encoded by each setting.")
@click.option("--model", default="minilm", show_default=True, help="Encoder.")
@click.option("--block-sentences", type=int, default=100, show_default=True,
              help="Block size of the Ray runs (the per-block overhead is measured against blocks of 10).")
@click.option("--ray-address", envvar="RAY_ADDRESS", help="Ray cluster to join (env RAY_ADDRESS); default a new "
                                                          "local Ray with this machine's CPUs.")
@click.option("--node-cpus", type=int, default=16, show_default=True,
              help="CPUs per node assumed by the projection (one 1-thread encoder actor per CPU).")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/scale.md", show_default=True,
              help="Markdown file the result is appended to ('' for none).")
@click.pass_obj
def bench_scale(obj: Context, corpus_spec, n_sentences, model, block_sentences, ray_address, node_cpus,
                record) -> None:
    """Token encoding on Ray against the local encoder: tokens/s locally and with 1 and 2 Ray workers, the
    per-block overhead, the driver's write and FAISS cost per target, and a projection for a 10M-sentence
    corpus on 8 and 32 nodes."""
    from ..runs.bench_record import record as record_result
    from ..scale.bench_scale import run_scale_bench

    result = run_scale_bench(corpus_spec, n_sentences=n_sentences, model=model, block_sentences=block_sentences,
                             address=ray_address, node_cpus=node_cpus, home=obj.home)
    click.echo(record_result(record or None, "bench scale: token encoding on Ray vs local", result["rows"],
                             notes=result["notes"],
                             columns=["setting", "tokens_per_s", "vs local 1 thread", "seconds", "startup_s"]))


@bench_group.command("scaling")
@click.argument("part", type=click.Choice(["words", "tokens", "ray"]))
@click.option("--sizes", required=True, help="Comma-separated sizes: words or rows (1e5,4e5), or with 'ray' the "
                                               "sentences of each token build (200,800).")
@click.option("--dim", type=int, default=300, show_default=True, help="words: vector dimension.")
@click.option("--bats", type=click.Path(exists=True), help="words: the BATS root, for the 3CosAdd and OCS/PCS timings.")
@click.option("--text-sizes", default="", help="ray: comma-separated token counts of the synthetic contexts corpora.")
@click.option("--corpus", "corpus_spec", default="semcor", show_default=True, help="ray: the token builds' corpus.")
@click.option("--glove", is_flag=True, help="words: the packaged GloVe's own vectors at its own size (--sizes ignored).")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/scaling.md", show_default=True,
              help="Markdown file the result is appended to ('' for none); rows also go to benchmarks/scaling.json.")
@click.pass_obj
def bench_scaling(obj: Context, part, sizes, dim, bats, text_sizes, corpus_spec, glove, record) -> None:
    """How build time, memory, disk and query time grow with the vocabulary, the token rows and the Ray
    builds' corpora, against gensim and FAISS flat in the same run; exponents fitted over every size recorded."""
    from ..scale.bench_scaling import run_scaling_bench

    def ints(text: str) -> tuple[int, ...]:
        try:
            return tuple(int(float(x)) for x in text.split(",") if x.strip())
        except ValueError:
            raise LexprobeError(f"sizes must be numbers separated by commas, not {text!r}") from None

    click.echo(run_scaling_bench(part, ints(sizes), dim=dim, home=obj.home, record_path=record or None, bats=bats,
                                 corpus_spec=corpus_spec, text_sizes=ints(text_sizes), glove=glove))


@bench_group.command("serve")
@click.option("--index", "name", type=INDEX_NAME, default="glove", show_default=True, help="A words index of the home.")
@click.option("--requests", "n_requests", type=click.IntRange(1, 100_000), default=200, show_default=True,
              help="Requests in all.")
@click.option("--clients", type=click.IntRange(1, 64), default=8, show_default=True, help="Concurrent clients.")
@click.option("--threads", type=click.IntRange(1, 64), default=8, show_default=True, help="Server threads.")
@click.option("--vocab", type=click.IntRange(3), default=10_000, show_default=True,
              help="Query words are drawn from the N most frequent words.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the query words.")
@click.option("--mix", type=click.Choice(["analogy", "projections"]), default="analogy", show_default=True,
              help="analogy: neighbours and analogies in turn; projections: neighbours, a PCA of 30 words and a "
                   "t-SNE of a word's 20 neighbours in turn (the page's projection view).")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/serve.md", show_default=True,
              help="Markdown file the result is appended to ('' for none).")
@click.pass_obj
def bench_serve(obj: Context, name: str, n_requests: int, clients: int, threads: int, vocab: int, seed: int,
                mix: str, record: str) -> None:
    """Latency of the web API under load, on loopback: a server on a free port, then REQUESTS GETs from CLIENTS
    threads at once on random frequent words, in turn /api/neighbors (k=10) and /api/analogy (3CosAdd, k=5), or
    with --mix projections /api/neighbors, a PCA of 30 words and a t-SNE of a word's 20 neighbours; the baseline
    is the first 50 of them from one client. Records p50/p90/p99 per request kind; one request of each kind runs
    before the clock starts (the index opened, scikit-learn imported)."""
    import logging
    import os
    import urllib.parse

    import numpy as np

    from ..kinds.words import WordIndex
    from ..runs.bench_record import record as record_bench
    from ..serve.app import Running
    from ..serve.load import load_test

    index = WordIndex.open(name, home=obj.home)
    rng = np.random.default_rng(seed)
    top = min(vocab, index.store.count)
    words = [index.words[i] for i in rng.choice(top, size=(n_requests, 3), replace=True).ravel()]
    q = lambda **p: urllib.parse.urlencode({"index": name, **p})
    paths = []
    for i in range(n_requests):
        a, a_star, b = words[3 * i: 3 * i + 3]
        if mix == "analogy":
            paths.append(f"/api/neighbors?{q(word=a, k=10)}" if i % 2 == 0 else
                         f"/api/analogy?{q(a=a, a_star=a_star, b=b, k=5)}")
        else:
            listed = " ".join(index.words[j] for j in rng.choice(top, 30, replace=False))
            paths.append([f"/api/neighbors?{q(word=a, k=10)}",
                          f"/api/projection?{q(view='words', method='pca', words=listed)}",
                          f"/api/projection?{q(view='neighbors', method='tsne', seed=i, word=a, k=20)}"][i % 3])
    kinds = 2 if mix == "analogy" else 3
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)  # a queue is the point of a load test
    n_alone = min(n_requests, 50)
    with Running(obj.home, threads=threads) as url:
        warm = load_test(url, paths[:kinds], requests=min(kinds, n_requests), clients=1)
        alone = load_test(url, paths[:n_alone], requests=n_alone, clients=1)  # the baseline: no concurrency
        result = load_test(url, paths, requests=n_requests, clients=clients)
    rows = result["rows"] + [{**alone["rows"][-1], "endpoint": f"all, one client (first {n_alone})"}]
    notes = [f"index {name}: {index.store.count} words x {index.dim} dims; query words drawn from the {top} most "
             f"frequent (seed {seed}); server: waitress, {threads} threads, 127.0.0.1",
             f"{n_requests} requests from {clients} concurrent clients in {result['seconds']:.2f} s "
             f"({result['requests_per_s']:.1f} requests/s); errors: {result['errors']}",
             f"baseline, the first {n_alone} requests from one client: {alone['requests_per_s']:.1f} requests/s; "
             f"{clients} clients get **{result['requests_per_s'] / alone['requests_per_s']:.2f}x** its throughput "
             f"at {result['rows'][-1]['p50_ms'] / alone['rows'][-1]['p50_ms']:.2f}x its p50 latency",
             f"mix {mix}; warm-up (one request of each kind, not timed above): {warm['errors']} errors",
             "load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg())]
    md = record_bench(record or None, f"bench serve: web API latency under load ({mix})", rows, notes=notes)
    click.echo(md)
    if result["errors"] or alone["errors"]:
        raise click.ClickException(f"{result['errors'] + alone['errors']} requests failed")


@bench_group.command("serve-start")
@click.option("--index", "name", type=INDEX_NAME, default="glove", show_default=True, help="A words index of the home.")
@click.option("--requests", "n_requests", type=click.IntRange(1, 10_000), default=150, show_default=True,
              help="Requests per server.")
@click.option("--repeats", type=click.IntRange(1, 10), default=2, show_default=True, help="Servers of each kind.")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/serve.md", show_default=True,
              help="Markdown file the result is appended to ('' for none).")
@click.pass_obj
def bench_serve_start(obj: Context, name: str, n_requests: int, repeats: int, record: str) -> None:
    """A new server's first requests with its warm-up (the default) and without (--no-warm, the baseline), each
    a fresh `lexprobe serve` process: seconds to serving, first, median and slowest request."""
    from ..runs.bench_record import record as record_bench
    from ..serve.load import start_bench

    result = start_bench(obj.home, name, requests=n_requests, repeats=repeats)
    click.echo(record_bench(record or None, "bench serve-start: first requests with and without warm-up",
                            result["rows"], notes=result["notes"]))
