"""Analogy questions a:a*::b:? as queries of a words index: the four scores (3CosAdd, 3CosMul, PairDirection,
vecto's SimilarToAny) from cosines on unit vectors, top-k with the inputs excluded (or not: the honest test), and
:func:`answer_questions` for arbitrary questions. Whole-relation runs (pruned, with gold ranks) build on these in
:mod:`lexprobe.analogies.analogy`, whose docstring gives the formulas; the methods that learn from a relation's
other pairs (:data:`SET_METHODS`) need a relation, not one question (:mod:`lexprobe.analogies.set_solvers`).
"""

from __future__ import annotations

import operator

import numpy as np

from ..core.conventions import renamed
from ..core.errors import LexprobeError
from ..core.progress import bar, enabled as progress_enabled
from ..core.topk import topk_rows  # shared with the nearest-neighbour kernel: ties in column order, also across the cut

METHODS = ("add", "mul", "pairdir", "simany")  # answer one question a:a*::b:? alone
SET_METHODS = ("avg", "lrcos")  # vecto's 3CosAvg and LRCos: b:? from the relation's other pairs
ALL_METHODS = METHODS + SET_METHODS
METHODS_HELP = ("add: 3CosAdd; mul: 3CosMul (Levy & Goldberg 2014); pairdir: PairDirection; simany: vecto's "
                "SimilarToAny (the answer closest to any of a, a*, b); avg: 3CosAvg and lrcos: LRCos (Drozd et al. "
                "2016), learned from the relation's other pairs. vecto's names (3CosAdd, 3CosMul, PairDistance, "
                "SimilarToAny, 3CosAvg, LRCos) are accepted.")
# vecto's names of the methods (its --method values and solver classes), accepted wherever a method is named
VECTO_NAMES = {"3CosAdd": "add", "LinearOffset": "add", "3CosMul": "mul", "ThreeCosMul": "mul",
               "PairDistance": "pairdir", "SimilarToAny": "simany", "3CosAvg": "avg", "ThreeCosAvg": "avg",
               "LRCos": "lrcos"}
EXCLUSIONS = ("inputs", "vecto")  # a, a*, b (lexprobe's usual test); a, every listed answer of a's pair, b (vecto)
LRCOS_SEEDS = 5  # seeds of LRCos's random negatives a result averages over (analogies.set_solvers.lrcos_over_seeds)
DEFAULT_EPS = 1e-3
_CHUNK = 64  # questions per block of the element-wise scans
_SEARCH_BLOCK = 4096  # 3CosAdd questions per search (a step of the progress bar)
_BAR_QUESTIONS = 1000  # fewer questions answer too fast for a bar (and a server asks one at a time)


def method_name(method: str) -> str:
    """lexprobe's name of an analogy method given by its own name or vecto's (``3CosAvg`` -> ``avg``; any case)."""
    folded = {name.lower(): ours for name, ours in VECTO_NAMES.items()}
    return method if method in ALL_METHODS else folded.get(str(method).lower(), method)


def check_method(method: str, allowed: tuple[str, ...] = METHODS) -> str:
    """``method`` in lexprobe's name (vecto's names accepted), or one clear error naming the choices."""
    method = method_name(method)
    if method not in allowed:
        more = f"; {method} learns from a relation's pairs: give a dataset" if method in SET_METHODS else ""
        raise LexprobeError(f"unknown analogy method {method!r} (choose from {', '.join(allowed)}){more}")
    return method


def shift(c):
    return (c + 1.0) * 0.5


def partial_score(method: str, cas: np.ndarray, ca: np.ndarray, eps: float) -> np.ndarray:
    """The part of the (unnormalised) score that depends on x through a and a* only."""
    if method == "add":
        return cas - ca
    return shift(cas) / (shift(ca) + eps)  # mul


def combine_score(method: str, h: np.ndarray, cb: np.ndarray) -> np.ndarray:
    """Unnormalised add/mul score from the a:a* part ``h`` and ``cb``; increasing in ``cb``."""
    return h + cb if method == "add" else h * shift(cb)


def pairdir_score(cas, ca, cb, beta, onorm):
    dist = np.sqrt(np.maximum(2.0 - 2.0 * cb, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (cas - ca - beta) / (dist * onorm)
    return np.where(dist > 1e-3, out, 0.0).astype(np.float32)


def simany_score(ca, cas, cb):
    """SimilarToAny (vecto): the best of a candidate's cosines to a, a* and b."""
    return np.maximum(np.maximum(ca, cas), cb)


def excluded_cells(V: int, excl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays of the excluded (question, word) cells of a (q, V) score matrix."""
    rows = np.repeat(np.arange(len(excl)), excl.shape[1])
    cols = excl.reshape(-1)
    keep = (cols >= 0) & (cols < V)
    return rows[keep], cols[keep]


@renamed(honest=("exclude_inputs", operator.not_))
def answer_questions(words, a: np.ndarray, a_star: np.ndarray, b: np.ndarray, *, method: str = "add",
                     k: int = 1, exclude_inputs: bool = True, restrict_vocab: int | None = None,
                     eps: float = DEFAULT_EPS) -> tuple[np.ndarray, np.ndarray]:
    """Top-k answers ``(D, I)`` to arbitrary questions a:a*::b:? given as word-id arrays of ``words`` (a
    :class:`~.words.WordIndex`; not imported here, so the words kind can use this module without a loop).

    ``add`` is a batched search of the queries ``b - a + a*`` (unit vectors, normalised) with a, a*, b
    excluded per query (unless ``exclude_inputs=False``: the honest test); ``mul``, ``pairdir`` and ``simany``
    are blocked scans: per block of questions one matrix product with the block's words, then element-wise
    scores, masking and top-k. Many questions show a progress bar.
    """
    method = check_method(method)
    a, a_star, b = (np.asarray(x, dtype=np.int64) for x in (a, a_star, b))
    exclude = np.stack([a, a_star, b], axis=1) if exclude_inputs else None
    D = np.full((len(a), k), -np.inf, dtype=np.float32)
    I = np.full((len(a), k), -1, dtype=np.int64)
    progress = bar(total=len(a), desc="analogy questions", unit="question",
                   disable=len(a) < _BAR_QUESTIONS or not progress_enabled())
    if method == "add":
        for start in range(0, len(a), _SEARCH_BLOCK):
            sl = slice(start, start + _SEARCH_BLOCK)
            q = words.unit_of(b[sl]) - words.unit_of(a[sl]) + words.unit_of(a_star[sl])
            q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
            D[sl], I[sl] = words.searcher.search(q, k, exclude=None if exclude is None else exclude[sl],
                                                restrict=restrict_vocab)
            progress.update(len(q))
        progress.close()
        return D, I
    unit = words.unit
    V = len(unit) if restrict_vocab is None else min(int(restrict_vocab), len(unit))
    for start in range(0, len(a), _CHUNK):
        sl = slice(start, start + _CHUNK)
        ca, cas, cb = (unit[x[sl]] @ unit[:V].T for x in (a, a_star, b))
        if method == "mul":
            R = combine_score("mul", partial_score("mul", cas, ca, eps), cb)
        elif method == "simany":
            R = simany_score(ca, cas, cb)
        else:
            o = unit[a_star[sl]] - unit[a[sl]]
            beta = np.einsum("ij,ij->i", unit[b[sl]], o)[:, None]
            R = pairdir_score(cas, ca, cb, beta, np.linalg.norm(o, axis=1)[:, None])
        if exclude is not None:
            R[excluded_cells(V, exclude[sl])] = -np.inf
        top, vals = topk_rows(R, k)
        I[sl, : top.shape[1]] = np.where(np.isfinite(vals), top, -1)
        D[sl, : vals.shape[1]] = vals
        progress.update(len(R))
    progress.close()
    return D, I
