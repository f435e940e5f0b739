"""Offset regularities (Fournier, Dunbar & Dupoux 2020, sections 4-5): offset concentration (OCS) and
pairing consistency (PCS) against shuffled offsets, as array math over word vectors.

- The offset of a pair (a, a*) is ``a* - a`` on the raw word vectors; its unit offset ``o = (a* - a)/|a* - a|``.
- ``sim(O)`` is the set of ``o_i . o_j`` for i < j: the strict upper triangle of the Gram matrix of O.
- OCS = mean of ``sim(O)``.
- A shuffle keeps the start words and gives them the end words in another order: a permutation ``p`` with,
  for every i, ``p(i) != i``, ``(start_i, end_p(i))`` not a true pair (so no end string equal to the true end
  either) and ``end_p(i) != start_i`` (a zero offset, frequent in the lexicographic relations where a start is
  another pair's end). Shuffles are drawn uniformly among such permutations (rejection sampling).
- PCS = mean over N_s shuffled sets O' of AUC(sim(O) positive, sim(O') negative), the ROC AUC computed as the
  Mann-Whitney statistic with ties counted half: P(x > y) + P(x = y)/2 over positives x and negatives y.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from ..sources.datasets.word_lines import word_lines
from ..core.conventions import Result
from ..core.errors import InputError, LexprobeError
from ..core.seeds import rng_for
from ..kinds.offsets import offset_table

SHUFFLE_BATCH = 4096     # most permutations drawn per rejection-sampling round (the first draws 4 x count)
REJECTION_DRAWS = 65536  # permutations drawn before the rest come from transposition chains
MIX_ROUNDS = 2000        # transpositions tried per chain (n = 50: about 40 n log n)


@dataclass
class PairSet:
    """One set of word pairs (word-id arrays) standing for a relation: a real one or a random baseline."""

    relation: str
    category: str
    start_ids: np.ndarray
    end_ids: np.ndarray
    partner: str = ""          # mismatched sets: the relation that gave the end words

    def __len__(self) -> int:
        return len(self.start_ids)




def unit_offsets(vectors: np.ndarray, start_ids: np.ndarray, end_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(raw offsets ``v[end] - v[start]``, unit offsets) for index arrays of any shape (...,) -> (..., d)."""
    raw = vectors[end_ids].astype(np.float64) - vectors[start_ids].astype(np.float64)
    norms = np.linalg.norm(raw, axis=-1, keepdims=True)
    if (norms == 0).any():
        raise LexprobeError("an offset is zero (a pair whose start and end vectors are equal)")
    return raw, raw / norms


def pairwise_similarities(unit: np.ndarray) -> np.ndarray:
    """``sim(O)``: the strict upper triangle of the Gram matrix, row-major; (..., n, d) -> (..., n(n-1)/2)."""
    unit = np.asarray(unit, dtype=np.float64)
    n = unit.shape[-2]
    gram = unit @ np.swapaxes(unit, -1, -2)
    rows, cols = np.triu_indices(n, 1)
    return gram[..., rows, cols]


def ocs(unit: np.ndarray) -> np.ndarray:
    """Offset concentration score: the mean pairwise similarity of unit offsets; (..., n, d) -> (...)."""
    if unit.shape[-2] < 2:
        raise LexprobeError(f"OCS needs at least 2 pairs, got {unit.shape[-2]}")
    return pairwise_similarities(unit).mean(axis=-1)


def auc(positives: np.ndarray, negatives: np.ndarray) -> np.ndarray:
    """ROC AUC of positives against negatives (Mann-Whitney U / (m n), ties counted half).

    ``negatives`` may be (n,) or (sets, n): one AUC per set, all against the same positives, with one sort of
    the positives and one ``searchsorted`` over every negative (no loop over pairs or sets).
    """
    pos = np.sort(np.asarray(positives, dtype=np.float64).ravel())
    neg = np.asarray(negatives, dtype=np.float64)
    if pos.size == 0 or neg.shape[-1] == 0:
        raise LexprobeError("AUC needs at least one positive and one negative")
    below = np.searchsorted(pos, neg, side="left")    # positives < y
    upto = below.copy()                                # positives <= y: differs only where y ties a positive
    tied = pos[np.minimum(below, pos.size - 1)] == neg
    upto[tied] = np.searchsorted(pos, neg[tied], side="right")
    wins = (pos.size - upto) + 0.5 * (upto - below)   # positives > y, plus half the ties
    return wins.sum(axis=-1) / (pos.size * neg.shape[-1])


def forbidden_pairings(start_ids: np.ndarray, end_ids: np.ndarray) -> np.ndarray:
    """(n, n) bool: may start i NOT receive end j in a shuffle? True where j == i, where (start_i, end_j) is a
    true pair of the set (which covers an end equal to i's own end), or where end_j == start_i (zero offset)."""
    start_ids, end_ids = np.asarray(start_ids, np.int64), np.asarray(end_ids, np.int64)
    base = int(max(start_ids.max(initial=0), end_ids.max(initial=0))) + 1
    candidates = start_ids[:, None] * base + end_ids[None, :]   # (start_i, end_j) as one integer
    same_pair = np.isin(candidates, start_ids * base + end_ids)
    forbidden = same_pair | (end_ids[None, :] == start_ids[:, None])
    np.fill_diagonal(forbidden, True)
    return forbidden


def constrained_permutations(forbidden: np.ndarray, count: int, rng: np.random.Generator, *,
                             what: str = "the set") -> np.ndarray:
    """``count`` permutations ``p`` of range(n) with ``forbidden[i, p[i]]`` False for all i, drawn at random.

    First rejection sampling in vectorised batches (exactly uniform; valid permutations are common, about 1/e
    for a plain derangement). Where they are rare (a relation whose ends repeat, like E09 things-color with
    13 x "white"), the rest come from random-transposition chains over valid permutations started from the
    ones found (or from a matching), :data:`MIX_ROUNDS` rounds each: uniform in the limit. A set with no valid
    permutation at all is a clear error.
    """
    n = forbidden.shape[0]
    rows = np.arange(n)
    found = np.empty((0, n), dtype=np.int64)
    batch, drawn = 4 * count, 0
    while drawn < REJECTION_DRAWS:
        perms = np.argsort(rng.random((batch, n)), axis=1)
        drawn, batch = drawn + batch, min(4 * batch, SHUFFLE_BATCH)
        found = np.concatenate([found, perms[~forbidden[rows, perms].any(axis=1)][: count - len(found)]])
        if len(found) == count:
            return found
    starts = found if len(found) else _matching(~forbidden, rng, what)[None, :]
    chains = starts[rng.integers(0, len(starts), count - len(found))]
    return np.concatenate([found, _mix(chains, forbidden, rng)])


def _matching(allowed: np.ndarray, rng: np.random.Generator, what: str) -> np.ndarray:
    """One permutation inside ``allowed`` (Kuhn's augmenting paths, rows in random order)."""
    n = allowed.shape[0]
    owner = np.full(n, -1)                 # column -> row
    for row in rng.permutation(n):
        seen = np.zeros(n, dtype=bool)
        stack = [(row, iter(rng.permutation(np.flatnonzero(allowed[row]))))]
        path = []
        while stack:
            r, options = stack[-1]
            col = next((c for c in options if not seen[c]), None)
            if col is None:
                stack.pop()
                if path:
                    path.pop()
                continue
            seen[col] = True
            path.append(col)
            if owner[col] < 0:             # augment along the path
                for (r2, _), c2 in zip(stack, path):
                    owner[c2] = r2
                break
            stack.append((owner[col], iter(rng.permutation(np.flatnonzero(allowed[owner[col]])))))
        else:
            raise LexprobeError(f"{what}: no shuffle exists that avoids true pairs and zero offsets "
                                "(too many repeated or shared words)")
    perm = np.empty(n, dtype=np.int64)
    perm[owner] = np.arange(n)
    return perm


def _mix(perms: np.ndarray, forbidden: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random transpositions applied to every row of ``perms`` at once, each kept only when both moved
    positions stay allowed: a symmetric chain on valid permutations."""
    perms = perms.copy()
    chains = np.arange(len(perms))
    n = perms.shape[1]
    for _ in range(MIX_ROUNDS):
        i, j = rng.integers(0, n, (2, len(perms)))
        pi, pj = perms[chains, i], perms[chains, j]
        ok = ~forbidden[i, pj] & ~forbidden[j, pi]
        perms[chains[ok], i[ok]], perms[chains[ok], j[ok]] = pj[ok], pi[ok]
    return perms


def shuffles(start_ids: np.ndarray, end_ids: np.ndarray, count: int, rng: np.random.Generator, *,
             what: str = "the set") -> np.ndarray:
    """(count, n) shuffles of the end words: row r gives start i the end ``end_ids[perm[r, i]]``."""
    return constrained_permutations(forbidden_pairings(start_ids, end_ids), count, rng, what=what)


@dataclass
class OffsetScores(Result):
    """OCS and PCS of one set of pairs, with what they were computed from; :meth:`to_arrow` is one row
    (``ocs``, ``pcs``, ``n_pairs``)."""

    ocs: float
    pcs: float
    n_pairs: int
    aucs: np.ndarray            # one AUC per shuffled set
    similarities: np.ndarray    # sim(O) of the true offsets
    permutations: np.ndarray    # (shuffles, n) the shuffles used

    def to_arrow(self) -> pa.Table:
        return pa.table({"ocs": [self.ocs], "pcs": [self.pcs], "n_pairs": [self.n_pairs]})


def pcs_from_units(true_unit: np.ndarray, shuffled_unit: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(PCS, AUC per shuffled set, sim(O)) from unit offsets (n, d) and shuffled unit offsets (sets, n, d)."""
    sims = pairwise_similarities(true_unit)
    aucs = auc(sims, pairwise_similarities(shuffled_unit))
    return float(aucs.mean()), aucs, sims


def offset_scores(vectors: np.ndarray, start_ids: np.ndarray, end_ids: np.ndarray, *, n_shuffles: int = 50,
                  rng: np.random.Generator, what: str = "the set") -> OffsetScores:
    """OCS and PCS of the pairs (start_ids[i], end_ids[i]) over the rows of ``vectors``."""
    start_ids, end_ids = np.asarray(start_ids, np.int64), np.asarray(end_ids, np.int64)
    perms = shuffles(start_ids, end_ids, n_shuffles, rng, what=what)
    _, true_unit = unit_offsets(vectors, start_ids, end_ids)
    _, shuffled_unit = unit_offsets(vectors, np.broadcast_to(start_ids, perms.shape), end_ids[perms])
    pcs, aucs, sims = pcs_from_units(true_unit, shuffled_unit)
    return OffsetScores(float(sims.mean()), pcs, len(start_ids), aucs, sims, perms)


# ------------------------------------------------------------------------------- the offsets index

SHUFFLED = "shuffled"


def relation_sets(rows) -> list[PairSet]:
    """The true pairs of an offsets index (:class:`~lexprobe.kinds.offsets.OffsetRows`) as one
    :class:`PairSet` per relation, in index order; zero offsets (start == end) left out."""
    names = list(dict.fromkeys(rows.relation.tolist()))
    keep = rows.start_id != rows.end_id
    out = []
    for name in names:
        mask = (rows.relation == name) & keep
        out.append(PairSet(name, str(rows.category[mask][0]) if mask.any() else "", rows.start_id[mask],
                           rows.end_id[mask]))
    return out


def shuffle_rng(seed: int, relation: str) -> np.random.Generator:
    """The generator of a relation's PCS shuffles: the same for ``bench offsets`` and ``query offsets``."""
    return rng_for(seed, SHUFFLED, relation)


def missing_shuffles(words, relations: list[PairSet], stored, n_shuffles: int, seed: int) -> pa.Table | None:
    """Offsets-index rows (kind ``shuffled``, replicate = shuffle number, ``seed``) of the shuffles that
    ``stored`` (the index's shuffled rows, :class:`~lexprobe.kinds.offsets.OffsetRows`) lacks: for every relation
    that does not hold ``n_shuffles`` of them for this seed yet. None when nothing is missing; the run layer
    appends them."""
    parts = []
    for rel in relations:
        have = np.unique(stored.replicate[(stored.relation == rel.relation) & (stored.seed == seed)])
        missing = np.setdiff1d(np.arange(n_shuffles), have)
        if not len(missing) or len(rel) < 2:
            continue
        perms = shuffles(rel.start_ids, rel.end_ids, n_shuffles, shuffle_rng(seed, rel.relation),
                         what=rel.relation)[missing]
        starts = np.broadcast_to(rel.start_ids, perms.shape).ravel()
        ends = rel.end_ids[perms].ravel()
        raw, n = words.raw, len(starts)
        parts.append(offset_table(relation=[rel.relation] * n, category=[rel.category] * n,
                                  start=[words.words[i] for i in starts], end=[words.words[i] for i in ends],
                                  start_id=starts, end_id=ends, offset=raw[ends] - raw[starts], kind=SHUFFLED,
                                  replicate=np.repeat(missing, len(rel)), seed=seed))
    return pa.concat_tables(parts) if parts else None


def stored_shuffle_units(index, relation, n_pairs: int, n_shuffles: int, seed: int, stored=None) -> np.ndarray:
    """(n_shuffles, n_pairs, d) unit shuffled offsets of ``relation`` read back from the offsets index."""
    stored = stored if stored is not None else index.select(kind=SHUFFLED, relation=relation)
    mask = (stored.relation == relation) & (stored.seed == seed) & (stored.replicate < n_shuffles)
    rep, ids = stored.replicate[mask], stored.id[mask]
    order = np.lexsort((ids, rep))
    unit = stored.unit[mask][order]
    if len(unit) != n_shuffles * n_pairs:
        raise LexprobeError(f"offsets index {index.name!r}: relation {relation!r} holds {len(unit)} shuffled offsets "
                            f"for seed {seed}, expected {n_shuffles} x {n_pairs}")
    return unit.reshape(n_shuffles, n_pairs, -1)


# ------------------------------------------------------------------------------- one set of pairs


def read_pair_file(path) -> list[tuple[str, str, int]]:
    """``start end`` per line (whitespace-separated; blank lines and ``#`` comments skipped) as
    (start, end, line number); a malformed line is an :class:`InputError` naming file and line."""
    return word_lines(path, 2, "'start end'", "word pairs")


def pair_file_ids(words, path, rows: list[tuple[str, str, int]] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Word ids of a pair file's (start, end) columns (or of ``rows`` read from it); unknown words are one
    error naming every one, zero offsets an error with the line."""
    rows = read_pair_file(path) if rows is None else rows
    words.ids([w for start, end, _ in rows for w in (start, end)], source=str(path))
    starts, ends, seen = [], [], {}
    for start, end, number in rows:
        if start == end:
            raise InputError(path, f"start and end are the same word {start!r} (a zero offset)", number)
        if (start, end) in seen:  # it would count twice in OCS and PCS
            raise InputError(path, f"the pair {start!r} {end!r} repeats line {seen[start, end]}", number)
        seen[start, end] = number
        starts.append(words.word_to_id[start])
        ends.append(words.word_to_id[end])
    return np.asarray(starts, np.int64), np.asarray(ends, np.int64)


def score_pairs(words, name: str, start_ids: np.ndarray, end_ids: np.ndarray, *, n_shuffles: int = 50,
                seed: int = 0) -> OffsetScores:
    """OCS and PCS of one set of pairs over a words index, with the shuffles ``bench offsets`` uses for a
    relation of the same ``name`` and seed (so both give the same numbers)."""
    keep = start_ids != end_ids
    start_ids, end_ids = start_ids[keep], end_ids[keep]
    if len(start_ids) < 3:
        raise LexprobeError(f"{name}: {len(start_ids)} usable pairs; OCS and PCS need at least 3")
    return offset_scores(words.raw, start_ids, end_ids, n_shuffles=n_shuffles, rng=shuffle_rng(seed, name),
                         what=name)


def relation_offsets(words, pairs: Sequence[tuple[str, str]], *, name: str = "pairs", n_shuffles: int = 50,
                     seed: int = 0) -> OffsetScores:
    """OCS and PCS of word pairs (start, end) over a words index, words in: :func:`score_pairs` with the same
    shuffles as a relation of the same ``name`` and ``seed`` gets in Table 1.

    >>> glove = lexprobe.open_index("glove")
    >>> s = lexprobe.relation_offsets(glove, [("france", "paris"), ("italy", "rome"), ("japan", "tokyo"),
    ...                                       ("spain", "madrid"), ("egypt", "cairo")], name="capitals")
    >>> s.n_pairs, s.pcs > 0.5
    (5, True)
    """
    ids = words.ids([w for pair in pairs for w in pair]).reshape(-1, 2)
    return score_pairs(words, name, ids[:, 0], ids[:, 1], n_shuffles=n_shuffles, seed=seed)
