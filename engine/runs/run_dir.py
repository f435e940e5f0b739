"""A run folder: result tables as Parquet + markdown, a summary JSON and plots, written atomically.

Tables are written byte-for-byte reproducibly (no timestamps inside), so the same command and seed give
identical files.

A command run from the CLI with ``--out`` *claims* its folder first (:func:`begin_run`): the folder's
``run.json`` records what made it (lexprobe version, the command with every parameter, the index, the
datasets and their SHA-256). A folder holding the files of another run (another command, other data, another
version, or files lexprobe did not write) is refused unless ``overwrite``, which empties it first; rerunning
the identical command rewrites its own files in place. Every Parquet file carries the same record in its
schema metadata (key ``lexprobe``, a JSON object) and ``summary.json`` under ``"lexprobe"``. Output locations
(``--out``, ``--record``) and the index home are not part of the record, so the same command writes the same
bytes wherever it writes.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from ..core.errors import LexprobeError
from ..core.formatting import markdown_table
from ..core.version import __version__

RUN_RECORD = "run.json"
INDEX_PARAMS = ("words_index", "index", "name", "words")  # the click parameter names that name an index
DATASET_PARAMS = ("dataset", "database", "queries", "questions", "pairs", "corpus", "data")

_active: dict | None = None  # the run folder a command claimed: root, record, whether to empty it, claimed yet


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def strict_json(value):
    """``value`` with every NaN or infinite float replaced by None (JSON has no NaN), numpy scalars as Python."""
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):  # numpy arrays and scalars
        return strict_json(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _dataset_checksum(spec) -> str | None:
    """SHA-256 of what a dataset spec (``KIND:PATH``, a path, or a data-home name) reads; None when it names
    no file or folder."""
    from ..sources.datahome import resolve_path, tree_checksum

    path = resolve_path(str(spec))
    return tree_checksum(path)["sha256"] if path is not None else None


def _index_source(home: Path | None, name: str) -> dict:
    from ..core.store import MANIFEST, check_name, read_manifest

    try:
        manifest = read_manifest(Path(home) / check_name(name) / MANIFEST)
    except (LexprobeError, OSError, TypeError):
        return {}
    return {"index_kind": manifest.get("kind"), "index_source": manifest.get("source"),
            "index_rows": manifest.get("count")}


def run_record(command: str, params: dict, home: Path | None = None) -> dict:
    """What made a run: version, command, index (and its source), datasets with their SHA-256, method, seed."""
    index = next((params[p] for p in INDEX_PARAMS if isinstance(params.get(p), str)), None)
    datasets = {p: {"spec": str(params[p]), "sha256": _dataset_checksum(params[p])}
                for p in DATASET_PARAMS if params.get(p) not in (None, "", ())
                and isinstance(params[p], (str, os.PathLike))}
    main = next(iter(datasets.values()), {"spec": None, "sha256": None})
    record = {"lexprobe_version": __version__, "command": command, "index": index,
              **(_index_source(home, index) if index and home else {}),
              "dataset": main["spec"], "dataset_sha256": main["sha256"], "datasets": datasets,
              "method": params.get("method"), "seed": params.get("seed")}
    return strict_json(record)


def _is_empty(path: Path) -> bool:
    return not path.exists() or not any(path.iterdir())


def _check_clearable(path: Path) -> None:
    here = Path.cwd().resolve()
    resolved = path.resolve()
    if resolved == here or resolved in here.parents or (resolved / ".git").exists() or resolved == Path.home():
        raise LexprobeError(f"{path}: will not empty this folder for --overwrite (the current folder, one above "
                            f"it, the home folder or a repository); choose another --out")


def begin_run(path: str | os.PathLike, record: dict, *, overwrite: bool = False) -> Path:
    """Check ``path`` for the run described by ``record`` (see :func:`run_record`) and make it the active run.

    An empty or missing folder is taken; one holding the same run (identical record) is reused in place; one
    holding anything else is refused with one line unless ``overwrite``, which empties it. Nothing is written
    (or emptied) until the run writes its first file (:class:`RunDir`), so a command that stops on bad
    arguments leaves the folder as it was.
    """
    global _active
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise LexprobeError(f"{path}: not a folder (--out)")
    empty_first = False
    if not _is_empty(path):
        previous = None
        try:
            previous = json.loads((path / RUN_RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
        if previous != record:
            if not overwrite:
                if not isinstance(previous, dict):
                    what = "files of something else"
                elif previous.get("command") == record["command"]:
                    changed = [k for k in ("lexprobe_version", "index_source", "index_rows", "datasets")
                               if previous.get(k) != record.get(k)]
                    what = f"a run of this command with other {', '.join(changed) or 'settings'}"
                else:
                    what = f"another run ({previous.get('command')})"
                raise LexprobeError(f"{path}: holds {what}; pass --overwrite to empty it, or choose another --out")
            _check_clearable(path)
            empty_first = True
    _active = {"root": path.resolve(), "path": path, "record": record, "empty_first": empty_first,
               "claimed": False}
    return path


def _claim(path: Path) -> None:
    """On the active run's first write: empty its folder when asked, create it, write ``run.json``."""
    root = _active["path"]
    if _active["empty_first"]:
        for child in root.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    root.mkdir(parents=True, exist_ok=True)
    _atomic_write_bytes(root / RUN_RECORD, (json.dumps(_active["record"], indent=1, sort_keys=True,
                                                       ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8"))
    _active["claimed"] = True


def end_run() -> None:
    """Forget the active run (the command finished)."""
    global _active
    _active = None


def _inside_active(path: Path) -> bool:
    if _active is None:
        return False
    resolved = path.resolve()
    return resolved == _active["root"] or _active["root"] in resolved.parents


def active_record(path: Path) -> dict:
    """The record of the active run when ``path`` lies inside its folder, else just the version."""
    return _active["record"] if _inside_active(path) else {"lexprobe_version": __version__}


class RunDir:
    """Where one analysis writes its outputs (``<out>/<name>.parquet``, ``.md``, ``summary.json``, PNGs)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if _inside_active(self.path) and not _active["claimed"]:
            _claim(self.path)
        self.path.mkdir(parents=True, exist_ok=True)

    def file(self, name: str) -> Path:
        return self.path / name

    @property
    def record(self) -> dict:
        """What made this run (:func:`run_record`); only the version outside a CLI command."""
        return active_record(self.path)

    def write_table(self, name: str, table: pa.Table | Sequence[dict], *, markdown: bool = True,
                    columns: Sequence[str] | None = None) -> Path:
        """``<name>.parquet`` (and ``<name>.md`` unless ``markdown=False``) from a table or a list of rows.
        The Parquet schema metadata holds the run record under the key ``lexprobe`` (JSON)."""
        rows = None
        if not isinstance(table, pa.Table):
            rows = list(table)
            table = pa.Table.from_pylist(rows) if rows else pa.table({})
        metadata = dict(table.schema.metadata or {})
        metadata[b"lexprobe"] = json.dumps(self.record, sort_keys=True, ensure_ascii=False).encode("utf-8")
        table = table.replace_schema_metadata(metadata)
        target = self.path / f"{name}.parquet"
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        pq.write_table(table, tmp)
        os.replace(tmp, target)
        if markdown:
            rows = rows if rows is not None else table.to_pylist()
            self.write_text(f"{name}.md", markdown_table(rows, columns) + "\n")
        return target

    def write_text(self, name: str, text: str) -> Path:
        path = self.path / name
        _atomic_write_bytes(path, text.encode("utf-8"))
        return path

    def write_json(self, name: str, data: dict) -> Path:
        """Strict JSON (NaN and infinities written as null); ``summary.json`` also gets the run record
        under ``"lexprobe"`` (with the version)."""
        data = strict_json(data)
        if name == "summary.json":
            data = {**data, "lexprobe": self.record}
        return self.write_text(name, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False,
                                                allow_nan=False) + "\n")
