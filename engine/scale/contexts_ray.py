"""The contexts index built on Ray, equal to the local build (:mod:`lexprobe.kinds.contexts`) row for row.

- **Map**, one task per corpus block: a plain-text corpus (uncompressed, whole) is cut into byte ranges that
  each task reads itself from the shared file system (a line belongs to the range holding its first byte), so
  the driver never reads it; other corpora (read whole by their readers, as the local build reads them) and
  ``max_sentences`` trials are cut into blocks of sentences by the driver. A task runs the local build's
  :class:`~lexprobe.kinds.contexts.WindowSampler` over its block and writes, into the new version's temporary
  folder, each word's bottom-``cap`` windows of the block as references (word, priority, sentence, start,
  stop, position) beside the block's referenced sentences, and every word's occurrence count: the corpus
  text once plus about 30 bytes a kept window, not 2 x window + 1 words a window.
- **Reduce**, one task per range of words (range bounds: quantiles of a sample of each block's words): the
  union of the blocks' samples of a word holds its global bottom-``cap`` (a window outside a block's sample
  has ``cap`` smaller distinct windows in that block alone); the same window text in several blocks has the
  same priority and keeps the position of its first block, as the local build keeps its first occurrence's.
  Each task writes its words' rows, sorted by word then priority, with their total occurrences.
- **Shards**: Ray tasks cut the reduced files at the local build's shard boundaries with its row ids; the
  driver collects counts and checksums and commits the manifest (atomic swap, writer lock, as every build).

The manifest's ``meta`` is the local build's, except ``duplicates`` and ``over_cap``, which count events of the
local build's pass in corpus order; the Ray build records ``dropped`` instead (occurrences in sentences of
more than one word that left no window: duplicates and windows over the cap together), equal to the local
build's ``duplicates + over_cap``.
"""

from __future__ import annotations

import bisect
import os
import shutil
import time
from collections import deque
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core.errors import InputError, LexprobeError
from ..core.progress import bar
from ..core.store import DEFAULT_SHARD_ROWS, StoreWriter, check_new_index, home_path, write_lock
from ..kinds.contexts import DEFAULT_CAP, DEFAULT_WINDOW, KIND, WindowSampler, contexts_schema, corpus_sentences
from ..sources.datasets.corpora import parse_spec, provenance
from ..sources.typed_text import split_words
from ..sources.vectors import compression_name
from .build import MAX_RESTARTS, ShardCutter, write_arrow, cut_shards, read_arrow
from .cluster import connect, get

MAP_DIR, REDUCE_DIR = "map", "reduce"
MAX_BLOCK_BYTES = 32 << 20           # a plain-text block at most: about 5M words, some 10 min of one map task
MIN_BLOCK_BYTES = 1 << 20            # at least: the per-block files and the reducers' reads stay few
DEFAULT_BLOCK_SENTENCES = 50_000     # a block the driver cuts from an annotated corpus
SAMPLE_WORDS = 64                    # words a map task returns for the reduce ranges' bounds
_BOM = "\ufeff"


def text_ranges(path: Path, block_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``block_bytes`` covering the file."""
    size = path.stat().st_size
    return [(a, min(a + block_bytes, size)) for a in range(0, size, block_bytes)] or [(0, 0)]


def read_range(path: str, start: int, stop: int) -> Iterator[list[str]]:
    """The words of every line of ``path`` whose first byte lies in ``[start, stop)`` and holds a word (as
    :func:`lexprobe.sources.datasets.plain_text.iter_sentences` splits them)."""
    with open(path, "rb") as f:
        if start:
            f.seek(start - 1)
            f.readline()  # the line holding byte start-1 belongs to the range before
        at = f.tell()
        while at < stop:
            raw = f.readline()
            if not raw:
                return
            if b"\0" in raw:
                raise InputError(path, f"binary data (a NUL byte at byte {at}), not text")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {at + exc.start})") from None
            if at == 0:
                line = line.removeprefix(_BOM)
            at += len(raw)
            words = split_words(line)
            if words:
                yield words


def block_sources(spec: str, max_sentences: int | None, block_sentences: int, block_bytes: int | None,
                  cpus: int) -> Iterator[tuple]:
    """A corpus's map blocks: ``("range", path, start, stop)`` read by the task itself (``block_bytes``; None:
    four blocks a CPU of the cluster, within 1 and 32 MiB), or ``("sentences", words lists)`` cut here."""
    kind, path = parse_spec(spec)
    if kind == "text" and max_sentences is None and path.is_file() and compression_name(path) is None:
        size = block_bytes or min(MAX_BLOCK_BYTES, max(MIN_BLOCK_BYTES, path.stat().st_size // (4 * cpus) + 1))
        for a, b in text_ranges(path, size):
            yield "range", str(path), a, b
        return
    block: list[list[str]] = []
    for words in corpus_sentences(spec, max_sentences):
        block.append(words)
        if len(block) == block_sentences:
            yield "sentences", block
            block = []
    if block:
        yield "sentences", block


def map_file(folder: str | Path, block: int, what: str) -> Path:
    return Path(folder) / MAP_DIR / f"block-{block:06d}.{what}.arrow"


def map_block(folder: str, block: int, source: tuple, *, window: int, cap: int, seed: int, lowercase: bool,
              vocabulary: set | None) -> dict:
    """One map task: the block's windows sampled as the local build samples them, written as references
    (``windows``), the sentences they refer to (``sentences``) and every word's count (``counts``). Returns
    the block's counts and a sample of its words."""
    sampler = WindowSampler(window=window, cap=cap, seed=seed, vocabulary=vocabulary)
    sentences = read_range(*source[1:]) if source[0] == "range" else iter(source[1])
    kept: list[list[str]] = []
    tokens = 0
    for words in sentences:
        words = [w.lower() for w in words] if lowercase else words
        sampler.add(words)
        kept.append(words)
        tokens += len(words)
    refs = sampler.references()
    used, sentence = np.unique(refs.column("sentence").to_numpy(), return_inverse=True)
    refs = refs.set_column(2, "sentence", pa.array(sentence.astype(np.int64)))
    write_arrow(map_file(folder, block, "windows"), refs)
    write_arrow(map_file(folder, block, "sentences"),
                 pa.table({"words": pa.array([kept[i] for i in used.tolist()], pa.list_(pa.string()))}))
    words = sorted(sampler.occurrences)
    write_arrow(map_file(folder, block, "counts"),
                 pa.table({"word": pa.array(words, pa.string()),
                           "occurrences": pa.array([sampler.occurrences[w] for w in words], pa.int64())}))
    with_windows = sorted(sampler.kept)
    step = max(1, len(with_windows) // SAMPLE_WORDS)
    return {"sentences": sampler.sentences, "tokens": tokens, "windows": refs.num_rows,
            "occurrences": sum(sampler.occurrences.values()),
            "one_word_sentences": int(sampler.counts["one_word_sentences"]), "sample": with_windows[::step]}


class _Words:
    """A sorted Arrow string array seen as a sequence of str, for :mod:`bisect` (one element read a step)."""

    def __init__(self, array: pa.ChunkedArray):
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, i: int) -> str:
        return self.array[i].as_py()


def _word_slice(table: pa.Table, lo: str | None, hi: str | None) -> pa.Table:
    words = _Words(table.column("word"))
    a = bisect.bisect_left(words, lo) if lo is not None else 0
    b = bisect.bisect_left(words, hi) if hi is not None else len(words)
    return table.slice(a, b - a)


def reduce_file(folder: str | Path, part: int) -> Path:
    return Path(folder) / REDUCE_DIR / f"words-{part:05d}.arrow"


def reduce_range(folder: str, part: int, lo: str | None, hi: str | None, blocks: int, cap: int) -> tuple[int, int]:
    """One reduce task: the words in ``[lo, hi)`` (None: open end), their global bottom-``cap`` windows from
    the blocks' samples, deduplicated by text (the first block's position kept), with total occurrences;
    written to :func:`reduce_file` as the index's columns but ``id``. Returns (rows, words)."""
    parts, occurrences = [], {}
    for b in range(blocks):
        windows = _word_slice(read_arrow(map_file(folder, b, "windows")), lo, hi)
        parts.append(windows.append_column("block", pa.array(np.full(windows.num_rows, b, np.int64))))
        counts = _word_slice(read_arrow(map_file(folder, b, "counts")), lo, hi)
        for word, n in zip(counts.column("word").to_pylist(), counts.column("occurrences").to_pylist()):
            occurrences[word] = occurrences.get(word, 0) + n
    table = pa.concat_tables(parts)
    table = table.take(pc.sort_indices(table, sort_keys=[("word", "ascending"), ("priority", "ascending"),
                                                         ("block", "ascending")]))
    sentences: dict[int, pa.ListArray] = {}

    def text(row: int) -> list[str]:
        b = blocks_[row]
        if b not in sentences:
            sentences[b] = read_arrow(map_file(folder, b, "sentences")).column("words").combine_chunks()
        return sentences[b][sentence[row]].values[start[row]:stop[row]].to_pylist()

    words = table.column("word").to_pylist()
    priority = table.column("priority").to_numpy()
    blocks_, sentence = table.column("block").to_numpy(), table.column("sentence").to_numpy()
    start, stop, position = (table.column(c).to_numpy() for c in ("start", "stop", "position"))
    out: dict[str, list] = {"word": [], "occurrences": [], "context": [], "position": []}
    taken = 0
    same: list[list[str]] = []  # texts kept so far with the current priority (equal texts: equal priority)
    for row, word in enumerate(words):
        new_word = not row or word != words[row - 1]
        if new_word:
            taken = 0
        if taken == cap:
            continue
        if new_word or priority[row] != priority[row - 1]:
            same = []
        context = text(row)
        if context in same:
            continue  # the same window in a later block
        same.append(context)
        out["word"].append(word)
        out["occurrences"].append(occurrences[word])
        out["context"].append(context)
        out["position"].append(int(position[row]))
        taken += 1
    schema = contexts_schema().remove(0)
    result = pa.table({k: pa.array(v, schema.field(k).type) for k, v in out.items()}, schema=schema)
    write_arrow(reduce_file(folder, part), result)
    return result.num_rows, len(dict.fromkeys(out["word"]))


def word_bounds(samples: Sequence[str], parts: int) -> list[tuple[str | None, str | None]]:
    """``parts`` (at most) word ranges ``[lo, hi)`` splitting the sampled words into about equal shares; the
    first starts and the last ends open."""
    pooled = sorted(set(samples))
    cuts = sorted({pooled[len(pooled) * i // parts] for i in range(1, parts)}) if pooled else []
    edges = [None, *cuts, None]
    return list(zip(edges[:-1], edges[1:]))


def build_contexts_index_ray(name: str, corpora: str | Sequence[str], *, home: str | Path | None = None,
                             words: Iterable[str] | None = None, window: int = DEFAULT_WINDOW,
                             cap: int = DEFAULT_CAP, seed: int = 0, lowercase: bool = True,
                             max_sentences: int | None = None, shard_rows: int = DEFAULT_SHARD_ROWS,
                             replace: bool = False, address: str | None = None,
                             block_sentences: int = DEFAULT_BLOCK_SENTENCES, block_bytes: int | None = None,
                             reducers: int | None = None) -> dict:
    """:func:`lexprobe.kinds.contexts.build_contexts_index` with the work on Ray (map over corpus blocks,
    reduce over word ranges, shards cut by tasks): the same rows, ids and shards. The index home must be on a
    file system every node mounts at the same path. ``reducers``: word ranges (default: the cluster's CPUs).
    Returns the local build's summary plus ``blocks``, ``reducers``, ``map_s``, ``reduce_s``, ``commit_s`` and
    ``map_bytes`` (what the map tasks wrote)."""
    if window < 1 or cap < 1:
        raise LexprobeError(f"window and cap must be at least 1 (got window {window}, cap {cap})")
    if block_sentences < 1 or (block_bytes is not None and block_bytes < 1):
        raise LexprobeError("block sizes must be at least 1")
    home = home_path(home)
    corpora = [corpora] if isinstance(corpora, str) else list(corpora)
    if not corpora:
        raise LexprobeError("index contexts: give at least one corpus")
    check_new_index(home, name, replace=replace)
    origins = [provenance(spec) for spec in corpora]
    vocabulary = None
    if words is not None:
        vocabulary = {w.lower() if lowercase else w for w in words}
        if not vocabulary:
            raise LexprobeError("index contexts: the word list is empty")
    ray = connect(address)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    map_task = ray.remote(num_cpus=1, max_retries=MAX_RESTARTS)(map_block)
    reduce_task = ray.remote(num_cpus=1, max_retries=MAX_RESTARTS)(reduce_range)
    vocab_ref = ray.put(vocabulary)
    settings = {"window": window, "cap": cap, "seed": seed, "lowercase": lowercase}
    t0 = time.perf_counter()
    with write_lock(home, name), StoreWriter(home, name, kind=KIND, dim=2 * window + 1, schema=contexts_schema(),
                                             shard_rows=shard_rows) as writer:
        folder = writer.tmp
        for sub in (MAP_DIR, REDUCE_DIR):
            (folder / sub).mkdir()
        results, pending = [], deque()
        progress = bar(desc=f"contexts {name} on ray", unit="block")
        for spec in corpora:
            for source in block_sources(spec, max_sentences, block_sentences, block_bytes, cpus):
                if len(pending) >= 2 * cpus:  # the driver holds a bounded number of blocks
                    ray.wait([pending.popleft()], num_returns=1)
                    progress.update()
                ref = map_task.remote(str(folder), len(results), source, vocabulary=vocab_ref, **settings)
                results.append(ref)
                pending.append(ref)
        results = get(results)
        progress.close()
        map_s = time.perf_counter() - t0
        if not sum(r["windows"] for r in results):
            raise LexprobeError(f"{', '.join(corpora)}: no context window for any "
                                f"{'word of the list' if vocabulary is not None else 'word'}")
        t1 = time.perf_counter()
        ranges = word_bounds([w for r in results for w in r["sample"]], reducers or cpus)
        reduced = get([reduce_task.remote(str(folder), part, lo, hi, len(results), cap)
                       for part, (lo, hi) in enumerate(ranges)])
        cut = ShardCutter(shard_rows)
        jobs = [job for rows, _ in reduced for job in cut.add(rows)] + cut.finish()
        writer.shards = get(cut_shards(ray, writer, jobs, lambda part: reduce_file(folder, part)))
        writer.count = cut.rows
        reduce_s = time.perf_counter() - t1
        t2 = time.perf_counter()
        map_bytes = sum(f.stat().st_size for f in (folder / MAP_DIR).iterdir())
        for sub in (MAP_DIR, REDUCE_DIR):
            shutil.rmtree(folder / sub)
        n_words = sum(w for _, w in reduced)
        sentences, tokens = sum(r["sentences"] for r in results), sum(r["tokens"] for r in results)
        one_word = sum(r["one_word_sentences"] for r in results)
        dropped = sum(r["occurrences"] for r in results) - one_word - writer.count
        missing = len(vocabulary) - n_words if vocabulary is not None else None
        meta = {"corpora": origins, **settings, "max_sentences": max_sentences,
                "vocabulary": len(vocabulary) if vocabulary is not None else None, "words": n_words,
                "windows": writer.count, "sentences": sentences, "tokens": tokens, "words_without_windows": missing,
                **({"one_word_sentences": one_word} if one_word else {}), "dropped": dropped,  # as the local build
                "sampling": "bottom-k by keyed BLAKE2b of the window text (seeded, deduplicated)",
                "engine": {"engine": "ray", "blocks": len(results), "reducers": len(ranges)}}
        writer.commit(source=" + ".join(o["corpus"] for o in origins), normalization="none", meta=meta,
                      history=[{"op": "build", "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "rows": writer.count}])
        commit_s = time.perf_counter() - t2
    return {"name": name, "words": n_words, "windows": writer.count, "sentences": sentences, "tokens": tokens,
            "words_without_windows": missing, "tokens_per_s": tokens / max(map_s, 1e-9),
            "seconds": round(time.perf_counter() - t0, 2), "one_word_sentences": one_word, "dropped": dropped,
            "blocks": len(results), "reducers": len(ranges), "map_s": round(map_s, 3),
            "reduce_s": round(reduce_s, 3), "commit_s": round(commit_s, 3), "map_bytes": map_bytes}
