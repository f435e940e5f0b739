"""``lexprobe serve``: the local web page and its JSON API (its load test is ``bench serve``)."""

from __future__ import annotations

import threading

import click

from ..serve import IDLE_TIMEOUT
from ..sources.models import DEFAULT_MLM
from .root import Context, cli


@cli.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The API has no authentication: keep it on loopback unless you mean to "
                   "share every index of the home.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port (0: any free one).")
@click.option("--threads", type=click.IntRange(1, 64), default=8, show_default=True,
              help="Requests answered at the same time.")
@click.option("--model", "models", multiple=True, default=(DEFAULT_MLM,), show_default=True,
              help="A masked LM /api/probe may run (repeat for more), loaded before the server answers; a request "
                   "naming any other model gets a 400. Nothing is converted or downloaded while serving.")
@click.option("--allow-host", "allow_hosts", multiple=True,
              help="Another name clients may use in the Host header (e.g. this machine's name with --host "
                   "0.0.0.0); by default only 127.0.0.1, localhost, [::1] and --host, with the port.")
@click.option("--idle-timeout", type=click.IntRange(1, 3600), default=IDLE_TIMEOUT, show_default=True,
              help="Seconds after which an idle connection is closed.")
@click.option("--warm/--no-warm", default=True, show_default=True,
              help="Compile (or load from the compiled-code folder) the search kernels and open the words indexes "
                   "before answering, so that no request waits for them; t-SNE and UMAP are made ready on a "
                   "background thread once the server answers.")
@click.pass_obj
def serve(obj: Context, host: str, port: int, threads: int, models: tuple[str, ...], allow_hosts: tuple[str, ...],
          idle_timeout: int, warm: bool) -> None:
    """A web page to explore the indexes of the home: neighbours, analogies, relation offsets (OCS, PCS and a
    scatter), sense rankings, projections (PCA, t-SNE, UMAP) and masked-LM probes, with a JSON API under /api/
    (described by /api/openapi.json; format=csv for any table). Read-only: it writes nothing, and answers only
    requests addressed to it (its Host); the --model list and the search kernels are loaded at start; an index is
    reopened when a writer (e.g. 'lexprobe ota --into') commits a new version."""
    from ..serve.app import LOOPBACK, make_server

    if host not in LOOPBACK:
        click.echo(f"note: listening on {host}: anyone who can reach it can read every index of {obj.home}", err=True)
    server = make_server(obj.home, host, port, threads=threads, models=models, allow_hosts=allow_hosts,
                         idle_timeout=idle_timeout, preload=True, warm=warm)
    if warm:
        warmed = server.app.config["lexprobe.warm"]
        click.echo(f"warmed in {warmed['seconds']:.1f} s: search kernels ({', '.join(warmed['kernels'])}), words "
                   f"indexes ({', '.join(warmed['indexes']) or 'none'})", err=True)
        threading.Thread(target=_warm_projections, name="lexprobe-warm-projections", daemon=True).start()
    try:
        click.echo(f"serving the indexes of {obj.home} at http://{host}:{server.effective_port}/ (Ctrl-C stops)")
        server.run()  # until Ctrl-C, which waitress catches: it finishes the requests being answered
    finally:
        server.close()
    click.echo("stopped")


def _warm_projections() -> None:
    """t-SNE's and UMAP's imports and compiled code made ready while the server already answers (UMAP's take
    seconds to tens of seconds)."""
    from ..serve.projection import warm_up

    done = warm_up()
    click.echo(f"projections ready in {done['seconds']:.1f} s: {'; '.join(done['libraries']) or 'none installed'}",
               err=True)
