"""Arrow shard store: one folder per index, ``manifest.json`` + ``shards/part-NNNNN.arrow`` + side files.

Layout of ``<home>/<name>/``::

    manifest.json          schema version, kind, source, dim, count, shards (rows, bytes, crc32), files, meta
    shards/part-00000.arrow  Arrow IPC files, memory-mapped on read; vectors are fixed-size-list float32
    faiss.index            side files (the FAISS index), checksummed in the manifest like the shards

Every write builds a complete new version of the folder in a hidden sibling (unchanged shards are
hard-linked, never copied), fsyncs it, writes the manifest last and swaps the folder in with one atomic
``renameat2(RENAME_EXCHANGE)`` (or ``rename`` when there is no old folder). A crash at any point therefore
leaves either the old index or the new one under ``<name>``. Readers open the folder by file descriptor, so
a swap during an open gives them the old or the new version, never a mix. Writers hold ``.<name>.lock``.

Every open verifies the manifest's own checksum and each file's size and CRC32: a flipped byte or a
truncated file is reported with the file named, and nothing is answered from it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import fcntl
import json
import os
import re
import shutil
import stat
import time
import uuid
import weakref
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Iterator

import numpy as np
import pyarrow as pa

from .conventions import old_order
from .errors import CorruptIndexError, LexprobeError, LockedError
from .home import default_home, home_path  # noqa: F401  (the store's callers import them from here)

SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
SHARD_DIR = "shards"
DEFAULT_SHARD_ROWS = 100_000
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
# the names of the catalog's views over all indexes of a kind (DuckDB names are case-insensitive)
RESERVED_NAMES = ("words", "offsets", "tokens")
# the side files each kind's manifest must list (the FAISS index, the token index's sentences)
KIND_FILES = {"words": ("faiss",), "offsets": (), "tokens": ("faiss", "sentences")}
# (meta key, check, what it must be): the settings each kind's reader takes from its manifest
KIND_META = {
    "tokens": (("model", lambda v: isinstance(v, str) and bool(v), "a model name"),
               ("layers", lambda v: isinstance(v, list) and bool(v) and all(type(x) is int for x in v),
                "a list of layer numbers"),
               ("pooling", lambda v: isinstance(v, str) and bool(v), "a pooling name")),
    "offsets": (("words_index", lambda v: isinstance(v, str) and is_valid_name(v), "an index name"),),
}
_SHARD_FILE_RE = re.compile(r"part-\d{5}\.arrow")
_CHUNK = 1 << 22


def check_name(name: str) -> str:
    """``name`` when it is a valid index name (the whole string: ASCII letters, digits, '_', '-', '.', not first,
    at most 128 characters), else an error. A valid name is one folder name, never a path."""
    if not is_valid_name(name):
        raise LexprobeError(f"bad index name {name!r}: use letters, digits, '_', '-', '.' (not first), "
                            "at most 128 characters")
    return name


def is_valid_name(name: str) -> bool:
    return isinstance(name, str) and _NAME_RE.fullmatch(name) is not None


MAX_WORD_BYTES = 4096  # the longest word an index takes (the binary vector readers look no further)
# whitespace (Unicode's, as str.isspace) and control characters (Unicode category Cc)
_NOT_IN_WORD = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")
WORD_RULE = f"a word is non-empty, holds no whitespace or control character, and is at most {MAX_WORD_BYTES} bytes"


def word_problem(word) -> str | None:
    """Why ``word`` may not enter an index (:data:`WORD_RULE`: a word must be written out and read back as one
    field, and stay small), or None when it may."""
    if not isinstance(word, str):
        return f"not a string ({type(word).__name__})"
    if not word:
        return "empty"
    if _NOT_IN_WORD.search(word):
        return "holds whitespace or a control character"
    if len(word) * 4 > MAX_WORD_BYTES and len(word.encode("utf-8", "surrogatepass")) > MAX_WORD_BYTES:
        return f"longer than {MAX_WORD_BYTES} bytes"
    return None


def check_words(words) -> None:
    """Refuse the first word that may not enter an index: one line with the word (cut at 40 characters), the
    problem and the rule."""
    for word in words:
        problem = word_problem(word)
        if problem is not None:
            shown = repr(word[:40]) + ("..." if len(word) > 40 else "") if isinstance(word, str) else repr(word)[:40]
            raise LexprobeError(f"word {shown}: {problem} ({WORD_RULE})")


def check_new_index(home: Path, name: str, *, replace: bool = False, reads: tuple[str, ...] = ()) -> str:
    """Check the target of a build before any lock, file or work: a valid name, not a catalog view's name, not
    another index's name in another case (DuckDB's names are case-insensitive), not an index the build reads,
    and not an existing index (of any kind, damaged or not) unless ``replace``."""
    check_name(name)
    if name.lower() in RESERVED_NAMES:
        raise LexprobeError(f"index name {name!r} is reserved: the SQL catalog's view over all "
                            f"{name.lower()} indexes has that name")
    if name in reads:
        raise LexprobeError(f"index {name!r} cannot be replaced by a build that reads it: choose another --name")
    for path in list_indexes(home):
        if path.name != name and path.name.lower() == name.lower():
            raise LexprobeError(f"index name {name!r} differs only in case from the index {path.name!r} "
                                f"(SQL names are case-insensitive): choose another name")
    if not replace and _exists(home / name):
        raise LexprobeError(f"{home / name}: index {name!r} exists: pass --replace to replace it")
    return name


def _exists(path: Path) -> bool:
    return (path / MANIFEST).exists() or (path / SHARD_DIR).is_dir() or any(_own_temp(path.parent, path.name, "old"))


def file_crc32(path: str | os.PathLike) -> tuple[int, int]:
    """(size in bytes, CRC32) of a file, read in 4 MiB chunks."""
    crc, size = 0, 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
            size += len(chunk)
    return size, crc


def _manifest_checksum(manifest: dict) -> int:
    body = {k: v for k, v in manifest.items() if k != "checksum"}
    return zlib.crc32(json.dumps(body, sort_keys=True, ensure_ascii=True).encode())


def _fsync_path(path: str | os.PathLike, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def vector_type(dim: int) -> pa.DataType:
    """The Arrow type of a vector column: fixed-size list of ``dim`` float32."""
    return pa.list_(pa.float32(), dim)


def vector_array(matrix: np.ndarray) -> pa.FixedSizeListArray:
    """A fixed-size-list float32 Arrow array over a 2-D float32 matrix (no copy when contiguous)."""
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    return pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1])


def column_matrix(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A fixed-size-list float32 column as an (n, d) numpy matrix; zero-copy for a single chunk."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    dim = column.type.list_size
    parts = [c.flatten().to_numpy(zero_copy_only=True).reshape(-1, dim) for c in chunks if len(c)]
    if not parts:
        return np.zeros((0, dim), dtype=np.float32)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


# ----------------------------------------------------------------------------------------- atomic swap

_RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2); False where the system cannot."""
    fn = getattr(_libc, "renameat2", None)
    if fn is None:
        return False
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap_in(tmp: Path, final: Path) -> None:
    """Make ``tmp`` the folder at ``final`` atomically; the old one (if any) is deleted afterwards."""
    if not final.exists():
        os.rename(tmp, final)
    elif _exchange(tmp, final):
        shutil.rmtree(tmp, ignore_errors=True)
    else:  # no atomic exchange: two renames, with recovery of the old folder by the next writer
        old = final.with_name(f".{final.name}.old-{uuid.uuid4().hex[:8]}")
        os.rename(final, old)
        os.rename(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    _fsync_path(final.parent, directory=True)


# ----------------------------------------------------------------------------------------------- lock


@contextlib.contextmanager
def write_lock(home: Path, name: str, wait: float | None = None) -> Iterator[None]:
    """Exclusive writer lock on one index (``<home>/.<name>.lock``); waits up to ``wait`` seconds.

    ``wait`` defaults to ``$LEXPROBE_LOCK_WAIT`` (0: fail at once with a clear message).
    """
    check_name(name)
    if wait is None:
        raw = os.environ.get("LEXPROBE_LOCK_WAIT", "0")
        try:
            wait = float(raw)
        except ValueError:
            wait = float("nan")
        if not (0 <= wait < float("inf")):
            raise LexprobeError(f"LEXPROBE_LOCK_WAIT={raw!r} is not a number of seconds (0 or more, finite)")
    home.mkdir(parents=True, exist_ok=True)
    lock_path = home / f".{name}.lock"
    deadline = time.monotonic() + wait
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                raise LockedError(
                    f"{lock_path}: index {name!r} is being written by another process "
                    "(wait for it, or set LEXPROBE_LOCK_WAIT=seconds)") from None
            time.sleep(0.1)
            continue
        try:  # the holder before us removed the lock file on release: lock the new one instead
            same = os.path.samestat(os.fstat(fd), os.stat(lock_path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        _clean_stale(home, name)
        yield
    finally:
        with contextlib.suppress(OSError):  # still holding it: no one else can be inside; waiters retry
            os.unlink(lock_path)
        os.close(fd)  # closing releases the flock


_TEMP_RE = {"tmp": r"tmp-(?:rm-)?(?:\d+-)?[0-9a-f]{8}", "old": r"old-[0-9a-f]{8}"}


def _own_temp(home: Path, name: str, kind: str) -> list[Path]:
    """The index's own temporary folders of one kind (``.NAME.tmp-PID-HEX``, ``.NAME.tmp-rm-HEX``,
    ``.NAME.old-HEX``), matched exactly: never another index's files whose name starts alike."""
    pattern = re.compile(re.escape(f".{name}.") + _TEMP_RE[kind])
    try:
        entries = list(os.scandir(home))
    except FileNotFoundError:
        return []
    return sorted(Path(e.path) for e in entries if pattern.fullmatch(e.name))


def _clean_stale(home: Path, name: str) -> None:
    """Remove temporary folders left by a writer that crashed (we hold the lock, so none is live)."""
    recover_aside(home, name)
    for stale in _own_temp(home, name, "tmp") + _own_temp(home, name, "old"):
        shutil.rmtree(stale, ignore_errors=True)


def recover_aside(home: Path, name: str) -> None:
    """Where the system has no rename-exchange a swap is two renames; a crash between them leaves the index
    only as ``.NAME.old-*``: put it back (its own atomic rename; harmless when another process races us)."""
    if (home / name).exists():
        return
    old = _own_temp(home, name, "old")
    if old:
        with contextlib.suppress(FileNotFoundError, FileExistsError, OSError):
            os.rename(old[-1], home / name)


# ----------------------------------------------------------------------------------------------- read


@dataclass
class Store:
    """A verified, memory-mapped view of one index folder at one version."""

    path: Path
    manifest: dict
    tables: list[pa.Table]  # one per shard, memory-mapped
    _dir_fd_path: str
    _file_fds: dict = field(default_factory=dict, repr=False)  # side file key -> fd held open (Linux)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def kind(self) -> str:
        return self.manifest["kind"]

    @property
    def dim(self) -> int:
        return int(self.manifest["dim"])

    @property
    def count(self) -> int:
        return int(self.manifest["count"])

    @property
    def meta(self) -> dict:
        return self.manifest.get("meta", {})

    def table(self, columns: list[str] | None = None) -> pa.Table:
        """All shards as one table (zero-copy chunks)."""
        tables = [t.select(columns) if columns else t for t in self.tables]
        return pa.concat_tables(tables) if tables else pa.table({})

    def column(self, name: str) -> pa.ChunkedArray:
        chunks = [c for t in self.tables for c in t.column(name).chunks]
        return pa.chunked_array(chunks, type=self.tables[0].schema.field(name).type)

    def matrix(self, column: str = "vector") -> np.ndarray:
        """A vector column as one (count, dim) float32 matrix (zero-copy when there is one shard)."""
        return column_matrix(self.column(column))

    def file_path(self, key: str) -> str:
        """Path of a side file (e.g. ``faiss``) of this exact version, valid as long as the store lives."""
        if key in self._file_fds:
            return f"/proc/self/fd/{self._file_fds[key]}"
        return os.path.join(self._dir_fd_path, self.manifest["files"][key]["file"])

    @property
    def tombstones(self) -> np.ndarray:
        return np.asarray(self.manifest.get("tombstones", []), dtype=np.int64)

    @classmethod
    def open(cls, path: str | os.PathLike, *, verify: bool = True) -> "Store":
        """Open and verify an index folder; retries when a writer swapped it in the middle of the open."""
        path = Path(path)
        if not (path / MANIFEST).exists():
            if (path / SHARD_DIR).is_dir():
                raise CorruptIndexError(f"{path / MANIFEST}: missing, the index folder is damaged "
                                        "(rebuild or remove it)")
            raise LexprobeError(f"{path}: no such index (no {MANIFEST})")
        last: Exception | None = None
        for _ in range(5):
            try:
                return cls._open_once(path, verify)
            except (FileNotFoundError, _Retry) as exc:  # swapped while opening
                last = exc
                time.sleep(0.05)
        if isinstance(last, _Retry):
            raise last.error
        raise CorruptIndexError(f"{path}: index files vanished while opening ({last})")

    @classmethod
    def _open_once(cls, path: Path, verify: bool) -> "Store":
        dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            base = f"/proc/self/fd/{dir_fd}"
            if not os.path.isdir(base):  # no /proc: fall back to the plain path
                base = str(path)
            manifest = read_manifest(os.path.join(base, MANIFEST), display=path / MANIFEST)
            try:
                tables = []
                for shard in manifest["shards"]:
                    display = path / SHARD_DIR / shard["file"]
                    real = os.path.join(base, SHARD_DIR, shard["file"])
                    if verify:
                        _check_file(real, shard, display)
                    tables.append(_read_shard(real, shard, display))
                if verify:
                    for entry in manifest.get("files", {}).values():
                        _check_file(os.path.join(base, entry["file"]), entry, path / entry["file"])
                file_fds = _open_side_files(base, manifest, path)
            except CorruptIndexError as exc:
                # a concurrent swap looks like corruption: re-read the manifest and retry if it changed
                current = read_manifest(path / MANIFEST, display=path / MANIFEST)
                if current.get("version_id") != manifest.get("version_id"):
                    raise _Retry(exc) from exc
                raise
            if sum(len(t) for t in tables) != manifest["count"]:
                _close_all(file_fds.values())
                raise CorruptIndexError(f"{path / MANIFEST}: shards hold {sum(len(t) for t in tables)} rows, "
                                        f"manifest says {manifest['count']}")
            # keep the directory alive for side files by holding a dup'd fd for the store's lifetime
            keep_fd = os.dup(dir_fd) if base.startswith("/proc/") else None
            keep = f"/proc/self/fd/{keep_fd}" if keep_fd is not None else str(path)
            store = cls(path, manifest, tables, keep, file_fds)
            weakref.finalize(store, _close_all, list(file_fds.values()) + ([keep_fd] if keep_fd is not None else []))
            return store
        finally:
            os.close(dir_fd)


def _open_side_files(base: str, manifest: dict, path: Path) -> dict[str, int]:
    """An open fd per side file of this version (with /proc), so that a writer deleting the old version after
    a swap cannot pull a side file from under a reader that loads it later."""
    if not base.startswith("/proc/"):
        return {}
    fds: dict[str, int] = {}
    for key, entry in manifest.get("files", {}).items():
        try:
            fds[key] = os.open(os.path.join(base, entry["file"]), os.O_RDONLY)
        except FileNotFoundError:
            _close_all(fds.values())
            raise CorruptIndexError(f"{path / entry['file']}: file listed in the manifest is missing") from None
    return fds


def _close_all(fds) -> None:
    for fd in fds:
        os.close(fd)


class _Retry(Exception):
    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


def read_manifest(path: str | os.PathLike, display: str | os.PathLike | None = None) -> dict:
    """Read and check a manifest (JSON, own checksum, schema version)."""
    display = display or path
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the reader for ever
            raise CorruptIndexError(f"{display}: not a regular file (the index folder is damaged)")
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CorruptIndexError(f"{display}: cannot read manifest ({exc.strerror})") from None
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptIndexError(f"{display}: manifest is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or "checksum" not in manifest:
        raise CorruptIndexError(f"{display}: manifest has no checksum")
    if manifest["checksum"] != _manifest_checksum(manifest):
        raise CorruptIndexError(f"{display}: manifest checksum mismatch (the file was altered or damaged)")
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise CorruptIndexError(f"{display}: schema version {manifest.get('schema_version')} is not "
                                f"{SCHEMA_VERSION}")
    _check_structure(manifest, display)
    return manifest


def shards_digest(manifest: dict) -> int:
    """CRC32 over the shards (file, rows, CRC32) and tombstones of a manifest: recorded with each side file
    when it is written, so that a side file cannot be paired with shards it was not made from."""
    body = [[s["file"], s["rows"], s["crc32"]] for s in manifest["shards"]] + [manifest.get("tombstones", [])]
    return zlib.crc32(json.dumps(body, separators=(",", ":")).encode())


def _is_int(value, low: int = 0, high: int | None = None) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)


def _check_structure(m: dict, display) -> None:
    """Every field a reader uses has its type and range, file names stay inside the folder, row counts add up,
    the kind's side files are listed and bound to these shards: a consistent checksum proves none of this."""
    def bad(problem: str):
        raise CorruptIndexError(f"{display}: {problem} (the manifest was edited or damaged; rebuild the index)")

    for key, kind in (("name", str), ("kind", str), ("version_id", str), ("source", str), ("shards", list),
                      ("files", dict), ("tombstones", list), ("meta", dict), ("columns", list), ("created", str),
                      ("normalization", str), ("history", list)):
        if not isinstance(m.get(key), kind):
            bad(f"{key!r} is missing or not a{'n' if kind is int else ''} {kind.__name__}")
    for key, check, what in KIND_META.get(m["kind"], ()):
        if not check(m["meta"].get(key)):
            bad(f"meta {key!r} is missing or not {what} (every {m['kind']} index has it)")
    if not is_valid_name(m["kind"]):
        bad(f"index kind {m['kind']!r} is not a name")
    if not _is_int(m.get("dim"), 1):
        bad(f"dimension {m.get('dim')!r} is not a positive integer")
    if not _is_int(m.get("count")):
        bad(f"count {m.get('count')!r} is not a non-negative integer")
    names = set()
    for i, shard in enumerate(m["shards"]):
        if not (isinstance(shard, dict) and isinstance(shard.get("file"), str)
                and _SHARD_FILE_RE.fullmatch(shard["file"]) and shard["file"] not in names):
            bad(f"shard {i} is not a distinct 'part-NNNNN.arrow' entry")
        names.add(shard["file"])
        if not (_is_int(shard.get("rows")) and _is_int(shard.get("bytes")) and _is_int(shard.get("crc32"), 0, 2**32 - 1)):
            bad(f"shard {shard['file']}: rows, bytes or crc32 missing or not a non-negative integer")
    if sum(s["rows"] for s in m["shards"]) != m["count"]:
        bad(f"shards list {sum(s['rows'] for s in m['shards'])} rows, count says {m['count']}")
    digest = shards_digest(m)
    for key, entry in m["files"].items():
        if not (isinstance(entry, dict) and isinstance(entry.get("file"), str) and _NAME_RE.fullmatch(entry["file"])
                and entry["file"] != MANIFEST):
            bad(f"side file {key!r} is not a plain file name inside the index folder")
        if not (_is_int(entry.get("bytes")) and _is_int(entry.get("crc32"), 0, 2**32 - 1)):
            bad(f"side file {entry['file']}: bytes or crc32 missing or not a non-negative integer")
        if "shards" in entry and entry["shards"] != digest:
            bad(f"side file {entry['file']} was written for other shards than these")
    for key in KIND_FILES.get(m["kind"], ()):
        if key not in m["files"]:
            bad(f"no {key!r} file listed (every {m['kind']} index has one)")
    dead = m["tombstones"]
    if not all(_is_int(t, 0, m["count"] - 1) for t in dead) or len(set(dead)) != len(dead):
        bad("tombstones are not distinct row ids of this index")
    if not all(isinstance(c, str) for c in m["columns"]):
        bad("columns are not names")


def _check_file(real: str, entry: dict, display: Path) -> None:
    try:
        size, crc = file_crc32(real)
    except FileNotFoundError:
        raise CorruptIndexError(f"{display}: file listed in the manifest is missing") from None
    if size != entry["bytes"]:
        raise CorruptIndexError(f"{display}: {size} bytes, manifest says {entry['bytes']} (truncated or altered)")
    if crc != entry["crc32"]:
        raise CorruptIndexError(f"{display}: checksum mismatch (the file was altered or damaged)")


def _read_shard(real: str, entry: dict, display: Path) -> pa.Table:
    try:
        table = pa.ipc.open_file(pa.memory_map(real, "r")).read_all()
    except FileNotFoundError:
        raise
    except (pa.ArrowInvalid, OSError) as exc:
        raise CorruptIndexError(f"{display}: not a readable Arrow shard ({exc})") from None
    if len(table) != entry["rows"]:
        raise CorruptIndexError(f"{display}: {len(table)} rows, manifest says {entry['rows']}")
    return table


def recover_on_open(home: Path, name: str) -> None:
    """A reader that finds the index only set aside (:func:`recover_aside`) puts it back, under the writer lock
    (taken without waiting: a live writer finishes its own swap); silent where it cannot (read-only home)."""
    if (home / name).exists() or not _own_temp(home, name, "old"):
        return
    with contextlib.suppress(LexprobeError, OSError):
        with write_lock(home, name, wait=0):
            pass


def list_indexes(home: Path) -> list[Path]:
    """Index folders under ``home`` (those with a manifest, or shards that lost it), sorted by name."""
    if not home.is_dir():
        return []
    for entry in os.scandir(home):
        aside = re.fullmatch(r"\.(.+)\.old-[0-9a-f]{8}", entry.name)
        if aside and is_valid_name(aside.group(1)):
            recover_on_open(home, aside.group(1))
    return sorted(p for p in home.iterdir() if not p.name.startswith(".")
                  and ((p / MANIFEST).exists() or (p / SHARD_DIR).is_dir()))


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def open_index(home: Path, name: str, *, verify: bool = True, kind: str | None = None) -> Store:
    """Open index ``name`` under ``home`` with a clear error when it does not exist or is not of ``kind``."""
    home = Path(home)
    path = home / check_name(name)
    recover_on_open(home, name)
    if not (path / MANIFEST).exists() and not (path / SHARD_DIR).is_dir():
        known = ", ".join(p.name for p in list_indexes(home)) or "none"
        raise LexprobeError(f"{path}: no index named {name!r} (indexes in {home}: {known})")
    store = Store.open(path, verify=verify)
    if kind is not None and store.kind != kind:
        raise LexprobeError(f"{store.path}: index {name!r} is {_a(store.kind)} index, not {_a(kind)} index")
    return store


@dataclass
class IndexView:
    """An open index of one kind (the subclass's ``kind``): its verified store, name and dimension."""

    store: Store
    kind: ClassVar[str] = ""

    @classmethod
    @old_order("home", "name")
    def open(cls, name: str, *, home: str | os.PathLike | None = None):
        """Open index ``name`` of this kind from ``home`` (None: :func:`default_home`), verified."""
        return cls._from_store(open_index(home_path(home), name, kind=cls.kind))

    @classmethod
    def _from_store(cls, store: Store):
        return cls(store)

    @property
    def name(self) -> str:
        return self.store.name

    def __repr__(self) -> str:
        detail = self._repr_detail()
        return f"<{type(self).__name__} {self.name}: {self.store.count} x {self.dim}{', ' + detail if detail else ''}>"

    def _repr_detail(self) -> str:
        """What a subclass adds to the one-line repr (index type, model, ...)."""
        return ""

    @property
    def dim(self) -> int:
        return self.store.dim


# ---------------------------------------------------------------------------------------------- write


class StoreWriter:
    """Writes a new version of an index folder; nothing is visible until :meth:`commit`.

    Use as a context manager inside :func:`write_lock`. ``base`` (an open Store) starts the new version
    from the old one: its shards are hard-linked, so appending a shard costs only the new rows.
    """

    def __init__(self, home: Path, name: str, *, kind: str, dim: int, schema: pa.Schema,
                 shard_rows: int = DEFAULT_SHARD_ROWS, base: Store | None = None):
        if shard_rows < 1:
            raise LexprobeError(f"shard size must be at least 1 row, not {shard_rows}")
        self.home, self.name, self.kind, self.dim, self.schema = Path(home), check_name(name), kind, dim, schema
        self.shard_rows = shard_rows
        self.final = self.home / name
        self.tmp = self.home / f".{name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        (self.tmp / SHARD_DIR).mkdir(parents=True)
        self.shards: list[dict] = []
        self.files: dict[str, dict] = {}
        self.count = 0
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self.committed = False
        if base is not None:
            for entry in base.manifest["shards"]:
                os.link(os.path.join(base._dir_fd_path, SHARD_DIR, entry["file"]),
                        self.tmp / SHARD_DIR / entry["file"])
                self.shards.append(dict(entry))
                self.count += entry["rows"]

    def __enter__(self) -> "StoreWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self.committed:
            self.abort()

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, table: pa.Table | pa.RecordBatch) -> None:
        """Append rows (matching the schema); shards are cut every ``shard_rows`` rows."""
        if isinstance(table, pa.RecordBatch):
            table = pa.Table.from_batches([table])
        table = table.select(self.schema.names).cast(self.schema)
        for batch in table.to_batches():
            self._pending.append(batch)
            self._pending_rows += len(batch)
            while self._pending_rows >= self.shard_rows:
                self._flush(self.shard_rows)

    def _flush(self, rows: int) -> None:
        pending = pa.Table.from_batches(self._pending, schema=self.schema)
        head, rest = pending.slice(0, rows), pending.slice(rows)
        self._pending, self._pending_rows = rest.to_batches(), len(rest)
        self._write_shard(head.combine_chunks())

    def _write_shard(self, table: pa.Table) -> None:
        number = 1 + max((int(s["file"][5:10]) for s in self.shards), default=-1)
        file = f"part-{number:05d}.arrow"
        path = self.tmp / SHARD_DIR / file
        try:
            with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, self.schema) as writer:
                writer.write_table(table, max_chunksize=len(table) or None)
        except OSError as exc:  # pyarrow's message names no file (a full disk)
            raise LexprobeError(f"{self.final / SHARD_DIR / file}: cannot write the shard "
                                f"({getattr(exc, 'strerror', None) or exc})") from None
        size, crc = file_crc32(path)
        self.shards.append({"file": file, "rows": len(table), "bytes": size, "crc32": crc})
        self.count += len(table)

    def side_file(self, key: str, file: str) -> str:
        """Path where a side file (e.g. the FAISS index) is to be written in the new version."""
        self.files[key] = {"file": file}
        return str(self.tmp / file)

    def commit(self, *, source: str, normalization: str = "none", meta: dict[str, Any] | None = None,
               tombstones: list[int] | None = None, history: list[dict] | None = None) -> Path:
        """Flush, checksum, fsync, write the manifest last and swap the folder in atomically."""
        if self._pending_rows:
            self._flush(self._pending_rows)
        for entry in self.files.values():
            entry["bytes"], entry["crc32"] = file_crc32(self.tmp / entry["file"])
        for f in [self.tmp / SHARD_DIR / s["file"] for s in self.shards] + \
                 [self.tmp / e["file"] for e in self.files.values()]:
            _fsync_path(f)
        digest = shards_digest({"shards": self.shards, "tombstones": sorted(tombstones or [])})
        for entry in self.files.values():
            entry["shards"] = digest
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "name": self.name,
            "kind": self.kind,
            "version_id": uuid.uuid4().hex,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "source": source,
            "dim": self.dim,
            "count": self.count,
            "normalization": normalization,
            "columns": self.schema.names,
            "shards": self.shards,
            "files": self.files,
            "tombstones": sorted(tombstones or []),
            "history": history or [],
            "meta": meta or {},
        }
        manifest["checksum"] = _manifest_checksum(manifest)
        mpath = self.tmp / MANIFEST
        try:
            with open(mpath, "w", encoding="utf-8") as f:
                json.dump(manifest, f, indent=1, sort_keys=True, ensure_ascii=False)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:  # a full disk names no file by itself
            raise LexprobeError(f"{self.final / MANIFEST}: cannot write the manifest ({exc.strerror or exc})") from None
        _fsync_path(self.tmp / SHARD_DIR, directory=True)
        _fsync_path(self.tmp, directory=True)
        _swap_in(self.tmp, self.final)
        self.committed = True
        return self.final


def remove_index(home: Path, name: str) -> None:
    """Delete an index folder (under the writer lock)."""
    home = Path(home)
    path = home / check_name(name)
    if not (path / MANIFEST).exists() and not (path / SHARD_DIR).is_dir():  # a damaged index can be removed
        raise LexprobeError(f"{path}: no index named {name!r}")
    with write_lock(home, name):
        trash = home / f".{name}.tmp-rm-{uuid.uuid4().hex[:8]}"
        os.rename(path, trash)
        shutil.rmtree(trash, ignore_errors=True)
