"""FAISS indexes over unit vectors (inner product = cosine): build, save, load, add, remove, search.

Ids are the store's row ids (``IndexIDMap2``). :meth:`VectorIndex.search` is batched and supports a
per-query exclusion set and a restriction to an id subset. A ``flat`` index is searched by the exact top-k
kernel (:mod:`lexprobe.core.topk`: pruned, ties by id) over FAISS's own vector array, not by FAISS: exclusion
and restriction are exact there, the N most frequent words a prefix of the rows and an id subset a cached
copy of its rows. For ``hnsw`` and ``ivf`` FAISS searches; exclusion searches ``k + |excluded|`` and filters
each row, the restriction is a FAISS ID selector, and results are approximate, as those index types are.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

import faiss
import numpy as np

from .errors import CorruptIndexError, LexprobeError
from .store import IndexView, column_matrix
from .topk import TopK

INDEX_TYPES = ("flat", "hnsw", "ivf")
# inclusive ranges of the index options (FAISS aborts the process on an HNSW degree below 2, and a zero beam
# or probe count answers nothing); the CLI's option types are made from these
PARAM_RANGES = {"hnsw_m": (2, 512), "ef_construction": (1, 1 << 16), "ef_search": (1, 1 << 16),
                "nlist": (1, 1 << 20), "nprobe": (1, 1 << 20)}


MIN_NORM = 1e-12  # below this a float32 vector's length is lost to underflow: such rows count as zero


def unit_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit-normalised float32 copy, norms); rows with a norm below :data:`MIN_NORM` become zero rows (their
    direction is not representable: a 1e-22 vector had a self-cosine of 1.02)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
    tiny = norms < MIN_NORM
    safe = np.where(tiny, 1.0, norms).astype(np.float32)
    unit = matrix / safe[:, None]
    if tiny.any():
        unit[tiny] = 0.0
    return unit, norms


@dataclass
class IndexParams:
    """Options of the index types: HNSW graph degree and beam widths, IVF list count and probes. The search
    defaults are the fastest settings with recall@10 >= 0.95 on the 400k GloVe (``lexprobe bench ann-curve``,
    benchmarks/ann_curve.md): ``ef_search`` 16 (recall 0.96), ``nprobe`` 128 of 2,529 lists (0.97)."""

    index_type: str = "flat"
    hnsw_m: int = 32
    ef_construction: int = 200
    ef_search: int = 16
    nlist: int | None = None  # default: about 4 * sqrt(n)
    nprobe: int = 128

    def __post_init__(self) -> None:
        if self.index_type not in INDEX_TYPES:
            raise LexprobeError(f"unknown index type {self.index_type!r} (choose from {', '.join(INDEX_TYPES)})")
        for key, (low, high) in PARAM_RANGES.items():
            value = getattr(self, key)
            if value is None and key == "nlist":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise LexprobeError(f"index option {key} = {value!r} is not an integer from {low} to {high}")

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def build(unit: np.ndarray, ids: np.ndarray, params: IndexParams | None = None, *, seed: int = 0) -> faiss.Index:
    """An ``IndexIDMap2`` over ``unit`` (n, d float32 unit vectors) with the given ids."""
    params = params or IndexParams()
    unit = np.ascontiguousarray(unit, dtype=np.float32)
    n, d = unit.shape
    if params.index_type == "flat":
        inner = faiss.IndexFlatIP(d)
    elif params.index_type == "hnsw":
        inner = faiss.IndexHNSWFlat(d, params.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efConstruction = params.ef_construction
        inner.hnsw.efSearch = params.ef_search
    elif params.index_type == "ivf":
        nlist = params.nlist or max(1, min(n // 39 or 1, int(4 * np.sqrt(max(n, 1)))))
        if nlist > n:
            raise LexprobeError(f"--nlist {nlist} is more than the {n} vectors to index (IVF trains one list per "
                                "centroid; use at most the number of vectors)")
        params.nlist = nlist
        quantizer = faiss.IndexFlatIP(d)
        inner = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
        inner.cp.seed = seed
        inner.train(unit)
        inner.nprobe = params.nprobe
    else:
        raise LexprobeError(f"unknown index type {params.index_type!r} (choose from {', '.join(INDEX_TYPES)})")
    index = faiss.IndexIDMap2(inner)
    if n:
        index.add_with_ids(unit, np.ascontiguousarray(ids, dtype=np.int64))
    return index


def save(index: faiss.Index, path: str) -> None:
    """Write ``index`` to ``path``; a failed write (full disk, no permission) is one clear error, not a traceback."""
    try:
        faiss.write_index(index, path)
    except RuntimeError as exc:
        reason = re.search(r"\(([^()]+)\)\s*$", str(exc).strip())
        raise LexprobeError(f"{path}: cannot write the FAISS index "
                            f"({reason.group(1) if reason else str(exc).strip().splitlines()[-1]})") from None


def load(path: str, display: str | os.PathLike | None = None) -> faiss.Index:
    try:
        return faiss.read_index(path)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "unreadable"
        raise CorruptIndexError(f"{display or path}: not a readable FAISS index ({first})") from None


def load_for(store, *, sample: int | None = 256) -> "VectorIndex":
    """The FAISS index of an opened :class:`~lexprobe.core.store.Store`, checked against its shards (one vector per
    live row, same dimension) and with the index parameters recorded in its manifest."""
    entry = store.manifest["files"].get("faiss")
    if entry is None:
        raise CorruptIndexError(f"{store.path / 'manifest.json'}: lists no FAISS file")
    display = store.path / entry["file"]
    options = store.meta.get("index", {})
    try:
        params = IndexParams(**options)
    except (TypeError, LexprobeError) as exc:
        raise CorruptIndexError(f"{store.path / 'manifest.json'}: index options {options!r} are not valid "
                                f"({exc})") from None
    index = load(store.file_path("faiss"), display)
    live = store.count - len(store.tombstones)
    if index.ntotal != live or index.d != store.dim:
        raise CorruptIndexError(f"{display}: holds {index.ntotal} vectors of dimension {index.d}, "
                                f"the shards {live} of dimension {store.dim}")
    vectors = VectorIndex(index, params)
    check_vectors(vectors, store, display, sample=sample)
    return vectors


def shard_rows(store, ids: np.ndarray) -> np.ndarray:
    """Raw vectors of some row ids, row by row from each shard's memory map: no copy of the whole matrix (which
    spans the shards); one id gives a (1, dim) view."""
    ids = np.asarray(ids, dtype=np.int64)
    starts = np.cumsum([0] + [len(t) for t in store.tables])
    shard = np.searchsorted(starts, ids, side="right") - 1
    mats = {k: column_matrix(store.tables[k].column("vector")) for k in np.unique(shard).tolist()}
    rows = [mats[k][i - starts[k]:i - starts[k] + 1] for k, i in zip(shard.tolist(), ids.tolist())]
    return rows[0] if len(rows) == 1 else np.concatenate(rows) if rows else np.zeros((0, store.dim), np.float32)


def check_vectors(vectors: "VectorIndex", store, display, *, sample: int | None = 256) -> None:
    """The FAISS file holds exactly the live row ids and (flat, HNSW) the unit vectors of those rows in the
    shards: all of them, or ``sample`` spread over the index (a FAISS file of another index of the same shape,
    with its manifest entry rewritten, is caught here)."""
    ids, dead = np.sort(vectors.ids()), store.tombstones  # tombstones: distinct row ids (manifest checked)
    bad = len(ids) != store.count - len(dead)
    if not bad and len(ids):  # distinct ids in [0, count), none of them tombstoned
        hit = ids[np.minimum(np.searchsorted(ids, dead), len(ids) - 1)] == dead
        bad = ids[0] < 0 or ids[-1] >= store.count or (np.diff(ids) == 0).any() or hit.any()
    if bad:
        raise CorruptIndexError(f"{display}: its ids are not the live rows of the shards")
    inner = faiss.downcast_index(vectors.index.index)
    flat = faiss.downcast_index(inner.storage) if isinstance(inner, faiss.IndexHNSW) else inner
    if not isinstance(flat, faiss.IndexFlat) or not vectors.ntotal:
        return  # IVF lists keep no direct map: the ids and the shape were checked
    stored = faiss.rev_swig_ptr(flat.get_xb(), vectors.ntotal * vectors.dim).reshape(vectors.ntotal, vectors.dim)
    pos = np.arange(vectors.ntotal) if sample is None else np.unique(
        np.linspace(0, vectors.ntotal - 1, min(sample, vectors.ntotal)).astype(np.int64))
    order = vectors.ids()[pos]
    raw = store.matrix("vector")[order] if sample is None else shard_rows(store, order)
    expected = unit_rows(raw)[0]
    if not np.allclose(stored[pos], expected, atol=1e-4):
        bad = int(order[np.argmax(np.abs(stored[pos] - expected).max(axis=1))])
        raise CorruptIndexError(f"{display}: its vectors are not the shards' vectors (row {bad} differs)")


@dataclass
class VectorIndex:
    """A FAISS index whose ids are store row ids, with exact exclusion and subset restriction."""

    index: faiss.Index
    params: IndexParams = field(default_factory=IndexParams)
    _subsets: dict = field(default_factory=dict, repr=False)

    @property
    def ntotal(self) -> int:
        return self.index.ntotal

    @property
    def dim(self) -> int:
        return self.index.d

    @property
    def is_exact(self) -> bool:
        return self.params.index_type == "flat"

    def ids(self) -> np.ndarray:
        """The ids in internal order."""
        return faiss.vector_to_array(self.index.id_map).astype(np.int64)

    def flat_vectors(self) -> np.ndarray:
        """Zero-copy (ntotal, d) view of a flat index's unit vectors, rows in :meth:`ids` order."""
        if not self.is_exact:
            raise LexprobeError("the stored vectors are only exposed for a flat index")
        inner = faiss.downcast_index(self.index.index)
        return faiss.rev_swig_ptr(inner.get_xb(), self.ntotal * self.dim).reshape(self.ntotal, self.dim)

    def add(self, unit: np.ndarray, ids: np.ndarray) -> None:
        self.index.add_with_ids(np.ascontiguousarray(unit, dtype=np.float32), np.ascontiguousarray(ids, np.int64))
        self._subsets.clear()

    def remove(self, ids: Sequence[int]) -> None:
        if len(ids):
            self.index.remove_ids(np.asarray(ids, dtype=np.int64))
            self._subsets.clear()

    def _exact(self, restrict) -> tuple[TopK, int | None]:
        """The exact searcher over the flat vectors in id order (kept until the index changes) and the row
        limit for ``restrict = N``; for an id array, a searcher over just those rows (the last one kept)."""
        full = self._subsets.get("all")
        if full is None:
            ids, vectors = self.ids(), self.flat_vectors()
            if len(ids) > 1 and (np.diff(ids) <= 0).any():
                order = np.argsort(ids, kind="stable")
                ids, vectors = ids[order], vectors[order]
            full = self._subsets["all"] = TopK(vectors, ids)
        if restrict is None:
            return full, None
        if np.isscalar(restrict):
            return full, int(np.searchsorted(full.ids, int(restrict)))
        key = np.asarray(restrict, dtype=np.int64).tobytes()
        cached = self._subsets.get("subset")  # (key, searcher), read once: other threads may replace it
        if cached is None or cached[0] != key:
            mask = np.isin(full.ids, np.asarray(restrict, dtype=np.int64))
            cached = self._subsets["subset"] = (key, TopK(full.V[mask], full.ids[mask]))
        return cached[1], None

    def _selector_params(self, restrict):
        ids = np.arange(int(restrict), dtype=np.int64) if np.isscalar(restrict) else np.asarray(restrict, np.int64)
        sel = faiss.IDSelectorBatch(ids)
        inner = faiss.downcast_index(self.index.index)
        if isinstance(inner, faiss.IndexHNSW):
            p = faiss.SearchParametersHNSW(sel=sel, efSearch=self.params.ef_search)
        elif isinstance(inner, faiss.IndexIVF):
            p = faiss.SearchParametersIVF(sel=sel, nprobe=self.params.nprobe)
        else:
            p = faiss.SearchParameters(sel=sel)
        return p, sel

    def search(self, queries: np.ndarray, k: int, *, exclude: Sequence[Sequence[int]] | np.ndarray | None = None,
               restrict: "int | np.ndarray | None" = None, batch: int = 8192) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` by inner product: ``(D, I)`` of shape (m, k); missing results are ``-inf`` / ``-1``.

        ``exclude``: per query, ids never returned (a list of id lists, or an (m, e) array padded with -1).
        ``restrict``: ``N`` for the ids ``< N`` (the N most frequent words) or an array of allowed ids.
        Queries need not be unit vectors; scores are inner products with the unit index vectors.
        """
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise LexprobeError(f"queries have shape {queries.shape}, the index has dimension {self.dim}")
        m = len(queries)
        excl = _exclusion_matrix(exclude, m)
        extra = excl.shape[1]
        if self.is_exact:
            searcher, limit = self._exact(restrict)
            return searcher.search(queries, k, exclude=searcher.rows_of(excl), limit=limit)
        D = np.full((m, k), -np.inf, dtype=np.float32)
        I = np.full((m, k), -1, dtype=np.int64)
        if m == 0 or k <= 0:
            return D, I
        if restrict is not None:
            sp, _sel = self._selector_params(restrict)
            run = lambda q, kk: self.index.search(q, kk, params=sp)
        else:
            run = lambda q, kk: self.index.search(q, kk)
        kk = min(k + extra, self.ntotal)
        inner = faiss.downcast_index(self.index.index)
        if isinstance(inner, faiss.IndexHNSW):  # a beam narrower than the results asked answers fewer of them
            inner.hnsw.efSearch = max(self.params.ef_search, kk)
            if restrict is not None:
                sp.efSearch = inner.hnsw.efSearch
        if kk <= 0:
            return D, I
        for start in range(0, m, batch):
            q = queries[start:start + batch]
            d, i = run(q, kk)
            if extra:
                bad = (i[:, :, None] == excl[start:start + batch, None, :]).any(axis=2) | (i < 0)
                d = np.where(bad, -np.inf, d)
                order = np.argsort(bad, axis=1, kind="stable")[:, :k]  # keep surviving hits in rank order
                d = np.take_along_axis(d, order, axis=1)
                i = np.where(np.isfinite(d), np.take_along_axis(i, order, axis=1), -1)
            D[start:start + batch, : d.shape[1]] = d[:, :k]
            I[start:start + batch, : i.shape[1]] = i[:, :k]
        return D, I


def _exclusion_matrix(exclude, m: int) -> np.ndarray:
    """Per-query exclusion ids as an (m, e) int64 array padded with -2 (never a real id)."""
    if exclude is None:
        return np.zeros((m, 0), dtype=np.int64)
    if isinstance(exclude, np.ndarray):
        if exclude.ndim != 2 or len(exclude) != m:
            raise LexprobeError(f"exclusion array has shape {exclude.shape}, expected ({m}, e)")
        return np.where(exclude < 0, -2, exclude).astype(np.int64)
    if len(exclude) != m:
        raise LexprobeError(f"{len(exclude)} exclusion sets for {m} queries")
    width = max((len(e) for e in exclude), default=0)
    out = np.full((m, width), -2, dtype=np.int64)
    for row, ids in enumerate(exclude):
        out[row, : len(ids)] = list(ids)
    return out


@dataclass(repr=False)
class SearchableView(IndexView):
    """An open index with its FAISS index (``vectors``), checked against the shards."""

    vectors: VectorIndex

    @classmethod
    def _from_store(cls, store):
        return cls(store, load_for(store))

    def _repr_detail(self) -> str:
        return self.store.meta.get("index", {}).get("index_type", "flat")

    @cached_property
    def raw(self) -> np.ndarray:
        """(count, dim) raw vectors by row id (memory-mapped when the index has one shard)."""
        return self.store.matrix("vector")

    @cached_property
    def unit(self) -> np.ndarray:
        """(count, dim) unit vectors by row id."""
        return unit_rows(self.raw)[0]
