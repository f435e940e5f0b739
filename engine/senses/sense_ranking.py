"""Query-by-example sense ranking (Gessler & Schneider, "BERT Has Uncommon Sense", section 3).

A query instance (a sense-tagged token of the query corpus Q) ranks the candidate instances of the database
corpus D by cosine similarity of their token vectors. Candidates are D's instances of the query's lemma and
part of speech (WordNet senses belong to a lemma *and* a POS, and the paper's OntoNotes labels are
lemma-POS too; ``match_pos=False`` pools the POS, ``all_lemmas=True`` ranks every sense-tagged instance of D).
A candidate is relevant when its sense equals the query's sense: an instance with several gold keys (SemCor
has 656) keeps the first one, as the gold file lists it, both as a query and as a candidate.

Cells (Table 1): ``r`` is the share of D's instances of the query's lemma that carry its sense, and ``l`` the
lemma's frequency in D (``frequency="lemma"``, the paper's text: "the instance's lemma's frequency") or the
sense's (``frequency="sense"``, what the authors' code counts). SemCor tags the names of people, groups and
places as instances of the lemmas person, group and location (``Fulton County Grand Jury`` is ``group``);
:func:`without_proper_names` leaves them out.

Metrics of one query with ``R`` relevant among ``N`` candidates, ranked once in full:

- ``P@k`` (k = 1..K, K = 50 by default) = relevant among the top ``min(k, N)`` / ``k``. When fewer than
  ``k`` candidates exist the missing ranks count as misses (the denominator stays ``k``), as the paper's
  scorer does (it divides by ``k`` whatever the list length); so ``P@k = R / k`` for ``k >= N``.
- ``recall@k`` = relevant among the top ``min(k, N)`` / ``R``.
- ``AP`` (true average precision over the full ranking) = mean over the ``R`` relevant candidates of the
  precision at the rank where each is found.

Ties in score are broken by database row order (a stable sort), so results are deterministic.

Headline numbers of a set of queries (a Table-1 cell): **mean P@k** (``p_at_k_mean``) = the mean over
k = 1..K of the queries' mean P@k; this is the number in the paper's Table 1 (its "mean average precision
over precision at k for 50 instances"). **MAP** (``map``) = the mean of the queries' true AP. The random
baseline of a cell is the exact expectation of the same numbers under a uniformly random ranking of each
query's candidates (:func:`random_baseline`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core.conventions import Result
from ..core.progress import bar
from .sense_cells import DEFAULT_LEMMA_EDGES, DEFAULT_RATIO_EDGES, assign_cells, query_statistics

DEFAULT_K = 50
DEFAULT_MIN_SENSE_COUNT = 5
FREQUENCIES = ("lemma", "sense")  # what l counts: the paper's text, the authors' code
_BLOCK_ELEMENTS = 4_000_000  # scores per matrix-product block (queries x candidates)


@dataclass
class RankMetrics:
    """Per-query metrics of one ranking: arrays with one row per query."""

    p_at_k: np.ndarray       # (m, K) float64, P@1..P@K
    recall_at_k: np.ndarray  # (m, K) float64, recall@1..recall@K (nan when R = 0)
    ap: np.ndarray           # (m,) float64, true average precision (nan when R = 0)
    n_candidates: np.ndarray  # (m,) int64, N
    n_relevant: np.ndarray    # (m,) int64, R


def _empty(m: int, k_max: int) -> RankMetrics:
    return RankMetrics(np.zeros((m, k_max)), np.full((m, k_max), np.nan), np.full(m, np.nan),
                       np.zeros(m, np.int64), np.zeros(m, np.int64))


def rank_metrics(queries: np.ndarray, query_senses: np.ndarray, candidates: np.ndarray,
                 candidate_senses: np.ndarray, *, k_max: int = DEFAULT_K, exclude: np.ndarray | None = None,
                 block: int = _BLOCK_ELEMENTS) -> RankMetrics:
    """Rank ``candidates`` for every query by inner product (cosine for unit rows) and score the rankings.

    ``queries`` (m, d) and ``candidates`` (n, d) are float32 unit vectors; ``*_senses`` are integer sense
    codes (equal code = relevant). ``exclude``: per query, a candidate position never ranked (the query
    itself when Q and D are the same corpus), or -1. One matrix product per block of queries.
    """
    queries = np.asarray(queries, dtype=np.float32)
    candidates = np.asarray(candidates, dtype=np.float32)
    query_senses, candidate_senses = np.asarray(query_senses), np.asarray(candidate_senses)
    m, n = len(queries), len(candidates)
    if k_max < 1:
        raise ValueError(f"k_max must be at least 1, not {k_max}")
    if queries.ndim != 2 or candidates.ndim != 2 or (m and n and queries.shape[1] != candidates.shape[1]):
        raise ValueError(f"query vectors {queries.shape} and candidate vectors {candidates.shape} do not match")
    exclude = np.full(m, -1, np.int64) if exclude is None else np.asarray(exclude, np.int64)
    out = _empty(m, k_max)
    out.n_candidates[:] = n - (exclude >= 0)
    if m == 0 or n == 0:
        return out
    ks = np.arange(1, k_max + 1)
    last = np.minimum(ks, n) - 1  # column of the cumulative hits that P@k reads
    ranks = np.arange(1, n + 1, dtype=np.float64)
    step = max(1, block // n)
    for start in range(0, m, step):
        stop = min(m, start + step)
        scores = queries[start:stop] @ candidates.T
        relevant = query_senses[start:stop, None] == candidate_senses[None, :]
        ex = exclude[start:stop]
        rows = np.flatnonzero(ex >= 0)
        scores[rows, ex[rows]] = -np.inf  # ranked last and never relevant: changes no hit count
        relevant[rows, ex[rows]] = False
        order = np.argsort(-scores, axis=1, kind="stable")
        ranked = np.take_along_axis(relevant, order, axis=1)
        hits = np.cumsum(ranked, axis=1, dtype=np.int64)
        total = hits[:, -1]
        hits_at_k = hits[:, last]
        with np.errstate(invalid="ignore", divide="ignore"):
            out.p_at_k[start:stop] = hits_at_k / ks
            out.recall_at_k[start:stop] = hits_at_k / total[:, None]
            out.ap[start:stop] = (ranked * (hits / ranks)).sum(axis=1) / total
        out.n_relevant[start:stop] = total
    return out


def random_baseline(n_candidates: np.ndarray, n_relevant: np.ndarray, *,
                    k_max: int = DEFAULT_K) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact expected (P@k (m, K), recall@k (m, K), AP (m,)) of a uniformly random ranking.

    With ``R`` relevant among ``N``: E[P@k] = R / N for k <= N and R / k for k > N (every candidate is
    retrieved, missing ranks are misses, as in :func:`rank_metrics`); E[recall@k] = min(k, N) / N;
    E[AP] = (H_N + (R - 1) / (N - 1) * (N - H_N)) / N with H_N the N-th harmonic number (1 when N = 1),
    from E[AP] = 1/R sum_i P(rank i relevant) E[hits_i | rank i relevant] / i.
    """
    N = np.asarray(n_candidates, dtype=np.float64)
    R = np.asarray(n_relevant, dtype=np.float64)
    ks = np.arange(1, k_max + 1, dtype=np.float64)
    retrieved = np.minimum(ks[None, :], N[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        p = R[:, None] * retrieved / (N[:, None] * ks[None, :])
        recall = np.where(R[:, None] > 0, retrieved / N[:, None], np.nan)
        harmonic = _harmonic(N)
        spread = np.where(N > 1, (R - 1) / np.maximum(N - 1, 1), 0.0)
        ap = np.where(R > 0, (harmonic + spread * (N - harmonic)) / N, np.nan)
    p = np.where(N[:, None] > 0, p, 0.0)
    return p, recall, ap


def _harmonic(n: np.ndarray) -> np.ndarray:
    """H_n = sum_{i<=n} 1/i for an array of non-negative integers (exact table up to the largest n)."""
    n = np.asarray(n, dtype=np.int64)
    top = int(n.max()) if n.size else 0
    table = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, top + 1))])
    return table[n]


@dataclass
class Instances:
    """Sense-tagged token instances: a metadata table (at least ``lemma``, ``pos``, ``sense``) and its unit
    vectors, row for row."""

    table: pa.Table
    vectors: np.ndarray  # (n, d) float32 unit rows

    def __post_init__(self) -> None:
        if len(self.table) != len(self.vectors):
            raise ValueError(f"{len(self.table)} metadata rows but {len(self.vectors)} vectors")

    def tagged(self) -> "Instances":
        """Only the rows with a sense."""
        keep = self.table.column("sense").is_valid().to_numpy(zero_copy_only=False)
        if keep.all():
            return self
        rows = np.flatnonzero(keep)
        return Instances(self.table.take(rows), self.vectors[rows])


PROPER_NAME_LEMMAS = ("person", "group", "location")


def proper_name_mask(table: pa.Table) -> np.ndarray:
    """Rows that stand for a proper name: lemma person, group or location and words that are not that lemma
    (``Fulton County`` as ``location``; ``groups`` as ``group`` is the common noun)."""
    lemma = table.column("lemma").to_pylist()
    surface = table.column("surface").to_pylist() if "surface" in table.column_names else lemma
    return np.array([lem in PROPER_NAME_LEMMAS and not (s or "").lower().startswith(lem)
                     for lem, s in zip(lemma, surface)], dtype=bool)


def without_proper_names(instances: Instances) -> tuple[Instances, int]:
    """``instances`` without the rows of :func:`proper_name_mask`, and how many were left out."""
    drop = proper_name_mask(instances.table)
    if not drop.any():
        return instances, 0
    rows = np.flatnonzero(~drop)
    return Instances(instances.table.take(rows), instances.vectors[rows]), int(drop.sum())


def _codes(*columns: pa.ChunkedArray) -> list[np.ndarray]:
    """Shared integer codes for several string columns (equal strings, equal codes)."""
    joined = pa.chunked_array([c for col in columns for c in col.chunks], type=pa.string())
    codes = joined.dictionary_encode().combine_chunks().indices.to_numpy(zero_copy_only=False)
    out, start = [], 0
    for col in columns:
        out.append(codes[start:start + len(col)].astype(np.int64))
        start += len(col)
    return out


def _lemma_keys(table: pa.Table, match_pos: bool) -> pa.ChunkedArray:
    """The candidate key of every row: its lemma, or lemma and POS (a missing value counts as '')."""
    lemma = pc.fill_null(table.column("lemma"), "")
    if not match_pos:
        return lemma
    return pc.binary_join_element_wise(lemma, pc.fill_null(table.column("pos"), ""), "\t")


def rank_senses(database: Instances, queries: Instances, *, k_max: int = DEFAULT_K,
                min_sense_count: int = DEFAULT_MIN_SENSE_COUNT, match_pos: bool = True, all_lemmas: bool = False,
                same_corpus: bool = False, lemma_edges=DEFAULT_LEMMA_EDGES, ratio_edges=DEFAULT_RATIO_EDGES,
                limit_queries: int | None = None, seed: int = 0, frequency: str = "lemma",
                desc: str = "ranking") -> tuple[pa.Table, dict]:
    """Rank D's instances for every eligible query of Q and score each ranking; (per-query table, skips).

    Eligible queries have a gold sense that occurs at least ``min_sense_count`` times among D's instances
    of the query's lemma (with ``same_corpus``, Q is D and the query itself is neither counted nor ranked).
    Candidates: D's instances of the query's lemma (and POS when ``match_pos``), or all of D with
    ``all_lemmas``. ``limit_queries`` keeps a random sample (``seed``) of the eligible queries. ``frequency``:
    what ``l`` of the cells counts, the lemma's instances in D (``"lemma"``) or the query sense's (``"sense"``).
    Queries are grouped by lemma, and each group is ranked with one matrix product per block.
    The table holds Q's metadata columns and ``lemma_freq`` (l), ``sense_count``, ``sense_ratio`` (r),
    ``cell``, ``n_candidates`` (N), ``n_relevant`` (R), ``ap``, ``p_at_k_mean`` (mean over k = 1..K),
    ``p_at_k`` and ``recall_at_k`` (lists of K), and the random baseline's ``random_ap``,
    ``random_p_at_k_mean`` and ``random_p_at_k``.
    """
    if frequency not in FREQUENCIES:
        raise ValueError(f"frequency must be one of {', '.join(FREQUENCIES)}, not {frequency!r}")
    database, queries = database.tagged(), queries.tagged()
    lemma_freq, sense_count = query_statistics(database.table, queries.table, match_pos=match_pos)
    if same_corpus:  # the query is one of D's instances: it does not count for itself
        lemma_freq, sense_count = lemma_freq - 1, sense_count - 1
    keep = sense_count >= max(1, min_sense_count)
    skips = {"sense rarer than min_sense_count in the database": int((~keep).sum())}
    q_rows = np.flatnonzero(keep)
    if limit_queries is not None and limit_queries < len(q_rows):
        skips["not in the --limit-queries sample"] = len(q_rows) - limit_queries
        q_rows = np.sort(np.random.default_rng(seed).choice(q_rows, size=limit_queries, replace=False))
    d_sense, q_sense = _codes(database.table.column("sense"), queries.table.column("sense"))
    if all_lemmas:
        d_group, q_group = np.zeros(len(database.table), np.int64), np.zeros(len(queries.table), np.int64)
    else:
        d_group, q_group = _codes(_lemma_keys(database.table, match_pos), _lemma_keys(queries.table, match_pos))
    d_order = np.argsort(d_group, kind="stable")
    d_sorted = d_group[d_order]
    q_rows = q_rows[np.argsort(q_group[q_rows], kind="stable")]
    groups, starts = np.unique(q_group[q_rows], return_index=True)
    metrics = _empty(len(q_rows), k_max)
    for g, lo, hi in bar(zip(groups, starts, np.append(starts[1:], len(q_rows))), total=len(groups), desc=desc,
                         unit="lemma"):
        cand = d_order[np.searchsorted(d_sorted, g, "left"):np.searchsorted(d_sorted, g, "right")]
        rows = q_rows[lo:hi]
        exclude = None
        if same_corpus:  # the query's own row among the candidates (cand is ascending)
            at = np.minimum(np.searchsorted(cand, rows), max(len(cand) - 1, 0))
            exclude = np.where(cand[at] == rows, at, -1) if len(cand) else None
        part = rank_metrics(queries.vectors[rows], q_sense[rows], database.vectors[cand], d_sense[cand],
                            k_max=k_max, exclude=exclude)
        for name in ("p_at_k", "recall_at_k", "ap", "n_candidates", "n_relevant"):
            getattr(metrics, name)[lo:hi] = getattr(part, name)
    rand_p, _, rand_ap = random_baseline(metrics.n_candidates, metrics.n_relevant, k_max=k_max)
    ratio = sense_count[q_rows] / np.maximum(lemma_freq[q_rows], 1)
    bucket_freq = (lemma_freq if frequency == "lemma" else sense_count)[q_rows]
    cells, labels = assign_cells(bucket_freq, ratio, lemma_edges=lemma_edges, ratio_edges=ratio_edges)
    out = queries.table.take(q_rows)
    columns = {
        "lemma_freq": lemma_freq[q_rows], "sense_count": sense_count[q_rows], "sense_ratio": ratio,
        "cell": pa.array([labels[c] for c in cells], pa.string()),
        "n_candidates": metrics.n_candidates, "n_relevant": metrics.n_relevant, "ap": metrics.ap,
        "p_at_k_mean": metrics.p_at_k.mean(axis=1),
        "p_at_k": _list_column(metrics.p_at_k), "recall_at_k": _list_column(metrics.recall_at_k),
        "random_ap": rand_ap, "random_p_at_k_mean": rand_p.mean(axis=1), "random_p_at_k": _list_column(rand_p),
    }
    for name, values in columns.items():
        out = out.append_column(name, values if isinstance(values, pa.Array) else pa.array(values))
    return out, skips


def _list_column(matrix: np.ndarray) -> pa.FixedSizeListArray:
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    return pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1])


@dataclass
class SenseRanking(Result):
    """What :func:`sense_ranking` computed: one row per query (:meth:`to_arrow`) and the paper's Table 1 cells."""

    queries: pa.Table        # per query: rank_senses' columns (lemma_freq, sense_ratio, cell, ap, p_at_k, ...)
    cells: list[dict]        # per cell and "all": queries, lemmas, mean P@k, MAP and the random baseline's
    skips: dict              # queries left out, by reason

    def to_arrow(self) -> pa.Table:
        return self.queries


def sense_ranking(database, queries=None, *, lemma_edges=DEFAULT_LEMMA_EDGES, ratio_edges=DEFAULT_RATIO_EDGES,
                  **options) -> SenseRanking:
    """Gessler and Schneider's query-by-example ranking between two token indexes (``queries`` None: the
    database against itself, each query left out), scored by P@k and AP and summarised per cell of lemma
    frequency x sense proportion. ``options`` are :func:`rank_senses`'s (k_max, min_sense_count, frequency, ...).

    >>> import json, pathlib, tempfile, lexprobe
    >>> home = pathlib.Path(tempfile.mkdtemp()); corpus = home / "bank.jsonl"
    >>> rows = [("we sat on the river bank", 5, "slope"), ("the bank lent us money", 1, "money"),
    ...         ("she rowed to the bank of the lake", 4, "slope"), ("my bank charges a fee", 1, "money"),
    ...         ("grass grew on the bank of the river", 4, "slope"), ("he robbed the bank at noon", 3, "money")]
    >>> _ = corpus.write_text("\\n".join(json.dumps({"text": t, "targets": [{"position": p, "sense": s, "lemma": "bank"}]})
    ...                                  for t, p, s in rows))
    >>> _ = lexprobe.build_token_index("bank", "minilm", f"jsonl:{corpus}", home=home)
    >>> ranking = lexprobe.sense_ranking(lexprobe.open_index("bank", home=home), k_max=2, min_sense_count=2)
    >>> len(ranking.queries), [c["cell"] for c in ranking.cells][-1]
    (6, 'all')
    """
    from .sense_cells import cell_labels, summarize_cells

    same = queries is None or queries is database
    d = Instances(database.table, database.unit)
    q = d if same else Instances(queries.table, queries.unit)
    table, skips = rank_senses(d, q, same_corpus=same, lemma_edges=lemma_edges, ratio_edges=ratio_edges, **options)
    cells, _ = summarize_cells(table, cell_labels(lemma_edges, ratio_edges))
    return SenseRanking(table, cells, skips)
