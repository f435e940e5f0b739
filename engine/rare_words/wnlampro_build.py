"""WNLaMPro (Schick & Schütze, "Rare words", section 5) built from WordNet 3.0: the entries and Table 4 (the run
layer writes them: :func:`lexprobe.rare_words.run_rare_words.write_dataset`; :mod:`lexprobe.sources.datasets.wnlampro` reads
them back).

An entry is a triple (keyword, relation, targets). Rules, following the paper:

- V: WordNet lemma names, lowercased, matching ``[a-z.-]+``; a word's senses are looked up case-insensitively
  (the paper lowercases corpus words and looks them up in WordNet, so ``greece``, ``york``, ``tv`` are keywords).
  The paper also required a count >= 1 in the Westbury Wikipedia corpus (WWC, ~1e9 tokens), which is not
  available; wordfreq's Zipf value stands in for its counts (Zipf = log10 of the count per 1e9 words).
  wordfreq's English list stops at Zipf ~1.0 (a WWC count of ~10), i.e. exactly at the rare threshold, so words
  it does not know are kept and count as rare (Zipf 0): requiring a wordfreq value would leave the rare subset
  empty.
- Buckets by the keyword's Zipf: rare < 1.0 (count < 10), medium 1.0..2.0 (10..99), frequent >= 2.0 (>= 100).
- T: the model's whole-word vocabulary tokens (``lexprobe.sources.models.whole_word_tokens``); targets are
  restricted to T. For a causal model T holds the words that are one token in the form the patterns' blanks give
  them (with the leading space after a space, bare after a quote:
  ``lexprobe.rare_words.language_models.target_words``). An entry exists only with its targets in T, so Table 4
  counts entries after this filter.
- One part of speech per word: that of its most frequent sense over all parts of speech, by WordNet's sense
  counts (``lemma.count()``; ties, as for untagged words, in WordNet's order: nouns first). The paper's "for
  each adjective w ... its most frequent WordNet sense" and "for each noun w"; the authors' file tags each word
  with one part of speech (noun or adjective). Table 2's ``general -> specific`` needs it: general's first synset
  is the noun (40 tags), its most frequent sense the adjective (87). Words whose most frequent sense is a verb or
  adverb (``run``, ``show``) are keywords of no relation.
- antonym: words whose most frequent sense is an adjective; the antonyms of the keyword's lemma in that sense.
  (Table 2's ``local -> global`` is not in WordNet 3.0: local's antonyms are national, express and general.)
- hypernym: nouns; hypernyms (and instance hypernyms) of the two most frequent noun senses at path distance <= 3
  with a minimum depth >= 6 (NLTK's ``min_depth()``, the root at 0: the paper's Table 2 examples need it, e.g.
  game for basketball and product for book sit at depth 6); kept when >= 3 targets are in T; the 20 most frequent
  targets (by Zipf) kept. ``min_depth=7`` comes near Table 4's counts (hypernym 0.92x, cohyponym 1.01x) but
  loses those examples (see :data:`lexprobe.rare_words.wnlampro_claims.TABLE4_CAUSES`).
- cohyponym (the paper's cohyponym+): hypernyms as above at distance <= 2, the union of their hyponyms (and
  instance hyponyms) within path distance 4 of each hypernym (the paper's text), minus the keyword; kept when
  >= 10 targets in T; the 50 most frequent kept. Table 2's ``harmonium -> sax`` needs the distance from the
  hypernym: sax is 4 below wind_instrument, which is 2 above harmonium.
- corruption: frequent (Zipf >= 2) alphabetic words of T of length >= 4, sampled with a seed; each gets one random
  insertion (after position 0..n), deletion or swap of adjacent characters. A corruption that is itself a known
  word (wordfreq or T) is drawn again, so every corrupted keyword is a misspelling.
- split: per relation, a seeded 10% dev / 90% test.

Keywords never appear among their own targets. Ties in "most frequent" break alphabetically.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable, Sequence

import numpy as np

from ..core.errors import LexprobeError
from ..core.progress import bar
from ..core.seeds import rng_for
from ..sources.datasets.wnlampro import BUCKETS, FREQUENT_FROM, RELATIONS, Entry, estimated_count, zipf

WORD_RE = re.compile(r"[a-z.-]+")
DEV_FRACTION = 0.1


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


def _down(synset, distance: int) -> set:
    """Hyponyms and instance hyponyms of ``synset`` at path distance 1..``distance``."""
    return _walk(synset, distance, lambda s: s.hyponyms() + s.instance_hyponyms())


def senses(wn, word: str, pos: str) -> list:
    """The synsets of ``word`` as ``pos`` holding a lemma named ``word`` in any case (``greece`` finds Greece),
    most frequent first (WordNet's order)."""
    return [lemma.synset() for lemma in wn.lemmas(word, pos) if lemma.name().lower() == word]


def _pos(lemma) -> str:
    """``n``, ``v``, ``a`` (adjective satellites included) or ``r``."""
    pos = lemma.synset().pos()
    return "a" if pos == "s" else pos


@lru_cache(maxsize=None)
def most_frequent_sense(wn, word: str):
    """``word``'s lemma (any case) in its most frequent sense over all parts of speech: the highest WordNet sense
    count (``lemma.count()``, tags in the semantic concordance), ties (untagged words) in WordNet's order (nouns,
    verbs, adjectives, adverbs; within one, by sense number). ``general`` -> general.a.01 (87 tags; its first
    synset is the noun, 40). None for a word WordNet lacks."""
    lemmas = [lemma for lemma in wn.lemmas(word) if lemma.name().lower() == word]
    if len(lemmas) < 2:
        return lemmas[0] if lemmas else None
    return max(lemmas, key=lambda lemma: lemma.count())


def part_of_speech(wn, word: str) -> str | None:
    """The part of speech of ``word``'s most frequent sense: ``n``, ``v``, ``a`` (satellites included) or ``r``;
    one per word, as the authors' file annotates each word with one (noun or adjective)."""
    lemma = most_frequent_sense(wn, word)
    return None if lemma is None else _pos(lemma)


def antonym_targets(wn, word: str) -> set[str]:
    """Antonyms of ``word``'s lemma in its most frequent sense, when that sense is an adjective; none otherwise
    (``run``: its most frequent sense is a verb)."""
    lemma = most_frequent_sense(wn, word)
    if lemma is None or lemma.synset().pos() not in ("a", "s"):
        return set()
    return {a.name() for a in lemma.antonyms()}


MIN_DEPTH = 6  # the paper's minimum depth of hypernyms (NLTK's min_depth: the root is at 0)
COHYPONYM_DEPTH = 4  # the paper's hyponyms "for each hypernym in H with a maximum path distance of 4"


def hypernym_synsets(wn, word: str, distance: int, min_depth: int = MIN_DEPTH, n_senses: int = 2) -> set:
    """Hypernyms (and instance hypernyms) of the ``n_senses`` most frequent noun senses within path distance
    ``distance``, of minimum depth >= ``min_depth``."""
    up = lambda s: s.hypernyms() + s.instance_hypernyms()  # noqa: E731
    return {h for s in senses(wn, word, "n")[:n_senses] for h in _walk(s, distance, up) if h.min_depth() >= min_depth}


def lemma_words(synsets: Iterable) -> set[str]:
    return {name for s in synsets for name in s.lemma_names()}


class Builder:
    """Builds WNLaMPro entries from a WordNet reader, a target vocabulary T and a frequency function."""

    def __init__(self, wn, vocab: Iterable[str], *, freq: Callable[[str], float] = zipf, seed: int = 0,
                 min_depth: int = MIN_DEPTH):
        self.wn, self.T, self.freq, self.seed, self.min_depth = wn, set(vocab), freq, seed, min_depth
        self._down_words: dict = {}

    def keywords(self, pos: str) -> list[str]:
        """The words of V whose most frequent sense is ``pos`` (``n`` or ``a``): lowercased lemma names matching
        ``[a-z.-]+`` (only words listed under another part of speech too need their sense counts)."""
        names = lambda p: {w.lower() for w in self.wn.all_lemma_names(p) if WORD_RE.fullmatch(w.lower())}  # noqa: E731
        words, others = names(pos), set().union(*(names(p) for p in "nvar" if p != pos))
        return sorted(w for w in words if w not in others or part_of_speech(self.wn, w) == pos)

    def antonyms(self, word: str) -> list[str] | None:
        targets = (antonym_targets(self.wn, word) & self.T) - {word}
        return sorted(targets) if targets else None

    def hypernyms(self, word: str) -> list[str] | None:
        targets = (lemma_words(hypernym_synsets(self.wn, word, 3, self.min_depth)) & self.T) - {word}
        return most_frequent(targets, 20, self.freq) if len(targets) >= 3 else None

    def _hyponym_words(self, synset, depth: int) -> frozenset:
        words = self._down_words.get((synset, depth))
        if words is None:
            words = self._down_words[(synset, depth)] = frozenset(lemma_words(_down(synset, depth)) & self.T)
        return words

    def cohyponyms(self, word: str) -> list[str] | None:
        hypernyms = hypernym_synsets(self.wn, word, 2, self.min_depth)
        targets = set().union(*(self._hyponym_words(h, COHYPONYM_DEPTH) for h in hypernyms)) - {word}
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
        rng = rng_for(self.seed, "wnlampro-corruptions")
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
    """Entries from (keyword, relation, pos, targets): ids in order, 10% dev per relation chosen with ``seed`` (a
    stream per relation for this purpose alone, "wnlampro-split": a probe sample drawn with the same seed is
    independent of the split)."""
    by_relation: dict[str, list[int]] = {}
    for i, (_, relation, _, _) in enumerate(raw):
        by_relation.setdefault(relation, []).append(i)
    dev = set()
    for relation in sorted(by_relation):
        ids = by_relation[relation]
        order = rng_for(seed, "wnlampro-split", relation).permutation(len(ids))
        dev.update(np.asarray(ids)[order[:int(round(DEV_FRACTION * len(ids)))]].tolist())
    out = []
    for i, (word, relation, pos, targets) in enumerate(raw):
        z = round(freq(word), 2)
        out.append(Entry(i, "dev" if i in dev else "test", word, relation, list(targets), pos, z, estimated_count(z)))
    return out


def build_wnlampro(model: str, *, seed: int = 0, n_corruptions: int = 2880, home=None,
                   relations: Sequence[str] = RELATIONS, min_depth: int = MIN_DEPTH) -> list[Entry]:
    """WNLaMPro for ``model``'s vocabulary (T: :func:`lexprobe.rare_words.language_models.target_words`) from
    WordNet 3.0."""
    from ..sources.wordnet import load_wordnet
    from .language_models import target_words

    words = target_words(model)
    return Builder(load_wordnet(home), words, seed=seed, min_depth=min_depth).build(n_corruptions=n_corruptions,
                                                                                    relations=relations)


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


# The paper's Table 4: entries (rare, medium, frequent) and mean targets per bucket (None: an empty bucket).
PAPER_TABLE4 = {
    "antonym": ((41, 59, 266), (1.0, 1.0, 1.0)),
    "hypernym": ((1191, 1785, 4750), (4.0, 3.9, 4.2)),
    "cohyponym": ((1960, 2740, 6126), (26.0, 26.0, 25.0)),
    "corruption": ((2880, 0, 0), (1.0, None, None)),
}


def table4_against_paper(entries: Sequence[Entry]) -> list[dict]:
    """Per relation and bucket (and ``all``): the rebuilt entries and mean targets beside the paper's Table 4,
    with ratios (rebuilt / paper). The paper's ``all`` mean targets weight its bucket means by bucket size."""
    rows = []
    for relation, (sizes, means) in PAPER_TABLE4.items():
        sel = [e for e in entries if e.relation == relation]
        if not sel:
            continue
        paper_all = sum(n * m for n, m in zip(sizes, means) if m is not None) / sum(sizes)
        for bucket, n_paper, m_paper in list(zip(BUCKETS, sizes, means)) + [("all", sum(sizes), paper_all)]:
            lens = [len(e.targets) for e in sel if bucket == "all" or e.bucket == bucket]
            mean = float(np.mean(lens)) if lens else float("nan")
            rows.append({"relation": relation, "bucket": bucket, "entries": len(lens), "paper_entries": n_paper,
                         "entries_ratio": len(lens) / n_paper if n_paper else float("nan"),
                         "mean_targets": mean, "paper_mean_targets": m_paper if m_paper is not None else float("nan"),
                         "targets_ratio": mean / m_paper if m_paper else float("nan")})
    return rows

