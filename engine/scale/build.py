"""Token-index builds on Ray: the corpus cut into blocks of whole sentences, encoded by a pool of encoder
actors (one model load each) that write their blocks' vectors straight into the new version's temporary
folder; Ray tasks then cut those blocks into the shards, and the driver only assigns blocks, collects row
counts and shard checksums, streams the flat FAISS file from the shards and commits the manifest.

The vectors equal the local build's within float rounding (a block's sentences are batched among themselves
instead of among the whole corpus; measured max abs difference about 2e-6), in the same row order, with the
same ids, shard boundaries, sentences, FAISS index and manifest, plus ``meta.engine``. The driver never holds
a vector: its memory is the corpus text (read whole by the corpus readers, as the local build reads it) and
one shard at a time; an ``ivf`` or ``hnsw`` index is the exception (FAISS keeps all vectors in memory to build
it, so the driver loads them from the shards). See :mod:`lexprobe.scale` for what the nodes share and how
failures are handled.
"""

from __future__ import annotations

import functools
import os
import shutil
import struct
import time
import uuid
import warnings
from collections import deque
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core import vector_index as vindex
from ..core.conventions import old_order
from ..core.errors import LexprobeError
from ..core.progress import bar
from ..core.store import (DEFAULT_SHARD_ROWS, SHARD_DIR, StoreWriter, check_new_index, column_matrix, file_crc32,
                          home_path, vector_array, write_lock)
from ..kinds.tokens import FAISS_FILE, KIND, SENTENCES_FILE, encode_corpus, limit_corpus, token_schema
from ..sources.datasets.corpora import provenance, read_corpus
from ..sources.datasets.corpus import SENTENCE_SCHEMA, Corpus
from ..sources.encoder import DEFAULT_BATCH_TOKENS, EncodeStats
from ..sources.models import DEFAULT_ENCODER
from .cluster import connect, get, ray_module

DEFAULT_BLOCK_SENTENCES = 2000  # about 15 s of MiniLM work for one 1-thread worker: little per-block overhead
MAX_RESTARTS = 3                # per actor; each restart reloads the model and re-runs the block it held
SLOTS_PER_ACTOR = 2             # blocks queued on an actor: one running, one waiting, so it never idles
BLOCK_DIR = "blocks"            # inside the new version's temporary folder; removed before the commit


def corpus_blocks(corpus: Corpus, block_sentences: int) -> list[tuple[pa.Table, pa.Table]]:
    """Cut the target table into contiguous row ranges of ``block_sentences`` runs of one sentence each, and
    pair each range with the sentences it needs: ``[(sentences, targets), ...]`` in target-table order."""
    if block_sentences < 1:
        raise LexprobeError(f"block size must be at least 1 sentence, not {block_sentences}")
    targets = corpus.targets
    if not targets.num_rows:
        return []
    ids = targets.column("sentence_id").to_numpy(zero_copy_only=False)
    starts_run = np.ones(len(ids), dtype=bool)
    starts_run[1:] = ids[1:] != ids[:-1]
    block_of = (np.cumsum(starts_run) - 1) // block_sentences
    bounds = np.searchsorted(block_of, np.arange(int(block_of[-1]) + 2))
    sentence_row = pc.index_in(targets.column("sentence_id"), value_set=corpus.sentences.column("sentence_id"))
    sentence_row = sentence_row.to_numpy(zero_copy_only=False)  # float with nan where a sentence is missing
    blocks = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        rows = sentence_row[a:b]
        rows = np.unique(rows[~np.isnan(rows)].astype(np.int64)) if rows.dtype.kind == "f" else np.unique(rows)
        blocks.append((corpus.sentences.take(rows), targets.slice(int(a), int(b - a))))
    return blocks


def write_arrow(path: Path, table: pa.Table) -> tuple[int, int]:
    """Write ``table`` as one Arrow IPC record batch under a private name, then rename it to ``path`` (a writer
    killed half-way leaves only the private name, never a short ``path``). Returns (bytes, crc32)."""
    part = path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        with pa.OSFile(str(part), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table, max_chunksize=len(table) or None)
        os.replace(part, path)
    except OSError as exc:  # pyarrow's message names no file (a full disk, a folder other nodes cannot see)
        raise LexprobeError(f"{path}: cannot write ({getattr(exc, 'strerror', None) or exc})") from None
    return file_crc32(path)


def read_arrow(path: str | Path) -> pa.Table:
    """An Arrow IPC file, memory-mapped."""
    return pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()


def block_file(folder: Path, block: int) -> Path:
    return folder / f"block-{block:06d}.arrow"


class EncoderWorker:
    """A Ray actor's state: one loaded :class:`TokenEncoder`, encoding blocks with it and writing each block's
    rows that got a vector (target columns + vector) into the build's block folder."""

    def __init__(self, model: str, layers, pooling: str, batch_tokens: int, threads: int):
        from ..core.progress import set_quiet
        from ..sources.encoder import TokenEncoder

        set_quiet(True)
        self.encoder = TokenEncoder(model, layers=layers, pooling=pooling, batch_tokens=batch_tokens,
                                    threads=threads)

    def settings(self) -> dict:
        return self.encoder.settings()

    def pid(self) -> int:
        return os.getpid()

    def encode(self, name: str, sentences: pa.Table, targets: pa.Table):
        """``(vectors, ok, stats)`` of one block, returned to the caller (the benchmark's local comparison)."""
        with warnings.catch_warnings():  # lost targets are counted in the stats and reported by the driver
            warnings.simplefilter("ignore", UserWarning)
            return encode_corpus(self.encoder, Corpus(name, sentences, targets))

    def encode_to(self, name: str, sentences: pa.Table, targets: pa.Table, path: str) -> tuple:
        """Encode one block and write its rows that got a vector to ``path``; returns ``(rows, first_lost,
        stats)``: the rows written, the instance id of the block's first target without a vector (or None)."""
        vectors, ok, stats = self.encode(name, sentences, targets)
        first_lost = None
        if not ok.all():
            first_lost = targets.column("instance_id")[int(np.flatnonzero(~ok)[0])].as_py()
            targets, vectors = targets.filter(pa.array(ok)), vectors[ok]
        dim = int(self.encoder.settings()["dim"])
        schema = token_schema(dim).remove(0)  # no id yet: ids depend on the blocks before
        vectors = vector_array(np.asarray(vectors, np.float32).reshape(-1, dim))
        table = targets.append_column("vector", vectors).select(schema.names).cast(schema)
        write_arrow(Path(path), table)
        return len(table), first_lost, stats


def write_shard(folder: str, pieces: list[tuple[str, int, int]], first_id: int, file: str, schema: pa.Schema,
                unit_dir: str | None = None) -> dict:
    """Cut one shard from part files: ``pieces`` are ``(path, start, stop)`` row ranges of Arrow files holding
    every column of ``schema`` but ``id``, in row order; row ids run from ``first_id``. Written to
    ``folder/shards/file`` (private name, then rename); with ``unit_dir``, the shard's unit vectors also go to
    :func:`unit_file` there (raw float32), for the FAISS file. Returns the shard's manifest entry (file, rows,
    bytes, crc32). Runs as a Ray task on any node."""
    parts = [read_arrow(path).slice(start, stop - start) for path, start, stop in pieces]
    table = pa.concat_tables(parts) if parts else schema.remove(0).empty_table()
    table = table.add_column(0, "id", pa.array(np.arange(first_id, first_id + len(table), dtype=np.int64)))
    table = table.select(schema.names).cast(schema).combine_chunks()
    size, crc = write_arrow(Path(folder) / SHARD_DIR / file, table)
    if unit_dir is not None:
        unit = vindex.unit_rows(column_matrix(table.column("vector")))[0].astype("<f4")
        path = unit_file(unit_dir, file)
        part = path.with_name(f"{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}")
        unit.tofile(part)
        os.replace(part, path)
    return {"file": file, "rows": len(table), "bytes": size, "crc32": crc}


def unit_file(folder: str | Path, shard: str) -> Path:
    return Path(folder) / f"{shard}.unit"


def cut_shards(ray, writer: StoreWriter, jobs, path_of, unit_dir: Path | None = None) -> list:
    """Submit the shard tasks of ``ShardCutter`` jobs (``path_of(part)``: the file of part ``part``); returns
    their object refs."""
    task = ray.remote(num_cpus=0, max_retries=MAX_RESTARTS)(write_shard)
    return [task.remote(str(writer.tmp), [(str(path_of(p)), a, b) for p, a, b in pieces], first_id,
                        f"part-{k:05d}.arrow", writer.schema, str(unit_dir) if unit_dir else None)
            for k, pieces, first_id in jobs]


class ShardCutter:
    """Given the row count of each part (a block, a word range) in order, the shards of ``shard_rows`` rows (the
    local build's boundaries) that the parts seen so far complete: ``add(rows)`` returns ``[(shard, pieces,
    first_id)]`` with ``pieces`` ``(part, start, stop)`` row ranges, ``finish()`` the last partial shard."""

    def __init__(self, shard_rows: int):
        self.shard_rows, self.rows = shard_rows, 0
        self.blocks: list[tuple[int, int]] = []  # (block, first row) of blocks not yet fully cut
        self.cut = 0                             # rows already given to shards
        self.next_shard = 0
        self.block = 0

    def add(self, rows: int) -> list[tuple[int, list, int]]:
        if rows:
            self.blocks.append((self.block, self.rows))
        self.block += 1
        self.rows += rows
        out = []
        while self.rows - self.cut >= self.shard_rows:
            out.append(self._take(self.shard_rows))
        return out

    def finish(self) -> list[tuple[int, list, int]]:
        return [self._take(self.rows - self.cut)] if self.rows > self.cut else []

    def _take(self, n: int) -> tuple[int, list, int]:
        lo, hi = self.cut, self.cut + n
        pieces = []
        ends = [first for _, first in self.blocks[1:]] + [self.rows]
        for (block, first), end in zip(self.blocks, ends):
            a, b = max(lo, first), min(hi, end)
            if a < b:
                pieces.append((block, a - first, b - first))
        self.blocks = [(blk, first) for (blk, first), end in zip(self.blocks, ends) if end > hi]
        shard, self.next_shard, self.cut = self.next_shard, self.next_shard + 1, hi
        return shard, pieces, lo


class EncoderPool:
    """``workers`` encoder actors of ``threads`` CPUs each, restarted when they die."""

    def __init__(self, workers: int, model: str = DEFAULT_ENCODER, *, layers: Sequence[int] | None = None,
                 pooling: str = "mean", batch_tokens: int = DEFAULT_BATCH_TOKENS, threads: int = 1,
                 max_restarts: int = MAX_RESTARTS):
        ray = ray_module()
        if workers < 1 or threads < 1:
            raise LexprobeError("--workers and --threads must be at least 1")
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if workers * threads > cpus:  # the extra actors would wait for CPUs for ever
            raise LexprobeError(f"{workers} encoder actors of {threads} threads need {workers * threads} CPUs; the "
                                f"Ray cluster has {cpus}")
        actor = ray.remote(num_cpus=threads, max_restarts=max_restarts, max_task_retries=max_restarts)(EncoderWorker)
        self.actors = [actor.remote(model, tuple(layers) if layers else None, pooling, batch_tokens, threads)
                       for _ in range(workers)]
        self.threads = threads

    def settings(self) -> dict:
        """The encoder's settings (model, path, layers, pooling, dim, ...), as the index records them."""
        return get(self.actors[0].settings.remote())

    def pids(self) -> list[int]:
        return get([a.pid.remote() for a in self.actors])

    def encode(self, name: str, blocks: Sequence[tuple[pa.Table, pa.Table]], folder: Path | None = None,
               method: str = "encode") -> Iterator[tuple]:
        """Each block's result, yielded in block order as they finish: ``(targets, vectors, ok, stats)``, or
        with ``folder`` ``(targets, rows, first_lost, stats)`` after the actor wrote the block's rows to
        :func:`block_file` there. A block whose actor died is retried by Ray on the restarted actor; one whose
        actor is gone for good goes to another actor."""
        ray = ray_module()
        live = list(range(len(self.actors)))
        free = deque(a for a in live for _ in range(SLOTS_PER_ACTOR))
        todo = deque(range(len(blocks)))
        pending: dict = {}
        done: dict[int, tuple] = {}
        window = SLOTS_PER_ACTOR * len(self.actors) * 2  # blocks held by the driver waiting for an earlier one
        next_out = 0
        progress = bar(total=sum(t.num_rows for _, t in blocks), desc=f"encode {name} on ray", unit="target")

        def submit(a: int, b: int):
            actor = self.actors[a]
            if folder is None:
                return actor.encode.remote(name, *blocks[b])
            return actor.encode_to.remote(name, *blocks[b], str(block_file(folder, b)))

        try:
            while next_out < len(blocks):
                while free and todo and todo[0] < next_out + window:
                    a, b = free.popleft(), todo.popleft()
                    pending[submit(a, b)] = (b, a)
                ready, _ = ray.wait(list(pending), num_returns=1)
                b, a = pending.pop(ready[0])
                try:
                    done[b] = ray.get(ready[0])
                except ray.exceptions.RayTaskError:
                    get(ready[0])  # raises the worker's error as one line
                except ray.exceptions.RayActorError:
                    live = [x for x in live if x != a]  # out of restarts: its blocks go to the others
                    free = deque(x for x in free if x != a)
                    if not live:
                        raise LexprobeError(f"every Ray encoder actor died ({MAX_RESTARTS} restarts each)") from None
                    todo.appendleft(b)
                    continue
                free.append(a)
                progress.update(blocks[b][1].num_rows)
                while next_out in done:
                    yield (blocks[next_out][1], *done.pop(next_out))
                    next_out += 1
        finally:
            progress.close()

    def close(self) -> None:
        ray = ray_module()
        for a in self.actors:
            ray.kill(a)


def default_workers(threads: int) -> int:
    """One actor per ``threads`` CPUs of the cluster."""
    ray = ray_module()
    return max(1, int(ray.cluster_resources().get("CPU", 1)) // max(1, threads))


# FAISS's serialisation of an IndexIDMap2 over an IndexFlatIP: two 37-byte headers ("IxM2", "IxFI": fourcc,
# d int32, ntotal int64, two int64 dummies, is_trained uint8, metric int32), the vectors (uint64 count of
# floats, the floats) and the ids (uint64 count, int64 each). Checked against faiss.serialize_index in the tests.
_HEADER = 37


def write_flat_faiss(path: str, units: Sequence[str | Path], dim: int, count: int, chunk: int = 1 << 20) -> None:
    """Write the flat FAISS file of ``count`` unit vectors held in raw float32 files ``units`` (in row order, ids
    0..count-1): the same bytes as :func:`lexprobe.core.vector_index.build` + ``save``, by copying the files'
    bytes (``copy_file_range``: on NFS 4.2 and reflinking file systems the copy stays on the server), never
    holding the vectors."""
    empty = vindex.faiss.serialize_index(vindex.build(np.zeros((0, dim), np.float32), np.zeros(0, np.int64)))
    head = bytearray(empty.tobytes()[:2 * _HEADER])
    for at in (8, _HEADER + 8):
        head[at:at + 8] = struct.pack("<q", count)
    try:
        with open(path, "wb") as f:
            f.write(head)
            f.write(struct.pack("<Q", count * dim))
            f.flush()
            for unit in units:
                with open(unit, "rb") as src:
                    left = os.fstat(src.fileno()).st_size
                    while left:
                        left -= os.copy_file_range(src.fileno(), f.fileno(), left)
            f.write(struct.pack("<Q", count))
            for a in range(0, count, chunk):
                f.write(np.arange(a, min(a + chunk, count), dtype="<i8").tobytes())
    except OSError as exc:
        raise LexprobeError(f"{path}: cannot write the FAISS index ({exc.strerror or exc})") from None


@old_order("home", "name", "model", "corpus_spec")
def build_token_index_ray(name: str, model: str = DEFAULT_ENCODER, corpus_spec: str = "", *,
                          home: str | Path | None = None, layers: Sequence[int] | None = None, pooling: str = "mean",
                          batch_tokens: int = DEFAULT_BATCH_TOKENS, max_sentences: int | None = None,
                          threads: int | None = None, workers: int | None = None,
                          block_sentences: int = DEFAULT_BLOCK_SENTENCES, params: vindex.IndexParams | None = None,
                          shard_rows: int = DEFAULT_SHARD_ROWS, seed: int = 0, replace: bool = False,
                          address: str | None = None, pool: EncoderPool | None = None) -> dict:
    """:func:`lexprobe.kinds.tokens.build_token_index` with the encoding and the shard writing on Ray: same
    arguments, plus the actor count (default one per ``threads`` CPUs of the cluster), ``threads`` per actor
    (default 1), the block size and the cluster address; or an existing ``pool``. The index home must be on a
    file system every node mounts at the same path. Returns the local build's summary plus ``workers``,
    ``blocks``, ``wall_tokens_per_s`` (subword tokens over the wall time of the encoding) and ``commit_s`` (the
    driver's work after the last block: sentences, FAISS file, manifest)."""
    home = home_path(home)
    check_new_index(home, name, replace=replace)
    params = params or vindex.IndexParams()
    if params.index_type not in vindex.INDEX_TYPES:
        raise LexprobeError(f"unknown index type {params.index_type!r} (choose from {', '.join(vindex.INDEX_TYPES)})")
    t0 = time.perf_counter()
    origin = provenance(corpus_spec)  # as the local build records it
    corpus = limit_corpus(read_corpus(corpus_spec), max_sentences)
    blocks = corpus_blocks(corpus, block_sentences)
    ray = connect(address)
    threads = threads or 1
    own = pool is None
    pool = pool or EncoderPool(workers or default_workers(threads), model, layers=layers, pooling=pooling,
                               batch_tokens=batch_tokens, threads=threads)
    try:
        settings = pool.settings()
        dim = int(settings["dim"])
        with write_lock(home, name), StoreWriter(home, name, kind=KIND, dim=dim, schema=token_schema(dim),
                                                 shard_rows=shard_rows) as writer:
            t1 = time.perf_counter()
            folder = writer.tmp / BLOCK_DIR
            folder.mkdir()
            cut = ShardCutter(shard_rows)
            shards, stats, first_lost, skipped = [], EncodeStats(), {}, corpus.skipped
            path_of = functools.partial(block_file, folder)
            units = folder if params.index_type == "flat" else None
            for _, rows, lost, part in pool.encode(name, blocks, folder):
                stats.add(part)
                for reason in part.lost_targets:
                    first_lost.setdefault(reason, lost)
                shards += cut_shards(ray, writer, cut.add(rows), path_of, units)
            shards += cut_shards(ray, writer, cut.finish(), path_of, units)
            writer.shards = get(shards)
            writer.count = cut.rows
            wall = time.perf_counter() - t1
            for reason, n in stats.lost_targets.items():
                skipped.add(reason, first_lost[reason], n)
            if not writer.count:
                raise LexprobeError(f"{origin['corpus']}: no target could be embedded ({skipped.summary()})")
            t2 = time.perf_counter()
            _commit(writer, corpus, params, seed, {
                "corpus": origin["corpus"], "corpus_name": corpus.name, **settings, "targets": writer.count,
                "sentences": corpus.sentences.num_rows, "max_sentences": max_sentences,
                "skipped": skipped.as_dict(), "encode": stats.as_dict(), "index": params.as_dict(), "seed": seed,
                **origin, "engine": {"engine": "ray", "workers": len(pool.actors), "threads": pool.threads,
                                     "block_sentences": block_sentences, "blocks": len(blocks),
                                     "writes": "workers"}})
            commit_s = time.perf_counter() - t2
    finally:
        if own:
            pool.close()
    return {"name": name, "corpus": corpus.name, "targets": writer.count, "sentences": corpus.sentences.num_rows,
            "dim": dim, "layers": list(settings["layers"]), "pooling": settings["pooling"], "skipped": skipped,
            "encode": stats, "workers": len(pool.actors), "blocks": len(blocks),
            "wall_tokens_per_s": stats.subword_tokens / wall if wall else 0.0, "commit_s": round(commit_s, 3),
            "seconds": round(time.perf_counter() - t0, 2)}


def _commit(writer: StoreWriter, corpus: Corpus, params: vindex.IndexParams, seed: int, meta: dict) -> None:
    """The driver's part after the shards: the sentences, the FAISS index (flat: the shard tasks' unit vectors
    copied into FAISS's file format; ivf, hnsw: built by FAISS over all unit vectors), the manifest and the swap,
    as the local build writes them."""
    with pa.OSFile(writer.side_file("sentences", SENTENCES_FILE), "wb") as sink, \
            pa.ipc.new_file(sink, SENTENCE_SCHEMA) as ipc:
        ipc.write_table(corpus.sentences.cast(SENTENCE_SCHEMA))
    folder = writer.tmp / BLOCK_DIR
    path = writer.side_file("faiss", FAISS_FILE)
    with bar(total=1, desc="faiss", unit="index") as b:
        if params.index_type == "flat":
            write_flat_faiss(path, [unit_file(folder, s["file"]) for s in writer.shards], writer.dim, writer.count)
        else:
            shards = [writer.tmp / SHARD_DIR / s["file"] for s in writer.shards]
            unit = np.concatenate([vindex.unit_rows(column_matrix(read_arrow(s).column("vector")))[0] for s in shards])
            vindex.save(vindex.build(unit, np.arange(writer.count, dtype=np.int64), params, seed=seed), path)
        b.update()
    shutil.rmtree(folder)
    meta["index"] = params.as_dict()  # IVF records the list count it chose
    writer.commit(source=meta["corpus"], normalization="faiss: unit vectors, inner product; shards: raw vectors",
                  meta=meta, history=[{"op": "build", "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                       "rows": writer.count}])
