"""WNLaMPro (Schick & Schütze, "Rare words", section 5): build it from WordNet 3.0, write it, read it back, and
read the authors' released ``WNLaMPro.txt``.

An entry is a triple (keyword, relation, targets). Rules, following the paper:

- V: WordNet lemma names matching ``[a-z.-]+``. The paper required a count >= 1 in the Westbury Wikipedia corpus
  (WWC, ~1e9 tokens); wordfreq's Zipf value stands in (Zipf = log10 of the count per 1e9 words). wordfreq's English
  list stops at Zipf ~1.0 (a WWC count of ~10), i.e. exactly at the rare threshold, so words it does not know are
  kept and count as rare (Zipf 0): requiring a wordfreq value would leave the rare subset empty.
- Buckets by the keyword's Zipf: rare < 1.0 (count < 10), medium 1.0..2.0 (10..99), frequent >= 2.0 (>= 100).
- T: the model's whole-word vocabulary tokens (``lexprobe.sources.vector_files.whole_word_tokens``); targets are restricted to T.
- antonym: adjectives; the antonyms of the keyword's lemma in its most frequent sense (the first synset).
- hypernym: nouns; hypernyms (and instance hypernyms) of the two most frequent senses at path distance <= 3 with a
  minimum depth >= 6; kept when >= 3 targets are in T; the 20 most frequent targets (by Zipf) kept.
- cohyponym (the paper's cohyponym+): hypernyms as above at distance <= 2, the union of their hyponyms (and
  instance hyponyms) at distance <= 4, minus the keyword; kept when >= 10 targets in T; the 50 most frequent kept.
- corruption: frequent (Zipf >= 2) alphabetic words of T of length >= 4, sampled with a seed; each gets one random
  insertion (after position 0..n), deletion or swap of adjacent characters. A corruption that is itself a known
  word (wordfreq or T) is drawn again, so every corrupted keyword is a misspelling.
- split: per relation, a seeded 10% dev / 90% test.

Keywords never appear among their own targets. Ties in "most frequent" break alphabetically.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from ...core.errors import InputError, LexprobeError
from ...analyses.patterns import RELATIONS
from ...core.progress import bar
from .json_lines import json_objects

WORD_RE = re.compile(r"[a-z.-]+")
BUCKETS = ("rare", "medium", "frequent")
RARE_BELOW, FREQUENT_FROM = 1.0, 2.0  # Zipf thresholds: WWC counts 10 and 100 per ~1e9 tokens
DEV_FRACTION = 0.1
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


def most_frequent(words: Iterable[str], n: int, freq: Callable[[str], float] = zipf) -> list[str]:
    """The ``n`` most frequent ``words`` (by Zipf, ties alphabetically)."""
    return sorted(set(words), key=lambda w: (-freq(w), w))[:n]


# ---------------------------------------------------------------------------------------------------- WordNet walks

def _walk(synset, distance: int, step: Callable) -> set:
    """The synsets ``step`` reaches from ``synset`` at path distance 1..``distance``."""
    found, frontier = set(), [synset]
    for _ in range(distance):
        frontier = [h for s in frontier for h in step(s) if h not in found]
        found.update(frontier)
    return found


def _up(synset, distance: int) -> set:
    """Hypernyms and instance hypernyms of ``synset`` at path distance 1..``distance``."""
    return _walk(synset, distance, lambda s: s.hypernyms() + s.instance_hypernyms())


def _down(synset, distance: int) -> set:
    """Hyponyms and instance hyponyms of ``synset`` at path distance 1..``distance``."""
    return _walk(synset, distance, lambda s: s.hyponyms() + s.instance_hyponyms())


def senses(wn, word: str, pos: str) -> list:
    """The synsets of ``word`` as ``pos`` holding a lemma named ``word``, most frequent first (WordNet's order)."""
    return [lemma.synset() for lemma in wn.lemmas(word, pos) if lemma.name() == word]


def antonym_targets(wn, word: str) -> set[str]:
    """Antonyms of ``word``'s lemma in its most frequent adjective sense."""
    lemmas = [lemma for lemma in wn.lemmas(word, "a") if lemma.name() == word]
    return {a.name() for a in lemmas[0].antonyms()} if lemmas else set()


def hypernym_synsets(wn, word: str, distance: int, min_depth: int = 6, n_senses: int = 2) -> set:
    """Hypernyms of the ``n_senses`` most frequent noun senses within ``distance``, of minimum depth >= ``min_depth``."""
    found = set()
    for s in senses(wn, word, "n")[:n_senses]:
        found |= {h for h in _up(s, distance) if h.min_depth() >= min_depth}
    return found


def lemma_words(synsets: Iterable) -> set[str]:
    return {name for s in synsets for name in s.lemma_names()}


class Builder:
    """Builds WNLaMPro entries from a WordNet reader, a target vocabulary T and a frequency function."""

    def __init__(self, wn, vocab: Iterable[str], *, freq: Callable[[str], float] = zipf, seed: int = 0):
        self.wn, self.T, self.freq, self.seed = wn, set(vocab), freq, seed
        self._down_words: dict = {}

    def keywords(self, pos: str) -> list[str]:
        return sorted(w for w in self.wn.all_lemma_names(pos) if WORD_RE.fullmatch(w))

    def antonyms(self, word: str) -> list[str] | None:
        targets = (antonym_targets(self.wn, word) & self.T) - {word}
        return sorted(targets) if targets else None

    def hypernyms(self, word: str) -> list[str] | None:
        targets = (lemma_words(hypernym_synsets(self.wn, word, 3)) & self.T) - {word}
        return most_frequent(targets, 20, self.freq) if len(targets) >= 3 else None

    def _hyponym_words(self, synset) -> frozenset:
        words = self._down_words.get(synset)
        if words is None:
            words = self._down_words[synset] = frozenset(lemma_words(_down(synset, 4)) & self.T)
        return words

    def cohyponyms(self, word: str) -> list[str] | None:
        targets = set().union(*(self._hyponym_words(h) for h in hypernym_synsets(self.wn, word, 2))) - {word}
        return most_frequent(targets, 50, self.freq) if len(targets) >= 10 else None

    def corrupt(self, word: str, rng: np.random.Generator) -> str:
        """One random insertion, deletion or adjacent swap (the paper's three corruptions)."""
        n = len(word)
        kind = rng.integers(3)
        if kind == 0:
            i = int(rng.integers(n + 1))
            return word[:i] + chr(ord("a") + int(rng.integers(26))) + word[i:]
        if kind == 1:
            i = int(rng.integers(n))
            return word[:i] + word[i + 1:]
        i = int(rng.integers(n - 1))
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]

    def corruptions(self, n: int) -> list[tuple[str, str]]:
        """(corrupted, original) pairs for ``n`` frequent words of V ∩ T, drawn with the builder's seed."""
        pool = sorted(w for w in self.T if re.fullmatch(r"[a-z]{4,}", w) and self.freq(w) >= FREQUENT_FROM)
        rng = np.random.default_rng(self.seed)
        chosen = rng.permutation(len(pool))[:n]
        pairs, seen = [], set()
        for i in sorted(chosen):
            word = pool[i]
            for _ in range(20):
                bad = self.corrupt(word, rng)
                if bad != word and bad not in self.T and bad not in seen and self.freq(bad) == 0:
                    pairs.append((bad, word))
                    seen.add(bad)
                    break
        return pairs

    def build(self, *, n_corruptions: int = 2880, relations: Sequence[str] = RELATIONS) -> list[Entry]:
        """All entries, ids in order (relation, keyword), with a seeded 10% dev split per relation."""
        raw: list[tuple[str, str, str, list[str]]] = []
        makers = {"antonym": ("a", self.antonyms), "hypernym": ("n", self.hypernyms),
                  "cohyponym": ("n", self.cohyponyms)}
        for relation in relations:
            if relation == "corruption":
                raw += [(bad, "corruption", "", [word]) for bad, word in sorted(self.corruptions(n_corruptions))]
                continue
            if relation not in makers:
                raise LexprobeError(f"unknown relation {relation!r} (known: {', '.join(RELATIONS)})")
            pos, make = makers[relation]
            for word in bar(self.keywords(pos), desc=relation, unit="word"):
                targets = make(word)
                if targets:
                    raw.append((word, relation, pos, targets))
        return assign_splits(raw, freq=self.freq, seed=self.seed)


def assign_splits(raw: Sequence[tuple[str, str, str, list[str]]], *, freq: Callable[[str], float] = zipf,
                  seed: int = 0) -> list[Entry]:
    """Entries from (keyword, relation, pos, targets): ids in order, 10% dev per relation chosen with ``seed``."""
    rng = np.random.default_rng(seed)
    by_relation: dict[str, list[int]] = {}
    for i, (_, relation, _, _) in enumerate(raw):
        by_relation.setdefault(relation, []).append(i)
    dev = set()
    for relation in sorted(by_relation):
        ids = by_relation[relation]
        dev.update(np.asarray(ids)[rng.permutation(len(ids))[:int(round(DEV_FRACTION * len(ids)))]].tolist())
    out = []
    for i, (word, relation, pos, targets) in enumerate(raw):
        z = round(freq(word), 2)
        out.append(Entry(i, "dev" if i in dev else "test", word, relation, list(targets), pos, z, estimated_count(z)))
    return out


def build_wnlampro(model: str, *, seed: int = 0, n_corruptions: int = 2880, home=None,
                   relations: Sequence[str] = RELATIONS) -> list[Entry]:
    """WNLaMPro for ``model``'s vocabulary (T = its whole-word tokens) from WordNet 3.0."""
    from ..models import load_tokenizer
    from ..vector_files import whole_word_tokens
    from ..wordnet import load_wordnet

    words, _ = whole_word_tokens(load_tokenizer(model))
    return Builder(load_wordnet(home), words, seed=seed).build(n_corruptions=n_corruptions, relations=relations)


# ----------------------------------------------------------------------------------------------------- statistics

def table4(entries: Sequence[Entry]) -> list[dict]:
    """Table 4: entries and mean number of targets per relation and bucket (plus dev/test sizes)."""
    rows = []
    for relation in [r for r in RELATIONS if any(e.relation == r for e in entries)]:
        sel = [e for e in entries if e.relation == relation]
        row: dict = {"relation": relation}
        for b in BUCKETS:
            row[f"n_{b[0]}"] = sum(e.bucket == b for e in sel)
        for b in BUCKETS:
            lens = [len(e.targets) for e in sel if e.bucket == b]
            row[f"targets_{b[0]}"] = float(np.mean(lens)) if lens else float("nan")
        row["dev"] = sum(e.split == "dev" for e in sel)
        row["test"] = sum(e.split == "test" for e in sel)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------------------------------- write / read

def _annotated(word: str, pos: str, z: float, count: int) -> str:
    return f"{word} ({pos or '-'},{z:g},{count})"


def write_dataset(entries: Sequence[Entry], out: str | Path) -> dict[str, Path]:
    """``<out>/wnlampro.jsonl``, ``wnlampro.parquet``, the authors' ``WNLaMPro.txt`` format and ``table4.md``."""
    import pyarrow as pa

    from ...runs.run_dir import RunDir

    run = RunDir(out)
    rows = [asdict(e) for e in entries]
    paths = {"jsonl": run.write_text(DATASET_FILE, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))}
    paths["parquet"] = run.write_table("wnlampro", pa.Table.from_pylist(rows), markdown=False)
    lines = []
    for e in entries:
        targets = [_annotated(t, e.pos, round(zipf(t), 2), estimated_count(round(zipf(t), 2))) for t in e.targets]
        lines.append("\t".join([str(e.id), e.split, _annotated(e.keyword, e.pos, e.zipf, e.count), e.relation]
                               + targets))
    paths["txt"] = run.write_text("WNLaMPro.txt", "\n".join(lines) + "\n")
    paths["table4"] = run.write_table("table4", table4(entries))
    return paths


_ANNOTATED_RE = re.compile(r"(?P<word>\S+) \((?P<pos>[^,()]*),(?P<zipf>[^,()]*),(?P<count>[^,()]*)\)")


def read_authors_txt(path: str | Path) -> list[Entry]:
    """The released ``WNLaMPro.txt``: ``ID<TAB>dev|test<TAB>key (pos,zipf,count)<TAB>relation<TAB>targets...``,
    each target annotated like the key. Buckets come from the WWC count, as in the paper."""
    path = Path(path)
    entries = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
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
