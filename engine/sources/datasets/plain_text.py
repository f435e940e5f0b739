"""Reader of plain running text (``text:PATH``): one sentence a line, UTF-8, compressed with gzip, bzip2 or xz
or not (recognised by the first bytes, as the vector files are: :func:`lexprobe.sources.vectors.open_binary`).

A line is split into words as typed queries are (:func:`lexprobe.sources.typed_text.split_words`: whitespace,
then punctuation at a word's edges and English clitics as words of their own, Penn Treebank style), close to the
NLTK ``word_tokenize`` the Attentive Mimicking authors ran over their corpus. Case is kept, as every corpus reader
keeps it; the contexts index lowercases (as the authors did) when it is built. Blank lines are skipped; a byte-order
mark before the first line is dropped.

The corpus has sentences and no targets (plain text has no sense annotation): it feeds the contexts index, not
the token index. Bad input is one error naming the file (and line): a binary file (a NUL byte), bytes that are
not UTF-8, a damaged compressed file, a line longer than the line limit, a file that is not a regular file, a
file with no words. :func:`iter_sentences` streams the file (:func:`.word_lines.bounded_lines`: memory bounded by
one line), :func:`read_plain_text` returns the common :class:`~.corpus.Corpus` tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ...core.errors import InputError
from ..typed_text import split_words
from .corpus import SENTENCE_SCHEMA, TARGET_SCHEMA, ColumnBuilder, Corpus
from .word_lines import bounded_lines


def iter_sentences(path: str | Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, words) for every line of ``path`` that holds a word; an error naming the file when it is
    a folder, missing, binary, not UTF-8, damaged, or holds no word at all."""
    path = Path(path)
    if path.is_dir():
        raise InputError(path, "a plain-text corpus is one file, not a folder")
    found = False
    for number, line in bounded_lines(path):
        words = split_words(line)
        if words:
            found = True
            yield number, words
    if not found:
        raise InputError(path, "no sentences (the file is empty or blank)")


def corpus_name(path: str | Path) -> str:
    """The corpus's name: the file name up to its first dot (``wiki.txt.gz`` -> ``wiki``)."""
    return Path(path).name.split(".")[0]


def read_plain_text(path: str | Path) -> Corpus:
    """The whole file as the common tables: sentence ids ``<name>.<line number>``, split ``all``, no targets."""
    name = corpus_name(path)
    sentences = ColumnBuilder(SENTENCE_SCHEMA)
    for number, words in iter_sentences(path):
        sentences.add(sentence_id=f"{name}.{number}", corpus=name, split="all", document="", words=words)
    return Corpus(name, sentences.table(), TARGET_SCHEMA.empty_table())
