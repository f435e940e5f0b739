"""``lexprobe serve``: the local web page and its JSON API (its load test is ``bench serve``)."""

from __future__ import annotations

import click

from .root import Context, cli


@cli.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The API has no authentication: keep it on loopback unless you mean to "
                   "share every index of the home.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port (0: any free one).")
@click.option("--threads", type=click.IntRange(1, 64), default=8, show_default=True,
              help="Requests answered at the same time.")
@click.pass_obj
def serve(obj: Context, host: str, port: int, threads: int) -> None:
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
