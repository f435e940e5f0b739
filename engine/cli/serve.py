"""``serve`` (the local web page and its JSON API) and ``bench serve`` (a bounded load test of it)."""

from __future__ import annotations

import click

from .options import INDEX_NAME, SEED
from .root import Context, bench_group, cli


@cli.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The API has no authentication: keep it on loopback unless you mean to "
                   "share every index of the home.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port (0: any free one).")
@click.option("--threads", type=click.IntRange(1, 64), default=8, show_default=True,
              help="Requests answered at the same time.")
@click.pass_obj
def serve_cmd(obj: Context, host: str, port: int, threads: int) -> None:
    """A web page to explore the indexes of the home: neighbours, analogies, relation offsets (OCS, PCS and a
    scatter), sense rankings and masked-LM probes, with a JSON API under /api/. Read-only; models are loaded
    once; an index is reopened when a writer (e.g. ``ota --into``) commits a new version."""
    from ..serve.app import LOOPBACK, make_server

    if host not in LOOPBACK:
        click.echo(f"note: listening on {host}: anyone who can reach it can read every index of {obj.home}", err=True)
    server = make_server(obj.home, host, port, threads=threads)
    click.echo(f"serving the indexes of {obj.home} at http://{host}:{server.effective_port}/ (Ctrl-C stops)")
    try:
        server.run()  # until Ctrl-C, which waitress catches: it finishes the requests being answered
    finally:
        server.close()
    click.echo("stopped")


@bench_group.command("serve")
@click.option("--index", "name", type=INDEX_NAME, default="glove", show_default=True, help="A words index of the home.")
@click.option("--requests", "n_requests", type=click.IntRange(1, 100_000), default=200, show_default=True,
              help="Requests in all.")
@click.option("--clients", type=click.IntRange(1, 64), default=8, show_default=True, help="Concurrent clients.")
@click.option("--threads", type=click.IntRange(1, 64), default=8, show_default=True, help="Server threads.")
@click.option("--vocab", type=click.IntRange(3), default=10_000, show_default=True,
              help="Query words are drawn from the N most frequent words.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the query words.")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/serve.md", show_default=True,
              help="Markdown file the result is appended to ('' for none).")
@click.pass_obj
def bench_serve(obj: Context, name: str, n_requests: int, clients: int, threads: int, vocab: int, seed: int,
                record: str) -> None:
    """Latency of the web API under load, on loopback: a server on a free port, then REQUESTS GETs from CLIENTS
    threads at once, half /api/neighbors (k=10) and half /api/analogy (3CosAdd, k=5) on random frequent words;
    the baseline is the first 50 of them from one client. Records p50/p90/p99 per endpoint; the index is opened by
    one request before the clock starts."""
    import logging
    import os
    import urllib.parse

    import numpy as np

    from ..kinds.words import WordIndex
    from ..runs.bench_record import record as record_bench
    from ..serve.app import Running
    from ..serve.load import load_test

    index = WordIndex.open(obj.home, name)
    rng = np.random.default_rng(seed)
    top = min(vocab, index.store.count)
    words = [index.words[i] for i in rng.choice(top, size=(n_requests, 3), replace=True).ravel()]
    q = lambda **p: urllib.parse.urlencode({"index": name, **p})
    paths = []
    for i in range(n_requests):
        a, a_star, b = words[3 * i: 3 * i + 3]
        paths.append(f"/api/neighbors?{q(word=a, k=10)}" if i % 2 == 0 else
                     f"/api/analogy?{q(a=a, a_star=a_star, b=b, k=5)}")
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)  # a queue is the point of a load test
    n_alone = min(n_requests, 50)
    with Running(obj.home, threads=threads) as url:
        warm = load_test(url, paths[:2], requests=2, clients=1)
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
             f"warm-up (opens the index, not timed above): 2 requests, {warm['errors']} errors",
             "load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg())]
    md = record_bench(record or None, "bench serve: web API latency under load", rows, notes=notes)
    click.echo(md)
    if result["errors"] or alone["errors"]:
        raise click.ClickException(f"{result['errors'] + alone['errors']} requests failed")
