"""The decomposition of the 3CosAdd analogy score (Fournier, Dunbar and Dupoux 2020, section 3).

For a tuple a:a*::b:b* with offsets ``o_a = a* - a`` and ``o_b = b* - b`` (so ``b* = b + o_b``) and the query
``q = b + o_a``, the analogy score ``cos(q, b*)`` splits exactly into three terms (Figure 1)::

    q.b* / (|q| |b*|) = b.b* / (|q| |b*|)  +  o_a.o_b / (|q| |b*|)  +  o_a.b / (|q| |b*|)
                        within-pair          offset                  start-offset

The reference decomposition (Figure 8) is the same with b* replaced by ``q`` itself (``o_b = o_a``; the score
is 1): ``b.q / |q|^2 + o_a.o_a / |q|^2 + o_a.b / |q|^2``. The honest-test margin
``Delta_sim = cos(q, b*) - cos(q, b)`` splits as (Figure 2)::

    [ q.b (1/|b*| - 1/|b|)  +  o_a.o_b / |b*|  +  b.o_b / |b*| ] / |q|
      norm term               offset term         b-o_b term

Terms are computed on the raw vectors by default (the norm term is zero for unit vectors), or on unit vectors
with ``normalize=True``; one row per tuple (all ordered pairs of a relation's pairs, a != b, or the questions it lists), vectorised.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..core.seeds import rng_for
from ..sources.datasets.bats import Relation
from ..core.vector_index import unit_rows
from ..kinds.words import WordIndex

TERMS = ("within", "offset", "start_offset")
REFERENCE = ("ref_within", "ref_offset", "ref_start_offset")
DELTA = ("delta_norm", "delta_offset", "delta_b_ob")


def _dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", x, y, dtype=np.float64)


def decompose(a: np.ndarray, a_star: np.ndarray, b: np.ndarray, b_star: np.ndarray) -> dict[str, np.ndarray]:
    """All terms for tuples given as (m, d) vector matrices, in float64: ``score`` and its three terms,
    the reference terms, ``delta_sim`` and its three terms."""
    a, a_star, b, b_star = (np.asarray(x, dtype=np.float64) for x in (a, a_star, b, b_star))
    o_a, o_b = a_star - a, b_star - b
    q = b + o_a
    nq, nb, nbs = (np.linalg.norm(x, axis=1) for x in (q, b, b_star))
    den = nq * nbs
    out = {
        "score": _dot(q, b_star) / den,
        "within": _dot(b, b_star) / den,
        "offset": _dot(o_a, o_b) / den,
        "start_offset": _dot(o_a, b) / den,
        "ref_within": _dot(b, q) / nq ** 2,
        "ref_offset": _dot(o_a, o_a) / nq ** 2,
        "ref_start_offset": _dot(o_a, b) / nq ** 2,
    }
    qb = _dot(q, b)
    out["delta_sim"] = out["score"] - qb / (nq * nb)
    out["delta_norm"] = qb * (1 / nbs - 1 / nb) / nq
    out["delta_offset"] = _dot(o_a, o_b) / (nbs * nq)
    out["delta_b_ob"] = _dot(b, o_b) / (nbs * nq)
    return out


def decompose_relations(words: WordIndex, relations: list[Relation], *, normalize: bool = False) -> pa.Table:
    """One row per question of every relation with at least two pairs (b* = the pair's first kept answer): every
    ordered pair of its pairs, or the questions it lists."""
    vectors = unit_rows(words.raw)[0] if normalize else words.raw
    parts = []
    for rel in relations:
        ii, jj = rel.question_index()
        if len(rel.pairs) < 2 or not len(ii):
            continue
        s, e = words.ids(rel.starts), words.ids(rel.ends)
        terms = decompose(vectors[s[ii]], vectors[e[ii]], vectors[s[jj]], vectors[e[jj]])
        vocab = np.asarray(words.words, dtype=object)
        parts.append(pa.table({
            "relation": [rel.name] * len(ii), "category": [rel.category] * len(ii),
            "a": vocab[s[ii]].tolist(), "a_star": vocab[e[ii]].tolist(), "b": vocab[s[jj]].tolist(),
            "b_star": vocab[e[jj]].tolist(), **terms}))
    if not parts:
        return pa.table({})
    return pa.concat_tables(parts)


def relation_means(table: pa.Table) -> list[dict]:
    """Mean of every term per relation (the bars of Figures 1, 2 and 8, drawn by the run layer), relations in
    table order."""
    rel = np.asarray(table.column("relation").to_pylist(), dtype=object)
    cat = table.column("category").to_pylist()
    names = ("score",) + TERMS + REFERENCE + ("delta_sim",) + DELTA
    cols = {c: table.column(c).to_numpy() for c in names}
    rows = []
    for name in dict.fromkeys(rel):
        m = rel == name
        rows.append({"relation": name, "category": cat[int(np.argmax(m))], "tuples": int(m.sum()),
                     **{c: float(cols[c][m].mean()) for c in names}})
    return rows


def pair_set_terms(vectors: np.ndarray, start_ids: np.ndarray, end_ids: np.ndarray) -> dict[str, float]:
    """The mean of every term of :func:`decompose` over all ordered pairs of pairs (i != j) of one set of word
    pairs given as row ids of ``vectors`` (raw vectors): a relation's Figure 1 terms from an offsets index."""
    n = len(start_ids)
    ii, jj = np.nonzero(~np.eye(n, dtype=bool))
    s, e = np.asarray(start_ids), np.asarray(end_ids)
    terms = decompose(vectors[s[ii]], vectors[e[ii]], vectors[s[jj]], vectors[e[jj]])
    return {name: float(values.mean()) for name, values in terms.items()}


def resampled_means(sums: np.ndarray, counts: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Means over the tuples of resampled pairs: ``sums[i, j]`` / ``counts[i, j]`` are the sum and number of
    tuples whose (a, a*) is pair i and (b, b*) pair j; ``draws`` (resamples, n) how often each pair was drawn.
    A tuple (i, j) counts ``draws[i] * draws[j]`` times (i != j: a tuple never pairs a pair with itself)."""
    num = np.einsum("ri,ij,rj->r", draws, sums, draws)
    den = np.einsum("ri,ij,rj->r", draws, counts, draws)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def relation_intervals(table: pa.Table, columns: dict[str, np.ndarray] | None = None, *, resamples: int = 1000,
                       seed: int = 0, level: float = 0.95) -> list[dict]:
    """Per relation of a :func:`decompose_relations` table: the mean of each term over its tuples and a
    percentile bootstrap interval (95% by default) that resamples the relation's pairs, not its tuples: every
    pair takes part in about 2n tuples, so tuples are not independent and a tuple bootstrap would be too narrow.
    A resample draws n pairs with replacement and averages the tuples both of whose pairs were drawn.

    ``columns`` (name -> one value per row of ``table``, e.g. a difference of terms) are used instead of the
    table's term columns. Rows ``relation, category, pairs, tuples`` and ``<name>``, ``<name>_low``,
    ``<name>_high`` per column; a relation's seed is (``seed``, its name)."""
    if columns is None:
        columns = {c: table.column(c).to_numpy() for c in ("score",) + TERMS + REFERENCE + ("delta_sim",) + DELTA}
    rel = np.asarray(table.column("relation").to_pylist(), dtype=object)
    cat = table.column("category").to_pylist()
    a = np.asarray(table.column("a").to_pylist(), dtype=object)
    b = np.asarray(table.column("b").to_pylist(), dtype=object)
    bounds = [(1 - level) / 2, (1 + level) / 2]
    rows = []
    for name in dict.fromkeys(rel):
        m = np.flatnonzero(rel == name)
        keys, idx = np.unique(np.concatenate([a[m], b[m]]), return_inverse=True)
        i, j, n = idx[: len(m)], idx[len(m):], len(keys)
        counts = np.zeros((n, n))
        np.add.at(counts, (i, j), 1.0)
        draws = rng_for(seed, "decomposition-bootstrap", name).multinomial(n, np.full(n, 1 / n), size=resamples)
        row = {"relation": name, "category": cat[m[0]], "pairs": n, "tuples": len(m)}
        for col, values in columns.items():
            sums = np.zeros((n, n))
            np.add.at(sums, (i, j), np.asarray(values, dtype=np.float64)[m])
            low, high = np.nanquantile(resampled_means(sums, counts, draws.astype(np.float64)), bounds)
            row.update({col: float(sums.sum() / counts.sum()), f"{col}_low": float(low), f"{col}_high": float(high)})
        rows.append(row)
    return rows
