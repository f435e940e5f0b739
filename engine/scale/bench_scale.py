"""``bench scale``: token encoding on Ray against the local encoder, on the same sentences, in one run.

Measured: tokens/s of the local encoder (1 thread, and all cores), of a Ray pool of 1 and of 2 one-thread
encoder actors (wall time over the blocks, pipelined as a build runs them), the per-block overhead (a block's
round trip minus the encoder's own time inside the actor, one block in flight: scheduling, serialising the
block and the vectors, the object store), the actors' start-up (a model load each), and the driver's cost per
target of writing the index (shards, sentences, flat FAISS build, commit). From these, a projection for a
10M-sentence corpus: per-worker rate x workers for the encoding, with the driver's write beside it.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from pathlib import Path

import pyarrow as pa

from ..core import vector_index as vindex
from ..kinds.tokens import encode_corpus, limit_corpus, write_token_index
from ..sources.datasets.corpora import read_corpus
from ..sources.datasets.corpus import Corpus
from ..sources.encoder import EncodeStats, TokenEncoder, default_threads
from .build import EncoderPool, corpus_blocks
from .cluster import connect, get

PROJECTED_SENTENCES = 10_000_000
PROJECTED_NODES = (8, 32)
DRIVER_TARGETS = 100_000


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def run_scale_bench(corpus_spec: str, *, n_sentences: int = 400, model: str = "minilm", block_sentences: int = 100,
                    address: str | None = None, node_cpus: int = 16, home: Path | None = None) -> dict:
    """Run the comparison; returns the rows (one per setting), the per-block overhead, the projection and the
    notes that explain them (the CLI records them under ``benchmarks/``)."""
    load_before = _load()
    corpus = limit_corpus(read_corpus(corpus_spec), n_sentences)
    blocks = corpus_blocks(corpus, block_sentences)
    warnings.simplefilter("ignore", UserWarning)
    rows = []

    for threads in sorted({1, default_threads()}):
        encoder = TokenEncoder(model, threads=threads)
        encode_corpus(encoder, limit_corpus(corpus, 8))  # warm-up
        t0 = time.perf_counter()
        _, _, stats = encode_corpus(encoder, corpus)
        rows.append(_row(f"local, {threads} thread{'s' if threads > 1 else ''}", stats.subword_tokens,
                         time.perf_counter() - t0))
    tokens = stats.subword_tokens
    base = rows[0]["tokens_per_s"]
    del encoder

    ray = connect(address)
    overhead = {}
    for workers in (1, 2):
        t0 = time.perf_counter()
        pool = EncoderPool(workers, model, threads=1)
        pool.pids()  # every actor has loaded its model
        startup = time.perf_counter() - t0
        try:
            get(pool.actors[0].encode.remote(corpus.name, *blocks[0]))  # warm-up
            if workers == 1:
                overhead = _block_overhead(pool, corpus.name, blocks)
            t0 = time.perf_counter()
            driver = EncodeStats()
            encoded = list(pool.encode(corpus.name, blocks))
            for _, _, _, part in encoded:
                driver.add(part)
            wall = time.perf_counter() - t0
        finally:
            pool.close()
        rows.append({**_row(f"ray, {workers} worker{'s' if workers > 1 else ''} x 1 thread", tokens, wall),
                     "startup_s": f"{startup:.1f}"})
    for r in rows:
        r["vs local 1 thread"] = f"{r['tokens_per_s'] / base:.2f}x"

    n_targets = sum(len(t) for t, _, _, _ in encoded)
    sentences_with_targets = sum(b[0].num_rows for b in blocks)
    # the driver's write, timed on the encoded blocks repeated to DRIVER_TARGETS rows (fixed costs amortised)
    repeats = max(1, -(-DRIVER_TARGETS // n_targets))
    with tempfile.TemporaryDirectory(dir=home if home and home.is_dir() else None) as tmp:
        settings = TokenEncoder(model, threads=1).settings()
        t0 = time.perf_counter()
        repeated = Corpus(corpus.name, corpus.sentences, pa.concat_tables([t for t, *_ in encoded] * repeats))
        write_token_index(Path(tmp), "bench-scale", repeated, encoded * repeats, settings=settings,
                          corpus_spec=corpus_spec, max_sentences=n_sentences, params=vindex.IndexParams())
        write_s = time.perf_counter() - t0
    per_target_write = write_s / (n_targets * repeats)
    per_worker = rows[-2]["tokens_per_s"]  # ray, 1 worker: block overhead included
    projection = project(tokens / sentences_with_targets, n_targets / sentences_with_targets, per_worker,
                         per_target_write, settings["dim"], node_cpus)
    notes = [
        f"corpus {corpus_spec}: first {n_sentences} sentences, {sentences_with_targets} with targets, {n_targets} "
        f"targets, {tokens} subword tokens; blocks of {block_sentences} sentences ({len(blocks)} blocks); model "
        f"{model}; Ray {ray.__version__}, a local cluster of {int(ray.cluster_resources().get('CPU', 0))} CPUs "
        "unless --ray-address",
        f"load average (1/5/15 min) before {load_before}, after {_load()}: the machine is shared with other "
        "agents' jobs, so the 2-worker row measures contention as much as Ray",
        f"per-block overhead (round trip minus the encoder's time in the actor, one block in flight): "
        f"{overhead['tiny_ms']:.1f} ms for a 1-sentence block, {overhead['block_ms']:.1f} ms for a "
        f"{block_sentences}-sentence block ({overhead['block_share']:.1%} of its encoding time)",
        f"driver write (shards, sentences, flat FAISS, commit), timed on {n_targets * repeats} targets (the sample's "
        f"blocks repeated): {per_target_write * 1e6:.1f} us per target",
    ] + projection["notes"]
    return {"rows": rows, "overhead": overhead, "projection": projection, "notes": notes}


def _row(setting: str, tokens: int, seconds: float) -> dict:
    return {"setting": setting, "tokens_per_s": round(tokens / seconds), "seconds": f"{seconds:.2f}",
            "startup_s": ""}


def _block_overhead(pool: EncoderPool, name: str, blocks) -> dict:
    """Mean (round trip - encoder seconds) per block, one block in flight, for a 1-sentence block and the real
    blocks."""
    sentences, targets = blocks[0]
    first = targets.column("sentence_id")[0].as_py()
    tiny = (sentences.filter(sentences.column("sentence_id").to_numpy(zero_copy_only=False) == first),
            targets.filter(targets.column("sentence_id").to_numpy(zero_copy_only=False) == first))

    def trip(block) -> tuple[float, float]:
        t0 = time.perf_counter()
        _, _, stats = get(pool.actors[0].encode.remote(name, *block))
        return time.perf_counter() - t0 - stats.seconds, stats.seconds

    tiny_s = sorted(trip(tiny)[0] for _ in range(15))[7]  # median
    real = [trip(b) for b in blocks[:4]]
    block_s = sum(o for o, _ in real) / len(real)
    return {"tiny_ms": tiny_s * 1e3, "block_ms": block_s * 1e3,
            "block_share": block_s / (sum(s for _, s in real) / len(real))}


def project(tokens_per_sentence: float, targets_per_sentence: float, worker_tokens_per_s: float,
            driver_s_per_target: float, dim: int, node_cpus: int, sentences: int = PROJECTED_SENTENCES) -> dict:
    """Hours to encode ``sentences`` on 8 and 32 nodes of ``node_cpus`` one-thread workers at the measured
    per-worker rate, the driver's write time (it overlaps the encoding, the FAISS build at the end does not),
    and the driver's memory for the FAISS build."""
    tokens = sentences * tokens_per_sentence
    targets = sentences * targets_per_sentence
    driver_h = targets * driver_s_per_target / 3600
    memory_gb = targets * dim * 4 * 2 / 1e9  # unit vectors + the flat FAISS copy
    rows, notes = [], []
    for nodes in PROJECTED_NODES:
        workers = nodes * node_cpus
        encode_h = tokens / (worker_tokens_per_s * workers) / 3600
        rows.append({"nodes": nodes, "workers": workers, "encode_h": round(encode_h, 2),
                     "driver_write_h": round(driver_h, 2), "total_h": round(max(encode_h, driver_h), 2)})
        notes.append(f"projection, {sentences / 1e6:.0f}M sentences on {nodes} nodes x {node_cpus} CPUs "
                     f"({workers} one-thread actors at the measured {worker_tokens_per_s:.0f} tokens/s each): "
                     f"encoding {encode_h:.2f} h, the driver's write {driver_h:.2f} h alongside it, so about "
                     f"{max(encode_h, driver_h):.2f} h ({'driver-bound' if driver_h > encode_h else 'encoder-bound'})")
    notes.append(f"projection basis: {tokens_per_sentence:.1f} subword tokens and {targets_per_sentence:.2f} targets "
                 f"per sentence as in the sample ({targets / 1e6:.0f}M targets); the driver holds the unit vectors and "
                 f"the flat FAISS copy, about {memory_gb:.0f} GB at dim {dim}; per-worker rate assumed to scale "
                 "linearly (encoding is embarrassingly parallel; the traffic to the driver is about "
                 f"{worker_tokens_per_s / tokens_per_sentence * targets_per_sentence * dim * 4 / 1e6:.2f} MB/s per "
                 "worker)")
    return {"rows": rows, "notes": notes}
