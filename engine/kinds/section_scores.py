"""Accuracy per section of a four-column analogy file (``questions-words.txt``: ``: section`` lines, then
``a a* b b*`` questions) over a words index: the one computation behind gensim's ``evaluate_word_analogies``
(:meth:`~lexprobe.kinds.words.WordIndex.evaluate_word_analogies`), ``query analogy --questions``
(:func:`lexprobe.analogies.analogy_sections.section_accuracy`) and the main job's Google table.

Rules (gensim's): words are matched within the ``restrict_vocab`` most frequent, each form to its most frequent
row, ignoring case when ``case_insensitive`` (upper-cased, as gensim compares); a question with a word outside them
is out of the vocabulary (``oov``) and not asked. The others are answered by ``method`` in one search with nothing
excluded: the honest answer is the first hit, the usual answer the first hit that is none of a, a*, b (with
``case_insensitive``, gensim's rule: of the first five such hits, the first that is no input in another case, else
the fifth). A question is correct when its answer's form is b*'s; ``accuracy = correct / answered``, per section
(in file order) and pooled (``total``). The honest columns give how often the first hit is b*, b, a* or a.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from ..core.conventions import Result
from .analogy_queries import DEFAULT_EPS, answer_questions

_GENSIM_TOPN = 5  # gensim's evaluate_word_analogies looks at the best five answers (inputs excluded)
_COUNTS = ("questions", "oov", "answered", "correct", "honest_correct", "honest_b", "honest_a_star", "honest_a")


def folded_vocab(words, restrict_vocab: int | None, case_insensitive: bool) -> dict[str, int]:
    """gensim's ``ok_vocab``: each word of the first ``restrict_vocab`` rows of the words index ``words``
    (None: all), upper-cased when ``case_insensitive``, to the lowest live row id with that form (the most
    frequent variant)."""
    limit = len(words.words) if restrict_vocab is None else min(int(restrict_vocab), len(words.words))
    rows = np.flatnonzero(~words.dead_rows()[:limit])
    forms = [words.words[i] for i in rows] if len(rows) < limit else words.words[:limit]
    if case_insensitive:
        forms = [w.upper() for w in forms]
    return dict(zip(reversed(forms), reversed(rows.tolist())))


@dataclass(repr=False)
class SectionScores(Result):
    """The questions of a four-column file answered (:func:`score_sections`): per question its section, its four
    words (upper-cased when matched ignoring case), whether it was asked, the usual and the honest answer's row
    id (-1: none) and whether the usual one is b*; ``rows``, one per section in file order and ``total``:
    ``section, questions, oov, answered, correct, accuracy, honest_accuracy, honest_returns_b,
    honest_returns_a_star, honest_returns_a`` (the shares over the answered questions; None when none is)."""

    sections: list[str]
    words: list[tuple[str, str, str, str]]
    asked: np.ndarray
    predicted: np.ndarray
    honest: np.ndarray
    correct: np.ndarray
    rows: list[dict]

    def to_arrow(self) -> pa.Table:
        return pa.Table.from_pylist(self.rows)


def score_sections(words, questions: Sequence, *, method: str = "add", restrict_vocab: int | None = None,
                   case_insensitive: bool = False, eps: float = DEFAULT_EPS, sample: int | None = None,
                   seed: int = 0) -> SectionScores:
    """Answer ``questions`` (objects with ``section, a, a_star, b, b_star``:
    :func:`lexprobe.sources.datasets.google.read_questions`) with the words index ``words`` by the module's
    rules; ``sample``: only that many of the questions in the vocabulary are asked, drawn with ``seed`` (the
    others count as neither oov nor answered)."""
    fold = str.upper if case_insensitive else (lambda w: w)
    vocab = folded_vocab(words, restrict_vocab, case_insensitive)
    sections = [q.section for q in questions]
    forms = [tuple(fold(w) for w in (q.a, q.a_star, q.b, q.b_star)) for q in questions]
    ids = np.array([[vocab.get(w, -1) for w in four] for four in forms], dtype=np.int64).reshape(-1, 4)
    known = np.flatnonzero((ids >= 0).all(axis=1))
    if sample is not None:
        known = known[np.sort(np.random.default_rng(seed).choice(len(known), min(sample, len(known)),
                                                                 replace=False))]
    asked = np.zeros(len(ids), dtype=bool)
    asked[known] = True
    predicted, honest = np.full(len(ids), -1, np.int64), np.full(len(ids), -1, np.int64)
    answer_forms: dict[int, str] = {}
    if len(known):
        usual = _GENSIM_TOPN if case_insensitive else 1
        q = ids[known]
        _, top = answer_questions(words, q[:, 0], q[:, 1], q[:, 2], method=method, k=usual + 3,
                                  exclude_inputs=False, restrict_vocab=restrict_vocab, eps=eps)
        honest[known] = top[:, 0]
        top_forms = np.array([fold(w) for w in words.words_at(top.reshape(-1).clip(0))], dtype=object)
        for row, hits, hit_forms in zip(known.tolist(), top.tolist(), top_forms.reshape(top.shape).tolist()):
            inputs = ids[row, :3].tolist()
            others = [(j, f) for j, f in zip(hits, hit_forms) if j >= 0 and j not in inputs][:usual]
            chosen = next((c for c in others if c[1] not in forms[row][:3]), others[-1] if others else (-1, None))
            predicted[row] = chosen[0]
            answer_forms.update({j: f for j, f in zip(hits, hit_forms) if j >= 0})
    form_of = lambda j: answer_forms.get(int(j))
    correct = np.array([a and form_of(p) == f[3] for a, p, f in zip(asked, predicted, forms)], dtype=bool)
    rows: dict[str, dict] = {}
    for i, (section, four) in enumerate(zip(sections, forms)):
        row = rows.setdefault(section, dict.fromkeys(_COUNTS, 0))
        row["questions"] += 1
        row["oov"] += bool((ids[i] < 0).any())
        if asked[i]:
            first = form_of(honest[i])
            row["answered"] += 1
            row["correct"] += bool(correct[i])
            for key, gold in zip(("honest_correct", "honest_b", "honest_a_star", "honest_a"), (3, 2, 1, 0)):
                row[key] += first == four[gold]
    table = [{"section": s, **r} for s, r in rows.items()]
    table.append({"section": "total", **{c: sum(r[c] for r in table) for c in _COUNTS}})
    return SectionScores(sections, forms, asked, predicted, honest, correct, [_shares(r) for r in table])


def _shares(row: dict) -> dict:
    """A section's counts as the table's row: the accuracy and the honest shares over its answered questions."""
    n = row["answered"]
    share = (lambda c: c / n) if n else (lambda c: None)
    return {"section": row["section"], "questions": row["questions"], "oov": row["oov"], "answered": n,
            "correct": row["correct"], "accuracy": share(row["correct"]),
            "honest_accuracy": share(row["honest_correct"]), "honest_returns_b": share(row["honest_b"]),
            "honest_returns_a_star": share(row["honest_a_star"]), "honest_returns_a": share(row["honest_a"])}
