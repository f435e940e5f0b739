"""The analogy test a:a*::b:? as index queries: 3CosAdd, 3CosMul and PairDirection over a words index (vecto's
3CosAvg, LRCos and SimilarToAny: :mod:`lexprobe.analogies.set_solvers`, with the same question rows).

Every method scores a vocabulary word x from three cosines on unit vectors, ``cb = cos(x, b)``,
``cas = cos(x, a*)``, ``ca = cos(x, a)``:

- ``add`` (3CosAdd): ``cos(x, b - a + a*) = (cb - ca + cas) / ||b - a + a*||``;
- ``mul`` (3CosMul, Levy and Goldberg 2014): ``s(cb) s(cas) / (s(ca) + eps)`` with cosines shifted to [0, 1],
  ``s(c) = (c + 1) / 2``, as gensim's ``most_similar_cosmul`` does (it uses eps = 1e-6; the paper 1e-3, our default);
- ``pairdir`` (PairDirection): ``cos(x - b, a* - a) = (cas - ca - b.(a* - a)) / (||x - b|| ||a* - a||)`` with
  ``||x - b|| = sqrt(2 - 2 cb)``; x = b (a zero vector) scores 0.

So one matrix product per relation, ``P = W U^T`` between the relation's words W (its start and end words) and
the vocabulary U, gives every question of the relation (all ordered pairs of its pairs, a != b) as element-wise
work on rows of P: no inner product per question. For ``add`` and ``mul`` the score grows with ``cb``, so
replacing ``cb`` by ``M(x) = max over the relation's start words of cos(x, b')`` bounds every question that
shares a:a*; the words whose bound clears a threshold (about 2,048 of them) are scored exactly, and a question
whose k-th best candidate reaches the threshold is answered; for the others only the words whose bound reaches
their k-th best so far are scored (``pairdir`` scans the whole vocabulary). The gold answer's rank is counted
the same way. All of it is gathers and adds on rows of P, never a full sort. Arbitrary questions (not a
relation) go through the words FAISS index for ``add`` (:meth:`lexprobe.core.vector_index.VectorIndex.search` with
per-query exclusion) and through blocked element-wise scans for the others (:func:`lexprobe.kinds.analogy_queries.answer_questions`).

The usual test excludes a, a* and b from the answers; the honest test (``honest=True``) excludes nothing.
``restrict_vocab`` limits the candidates to the N most frequent words (row ids < N), as gensim's argument of
that name does; inputs may lie outside it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..core.cores import usable_cores
from ..sources.datasets.bats import Relation
from ..core.errors import LexprobeError
from ..core.progress import bar
from ..core.intervals import wilson
from ..kinds.analogy_queries import (DEFAULT_EPS, check_method, combine_score, pairdir_score, partial_score,
                                     topk_rows)
from ..kinds.words import WordIndex

KERNEL_METHODS = ("add", "mul", "pairdir")
_CANDIDATES = 2048
_BLOCK = 8192  # words per block when counting over the whole vocabulary (a block of P's rows fits in cache)


@dataclass
class Answers:
    """Answers to m questions: top-k word ids and scores, and the rank of the best gold answer (-1: none)."""

    ids: np.ndarray      # (m, k) int64, -1 where fewer than k candidates
    scores: np.ndarray   # (m, k) float32
    gold_rank: np.ndarray  # (m,) int64; 1 = the first answer; -1 when no gold answer can be returned


def _above(bound: np.ndarray, kc: int) -> tuple[np.ndarray, float]:
    """About the ``kc`` words with the largest ``bound`` (sorted ids) and a threshold ``thr``: every word outside
    has a bound below ``thr``, every word inside one of at least ``thr``. The threshold is the matching order
    statistic of a strided sample, so no pass over the vocabulary sorts or partitions it."""
    step = max(1, len(bound) // (8 * kc))
    sample = bound[::step]
    r = max(1, int(np.ceil(len(sample) * kc / len(bound))))
    thr = float(np.partition(sample, len(sample) - r)[len(sample) - r])
    return np.flatnonzero(bound >= thr), thr


def solve_relation(P: np.ndarray, n: int, *, gold: list[list[int]], word_ids: np.ndarray, method: str, k: int = 1,
                   honest: bool = False, eps: float = DEFAULT_EPS, gram: np.ndarray,
                   prune: bool = True, ranks: bool = True,
                   questions: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, Answers]:
    """All questions of one relation from ``P`` (2n x V cosines: rows 0..n-1 the start words, n..2n-1 the end
    words, columns the candidate vocabulary, row ids 0..V-1).

    ``word_ids`` (2n,) are the rows' word ids; ``gold[j]`` the word ids accepted for pair j (its answers);
    ``gram`` the (2n, 2n) cosines among the rows. ``questions``: the ``(i, j)`` arrays of the questions to answer
    (a:a* = pair i, b = start of pair j); by default every ordered pair i != j in row-major order. Returns them
    and their :class:`Answers`. ``prune=False`` scans the whole
    vocabulary for every question (the reference the pruned path is tested against); ``ranks=False``
    leaves the gold ranks at -1 (answers only).
    """
    V = P.shape[1]
    S, E = P[:n], P[n:]
    s_ids, e_ids = word_ids[:n], word_ids[n:]
    ii, jj = np.nonzero(~np.eye(n, dtype=bool)) if questions is None else questions
    out_ids = np.full((len(ii), k), -1, dtype=np.int64)
    out_scores = np.full((len(ii), k), -np.inf, dtype=np.float32)
    gold_ranks = np.full(len(ii), -1, dtype=np.int64)
    M = S.max(axis=0) if method != "pairdir" else None
    kc = min(V - 1, max(_CANDIDATES, 4 * k + 8))
    pruned = prune and method != "pairdir" and kc >= k + 3
    for i in np.unique(ii):
        rows = np.flatnonzero(ii == i)
        js = jj[rows]
        excl = np.zeros((len(js), 0), np.int64) if honest else \
            np.stack([np.full(len(js), s_ids[i]), np.full(len(js), e_ids[i]), s_ids[js]], axis=1)
        if method == "pairdir":
            beta = (gram[n + i] - gram[i])[js]                  # b . (a* - a) for each question's b
            onorm = np.sqrt(max(2.0 - 2.0 * gram[i, n + i], 0.0))
            score = lambda c, r, cb: pairdir_score(E[i][c], S[i][c], cb, beta[r], onorm)
            bound = None
        else:
            h = partial_score(method, E[i], S[i], eps)
            score = lambda c, r, cb: combine_score(method, h[c], cb)
            bound = combine_score(method, h, M)

        def outer(cols, sel):  # scores (len(sel), words): cols sorted ids, or a slice (rows of P, no 2-D gather)
            if not isinstance(cols, slice) and len(cols) == V:
                cols = slice(None)
            if isinstance(cols, slice):
                return score((None, cols), sel[:, None], S[js[sel], cols])
            return score(cols[None, :], sel[:, None], S[np.ix_(js[sel], cols)])

        def count_above(sel, floor):  # per question: allowed words of the whole vocabulary scoring above floor
            blocks = ((np.s_[a:a + _BLOCK], np.arange(a, min(a + _BLOCK, V))) for a in range(0, V, _BLOCK))
            return sum(np.count_nonzero(_masked(outer(block, sel), ids, excl[sel]) > floor[:, None], axis=1)
                       for block, ids in blocks)  # block by block: the rows of P stay in cache
        # the best-scoring accepted answer of each question (not excluded, inside the candidates)
        rr = np.repeat(np.arange(len(js)), [len(gold[j]) for j in js])
        gg = np.asarray([g for j in js for g in gold[j]], dtype=np.int64)
        keep = (gg < V) & ~(gg[:, None] == excl[rr]).any(axis=1)
        rr, gg = rr[keep], gg[keep]
        g_best = np.full(len(js), -np.inf, dtype=np.float32)
        np.maximum.at(g_best, rr, score(gg, rr, S[js[rr], gg]))
        everything = np.arange(len(js))
        if pruned:
            cand, thr = _above(bound, kc)  # every word outside cand has a bound below thr
            R = _masked(outer(cand, everything), cand, excl)
            top, vals = topk_rows(R, k)
            ok = vals[:, -1] >= thr
            out_ids[rows[ok]], out_scores[rows[ok]] = cand[top[ok]], vals[ok]
            todo, floor = np.flatnonzero(~ok), vals[~ok, -1].min(initial=np.inf)
            sure = np.flatnonzero(ranks & np.isfinite(g_best) & (g_best >= thr))
            gold_ranks[rows[sure]] = 1 + (R[sure] > g_best[sure, None]).sum(axis=1)
            count = np.flatnonzero(np.isfinite(g_best) & (g_best < thr))
        else:
            todo, floor, count = everything, -np.inf, np.flatnonzero(np.isfinite(g_best))
        if len(todo):  # words whose bound reaches the k-th best found so far may still enter the top k
            cols = _columns(bound, floor, V)
            R = _masked(outer(cols, todo), cols, excl[todo])
            top, vals = topk_rows(R, k)
            out_ids[rows[todo], : top.shape[1]], out_scores[rows[todo], : top.shape[1]] = cols[top], vals
        if ranks and len(count):  # only words whose bound beats the gold score can rank above it
            cols = _columns(bound, g_best[count].min(), V)  # a word with bound == gold's score cannot beat it
            if len(cols) == V:
                gold_ranks[rows[count]] = 1 + count_above(count, g_best[count])
            else:
                R = _masked(outer(cols, count), cols, excl[count])
                gold_ranks[rows[count]] = 1 + (R > g_best[count, None]).sum(axis=1)
    out_ids[~np.isfinite(out_scores)] = -1
    if method == "add":  # report cosines: divide by ||b - a + a*||, from the Gram matrix of unit vectors
        qn = np.sqrt(np.maximum(3.0 + 2.0 * (gram[n + ii, jj] - gram[n + ii, ii] - gram[ii, jj]), 1e-12))
        out_scores = (out_scores / qn[:, None]).astype(np.float32)
    return ii, jj, Answers(out_ids, out_scores, gold_ranks)


def _columns(bound: np.ndarray | None, floor: float, V: int) -> np.ndarray:
    """The words whose bound reaches ``floor`` (sorted ids), or every word when that is more than an eighth of
    the vocabulary: scoring whole rows of P costs less than gathering a large column subset, and the words the
    bound rules out score below ``floor`` anyway, so counts and top-k come out the same."""
    if bound is None or not np.isfinite(floor):
        return np.arange(V)
    cols = np.flatnonzero(bound >= floor)
    return cols if len(cols) <= V // 8 else np.arange(V)


def _masked(R: np.ndarray, cols: np.ndarray, excl: np.ndarray) -> np.ndarray:
    """``R`` (q, c) scores of the words ``cols`` (sorted ids) with -inf where the word is excluded for the
    question (``excl`` (q, e) word ids)."""
    if excl.shape[1] and len(cols):
        pos = np.minimum(np.searchsorted(cols, excl), len(cols) - 1)
        hit = cols[pos] == excl
        R[np.nonzero(hit)[0], pos[hit]] = -np.inf
    return R


@dataclass
class RelationRun:
    """The questions of a set of relations and their answers, plus the relations skipped (with why)."""

    table: pa.Table
    skipped: list[dict]


def run_relations(words: WordIndex, relations: list[Relation], *, method: str = "add", k: int = 1,
                  honest: bool = False, restrict_vocab: int | None = None, eps: float = DEFAULT_EPS,
                  prune: bool = True, ranks: bool = True) -> RelationRun:
    """Answer every question a:a*::b:b* of every relation (pairs already filtered to the vocabulary) with the
    kernel's methods (add, mul, pairdir): every ordered pair of its pairs, or the questions it lists
    (:meth:`Relation.question_index`).

    One row per question: relation, category, a, a_star, b, gold (b*'s first answer), answers (all accepted),
    prediction, score, rank (of the best accepted answer among the candidates; -1 when none can be returned:
    excluded or outside ``restrict_vocab``), correct, and whether the prediction is a, a* or b; ``top_k`` when k > 1.
    A relation with fewer than two pairs, or no question left, is skipped and reported. ``ranks=False`` skips the gold ranks (-1).
    """
    check_method(method, KERNEL_METHODS)
    if k < 1:
        raise LexprobeError(f"-k must be at least 1, not {k}")
    V = len(words.raw) if restrict_vocab is None else min(int(restrict_vocab), len(words.raw))
    if V < 1:
        raise LexprobeError(f"--restrict-vocab must be at least 1, not {restrict_vocab}")
    unit = words.unit
    vocab = unit[:V]

    def solve(rel: Relation) -> pa.Table:
        n = len(rel.pairs)
        word_ids = np.concatenate([words.ids(rel.starts), words.ids(rel.ends)])
        W = unit[word_ids]
        gram = W @ W.T
        gold = [words.ids(answers).tolist() for _, answers in rel.pairs]
        ii, jj, ans = solve_relation(W @ vocab.T, n, gold=gold, word_ids=word_ids, method=method, k=k,
                                     honest=honest, eps=eps, gram=gram, prune=prune, ranks=ranks,
                                     questions=rel.question_index())
        return question_rows(words, rel, word_ids, gold, ii, jj, ans, k)

    return solve_all(solve, relations, desc=f"analogy {method}")


def solve_all(solve, relations: list[Relation], *, desc: str, pairs_only: bool = False) -> RelationRun:
    """``solve`` (a relation -> its question rows) over every relation that can be asked, one per core (numpy
    releases the GIL in the products and element-wise work); the others skipped with why. ``pairs_only``: the
    questions are the relation's pairs (whatever questions it lists)."""
    answerable = lambda r: len(r.pairs) >= 2 and (pairs_only or r.questions is None or len(r.questions) > 0)
    skipped = [{"relation": r.name, "pairs": len(r.pairs), "reason": "fewer than two usable pairs" if len(r.pairs) < 2
                else "no question with all its words kept"} for r in relations if not answerable(r)]
    usable = [r for r in relations if answerable(r)]
    with ThreadPoolExecutor(max(1, min(len(usable), usable_cores()))) as pool:
        parts = list(bar(pool.map(solve, usable), total=len(usable), desc=desc, unit="relation"))
    if not parts:
        raise LexprobeError("no relation has two usable word pairs: nothing to answer")
    return RelationRun(pa.concat_tables(parts), skipped)


def question_rows(words: WordIndex, rel: Relation, word_ids, gold, ii, jj, ans: Answers, k: int) -> pa.Table:
    n = len(rel.pairs)
    vocab = np.asarray(words.words, dtype=object)
    a, a_star, b = word_ids[ii], word_ids[n + ii], word_ids[jj]
    pred = ans.ids[:, 0]
    gold_sets = [set(g) for g in gold]
    correct = np.fromiter((p in gold_sets[j] for p, j in zip(pred, jj)), dtype=bool, count=len(jj))
    pred_words = np.where(pred >= 0, vocab[np.maximum(pred, 0)], None)
    columns = {
        "relation": [rel.name] * len(ii), "category": [rel.category] * len(ii),
        "a": vocab[a].tolist(), "a_star": vocab[a_star].tolist(), "b": vocab[b].tolist(),
        "gold": [rel.pairs[j][1][0] for j in jj], "answers": [rel.pairs[j][1] for j in jj],
        "prediction": pred_words.tolist(), "score": ans.scores[:, 0], "rank": ans.gold_rank, "correct": correct,
        "pred_is_a": pred == a, "pred_is_a_star": pred == a_star, "pred_is_b": pred == b,
    }
    if k > 1:
        columns["top_k"] = [[vocab[x] for x in row if x >= 0] for row in ans.ids]
    return pa.table(columns)


def accuracy_tables(table: pa.Table) -> tuple[list[dict], list[dict]]:
    """Accuracy per relation and per broad category (pooled over questions), with question counts and the
    mean reciprocal rank of the gold answer (unreachable gold: 0)."""
    rel = np.asarray(table.column("relation").to_pylist(), dtype=object)
    cat = np.asarray(table.column("category").to_pylist(), dtype=object)
    correct = table.column("correct").to_numpy(zero_copy_only=False)
    rank = table.column("rank").to_numpy()
    rr = np.where(rank > 0, 1.0 / np.maximum(rank, 1), 0.0)
    out = []
    for key, values in (("relation", rel), ("category", cat)):
        rows = []
        for name in dict.fromkeys(values):
            m = values == name
            row = {key: name} if key == "category" else {key: name, "category": cat[m][0]}
            rows.append({**row, "questions": int(m.sum()), "accuracy": float(correct[m].mean()),
                         "mrr": float(rr[m].mean())})
        out.append(rows)
    return out[0], out[1]


def honest_shares(table: pa.Table) -> dict:
    """How often the prediction is b, a, a*, the gold answer, or another word (shares of all questions)."""
    f = lambda c: table.column(c).to_numpy(zero_copy_only=False)
    is_b, is_a, is_as, gold = f("pred_is_b"), f("pred_is_a"), f("pred_is_a_star"), f("correct")
    other = ~(is_b | is_a | is_as | gold)
    return {"questions": len(table), "b": float(is_b.mean()), "a": float(is_a.mean()), "a_star": float(is_as.mean()),
            "gold": float(gold.mean()), "other": float(other.mean())}


def share_intervals(shares: dict[str, float], n: int) -> list[dict]:
    """One row per share of ``n`` questions (e.g. :func:`honest_shares` without its ``questions``): returned,
    count, share and its Wilson 95% interval (low, high)."""
    rows = []
    for key, share in shares.items():
        count = int(round(share * n))
        low, high = wilson(count, n)
        rows.append({"returned": key, "count": count, "share": share, "low": low, "high": high})
    return rows
