"""Accuracy per section of a four-column analogy file (``questions-words.txt``: ``: section`` lines, then
``a a* b b*`` questions), as gensim's ``KeyedVectors.evaluate_word_analogies`` reports it.

Rules (gensim's): a question with a word outside the vocabulary (or outside the ``restrict_vocab`` most frequent
words) is skipped and counted as ``oov``; the others are answered by ``method`` with a, a*, b excluded, and are
correct when the first answer is b*. ``accuracy = correct / answered`` per section, and for all sections pooled
(the ``total`` row). ``case_insensitive``: every word is matched ignoring case, to the most frequent index word
of that form, and answers are compared ignoring case (gensim's default; here an option, exact by default).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..kinds.analogy_queries import DEFAULT_EPS, answer_questions


def section_accuracy(words, questions: Sequence, *, method: str = "add", restrict_vocab: int | None = None,
                     case_insensitive: bool = False, eps: float = DEFAULT_EPS) -> list[dict]:
    """Rows ``section, questions, oov, answered, correct, accuracy`` in file order, then ``total``.

    ``words``: a words index (``word_to_id``, ``words``); ``questions``: objects with ``section, a, a_star, b,
    b_star`` (:func:`lexprobe.sources.datasets.google.read_questions`)."""
    fold = str.lower if case_insensitive else (lambda w: w)
    limit = restrict_vocab if restrict_vocab is not None else len(words.words)
    vocab: dict[str, int] = {}
    for w, i in sorted(words.word_to_id.items(), key=lambda kv: kv[1]):
        if i < limit:
            vocab.setdefault(fold(w), i)  # the most frequent form wins
    stats: dict[str, dict] = {}
    asked, gold = [], []
    for q in questions:
        row = stats.setdefault(q.section, {"section": q.section, "questions": 0, "oov": 0, "answered": 0,
                                           "correct": 0})
        row["questions"] += 1
        ids = [vocab.get(fold(w)) for w in (q.a, q.a_star, q.b, q.b_star)]
        if None in ids:
            row["oov"] += 1
            continue
        asked.append((q.section, *ids[:3]))
        gold.append(fold(q.b_star))
    if asked:
        ids = np.asarray([x[1:] for x in asked], dtype=np.int64)
        _, I = answer_questions(words, ids[:, 0], ids[:, 1], ids[:, 2], method=method, k=1,
                                restrict_vocab=restrict_vocab, eps=eps)
        for (section, *_), j, g in zip(asked, I[:, 0], gold):
            stats[section]["answered"] += 1
            stats[section]["correct"] += int(j >= 0 and fold(words.words[j]) == g)
    rows = list(stats.values())
    total = {"section": "total", **{c: sum(r[c] for r in rows) for c in ("questions", "oov", "answered", "correct")}}
    for r in rows + [total]:
        r["accuracy"] = r["correct"] / r["answered"] if r["answered"] else None
    return rows + [total]
