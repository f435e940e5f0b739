"""WNLaMPro entries (Schick & Schütze, "Rare words", section 5) and their readers: the JSON Lines file that
``lexprobe data build-wnlampro`` writes and the authors' released ``WNLaMPro.txt``.

An entry is a triple (keyword, relation, targets) with the keyword's frequency bucket: rare < 10, medium 10..99,
frequent >= 100 occurrences in the Westbury Wikipedia corpus (WWC, ~1e9 tokens). Built datasets use wordfreq's
Zipf value instead (Zipf = log10 of the count per 1e9 words, so the edges are Zipf 1 and 2); the authors' file
carries the WWC count. The builder is :mod:`lexprobe.rare_words.wnlampro_build`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ...core.errors import InputError, LexprobeError
from .json_lines import json_objects
from .word_lines import bounded_lines

RELATIONS = ("antonym", "hypernym", "cohyponym", "corruption")
BUCKETS = ("rare", "medium", "frequent")
RARE_BELOW, FREQUENT_FROM = 1.0, 2.0  # Zipf thresholds: WWC counts 10 and 100 per ~1e9 tokens
DATASET_FILE = "wnlampro.jsonl"


@dataclass
class Entry:
    """One WNLaMPro triple with its keyword's part of speech, Zipf frequency, estimated count and bucket."""

    id: int
    split: str
    keyword: str
    relation: str
    targets: list[str]
    pos: str = ""
    zipf: float = 0.0
    count: int = 0
    bucket: str = field(default="")

    def __post_init__(self):
        if not self.bucket:
            self.bucket = bucket_of(self.zipf)


def bucket_of(zipf: float) -> str:
    """rare (Zipf < 1, absent words included), medium (1 <= Zipf < 2) or frequent (Zipf >= 2)."""
    return "rare" if zipf < RARE_BELOW else "medium" if zipf < FREQUENT_FROM else "frequent"


def bucket_of_count(count: int) -> str:
    """The paper's buckets from a WWC count: < 10 rare, 10..99 medium, >= 100 frequent."""
    return "rare" if count < 10 else "medium" if count < 100 else "frequent"


@lru_cache(maxsize=None)
def zipf(word: str) -> float:
    """wordfreq's English Zipf frequency (0.0 for unknown words)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


def estimated_count(z: float) -> int:
    """The count a ~1e9-token corpus would give a word of Zipf ``z`` (0 for unknown words)."""
    return int(round(10 ** z)) if z > 0 else 0


# --------------------------------------------------------------------------------------------------------- read

_ANNOTATED_RE = re.compile(r"(?P<word>\S+) \((?P<pos>[^,()]*),(?P<zipf>[^,()]*),(?P<count>[^,()]*)\)")


def read_authors_txt(path: str | Path) -> list[Entry]:
    """The released ``WNLaMPro.txt``: ``ID<TAB>dev|test<TAB>key (pos,zipf,count)<TAB>relation<TAB>targets...``,
    each target annotated like the key. Buckets come from the WWC count, as in the paper."""
    path = Path(path)
    entries = []
    for n, line in bounded_lines(path):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) < 5:
            raise InputError(path, f"expected ID, dev|test, key, relation and targets separated by tabs, "
                                   f"found {len(cols)} column(s)", n)
        ident, split, key, relation, *targets = cols
        if split not in ("dev", "test"):
            raise InputError(path, f"set type must be 'dev' or 'test', not {split!r}", n)
        if relation not in RELATIONS:
            raise InputError(path, f"unknown relation {relation!r} (known: {', '.join(RELATIONS)})", n)
        parsed = []
        for text in [key] + targets:
            m = _ANNOTATED_RE.fullmatch(text.strip())
            if not m:
                raise InputError(path, f"{text!r} is not an annotated word 'WORD (POS,ZIPF,COUNT)'", n)
            try:
                parsed.append((m["word"], m["pos"], float(m["zipf"]), int(float(m["count"]))))
            except ValueError:
                raise InputError(path, f"{text!r}: ZIPF and COUNT must be numbers", n) from None
        try:
            ident_int = int(ident)
        except ValueError:
            raise InputError(path, f"ID {ident!r} is not an integer", n) from None
        word, pos, z, count = parsed[0]
        entries.append(Entry(ident_int, split, word, relation, [p[0] for p in parsed[1:]], pos, z, count,
                             bucket_of_count(count)))
    return entries


def read_jsonl(path: str | Path) -> list[Entry]:
    """Entries written by ``write_dataset`` (one JSON object a line)."""
    path = Path(path)
    entries = []
    for n, row in json_objects(path):
        try:
            entry = Entry(**row)
        except TypeError as exc:
            raise InputError(path, f"not a WNLaMPro entry: {str(exc).splitlines()[0]}", n) from None
        if entry.relation not in RELATIONS:
            raise InputError(path, f"unknown relation {entry.relation!r} (known: {', '.join(RELATIONS)})", n)
        entries.append(entry)
    return entries


def read_dataset(path: str | Path) -> list[Entry]:
    """A built dataset folder, its ``wnlampro.jsonl``, or the authors' ``WNLaMPro.txt``."""
    path = Path(path)
    if path.is_dir():
        path = path / DATASET_FILE
    if not path.is_file():
        raise LexprobeError(f"{path}: no such WNLaMPro file (build one with 'lexprobe data build-wnlampro')")
    try:
        return read_jsonl(path) if path.suffix == ".jsonl" else read_authors_txt(path)
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
