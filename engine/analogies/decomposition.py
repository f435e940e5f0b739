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


def figure1_claims(means: list[dict]) -> list[dict]:
    """The paper's three claims on Figure 1 (section 3), each counted over the relations of ``means``
    (:func:`relation_means`): (1) the within-pair term is positive and larger than the start-offset term;
    (2) the offset term is positive ("always"); (3) the offset term is smaller than the within-pair term
    ("almost always"). One row per claim: how many relations hold it and the exceptions with their values."""
    code = lambda r: r["relation"].split()[0]
    claims = [
        ("within-pair positive and larger than start-offset", "within > 0 and within > start_offset",
         lambda r: r["within"] > 0 and r["within"] > r["start_offset"], ("within", "start_offset")),
        ("offset term positive", "offset > 0", lambda r: r["offset"] > 0, ("offset",)),
        ("offset term smaller than within-pair", "offset < within", lambda r: r["offset"] < r["within"],
         ("offset", "within")),
    ]
    rows = []
    for claim, criterion, holds, shown in claims:
        misses = [r for r in means if not holds(r)]
        rows.append({"claim": claim, "criterion": criterion, "holding": len(means) - len(misses),
                     "relations": len(means),
                     "exceptions": ", ".join(f"{code(r)} " + "/".join(f"{r[c]:+.4f}" for c in shown) for r in misses)})
    return rows
