"""The words index: one row per word (id, word, raw vector, norm, frequency rank, origin, source id) in
Arrow shards, and a FAISS index over the unit vectors. New entries (e.g. OTA vectors) are appended as a
new shard and added to FAISS in one atomic step; a replaced word's old row is tombstoned.
"""

from __future__ import annotations

import operator
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core import vector_index as vindex
from ..core.conventions import Result, old_order, renamed
from ..core.errors import LexprobeError
from ..core.progress import bar
from ..core.store import (DEFAULT_SHARD_ROWS, Store, StoreWriter, check_new_index, check_words, home_path,
                          vector_array, vector_type, write_lock)
from ..sources.vectors import first_overflowing_row, read_vectors
from .keyed_vectors import AnalogyEvaluation, KeyedVectorsAPI

KIND = "words"
FAISS_FILE = "faiss.index"
_SCANS = 32  # word lookups answered by scanning the word column before the word -> id dictionary is built


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

class UnknownWords(LexprobeError, KeyError):
    """Words not in a words index: every one named (with the case-folded form where the index has it). A
    ``KeyError`` too, as gensim's ``kv[word]`` raises for an unknown word."""

    __str__ = LexprobeError.__str__  # the message, not KeyError's quoted repr

    def __init__(self, index: "WordIndex", words: Sequence[str], source: str = "query", hint: str = ""):
        self.words = list(dict.fromkeys(words))
        if len(self.words) == 1:
            w, s = self.words[0], index.suggestion(self.words[0])
            what = f"unknown word {w!r} (not in index {index.name!r}{f'; try {s!r}' if s else ''})"
        else:
            what = f"{len(self.words)} unknown words (not in index {index.name!r}): {index.describe(self.words)}"
        super().__init__(f"{source}: {what}" + (f"; {hint}" if hint else ""))


class WordIndex(KeyedVectorsAPI, vindex.SearchableView):
    """An open words index: the verified store plus its FAISS index (:attr:`searcher`), with word lookup. It
    also reads as gensim's ``KeyedVectors`` does (:class:`~.keyed_vectors.KeyedVectorsAPI`: every reading
    member, ``vectors`` the raw matrix; ``to_gensim()`` hands a real one over): ``len(index)``,
    ``word in index``, ``index[word]`` (the raw vector; a list gives a matrix), ``most_similar``... ;
    :func:`load_vectors` opens a vector file (or a gensim ``KeyedVectors``) as one, in memory.

    Opened from a fastText ``.bin`` by :func:`load_vectors`, it keeps the model (:attr:`subwords`): a word outside
    the index gets fastText's vector from its character n-grams in :meth:`vector`, ``index[word]``,
    :meth:`similarity`, :meth:`most_similar` and :meth:`most_similar_to_given`, as gensim's
    ``FastTextKeyedVectors`` gives it; ``word in index``, :attr:`key_to_index` and the other methods stay with the
    vocabulary (gensim's ``in`` is True for every word there)."""

    kind = KIND
    subwords = None  # a fastText .bin's model (sources.vectors.FastTextBin) when load_vectors read one
    searcher: vindex.VectorIndex  # the FAISS index (set by the constructor under the dataclass's name `vectors`)
    __eq__ = object.__eq__  # one open view is itself (its `vectors` is an array: the dataclass's field-wise
    __hash__ = object.__hash__  # comparison would be ambiguous)

    def _repr_detail(self) -> str:
        detail = super()._repr_detail()
        return detail + (f", n-grams {self.subwords.minn}..{self.subwords.maxn}" if self.subwords is not None else "")

    @cached_property
    def words(self) -> list[str]:
        """Word of each row id (tombstoned rows included)."""
        return self.store.column("word").to_pylist()

    @cached_property
    def word_to_id(self) -> dict[str, int]:
        """Word -> live row id (a replaced word maps to its newest row)."""
        dead = self.store.tombstones
        if not len(dead):
            return dict(zip(self.words, range(len(self.words))))
        live = np.setdiff1d(np.arange(len(self.words)), dead)
        return dict(zip([self.words[i] for i in live], live.tolist()))

    def _lookup(self, words: list[str]) -> list[int | None]:
        """Row id of each word, None where unknown. Until the word -> id dictionary pays (building it costs as
        much as tens of scans), a few words are found by one scan of the word column (a one-query process never
        builds it); the words are distinct there without tombstones."""
        scans = self.__dict__.get("_scans", 0)
        if "word_to_id" in self.__dict__ or scans >= _SCANS or len(self.store.tombstones) or len(words) > 64:
            return [self.word_to_id.get(w) for w in words]
        self.__dict__["_scans"] = scans + 1
        column = self.store.column("word")
        hits = np.flatnonzero(pc.is_in(column, value_set=pa.array(words, pa.string())).to_numpy(
            zero_copy_only=False))
        found = dict(zip(column.take(pa.array(hits, pa.int64())).to_pylist(), hits.tolist()))
        return [found.get(w) for w in words]

    def words_at(self, ids: Iterable[int]) -> list[str]:
        """The words of some row ids (one take from the word column: no list of the whole vocabulary)."""
        return self.store.column("word").take(pa.array(np.asarray(list(ids), dtype=np.int64))).to_pylist()

    def known(self, words: Iterable[str]) -> set[str]:
        """The words of ``words`` that the index has."""
        words = list(dict.fromkeys(words))
        return {w for w, i in zip(words, self._lookup(words)) if i is not None}

    def __len__(self) -> int:
        """Live words (gensim's ``len(kv)``)."""
        return self.store.count - len(self.store.tombstones)

    def __contains__(self, word) -> bool:
        return isinstance(word, str) and self._lookup([word])[0] is not None

    def __getitem__(self, words: str | Sequence[str]) -> np.ndarray:
        """gensim's ``kv[word]``: the raw vector of a word, or the (len, dim) matrix of a list of words; an
        unknown word is :class:`UnknownWords` (a ``KeyError``)."""
        if isinstance(words, str):
            return self.vector(words)
        return self._vectors_of(self._words_arg(words, "index[...]"))[0]

    @property
    def key_to_index(self) -> dict[str, int]:
        """gensim's name for :attr:`word_to_id`: word -> row id (the row of ``index[word]`` in :attr:`raw`)."""
        return self.word_to_id

    @property
    def index_to_key(self) -> list[str]:
        """gensim's name for :attr:`words`: the word of each row id."""
        return self.words

    def raw_of(self, ids: np.ndarray) -> np.ndarray:
        """Raw vectors of some row ids: rows of :attr:`raw` once it exists, else read from the shards (a few rows
        need no copy of the whole matrix, which spans the shards)."""
        ids = np.asarray(ids, dtype=np.int64)
        if "raw" in self.__dict__ or len(self.store.tables) == 1 or len(ids) > 64:
            return self.raw[ids]
        return vindex.shard_rows(self.store, ids)

    def unit_of(self, ids: np.ndarray) -> np.ndarray:
        """Unit vectors of some row ids (without normalising the whole matrix)."""
        return vindex.unit_rows(self.raw_of(ids))[0]

    def ids(self, words: Iterable[str], *, source: str = "query", hint: str = "") -> np.ndarray:
        """Row ids of ``words``; unknown words are one clear error (:class:`UnknownWords`) naming every one,
        with the form the index has where only the case differs (``King`` -> ``king``); ``hint`` ends it."""
        words = list(words)
        out = self._lookup(words)
        if None in out:
            raise UnknownWords(self, [w for w, i in zip(words, out) if i is None], source, hint)
        return np.asarray(out, dtype=np.int64)

    def _vectors_of(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(raw vectors, row ids)`` of ``words``; a word outside the index gets its fastText vector from
        :attr:`subwords` (row id -1) when the index has them and the word has a character n-gram, else it is
        :class:`UnknownWords` (gensim gives such a word the zero vector)."""
        found = self._lookup(words)
        if None not in found:
            ids = np.asarray(found, dtype=np.int64)
            return self.raw_of(ids), ids
        model = self.subwords
        made = {w: model.vector(w) for w, i in zip(words, found) if i is None} if model is not None else {}
        missing = [w for w, i in zip(words, found) if i is None and made.get(w) is None]
        if missing:
            raise UnknownWords(self, missing, hint="" if model is None else f"no character n-gram of "
                               f"{model.minn}..{model.maxn} characters gives it a fastText vector")
        ids = np.asarray([-1 if i is None else i for i in found], dtype=np.int64)
        out = np.empty((len(words), self.dim), dtype=np.float32)
        if (ids >= 0).any():
            out[ids >= 0] = self.raw_of(ids[ids >= 0])
        for j in np.flatnonzero(ids < 0):
            out[j] = made[words[j]]
        return out, ids

    def suggestion(self, word: str) -> str | None:
        """The form of an unknown ``word`` that the index has when only the case differs: lowercase first (the
        usual lowercased vectors), then capitalised and upper case; None when there is none."""
        forms = [f for f in dict.fromkeys((word.lower(), word.casefold(), word.capitalize(), word.upper())) if f != word]
        known = self.known(forms)
        return next((f for f in forms if f in known), None)

    def describe(self, words: Iterable[str], limit: int = 20) -> str:
        """``'King' (try 'king'), 'xyzzy'``: unknown words, each once, with their suggestions; past ``limit`` words,
        how many more (one readable line for a file full of unknown words)."""
        unique = list(dict.fromkeys(words))
        out = []
        for w in unique[:limit]:
            s = self.suggestion(w)
            out.append(f"{w!r} (try {s!r})" if s else repr(w))
        more = f" and {len(unique) - limit:,} more" if len(unique) > limit else ""
        return ", ".join(out) + more

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
        D, I = self.searcher.search(unit, k, exclude=exclude, restrict=restrict_vocab)
        q, r = np.nonzero(I >= 0)
        return pa.table({"query": pa.array(np.asarray(words, dtype=object)[q], pa.string()),
                         "rank": pa.array(r + 1, pa.int64()),
                         "word": pa.array(self.words_at(I[q, r]), pa.string()),
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
        """The raw vector of ``word`` (read from the shards; a word outside a fastText index: its n-gram vector).

        >>> glove = lexprobe.open_index("glove")
        >>> glove.vector("king").shape
        (50,)
        """
        return self._vectors_of(self._words_arg(word, "vector"))[0][0]

    def similarity(self, w1: str, w2: str) -> float:
        """Cosine similarity of two words (gensim's ``similarity``).

        >>> round(lexprobe.open_index("glove").similarity("king", "queen"), 3)
        0.784
        """
        u = vindex.unit_rows(self._vectors_of([w1, w2])[0])[0]
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
        found = I[0] >= 0
        return list(zip(self.words_at(I[0][found]), map(float, D[0][found])))

    @cached_property
    def norms(self) -> np.ndarray:
        """Length of each raw vector by row id (float32, as gensim's ``fill_norms``)."""
        return np.linalg.norm(self.raw, axis=1)

    def dead_rows(self) -> np.ndarray:
        """A mask over row ids: True for the tombstoned (replaced) rows."""
        dead = np.zeros(len(self.raw), dtype=bool)
        dead[self.store.tombstones] = True
        return dead

    def doesnt_match(self, words: Iterable[str]) -> str:
        """gensim's ``doesnt_match``: the word least similar to the normalised mean of the words' unit vectors
        (equal similarities: the first word in sorted order). An unknown word is an error (gensim leaves it
        out with a warning).

        >>> lexprobe.open_index("glove").doesnt_match(["breakfast", "cereal", "dinner", "lunch"])
        'cereal'
        """
        words = self._words_arg(words, "doesnt_match")
        if not words:
            raise LexprobeError("doesnt_match: give at least one word")
        unit = self.unit_of(self.ids(words))
        mean = unit.mean(axis=0)
        mean /= max(float(np.linalg.norm(mean)), 1e-12)
        return min(zip((unit @ mean).tolist(), words))[1]

    def closer_than(self, word1: str, word2: str) -> list[str]:
        """gensim's ``closer_than``: every word nearer to ``word1`` by cosine than ``word2`` is, in row order
        (``word1`` itself left out).

        >>> lexprobe.open_index("glove").closer_than("king", "queen")
        ['prince']
        """
        i1, i2 = self.ids([word1, word2])
        v = self.raw[i1]
        with np.errstate(divide="ignore", invalid="ignore"):
            distance = 1 - (self.raw @ v) / (np.linalg.norm(v) * self.norms)  # gensim's arithmetic, float32
        closer = (distance < distance[i2]) & ~self.dead_rows()
        closer[i1] = False
        return self.words_at(np.flatnonzero(closer))

    def rank(self, word1: str, word2: str) -> int:
        """gensim's ``rank``: the rank of ``word2`` among the neighbours of ``word1`` by cosine (1: nearest).

        >>> lexprobe.open_index("glove").rank("king", "queen")
        2
        """
        return len(self.closer_than(word1, word2)) + 1

    @classmethod
    def _in_memory(cls, words: list[str], matrix: np.ndarray, *, origin: str, source: str, meta: dict | None = None,
                   source_ids: np.ndarray | None = None) -> "WordIndex":
        """A words index of ``words`` and their raw vectors held in memory (a flat FAISS index; nothing written)."""
        matrix = np.asarray(matrix, dtype=np.float32)
        dim = matrix.shape[1]
        unit, norms = vindex.unit_rows(matrix)
        ids = np.arange(len(words), dtype=np.int64)
        params = vindex.IndexParams()
        table = _rows_table(dim, ids, words, matrix, norms, ids + 1, origin,
                            ids if source_ids is None else source_ids)
        manifest = {"kind": KIND, "dim": dim, "count": len(words), "source": source,
                    "meta": {**(meta or {}), "index": params.as_dict()}}
        store = Store(path=Path(origin), manifest=manifest, tables=[table], _dir_fd_path="")
        return cls(store, vindex.VectorIndex(vindex.build(unit, ids, params), params))

    def most_similar_to_given(self, word: str, words: Iterable[str]) -> str:
        """gensim's ``most_similar_to_given``: the word of ``words`` most similar to ``word`` by cosine (equal
        similarities: the first listed).

        >>> lexprobe.open_index("glove").most_similar_to_given("king", ["apple", "queen", "car"])
        'queen'
        """
        words = self._words_arg(words, "most_similar_to_given")
        if not words:
            raise LexprobeError("most_similar_to_given: give at least one word to choose from")
        unit = vindex.unit_rows(self._vectors_of([word, *words])[0])[0]
        return words[int(np.argmax(unit[1:] @ unit[0]))]

    def evaluate_word_analogies(self, analogies: str | Path, restrict_vocab: int | None = 300000,
                                case_insensitive: bool = True, dummy4unknown: bool = False,
                                similarity_function: str = "most_similar") -> AnalogyEvaluation:
        """gensim's ``evaluate_word_analogies`` on a four-column file (``questions-words.txt``): unpacks as gensim's
        ``(accuracy, sections)``, each section ``{"section", "correct", "incorrect"}`` with its questions as
        ``(a, b, c, expected)`` tuples (upper-cased when ``case_insensitive``), then ``Total accuracy``;
        ``to_pandas()`` has one row per question.

        gensim's rules: words are matched within the ``restrict_vocab`` most frequent, ignoring case unless
        ``case_insensitive=False`` (then each form is its most frequent variant); a question with a word outside
        them is left out (``dummy4unknown``: counted incorrect); the others are answered by 3CosAdd with a, b, c
        excluded, the first of the best five that is not an input in another case being the prediction
        (:func:`lexprobe.kinds.section_scores.score_sections`, which ``query analogy --questions`` and the main job
        count with too). Accuracy is correct over answered (0.0 when none is). A malformed line is an error
        (gensim skips it).
        """
        from .keyed_vectors import evaluate_word_analogies

        return evaluate_word_analogies(self, analogies, restrict_vocab, case_insensitive, dummy4unknown,
                                       similarity_function)

    def evaluate_word_pairs(self, pairs: str | Path | pa.Table, restrict_vocab: int | None = 300000,
                            case_insensitive: bool = True, dummy4unknown: bool = False, *,
                            n_resamples: int = 1000, seed: int = 0, level: float = 0.95) -> WordPairScores:
        """gensim's ``evaluate_word_pairs``: Pearson's and Spearman's correlation, each with its two-sided
        p-value (scipy's, as gensim reports them), between a word-similarity set's scores and the cosines of
        its pairs, and the share of pairs with an unknown word (a percentage, as gensim's ``oov_ratio``); plus
        percentile bootstrap intervals of both correlations (``n_resamples`` resamples of the pairs, ``seed``,
        ``level``), which gensim lacks. Unpacks as gensim's ``(pearson, spearman, oov_ratio)``.

        ``pairs``: a file in any released format (:func:`lexprobe.sources.datasets.word_pairs.read_word_pairs`:
        WordSim-353, SimLex-999, MEN, Rare Words) or its table. gensim's rules: words are matched within the
        ``restrict_vocab`` most frequent (None: all), ignoring case unless ``case_insensitive=False`` (then each
        form is its most frequent variant); a pair with a word outside them is left out, or scored 0.0 with
        ``dummy4unknown`` (and the share is then over the pairs scored, as gensim computes it).
        """
        from scipy import stats

        from ..core.intervals import check_correlation_input, correlation_bootstrap
        from ..sources.datahome import dataset_path
        from ..sources.datasets.word_pairs import read_word_pairs
        from .section_scores import folded_vocab

        table = pairs if isinstance(pairs, pa.Table) else read_word_pairs(dataset_path(pairs))
        dataset = (table.schema.metadata or {}).get(b"dataset", b"pairs").decode()
        fold = str.upper if case_insensitive else (lambda w: w)
        vocab = folded_vocab(self, restrict_vocab, case_insensitive)
        ids = np.array([[vocab.get(fold(a), -1), vocab.get(fold(b), -1)] for a, b in zip(
            table.column("word1").to_pylist(), table.column("word2").to_pylist())], dtype=np.int64).reshape(-1, 2)
        oov = (ids < 0).any(axis=1)
        similarity = np.zeros(len(ids), dtype=np.float32)
        if (~oov).any():
            u1, u2 = self.unit_of(ids[~oov, 0]), self.unit_of(ids[~oov, 1])
            similarity[~oov] = np.einsum("ij,ij->i", u1, u2)
        scored = np.ones(len(ids), bool) if dummy4unknown else ~oov
        if not scored.any():
            raise LexprobeError(f"{dataset}: no pair has both words in index {self.name!r}"
                                f"{'' if restrict_vocab is None else f' (first {restrict_vocab} words)'}")
        gold, model = table.column("score").to_numpy()[scored], similarity[scored].astype(np.float64)
        check_correlation_input(gold, model, dataset)
        pearson, spearman = stats.pearsonr(gold, model), stats.spearmanr(gold, model)
        share = oov.sum() / scored.sum() if dummy4unknown else oov.sum() / len(ids)
        intervals = correlation_bootstrap(gold, model, resamples=n_resamples, seed=seed, level=level)
        per_pair = table.select(["word1", "word2", "score"]).append_column(
            "similarity", pa.array(np.where(oov & ~scored, np.nan, similarity), pa.float64(),
                                   mask=oov & ~scored)).append_column(
            "oov", pa.array(oov)).append_column("line", table.column("line"))
        return WordPairScores(dataset, (float(pearson[0]), float(pearson[1])),
                              (float(spearman[0]), float(spearman[1])), float(share * 100),
                              intervals["pearson"], intervals["spearman"], level, int(scored.sum()), per_pair)


@dataclass(repr=False)
class WordPairScores(Result):
    """A word-similarity evaluation (:meth:`WordIndex.evaluate_word_pairs`): the correlations as gensim gives
    them, each ``(coefficient, p-value)``, the share of pairs with an unknown word (percent), the correlations'
    bootstrap intervals at ``level``, the pairs scored, and one row per pair in :meth:`to_arrow` (``word1, word2,
    score, similarity, oov, line``; similarity null for a pair left out)."""

    dataset: str
    pearson: tuple[float, float]
    spearman: tuple[float, float]
    oov_ratio: float
    pearson_interval: tuple[float, float]
    spearman_interval: tuple[float, float]
    level: float
    n_scored: int
    pairs: pa.Table

    def __iter__(self):
        """``pearson, spearman, oov_ratio = index.evaluate_word_pairs(path)``, as with gensim."""
        return iter((self.pearson, self.spearman, self.oov_ratio))

    def to_arrow(self) -> pa.Table:
        return self.pairs

    def __repr__(self) -> str:
        (lo, hi), (plo, phi) = self.spearman_interval, self.pearson_interval
        return (f"<WordPairScores {self.dataset}: spearman {self.spearman[0]:.3f} [{lo:.3f}, {hi:.3f}], pearson "
                f"{self.pearson[0]:.3f} [{plo:.3f}, {phi:.3f}], {self.n_scored} pairs scored, "
                f"{self.oov_ratio:.1f}% oov>")


def load_vectors(path, *, fmt: str = "auto", vocab: str | None = None, limit: int | None = None,
                 lowercase: bool = False, binary: bool | None = None, no_header: bool | None = None,
                 fvocab: str | None = None, encoding: str = "utf8", unicode_errors: str = "strict",
                 datatype=np.float32) -> WordIndex:
    """Any vector file :func:`build_word_index` reads (word2vec text or binary, GloVe, fastText ``.vec`` and
    ``.bin``, gensim ``.kv``, a packaged alias, ``hf:MODEL``), or a gensim ``KeyedVectors``, opened in memory as a
    :class:`WordIndex`: no home, no name, nothing written (gensim's ``load_word2vec_format`` in one line). Its name
    is the file's. gensim's loader flags say the format: ``binary=True`` word2vec binary, ``no_header=True`` text
    without a header line (GloVe's); ``fvocab``, ``encoding`` other than UTF-8, ``unicode_errors`` and ``datatype``
    other than float32 are refused. A fastText ``.bin`` keeps its model, so that words outside the index get
    their n-gram vectors (:class:`WordIndex`; with ``limit`` or ``lowercase``, a model word left out gets the
    model's own vector for it).

    >>> kv = lexprobe.load_vectors("glove-6b-50d", limit=50000)
    >>> kv, kv.most_similar("king", topn=1)[0][0]
    (<WordIndex glove-6b-50d: 50000 x 50, flat>, 'prince')
    """
    if hasattr(path, "index_to_key") and hasattr(path, "vectors"):  # a gensim KeyedVectors
        words, matrix = list(path.index_to_key[:limit]), np.asarray(path.vectors[:limit], dtype=np.float32)
        return WordIndex._in_memory(words, matrix, origin=type(path).__name__, source=type(path).__name__)
    fmt = _gensim_format(fmt, binary, no_header, fvocab, encoding, unicode_errors, datatype)
    path = str(path)
    source, chunks = read_vectors(path, fmt=fmt, vocab=vocab, limit=limit, lowercase=lowercase)
    words, matrices, source_ids = [], [], []
    progress = bar(total=limit, desc=f"read {Path(path).name}", unit="word")
    for chunk_words, matrix, ids in chunks:
        words += chunk_words
        matrices.append(matrix)
        source_ids.append(ids)
        progress.update(len(chunk_words))
    progress.close()
    if not words:
        raise LexprobeError(f"{path}: no vectors to read")
    origin = path if path.startswith("hf:") else Path(path).name
    index = WordIndex._in_memory(words, np.concatenate(matrices), origin=origin, source=path, meta=source.meta(),
                            source_ids=np.concatenate(source_ids))
    index.subwords = source.subwords
    return index


def _gensim_format(fmt: str, binary, no_header, fvocab, encoding, unicode_errors, datatype) -> str:
    """The reader's format from gensim's ``load_word2vec_format`` flags; the flags it has no use for refused."""
    refused = [f"{name}={value!r}" for name, value, fine in (
        ("fvocab", fvocab, fvocab is None), ("encoding", encoding, str(encoding).lower().replace("-", "") == "utf8"),
        ("unicode_errors", unicode_errors, unicode_errors == "strict"),
        ("datatype", datatype, np.dtype(datatype) == np.float32)) if not fine]
    if refused:
        raise LexprobeError(f"load_vectors: {', '.join(refused)} is not offered (lexprobe reads UTF-8 into float32; "
                            "a vocabulary's counts: the rows' order is the rank)")
    if binary is None and no_header is None:
        return fmt
    wanted = "w2v-bin" if binary else ("glove" if no_header else "w2v-text")
    if binary and no_header:
        raise LexprobeError("load_vectors: binary=True and no_header=True: a word2vec binary file has a header")
    if fmt not in ("auto", wanted) and not (fmt == "fasttext" and wanted == "w2v-text"):
        raise LexprobeError(f"load_vectors: fmt={fmt!r} and {'binary' if binary else 'no_header'}="
                            f"{binary if binary else no_header} disagree")
    return wanted if fmt == "auto" else fmt


def insert_words(home: Path, name: str, words: Sequence[str], matrix: np.ndarray, *, origin: str,
                 settings: dict, replace: bool = False) -> dict:
    """Append ``words`` with vectors ``matrix`` to words index ``name``: a new shard and a FAISS add, atomic.

    A word already in the index is an error unless ``replace``; then its old row is tombstoned (removed
    from FAISS and from lookups) and the new row serves it.
    """
    matrix = np.asarray(matrix, dtype=np.float32)
    check_words(words)
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
            current.searcher.remove(old_ids)
            current.searcher.add(unit, ids)
            vindex.save(current.searcher.index, writer.side_file("faiss", FAISS_FILE))
            history = store.manifest.get("history", []) + [{
                "op": "insert", "origin": origin, "rows": len(words), "replaced": len(old_ids),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "settings": settings}]
            writer.commit(source=store.manifest["source"], normalization=store.manifest["normalization"],
                          meta=store.meta, tombstones=store.tombstones.tolist() + old_ids, history=history)
    return {"name": name, "inserted": len(words), "replaced": len(old_ids), "count": start + len(words)}
