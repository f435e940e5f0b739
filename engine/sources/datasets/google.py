"""The Google analogy set (Mikolov et al. 2013, ``questions-words.txt``): 14 sections, 19,544 questions.

The file is a sequence of ``: section`` lines, each followed by questions ``A B C D`` (A:B::C:D). For the
offset index and the analogy engine a section is a :class:`~lexprobe.sources.datasets.bats.Relation`; its
category is ``semantic`` or ``syntactic`` (the ``gram*`` sections), as in the original paper. By default
(``questions="file"``) its pairs are the distinct ``(A, B)`` and ``(C, D)`` pairs in file order and its
questions the file's own 19,544 (the standard test, as gensim's ``evaluate_word_analogies`` and word2vec's
``compute-accuracy`` answer it); ``questions="pairs"`` keeps one pair per start word (the first seen, as for
BATS) and asks every ordered pair of pairs in a section (30,360 questions).
:func:`read_questions` keeps the questions themselves. Words keep their case unless ``lowercase`` (the file
capitalises names; GloVe is lowercase).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import InputError, LexprobeError
from .bats import Relation
from .word_lines import bounded_lines

QUESTION_SOURCES = ("file", "pairs")


@dataclass(frozen=True)
class Question:
    section: str
    a: str
    a_star: str
    b: str
    b_star: str


def category_of(section: str) -> str:
    return "syntactic" if section.startswith("gram") else "semantic"


def read_questions(path: str | os.PathLike, *, lowercase: bool = False) -> list[Question]:
    """Every question in file order; a malformed line is an :class:`InputError` naming file and line."""
    path = Path(path)
    if not path.exists():
        raise LexprobeError(f"{path}: no such file (the Google analogy set, questions-words.txt)")
    section, out = None, []
    for number, raw in bounded_lines(path):
        line = raw.strip()
        if not line:
            continue
        if line.startswith(":"):
            section = line[1:].strip()
            if not section:
                raise InputError(path, "empty section name", number)
            continue
        words = line.lower().split() if lowercase else line.split()
        if len(words) != 4:
            raise InputError(path, f"expected 4 words 'A B C D', found {len(words)}", number)
        if section is None:
            raise InputError(path, "question before the first ': section' line", number)
        out.append(Question(section, *words))
    if not out:
        raise InputError(path, "no questions")
    return out


def read_google(path: str | os.PathLike, *, lowercase: bool = False, questions: str = "file") -> list[Relation]:
    """One relation per section: the file's own questions over its distinct pairs (``questions="file"``), or
    one pair per start word and every ordered pair of pairs (``"pairs"``)."""
    if questions not in QUESTION_SOURCES:
        raise LexprobeError(f"unknown Google questions {questions!r} (choose from {', '.join(QUESTION_SOURCES)})")
    relations: dict[str, Relation] = {}
    index: dict[str, dict] = {}  # section -> pair key -> pair number
    for q in read_questions(path, lowercase=lowercase):
        rel = relations.get(q.section)
        if rel is None:
            rel = relations[q.section] = Relation(q.section, q.section, category_of(q.section), str(path),
                                                  questions=[] if questions == "file" else None)
            index[q.section] = {}
        numbers = []
        for start, end in ((q.a, q.a_star), (q.b, q.b_star)):
            key = (start, end) if questions == "file" else start  # "pairs": one pair per start word
            if key not in index[q.section]:
                index[q.section][key] = len(rel.pairs)
                rel.pairs.append((start, [end]))
            numbers.append(index[q.section][key])
        if questions == "file":
            rel.questions.append((numbers[0], numbers[1]))
    return list(relations.values())
