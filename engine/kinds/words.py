"""The words index: one row per word (id, word, raw vector, norm, frequency rank, origin, source id) in
Arrow shards, and a FAISS index over the unit vectors. New entries (e.g. OTA vectors) are appended as a
new shard and added to FAISS in one atomic step; a replaced word's old row is tombstoned.
"""

from __future__ import annotations

import operator
import time
from functools import cached_property
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from ..core import vector_index as vindex
from ..core.conventions import old_order, renamed
from ..core.errors import LexprobeError
from ..core.progress import bar
from ..core.store import (DEFAULT_SHARD_ROWS, StoreWriter, check_new_index, home_path, vector_array, vector_type,
                          write_lock)
from ..sources.vector_files import first_overflowing_row, read_vectors

KIND = "words"
FAISS_FILE = "faiss.index"


def word_schema(dim: int) -> pa.Schema:
    return pa.schema([
        ("id", pa.int64()),
        ("word", pa.string()),
        ("vector", vector_type(dim)),
        ("norm", pa.float32()),
        ("rank", pa.int64()),        # 1-based position in the source after de-duplication (frequency rank)
        ("origin", pa.string()),     # the source file name or alias, or "ota"
        ("source_id", pa.int64()),   # row in the source file, or the token id for hf: sources
    ])


def _rows_table(dim: int, ids: np.ndarray, words: Sequence[str], matrix: np.ndarray, norms: np.ndarray,
                ranks: np.ndarray, origin: str, source_ids: np.ndarray) -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "word": pa.array(list(words), pa.string()),
        "vector": vector_array(matrix),
        "norm": pa.array(norms, pa.float32()),
        "rank": pa.array(ranks, pa.int64()),
        "origin": pa.array([origin] * len(words), pa.string()),
        "source_id": pa.array(source_ids, pa.int64()),
    }, schema=word_schema(dim))


@old_order("home", "name", "spec")
def build_word_index(name: str, spec: str, *, home: str | Path | None = None, fmt: str = "auto",
                     vocab: str | None = None, limit: int | None = None, lowercase: bool = False,
                     params: vindex.IndexParams | None = None, shard_rows: int = DEFAULT_SHARD_ROWS,
                     seed: int = 0, replace: bool = False) -> dict:
    """Read vectors from ``spec``, write the words index ``name`` atomically; returns a summary. An existing
    index ``name`` is replaced only with ``replace``."""
    home = home_path(home)
    check_new_index(home, name, replace=replace)
    params = params or vindex.IndexParams()
    if params.index_type not in vindex.INDEX_TYPES:
        raise LexprobeError(f"unknown index type {params.index_type!r} (choose from {', '.join(vindex.INDEX_TYPES)})")
    source, chunks = read_vectors(spec, fmt=fmt, vocab=vocab, limit=limit, lowercase=lowercase)
    origin = Path(spec).name if not spec.startswith("hf:") else spec
    t0 = time.perf_counter()
    with write_lock(home, name):
        units: list[np.ndarray] = []
        writer = None
        count = 0
        try:
            progress = bar(total=limit, desc=f"index {name}", unit="word")
            for words, matrix, source_ids in chunks:
                if writer is None:
                    writer = StoreWriter(home, name, kind=KIND, dim=matrix.shape[1],
                                         schema=word_schema(matrix.shape[1]), shard_rows=shard_rows)
                unit, norms = vindex.unit_rows(matrix)
                ids = np.arange(count, count + len(words), dtype=np.int64)
                writer.write(_rows_table(source.dim, ids, words, matrix, norms, ids + 1, origin, source_ids))
                units.append(unit)
                count += len(words)
                progress.update(len(words))
            progress.close()
            if writer is None:
                raise LexprobeError(f"{spec}: no vectors to index")
            with bar(total=1, desc="faiss", unit="index") as b:
                unit = np.concatenate(units)
                index = vindex.build(unit, np.arange(count, dtype=np.int64), params, seed=seed)
                vindex.save(index, writer.side_file("faiss", FAISS_FILE))
                b.update()
            meta = {**source.meta(), "index": params.as_dict(), "seed": seed}
            writer.commit(source=spec, normalization="faiss: unit vectors, inner product; shards: raw vectors",
                          meta=meta, history=[{"op": "build", "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                               "rows": count}])
        finally:
            if writer is not None and not writer.committed:
                writer.abort()
    return {"name": name, "count": count, "dim": source.dim, "duplicates_dropped": source.duplicates,
            "rows_read": source.rows_read, "seconds": round(time.perf_counter() - t0, 2)}

class UnknownWords(LexprobeError):
    """Words not in a words index: every one named (with the case-folded form where the index has it)."""

    def __init__(self, index: "WordIndex", words: Sequence[str], source: str = "query", hint: str = ""):
        self.words = list(dict.fromkeys(words))
        if len(self.words) == 1:
            w, s = self.words[0], index.suggestion(self.words[0])
            what = f"unknown word {w!r} (not in index {index.name!r}{f'; try {s!r}' if s else ''})"
        else:
            what = f"{len(self.words)} unknown words (not in index {index.name!r}): {index.describe(self.words)}"
        super().__init__(f"{source}: {what}" + (f"; {hint}" if hint else ""))


class WordIndex(vindex.SearchableView):
    """An open words index: the verified store plus its FAISS index, with word lookup."""

    kind = KIND

    @cached_property
    def words(self) -> list[str]:
        """Word of each row id (tombstoned rows included)."""
        return self.store.column("word").to_pylist()

    @cached_property
    def word_to_id(self) -> dict[str, int]:
        """Word -> live row id (a replaced word maps to its newest row)."""
        dead = set(self.store.tombstones.tolist())
        return {w: i for i, w in enumerate(self.words) if i not in dead}

    def unit_of(self, ids: np.ndarray) -> np.ndarray:
        """Unit vectors of some row ids (without normalising the whole matrix)."""
        return vindex.unit_rows(self.raw[np.asarray(ids, dtype=np.int64)])[0]

    def ids(self, words: Iterable[str], *, source: str = "query", hint: str = "") -> np.ndarray:
        """Row ids of ``words``; unknown words are one clear error (:class:`UnknownWords`) naming every one,
        with the form the index has where only the case differs (``King`` -> ``king``); ``hint`` ends it."""
        words = list(words)
        out = [self.word_to_id.get(w) for w in words]
        if None in out:
            raise UnknownWords(self, [w for w, i in zip(words, out) if i is None], source, hint)
        return np.asarray(out, dtype=np.int64)

    def suggestion(self, word: str) -> str | None:
        """The form of an unknown ``word`` that the index has when only the case differs: lowercase first (the
        usual lowercased vectors), then capitalised and upper case; None when there is none."""
        for form in (word.lower(), word.casefold(), word.capitalize(), word.upper()):
            if form != word and form in self.word_to_id:
                return form
        return None

    def describe(self, words: Iterable[str]) -> str:
        """``'King' (try 'king'), 'xyzzy'``: unknown words, each once, with their suggestions."""
        out = []
        for w in dict.fromkeys(words):
            s = self.suggestion(w)
            out.append(f"{w!r} (try {s!r})" if s else repr(w))
        return ", ".join(out)

    @renamed(include_self=("exclude_inputs", operator.not_))
    def neighbors(self, words: str | Iterable[str], k: int = 10, *, exclude_inputs: bool = True,
                  restrict_vocab: int | None = None) -> pa.Table:
        """Nearest words by cosine for a batch of words (a str is one word): an Arrow table ``query, rank,
        word, score``, k rows per query in rank order (fewer when fewer words are allowed). The query word
        itself is excluded unless ``exclude_inputs=False``; ``restrict_vocab``: only the N most frequent words.
        Exact for a flat index (:mod:`lexprobe.core.topk`: ties by id), one batched search for all the words.

        >>> lexprobe.open_index("glove").neighbors("king", k=2).column("word").to_pylist()
        ['prince', 'queen']
        """
        words = self._words_arg(words, "neighbors")
        ids = self.ids(words)
        exclude = ids[:, None] if exclude_inputs else None
        unit = self.unit_of(ids)
        zero = ~unit.any(axis=1)
        if zero.any():
            raise LexprobeError(f"word {words[int(np.argmax(zero))]!r} has a zero vector (length below "
                                f"{vindex.MIN_NORM:g}): no direction, so no neighbours by cosine")
        D, I = self.vectors.search(unit, k, exclude=exclude, restrict=restrict_vocab)
        q, r = np.nonzero(I >= 0)
        return pa.table({"query": pa.array(np.asarray(words, dtype=object)[q], pa.string()),
                         "rank": pa.array(r + 1, pa.int64()),
                         "word": pa.array(self.word_array[I[q, r]], pa.string()),
                         "score": pa.array(D[q, r], pa.float32())})

    @cached_property
    def word_array(self) -> np.ndarray:
        """:attr:`words` as an object array, for taking many at once."""
        return np.asarray(self.words, dtype=object)

    def _words_arg(self, words: str | Iterable[str], what: str) -> list[str]:
        """One word or several: a str is one word, never its letters."""
        if isinstance(words, str):
            return [words]
        if isinstance(words, (bytes, np.ndarray)) or not isinstance(words, Iterable):
            raise TypeError(f"{what}: give a word (str) or a list of words, not {type(words).__name__}")
        return list(words)

    def vector(self, word: str) -> np.ndarray:
        """The raw vector of ``word`` (a read-only view into the shards).

        >>> glove = lexprobe.open_index("glove")
        >>> glove.vector("king").shape
        (50,)
        """
        return self.raw[self.ids(self._words_arg(word, "vector"))[0]]

    def similarity(self, w1: str, w2: str) -> float:
        """Cosine similarity of two words (gensim's ``similarity``).

        >>> round(lexprobe.open_index("glove").similarity("king", "queen"), 3)
        0.784
        """
        u = self.unit_of(self.ids([w1, w2]))
        return float(u[0] @ u[1])

    @renamed(topn="k", exclude="exclude_inputs")
    def analogy(self, a: str, a_star: str, b: str, k: int = 1, method: str = "add", exclude_inputs: bool = True,
                eps: float | None = None, restrict_vocab: int | None = None) -> list[tuple[str, float]]:
        """The ``k`` best answers to a:a*::b:? in words, with their scores (gensim's shape, as
        :meth:`most_similar`): ``add`` (3CosAdd), ``mul`` (3CosMul, ``eps`` 1e-3 by default) or ``pairdir``
        (PairDirection). ``exclude_inputs=False`` is the honest test: a, a* and b may be returned.
        ``restrict_vocab``: only the N most frequent words are candidates.

        >>> glove = lexprobe.open_index("glove")
        >>> glove.analogy("man", "king", "woman")[0][0]
        'queen'
        >>> [w for w, _ in glove.analogy("man", "king", "woman", k=2, exclude_inputs=False)]
        ['king', 'queen']
        """
        from .analogy_queries import DEFAULT_EPS, answer_questions

        if k < 1:
            raise LexprobeError(f"analogy: k must be at least 1, not {k}")
        if not all(isinstance(x, str) for x in (a, a_star, b)):
            raise TypeError("analogy: a, a_star and b are words (str)")
        ids = self.ids([a, a_star, b])
        D, I = answer_questions(self, ids[:1], ids[1:2], ids[2:], method=method, k=k, exclude_inputs=exclude_inputs,
                                restrict_vocab=restrict_vocab, eps=DEFAULT_EPS if eps is None else eps)
        return [(self.words[j], float(d)) for d, j in zip(D[0], I[0]) if j >= 0]

    def most_similar(self, positive: str | Iterable[str] = (), negative: str | Iterable[str] = (), topn: int = 10,
                     restrict_vocab: int | None = None) -> list[tuple[str, float]]:
        """The ``topn`` words nearest to the mean of the unit vectors of ``positive`` minus those of
        ``negative``, by cosine, inputs excluded: gensim's ``most_similar`` (a str is one word).
        ``restrict_vocab``: only the N most frequent words are candidates.

        >>> [w for w, _ in lexprobe.open_index("glove").most_similar("king", topn=3)]
        ['prince', 'queen', 'ii']
        """
        pos, neg = self._words_arg(positive, "positive"), self._words_arg(negative, "negative")
        if not pos and not neg:
            raise LexprobeError("most_similar: give at least one word")
        if topn < 1:
            raise LexprobeError(f"most_similar: topn must be at least 1, not {topn}")
        ids = self.ids(pos + neg)
        weights = np.array([1.0] * len(pos) + [-1.0] * len(neg), dtype=np.float32)
        query = (weights[:, None] * self.unit_of(ids)).mean(axis=0)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        D, I = self.vectors.search(query[None, :].astype(np.float32), topn, exclude=[sorted(set(ids.tolist()))],
                                   restrict=restrict_vocab)
        return [(self.words[j], float(d)) for d, j in zip(D[0], I[0]) if j >= 0]


def insert_words(home: Path, name: str, words: Sequence[str], matrix: np.ndarray, *, origin: str,
                 settings: dict, replace: bool = False) -> dict:
    """Append ``words`` with vectors ``matrix`` to words index ``name``: a new shard and a FAISS add, atomic.

    A word already in the index is an error unless ``replace``; then its old row is tombstoned (removed
    from FAISS and from lookups) and the new row serves it.
    """
    matrix = np.asarray(matrix, dtype=np.float32)
    if len(set(words)) != len(words):
        raise LexprobeError("the words to insert contain duplicates")
    with write_lock(home, name):
        current = WordIndex.open(name, home=home)
        if matrix.ndim != 2 or matrix.shape != (len(words), current.dim):
            raise LexprobeError(f"vectors have shape {matrix.shape}, index {name!r} needs ({len(words)}, "
                                f"{current.dim})")
        if not np.isfinite(matrix).all() or first_overflowing_row(matrix) is not None:
            raise LexprobeError("vectors to insert contain NaN or infinite values, or lengths that overflow float32")
        existing = [w for w in words if w in current.word_to_id]
        if existing and not replace:
            raise LexprobeError(f"index {name!r} already has {', '.join(map(repr, existing[:5]))}"
                                f"{' ...' if len(existing) > 5 else ''}: use --replace to replace")
        old_ids = [current.word_to_id[w] for w in existing]
        store = current.store
        start = store.count
        ids = np.arange(start, start + len(words), dtype=np.int64)
        unit, norms = vindex.unit_rows(matrix)
        source_ids = np.full(len(words), -1, dtype=np.int64)
        with StoreWriter(home, name, kind=KIND, dim=store.dim, schema=word_schema(store.dim),
                         shard_rows=max(len(words), 1), base=store) as writer:
            writer.write(_rows_table(store.dim, ids, words, matrix, norms, np.zeros(len(words), np.int64),
                                     origin, source_ids))
            current.vectors.remove(old_ids)
            current.vectors.add(unit, ids)
            vindex.save(current.vectors.index, writer.side_file("faiss", FAISS_FILE))
            history = store.manifest.get("history", []) + [{
                "op": "insert", "origin": origin, "rows": len(words), "replaced": len(old_ids),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "settings": settings}]
            writer.commit(source=store.manifest["source"], normalization=store.manifest["normalization"],
                          meta=store.meta, tombstones=store.tombstones.tolist() + old_ids, history=history)
    return {"name": name, "inserted": len(words), "replaced": len(old_ids), "count": start + len(words)}
