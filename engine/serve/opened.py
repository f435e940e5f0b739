"""What one server process keeps open: the indexes it answers from and the models it runs.

An index is opened once and kept; before each use the server looks at its ``manifest.json`` (one ``stat``). A
writer (``lexprobe ota --into``, ``index words``, ...) commits by swapping in a new folder with a new manifest, so a
changed inode, size or time means a new version: the index is opened again, and requests already running finish on
the version they started with (the store holds its files open, see :mod:`lexprobe.core.store`). Nothing here writes:
an index a crashed writer left set aside is not put back (that takes the writer's lock, a file in the home); the
next command that writes or opens it outside the server does it.

Models are loaded once per process and name, and each is used by one request at a time (a lock per model): a
tokenizer is not safe to share between threads, and on a CPU two forward passes at once are no faster than two
in turn.

The compiled search kernels are process-wide too: :func:`warm_kernels` compiles them (or loads them from the
compiled-code folder) before the server answers, so that no request waits for them.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..core.errors import LexprobeError
from ..core.store import MANIFEST, SHARD_DIR, Store, check_name


class NotFound(LexprobeError):
    """Something named in a request does not exist (an index, a word, a dataset, a relation): HTTP 404."""


@dataclass
class _Entry:
    stamp: tuple
    view: Any


def _stamp(path: Path) -> tuple | None:
    """What changes when a writer swaps in a new version of the manifest at ``path`` (None: no manifest)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class OpenIndexes:
    """Indexes under one home, opened on first use and reopened when their manifest changes."""

    def __init__(self, home: str | os.PathLike):
        self.home = Path(home)
        self._entries: dict[str, _Entry] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.opens = 0  # how many times an index was (re)opened: the tests watch it

    def names(self) -> list[str]:
        """The index folders of the home (with a manifest, or shards that lost it), read without writing."""
        try:
            entries = sorted(os.scandir(self.home), key=lambda e: e.name)
        except OSError:
            return []
        return [e.name for e in entries if not e.name.startswith(".") and e.is_dir()
                and (os.path.exists(os.path.join(e.path, MANIFEST)) or os.path.isdir(os.path.join(e.path, SHARD_DIR)))]

    def get(self, name: str, view_class) -> Any:
        """The open view (``WordIndex``, ``TokenIndex``, ...) of index ``name`` at its current version."""
        try:
            check_name(name)
        except LexprobeError:
            raise LexprobeError(f"bad index name {name!r}") from None
        stamp = _stamp(self.home / name / MANIFEST)
        if stamp is None:
            self._entries.pop(name, None)  # removed (or never there): forget the old version
            known = ", ".join(self.names()) or "none"
            raise NotFound(f"no index named {name!r} (indexes: {known})")
        entry = self._entries.get(name)
        if entry is not None and entry.stamp == stamp and isinstance(entry.view, view_class):
            return entry.view
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:  # one open per index at a time; the others wait for it and reuse it
            entry = self._entries.get(name)
            if entry is None or entry.stamp != stamp or not isinstance(entry.view, view_class):
                store = Store.open(self.home / name)
                if store.kind != view_class.kind:
                    raise LexprobeError(f"index {name!r} is a {store.kind} index, not a {view_class.kind} index")
                view = view_class._from_store(store)
                self.opens += 1
                entry = self._entries[name] = _Entry(stamp, view)
            return entry.view


class Models:
    """Models loaded once per process, each with the lock its users take around it."""

    def __init__(self):
        self._models: dict[tuple, tuple[Any, threading.Lock]] = {}
        self._guard = threading.Lock()
        self._loading = threading.Lock()

    def get(self, key: tuple, load: Callable[[], Any]) -> tuple[Any, threading.Lock]:
        """``(model, lock)`` for ``key``, calling ``load()`` the first time (under the lock, so only once). Loads
        of different models run one at a time: two first requests (a sense query and a probe) importing
        transformers in two threads at once failed with an ImportError of ``AutoTokenizer``."""
        with self._guard:
            if key not in self._models:
                self._models[key] = (None, threading.Lock())
            _, lock = self._models[key]
        with lock:
            model, _ = self._models[key]
            if model is None:
                with self._loading:
                    model = load()
                self._models[key] = (model, lock)
        return model, lock


WARM_ROWS = 33_000  # more rows than the exact top-k scans in full (32768), so its pruned path runs too


def warm_kernels() -> dict:
    """Run the searches a neighbours or analogy request runs (:mod:`lexprobe.core.topk`) on a small random flat
    index: its numba kernels (sample threshold, narrowing, ranking, single-query scores) and the int8 scan are
    compiled, or loaded from the compiled-code folder (:mod:`lexprobe.core.compile_cache`), now rather than in a
    request. Without it a new process answers its first single queries by a full scan in numpy and loads the
    kernels in whichever request comes after (seconds, tens of seconds on a busy machine with an empty folder).
    Returns the seconds it took and the kernels now compiled in this process."""
    from ..core import int8_scan, topk, topk_kernels
    from ..core import vector_index as vindex

    t0 = time.perf_counter()
    topk.load_kernels()  # now, not in a background thread while the first requests are answered in BLAS
    unit = vindex.unit_rows(np.random.default_rng(0).standard_normal((WARM_ROWS, 8)).astype(np.float32))[0]
    ids = np.arange(WARM_ROWS, dtype=np.int64)
    params = vindex.IndexParams()
    vectors = vindex.VectorIndex(vindex.build(unit, ids, params), params)
    batch = topk._SERIAL_MAX + 1  # a batch loads the compiled kernels; later single queries use them
    vectors.search(unit[:batch], 10, exclude=ids[:batch, None])  # pruned: BLAS sample scores, int8 scan, ranking
    vectors.search(unit[:1], 10, exclude=ids[:1, None])          # one query: the kernel's own sample scores
    vectors.search(unit[:1], 5, restrict=1000)                    # a few rows: the full scan, compiled
    kernels = [name for name in ("rank", "narrow", "kth_best", "dots") if getattr(topk_kernels, name).signatures]
    if int8_scan._kernel.cache_info().currsize:
        kernels.append("int8_scan")
    return {"seconds": time.perf_counter() - t0, "kernels": kernels}
