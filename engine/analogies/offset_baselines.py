"""The random analogy sets of Fournier et al. (2020), Table 1: sets of word pairs built to have no pairing
consistency, against which the OCS and PCS of the real relations are read.

For every relation and replicate (all as word-id arrays over one words index):

- ``permuted``: the relation's end words re-assigned to its start words by one shuffle (a derangement with no
  true pair and no zero offset, exactly as the PCS shuffles): a set that is "already shuffled". Its PCS is
  scored against the real relation's shuffled offsets, as the authors' code does (``random_sets.py``,
  ``ocs_pcs_random``): shuffling the permuted set again can re-create the real pairs, which are more parallel,
  and biased its PCS below 0.5 (.4953 over BATS on GloVe 50d, .4998 scored the authors' way).
- ``mismatched-within`` / ``mismatched-across``: the start words of this relation with the end words of another
  relation of the same broad type / of another broad type. The partner relations are one random permutation
  of the relations per replicate (each relation gives its end words once, never to itself), then
  ``min(n_start, n_end)`` (50 in BATS) random pairs: a random order of the starts zipped with a random order of
  the partner's ends; a pair whose start equals its end (zero offset) is dropped.
- ``random-start``, ``random-end``, ``random-both``: the start words, the end words, or both replaced by
  distinct random words drawn from the pool: the N most frequent alphabetic words of the words index that
  appear nowhere in the dataset (no start, no listed answer). ``random-both`` draws a fresh set per relation
  (of that relation's size) so every kind has one set per relation and replicate.

Every random choice comes from :func:`rng_for` (seed, kind, replicate, relation): the same seed gives the
same sets whatever else is computed, and a relation's shuffles do not depend on the other relations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from ..core.errors import LexprobeError
from ..core.progress import bar
from ..kinds.offsets import OffsetIndex, offset_table
from ..kinds.words import WordIndex
from ..core.seeds import rng_for
from .offset_consistency import (SHUFFLED, PairSet, constrained_permutations, ocs, offset_scores, pcs_from_units,
                      relation_sets, shuffles, stored_shuffle_units, unit_offsets)

KINDS = ("permuted", "mismatched-within", "mismatched-across", "random-start", "random-end", "random-both")


def random_pool(words: Sequence[str], exclude: set[str], size: int) -> np.ndarray:
    """Row ids of the ``size`` first (most frequent) alphabetic words not in ``exclude``.

    ``words`` is in frequency order (row order of a words index). Punctuation, numbers and tokens like
    ``'s`` are skipped: they are not words a relation could hold.
    """
    chosen = []
    for i, w in enumerate(words):
        if w.isalpha() and w not in exclude:
            chosen.append(i)
            if len(chosen) == size:
                break
    return np.asarray(chosen, dtype=np.int64)


def permuted_set(rel: PairSet, rng: np.random.Generator) -> PairSet:
    perm = shuffles(rel.start_ids, rel.end_ids, 1, rng, what=rel.relation)[0]
    return PairSet(rel.relation, rel.category, rel.start_ids, rel.end_ids[perm])


def mismatched_sets(relations: Sequence[PairSet], rng: np.random.Generator, *, within: bool) -> list[PairSet]:
    """One mismatched set per relation; partners from the same broad type (``within``) or another one."""
    cats = np.array([r.category for r in relations])
    same = cats[:, None] == cats[None, :]
    forbidden = (~same | np.eye(len(cats), dtype=bool)) if within else same
    what = f"mismatched-{'within' if within else 'across'} partners of {len(cats)} relations"
    partner = constrained_permutations(forbidden, 1, rng, what=what)[0]
    out = []
    for rel, j in zip(relations, partner):
        other = relations[j]
        n = min(len(rel), len(other))
        starts = rng.permutation(rel.start_ids)[:n]
        ends = rng.permutation(other.end_ids)[:n]
        keep = starts != ends
        out.append(PairSet(rel.relation, rel.category, starts[keep], ends[keep], partner=other.relation))
    return out


def random_sets(kind: str, relations: Sequence[PairSet], pool: np.ndarray, rng: np.random.Generator) -> list[PairSet]:
    """``random-start``, ``random-end`` or ``random-both`` sets, one per relation (distinct pool words)."""
    out = []
    for rel in relations:
        n = len(rel)
        picks = rng.choice(pool, size=2 * n if kind == "random-both" else n, replace=False)
        if kind == "random-start":
            out.append(PairSet(rel.relation, rel.category, picks, rel.end_ids))
        elif kind == "random-end":
            out.append(PairSet(rel.relation, rel.category, rel.start_ids, picks))
        else:
            out.append(PairSet(rel.relation, rel.category, picks[:n], picks[n:]))
    return out


def possible_kinds(relations: Sequence[PairSet]) -> list[str]:
    """The kinds that can be built: mismatched-within needs every broad type to hold 2 relations or more,
    mismatched-across 2 broad types or more (a dataset given as one category folder has neither)."""
    counts = np.unique([r.category for r in relations], return_counts=True)[1]
    impossible = {"mismatched-within"} if counts.min() < 2 else set()
    impossible |= {"mismatched-across"} if len(counts) < 2 else set()
    return [k for k in KINDS if k not in impossible]


def baseline_sets(kind: str, relations: Sequence[PairSet], pool: np.ndarray, *, seed: int,
                  replicate: int) -> list[PairSet]:
    """Replicate ``replicate`` of baseline ``kind``: one set per relation, seeded by (seed, kind, replicate)."""
    if kind not in KINDS:
        raise LexprobeError(f"unknown random set {kind!r} (choose from {', '.join(KINDS)})")
    if kind == "permuted":
        return [permuted_set(rel, rng_for(seed, kind, replicate, rel.relation)) for rel in relations]
    rng = rng_for(seed, kind, replicate)
    if kind.startswith("mismatched"):
        return mismatched_sets(relations, rng, within=kind == "mismatched-within")
    need = 2 * max(len(r) for r in relations) if kind == "random-both" else max(len(r) for r in relations)
    if len(pool) < need:
        raise LexprobeError(f"the random word pool has {len(pool)} words, {kind} needs {need}")
    return random_sets(kind, relations, pool, rng)


# ------------------------------------------------------------------------------------------- Table 1

SETS = ("bats",) + KINDS


def _iqr(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    if len(values) < 2:
        return float("nan")
    q1, q3 = np.percentile(values, [25, 75])
    return float(q3 - q1)


def _mean(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    return float(values.mean()) if len(values) else float("nan")


def scored_relations(true_rows) -> tuple[list[PairSet], list[str]]:
    """The relations of an offsets index's true rows that Table 1 scores (3 pairs or more, zero offsets left
    out), and the names of the others."""
    relations = [r for r in relation_sets(true_rows) if len(r) >= 3]
    skipped = sorted(set(true_rows.relation.tolist()) - {r.relation for r in relations})
    return relations, skipped


def score_set(vectors: np.ndarray, ps: PairSet, n_shuffles: int, rng: np.random.Generator) -> tuple[float, float]:
    """(OCS, PCS) of one pair set against its own shuffles; NaN for a set under 3 pairs (too few to shuffle
    meaningfully)."""
    if len(ps) < 3:
        return float("nan"), float("nan")
    s = offset_scores(vectors, ps.start_ids, ps.end_ids, n_shuffles=n_shuffles, rng=rng, what=ps.relation)
    return s.ocs, s.pcs


def score_against(vectors: np.ndarray, ps: PairSet, shuffled_unit: np.ndarray) -> tuple[float, float]:
    """(OCS, PCS) of one pair set whose PCS negatives are given: ``shuffled_unit`` (sets, n, d) unit offsets,
    the real relation's shuffles for a permuted set (the authors' scoring)."""
    _, unit = unit_offsets(vectors, ps.start_ids, ps.end_ids)
    pcs, _, sims = pcs_from_units(unit, shuffled_unit)
    return float(sims.mean()), pcs


def _set_rows_table(words, kind: str, replicate: int, seed: int, sets: Sequence[PairSet]):
    starts = np.concatenate([s.start_ids for s in sets])
    ends = np.concatenate([s.end_ids for s in sets])
    rel = [s.relation for s in sets for _ in range(len(s))]
    cat = [s.category for s in sets for _ in range(len(s))]
    raw = words.raw
    return offset_table(relation=rel, category=cat, start=[words.words[i] for i in starts],
                        end=[words.words[i] for i in ends], start_id=starts, end_id=ends,
                        offset=raw[ends] - raw[starts], kind=kind, replicate=replicate, seed=seed)


@dataclass
class Table1:
    """Table 1 and Figure 5 computed: every scored set, the two tables, and the random sets to store."""

    results: list[dict]                   # one row per scored set: a real relation, or a random set's replicate
                                          # (positive_share: of its sim(O) above 0, the real relations only)
    by_category: list[dict]               # Table 1: by broad category and overall (:func:`summarise`)
    by_relation: list[dict]               # per relation: BATS beside every random set, mean over replicates
    similarities: dict[str, np.ndarray]   # broad category -> sim(O) of its true offsets (Figure 5)
    kinds: list[str]                      # the random-set kinds built (:func:`possible_kinds`)
    new_sets: pa.Table | None             # offsets-index rows of the random sets the index does not hold yet


def table1(words: WordIndex, index: OffsetIndex, relations: Sequence[PairSet], pool: np.ndarray, *,
           n_shuffles: int = 50, replicates: int = 10, seed: int = 0) -> Table1:
    """OCS and PCS of every relation and of every random set; reads the offsets index, writes nothing.

    Real relations are scored from the index: their true offsets against their ``n_shuffles`` stored shuffles
    for ``seed`` (append the missing ones first: :func:`~lexprobe.analogies.offset_consistency.missing_shuffles`). A
    permuted set is scored against the same shuffles of its relation, every other random set against its own
    ``n_shuffles`` shuffles; the sets of a (kind, replicate, seed) the index does not hold yet come back as rows
    to append.
    """
    true_rows = index.select(kind="true")
    stored = index.select(kind=SHUFFLED)
    raw = words.raw
    kinds = possible_kinds(relations)
    progress = bar(total=len(relations) * (1 + len(kinds) * replicates), desc="offset sets", unit="set")
    results, similarities, real_shuffles = [], {}, {}
    for rel in relations:
        mask = (true_rows.relation == rel.relation) & (true_rows.start_id != true_rows.end_id)
        true_unit = true_rows.unit[mask]
        real_shuffles[rel.relation] = stored_shuffle_units(index, rel.relation, len(rel), n_shuffles, seed, stored)
        pcs, _, sims = pcs_from_units(true_unit, real_shuffles[rel.relation])
        similarities.setdefault(rel.category, []).append(sims)
        results.append({"set": "bats", "replicate": -1, "relation": rel.relation, "category": rel.category,
                        "partner": "", "n_pairs": len(rel), "ocs": float(ocs(true_unit)), "pcs": pcs,
                        "positive_share": float((sims > 0).mean())})
        progress.update()
    earlier = index.select(kind=list(KINDS))
    kinds_stored = set(zip(earlier.kind.tolist(), earlier.seed.tolist(), earlier.replicate.tolist()))
    to_store = []
    for kind in kinds:
        for rep in range(replicates):
            sets = baseline_sets(kind, relations, pool, seed=seed, replicate=rep)
            for ps in sets:
                o, p = score_against(raw, ps, real_shuffles[ps.relation]) if kind == "permuted" else \
                    score_set(raw, ps, n_shuffles, rng_for(seed, kind, rep, ps.relation, SHUFFLED))
                results.append({"set": kind, "replicate": rep, "relation": ps.relation, "category": ps.category,
                                "partner": ps.partner, "n_pairs": len(ps), "ocs": o, "pcs": p,
                                "positive_share": float("nan")})
                progress.update()
            if (kind, seed, rep) not in kinds_stored:
                to_store.append(_set_rows_table(words, kind, rep, seed, sets))
    progress.close()
    by_category, by_relation = summarise(results, [r.relation for r in relations])
    return Table1(results, by_category, by_relation, {c: np.concatenate(v) for c, v in similarities.items()},
                  kinds, pa.concat_tables(to_store) if to_store else None)


def chance_rows(by_category: Sequence[dict]) -> list[dict]:
    """The paper's Table 1 rule for every random set, per broad category and overall: its PCS shows no pairing
    consistency when it lies within one half-interquartile range of 0.5, ``|PCS - 0.5| <= IQR/2`` (IQR over
    the cell's sets). One row per random-set row of ``by_category`` with the distance, the half IQR and
    whether the row passes."""
    rows = []
    for r in by_category:
        if r["set"] == "bats":
            continue
        distance, half = abs(r["pcs"] - 0.5), r["pcs_iqr"] / 2
        rows.append({"category": r["category"], "set": r["set"], "pcs": r["pcs"], "distance": distance,
                     "half_iqr": half, "within": bool(distance <= half)})
    return rows


def summarise(results: Sequence[dict], relation_order: Sequence[str]) -> tuple[list[dict], list[dict]]:
    """(Table 1 by broad category and overall, Table 1 per relation) from one row per scored set.

    By category: mean OCS and PCS over every set of that kind in the category (relations x replicates) and their
    interquartile range over those sets. Per relation: the mean over replicates, BATS beside every random set.
    """
    kind = np.array([r["set"] for r in results])
    cat = np.array([r["category"] for r in results])
    rel = np.array([r["relation"] for r in results])
    o = np.array([r["ocs"] for r in results], dtype=float)
    p = np.array([r["pcs"] for r in results], dtype=float)
    categories = list(dict.fromkeys(cat.tolist())) + ["all"]
    by_category = []
    for c in categories:
        for s in SETS:
            m = (kind == s) & ((cat == c) | (c == "all"))
            if m.any():
                by_category.append({"category": c, "set": s, "ocs": _mean(o[m]), "ocs_iqr": _iqr(o[m]),
                                    "pcs": _mean(p[m]), "pcs_iqr": _iqr(p[m]), "sets": int(m.sum())})
    by_relation = []
    for name in relation_order:
        m_rel = rel == name
        first = results[int(np.argmax(m_rel & (kind == "bats")))]
        row = {"relation": name, "category": first["category"], "n_pairs": first["n_pairs"]}
        for s in SETS:
            m = m_rel & (kind == s)
            row[f"{s}_ocs"], row[f"{s}_pcs"] = _mean(o[m]), _mean(p[m])
        by_relation.append(row)
    return by_category, by_relation
