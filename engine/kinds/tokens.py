"""The token index: contextual vectors of a sense-annotated corpus's targets, one index per
(corpus, model, layer(s), pooling).

Layout (store kind ``tokens``, see :mod:`lexprobe.core.store`):

- shards: one row per target that got a vector: ``id`` (row id = FAISS id), the target columns of
  :data:`lexprobe.sources.datasets.corpus.TARGET_SCHEMA` (instance_id, corpus, split, document, sentence_id, position,
  length, surface, lemma, pos, sense, senses) and ``vector`` (fixed-size-list float32, the raw pooled vector);
- ``sentences.arrow``: every sentence of the corpus once (``SENTENCE_SCHEMA``: sentence_id, corpus, split,
  document, words), so a hit can be shown in context with its target marked;
- ``faiss.index``: the unit vectors (inner product = cosine), ids = row ids;
- manifest ``meta``: corpus spec and name, model, model path, layers, pooling, dim, max_length, counts,
  counted skips, encoder statistics and the FAISS options.

Only sense-annotated targets are stored, not every word: the rankings query and rank annotated targets
only, and the other words would triple the shards and the FAISS index (SemCor: 226k targets of 820k words);
any other word can be embedded on demand with :func:`encode_sentences` under the index's own settings.

API: :func:`build_token_index` writes an index; :meth:`TokenIndex.open` reads one (metadata table, raw and
unit vectors, sentences, the FAISS :class:`lexprobe.core.vector_index.VectorIndex`); :func:`encode_sentences` (or
:meth:`TokenIndex.encode`) embeds ad-hoc sentences with the same settings, for queries.
"""

from __future__ import annotations

import time
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core import vector_index as vindex
from ..sources.datasets.corpus import SENTENCE_SCHEMA, TARGET_SCHEMA, Corpus, read_corpus
from ..sources.encoder import DEFAULT_BATCH_TOKENS, TokenEncoder
from ..core.errors import CorruptIndexError, LexprobeError
from ..sources.models import DEFAULT_ENCODER
from ..core.progress import bar
from ..core.store import DEFAULT_SHARD_ROWS, StoreWriter, vector_array, vector_type, write_lock

KIND = "tokens"
FAISS_FILE = "faiss.index"
SENTENCES_FILE = "sentences.arrow"


def token_schema(dim: int) -> pa.Schema:
    """Shard schema: row id, the target columns, the raw vector."""
    return pa.schema([("id", pa.int64()), *TARGET_SCHEMA, ("vector", vector_type(dim))])


def limit_corpus(corpus: Corpus, max_sentences: int | None) -> Corpus:
    """The first ``max_sentences`` sentences of a corpus and their targets (a subset for tests and trials)."""
    if max_sentences is None or max_sentences >= corpus.sentences.num_rows:
        return corpus
    sentences = corpus.sentences.slice(0, max_sentences)
    keep = pc.is_in(corpus.targets.column("sentence_id"), value_set=sentences.column("sentence_id"))
    return Corpus(corpus.name, sentences, corpus.targets.filter(keep), corpus.skipped)


def encode_corpus(encoder: TokenEncoder, corpus: Corpus, *, desc: str = "encode"):
    """Vectors of all targets of ``corpus`` (target table order): ``(vectors, ok, stats)``. Sentences without
    targets are not run through the model."""
    targets = corpus.targets
    sentence_ids = targets.column("sentence_id").to_pylist()
    order_ids = list(dict.fromkeys(sentence_ids))  # sentences with targets, in first-target order
    row_of = {s: i for i, s in enumerate(corpus.sentences.column("sentence_id").to_pylist())}
    missing = [s for s in order_ids if s not in row_of]
    if missing:
        raise LexprobeError(f"corpus {corpus.name}: target sentence {missing[0]!r} is not in the sentence table")
    all_words = corpus.sentences.column("words")
    words = [all_words[row_of[s]].as_py() for s in order_ids]
    slot = {s: i for i, s in enumerate(order_ids)}
    spans: list[list[tuple[int, int]]] = [[] for _ in order_ids]
    where: list[tuple[int, int]] = []
    for s, p, n in zip(sentence_ids, targets.column("position").to_pylist(), targets.column("length").to_pylist()):
        spans[slot[s]].append((p, n))
        where.append((slot[s], len(spans[slot[s]]) - 1))
    vectors, ok, stats = encoder.encode(words, spans, desc=desc)
    # encoder output is in (sentence slot, span) order; map back to target table order
    starts = np.cumsum([0] + [len(s) for s in spans])[:-1]
    back = np.array([starts[a] + b for a, b in where], dtype=np.int64)
    if (back == np.arange(len(back))).all():  # targets already in sentence order (the usual case): no copy
        return vectors, ok, stats
    return vectors[back], ok[back], stats


def build_token_index(home: Path, name: str, model: str = DEFAULT_ENCODER, corpus_spec: str = "", *,
                      layers: Sequence[int] | None = None, pooling: str = "mean",
                      batch_tokens: int = DEFAULT_BATCH_TOKENS, max_sentences: int | None = None,
                      threads: int | None = None, params: vindex.IndexParams | None = None,
                      shard_rows: int = DEFAULT_SHARD_ROWS, seed: int = 0) -> dict:
    """Read ``corpus_spec`` (``KIND:PATH``), embed its targets with ``model`` and write token index ``name``
    atomically. Returns a summary: counts, counted skips, encoder statistics, seconds."""
    params = params or vindex.IndexParams()
    if params.index_type not in vindex.INDEX_TYPES:
        raise LexprobeError(f"unknown index type {params.index_type!r} (choose from {', '.join(vindex.INDEX_TYPES)})")
    t0 = time.perf_counter()
    corpus = limit_corpus(read_corpus(corpus_spec), max_sentences)
    encoder = TokenEncoder(model, layers=layers, pooling=pooling, batch_tokens=batch_tokens, threads=threads)
    with write_lock(home, name):
        vectors, ok, stats = encode_corpus(encoder, corpus, desc=f"index {name}")
        skipped = corpus.skipped
        for reason, n in stats.lost_targets.items():
            first = corpus.targets.column("instance_id")[int(np.flatnonzero(~ok)[0])].as_py()
            skipped.add(reason, first, n)
        if not ok.all():
            kept, vectors = corpus.targets.filter(pa.array(ok)), vectors[ok]
        else:
            kept = corpus.targets
        if not len(kept):
            raise LexprobeError(f"{corpus_spec}: no target could be embedded ({skipped.summary()})")
        ids = np.arange(len(kept), dtype=np.int64)
        table = kept.add_column(0, "id", pa.array(ids)).append_column("vector", vector_array(vectors))
        with StoreWriter(home, name, kind=KIND, dim=encoder.dim, schema=token_schema(encoder.dim),
                         shard_rows=shard_rows) as writer:
            writer.write(table)
            with pa.OSFile(writer.side_file("sentences", SENTENCES_FILE), "wb") as sink, \
                    pa.ipc.new_file(sink, SENTENCE_SCHEMA) as ipc:
                ipc.write_table(corpus.sentences.cast(SENTENCE_SCHEMA))
            with bar(total=1, desc="faiss", unit="index") as b:
                unit, _ = vindex.unit_rows(vectors)
                vindex.save(vindex.build(unit, ids, params, seed=seed), writer.side_file("faiss", FAISS_FILE))
                b.update()
            meta = {"corpus": corpus_spec, "corpus_name": corpus.name, **encoder.settings(),
                    "targets": len(kept), "sentences": corpus.sentences.num_rows,
                    "max_sentences": max_sentences, "skipped": skipped.as_dict(), "encode": stats.as_dict(),
                    "index": params.as_dict(), "seed": seed}
            writer.commit(source=corpus_spec, normalization="faiss: unit vectors, inner product; shards: raw vectors",
                          meta=meta, history=[{"op": "build", "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                               "rows": len(kept)}])
    return {"name": name, "corpus": corpus.name, "targets": len(kept), "sentences": corpus.sentences.num_rows,
            "dim": encoder.dim, "layers": list(encoder.layers), "pooling": pooling, "skipped": skipped,
            "encode": stats, "seconds": round(time.perf_counter() - t0, 2)}

class TokenIndex(vindex.SearchableView):
    """An open token index: the verified store, its FAISS index, its sentences and settings."""

    kind = KIND

    @property
    def settings(self) -> dict:
        """Corpus, model, layers, pooling and counts the index was built with (the manifest's meta)."""
        return self.store.meta

    @cached_property
    def table(self) -> pa.Table:
        """Metadata of every row (all columns but ``vector``), row ``i`` = id ``i``."""
        return self.store.table([c for c in self.store.tables[0].column_names if c != "vector"])

    @cached_property
    def sentences(self) -> pa.Table:
        """Every sentence once: sentence_id, corpus, split, document, words (memory-mapped)."""
        path = self.store.file_path("sentences")
        try:
            return pa.ipc.open_file(pa.memory_map(path, "r")).read_all()
        except (pa.ArrowInvalid, OSError) as exc:
            raise CorruptIndexError(f"{self.store.path / SENTENCES_FILE}: not a readable Arrow file ({exc})") from None

    @cached_property
    def sentence_row(self) -> dict[str, int]:
        """sentence_id -> row of :attr:`sentences`."""
        return {s: i for i, s in enumerate(self.sentences.column("sentence_id").to_pylist())}

    def words_of(self, sentence_ids: Sequence[str]) -> list[list[str]]:
        """The words of some sentences."""
        column = self.sentences.column("words")
        return [column[self.sentence_row[s]].as_py() for s in sentence_ids]

    def encoder(self, **overrides) -> TokenEncoder:
        """A :class:`TokenEncoder` with this index's model, layers and pooling (to embed queries alike)."""
        m = self.settings
        return TokenEncoder(overrides.pop("model", m["model"]), layers=overrides.pop("layers", m["layers"]),
                            pooling=overrides.pop("pooling", m["pooling"]), **overrides)

    def encode(self, sentences: Sequence[Sequence[str]], spans: Sequence[Sequence[tuple[int, int]]]) -> np.ndarray:
        """Raw vectors of target spans in ad-hoc sentences, made exactly as this index's vectors were."""
        if not hasattr(self, "_encoder"):
            self._encoder = self.encoder()
        return _encoded(self._encoder, sentences, spans)


def encode_sentences(model: str | TokenEncoder, sentences: Sequence[Sequence[str]],
                     spans: Sequence[Sequence[tuple[int, int]]], *, layers: Sequence[int] | None = None,
                     pooling: str = "mean") -> np.ndarray:
    """Raw vectors (n_spans, dim) of target spans ``(position, length)`` in pre-split sentences; a span the
    model cannot embed (past its length limit) is an error. ``model`` is a name or a loaded encoder."""
    encoder = model if isinstance(model, TokenEncoder) else TokenEncoder(model, layers=layers, pooling=pooling)
    return _encoded(encoder, sentences, spans)


def _encoded(encoder: TokenEncoder, sentences, spans) -> np.ndarray:
    vectors, ok, stats = encoder.encode(sentences, spans, desc="query")
    if not ok.all():
        reason = ", ".join(stats.lost_targets) or "no vector"
        raise LexprobeError(f"query target {int(np.argmin(ok))} could not be embedded ({reason})")
    return vectors
