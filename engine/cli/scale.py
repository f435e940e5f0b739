"""``--engine local|ray`` options shared by the commands that can run on Ray, and ``bench scale``.

Ray is imported only when ``--engine ray`` is chosen (or by ``bench scale``): the local path never loads it.
"""

from __future__ import annotations

import contextlib

import click

from .root import Context, bench_group


def engine_option(f):
    """``--engine local|ray`` and ``--ray-address`` (env ``RAY_ADDRESS``)."""
    f = click.option("--ray-address", envvar="RAY_ADDRESS",
                     help="Ray cluster to join with --engine ray (env RAY_ADDRESS): 'auto', 'HOST:6379' or "
                          "'ray://HOST:10001'; default a new local Ray.")(f)
    f = click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                     help="local: this process; ray: a Ray cluster (pip install 'lexprobe[ray]'; see the README's "
                          "'Running on a Ray cluster').")(f)
    return f


def build_engine_options(f):
    """``--engine``, ``--ray-address``, ``--workers`` and ``--block-sentences`` for a token-index build."""
    f = click.option("--block-sentences", type=int, default=2000, show_default=True,
                     help="--engine ray: sentences per block sent to an encoder actor.")(f)
    f = click.option("--workers", type=int,
                     help="--engine ray: encoder actors (default: the cluster's CPUs / --threads; --threads is "
                          "per actor there, default 1).")(f)
    return engine_option(f)


def shard_groups_option(f):
    """``--shard-groups``: how many search actors serve an index with ``--engine ray``."""
    return click.option("--shard-groups", type=int,
                        help="--engine ray: groups of shards, one search actor each (default: the cluster's CPUs, "
                             "at most one group per shard).")(f)


def search_engine_options(f):
    """``--engine``, ``--ray-address`` and ``--shard-groups`` for a query over an index."""
    return engine_option(shard_groups_option(f))


@contextlib.contextmanager
def opened(view, obj: Context, name: str, engine: str, address: str | None, groups: int | None):
    """Index ``name`` opened as ``view`` (``WordIndex``, ``TokenIndex``): locally, or with its vectors served by
    Ray shard-group actors that stop when the block ends."""
    if engine == "local":
        yield view.open(obj.home, name)
        return
    from ..scale.search import open_sharded

    with open_sharded(view, obj.home, name, groups=groups, address=address) as index:
        yield index


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
