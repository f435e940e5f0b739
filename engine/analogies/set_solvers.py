"""vecto's analogy solvers beside 3CosAdd: 3CosAvg and LRCos (Drozd, Gladkova, Matsuoka 2016), which learn a
relation from its other pairs, and SimilarToAny, a baseline that ignores the offset. Each follows vecto's code
(``vecto/benchmarks/analogy``: ``solvers.py``, ``analogy.py``); the scores are on unit vectors, as vecto
normalises the embeddings first (its default).

**Set methods** (``avg``, ``lrcos``): one question per pair ``b:b*`` of a relation, learned from the relation's
other pairs (vecto's leave-one-out folds; a relation's listed questions, e.g. the Google file's, are not used:
its pairs are). With ``S``/``E`` the start words and the first answers of the other pairs:

- ``avg`` (3CosAvg): ``cos(x, mean(E) - mean(S) + b)``;
- ``lrcos`` (LRCos): ``P(x) * cos(x, b)``, with ``P`` a logistic regression of the target class fitted per
  question: positives the other pairs' first answers, negatives their start words four times each plus as many
  random words as start words (drawn with replacement from the vocabulary, the target words included, as vecto
  draws them); scikit-learn's ``LogisticRegression(solver="liblinear", class_weight="balanced", C=1.0)``,
  vecto's settings.

Only ``b`` is excluded from the answers (vecto excludes no training word); the honest test excludes nothing.
LRCos's answers depend on its random negatives (seeds agree on 85-88% of BATS questions with GloVe), so one seed's
accuracy is not a result: :func:`lrcos_over_seeds` gives the mean over several seeds with its t interval.

**vecto's exclusion** (``exclude="vecto"``): for the questions a:a*::b:? vecto leaves out a, b and *every* listed
answer of a's pair (its ``set_exclude``), where lexprobe's usual test leaves out a, a* and b; 3CosAdd under that rule
(:func:`_add_vecto`) gives vecto's answers. vecto also gives an unknown word the vector of its first word (its
``get_id`` returns 0, so no pair is "missing") and counts questions it cannot score as wrong; lexprobe drops pairs
with an unknown word and counts them (coverage), so the two agree where vecto's vocabulary is whole.

**SimilarToAny** (``simany``): the ordered pairs of pairs a:a*::b:? of the other methods, scored
``max(cos(x, a), cos(x, a*), cos(x, b))``, with a, b and every accepted answer of a's pair excluded (vecto's
exclusion; under the default ``answers="first"`` that is a, a*, b).

Where vecto is silent or random, our choices: the random words are drawn from the candidate vocabulary (the
``restrict_vocab`` most frequent words, else all) by a generator seeded with ``seed`` and the relation's name
(vecto draws unseeded), a new draw per question; liblinear's own shuffling is seeded (``random_state=0``);
scores are reported as cosines, not vecto's shifted ``(cos + 1) / 2`` (the same order); ties go to the lower
word id; a question's rank is 1 + the words scoring strictly above its best accepted answer (vecto counts the
words sorted before it). :func:`answer_relations` answers with any method (these or the analogy kernel's) in
the question rows of :func:`lexprobe.analogies.analogy.run_relations`; for the set methods ``a`` and ``a_star``
are null, and ``pred_is_a`` / ``pred_is_a_star`` say whether the prediction is one of the other pairs' start
words / accepted answers (vecto's ``landing_a`` / ``landing_a_prime``).

Every answer is an exact argmax over the candidate vocabulary: for the set methods one matrix product per block
of questions, then masking, top-k and rank counting on whole rows (numpy); for SimilarToAny candidates that
provably hold the top k (:func:`_simany`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow as pa
from scipy.special import expit

from ..core.errors import LexprobeError
from ..core.topk import topk_rows
from ..core.conventions import Result
from ..kinds.analogy_queries import (ALL_METHODS, DEFAULT_EPS, EXCLUSIONS, LRCOS_SEEDS, SET_METHODS, check_method,
                                     excluded_cells, simany_score)
from ..sources.datasets.bats import Relation
from .analogy import Answers, RelationRun, question_rows, run_relations, solve_all

VECTO_METHODS = (*SET_METHODS, "simany")
NEGATIVE_REPEATS = 4   # vecto repeats each training start word four times among the negatives
LRCOS_C = 1.0          # vecto's inverse regularisation strength
_BLOCK = 32            # questions per block of (questions x vocabulary) scores
_SIMANY_TOP = 256      # SimilarToAny's candidates per row (at least k + the excluded words)


def answer_relations(words, relations: list[Relation], *, method: str = "add", k: int = 1, honest: bool = False,
                     restrict_vocab: int | None = None, eps: float = DEFAULT_EPS, ranks: bool = True,
                     seed: int = 0, exclude: str = "inputs") -> RelationRun:
    """Every question of every relation with any method (lexprobe's name or vecto's): the analogy kernel's
    (:func:`~lexprobe.analogies.analogy.run_relations`: add, mul, pairdir) or vecto's (avg, lrcos, simany; ``seed``:
    LRCos's random words), in the same question rows. ``exclude="vecto"``: 3CosAdd leaves out a's other listed
    answers too, as vecto does (SimilarToAny always does; the set methods exclude b only)."""
    method = check_method(method, ALL_METHODS)
    if exclude not in EXCLUSIONS:
        raise LexprobeError(f"unknown exclusion {exclude!r} (choose from {', '.join(EXCLUSIONS)})")
    if exclude == "vecto" and method in ("mul", "pairdir"):
        raise LexprobeError(f"vecto's exclusion is offered with add, simany, avg and lrcos, not {method}")
    if method not in VECTO_METHODS and not (method == "add" and exclude == "vecto"):
        return run_relations(words, relations, method=method, k=k, honest=honest, restrict_vocab=restrict_vocab,
                             eps=eps, ranks=ranks)
    if k < 1:
        raise LexprobeError(f"-k must be at least 1, not {k}")
    if restrict_vocab is not None and restrict_vocab < 1:
        raise LexprobeError(f"--restrict-vocab must be at least 1, not {restrict_vocab}")
    solve = relation_solver(words, method, k=k, honest=honest, restrict_vocab=restrict_vocab, ranks=ranks, seed=seed)
    return solve_all(solve, list(relations), desc=f"analogy {method}", pairs_only=method in SET_METHODS)


@dataclass(repr=False)
class SeedSpread(Result):
    """LRCos over several seeds of its random negatives: per seed its accuracy (:meth:`to_arrow`: ``seed,
    questions, correct, accuracy``), their ``mean`` and its t interval at ``level`` over the seeds, ``agreement``
    (the share of questions every seed answers with the same word) and the first seed's question rows (``run``)."""

    seeds: list[int]
    accuracies: np.ndarray
    questions: int
    mean: float
    interval: tuple[float, float]
    level: float
    agreement: float
    run: RelationRun

    def to_arrow(self) -> pa.Table:
        return pa.table({"seed": self.seeds, "questions": [self.questions] * len(self.seeds),
                         "correct": np.rint(self.accuracies * self.questions).astype(np.int64),
                         "accuracy": self.accuracies})

    def __repr__(self) -> str:
        return (f"<SeedSpread LRCos accuracy {self.mean:.4f} [{self.interval[0]:.4f}, {self.interval[1]:.4f}] over "
                f"{len(self.seeds)} seeds, {self.questions} questions, {self.agreement:.1%} answered alike>")


def seed_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The t interval of the mean of per-seed values (Student's t with n - 1 degrees of freedom: the seeds are
    a sample of the negatives' draws); a point for one seed."""
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    if len(values) < 2:
        return mean, mean
    half = stats.t.ppf(0.5 + level / 2, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return mean - float(half), mean + float(half)


def lrcos_over_seeds(words, relations: list[Relation], *, seeds: int = LRCOS_SEEDS, seed: int = 0, k: int = 1,
                     honest: bool = False, restrict_vocab: int | None = None, level: float = 0.95) -> SeedSpread:
    """LRCos (:func:`answer_relations`) with the seeds ``seed, seed + 1, ..., seed + seeds - 1`` of its random
    negatives: each seed's pooled accuracy, their mean and t interval, and how often the seeds agree."""
    if seeds < 1:
        raise LexprobeError(f"LRCos needs at least one seed, not {seeds}")
    chosen = [seed + s for s in range(seeds)]
    runs = [answer_relations(words, relations, method="lrcos", k=k, honest=honest, restrict_vocab=restrict_vocab,
                             ranks=False, seed=s) for s in chosen]
    correct = np.array([r.table.column("correct").to_numpy(zero_copy_only=False).mean() for r in runs])
    predictions = np.array([r.table.column("prediction").to_pylist() for r in runs], dtype=object)
    agreement = float((predictions == predictions[0]).all(axis=0).mean())
    return SeedSpread(chosen, correct, runs[0].table.num_rows, float(correct.mean()), seed_interval(correct, level),
                      level, agreement, runs[0])


def avg_queries(S: np.ndarray, E: np.ndarray) -> np.ndarray:
    """3CosAvg's unit query per pair j of a relation (rows of unit start vectors ``S`` and first-answer vectors
    ``E``): ``mean(E without j) - mean(S without j) + S[j]``, normalised."""
    n = len(S)
    offset = ((E.sum(0) - E) - (S.sum(0) - S)) / (n - 1)
    q = (offset + S).astype(np.float64)
    return (q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def lrcos_models(S: np.ndarray, E: np.ndarray, noise: Callable[[int], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """LRCos's classifier per pair j: weights ``(n, d)`` and intercepts ``(n,)`` of a logistic regression fitted
    on the other pairs (positives their answers ``E``; negatives their starts ``S`` four times and
    ``noise(n - 1)`` random unit vectors)."""
    from sklearn.linear_model import LogisticRegression

    n, d = S.shape
    W, c = np.zeros((n, d)), np.zeros(n)
    for j in range(n):
        others = np.arange(n) != j
        X = np.concatenate([E[others], *[S[others]] * NEGATIVE_REPEATS, noise(n - 1)])
        y = np.r_[np.ones(n - 1), np.zeros(len(X) - (n - 1))]
        model = LogisticRegression(solver="liblinear", class_weight="balanced", C=LRCOS_C, random_state=0).fit(X, y)
        W[j], c[j] = model.coef_[0], model.intercept_[0]
    return W, c


def answer_block(R: np.ndarray, excl: np.ndarray, gold: list[list[int]], k: int, ranks: bool = True
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-k ``(ids, scores)`` of a block of score rows ``R`` (q, V; modified: excluded cells -inf) with
    ``excl`` (q, e) word ids excluded per row (-1: none), and the rank of each row's best accepted answer among
    ``gold`` (1 + the allowed words scoring strictly above it; -1 when every accepted answer is excluded or
    outside the V candidates)."""
    q, V = R.shape
    R[excluded_cells(V, excl)] = -np.inf
    top, vals = topk_rows(R, k)
    ids = np.full((q, k), -1, dtype=np.int64)
    scores = np.full((q, k), -np.inf, dtype=np.float32)
    ids[:, : top.shape[1]] = np.where(np.isfinite(vals), top, -1)
    scores[:, : vals.shape[1]] = vals
    rank = np.full(q, -1, dtype=np.int64)
    if ranks:
        rr = np.repeat(np.arange(q), [len(g) for g in gold])
        gg = np.asarray([w for g in gold for w in g], dtype=np.int64)
        keep = gg < V
        best = np.full(q, -np.inf, dtype=np.float32)
        np.maximum.at(best, rr[keep], R[rr[keep], gg[keep]])
        ok = np.flatnonzero(np.isfinite(best))
        rank[ok] = 1 + (R[ok] > best[ok, None]).sum(axis=1)
    return ids, scores, rank


def _pad(rows: list[list[int]]) -> np.ndarray:
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def relation_solver(words, method: str, *, k: int = 1, honest: bool = False, restrict_vocab: int | None = None,
                    ranks: bool = True, seed: int = 0) -> Callable[[Relation], pa.Table]:
    """A function answering every question of one relation (pairs already in the vocabulary) with ``method``
    (``avg``, ``lrcos``, ``simany``; ``add`` with vecto's exclusion), returning its question rows."""
    unit = words.unit
    V = len(unit) if restrict_vocab is None else min(int(restrict_vocab), len(unit))
    vocab = unit[:V]

    def solve(rel: Relation) -> pa.Table:
        n = len(rel.pairs)
        word_ids = np.concatenate([words.ids(rel.starts), words.ids(rel.ends)])
        gold = [words.ids(answers).tolist() for _, answers in rel.pairs]
        S, E = unit[word_ids[:n]], unit[word_ids[n:]]
        if method == "simany":
            return _simany(words, rel, word_ids, gold, vocab, k, honest, ranks)
        if method == "add":  # vecto's exclusion (answer_relations sends the usual one to the kernel)
            return _add_vecto(words, rel, word_ids, gold, vocab, k, honest, ranks, restrict_vocab)
        if method == "avg":
            Q = avg_queries(S, E)
            scores = lambda js: Q[js] @ vocab.T
        else:  # lrcos
            rng = np.random.default_rng([seed, zlib.crc32(rel.name.encode())])
            W, c = lrcos_models(S, E, lambda m: unit[rng.integers(0, V, size=m)])
            W, c = W.astype(np.float32), c.astype(np.float32)
            scores = lambda js: expit(W[js] @ vocab.T + c[js, None]) * (S[js] @ vocab.T)
        ids = np.full((n, k), -1, dtype=np.int64)
        out = np.full((n, k), -np.inf, dtype=np.float32)
        rank = np.full(n, -1, dtype=np.int64)
        excl = np.zeros((n, 0), np.int64) if honest else word_ids[:n, None]
        for start in range(0, n, _BLOCK):
            js = np.arange(start, min(start + _BLOCK, n))
            ids[js], out[js], rank[js] = answer_block(scores(js), excl[js], [gold[j] for j in js], k, ranks)
        return _set_rows(words, rel, word_ids, gold, Answers(ids, out, rank), k)

    return solve


def _add_vecto(words, rel: Relation, word_ids, gold, vocab, k: int, honest: bool, ranks: bool,
               restrict_vocab: int | None) -> pa.Table:
    """3CosAdd over every question (i, j) of a relation with vecto's exclusion: a, every accepted answer of a's pair
    and b left out. The answers by one exact search (:meth:`VectorIndex.search` with per-question exclusions); the
    gold ranks, when asked, on whole rows (one product per block of questions)."""
    n = len(rel.pairs)
    unit = words.unit
    ii, jj = rel.question_index()
    Q = unit[word_ids[jj]] - unit[word_ids[ii]] + unit[word_ids[n + ii]]
    Q /= np.maximum(np.linalg.norm(Q, axis=1, keepdims=True), 1e-12)
    excl = np.zeros((len(ii), 0), np.int64) if honest else \
        _pad([[word_ids[i], *gold[i], word_ids[j]] for i, j in zip(ii.tolist(), jj.tolist())])
    scores, ids = words.searcher.search(Q, k, exclude=excl, restrict=restrict_vocab)
    rank = np.full(len(ii), -1, dtype=np.int64)
    if ranks:
        for start in range(0, len(ii), _BLOCK):
            q = np.arange(start, min(start + _BLOCK, len(ii)))
            rank[q] = answer_block(Q[q] @ vocab.T, excl[q], [gold[j] for j in jj[q]], 1)[2]
    return question_rows(words, rel, word_ids, gold, ii, jj, Answers(ids, scores, rank), k)


def _simany(words, rel: Relation, word_ids, gold, vocab, k: int, honest: bool, ranks: bool) -> pa.Table:
    """SimilarToAny over every question (i, j) of a relation, exact without scoring the whole vocabulary per
    question: a question's score is the best of three rows of ``P`` (cosines of a, a*, b with every word), so a
    word of its top k lies within the top ``k + e`` of the row giving its score (``e`` excluded words); the
    candidates are the union of the three rows' top ``m >= k + e``. Words above the gold answer are counted the
    same way when the gold answer's score reaches each row's m-th best (no word outside the candidates can beat
    it), else on whole rows."""
    n = len(rel.pairs)
    P = words.unit[word_ids] @ vocab.T  # (2n, V): rows 0..n-1 the start words, n..2n-1 the first answers
    ii, jj = rel.question_index()
    e = 0 if honest else 2 + max(len(g) for g in gold)
    top, top_scores = topk_rows(P, max(k + e, _SIMANY_TOP))
    cut = top_scores[:, -1]  # every word outside a row's candidates scores at most this in that row
    ids = np.full((len(ii), k), -1, dtype=np.int64)
    out = np.full((len(ii), k), -np.inf, dtype=np.float32)
    rank = np.full(len(ii), -1, dtype=np.int64)
    for i in np.unique(ii):
        rows = np.flatnonzero(ii == i)
        js = jj[rows]
        excl = np.zeros((len(js), 0), np.int64) if honest else \
            _pad([[word_ids[i], *gold[i], word_ids[j]] for j in js])
        cand = np.sort(np.concatenate([np.broadcast_to(top[[i, n + i]].reshape(-1), (len(js), 2 * top.shape[1])),
                                       top[js]], axis=1), axis=1)  # word ids ascending: ties go to the lower id
        R = simany_score(P[i][cand], P[n + i][cand], P[js[:, None], cand])
        R[:, 1:][cand[:, 1:] == cand[:, :-1]] = -np.inf  # a word in two rows' candidates counts once
        R[(cand[:, :, None] == excl[:, None, :]).any(axis=2)] = -np.inf
        t, v = topk_rows(R, k)
        ids[rows, : t.shape[1]] = np.where(np.isfinite(v), np.take_along_axis(cand, t, axis=1), -1)
        out[rows, : v.shape[1]] = v
        if not ranks:
            continue
        best = np.full(len(js), -np.inf, dtype=np.float32)
        for q, j in enumerate(js):  # the accepted answers (a few per question) that are not excluded
            g = [w for w in gold[j] if w < P.shape[1] and w not in excl[q]]
            if g:
                best[q] = simany_score(P[i, g], P[n + i, g], P[j, g]).max()
        sure = np.isfinite(best) & (best >= np.maximum(np.maximum(cut[i], cut[n + i]), cut[js]))
        rank[rows[sure]] = 1 + (R[sure] > best[sure, None]).sum(axis=1)
        rest = np.flatnonzero(np.isfinite(best) & ~sure)
        for start in range(0, len(rest), _BLOCK):  # the others on whole rows
            q = rest[start:start + _BLOCK]
            full = simany_score(P[i][None, :], P[n + i][None, :], P[js[q]])
            rank[rows[q]] = answer_block(full, excl[q], [gold[j] for j in js[q]], 1)[2]
    return question_rows(words, rel, word_ids, gold, ii, jj, Answers(ids, out, rank), k)


def _set_rows(words, rel: Relation, word_ids, gold, ans: Answers, k: int) -> pa.Table:
    """Question rows of a set method: one per pair b:b*, a and a* null (the other pairs stand for them)."""
    n = len(rel.pairs)
    vocab = words.words
    pred = ans.ids[:, 0]
    b = word_ids[:n]
    starts, accepted = set(b.tolist()), [set(g) for g in gold]
    every_answer = set().union(*accepted)
    # the prediction is another pair's start word / accepted answer (vecto's landing_a / landing_a_prime)
    other_start = np.array([p in starts and p != b[j] for j, p in enumerate(pred)])
    other_answer = np.array([p in every_answer and any(p in accepted[i] for i in range(n) if i != j)
                             for j, p in enumerate(pred)])
    columns = {
        "relation": [rel.name] * n, "category": [rel.category] * n,
        "a": pa.array([None] * n, pa.string()), "a_star": pa.array([None] * n, pa.string()),
        "b": [vocab[x] for x in b], "gold": [answers[0] for _, answers in rel.pairs],
        "answers": [answers for _, answers in rel.pairs],
        "prediction": [vocab[p] if p >= 0 else None for p in pred], "score": ans.scores[:, 0], "rank": ans.gold_rank,
        "correct": np.array([p in accepted[j] for j, p in enumerate(pred)], dtype=bool),
        "pred_is_a": other_start, "pred_is_a_star": other_answer, "pred_is_b": pred == b,
    }
    if k > 1:
        columns["top_k"] = [[vocab[x] for x in row if x >= 0] for row in ans.ids]
    return pa.table(columns)


def pair_section_accuracy(words, path, *, method: str, restrict_vocab: int | None = None,
                          case_insensitive: bool = False, honest: bool = False, seed: int = 0) -> list[dict]:
    """A set method over a four-column analogy file (``questions-words.txt``): each section is a relation of
    its distinct pairs (one per start word), each pair a question. Rows ``section, questions, oov, answered,
    correct, accuracy`` in file order, then ``total``: ``questions`` the section's pairs, ``oov`` those with a
    word outside the ``restrict_vocab`` most frequent words (``case_insensitive``: the file lowercased, as
    ``--lowercase`` does for a dataset), ``answered`` the others (none in a section left with one pair)."""
    from ..sources.datasets.bats import apply_vocab
    from ..sources.datasets.google import read_google

    limit = len(words.words) if restrict_vocab is None else restrict_vocab
    vocab = {w for w, i in words.word_to_id.items() if i < limit}
    relations, coverage = apply_vocab(read_google(path, lowercase=case_insensitive, questions="pairs"), vocab)
    usable = [r for r in relations if len(r.pairs) >= 2]
    table = answer_relations(words, usable, method=method, honest=honest, restrict_vocab=restrict_vocab,
                             seed=seed).table if usable else None
    correct = {} if table is None else dict(zip(*np.unique(np.asarray(table.column("relation").to_pylist())[
        table.column("correct").to_numpy(zero_copy_only=False)], return_counts=True)))
    rows = []
    for rel, cov in zip(relations, coverage):
        answered = len(rel.pairs) if len(rel.pairs) >= 2 else 0
        rows.append({"section": rel.name, "questions": cov.pairs, "oov": cov.pairs - len(rel.pairs),
                     "answered": answered, "correct": int(correct.get(rel.name, 0))})
    total = {"section": "total", **{c: sum(r[c] for r in rows) for c in ("questions", "oov", "answered", "correct")}}
    for r in rows + [total]:
        r["accuracy"] = r["correct"] / r["answered"] if r["answered"] else None
    return rows + [total]
