"""The contexts index: for every word of a vocabulary (or every word), its context windows in a corpus, the
material Attentive Mimicking infers a word's embedding from (Schick & Schuetze, "Rare words", section 3; the
authors' ``preprocess.py`` keeps at most 1,000 distinct windows of +-25 words a word).

Layout (store kind ``contexts``, see :mod:`lexprobe.core.store`): one row per kept window, ``id``, ``word``,
``occurrences`` (how often the word occurs in the corpora, every occurrence counted, before deduplication and
the cap: AM's instances per word depend on it), ``context`` (the window's words, the word itself included) and
``position`` (where the word sits in ``context``: a consumer removes it, as AM does, or marks it). Rows are sorted
by word; a word's windows come in a seeded random order, so its first k windows are a uniform sample of k.
The manifest's ``dim`` is the longest window a row can hold (2 x window + 1 words); ``meta`` names the corpora
(resolved spec and SHA-256 of their files), the window, the cap, the seed and the counts.

How windows are chosen:

- A window is the ``window`` words on each side of an occurrence inside its sentence (the sentence is the unit
  every corpus reader gives; the authors split lines at " ."). The authors' slice ``words[i-25:i+25]`` keeps 24
  words on the right; here both sides get ``window`` words.
- Words are lowercased first (``lowercase=True``), as the authors lowercased their corpus.
- Deduplicated: the same window text counts once (the authors kept a set of window strings per word).
- Over the cap, a seeded uniform sample of the distinct windows: each distinct window gets a priority, a keyed
  64-bit BLAKE2 hash of its text (key: the seed), and a word keeps the ``cap`` windows of smallest priority
  (bottom-k sampling, a form of reservoir sampling). Memory per word is bounded by the cap, not by the corpus; a
  repeated window gets its own priority again, so duplicates never enter; and the sample does not depend on the
  order of the corpus. The authors kept the first 1,000 windows of their shuffled corpus.
- Sentences of one word give no window (nothing around the word; the authors dropped one-word lines). Without a
  vocabulary, tokens with no letter or digit (punctuation) get no windows.

Corpora stream where they can: a plain-text corpus (``text:PATH``) is read line by line; the annotated corpora
(SemCor, the WSD sets, STREUSLE, JSONL) are read whole by their readers, as everywhere else. The build is atomic,
locked and verified like every index (:class:`~lexprobe.core.store.StoreWriter`).
"""

from __future__ import annotations

import hashlib
import heapq
import time
from collections import Counter
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core.errors import LexprobeError
from ..core.progress import bar
from ..core.store import DEFAULT_SHARD_ROWS, IndexView, StoreWriter, check_new_index, home_path, write_lock
from ..sources.datasets.corpora import parse_spec, provenance, read_corpus
from ..sources.datasets.plain_text import iter_sentences

KIND = "contexts"
DEFAULT_WINDOW = 25  # the authors' max_context_size
DEFAULT_CAP = 1000   # the authors' max_contexts_per_word
_WRITE_ROWS = 50_000


def contexts_schema() -> pa.Schema:
    return pa.schema([
        ("id", pa.int64()),
        ("word", pa.string()),
        ("occurrences", pa.int64()),        # the word's occurrences in the corpora (all, before dedup and cap)
        ("context", pa.list_(pa.string())),  # the window's words, the word itself included (SQL: WINDOW is reserved)
        ("position", pa.int32()),           # the word's place in ``context``
    ])


def corpus_sentences(spec: str, max_sentences: int | None = None) -> Iterator[list[str]]:
    """The words of each sentence of a corpus (``KIND:PATH`` or a data-home name), the first ``max_sentences``
    only when given. ``text:`` corpora are streamed; the others are read whole by their readers."""
    kind, path = parse_spec(spec)
    if kind == "text":
        sentences = (words for _, words in iter_sentences(path))
    else:
        column = read_corpus(spec).sentences.column("words")
        sentences = (words for chunk in column.chunks for words in chunk.to_pylist())
    for n, words in enumerate(sentences):
        if max_sentences is not None and n >= max_sentences:
            return
        yield words


class WindowSampler:
    """Per word, the ``cap`` distinct windows of smallest seeded priority (see the module doc), and every
    word's occurrence count. ``vocabulary``: only these words (already lowercased when the corpus is)."""

    def __init__(self, *, window: int = DEFAULT_WINDOW, cap: int = DEFAULT_CAP, seed: int = 0,
                 vocabulary: Iterable[str] | None = None):
        if window < 1 or cap < 1:
            raise LexprobeError(f"window and cap must be at least 1 (got window {window}, cap {cap})")
        self.window, self.cap = window, cap
        self.key = int(seed).to_bytes(8, "little")
        self.vocabulary = set(vocabulary) if vocabulary is not None else None
        self.occurrences: Counter = Counter()
        self.kept: dict[str, dict[tuple, tuple[int, int, int, int]]] = {}  # word -> window -> (priority, position,
        self.sentences = 0                                                #   sentence number, window start)
        self._heaps: dict[str, list] = {}                         # word -> max-heap of (-priority, window)
        self._eligible: dict[str, bool] = {}
        self.counts = Counter()  # duplicates, over_cap, one_word_sentences

    def priority(self, window: tuple) -> int:
        """The window's seeded priority: a keyed 64-bit BLAKE2b hash of its words."""
        digest = hashlib.blake2b("\x1f".join(window).encode("utf-8", "surrogatepass"), digest_size=8, key=self.key)
        return int.from_bytes(digest.digest(), "little")

    def _wanted(self, word: str) -> bool:
        ok = self._eligible.get(word)
        if ok is None:
            ok = word in self.vocabulary if self.vocabulary is not None else any(c.isalnum() for c in word)
            self._eligible[word] = ok
        return ok

    def add(self, words: Sequence[str]) -> None:
        """Take the windows of one sentence."""
        n, w, cap, sentence = len(words), self.window, self.cap, self.sentences
        kept_by_word, heaps, occurrences, wanted = self.kept, self._heaps, self.occurrences, self._wanted
        duplicates = over_cap = 0
        self.sentences += 1
        for i, word in enumerate(words):
            if not wanted(word):
                continue
            occurrences[word] += 1
            if n == 1:
                self.counts["one_word_sentences"] += 1
                continue
            start = i - w if i > w else 0
            window = tuple(words[start:i + w + 1])
            kept = kept_by_word.get(word)
            if kept is None:
                kept = kept_by_word[word] = {}
                heaps[word] = []
            elif window in kept:
                duplicates += 1
                continue
            rank = self.priority(window)
            heap = heaps[word]
            if len(heap) < cap:
                heapq.heappush(heap, (-rank, window))
            elif rank < -heap[0][0]:
                del kept[heapq.heapreplace(heap, (-rank, window))[1]]
                over_cap += 1
            else:
                over_cap += 1
                continue
            kept[window] = (rank, i - start, sentence, start)
        self.counts["duplicates"] += duplicates
        self.counts["over_cap"] += over_cap

    def rows(self) -> Iterator[tuple[str, int, list[tuple], list[int]]]:
        """(word, occurrences, windows, positions) for every word with a window, words sorted, each word's
        windows by priority."""
        for word in sorted(self.kept):
            ordered = sorted(self.kept[word].items(), key=lambda item: item[1][0])
            yield word, self.occurrences[word], [w for w, _ in ordered], [v[1] for _, v in ordered]

    def references(self) -> pa.Table:
        """Every kept window as a reference into the sentences given to :meth:`add` (numbered from 0): ``word``,
        ``priority``, ``sentence``, ``start``, ``stop`` (the window is that sentence's words ``start:stop``) and
        ``position``; sorted by word, then priority. A sample of windows without their text, for merging the
        samples of several parts of a corpus (the Ray build)."""
        rows = [(word, *v, v[3] + len(window)) for word in sorted(self.kept)
                for window, v in sorted(self.kept[word].items(), key=lambda item: item[1][0])]
        word, priority, position, sentence, start, stop = zip(*rows) if rows else ((),) * 6
        return pa.table({"word": pa.array(word, pa.string()), "priority": pa.array(priority, pa.uint64()),
                         "sentence": pa.array(sentence, pa.int64()), "start": pa.array(start, pa.int32()),
                         "stop": pa.array(stop, pa.int32()), "position": pa.array(position, pa.int32())})


def build_contexts_index(name: str, corpora: str | Sequence[str], *, home: str | Path | None = None,
                         words: Iterable[str] | None = None, window: int = DEFAULT_WINDOW, cap: int = DEFAULT_CAP, seed: int = 0, lowercase: bool = True,
                         max_sentences: int | None = None, shard_rows: int = DEFAULT_SHARD_ROWS,
                         replace: bool = False) -> dict:
    """Collect the context windows of ``words`` (every word when None) in ``corpora`` (``KIND:PATH`` specs or
    data-home names) and write the contexts index ``name`` atomically (an existing one only with ``replace``).
    ``max_sentences``: only the first N sentences of each corpus. Returns a summary with counts and tokens/s."""
    home = home_path(home)
    corpora = [corpora] if isinstance(corpora, str) else list(corpora)
    if not corpora:
        raise LexprobeError("index contexts: give at least one corpus")
    check_new_index(home, name, replace=replace)
    origins = [provenance(spec) for spec in corpora]  # every path checked before the work
    vocabulary = None
    if words is not None:
        vocabulary = {w.lower() if lowercase else w for w in words}
        if not vocabulary:
            raise LexprobeError("index contexts: the word list is empty")
    sampler = WindowSampler(window=window, cap=cap, seed=seed, vocabulary=vocabulary)
    t0 = time.perf_counter()
    tokens = sentences = 0
    with write_lock(home, name):
        progress = bar(desc=f"contexts {name}", unit="sentence")
        for spec in corpora:
            for sentence in corpus_sentences(spec, max_sentences):
                sampler.add([w.lower() for w in sentence] if lowercase else sentence)
                tokens += len(sentence)
                sentences += 1
                if sentences % 1000 == 0:
                    progress.update(1000)
        progress.close()
        collect_seconds = time.perf_counter() - t0
        if not sampler.kept:
            raise LexprobeError(f"{', '.join(corpora)}: no context window for any "
                                f"{'word of the list' if vocabulary is not None else 'word'}")
        windows = 0
        with StoreWriter(home, name, kind=KIND, dim=2 * window + 1, schema=contexts_schema(),
                         shard_rows=shard_rows) as writer:
            batch: dict[str, list] = {k: [] for k in ("word", "occurrences", "window", "position")}
            for word, count, kept, positions in sampler.rows():
                batch["word"] += [word] * len(kept)
                batch["occurrences"] += [count] * len(kept)
                batch["window"] += kept
                batch["position"] += positions
                if len(batch["word"]) >= _WRITE_ROWS:
                    windows += _write_rows(writer, batch, windows)
            windows += _write_rows(writer, batch, windows)
            missing = len(vocabulary - set(sampler.kept)) if vocabulary is not None else None
            meta = {"corpora": origins, "window": window, "cap": cap, "seed": seed, "lowercase": lowercase,
                    "max_sentences": max_sentences, "vocabulary": len(vocabulary) if vocabulary is not None else None,
                    "words": len(sampler.kept), "windows": windows, "sentences": sentences, "tokens": tokens,
                    "words_without_windows": missing, **{k: int(v) for k, v in sampler.counts.items()},
                    "sampling": "bottom-k by keyed BLAKE2b of the window text (seeded, deduplicated)"}
            writer.commit(source=" + ".join(o["corpus"] for o in origins), normalization="none", meta=meta,
                          history=[{"op": "build", "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "rows": windows}])
    seconds = time.perf_counter() - t0
    return {"name": name, "words": len(sampler.kept), "windows": windows, "sentences": sentences, "tokens": tokens,
            "words_without_windows": missing, "tokens_per_s": tokens / max(collect_seconds, 1e-9),
            "seconds": round(seconds, 2), **{k: int(v) for k, v in sampler.counts.items()}}


def word_spans(tables: Sequence[pa.Table]) -> dict[str, tuple[int, int]]:
    """The row span of each word in consecutive tables sorted by word (the shards of a contexts index)."""
    spans: dict[str, tuple[int, int]] = {}
    offset = 0
    for table in tables:
        column = table.column("word").combine_chunks() if table.num_rows else None
        if column is not None:
            change = pc.not_equal(column.slice(1), column.slice(0, len(column) - 1))
            starts = np.r_[0, np.flatnonzero(change.to_numpy(zero_copy_only=False)) + 1]
            stops = np.r_[starts[1:], len(column)]
            for word, a, b in zip(column.take(pa.array(starts)).to_pylist(), starts.tolist(), stops.tolist()):
                first = spans.get(word, (offset + a,))[0]  # a word may run on from the shard before
                spans[word] = (first, offset + b)
        offset += table.num_rows
    return spans


def _write_rows(writer: StoreWriter, batch: dict[str, list], first_id: int) -> int:
    n = len(batch["word"])
    if n:
        windows = batch["window"]
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum([len(w) for w in windows], out=offsets[1:])
        flat = pa.array([word for window in windows for word in window], pa.string())
        writer.write(pa.table({"id": pa.array(np.arange(first_id, first_id + n, dtype=np.int64)),
                               "word": pa.array(batch["word"], pa.string()),
                               "occurrences": pa.array(batch["occurrences"], pa.int64()),
                               "context": pa.ListArray.from_arrays(pa.array(offsets), flat),
                               "position": pa.array(batch["position"], pa.int32())}, schema=contexts_schema()))
    for values in batch.values():
        values.clear()
    return n


class ContextIndex(IndexView):
    """An open contexts index: each word's windows (a seeded random order, so the first k are a sample of k)."""

    kind = KIND

    @cached_property
    def _spans(self) -> dict[str, tuple[int, int]]:
        """word -> (first row, stop row), found shard by shard from the memory-mapped ``word`` column: only the
        distinct words are held, never the windows nor a Python string per row."""
        return word_spans(self.store.tables)

    @property
    def words(self) -> list[str]:
        """Every word with at least one window, sorted."""
        return list(self._spans)

    @property
    def settings(self) -> dict:
        return self.store.meta

    def __contains__(self, word: str) -> bool:
        return word in self._spans

    def rows_of(self, word: str, k: int | None = None) -> np.ndarray:
        """Row ids of ``word``'s windows (its first ``k`` when given; none for an unknown word)."""
        start, stop = self._spans.get(word, (0, 0))
        if k is not None:
            stop = min(stop, start + max(k, 0))
        return np.arange(start, stop, dtype=np.int64)

    def occurrences(self, word: str) -> int:
        """How often ``word`` occurs in the corpora (0 when never)."""
        rows = self.rows_of(word, 1)
        return int(self.store.column("occurrences")[int(rows[0])].as_py()) if len(rows) else 0

    def windows(self, word: str, k: int | None = None) -> list[list[str]]:
        """``word``'s windows (its first ``k``), each a list of words with the word itself in it."""
        rows = self.rows_of(word, k)
        return self.store.table(["context"]).take(pa.array(rows)).column("context").to_pylist() if len(rows) else []

    def positions(self, word: str, k: int | None = None) -> list[int]:
        """Where ``word`` sits in each of its windows (its first ``k``)."""
        rows = self.rows_of(word, k)
        return self.store.table(["position"]).take(pa.array(rows)).column("position").to_pylist() if len(rows) else []

    def select(self, words: Iterable[str], k: int | None = None,
               columns: Sequence[str] = ("word", "occurrences", "context")) -> pa.Table:
        """The rows of ``words`` (each word's first ``k`` windows; unknown words have none), in the order of
        ``words``: read from the memory-mapped shards, so a trainer holds the windows it needs, not the index."""
        rows = [self.rows_of(w, k) for w in words]
        rows = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        return self.store.table(list(columns)).take(pa.array(rows, pa.int64()))

    def _repr_detail(self) -> str:
        m = self.settings
        return f"{m.get('words')} words, window {m.get('window')}, cap {m.get('cap')}"

    def __repr__(self) -> str:
        return f"<ContextIndex {self.name}: {self.store.count} windows, {self._repr_detail()}>"
