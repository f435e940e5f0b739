"""A run folder: result tables as Parquet + markdown, a summary JSON and plots, written atomically.

Tables are written byte-for-byte reproducibly (no timestamps inside), so the same command and seed give
identical files.

A command run from the CLI with ``--out`` *claims* its folder first (:func:`begin_run`): the folder's
``run.json`` records what made it (lexprobe version, the command with every parameter, the index, the
datasets and their SHA-256) and which files the run wrote (``files``, kept up to date as it writes). A folder
holding the files of another run (another command, other data, another version, or files lexprobe did not
write) is refused unless ``overwrite``; rerunning the identical command rewrites its own files in place. Every
Parquet file carries the same record in its schema metadata (key ``lexprobe``, a JSON object) and
``summary.json`` under ``"lexprobe"``. Output locations (``--out``, ``--record``) and the index home are not part
of the record, so the same command writes the same bytes wherever it writes.

``overwrite`` deletes only what a run wrote: the files the previous run's ``run.json`` lists, inside that folder
(never through a link, never a folder). It refuses a folder without such a record, a link to a folder, the
index and data homes and the folders above them, the current folder and those above it, the user's home, and
any folder holding an index, a dataset or a ``.git`` at any depth. ``--out ""`` is refused (it would be the
current folder).
"""

from __future__ import annotations

import json
import math
import os
import stat
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
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:  # a full disk names no file by itself
        _drop(tmp)
        raise LexprobeError(f"{path}: cannot write it ({exc.strerror or exc})") from None


def _drop(tmp: Path) -> None:
    try:
        tmp.unlink(missing_ok=True)
    except OSError:
        pass


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


FILES = "files"          # run.json's list of the files the run wrote (relative paths)
MAX_CLEAR_ENTRIES = 100_000  # a folder with more entries is not a run folder --overwrite would empty


def _is_empty(path: Path) -> bool:
    return not path.exists() or not any(path.iterdir())


def _previous(path: Path):
    """The previous run's ``run.json`` in ``path`` (a dict), or None."""
    try:
        previous = json.loads((path / RUN_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return previous if isinstance(previous, dict) else None


def _record_of(previous: dict | None) -> dict | None:
    """What made the previous run, without the list of its files."""
    return None if previous is None else {k: v for k, v in previous.items() if k != FILES}


def _protected() -> list[tuple[Path, str]]:
    """Folders --overwrite never empties, nor any folder above them: (resolved path, what it is)."""
    from ..core.store import default_home
    from ..sources.datahome import data_home

    places = [(default_home(), "the index home"), (data_home(), "the data home")]
    if os.environ.get("LEXPROBE_HOME"):
        places.append((Path(os.environ["LEXPROBE_HOME"]), "the index home"))
    if _active_home is not None:
        places.append((Path(_active_home), "the index home"))
    return [(p.expanduser().resolve(), what) for p, what in places]


_active_home: Path | None = None  # the index home of the command that is claiming a folder


def _check_clearable(path: Path, previous: dict | None) -> None:
    """Refuse ``--overwrite`` of anything but a folder a previous run recorded (see the module's docstring)."""
    def refuse(why: str):
        raise LexprobeError(f"{path}: will not empty {why} for --overwrite; choose another --out")

    if path.is_symlink():
        refuse("a link to a folder (give the folder itself)")
    resolved = path.resolve()
    here = Path.cwd().resolve()
    if resolved == here or resolved in here.parents:
        refuse("the current folder or one above it")
    if resolved == Path.home().resolve() or resolved == Path(resolved.anchor):
        refuse("the home folder or the root of the file system")
    for place, what in _protected():
        if resolved == place or resolved in place.parents:
            refuse(f"{what} ({place}) or a folder above it")
    if previous is None or not isinstance(previous.get(FILES), list):
        refuse("a folder whose files lexprobe did not record (no run.json listing them: --overwrite deletes "
               "only a previous run's own files)")
    from ..core.store import MANIFEST
    from ..sources.datahome import DATASETS, RECORD, find_root

    seen = 0
    for dirpath, dirnames, filenames in os.walk(path):  # links to folders are not followed
        seen += len(dirnames) + len(filenames)
        if seen > MAX_CLEAR_ENTRIES:
            refuse(f"a folder of more than {MAX_CLEAR_ENTRIES} entries")
        if ".git" in dirnames or ".git" in filenames:
            refuse(f"a folder holding a repository ({Path(dirpath) / '.git'})")
        if MANIFEST in filenames and Path(dirpath) != path:
            refuse(f"a folder holding an index ({Path(dirpath).relative_to(path)})")
        if RECORD in filenames:
            refuse(f"a folder holding a dataset ({Path(dirpath) / RECORD})")
    for ds in DATASETS.values():
        if find_root(path, ds) is not None:
            refuse(f"a folder holding the {ds.name} dataset")


def begin_run(path: str | os.PathLike, record: dict, *, overwrite: bool = False,
              home: str | os.PathLike | None = None) -> Path:
    """Check ``path`` for the run described by ``record`` (see :func:`run_record`) and make it the active run.

    An empty or missing folder is taken; one holding the same run (identical record) is reused in place; one
    holding anything else is refused with one line unless ``overwrite``, which deletes the files the previous
    run's ``run.json`` lists and nothing else (see the module's docstring for what it refuses; ``home`` is the
    command's index home, refused too). Nothing is written (or deleted) until the run writes its first file
    (:class:`RunDir`), so a command that stops on bad arguments leaves the folder as it was.
    """
    global _active, _active_home
    if not str(path).strip():
        raise LexprobeError("--out is empty: name the run's folder (an empty name would be the current folder)")
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise LexprobeError(f"{path}: not a folder (--out)")
    empty_first = False
    previous = _previous(path)
    if not _is_empty(path) and _record_of(previous) != record:
        if not overwrite:
            if previous is None:
                what = "files of something else"
            elif previous.get("command") == record["command"]:
                changed = [k for k in ("lexprobe_version", "index_source", "index_rows", "datasets")
                           if previous.get(k) != record.get(k)]
                what = f"a run of this command with other {', '.join(changed) or 'settings'}"
            else:
                what = f"another run ({previous.get('command')})"
            raise LexprobeError(f"{path}: holds {what}; pass --overwrite to replace it, or choose another --out")
        _active_home = Path(home) if home is not None else None
        try:
            _check_clearable(path, previous)
        finally:
            _active_home = None
        empty_first = True
    kept = [] if empty_first or previous is None else [f for f in previous.get(FILES, []) if isinstance(f, str)]
    _active = {"root": path.resolve(), "path": path, "record": record, "empty_first": empty_first,
               "claimed": False, "previous": previous, "files": set(kept), "before": set()}
    return path


def _listed(root: Path, rel) -> Path | None:
    """The file ``rel`` (a run.json entry) inside ``root``, or None when the entry could lead elsewhere: not a
    relative path of plain names, or through a link or something that is not a folder."""
    if not isinstance(rel, str) or not rel or "\0" in rel:
        return None
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or any(p in ("", ".", "..") for p in parts):
        return None
    folder = root
    for part in parts[:-1]:
        folder = folder / part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):  # a link to a folder is not followed
                return None
        except OSError:
            return None
    return folder / parts[-1]


def _remove_listed(root: Path, files) -> None:
    """Delete the listed files under ``root`` (links themselves, never what they point to; never folders), then
    the folders they leave empty, then ``run.json``."""
    folders = set()
    for rel in files if isinstance(files, list) else []:
        target = _listed(root, rel)
        if target is None:
            continue
        try:
            if stat.S_ISDIR(os.lstat(target).st_mode):
                continue
            os.unlink(target)
        except FileNotFoundError:
            continue
        folders.update(p for p in target.parents if p != root and root in p.parents)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        try:
            folder.rmdir()
        except OSError:  # not empty: it holds something the run did not list
            pass
    (root / RUN_RECORD).unlink(missing_ok=True)


def _files_under(root: Path) -> set[str]:
    """Every file under ``root`` (relative paths; links not followed), ``run.json`` left out."""
    found = set()
    for dirpath, _, filenames in os.walk(root):
        for fn in filenames:
            rel = (Path(dirpath) / fn).relative_to(root).as_posix()
            if rel != RUN_RECORD:
                found.add(rel)
    return found


def _write_record() -> None:
    root = _active["path"]
    body = {**_active["record"], FILES: sorted(_active["files"])}
    _atomic_write_bytes(root / RUN_RECORD, (json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False,
                                                       allow_nan=False) + "\n").encode("utf-8"))


def _claim(path: Path) -> None:
    """On the active run's first write: delete the previous run's files when asked, create the folder, write
    ``run.json``."""
    root = _active["path"]
    if _active["empty_first"]:
        _remove_listed(root, (_active["previous"] or {}).get(FILES))
    root.mkdir(parents=True, exist_ok=True)
    _active["before"] = _files_under(root) - _active["files"]
    _write_record()
    _active["claimed"] = True


def _note(path: Path) -> None:
    """Record in ``run.json`` that the active run is about to write ``path`` (before it exists: a run killed
    half-way still lists every file it wrote)."""
    if not _inside_active(path):
        return
    rel = path.resolve().relative_to(_active["root"]).as_posix()
    if rel not in _active["files"]:
        _active["files"].add(rel)
        if _active["claimed"]:
            _write_record()


def end_run() -> None:
    """Forget the active run (the command finished), after listing in ``run.json`` every file it wrote (plots'
    SVG and PDF beside their PNG included)."""
    global _active
    if _active is not None and _active["claimed"] and _active["path"].is_dir():
        _active["files"] |= _files_under(_active["path"]) - _active["before"]
        try:
            _write_record()
        except OSError:
            pass
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
        """Where to write ``name`` (recorded in the run's ``run.json`` first)."""
        _note(self.path / name)
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
        target = self.file(f"{name}.parquet")
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        try:
            pq.write_table(table, tmp)
            os.replace(tmp, target)
        except OSError as exc:  # pyarrow's own message names no file when the disk is full
            _drop(tmp)
            raise LexprobeError(f"{target}: cannot write it ({getattr(exc, 'strerror', None) or exc})") from None
        if markdown:
            rows = rows if rows is not None else table.to_pylist()
            self.write_text(f"{name}.md", markdown_table(rows, columns) + "\n")
        return target

    def write_text(self, name: str, text: str) -> Path:
        path = self.file(name)
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
