"""Sharded exact search on Ray: an index's shards split into groups, each served by an actor that holds an
exact flat FAISS index over its group's unit vectors; a query goes to every group and the groups' top-k lists
are merged into the global top-k.

The merge is exact: every group returns its own best ``k`` (after the same per-query exclusion and id
restriction as :meth:`lexprobe.core.vector_index.VectorIndex.search`), and the global best ``k`` are among
them; they are ordered by score, ties by row id. So the answer equals the local exact (``flat``) search; for an
index built as ``hnsw`` or ``ivf`` it is the exact answer the approximate local index estimates.

:class:`ShardedVectors` has :class:`VectorIndex`'s ``search``, so an index view opened over it
(:func:`open_sharded`) answers ``WordIndex.neighbors`` and the token queries unchanged.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa

from ..core import vector_index as vindex
from ..core.errors import CorruptIndexError, LexprobeError
from ..core.store import SHARD_DIR, Store, column_matrix, file_crc32, open_index
from .cluster import connect, get, ray_module

MAX_RESTARTS = 3


def shard_groups(rows: list[int], groups: int) -> list[list[int]]:
    """Split shards (their row counts, in order) into at most ``groups`` contiguous groups of about equal
    rows: a list of shard positions per group, none empty."""
    n = len(rows)
    groups = max(1, min(groups, n))
    cum = np.cumsum(rows)
    cuts = [0]
    for g in range(1, groups):
        cut = int(np.searchsorted(cum, cum[-1] * g / groups, side="left")) + 1
        cuts.append(min(max(cut, cuts[-1] + 1), n - (groups - g)))
    cuts.append(n)
    return [list(range(a, b)) for a, b in zip(cuts[:-1], cuts[1:])]


def merge_topk(parts: list[tuple[np.ndarray, np.ndarray]], k: int) -> tuple[np.ndarray, np.ndarray]:
    """The global top-``k`` ``(D, I)`` of several groups' top-``k`` lists of the same queries: by score,
    ties by id; missing results stay ``-inf`` / ``-1`` at the end."""
    D = np.concatenate([d for d, _ in parts], axis=1)
    I = np.concatenate([i for _, i in parts], axis=1)
    order = np.lexsort((I, -D), axis=1)[:, :k]
    return np.take_along_axis(D, order, axis=1), np.take_along_axis(I, order, axis=1)


class ShardGroupWorker:
    """A Ray actor's state: one group of an index's shards, checked and indexed exactly."""

    def __init__(self, path: str, version_id: str, positions: list[int]):
        if not (Path(path) / "manifest.json").exists():
            raise LexprobeError(f"{path}: not readable on the node of a search actor; sharded search needs the "
                                "index home on a file system every node mounts at the same path")
        store = Store.open(path, verify=False)
        if store.manifest.get("version_id") != version_id:
            raise LexprobeError(f"{path}: a search actor sees another version of the index than the driver (it was "
                                "rebuilt meanwhile, or the nodes hold different copies); run the query again")
        entries = [store.manifest["shards"][p] for p in positions]
        for entry in entries:  # the driver opened without reading the shards: each group checks its own
            real = Path(path) / SHARD_DIR / entry["file"]
            if file_crc32(real) != (entry["bytes"], entry["crc32"]):
                raise CorruptIndexError(f"{real}: checksum or size differs from the manifest (altered or damaged)")
        table = pa.concat_tables([store.tables[p] for p in positions])
        ids = table.column("id").to_numpy()
        raw = column_matrix(table.column("vector"))
        live = ~np.isin(ids, store.tombstones)
        unit, _ = vindex.unit_rows(raw[live])
        self.index = vindex.VectorIndex(vindex.build(unit, ids[live]))
        self.rows = int(live.sum())
        self.first, self.raw = int(ids[0]) if len(ids) else 0, raw  # row ids of a group are contiguous

    def size(self) -> int:
        return self.rows

    def unit_rows(self, ids: np.ndarray) -> np.ndarray:
        """Unit vectors of some of this group's row ids (as :attr:`TokenIndex.unit` has them)."""
        return vindex.unit_rows(self.raw[np.asarray(ids, np.int64) - self.first])[0]

    def pid(self) -> int:
        return os.getpid()

    def search(self, queries: np.ndarray, k: int, exclude, restrict):
        return self.index.search(queries, k, exclude=exclude, restrict=restrict)


class ShardedVectors:
    """:class:`lexprobe.core.vector_index.VectorIndex`'s search over the shard groups of ``store``, one Ray
    actor each (restarted when it dies, its query retried)."""

    is_exact = True

    def __init__(self, store: Store, groups: int | None = None, *, address: str | None = None):
        ray = connect(address)
        rows = [int(s["rows"]) for s in store.manifest["shards"]]
        if groups is None:
            groups = max(1, int(ray.cluster_resources().get("CPU", 1)))
        if groups < 1:
            raise LexprobeError("--shard-groups must be at least 1")
        self.groups = shard_groups(rows, groups) if rows else []
        # Ray's default actor resources (a CPU to be placed, none held while it waits for queries), spread over
        # the nodes so that the groups' vectors share out their memory
        actor = ray.remote(max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS,
                           scheduling_strategy="SPREAD")(ShardGroupWorker)
        path = str(Path(store.path).resolve())
        self.actors = [actor.remote(path, store.manifest["version_id"], g) for g in self.groups]
        self.dim = store.dim
        self.ntotal = int(sum(get([a.size.remote() for a in self.actors])))
        self.bounds = np.cumsum([0] + [sum(rows[p] for p in g) for g in self.groups])  # row ids per group

    def unit(self, ids: np.ndarray) -> np.ndarray:
        """Unit vectors of row ids ``ids`` (any order), gathered from the groups that hold them."""
        ids = np.asarray(ids, np.int64)
        owner = np.searchsorted(self.bounds, ids, side="right") - 1
        out = np.zeros((len(ids), self.dim), np.float32)
        wanted = [(g, np.flatnonzero(owner == g)) for g in np.unique(owner)]
        parts = get([self.actors[g].unit_rows.remote(ids[at]) for g, at in wanted])
        for (_, at), part in zip(wanted, parts):
            out[at] = part
        return out

    def search(self, queries: np.ndarray, k: int, *, exclude=None, restrict=None) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` by inner product, as :meth:`VectorIndex.search` (``exclude``, ``restrict`` the same)."""
        ray = ray_module()
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise LexprobeError(f"queries have shape {queries.shape}, the index has dimension {self.dim}")
        if k <= 0 or not self.actors:
            return (np.full((len(queries), max(k, 0)), -np.inf, np.float32),
                    np.full((len(queries), max(k, 0)), -1, np.int64))
        shared = ray.put(queries)
        parts = get([a.search.remote(shared, k, exclude, restrict) for a in self.actors])
        return merge_topk(parts, k)

    def close(self) -> None:
        ray = ray_module()
        for a in self.actors:
            ray.kill(a)
        self.actors = []


class RemoteRows:
    """Rows of an index's unit vectors that stay in the shard-group actors until read: indexing gives another
    :class:`RemoteRows`, ``np.asarray`` gathers them. Stands for ``TokenIndex.unit`` in an analysis that selects
    rows before it computes (the sense ranking reads one lemma's candidates at a time, so every row crosses to
    the driver at most once and the driver never holds the whole index)."""

    def __init__(self, vectors: ShardedVectors, ids: np.ndarray):
        self.vectors, self.ids = vectors, np.asarray(ids, np.int64)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.ids), self.vectors.dim)

    def __getitem__(self, rows) -> "RemoteRows":
        return RemoteRows(self.vectors, self.ids[rows])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        out = self.vectors.unit(self.ids)
        return out if dtype is None else out.astype(dtype, copy=False)


@contextlib.contextmanager
def open_sharded(view, home: Path, name: str, *, groups: int | None = None,
                 address: str | None = None) -> Iterator:
    """An index view (``WordIndex``, ``TokenIndex``, ...) of ``home/name`` whose ``vectors`` are served by Ray
    shard-group actors; the actors stop when the block ends. The driver reads the manifest and the metadata
    columns it needs; the actors check and read the vectors."""
    store = open_index(home, name, kind=view.kind, verify=False)
    vectors = ShardedVectors(store, groups, address=address)
    try:
        yield view(store, vectors)
    finally:
        vectors.close()
