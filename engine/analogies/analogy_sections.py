"""Accuracy per section of a four-column analogy file (``questions-words.txt``: ``: section`` lines, then
``a a* b b*`` questions), as gensim's ``KeyedVectors.evaluate_word_analogies`` reports it: the table of ``query
analogy --questions``. The questions are answered and counted by :func:`lexprobe.kinds.section_scores.score_sections`
(gensim's rules; with ``case_insensitive`` words and answers are matched ignoring case, as gensim's default).
"""

from __future__ import annotations

from typing import Sequence

from ..kinds.analogy_queries import DEFAULT_EPS
from ..kinds.section_scores import score_sections

COLUMNS = ("section", "questions", "oov", "answered", "correct", "accuracy")


def section_accuracy(words, questions: Sequence, *, method: str = "add", restrict_vocab: int | None = None,
                     case_insensitive: bool = False, eps: float = DEFAULT_EPS) -> list[dict]:
    """Rows ``section, questions, oov, answered, correct, accuracy`` in file order, then ``total``.

    ``words``: a words index; ``questions``: objects with ``section, a, a_star, b, b_star``
    (:func:`lexprobe.sources.datasets.google.read_questions`)."""
    scores = score_sections(words, questions, method=method, restrict_vocab=restrict_vocab,
                            case_insensitive=case_insensitive, eps=eps)
    return [{c: row[c] for c in COLUMNS} for row in scores.rows]
