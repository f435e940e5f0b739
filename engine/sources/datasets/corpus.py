"""The common shape of every sense-annotated corpus: the types every reader shares.

A reader (:mod:`lexprobe.sources.datasets.wsd`, :mod:`~lexprobe.sources.datasets.streusle`,
:mod:`~lexprobe.sources.datasets.jsonl_corpus`; :mod:`lexprobe.sources.datasets.corpora` picks one from a
``KIND:PATH`` spec) returns a :class:`Corpus`: a sentence table (each sentence once: its words) and a target
table (one row per sense-annotated target: where it is in its sentence and its sense).

Target table columns (:data:`TARGET_SCHEMA`):

=============  ==============================================================================================
instance_id    the corpus's own id of the target (WSD instance id; STREUSLE ``sent_id:token``; JSONL ``id``)
corpus         corpus name (``semcor``, ``senseval2``, ``ALL``, ``streusle``, the JSONL file's stem)
split          sub-corpus or split (the evaluation set inside ``ALL``; STREUSLE train/dev/test; JSONL ``split``)
document       document id (WSD text id, STREUSLE review id, JSONL ``document``)
sentence_id    key into the sentence table
position       index of the target's first word in the sentence (0-based, in the sentence's word list)
length         number of words the target spans (multi-word instances: > 1)
surface        the target's words joined by spaces
lemma          the target's lemma (WSD lemma with ``_`` for multi-word lemmas; STREUSLE lexical lemma)
pos            part of speech (WSD NOUN/VERB/ADJ/ADV; STREUSLE LEXCAT)
sense          primary sense label (first WordNet sense key; SNACS construal)
senses         every gold label of the target (SemCor has 656 instances with two keys)
=============  ==============================================================================================

Sentence table columns (:data:`SENTENCE_SCHEMA`): ``sentence_id, corpus, split, document, words`` (list of
strings). The words of a multi-word WSD element (``primary election``) are separate words, so ``position`` and
``length`` index whitespace-separated words, as a transformer tokenizer sees them.

Inputs that do not fit (a gold key without an instance, an instance without a key, a target span outside its
sentence) are counted in :attr:`Corpus.skipped` with the first place each happened, never silently dropped;
malformed files raise :class:`InputError` naming the file and line.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pyarrow as pa

SENTENCE_SCHEMA = pa.schema([
    ("sentence_id", pa.string()),
    ("corpus", pa.string()),
    ("split", pa.string()),
    ("document", pa.string()),
    ("words", pa.list_(pa.string())),
])

TARGET_SCHEMA = pa.schema([
    ("instance_id", pa.string()),
    ("corpus", pa.string()),
    ("split", pa.string()),
    ("document", pa.string()),
    ("sentence_id", pa.string()),
    ("position", pa.int32()),
    ("length", pa.int32()),
    ("surface", pa.string()),
    ("lemma", pa.string()),
    ("pos", pa.string()),
    ("sense", pa.string()),
    ("senses", pa.list_(pa.string())),
])


@dataclass
class Skips:
    """Counted skips: reason -> count, and the first place (``file:line`` or id) each reason happened."""

    counts: Counter = field(default_factory=Counter)
    first: dict = field(default_factory=dict)

    def add(self, reason: str, where: str, n: int = 1) -> None:
        self.counts[reason] += n
        self.first.setdefault(reason, where)

    def as_dict(self) -> dict:
        return {reason: {"count": n, "first": self.first[reason]} for reason, n in sorted(self.counts.items())}

    def summary(self) -> str:
        """One line, e.g. ``3 instance without gold key (first: d000.s001.t002)``; empty when nothing was skipped."""
        return "; ".join(f"{n} {reason} (first: {self.first[reason]})" for reason, n in sorted(self.counts.items()))


@dataclass
class Corpus:
    """A read corpus: its sentences once, its targets, and what was skipped while reading."""

    name: str
    sentences: pa.Table  # SENTENCE_SCHEMA
    targets: pa.Table    # TARGET_SCHEMA
    skipped: Skips = field(default_factory=Skips)

    @property
    def word_count(self) -> int:
        return sum(len(w) for w in self.sentences.column("words").to_pylist())


class ColumnBuilder:
    """Collects rows column by column (plain lists) and turns them into a table of a schema."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.columns: dict[str, list] = {name: [] for name in schema.names}
        self._keys: set = set()

    def is_new(self, key) -> bool:
        """Whether ``key`` (a sentence id) is new to this builder; remembers it. Readers refuse a repeated
        sentence id: targets are looked up by it, and would be embedded in the wrong sentence."""
        if key in self._keys:
            return False
        self._keys.add(key)
        return True

    def add(self, **row) -> None:
        for name, values in self.columns.items():
            values.append(row[name])

    def __len__(self) -> int:
        return len(self.columns[self.schema.names[0]])

    def table(self) -> pa.Table:
        return pa.table({name: pa.array(values, self.schema.field(name).type)
                         for name, values in self.columns.items()}, schema=self.schema)


def target_in_sentence(position: int, length: int, n_words: int) -> bool:
    """Whether a target span ``[position, position + length)`` lies inside a sentence of ``n_words`` words."""
    return length >= 1 and 0 <= position and position + length <= n_words
