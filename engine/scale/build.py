"""Token-index builds on Ray: the corpus cut into blocks of whole sentences, encoded by a pool of encoder
actors (one model load each), written by the driver in block order through the local build's own writer.

The vectors equal the local build's within float rounding (a block's sentences are batched among themselves
instead of among the whole corpus; measured max abs difference about 2e-6), in the same row order, with the
same ids, shards, sentences, FAISS index (flat, or IVF whose k-means FAISS trains on a seeded sample of 256
vectors per list) and manifest, plus ``meta.engine``. See :mod:`lexprobe.scale` for what the nodes share and
how failures are handled.
"""

from __future__ import annotations

import os
import time
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
from ..core.store import DEFAULT_SHARD_ROWS, check_new_index, home_path, write_lock
from ..kinds.tokens import encode_corpus, limit_corpus, write_token_index
from ..sources.datasets.corpora import provenance, read_corpus
from ..sources.datasets.corpus import Corpus
from ..sources.encoder import DEFAULT_BATCH_TOKENS
from ..sources.models import DEFAULT_ENCODER
from .cluster import connect, get, ray_module

DEFAULT_BLOCK_SENTENCES = 2000  # about 15 s of MiniLM work for one 1-thread worker: little per-block overhead
MAX_RESTARTS = 3                # per actor; each restart reloads the model and re-runs the block it held
SLOTS_PER_ACTOR = 2             # blocks queued on an actor: one running, one waiting, so it never idles


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


class EncoderWorker:
    """A Ray actor's state: one loaded :class:`TokenEncoder`, encoding blocks with it."""

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
        with warnings.catch_warnings():  # lost targets are counted in the stats and reported by the driver
            warnings.simplefilter("ignore", UserWarning)
            return encode_corpus(self.encoder, Corpus(name, sentences, targets))


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

    def encode(self, name: str, blocks: Sequence[tuple[pa.Table, pa.Table]]) -> Iterator[tuple]:
        """``(targets, vectors, ok, stats)`` of each block, yielded in block order as they finish. A block
        whose actor died is retried by Ray on the restarted actor; one whose actor is gone for good goes to
        another actor."""
        ray = ray_module()
        live = list(range(len(self.actors)))
        free = deque(a for a in live for _ in range(SLOTS_PER_ACTOR))
        todo = deque(range(len(blocks)))
        pending: dict = {}
        done: dict[int, tuple] = {}
        window = SLOTS_PER_ACTOR * len(self.actors) * 2  # blocks held by the driver waiting for an earlier one
        next_out = 0
        progress = bar(total=sum(t.num_rows for _, t in blocks), desc=f"encode {name} on ray", unit="target")
        try:
            while next_out < len(blocks):
                while free and todo and todo[0] < next_out + window:
                    a, b = free.popleft(), todo.popleft()
                    pending[self.actors[a].encode.remote(name, *blocks[b])] = (b, a)
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


@old_order("home", "name", "model", "corpus_spec")
def build_token_index_ray(name: str, model: str = DEFAULT_ENCODER, corpus_spec: str = "", *,
                          home: str | Path | None = None, layers: Sequence[int] | None = None, pooling: str = "mean",
                          batch_tokens: int = DEFAULT_BATCH_TOKENS, max_sentences: int | None = None,
                          threads: int | None = None, workers: int | None = None,
                          block_sentences: int = DEFAULT_BLOCK_SENTENCES, params: vindex.IndexParams | None = None,
                          shard_rows: int = DEFAULT_SHARD_ROWS, seed: int = 0, replace: bool = False,
                          address: str | None = None, pool: EncoderPool | None = None) -> dict:
    """:func:`lexprobe.kinds.tokens.build_token_index` with the encoding on Ray: same arguments, plus the
    actor count (default one per ``threads`` CPUs of the cluster), ``threads`` per actor (default 1), the
    block size and the cluster address; or an existing ``pool``. Returns the local build's summary plus
    ``workers``, ``blocks`` and ``wall_tokens_per_s`` (subword tokens over the wall time of the encoding)."""
    home = home_path(home)
    check_new_index(home, name, replace=replace)
    params = params or vindex.IndexParams()
    if params.index_type not in vindex.INDEX_TYPES:
        raise LexprobeError(f"unknown index type {params.index_type!r} (choose from {', '.join(vindex.INDEX_TYPES)})")
    t0 = time.perf_counter()
    origin = provenance(corpus_spec)  # as the local build records it
    corpus = limit_corpus(read_corpus(corpus_spec), max_sentences)
    blocks = corpus_blocks(corpus, block_sentences)
    connect(address)
    threads = threads or 1
    own = pool is None
    pool = pool or EncoderPool(workers or default_workers(threads), model, layers=layers, pooling=pooling,
                               batch_tokens=batch_tokens, threads=threads)
    try:
        settings = pool.settings()
        with write_lock(home, name):
            t1 = time.perf_counter()
            engine = {"engine": "ray", "workers": len(pool.actors), "threads": pool.threads,
                      "block_sentences": block_sentences, "blocks": len(blocks)}
            summary = write_token_index(home, name, corpus, pool.encode(name, blocks), settings=settings,
                                        corpus_spec=origin["corpus"], max_sentences=max_sentences, params=params,
                                        shard_rows=shard_rows, seed=seed, meta={**origin, "engine": engine})
            wall = time.perf_counter() - t1
    finally:
        if own:
            pool.close()
    return {**summary, "workers": len(pool.actors), "blocks": len(blocks),
            "wall_tokens_per_s": summary["encode"].subword_tokens / wall if wall else 0.0,
            "seconds": round(time.perf_counter() - t0, 2)}
