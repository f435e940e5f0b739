"""The offsets index: one row per word pair of an analogy dataset, with its offset vector end - start.

Rows of kind ``true`` come from the dataset (:func:`build_offset_index`); other kinds (``shuffled``,
``permuted``, ``mismatched``, ``random-start``, ...) are baselines appended later as new shards
(:func:`append_offsets`), each row carrying its ``replicate`` number and ``seed`` (-1 for true pairs). The
vectors are taken from the raw (unnormalised) vectors of a words index, named in the manifest's ``meta`` with
its version, the dataset spec, the answer policy and the out-of-vocabulary report.

Datasets are named by a spec (:mod:`lexprobe.sources.datasets.analogy_sets`): ``bats:PATH`` or ``google:PATH``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core import vector_index as vindex
from ..core.conventions import Result
from ..sources.datasets.analogy_sets import usable_relations
from ..core.errors import LexprobeError
from ..core.store import IndexView, StoreWriter, check_new_index, column_matrix, vector_array, vector_type, write_lock
from .words import WordIndex

KIND = "offsets"
TRUE = "true"
_COLUMNS = ("id", "relation", "category", "start", "end", "start_id", "end_id", "offset", "unit", "norm", "kind",
            "replicate", "seed")


def offset_schema(dim: int) -> pa.Schema:
    return pa.schema([
        ("id", pa.int64()),            # row id in this index
        ("relation", pa.string()),     # "I01 [noun - plural_reg]" (or a baseline's own label)
        ("category", pa.string()),     # broad type: inflectional, derivational, encyclopedic, lexicographic
        ("start", pa.string()),
        ("end", pa.string()),
        ("start_id", pa.int64()),      # row ids in the words index
        ("end_id", pa.int64()),
        ("offset", vector_type(dim)),  # raw end - start
        ("unit", vector_type(dim)),    # offset / ||offset|| (zero stays zero)
        ("norm", pa.float32()),        # ||offset||
        ("kind", pa.string()),         # "true", "shuffled", "permuted", "mismatched", "random-start", ...
        ("replicate", pa.int32()),     # -1 for true pairs
        ("seed", pa.int64()),          # -1 for true pairs
    ])


def offset_table(*, relation: Sequence[str], category: Sequence[str], start: Sequence[str], end: Sequence[str],
                 start_id: np.ndarray, end_id: np.ndarray, offset: np.ndarray, kind: str | Sequence[str],
                 replicate: int | np.ndarray = -1, seed: int | np.ndarray = -1,
                 ids: np.ndarray | None = None) -> pa.Table:
    """Rows for the offsets index; ``unit`` and ``norm`` are computed from ``offset`` here.

    ``ids`` may be left out when the rows go to :func:`append_offsets` (it numbers them).
    """
    offset = np.ascontiguousarray(offset, dtype=np.float32)
    n = len(offset)
    if offset.ndim != 2:
        raise LexprobeError(f"offsets must be an (n, d) matrix, not shape {offset.shape}")
    unit, norm = vindex.unit_rows(offset)
    broadcast = lambda v, dtype: np.broadcast_to(np.asarray(v, dtype=dtype), (n,))
    kinds = [kind] * n if isinstance(kind, str) else list(kind)
    return pa.table({
        "id": pa.array(broadcast(-1 if ids is None else ids, np.int64)),
        "relation": pa.array(list(relation), pa.string()),
        "category": pa.array(list(category), pa.string()),
        "start": pa.array(list(start), pa.string()),
        "end": pa.array(list(end), pa.string()),
        "start_id": pa.array(np.asarray(start_id, dtype=np.int64)),
        "end_id": pa.array(np.asarray(end_id, dtype=np.int64)),
        "offset": vector_array(offset),
        "unit": vector_array(unit),
        "norm": pa.array(norm, pa.float32()),
        "kind": pa.array(kinds, pa.string()),
        "replicate": pa.array(broadcast(replicate, np.int32)),
        "seed": pa.array(broadcast(seed, np.int64)),
    }, schema=offset_schema(offset.shape[1]))


def build_offset_index(home: Path, name: str, words_index: str, dataset_spec: str, *, answers: str = "first",
                       lowercase: bool = False, replace: bool = False) -> dict:
    """Write the offsets index ``name`` (kind ``true`` rows) for ``dataset_spec`` over ``words_index``.

    One row per kept pair; the end word is the pair's first in-vocabulary answer (under ``answers="first"``
    the first listed answer, or the pair is dropped). Returns a summary with the coverage report. An existing
    index ``name`` is replaced only with ``replace``, and never the words index read.
    """
    check_new_index(home, name, replace=replace, reads=(words_index,))
    words = WordIndex.open(words_index, home=home)
    relations, coverage = usable_relations(words, dataset_spec, answers=answers, lowercase=lowercase)
    rel_col, cat_col, starts, ends = [], [], [], []
    for rel in relations:
        rel_col += [rel.name] * len(rel.pairs)
        cat_col += [rel.category] * len(rel.pairs)
        starts += rel.starts
        ends += rel.ends
    if not starts:
        raise LexprobeError(f"{dataset_spec}: no word pair has both words in words index {words_index!r}")
    start_id, end_id = words.ids(starts), words.ids(ends)
    raw = words.raw
    table = offset_table(relation=rel_col, category=cat_col, start=starts, end=ends, start_id=start_id,
                         end_id=end_id, offset=raw[end_id] - raw[start_id], kind=TRUE,
                         ids=np.arange(len(starts), dtype=np.int64))
    meta = {"words_index": words_index, "words_version": words.store.manifest["version_id"],
            "dataset": dataset_spec, "answers": answers, "lowercase": lowercase,
            "relations": [{"name": r.name, "code": r.code, "category": r.category, "pairs": len(r.pairs)}
                          for r in relations],
            "coverage": [c.as_row() for c in coverage]}
    with write_lock(home, name):
        with StoreWriter(home, name, kind=KIND, dim=words.dim, schema=offset_schema(words.dim),
                         shard_rows=max(len(table), 1)) as writer:
            writer.write(table)
            writer.commit(source=dataset_spec, normalization="offset: raw end - start; unit: offset / ||offset||",
                          meta=meta, history=[{"op": "build", "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                               "rows": len(table), "kind": TRUE}])
    return {"name": name, "rows": len(table), "relations": len(relations), "dim": words.dim,
            "pairs_read": sum(c.pairs for c in coverage), "pairs_dropped": sum(c.dropped for c in coverage),
            "identity_dropped": sum(c.identity for c in coverage),
            "coverage": [c.as_row() for c in coverage]}


def append_offsets(home: Path, name: str, table: pa.Table) -> dict:
    """Add rows (usually a baseline kind) to offsets index ``name`` as a new shard, atomically.

    ``table`` follows :func:`offset_schema` (build it with :func:`offset_table`); its ``id`` column is
    renumbered to continue the index's row ids.
    """
    with write_lock(home, name):
        store = OffsetIndex.open(name, home=home).store
        if len(table) == 0:
            return {"name": name, "appended": 0, "rows": store.count}
        missing = [c for c in _COLUMNS if c not in table.column_names]
        if missing:
            raise LexprobeError(f"rows to append lack columns {', '.join(missing)} (build them with offset_table)")
        dim = table.schema.field("offset").type.list_size if pa.types.is_fixed_size_list(
            table.schema.field("offset").type) else -1
        if dim != store.dim:
            raise LexprobeError(f"offsets to append have dimension {dim}, index {name!r} has {store.dim}")
        ids = pa.array(np.arange(store.count, store.count + len(table), dtype=np.int64))
        table = table.set_column(table.column_names.index("id"), "id", ids)
        kinds = sorted(set(table.column("kind").to_pylist()))
        with StoreWriter(home, name, kind=KIND, dim=store.dim, schema=offset_schema(store.dim),
                         shard_rows=len(table), base=store) as writer:
            writer.write(table)
            history = store.manifest.get("history", []) + [{
                "op": "append", "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "rows": len(table), "kinds": kinds}]
            writer.commit(source=store.manifest["source"], normalization=store.manifest["normalization"],
                          meta=store.meta, history=history)
    return {"name": name, "appended": len(table), "rows": store.count + len(table), "kinds": kinds}


@dataclass
class OffsetRows(Result):
    """Selected rows of an offsets index as numpy arrays (strings as object arrays), in row-id order."""

    id: np.ndarray
    relation: np.ndarray
    category: np.ndarray
    start: np.ndarray
    end: np.ndarray
    start_id: np.ndarray
    end_id: np.ndarray
    offset: np.ndarray   # (n, d) float32, raw
    unit: np.ndarray     # (n, d) float32
    norm: np.ndarray
    kind: np.ndarray
    replicate: np.ndarray
    seed: np.ndarray

    def __len__(self) -> int:
        return len(self.id)

    def to_arrow(self) -> pa.Table:
        """The rows as the index holds them (:func:`offset_schema`)."""
        return offset_table(relation=self.relation, category=self.category, start=self.start, end=self.end,
                            start_id=self.start_id, end_id=self.end_id, offset=self.offset, kind=self.kind,
                            replicate=self.replicate, seed=self.seed, ids=self.id)


class OffsetIndex(IndexView):
    """An open offsets index."""

    kind = KIND

    @property
    def words_index(self) -> str:
        return self.store.meta["words_index"]

    def relations(self, kind: str = TRUE) -> list[str]:
        """Relation names of rows of ``kind``, in order of first appearance."""
        table = self.store.table(["relation", "kind"])
        names = table.filter(pc.equal(table.column("kind"), kind)).column("relation").to_pylist()
        return list(dict.fromkeys(names))

    def kinds(self) -> list[str]:
        return list(dict.fromkeys(self.store.column("kind").to_pylist()))

    def select(self, *, relation: str | Sequence[str] | None = None, kind: str | Sequence[str] | None = TRUE,
               category: str | Sequence[str] | None = None, replicate: int | Sequence[int] | None = None) -> OffsetRows:
        """Rows matching every given filter (``None``: any); ``kind`` defaults to the true pairs."""
        table = self.store.table()
        mask = None
        for column, wanted in (("relation", relation), ("kind", kind), ("category", category),
                               ("replicate", replicate)):
            if wanted is None:
                continue
            values = [wanted] if isinstance(wanted, (str, int, np.integer)) else list(wanted)
            cond = pc.is_in(table.column(column), pa.array(values, table.schema.field(column).type))
            mask = cond if mask is None else pc.and_(mask, cond)
        if mask is not None:
            table = table.filter(mask)
        cols = {c: table.column(c) for c in _COLUMNS}
        strings = lambda c: np.asarray(cols[c].to_pylist(), dtype=object)
        return OffsetRows(
            id=cols["id"].to_numpy(), relation=strings("relation"), category=strings("category"),
            start=strings("start"), end=strings("end"), start_id=cols["start_id"].to_numpy(),
            end_id=cols["end_id"].to_numpy(), offset=column_matrix(cols["offset"]), unit=column_matrix(cols["unit"]),
            norm=cols["norm"].to_numpy(), kind=strings("kind"), replicate=cols["replicate"].to_numpy(),
            seed=cols["seed"].to_numpy())
