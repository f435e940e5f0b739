"""Tie-proof comparison of a float32 top-k list with a reference ranking (float64, or another float32 order).

A float32 kernel and a float64 reference may order two words differently when their exact scores differ by less
than the float32 rounding: the order then depends on the CPU's summation order (SIMD width, FMA, threads), and a
test that demands the reference's exact order fails on some machines. :func:`assert_topk_agrees` accepts the
float32 list when it could be the exact ranking of scores each within ``err`` of the reference's, and fails
otherwise: an excluded word returned, a word missing or out of place by more than the rounding, wrong padding.

The bounds (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, sections 3.1 and 3.5): with
``u = 2**-24`` (float32's unit roundoff) and ``gamma_n = n u / (1 - n u)``, a d-dimensional dot product of
float32 vectors accumulated in float32, in any order and with or without fused multiply-adds, has
``|fl(x.y) - x.y| <= gamma_d sum |x_i y_i|``; ``sum |x_i y_i| <= |x| |y|`` (1 for unit vectors). When the
float32 vectors are themselves roundings of the reference's float64 vectors, each product carries two more
rounding errors (``gamma_(d+2)``); when float32 normalised them, the normalisation's error
(:func:`unit_error`). The float64 reference's own error (``gamma_d`` with ``u = 2**-53``) is added.
``err`` is the bound on |tested score - reference score| of one word, both sides' errors included; two words
may then swap when their reference scores differ by at most the sum of their two ``err``. The analogy scores
combine several cosines: :func:`add_error`, :func:`mul_error` and :func:`pairdir_error` carry a cosine's bound
through each formula as the kernels compute it (first order in u, with a margin for the rest).
"""

from __future__ import annotations

import numpy as np

U32 = 2.0 ** -24  # float32 unit roundoff
U64 = 2.0 ** -53  # float64 unit roundoff


def gamma(n: int, u: float = U32) -> float:
    """``n u / (1 - n u)``: the relative error bound of n roundings."""
    return n * u / (1 - n * u)


def dot_error(d: int, scale=1.0, *, inputs: float = 0.0):
    """Bound of |float32 dot product - float64 reference| for d-dimensional vectors: ``scale`` is ``sum |x_i y_i|``
    or anything above it (``|x| |y|``; an array gives one bound per pair). ``inputs``: the relative error of each
    component of the float32 vectors against the reference's: 0 when the reference widens the same float32
    values, :data:`U32` when they are roundings of its float64 values (``gamma_(d+2)`` in all), :func:`unit_error`
    when float32 normalised them from the vectors that the reference normalises in float64."""
    grown = (1 + inputs) ** 2
    return (gamma(d) * grown + (grown - 1) + gamma(d, U64)) * np.asarray(scale, dtype=np.float64)


def unit_error(d: int) -> float:
    """Relative error of each component of a vector normalised in float32 (``x / |x|``): the sum of d rounded
    squares (``gamma_(d+1)``), halved by the square root plus its rounding, and the division's rounding."""
    return gamma(d + 1) / 2 + 2 * U32


def abs_products(Q: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``sum_i |q_i v_i|`` for every (query, row): the tight ``scale`` of :func:`dot_error`."""
    return np.abs(np.asarray(Q, np.float64)) @ np.abs(np.asarray(V, np.float64)).T


def add_error(g: float, qnorm, m: int = 3):
    """Bound for a cosine with ``q = sum of m unit vectors (signs +-1)`` (3CosAdd: m = 3, ``qnorm = |b - a + a*|``),
    in cosine units, given each float32 cosine's bound ``g``. It covers both ways the engine computes it:
    summing the m float32 cosines and ranking the sum (error ``m g`` plus m - 1 additions of values up to m,
    over ``|q|``), and forming q in float32, normalising it and taking one float32 dot product (q's m - 1
    additions move it by at most ``2 m^2 u``, which moves the unit query by twice that over ``|q|``; the norm
    and division ``g / 2 + 2 u``; the dot product ``g``)."""
    qnorm = np.asarray(qnorm, dtype=np.float64)
    return (m * g + 2 * m * m * U32) / qnorm + 1.5 * g + 4 * U32


def mul_error(g: float, cb, cas, ca, eps: float):
    """Bound for 3CosMul ``s(cb) s(cas) / (s(ca) + eps)``, ``s(c) = (c + 1) / 2``, per word from the reference
    cosines (arrays) and each float32 cosine's bound ``g``: a shifted cosine is off by ``g / 2`` plus one
    rounding, and the quotient's relative error is the sum of its factors' (eight roundings in all);
    ``1 + 4 g / (s(ca) + eps)`` covers the second-order terms."""
    sb, sas, sa = ((np.asarray(c, np.float64) + 1) / 2 for c in (cb, cas, ca))
    den = sa + eps
    f = sb * sas / den
    return (g / 2 * (sb + sas + f) / den + 8 * U32 * f) * (1 + 4 * g / den) + gamma(8, U64) * f


def pairdir_error(g: float, cb, score, onorm: float):
    """Bound for PairDirection ``(cas - ca - b.(a* - a)) / (|x - b| |a* - a|)`` per word, from the reference
    ``cb = cos(x, b)`` and score (arrays), ``onorm = |a* - a|`` and each float32 cosine's bound ``g``. The
    numerator is off by ``4 g + 9 u`` (two cosines and ``b.(a* - a)``, three subtractions); the distances come
    from ``sqrt(2 - 2 c)``, off by ``(2 g + 4 u) / dist + u dist``, a large relative error near b; three more
    roundings. Words within a distance's error of the kernel's 1e-3 cut-off may score 0 there (``|score|`` more);
    the bound is capped at 2 (scores lie in [-1, 1])."""
    score = np.asarray(score, np.float64)
    dist = np.sqrt(np.maximum(2 - 2 * np.asarray(cb, np.float64), 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = (2 * g + 4 * U32) / dist ** 2 + U32 + (2 * g + 4 * U32) / onorm ** 2 + U32 + 3 * U32
        err = (4 * g + 9 * U32) / (dist * onorm) + np.abs(score) * rel
        err = np.where(rel < 0.01, err * (1 + 2 * rel), 2.0)  # second order; past 1%, give up on the word
        near_cut = dist <= 1e-3 + (2 * g + 4 * U32) / dist + U32
    return np.minimum(np.where(near_cut, err + np.abs(score), err), 2.0)


def unit_float64(raw) -> np.ndarray:
    """Rows normalised in float64: the exact unit vectors that float32 normalisation approximates
    (:func:`unit_error`)."""
    raw = np.asarray(raw, dtype=np.float64)
    return raw / np.linalg.norm(raw, axis=-1, keepdims=True)


def similar_scores(U, positive, negative, g: float, ids=None):
    """gensim's ``most_similar``: exact cosines of the words ``ids`` (a list or a slice of the rows of ``U``,
    float64 unit vectors by id; default all) with ``sum(positive) - sum(negative)`` (ids), and their float32
    bound (:func:`add_error` with a cosine's bound ``g``): ``(scores, err)``."""
    q = U[list(positive)].sum(axis=0) - U[list(negative)].sum(axis=0)
    X = U if ids is None else U[ids]
    qn = np.linalg.norm(q)
    return X @ q / qn, np.full(len(X), add_error(g, qn, len(positive) + len(negative)))


def analogy_scores(U, method: str, a: int, a_star: int, b: int, g: float, ids=None, eps: float = 1e-3):
    """Exact scores of a:a*::b:? (3CosAdd ``add``, 3CosMul ``mul``, PairDirection ``pairdir``) of the words
    ``ids`` (a list or a slice of the rows of ``U``, float64 unit vectors by id; default all) by the papers'
    formulas, with nothing excluded, and per word the bound of a float32 score's error given a float32 cosine's
    bound ``g``: ``(scores, err)``."""
    if method == "add":
        return similar_scores(U, [a_star, b], [a], g, ids)
    X = U if ids is None else U[ids]
    cb, cas, ca = (X @ U[[b, a_star, a]].T).T
    if method == "mul":
        shift = lambda c: (c + 1) / 2
        return shift(cb) * shift(cas) / (shift(ca) + eps), mul_error(g, cb, cas, ca, eps)
    onorm = np.linalg.norm(U[a_star] - U[a])
    d = np.sqrt(np.maximum(2 - 2 * cb, 0))  # |x - b| of unit vectors (float64: exact far below float32's error)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.where(d > 1e-6, (cas - ca - U[b] @ (U[a_star] - U[a])) / (d * onorm), 0.0)  # x = b scores 0
    return s, pairdir_error(g, cb, s, onorm)


def _fail(what: str, problem: str):
    raise AssertionError(f"{what}: {problem}" if what else problem)


def _check(got, r, eg, rest_ids, rest_s, rest_e, scores, what):
    """The order and cut checks on the returned ids ``got`` (reference scores ``r``, bounds ``eg``) against the
    words left out (``rest_*``)."""
    if len(got) > 1:  # a pair in the wrong order must lie within both words' errors
        over = (r[None, :] - r[:, None]) - (eg[None, :] + eg[:, None])
        over[np.tril_indices(len(got))] = -np.inf
        if (over > 0).any():
            c, c2 = np.unravel_index(np.argmax(over), over.shape)
            _fail(what, f"id {got[c2]} (reference score {r[c2]:.10g}) is ranked after id {got[c]} "
                        f"({r[c]:.10g}) although it scores {r[c2] - r[c]:.3g} more, beyond the rounding bound "
                        f"{eg[c] + eg[c2]:.3g}; returned {got.tolist()}")
    if len(rest_ids) and len(got):  # no word left out may beat a returned one by more than both errors
        v = int(np.argmin(r + eg))
        w = int(np.argmax(rest_s - rest_e))
        if rest_s[w] - rest_e[w] > r[v] + eg[v]:
            _fail(what, f"id {rest_ids[w]} (reference score {rest_s[w]:.10g}) is missing while id {got[v]} "
                        f"({r[v]:.10g}) is returned: {rest_s[w] - r[v]:.3g} apart, beyond the rounding bound "
                        f"{rest_e[w] + eg[v]:.3g}; returned {got.tolist()}")
    if scores is not None:
        D = np.asarray(scores, np.float64)[: len(got)]
        if (np.diff(D) > 0).any():
            _fail(what, f"scores not in descending order: {D.tolist()}")
        off = np.abs(D - r) - eg
        if (off > 0).any():
            c = int(np.argmax(off))
            _fail(what, f"id {got[c]} scores {D[c]:.10g}, reference {r[c]:.10g}: off by more than the bound "
                        f"{eg[c]:.3g}")


def assert_topk_agrees(ids, reference, err, *, scores=None, what: str = ""):
    """Fail unless the float32 top-k list ``ids`` (k,) could be the exact ranking of scores each within ``err``
    of the reference's; (m, k) ``ids`` check m lists (``reference``, ``err`` and ``scores`` with a first axis of
    m, or ``err`` one value for all).

    ``reference``: the full score row (n,) indexed by id, ``-inf`` for every word that may not be returned
    (excluded, outside a restriction); ``err``: a bound of |tested score - reference score| (a number, or one per
    id). Checked: exactly ``min(k, allowed words)`` ids then ``-1`` padding, no duplicate, no disallowed id; no
    two returned ids in an order that the reference contradicts by more than their two bounds; no word left out
    whose reference score beats a returned one's by more than their two bounds (the membership at the cut: an id
    absent from the reference top-k is accepted only within the bound of the k-th reference score).

    ``reference`` may instead be a pair ``(ref_ids, ref_scores)``, the reference's own top-k list (another
    library's answer); its words left out are taken to score at most its k-th score, and a returned id outside
    the list needs ``scores`` (its tested score stands in for the unknown reference score, so its bound
    doubles, and it may not exceed the k-th reference score by more than the bound).

    ``scores`` (k,): the tested path's scores of ``ids``; then they must descend and lie within ``err`` of the
    reference's.
    """
    ids = np.asarray(ids)
    if ids.ndim == 2:
        pair = isinstance(reference, tuple)
        for row in range(len(ids)):
            ref = (reference[0][row], reference[1][row]) if pair else reference[row]
            e = err if np.ndim(err) == 0 or pair else np.broadcast_to(err, np.shape(reference))[row]
            assert_topk_agrees(ids[row], ref, e, scores=None if scores is None else scores[row],
                               what=f"{what} row {row}".strip())
        return
    ids = ids.astype(np.int64)
    k = len(ids)
    if isinstance(reference, tuple):
        ref_ids = np.asarray(reference[0], np.int64)
        ref_s = np.asarray(reference[1], np.float64)
        keep = ref_ids >= 0
        ref_ids, ref_s = ref_ids[keep], ref_s[keep]
        e = float(err)
        n_allowed = len(ref_ids) if len(ref_ids) < k else None  # a full list: more words may exist
        expected = len(ref_ids) if n_allowed is not None else k
    else:
        s = np.asarray(reference, np.float64)
        es = np.broadcast_to(np.asarray(err, np.float64), s.shape)
        allowed = np.isfinite(s)
        expected = min(k, int(allowed.sum()))
    if not ((ids[:expected] >= 0).all() and (ids[expected:] == -1).all()):
        _fail(what, f"expected {expected} ids then -1 padding, got {ids.tolist()}")
    got = ids[:expected]
    if len(np.unique(got)) < len(got):
        _fail(what, f"an id is returned twice: {got.tolist()}")
    if scores is not None and expected < k and not np.isneginf(np.asarray(scores)[expected:]).all():
        _fail(what, f"padding scores are not -inf: {np.asarray(scores).tolist()}")
    if isinstance(reference, tuple):
        known = dict(zip(ref_ids.tolist(), ref_s.tolist()))
        kth = ref_s[-1] if len(ref_s) else -np.inf
        r, eg = np.empty(len(got)), np.full(len(got), e)
        for c, x in enumerate(got.tolist()):
            if x in known:
                r[c] = known[x]
                continue
            if scores is None:
                _fail(what, f"id {x} is not in the reference list {ref_ids.tolist()} and no score was given")
            if n_allowed is not None:
                _fail(what, f"id {x} is not among the reference's {n_allowed} allowed words {ref_ids.tolist()}")
            r[c], eg[c] = float(np.asarray(scores)[c]), 2 * e
            if r[c] - e > kth:
                _fail(what, f"id {x} scores {r[c]:.10g}, above the reference's k-th score {kth:.10g} by more "
                            f"than the bound {e:.3g}, yet the reference left it out")
        left = [c for c, x in enumerate(ref_ids.tolist()) if x not in set(got.tolist())]
        rest_ids = ref_ids[left].tolist() + ([] if n_allowed is not None else ["(any word past the list)"])
        rest_s = np.concatenate([ref_s[left], [] if n_allowed is not None else [kth]])
        rest_e = np.full(len(rest_s), e)
        _check(got, r, eg, np.asarray(rest_ids, dtype=object), rest_s, rest_e, scores, what)
        return
    if (got >= len(s)).any():
        _fail(what, f"id {int(got.max())} is outside the reference's {len(s)} words")
    if not allowed[got].all():
        bad = got[~allowed[got]]
        _fail(what, f"returned id(s) {bad.tolist()} that the reference does not allow (excluded or outside)")
    rest = allowed.copy()
    rest[got] = False
    rest_ids = np.flatnonzero(rest)
    _check(got, s[got], es[got], rest_ids, s[rest_ids], es[rest_ids], scores, what)


def assert_rank_agrees(rank: int, reference, gold, err, *, what: str = ""):
    """Fail unless ``rank`` (1 + the number of allowed words the tested path scores above its best accepted
    answer; -1 when no accepted answer is allowed) is possible for scores each within ``err`` of ``reference``
    (full score row, ``-inf`` for words not allowed; ``gold``: the accepted ids)."""
    s = np.asarray(reference, np.float64)
    e = np.broadcast_to(np.asarray(err, np.float64), s.shape)
    gold = np.asarray([g for g in gold if 0 <= g < len(s) and np.isfinite(s[g])], dtype=np.int64)
    if not len(gold):
        if rank != -1:
            _fail(what, f"rank {rank}, but no accepted answer is allowed (expected -1)")
        return
    best_lo, best_hi = (s[gold] - e[gold]).max(), (s[gold] + e[gold]).max()
    others = np.isfinite(s)
    others[gold] = False
    low = 1 + int(np.count_nonzero(others & (s - e > best_hi)))   # surely above the best accepted answer
    high = 1 + int(np.count_nonzero(others & (s + e > best_lo)))  # possibly above it
    if not low <= rank <= high:
        _fail(what, f"rank {rank} outside [{low}, {high}], the ranks within the rounding bound")
