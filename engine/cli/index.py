"""``index list``, ``index info``, ``index verify``, ``index rm``: generic commands over any index kind."""

from __future__ import annotations

import json

import click

from ..core import vector_index as vindex
from .root import Context, format_option, index_group
from ..core.formatting import render
from ..core.errors import LexprobeError
from ..core.store import Store, is_valid_name, list_indexes, open_index, remove_index


@index_group.command("list")
@click.option("--verify", is_flag=True, help="Also recompute every file's checksum (reads every byte).")
@format_option
@click.pass_obj
def list_cmd(obj: Context, verify: bool, fmt: str) -> None:
    """List the indexes under the home: name, status, kind, rows, dimension, source.

    A damaged index is listed with ``damaged: <reason>`` as its status (a folder whose name no command can take,
    ``unusable: ...``); the others are listed as usual."""
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
def info_cmd(obj: Context, name: str) -> None:
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
def verify_cmd(obj: Context, name: str) -> None:
    """Recompute every checksum (manifest, shards, FAISS file) and check row counts; names the bad file."""
    report = verify_store(open_index(obj.home, name, verify=True))
    click.echo(f"ok: {report['name']} ({report['kind']}, {report['count']} rows in {report['shards']} shards"
               + (f", {report['faiss_vectors']} FAISS vectors" if "faiss_vectors" in report else "") + ")")


@index_group.command("rm")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_obj
def rm_cmd(obj: Context, name: str, yes: bool) -> None:
    """Delete an index."""
    if not yes:
        click.confirm(f"delete index {name!r} under {obj.home}?", abort=True)
    remove_index(obj.home, name)
    click.echo(f"removed {name}")
