"""The analogy test of Fournier et al. (section 3) over a dataset's relations, in one call that writes nothing:
every question's answer and gold rank, accuracy per relation and broad category, what the honest test returns,
and the decomposition of the analogy score (Figures 1, 2, 8). The run layer writes it
(:func:`lexprobe.analogies.run_analogies.run_analogy`); notebooks call it directly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pyarrow as pa

from ..core.conventions import Result
from ..core.seeds import rng_for
from ..kinds.analogy_queries import DEFAULT_EPS
from ..sources.datasets.bats import Coverage, Relation
from .analogy import accuracy_tables, honest_shares
from .decomposition import decompose_relations, relation_means
from .set_solvers import answer_relations


@dataclass
class AnalogyTest(Result):
    """What :func:`analogy_test` computed; :meth:`to_arrow` is ``questions``."""

    questions: pa.Table            # one row per question a:a*::b:b* (a, a*, b excluded), with the gold rank
    by_relation: list[dict]        # accuracy and MRR per relation
    by_category: list[dict]        # ... per broad category
    coverage: list[dict]           # pairs kept and dropped per relation (out of vocabulary, identity pairs)
    honest: pa.Table | None        # the honest test's answers (nothing excluded; no gold ranks), when run
    honest_shares: dict | None     # how often it returns b, a*, a, the gold answer, something else
    decomposition: pa.Table        # the score's terms per question
    means: list[dict]              # their means per relation (Figures 1, 2, 8)
    skipped: list[dict]            # relations that could not be asked (fewer than 2 pairs), with why
    seconds: float                 # time of the usual test

    def to_arrow(self) -> pa.Table:
        return self.questions

    @property
    def accuracy(self) -> float:
        """Share of all questions answered with the gold word."""
        return float(np.mean(self.questions.column("correct").to_numpy(zero_copy_only=False)))


def analogy_test(words, relations: Sequence[Relation], coverage: Sequence[Coverage] = (), *, method: str = "add",
                 restrict_vocab: int | None = None, eps: float = DEFAULT_EPS, honest: bool = True,
                 normalize: bool = False, seed: int = 0, ranks: bool = True) -> AnalogyTest:
    """The analogy test over every tuple of every relation (all ordered pairs of its pairs, a != b) with
    ``method`` (add, mul, pairdir, simany; avg and lrcos ask one question per pair, learned from the other pairs:
    :mod:`~lexprobe.analogies.set_solvers`, ``seed`` for LRCos's random negatives), the honest test when
    ``honest``, and the 3CosAdd score decomposition on the raw vectors (``normalize``: on unit vectors). ``relations`` and ``coverage`` come from
    :func:`lexprobe.analogy_dataset` (the dataset with the out-of-vocabulary policy applied). ``ranks=False``
    skips the gold ranks (about half the time of 3CosAdd): ranks -1, and no ``mrr`` in the accuracy tables.

    >>> glove = lexprobe.open_index("glove")
    >>> relations, coverage = lexprobe.analogy_dataset(glove, f"bats:{BATS}")
    >>> test = lexprobe.analogy_test(glove, relations[:2], coverage[:2])
    >>> [(r["relation"], r["questions"], round(r["accuracy"], 3)) for r in test.by_relation]
    [('I01 [noun - plural_reg]', 2450, 0.571), ('I02 [noun - plural_irreg]', 2256, 0.336)]
    >>> max(test.honest_shares, key=lambda k: test.honest_shares[k] if k != "questions" else 0)  # the honest test
    'b'
    """
    t0 = time.perf_counter()
    usual = answer_relations(words, list(relations), method=method, restrict_vocab=restrict_vocab, eps=eps,
                             seed=seed, ranks=ranks)
    seconds = time.perf_counter() - t0
    by_relation, by_category = accuracy_tables(usual.table)
    if not ranks:
        by_relation, by_category = ([{k: v for k, v in r.items() if k != "mrr"} for r in rows]
                                    for rows in (by_relation, by_category))
    honest_table = shares = None
    if honest:
        h = answer_relations(words, list(relations), method=method, restrict_vocab=restrict_vocab, eps=eps,
                             honest=True, ranks=False, seed=seed)
        honest_table = h.table.drop_columns(["rank"])  # gold ranks are not counted in the honest run
        shares = honest_shares(h.table)
    decomposition = decompose_relations(words, list(relations), normalize=normalize)
    return AnalogyTest(usual.table, by_relation, by_category, [c.as_row() for c in coverage], honest_table, shares,
                       decomposition, relation_means(decomposition), usual.skipped, seconds)


def sampled_questions(relations: Sequence[Relation], per_relation: int, *, seed: int) -> list[Relation]:
    """Every relation with ``per_relation`` of its questions drawn without replacement (seeded by ``seed`` and the
    relation's name; a relation with fewer keeps all), as listed questions: what the slow solvers answer when a
    sample decides (PairDirection scores every word against every question's own start word)."""
    out = []
    for rel in relations:
        ii, jj = rel.question_index()
        if len(ii) > per_relation:
            pick = np.sort(rng_for(seed, "question-sample", rel.name).choice(len(ii), per_relation, replace=False))
            rel = replace(rel, questions=list(zip(ii[pick].tolist(), jj[pick].tolist())))
        out.append(rel)
    return out


def matching_rows(table: pa.Table, like: pa.Table) -> pa.Table:
    """The rows of question table ``table`` asking the questions of ``like`` (same relation, a, a* and b), in
    ``like``'s order: one method's answers to the questions another answered."""
    key = lambda t: list(zip(*(t.column(c).to_pylist() for c in ("relation", "a", "a_star", "b"))))
    where = {k: i for i, k in enumerate(key(table))}
    return table.take([where[k] for k in key(like)])


def method_tables(words, relations: Sequence[Relation], methods: Sequence[str], *, lrcos_seeds: Sequence[int] = (0,),
                  restrict_vocab: int | None = None) -> dict[str, list[pa.Table]]:
    """The question rows (:func:`~lexprobe.analogies.set_solvers.answer_relations`, inputs excluded, no gold
    ranks) of every method in ``methods`` over the same relations: method -> tables, one per seed of LRCos's
    random negatives (``lrcos_seeds``: one run is one draw, not a result), one for the other methods."""
    out = {}
    for method in methods:
        seeds = lrcos_seeds if method == "lrcos" else (0,)
        out[method] = [answer_relations(words, list(relations), method=method, restrict_vocab=restrict_vocab,
                                        ranks=False, seed=s).table for s in seeds]
    return out


def relation_accuracy(tables: Sequence[pa.Table]) -> dict[str, float]:
    """Accuracy per relation (share of its questions answered with an accepted word), averaged over ``tables``
    (the seeds of one method)."""
    per = []
    for table in tables:
        rel = np.asarray(table.column("relation").to_pylist(), dtype=object)
        correct = table.column("correct").to_numpy(zero_copy_only=False)
        per.append({name: float(correct[rel == name].mean()) for name in dict.fromkeys(rel)})
    return {name: float(np.mean([p[name] for p in per])) for name in per[0]}


def seed_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """The mean of one number per seed with its Student-t interval (95% by default): the seeds' spread, what one
    draw of random negatives leaves open. NaN bounds with one seed."""
    from scipy.stats import t

    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2:
        return float(x.mean()), float("nan"), float("nan")
    half = t.ppf((1 + level) / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x))
    return float(x.mean()), float(x.mean() - half), float(x.mean() + half)


def accuracy_intervals(tables: dict[str, Sequence[pa.Table]]) -> list[dict]:
    """Accuracy per method and broad category (then ``all``) with the Wilson 95% interval of the share of its
    questions (a method with several seeds: the mean share over seeds, its interval over one seed's questions)."""
    from ..core.intervals import wilson

    rows = []
    for method, runs in tables.items():
        cat = np.concatenate([np.asarray(t.column("category").to_pylist(), dtype=object) for t in runs])
        correct = np.concatenate([t.column("correct").to_numpy(zero_copy_only=False) for t in runs])
        for name in [*dict.fromkeys(cat), "all"]:
            m = (cat == name) if name != "all" else np.ones(len(cat), dtype=bool)
            n, share = int(m.sum()) // len(runs), float(correct[m].mean())
            low, high = wilson(round(share * n), n)
            rows.append({"method": method, "category": name, "seeds": len(runs), "questions": n,
                         "accuracy": share, "low": low, "high": high})
    return rows
