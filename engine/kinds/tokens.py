"""The token index: contextual vectors of a sense-annotated corpus's targets, one index per
(corpus, model, layer(s), pooling).

Layout (store kind ``tokens``, see :mod:`lexprobe.core.store`):

- shards: one row per target that got a vector: ``id`` (row id = FAISS id), the target columns of
  :data:`lexprobe.sources.datasets.corpus.TARGET_SCHEMA` (instance_id, corpus, split, document, sentence_id, position,
  length, surface, lemma, pos, sense, senses) and ``vector`` (fixed-size-list float32, the raw pooled vector);
- ``sentences.arrow``: every sentence of the corpus once (``SENTENCE_SCHEMA``: sentence_id, corpus, split,
  document, words), so a hit can be shown in context with its target marked;
- ``faiss.index``: the unit vectors (inner product = cosine), ids = row ids;
- manifest ``meta``: corpus spec (its path resolved; ``corpus_typed`` as given, ``corpus_sha256`` over its
  files) and name, model, model path, layers, pooling, dim, max_length, counts, counted skips, encoder
  statistics and the FAISS options.

Only sense-annotated targets are stored, not every word: the rankings query and rank annotated targets
only, and the other words would triple the shards and the FAISS index (SemCor: 226k targets of 820k words);
any other word can be embedded on demand with :func:`encode_sentences` under the index's own settings.

API: :func:`build_token_index` writes an index; :meth:`TokenIndex.open` reads one (metadata table, raw and
unit vectors, sentences, the FAISS :class:`lexprobe.core.vector_index.VectorIndex`); :func:`encode_sentences` (or
:meth:`TokenIndex.encode`) embeds ad-hoc sentences with the same settings, for queries.
"""

from __future__ import annotations

import time
import warnings
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core import vector_index as vindex
from ..core.conventions import old_order
from ..sources.datasets.corpora import provenance, read_corpus
from ..sources.datasets.corpus import SENTENCE_SCHEMA, TARGET_SCHEMA, Corpus
from ..sources.encoder import DEFAULT_BATCH_TOKENS, EncodeStats, TokenEncoder
from ..sources.typed_text import split_words
from ..core.errors import CorruptIndexError, LexprobeError
from ..sources.models import DEFAULT_ENCODER
from ..core.progress import bar
from ..core.store import (DEFAULT_SHARD_ROWS, StoreWriter, check_new_index, home_path, vector_array, vector_type,
                          write_lock)

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


@old_order("home", "name", "model", "corpus_spec")
def build_token_index(name: str, model: str = DEFAULT_ENCODER, corpus_spec: str = "", *,
                      home: str | Path | None = None, layers: Sequence[int] | None = None, pooling: str = "mean",
                      batch_tokens: int = DEFAULT_BATCH_TOKENS, max_sentences: int | None = None,
                      threads: int | None = None, params: vindex.IndexParams | None = None,
                      shard_rows: int = DEFAULT_SHARD_ROWS, seed: int = 0, replace: bool = False, device="auto",
                      dtype="float32") -> dict:
    """Read ``corpus_spec`` (``KIND:PATH``), embed its targets with ``model`` (on ``device``, inference in
    ``dtype``: :class:`lexprobe.sources.encoder.TokenEncoder`) and write token index ``name`` atomically (an
    existing one only with ``replace``). Returns a summary: counts, counted skips, encoder statistics, seconds."""
    home = home_path(home)
    check_new_index(home, name, replace=replace)
    params = params or vindex.IndexParams()
    if params.index_type not in vindex.INDEX_TYPES:
        raise LexprobeError(f"unknown index type {params.index_type!r} (choose from {', '.join(vindex.INDEX_TYPES)})")
    t0 = time.perf_counter()
    origin = provenance(corpus_spec)  # resolved path and content checksum: the index is found again from anywhere
    corpus = limit_corpus(read_corpus(corpus_spec), max_sentences)
    encoder = TokenEncoder(model, layers=layers, pooling=pooling, batch_tokens=batch_tokens, threads=threads,
                           device=device, dtype=dtype)
    with write_lock(home, name):
        encoded = encode_corpus(encoder, corpus, desc=f"index {name}")
        summary = write_token_index(home, name, corpus, [(corpus.targets, *encoded)], settings=encoder.settings(),
                                    corpus_spec=origin["corpus"], max_sentences=max_sentences, params=params,
                                    shard_rows=shard_rows, seed=seed, meta=origin)
    return {**summary, "seconds": round(time.perf_counter() - t0, 2)}


def write_token_index(home: Path, name: str, corpus: Corpus, blocks, *, settings: dict, corpus_spec: str,
                      max_sentences: int | None, params: vindex.IndexParams, shard_rows: int = DEFAULT_SHARD_ROWS,
                      seed: int = 0, meta: dict | None = None) -> dict:
    """Write token index ``name`` from encoded ``blocks`` of ``(targets, vectors, ok, stats)`` that come in
    target-table order (the whole corpus as one block in :func:`build_token_index`, many blocks from the Ray
    build in :mod:`lexprobe.scale`). Rows without a vector are dropped and counted, ids run on from block to
    block, shards are written as the blocks come; then the sentences, the FAISS index over all unit vectors
    and the manifest (encoder ``settings`` and ``meta`` added) are committed atomically. Call it under
    :func:`write_lock`."""
    dim = int(settings["dim"])
    skipped, stats = corpus.skipped, EncodeStats()
    unit = np.empty((corpus.targets.num_rows, dim), np.float32)  # every target at most once: no final concatenation
    first_lost: dict[str, str] = {}
    count = 0
    with StoreWriter(home, name, kind=KIND, dim=dim, schema=token_schema(dim), shard_rows=shard_rows) as writer:
        for targets, vectors, ok, part in blocks:
            stats.add(part)
            if not ok.all():
                first = targets.column("instance_id")[int(np.flatnonzero(~ok)[0])].as_py()
                for reason in part.lost_targets:
                    first_lost.setdefault(reason, first)
                targets, vectors = targets.filter(pa.array(ok)), vectors[ok]
            ids = np.arange(count, count + len(targets), dtype=np.int64)
            writer.write(targets.add_column(0, "id", pa.array(ids)).append_column("vector", vector_array(vectors)))
            unit[count:count + len(targets)] = vindex.unit_rows(vectors)[0]
            count += len(targets)
        for reason, n in stats.lost_targets.items():
            skipped.add(reason, first_lost[reason], n)
        if not count:
            raise LexprobeError(f"{corpus_spec}: no target could be embedded ({skipped.summary()})")
        with pa.OSFile(writer.side_file("sentences", SENTENCES_FILE), "wb") as sink, \
                pa.ipc.new_file(sink, SENTENCE_SCHEMA) as ipc:
            ipc.write_table(corpus.sentences.cast(SENTENCE_SCHEMA))
        with bar(total=1, desc="faiss", unit="index") as b:
            index = vindex.build(unit[:count], np.arange(count, dtype=np.int64), params, seed=seed)
            vindex.save(index, writer.side_file("faiss", FAISS_FILE))
            b.update()
        meta = {"corpus": corpus_spec, "corpus_name": corpus.name, **settings, "targets": count,
                "sentences": corpus.sentences.num_rows, "max_sentences": max_sentences,
                "skipped": skipped.as_dict(), "encode": stats.as_dict(), "index": params.as_dict(), "seed": seed,
                **(meta or {})}
        writer.commit(source=corpus_spec, normalization="faiss: unit vectors, inner product; shards: raw vectors",
                      meta=meta, history=[{"op": "build", "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                           "rows": count}])
    return {"name": name, "corpus": corpus.name, "targets": count, "sentences": corpus.sentences.num_rows,
            "dim": dim, "layers": list(settings["layers"]), "pooling": settings["pooling"], "skipped": skipped,
            "encode": stats}


class NoLemmaInstances(UserWarning):
    """A query by example whose lemma the index has no instance of: every instance was ranked instead (the
    table's metadata ``note`` says the same; the CLI prints it as a note)."""


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
        """A :class:`TokenEncoder` with this index's model, layers, pooling and dtype (to embed queries alike)."""
        m = self.settings
        return TokenEncoder(overrides.pop("model", m["model"]), layers=overrides.pop("layers", m["layers"]),
                            pooling=overrides.pop("pooling", m["pooling"]),
                            dtype=overrides.pop("dtype", m.get("dtype", "float32")), **overrides)

    def encode(self, sentences: Sequence[Sequence[str]], spans: Sequence[Sequence[tuple[int, int]]], *,
               encoder: TokenEncoder | None = None) -> np.ndarray:
        """Raw vectors of target spans in ad-hoc sentences, made exactly as this index's vectors were (by
        ``encoder``, one of :meth:`encoder`'s that a caller keeps, else this view's own, made once)."""
        if encoder is None:
            if not hasattr(self, "_encoder"):
                self._encoder = self.encoder()
            encoder = self._encoder
        return _encoded(encoder, sentences, spans)

    def __repr__(self) -> str:
        return f"<TokenIndex {self.name}: {self.store.count} tokens x {self.dim}, model {self.settings.get('model')}>"

    def query(self, sentence: str | Sequence[str], target: str, k: int = 10, *, same_lemma: bool = True,
              lemma: str | None = None, occurrence: int = 1, definitions: bool = False,
              encoder: TokenEncoder | None = None) -> pa.Table:
        """Query by example: embed ``target`` in ``sentence`` as this index's tokens were embedded, and rank the
        index's instances by cosine. Returns one row per hit: ``rank``, ``score``, ``sense``, (``definition``,)
        ``lemma``, ``pos``, ``sentence`` (the hit's sentence, its target marked ``[[...]]``) and ``instance_id``.

        ``sentence``: a string, split into words as the corpora are (``banks.`` -> ``banks`` ``.``, see
        :mod:`lexprobe.sources.typed_text`), or its words; ``target``: one or more words of it (case-insensitive,
        punctuation at its edges ignored; ``occurrence`` picks among repeats). With ``same_lemma`` only the instances of the
        target's lemma are ranked: ``lemma``, else the lowercased target words joined by ``_`` when the index has
        that lemma, else its WordNet base form the index has most instances of; when the index has none of them,
        every instance is ranked and the table's metadata ``note`` says so. ``definitions`` adds each hit's
        WordNet gloss (empty for labels WordNet cannot resolve, counted in the note). The metadata ``query``
        holds the query sentence with its target marked. ``encoder``: see :meth:`encode` (a server keeps one
        per model for all its views).

        >>> import json, pathlib, tempfile, lexprobe
        >>> from lexprobe.kinds.tokens import build_token_index
        >>> home = pathlib.Path(tempfile.mkdtemp()); corpus = home / "bank.jsonl"
        >>> _ = corpus.write_text("\\n".join(json.dumps({"text": t, "targets": [{"position": p, "sense": s}]})
        ...     for t, p, s in [("we sat on the river bank", 5, "slope"), ("the bank lent us money", 1, "money"),
        ...                     ("she rowed to the bank of the lake", 4, "slope")]))
        >>> _ = build_token_index("bank", "minilm", f"jsonl:{corpus}", home=home)
        >>> index = lexprobe.open_index("bank", home=home)
        >>> index
        <TokenIndex bank: 3 tokens x 384, model minilm>
        >>> index.query("they fished from the bank of the stream", "bank", k=2).column("sense").to_pylist()
        ['slope', 'slope']
        """
        from ..core.vector_index import unit_rows

        if k < 1:
            raise LexprobeError("-k must be at least 1")
        words = split_words(sentence) if isinstance(sentence, str) else list(sentence)
        position, length = find_target(words, target, occurrence)
        notes, restrict = [], None
        if same_lemma:
            lemmas = self.table.column("lemma").to_numpy(zero_copy_only=False)
            wanted = lemma or self.target_lemma(" ".join(words[position:position + length]))
            restrict = np.flatnonzero(lemmas == wanted) if wanted else np.zeros(0, np.int64)
            if not len(restrict):
                if lemma:
                    raise LexprobeError(f"index {self.name!r} has no instance of lemma {lemma!r}")
                notes.append(f"index {self.name!r} has no instance of lemma {target!r} (nor of its WordNet base "
                             f"forms); ranking all {self.store.count} instances")
                warnings.warn(notes[-1], NoLemmaInstances, stacklevel=2)  # a notebook sees it too
                restrict = None
        query, _ = unit_rows(self.encode([words], [[(position, length)]], encoder=encoder))
        scores, ids = self.vectors.search(query, k, restrict=restrict)
        found = ids[0] >= 0
        hits = self.table.take(ids[0][found])
        texts = self.words_of(hits.column("sentence_id").to_pylist())
        columns = {"rank": pa.array(np.arange(1, found.sum() + 1, dtype=np.int64)),
                   "score": pa.array(scores[0][found].astype(np.float64)), "sense": hits.column("sense")}
        if definitions:
            from ..sources.wordnet import definition, load_wordnet

            wordnet = load_wordnet(self.store.path.parent)
            glosses = [definition(wordnet, key) for key in hits.column("sense").to_pylist()]
            if any(g is None for g in glosses):
                notes.append(f"WordNet cannot resolve {sum(g is None for g in glosses)} of the {len(glosses)} sense "
                             "labels; their definition is empty")
            columns["definition"] = pa.array([g or "" for g in glosses], pa.string())
        columns.update({"lemma": hits.column("lemma"), "pos": hits.column("pos"),
                        "sentence": pa.array([mark(w, p, n) for w, p, n in zip(
                            texts, hits.column("position").to_pylist(), hits.column("length").to_pylist())],
                            pa.string()),
                        "instance_id": hits.column("instance_id")})
        return pa.table(columns).replace_schema_metadata(
            {"query": mark(words, position, length), "note": "\n".join(notes)})

    def target_lemma(self, target: str) -> str | None:
        """The index lemma of a target: the lowercased words joined by ``_`` when the index has that lemma, else
        the WordNet base form (any part of speech) the index has most instances of; None when neither exists."""
        plain = "_".join(target.lower().split())
        known, counts = np.unique(self.table.column("lemma").to_numpy(zero_copy_only=False), return_counts=True)
        count = dict(zip(known.tolist(), counts.tolist()))
        if plain in count:
            return plain
        from ..sources.wordnet import base_forms, load_wordnet

        try:
            wordnet = load_wordnet(self.store.path.parent)
        except LexprobeError:  # no WordNet here: no base forms
            return None
        forms = [f for f in base_forms(wordnet, plain) if f in count]
        return max(forms, key=lambda f: (count[f], f)) if forms else None


def mark(words: Sequence[str], position: int, length: int) -> str:
    """The sentence with the target words wrapped in ``[[...]]``."""
    words = list(words)
    return " ".join(words[:position] + ["[[" + " ".join(words[position:position + length]) + "]]"]
                    + words[position + length:])


def find_target(words: Sequence[str], target: str, occurrence: int = 1) -> tuple[int, int]:
    """(position, length) of the ``occurrence``-th match of the target words (case-insensitive; the target is
    split like a typed sentence and punctuation at its edges left out: ``banks.`` is ``banks``) in ``words``."""
    want = [w.lower() for w in split_words(target)]
    while len(want) > 1 and not any(c.isalnum() for c in want[-1]):
        want.pop()
    while len(want) > 1 and not any(c.isalnum() for c in want[0]):
        want.pop(0)
    if not want:
        raise LexprobeError("--target is empty")
    lowered = [w.lower() for w in words]
    hits = [i for i in range(len(words) - len(want) + 1) if lowered[i:i + len(want)] == want]
    if len(hits) < occurrence:
        raise LexprobeError(f"target {target!r} does not occur {'at all' if not hits else f'{occurrence} times'} "
                            f"among the words of the sentence {' '.join(words)!r}")
    return hits[occurrence - 1], len(want)


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
