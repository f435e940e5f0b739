"""BATS 3.0 (Gladkova et al. 2016): 4 broad categories x 10 relations x 50 word pairs.

A relation file is ``<category folder>/<code> [<name>].txt``, e.g. ``1_Inflectional_morphology/I01 [noun -
plural_reg].txt``; a line is ``start<TAB>answer1/answer2/...`` (some releases use CRLF; multi-word answers join
their words with ``_``; some lines end in a stray ``/``). Fournier et al. (2020) keep the first answer
(``answers="first"``, the default); vecto counts any listed answer as correct (``answers="any"``).

The out-of-vocabulary policy is explicit: :func:`apply_vocab` keeps a pair when its start word and at least one
of its answers are in the vocabulary (answers not in it are dropped), and reports per relation how many pairs
were kept and dropped, never silently. Identity pairs (a start word that is its own answer, e.g. I02
series:series) are dropped too and counted apart, as the authors' scripts drop them: their offset is zero.

A relation's questions a:a*::b:b* are every ordered pair of its pairs (a != b) unless it lists its own
(``Relation.questions``, e.g. the Google file's questions).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Container, Sequence

import numpy as np

from ...core.conventions import short_repr
from ...core.errors import InputError, LexprobeError
from .word_lines import bounded_lines

ANSWER_POLICIES = ("first", "any")
_FILE_RE = re.compile(r"^([A-Z]\d\d)\s*\[(.+)\]$")


@dataclass
class Relation:
    """One relation: its pairs ``(start, answers)``, answers in file order (one answer under ``first``)."""

    name: str            # "I01 [noun - plural_reg]"
    code: str            # "I01"
    category: str        # broad type: "inflectional", "derivational", "encyclopedic", "lexicographic"
    file: str
    pairs: list[tuple[str, list[str]]] = field(default_factory=list)
    questions: list[tuple[int, int]] | None = None  # (i, j): a:a* = pair i, b:b* = pair j; None: every i != j
    __repr__ = short_repr  # one line: its pairs counted, not listed

    @property
    def starts(self) -> list[str]:
        return [s for s, _ in self.pairs]

    @property
    def ends(self) -> list[str]:
        """The first (kept) answer of each pair: the end word of its offset."""
        return [a[0] for _, a in self.pairs]

    def question_index(self) -> tuple[np.ndarray, np.ndarray]:
        """``(i, j)`` arrays of the questions: the listed ones in order, or every ordered pair i != j row-major."""
        if self.questions is None:
            return np.nonzero(~np.eye(len(self.pairs), dtype=bool))
        q = np.asarray(self.questions, dtype=np.int64).reshape(-1, 2)
        return q[:, 0], q[:, 1]


def category_of(folder: str) -> str:
    """``1_Inflectional_morphology`` -> ``inflectional``: the broad type named by a category folder."""
    parts = [p for p in folder.split("_") if p and not p.isdigit()]
    return parts[0].lower() if parts else folder.lower()


def _check_policy(answers: str) -> None:
    if answers not in ANSWER_POLICIES:
        raise LexprobeError(f"unknown answer policy {answers!r} (choose from {', '.join(ANSWER_POLICIES)})")


def read_relation_file(path: str | os.PathLike, *, answers: str = "first", category: str | None = None) -> Relation:
    """Read one BATS relation file; a malformed line is an :class:`InputError` naming file and line."""
    _check_policy(answers)
    path = Path(path)
    stem = path.stem
    match = _FILE_RE.match(stem)
    code = match.group(1) if match else stem.split()[0] if stem.split() else stem
    relation = Relation(name=stem, code=code, category=category or category_of(path.parent.name), file=str(path))
    seen: set[str] = set()
    for number, raw in bounded_lines(path):
        line = raw.strip()
        if not line:
            continue
        fields = line.split("\t") if "\t" in line else line.split()
        if len(fields) != 2:
            raise InputError(path, f"expected 'start<TAB>answer1/answer2/...', found {len(fields)} fields", number)
        start, listed = fields[0].strip(), fields[1].strip()
        if not start or " " in start:
            raise InputError(path, f"bad start word {start!r}", number)
        options = list(dict.fromkeys(a.strip() for a in listed.split("/") if a.strip()))
        if not options or any(" " in a for a in options):
            raise InputError(path, f"no usable answer in {listed!r}", number)
        if start in seen:  # the paper: "when multiple pairs exist for the same input word, we only keep the first"
            continue
        seen.add(start)
        relation.pairs.append((start, options[:1] if answers == "first" else options))
    if not relation.pairs:
        raise InputError(path, "no word pairs")
    return relation


def read_bats(path: str | os.PathLike, *, answers: str = "first") -> list[Relation]:
    """All relations under ``path``: the BATS root (category folders), one category folder, or one file.

    Relations come sorted by category folder then file name (I01..I10, D01.., E01.., L01..).
    """
    _check_policy(answers)
    path = Path(path)
    if path.is_file():
        return [read_relation_file(path, answers=answers)]
    if not path.is_dir():
        raise LexprobeError(f"{path}: no such BATS file or folder")
    files = sorted(p for p in path.glob("*/*.txt") if _FILE_RE.match(p.stem)) or \
        sorted(p for p in path.glob("*.txt") if _FILE_RE.match(p.stem))
    if not files:
        raise LexprobeError(f"{path}: no BATS relation files ('<code> [<name>].txt', e.g. 'I01 [noun - plural_reg].txt')")
    return [read_relation_file(f, answers=answers) for f in files]


@dataclass
class Coverage:
    """What the out-of-vocabulary policy did to one relation."""

    relation: str
    code: str
    category: str
    pairs: int
    kept: int
    dropped: int                 # out of vocabulary
    answers_dropped: int
    dropped_words: list[str]
    identity: int = 0            # identity pairs dropped (start == answer)
    questions: int | None = None       # a relation listing its questions: how many it lists ...
    questions_kept: int | None = None  # ... and how many have all four words kept
    __repr__ = short_repr

    @property
    def coverage(self) -> float:
        return self.kept / self.pairs if self.pairs else 0.0

    def as_row(self) -> dict:
        row = {"relation": self.relation, "code": self.code, "category": self.category, "pairs": self.pairs,
               "kept": self.kept, "dropped": self.dropped, "identity": self.identity,
               "coverage": round(self.coverage, 4), "answers_dropped": self.answers_dropped,
               "oov_examples": " ".join(self.dropped_words[:5])}
        if self.questions is not None:
            row.update(questions=self.questions, questions_kept=self.questions_kept)
        return row


def apply_vocab(relations: Sequence[Relation], vocab: Container[str]) -> tuple[list[Relation], list[Coverage]]:
    """Keep the pairs whose start word and at least one answer are in ``vocab`` and that are no identity pair;
    report every drop.

    Answers outside ``vocab`` are removed from a kept pair (under ``first`` a pair whose only answer is out of
    vocabulary is dropped, not given its second answer: the paper's rule), and so is an answer equal to the
    start word; a pair left with no answer but its start word is an identity pair, dropped and counted apart.
    A relation listing its questions keeps those whose two pairs are kept. Returns the filtered relations
    (same order; a relation may end up with fewer than two pairs, which the analyses report and skip) and one
    :class:`Coverage` per relation.
    """
    kept_relations, report = [], []
    for rel in relations:
        pairs, oov, answers_dropped, identity, new_index = [], [], 0, 0, {}
        for number, (start, options) in enumerate(rel.pairs):
            usable = [a for a in options if a in vocab]
            answers_dropped += len(options) - len(usable)
            if start not in vocab or not usable:
                oov += [w for w in [start, *options] if w not in vocab][:1]
            elif all(a == start for a in usable):
                identity += 1
            else:
                new_index[number] = len(pairs)
                pairs.append((start, [a for a in usable if a != start]))
        questions = None if rel.questions is None else \
            [(new_index[i], new_index[j]) for i, j in rel.questions if i in new_index and j in new_index]
        kept_relations.append(replace(rel, pairs=pairs, questions=questions))
        report.append(Coverage(rel.name, rel.code, rel.category, len(rel.pairs), len(pairs),
                               len(rel.pairs) - len(pairs) - identity, answers_dropped, oov, identity,
                               None if questions is None else len(rel.questions),
                               None if questions is None else len(questions)))
    return kept_relations, report
