"""gensim's ``KeyedVectors`` reading surface on a words index (:class:`~.words.WordIndex` mixes it in): queries by
word, row number, vector or weighted word, ``topn=None``, the getters, distances and ``save_word2vec_format``,
with gensim's signatures, defaults and answers. What only training or gensim's own bookkeeping needs is refused
with one line naming the lexprobe way (:class:`Refused`, an ``AttributeError`` too). :data:`GENSIM` maps every
public member of gensim 4's ``KeyedVectors`` to its counterpart: the parity test checks it against the installed
gensim and the "Coming from gensim" page is generated from it (:func:`gensim_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from pathlib import Path
from typing import Iterable

import numpy as np
import pyarrow as pa

from ..core import vector_index as vindex
from ..core.conventions import Result
from ..core.errors import LexprobeError

# gensim member -> (the lexprobe counterpart, a note). A counterpart ``index.NAME`` is a member of a words index,
# ``lexprobe.NAME`` a facade name; None: refused, the note names the lexprobe way (the refusal's message).
GENSIM: dict[str, tuple[str | None, str]] = {
    "vectors": ("index.vectors", "the raw float32 matrix by row, read-only (memory-mapped when the index has one "
                "shard)"),
    "vector_size": ("index.vector_size", "also `index.dim`"),
    "norms": ("index.norms", "float32 lengths by row"),
    "index_to_key": ("index.index_to_key", "also `index.words`"),
    "key_to_index": ("index.key_to_index", "also `index.word_to_id`"),
    "expandos": ("index.expandos", "`{'count': ...}` as gensim's word2vec loader makes it up (descending by row)"),
    "get_vector": ("index.get_vector", "`norm=True`: the unit vector; a fastText `.bin`: n-gram vectors of unseen "
                   "words"),
    "word_vec": ("index.word_vec", "gensim's old name of `get_vector`"),
    "get_index": ("index.get_index", ""),
    "has_index_for": ("index.has_index_for", ""),
    "get_vecattr": ("index.get_vecattr", "`count` only"),
    "get_normed_vectors": ("index.get_normed_vectors", "also `index.unit`"),
    "get_mean_vector": ("index.get_mean_vector", ""),
    "most_similar": ("index.most_similar", "words, row numbers, vectors, `(key, weight)` pairs, `topn=None`, "
                     "`clip_start`/`clip_end`, `indexer`; batches: `index.neighbors(words, k)`"),
    "most_similar_cosmul": ("index.most_similar_cosmul", "`restrict_vocab` is honoured (gensim ignores it)"),
    "similar_by_word": ("index.similar_by_word", ""),
    "similar_by_key": ("index.similar_by_key", ""),
    "similar_by_vector": ("index.similar_by_vector", ""),
    "similarity": ("index.similarity", ""),
    "n_similarity": ("index.n_similarity", ""),
    "distance": ("index.distance", ""),
    "distances": ("index.distances", ""),
    "cosine_similarities": ("index.cosine_similarities", ""),
    "relative_cosine_similarity": ("index.relative_cosine_similarity", ""),
    "rank_by_centrality": ("index.rank_by_centrality", ""),
    "closer_than": ("index.closer_than", ""),
    "words_closer_than": ("index.words_closer_than", ""),
    "rank": ("index.rank", ""),
    "doesnt_match": ("index.doesnt_match", "an unknown word is an error (gensim drops it with a warning)"),
    "most_similar_to_given": ("index.most_similar_to_given", ""),
    "evaluate_word_analogies": ("index.evaluate_word_analogies", "unpacks as `(accuracy, sections)`; "
                                "`to_pandas()`: one row per question; `similarity_function='most_similar'` only"),
    "evaluate_word_pairs": ("index.evaluate_word_pairs", "unpacks as `(pearson, spearman, oov_ratio)`; "
                            "`to_pandas()`: one row per pair; bootstrap intervals besides"),
    "fill_norms": ("index.fill_norms", "nothing to do: the lengths are stored"),
    "save_word2vec_format": ("index.save_word2vec_format", "the same bytes as gensim's"),
    "load_word2vec_format": ("lexprobe.load_vectors", "`load_vectors(path, binary=True)`, `no_header=True`, "
                             "`limit=`; or `build_word_index(name, path)` for an index on disk"),
    "load": ("lexprobe.load_vectors", "reads a gensim `.kv` file (gensim installed), or takes a `KeyedVectors`"),
    "vectors_for_all": ("index.vectors_for_all", "an in-memory index of those keys (n-gram vectors for unseen words "
                        "of a fastText `.bin`)"),
    "add_vector": (None, "a words index is added to by `lexprobe insert` or `insert_ota`/`insert_am` (atomic, "
                   "on disk)"),
    "add_vectors": (None, "a words index is added to by `lexprobe insert` or `insert_ota`/`insert_am` (atomic, "
                    "on disk)"),
    "allocate_vecattrs": (None, "a words index keeps rank, origin and source id per row: "
                          "`lexprobe sql` or `index.store.column(...)`"),
    "set_vecattr": (None, "a words index keeps rank, origin and source id per row: "
                    "`lexprobe sql` or `index.store.column(...)`"),
    "add_lifecycle_event": (None, "a words index records its history in its manifest "
                            "(`index.store.manifest['history']`)"),
    "init_sims": (None, "nothing to do: `index.unit` gives the unit vectors (gensim 4 deprecates it too)"),
    "unit_normalize_all": (None, "the raw vectors stay as read; `index.unit` gives the unit vectors"),
    "resize_vectors": (None, "training only: a words index is built from a vector file (`build_word_index`)"),
    "sort_by_descending_frequency": (None, "rows keep their file's order, which is the frequency rank "
                                     "(`restrict_vocab=N`: the N first)"),
    "intersect_word2vec_format": (None, "training only: build an index from the other file "
                                  "(`build_word_index`) and compare them"),
    "save": (None, "gensim's pickle: `index.save_word2vec_format(path)`, or `build_word_index` for an index "
             "on disk"),
    "wmdistance": (None, "needs an optimal-transport solver lexprobe does not ship: "
                   "`index.to_gensim().wmdistance(...)` (gensim and POT installed)"),
    "similarity_unseen_docs": (None, "gensim raises NotImplementedError too (a Doc2Vec method)"),
    "log_accuracy": (None, "gensim's logging helper: `index.evaluate_word_analogies(...)` returns the table"),
    "log_evaluate_word_pairs": (None, "gensim's logging helper: `index.evaluate_word_pairs(...)` returns the table"),
    "next_index": (None, "gensim's counter of its own additions: `len(index)`"),
    "mapfile_path": (None, "the index's files: `index.store.path`"),
    "index2word": (None, "removed in gensim 4: `index.index_to_key`"),
    "index2entity": (None, "removed in gensim 4: `index.index_to_key`"),
    "vocab": (None, "removed in gensim 4: `index.key_to_index`, `index.get_vecattr(word, 'count')`"),
    "vectors_norm": (None, "removed in gensim 4: `index.get_normed_vectors()`"),
}


class Refused(LexprobeError, AttributeError):
    """A gensim member a words index does not have: the message names the lexprobe way. An ``AttributeError``
    too, so that ``hasattr`` says False as for any member a class lacks."""


class _RefusedMember:
    """Class attribute that refuses on access (one line: what gensim's member is for here, and the lexprobe way)."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        raise Refused(f"{self.name}: not a words index member; {GENSIM[self.name][1]}")


class KeyedMatrix(np.ndarray):
    """The raw matrix of a words index as gensim's ``kv.vectors`` (read-only). For one release it also answers
    the FAISS index's members (``search``, ``ntotal``, ...), which ``index.vectors`` meant before, with a
    DeprecationWarning naming ``index.searcher``. Results of arithmetic and indexing are plain arrays."""

    _FAISS_MEMBERS = frozenset({"search", "ntotal", "add", "remove", "index", "ids", "flat_vectors", "params",
                                "is_exact", "dim"})

    def __getattr__(self, name):
        if name in KeyedMatrix._FAISS_MEMBERS and "_searcher" in self.__dict__:
            from ..core.conventions import deprecated

            deprecated(f"index.vectors.{name}", f"index.searcher.{name} (index.vectors is gensim's raw matrix)")
            return getattr(self.__dict__["_searcher"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getitem__(self, item):
        return np.asarray(super().__getitem__(item))

    def __array_wrap__(self, obj, context=None, return_scalar=False):
        out = np.asarray(obj)
        return out[()] if return_scalar else out


def keyed_matrix(raw: np.ndarray, searcher) -> KeyedMatrix:
    out = np.asarray(raw).view(KeyedMatrix)
    out.flags.writeable = False
    out.__dict__["_searcher"] = searcher
    return out


def _ensure_list(value) -> list:
    """gensim's: None is none, a key or a 1-d vector is one, a 2-d array is its rows, else the items."""
    if value is None:
        return []
    if isinstance(value, (str, Integral)) or (isinstance(value, np.ndarray) and value.ndim == 1):
        return [value]
    if isinstance(value, np.ndarray) and value.ndim == 2:
        return list(value)
    if isinstance(value, bytes) or not isinstance(value, Iterable):
        raise TypeError(f"give a word (str), a row number, a vector or a list of them, not {type(value).__name__}")
    return list(value)


@dataclass(repr=False)
class AnalogyEvaluation(Result):
    """gensim's ``evaluate_word_analogies`` as a result: unpacks as gensim's ``(accuracy, sections)`` (each section
    ``{"section", "correct", "incorrect"}``, then ``Total accuracy``); :meth:`to_arrow` has one row per question
    (``section, a, a_star, b, b_star, asked, answer, correct``; answer null when not asked), ``scores`` the
    per-section table (:class:`~.section_scores.SectionScores`)."""

    accuracy: float
    sections: list[dict]
    questions: pa.Table
    scores: Result

    def __iter__(self):
        return iter((self.accuracy, self.sections))

    def __getitem__(self, i):
        return (self.accuracy, self.sections)[i]

    def __len__(self) -> int:
        return 2

    def to_arrow(self) -> pa.Table:
        return self.questions

    def __repr__(self) -> str:
        total = self.sections[-1]
        return (f"<AnalogyEvaluation accuracy {self.accuracy:.4f}: {len(total['correct'])} correct of "
                f"{len(total['correct']) + len(total['incorrect'])} in {len(self.sections) - 1} sections>")


class KeyedVectorsAPI:
    """gensim's ``KeyedVectors`` reading members (mixed into :class:`~.words.WordIndex`, whose row ids are
    gensim's indexes). Unknown words are :class:`~.words.UnknownWords`, a ``KeyError`` as gensim's."""

    # ------------------------------------------------------------------ attributes and getters

    @property
    def vectors(self) -> KeyedMatrix:
        """gensim's ``kv.vectors``: the raw float32 matrix by row id, read-only (memory-mapped with one shard)."""
        return keyed_matrix(self.raw, self.searcher)

    @vectors.setter
    def vectors(self, searcher) -> None:  # the view's constructor passes its FAISS index under the old name
        self.__dict__["searcher"] = searcher

    @property
    def vector_size(self) -> int:
        """gensim's name for :attr:`dim`."""
        return self.dim

    @property
    def expandos(self) -> dict[str, np.ndarray]:
        """gensim's per-key attributes: ``count`` as gensim's word2vec loader makes it up (rows - row id)."""
        return {"count": len(self.words) - np.arange(len(self.words), dtype=np.int64)}

    def fill_norms(self, force: bool = False) -> None:
        """gensim's: nothing to do here (:attr:`norms` are computed when first read)."""

    def get_index(self, key, default=None) -> int:
        """gensim's ``get_index``: the row of a word, or a row number itself; else ``default``, or a ``KeyError``
        (:class:`~.words.UnknownWords`) when None."""
        if isinstance(key, str):
            found = self._lookup([key])[0]
            if found is not None:
                return int(found)
        elif isinstance(key, Integral) and 0 <= key < len(self.words):
            return int(key)
        if default is not None:
            return default
        if isinstance(key, str):
            self.ids([key])
        raise KeyError(f"Key '{key}' not present")

    def has_index_for(self, key) -> bool:
        """gensim's ``has_index_for``: a row for ``key`` (a vocabulary word, or a row number)."""
        return self.get_index(key, -1) >= 0

    def get_vector(self, key, norm: bool = False) -> np.ndarray:
        """gensim's ``get_vector``: the raw vector of a word or row number (``norm``: its unit vector); a word
        outside a fastText ``.bin``'s vocabulary gets its n-gram vector."""
        vector = self.raw_of([key])[0] if isinstance(key, Integral) else self._vectors_of([key])[0][0]
        return vindex.unit_rows(vector[None])[0][0] if norm else vector

    def word_vec(self, *args, **kwargs) -> np.ndarray:
        """gensim's old name of :meth:`get_vector`."""
        return self.get_vector(*args, **kwargs)

    def get_vecattr(self, key, attr: str):
        """gensim's ``get_vecattr``: ``count`` only (:attr:`expandos`)."""
        if attr not in self.expandos:
            raise LexprobeError(f"get_vecattr: a words index has the attribute 'count' only, not {attr!r}")
        return self.expandos[attr][self.get_index(key)]

    def get_normed_vectors(self) -> np.ndarray:
        """gensim's ``get_normed_vectors``: the unit vectors by row (:attr:`unit`)."""
        return self.unit

    def get_mean_vector(self, keys, weights=None, pre_normalize: bool = True, post_normalize: bool = False,
                        ignore_missing: bool = True) -> np.ndarray:
        """gensim's ``get_mean_vector``: the weighted mean of the keys' vectors (unit vectors with
        ``pre_normalize``; a vector key counts as given), divided by the sum of the weights' sizes; unit length
        with ``post_normalize``. An unknown key is skipped with ``ignore_missing``, else an error."""
        keys = _ensure_list(keys)
        if not keys:
            raise LexprobeError("get_mean_vector: give at least one key")
        weights = np.ones(len(keys)) if weights is None else np.asarray(weights)
        if len(keys) != weights.shape[0]:
            raise LexprobeError(f"get_mean_vector: {len(keys)} keys and {weights.shape[0]} weights")
        mean, total = np.zeros(self.dim, np.float32), 0.0
        for key, weight in zip(keys, weights):
            if isinstance(key, np.ndarray):
                vector = key
            elif ignore_missing and not self._answers_for(key):
                continue
            else:
                vector = self.get_vector(key, norm=pre_normalize)
            mean += weight * vector
            total += abs(weight)
        if total > 0:
            mean = mean / total
        return self._unitvec(mean) if post_normalize else mean

    def _answers_for(self, key) -> bool:
        """gensim's ``key in kv``: a vocabulary word or row number, or any word with a fastText model."""
        return self.has_index_for(key) or (isinstance(key, str) and self.subwords is not None)

    @staticmethod
    def _unitvec(vector: np.ndarray) -> np.ndarray:
        norm = float(np.linalg.norm(vector))
        return (vector / norm).astype(np.float32) if norm > 0 else vector.astype(np.float32)

    # ------------------------------------------------------------------ queries

    def _query_terms(self, items: list, sign: float, what: str) -> tuple[list, list[float]]:
        keys, weights = [], []
        for item in items:
            if isinstance(item, (str, Integral, np.ndarray)):
                keys.append(item)
                weights.append(sign)
            elif isinstance(item, (tuple, list)) and len(item) == 2:
                keys.append(item[0])
                weights.append(float(item[1]))
            else:
                raise TypeError(f"{what}: give words, row numbers, vectors or (word, weight) pairs, not "
                                f"{type(item).__name__}")
        for key in keys:
            if isinstance(key, np.ndarray) and key.shape != (self.dim,):
                raise LexprobeError(f"{what}: a query vector needs shape ({self.dim},), not {key.shape}")
            if isinstance(key, Integral) and not 0 <= key < len(self.words):
                raise LexprobeError(f"{what}: row {key} is not in index {self.name!r} (0..{len(self.words) - 1})")
            if not isinstance(key, (str, Integral, np.ndarray)):
                raise TypeError(f"{what}: a key is a word, a row number or a vector, not {type(key).__name__}")
        return keys, weights

    def _key_ids(self, keys: list) -> list[int]:
        """Rows of the keys that have one (words of the vocabulary, row numbers): the answers leave them out."""
        words = [k for k in keys if isinstance(k, str)]
        found = dict(zip(words, self._lookup(words)))
        return sorted({int(k) if isinstance(k, Integral) else found[k] for k in keys
                       if not isinstance(k, np.ndarray) and (not isinstance(k, str) or found[k] is not None)})

    def most_similar(self, positive=None, negative=None, topn: int | None = 10, clip_start: int = 0,
                     clip_end: int | None = None, restrict_vocab: int | None = None,
                     indexer=None) -> list[tuple[str, float]]:
        """gensim's ``most_similar``: the ``topn`` words nearest by cosine to the weighted mean of the unit vectors
        of ``positive`` (weight 1) and ``negative`` (weight -1), the keys that are words or rows left out. A key is
        a word, a row number or a vector (used as given), or a ``(key, weight)`` pair. ``topn=None``: the cosines
        of every row in ``clip_start:clip_end`` (``restrict_vocab=N``: the first N rows) as an array. Exact for a
        flat index (:mod:`lexprobe.core.topk`: ties by row). Many words at once: :meth:`neighbors`.

        >>> [w for w, _ in lexprobe.open_index("glove").most_similar("king", topn=3)]
        ['prince', 'queen', 'ii']
        >>> lexprobe.open_index("glove").most_similar([("king", 1.0), ("woman", 1.0), ("man", -1.0)], topn=1)[0][0]
        'queen'
        """
        if isinstance(topn, Integral) and topn < 1:
            return []
        pos = self._query_terms(_ensure_list(positive), 1.0, "positive")
        neg = self._query_terms(_ensure_list(negative), -1.0, "negative")
        keys, weights = pos[0] + neg[0], pos[1] + neg[1]
        if not keys:
            raise LexprobeError("most_similar: give at least one word or vector")
        mean = self.get_mean_vector(keys, weights, pre_normalize=True, post_normalize=True, ignore_missing=False)
        exclude = self._key_ids(keys)
        if indexer is not None and isinstance(topn, Integral):
            return indexer.most_similar(mean, topn)
        if restrict_vocab:
            clip_start, clip_end = 0, restrict_vocab
        clip_end = min(clip_end or len(self.words), len(self.words))
        if not topn:
            with np.errstate(divide="ignore", invalid="ignore"):
                return self.raw[clip_start:clip_end] @ mean / self.norms[clip_start:clip_end]
        restrict = (None if clip_end == len(self.words) else clip_end) if clip_start == 0 else \
            np.arange(clip_start, clip_end)
        D, I = self.searcher.search(mean[None, :], int(topn), exclude=[exclude], restrict=restrict)
        found = I[0] >= 0
        return list(zip(self.words_at(I[0][found]), map(float, D[0][found])))

    def most_similar_cosmul(self, positive=None, negative=None, topn: int | None = 10,
                            restrict_vocab: int | None = None) -> list[tuple[str, float]]:
        """gensim's ``most_similar_cosmul`` (Levy and Goldberg's 3CosMul with cosines shifted to [0, 1] and
        epsilon 1e-6): the product of the shifted cosines with ``positive`` over that with ``negative`` plus
        epsilon, best first, the keys that are words left out. A key is a word, a row number or a vector (used as
        given, as gensim does). ``topn=None``: every row's score. gensim ignores ``restrict_vocab`` here; lexprobe
        keeps only the N most frequent words. Equal scores: lower row first.

        >>> [w for w, _ in lexprobe.open_index("glove").most_similar_cosmul(["king", "woman"], ["man"], topn=2)]
        ['queen', 'throne']
        """
        from ..core.topk import topk_rows

        if isinstance(topn, Integral) and topn < 1:
            return []
        pos, neg = _ensure_list(positive), _ensure_list(negative)
        self._query_terms(pos + neg, 1.0, "most_similar_cosmul")
        if any(isinstance(k, (tuple, list)) for k in pos + neg):
            raise LexprobeError("most_similar_cosmul: keys take no weights (gensim's neither); most_similar does")
        if not pos:
            raise LexprobeError("most_similar_cosmul: give at least one positive word or vector")
        terms = [k if isinstance(k, np.ndarray) else self.get_vector(k, norm=True) for k in pos + neg]
        n = len(self.words) if restrict_vocab is None else min(int(restrict_vocab), len(self.words))
        V, norms = self.raw[:n], self.norms[:n]
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = [(1 + V @ term / norms) / 2 for term in terms]
            scores = np.prod(shifted[:len(pos)], axis=0) / (np.prod(shifted[len(pos):], axis=0) + 0.000001)
        if not topn:
            return scores
        scores = np.where(np.isfinite(scores) & ~self.dead_rows()[:n], scores, -np.inf).astype(np.float32)
        exclude = np.asarray(self._key_ids(pos + neg), dtype=np.int64)
        scores[exclude[exclude < n]] = -np.inf
        cols, vals = topk_rows(scores[None, :], int(topn))
        found = np.isfinite(vals[0])
        return list(zip(self.words_at(cols[0][found]), map(float, vals[0][found])))

    def similar_by_word(self, word: str, topn: int | None = 10,
                        restrict_vocab: int | None = None) -> list[tuple[str, float]]:
        """gensim's ``similar_by_word``: :meth:`most_similar` of one word."""
        return self.most_similar(positive=[word], topn=topn, restrict_vocab=restrict_vocab)

    def similar_by_key(self, key, topn: int | None = 10,
                       restrict_vocab: int | None = None) -> list[tuple[str, float]]:
        """gensim's ``similar_by_key``: :meth:`most_similar` of one key."""
        return self.most_similar(positive=[key], topn=topn, restrict_vocab=restrict_vocab)

    def similar_by_vector(self, vector, topn: int | None = 10,
                          restrict_vocab: int | None = None) -> list[tuple[str, float]]:
        """gensim's ``similar_by_vector``: the words nearest to a vector by cosine (none left out).

        >>> glove = lexprobe.open_index("glove")
        >>> [w for w, _ in glove.similar_by_vector(glove["king"], topn=2)]
        ['king', 'prince']
        """
        return self.most_similar(positive=[np.asarray(vector, dtype=np.float32)], topn=topn,
                                 restrict_vocab=restrict_vocab)

    # ------------------------------------------------------------------ similarities and distances

    def n_similarity(self, ws1, ws2) -> float:
        """gensim's ``n_similarity``: the cosine of the means of two sets of raw vectors (unknown keys skipped,
        as gensim does)."""
        ws1, ws2 = list(ws1), list(ws2)
        if not (ws1 and ws2):
            raise LexprobeError("n_similarity: both lists need at least one word")
        mean1 = self.get_mean_vector(ws1, pre_normalize=False)
        mean2 = self.get_mean_vector(ws2, pre_normalize=False)
        return float(self._unitvec(mean1) @ self._unitvec(mean2))

    def distance(self, w1, w2) -> float:
        """gensim's ``distance``: 1 - :meth:`similarity`."""
        return 1 - self.similarity(w1, w2)

    @staticmethod
    def cosine_similarities(vector_1, vectors_all) -> np.ndarray:
        """gensim's ``cosine_similarities``: the cosine of ``vector_1`` with each row of ``vectors_all``."""
        vector_1, vectors_all = np.asarray(vector_1), np.asarray(vectors_all)
        with np.errstate(divide="ignore", invalid="ignore"):
            return vectors_all @ vector_1 / (np.linalg.norm(vector_1) * np.linalg.norm(vectors_all, axis=1))

    def distances(self, word_or_vector, other_words=()) -> np.ndarray:
        """gensim's ``distances``: 1 - cosine of a word or vector with ``other_words`` (none: every row)."""
        vector = word_or_vector if isinstance(word_or_vector, np.ndarray) else self.get_vector(word_or_vector)
        others = list(other_words)
        matrix = self.raw if not others else self.raw_of([self.get_index(w) for w in others])
        return 1 - self.cosine_similarities(vector, matrix)

    def words_closer_than(self, word1: str, word2: str) -> list[str]:
        """gensim's ``words_closer_than``: :meth:`closer_than`."""
        return self.closer_than(word1, word2)

    def relative_cosine_similarity(self, wa: str, wb: str, topn: int = 10) -> float:
        """gensim's ``relative_cosine_similarity`` (Leeuwenberg et al. 2016): the cosine of ``wa`` and ``wb`` over
        the sum of ``wa``'s ``topn`` best cosines."""
        sims = self.similar_by_word(wa, topn)
        if not sims:
            raise LexprobeError(f"relative_cosine_similarity: {wa!r} has no neighbours")
        return float(self.similarity(wa, wb)) / sum(s for _, s in sims)

    def rank_by_centrality(self, words, use_norm: bool = True) -> list[tuple[float, str]]:
        """gensim's ``rank_by_centrality``: ``(cosine with the normalised mean, word)`` best first (unit vectors
        with ``use_norm``); an unknown word is an error (gensim drops it with a warning)."""
        words = self._words_arg(words, "rank_by_centrality")
        if not words:
            raise LexprobeError("rank_by_centrality: give at least one word")
        vectors = np.vstack([self.get_vector(w, norm=use_norm) for w in words]).astype(np.float32)
        mean = self.get_mean_vector(vectors, post_normalize=True)
        return sorted(zip(map(float, vectors @ mean), words), reverse=True)

    # ------------------------------------------------------------------ files and gensim objects

    def save_word2vec_format(self, fname, fvocab=None, binary: bool = False, total_vec: int | None = None,
                             write_header: bool = True, prefix: str = "", append: bool = False,
                             sort_attr: str = "count") -> None:
        """gensim's ``save_word2vec_format``: the live rows in row order (gensim's ``count`` order), as text
        (gensim's ``str`` of each float32) or binary (no newline after a vector, as gensim writes); ``fvocab``:
        ``word count`` lines."""
        if sort_attr not in self.expandos:
            raise LexprobeError(f"save_word2vec_format: a words index sorts by 'count' only, not {sort_attr!r}")
        rows = np.flatnonzero(~self.dead_rows())
        words = self.words_at(rows)
        counts = self.expandos["count"][rows]
        mode = "ab" if append else "wb"
        if fvocab is not None:
            with open(fvocab, mode) as out:
                out.write("".join(f"{prefix}{w} {c}\n" for w, c in zip(words, counts.tolist())).encode("utf8"))
        with open(fname, mode) as out:
            if write_header:
                out.write(f"{len(rows) if total_vec is None else total_vec} {self.dim}\n".encode("utf8"))
            for start in range(0, len(rows), 8192):
                block = self.raw_of(rows[start:start + 8192]).astype(np.float32)
                for word, vector in zip(words[start:start + 8192], block):
                    if binary:
                        out.write(f"{prefix}{word} ".encode("utf8") + vector.tobytes())
                    else:
                        out.write(f"{prefix}{word} {' '.join(str(v) for v in vector)}\n".encode("utf8"))

    def to_gensim(self):
        """A real gensim ``KeyedVectors`` of the live rows (the vocabulary; a fastText model's n-grams stay here),
        with gensim's made-up ``count`` (needs gensim: the ``gensim`` extra)."""
        try:
            from gensim.models import KeyedVectors
        except ImportError:
            raise LexprobeError("to_gensim() needs gensim, which is not installed "
                                "(pip install 'lexprobe[gensim]')") from None
        rows = np.flatnonzero(~self.dead_rows())
        kv = KeyedVectors(self.dim)
        kv.add_vectors(self.words_at(rows), np.array(self.raw_of(rows), dtype=np.float32))
        kv.allocate_vecattrs(attrs=["count"], types=[np.int64])
        kv.expandos["count"][:] = len(rows) - np.arange(len(rows))
        return kv

    def vectors_for_all(self, keys: Iterable, allow_inference: bool = True, copy_vecattrs: bool = False):
        """gensim's ``vectors_for_all``: an in-memory words index of ``keys`` (each once, in order); unseen words
        get their n-gram vectors from a fastText ``.bin`` when ``allow_inference``, else they are left out."""
        keys = list(dict.fromkeys(keys))
        if not allow_inference or self.subwords is None:
            keys = [k for k in keys if k in self]
        matrix, _ = self._vectors_of(keys)
        return type(self)._in_memory(keys, matrix, origin=f"{self.name}[{len(keys)} keys]", source=str(self.name))


for _name, (_way, _note) in GENSIM.items():
    if _way is None:
        setattr(KeyedVectorsAPI, _name, _RefusedMember(_name))


def gensim_table() -> str:
    """The "Coming from gensim" table (docs/gensim.md) as Markdown: every member of :data:`GENSIM`."""
    lines = ["| gensim `KeyedVectors` | lexprobe | note |", "|---|---|---|"]
    for name, (way, note) in sorted(GENSIM.items()):
        lines.append(f"| `{name}` | {f'`{way}`' if way else 'refused'} | {note} |")
    return "\n".join(lines) + "\n"


def evaluate_word_analogies(index, analogies: str | Path, restrict_vocab: int | None = 300000,
                            case_insensitive: bool = True, dummy4unknown: bool = False,
                            similarity_function: str = "most_similar") -> AnalogyEvaluation:
    """gensim's ``evaluate_word_analogies`` (:meth:`~.words.WordIndex.evaluate_word_analogies` documents it)."""
    from ..sources.datahome import dataset_path
    from ..sources.datasets.google import read_questions
    from .section_scores import score_sections

    if similarity_function != "most_similar":
        raise LexprobeError(f"evaluate_word_analogies: similarity_function={similarity_function!r} is not offered "
                            "(3CosAdd, gensim's 'most_similar', is); 3CosMul per section: lexprobe query analogy "
                            "--questions FILE --method mul")
    scores = score_sections(index, read_questions(dataset_path(analogies)), restrict_vocab=restrict_vocab,
                            case_insensitive=case_insensitive)
    sections: list[dict] = []  # gensim's: a new entry at every change of section
    for section, words, asked, correct in zip(scores.sections, scores.words, scores.asked, scores.correct):
        if not sections or sections[-1]["section"] != section:
            sections.append({"section": section, "correct": [], "incorrect": []})
        if asked or dummy4unknown:
            sections[-1]["correct" if correct else "incorrect"].append(words)
    total = {"section": "Total accuracy", "correct": [q for s in sections for q in s["correct"]],
             "incorrect": [q for s in sections for q in s["incorrect"]]}
    answered = len(total["correct"]) + len(total["incorrect"])
    answers = index.words_at(scores.predicted.clip(0))
    four = list(zip(*scores.words)) if scores.words else [[], [], [], []]
    questions = pa.table({
        "section": pa.array(scores.sections, pa.string()),
        **{c: pa.array(list(col), pa.string()) for c, col in zip(("a", "a_star", "b", "b_star"), four)},
        "asked": pa.array(scores.asked),
        "answer": pa.array([w if p >= 0 else None for w, p in zip(answers, scores.predicted.tolist())], pa.string()),
        "correct": pa.array(scores.correct)})
    return AnalogyEvaluation(len(total["correct"]) / answered if answered else 0.0, sections + [total], questions,
                             scores)
