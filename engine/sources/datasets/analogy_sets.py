"""Analogy datasets named by a spec: ``bats:PATH`` (the BATS root, a category folder or one relation file) or
``google:PATH`` (``questions-words.txt``). The dispatcher, apart from the readers (:mod:`.bats`, :mod:`.google`).
"""

from __future__ import annotations

from ...core.errors import LexprobeError
from ..datahome import dataset_path, named_spec
from .bats import Coverage, Relation, apply_vocab, read_bats
from .google import read_google

DATASET_KINDS = ("bats", "google")


def split_spec(spec: str) -> tuple[str, str]:
    """``(kind, path)`` of a spec; a bare ``bats`` or ``google`` is that dataset in the data home; a relative path
    missing from the working folder is looked up in the data places (:func:`..datahome.dataset_path`); a spec of
    no known kind is a clear error."""
    if spec in DATASET_KINDS:
        spec = named_spec(spec)
    kind, sep, path = spec.partition(":")
    if not sep or kind not in DATASET_KINDS or not path:
        raise LexprobeError(f"bad dataset {spec!r}: use bats:PATH, google:PATH, or bats / google from the data home")
    return kind, str(dataset_path(path))


def read_dataset(spec: str, *, answers: str = "first", lowercase: bool = False,
                 questions: str = "file") -> list[Relation]:
    """Relations of a dataset spec ``bats:PATH`` or ``google:PATH``; ``questions`` (Google only): the file's own
    questions (``"file"``) or every ordered pair of pairs per section (``"pairs"``), :func:`.google.read_google`."""
    kind, path = split_spec(spec)
    if kind == "bats":
        relations = read_bats(path, answers=answers)
        if lowercase:
            relations = [Relation(r.name, r.code, r.category, r.file,
                                  [(s.lower(), list(dict.fromkeys(a.lower() for a in ans))) for s, ans in r.pairs])
                         for r in relations]
        return relations
    return read_google(path, lowercase=lowercase, questions=questions)


def usable_relations(words, spec: str, *, answers: str = "first", lowercase: bool = False,
                     questions: str = "file") -> tuple[list[Relation], list[Coverage]]:
    """A dataset's relations with the out-of-vocabulary policy of :func:`.bats.apply_vocab` applied against
    ``words`` (a words index, or anything with a ``word_to_id`` mapping), and the per-relation coverage report."""
    return apply_vocab(read_dataset(spec, answers=answers, lowercase=lowercase, questions=questions),
                       words.word_to_id)


def dataset_words(spec: str) -> set[str]:
    """Every word a dataset names: start words and all listed answers (kept out of random word pools)."""
    return {w for rel in read_dataset(spec, answers="any") for s, answers in rel.pairs for w in [s, *answers]}
