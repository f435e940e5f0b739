"""What the model comparison encodes: the seeded sample stratified by document, the cut to what the ranking
reads (by hand, and the same rankings as the whole corpora), and STREUSLE's split on the real files."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from lexprobe.senses.sense_ranking import Instances, rank_senses
from lexprobe.senses.sense_sample import causal_prefixes, ranking_needs, sample_sentences, split_corpus
from lexprobe.sources.datasets.corpus import SENTENCE_SCHEMA, TARGET_SCHEMA, Corpus


def _corpus(name: str, rows: list[tuple[str, str, str, str, str]], docs: dict[str, str] | None = None) -> Corpus:
    """rows: (instance, sentence, lemma, pos, sense); one word per target."""
    sentences = list(dict.fromkeys(r[1] for r in rows)) + [s for s in (docs or {}) if s not in {r[1] for r in rows}]
    docs = docs or {}
    sent = pa.Table.from_pylist([{"sentence_id": s, "corpus": name, "split": "x", "document": docs.get(s, "d0"),
                                  "words": ["w"] * 3} for s in sentences], schema=pa.schema(SENTENCE_SCHEMA))
    targets = pa.Table.from_pylist([{"instance_id": i, "corpus": name, "split": "x", "document": docs.get(s, "d0"),
                                     "sentence_id": s, "position": 0, "length": 1, "surface": lemma, "lemma": lemma,
                                     "pos": pos, "sense": sense, "senses": [sense]}
                                    for i, s, lemma, pos, sense in rows], schema=pa.schema(TARGET_SCHEMA))
    return Corpus(name, sent, targets)


def test_sample_is_stratified_by_document_and_seeded():
    docs = {f"s{i}": ("a" if i < 10 else "b") for i in range(13)}  # a: 10 sentences, b: 3
    corpus = _corpus("c", [], docs)
    sample = sample_sentences(corpus, 0.3, seed=0)
    kept = sample.sentences.column("sentence_id").to_pylist()
    assert sum(docs[s] == "a" for s in kept) == 3 and sum(docs[s] == "b" for s in kept) == 1  # round(0.9) = 1
    assert kept == sorted(kept, key=lambda s: int(s[1:]))  # corpus order kept
    assert sample_sentences(corpus, 0.3, seed=0).sentences.equals(sample.sentences)
    others = {tuple(sample_sentences(corpus, 0.3, seed=s).sentences.column("sentence_id").to_pylist())
              for s in range(1, 6)}
    assert len(others) > 1
    assert sample_sentences(corpus, 1.0, seed=0) is corpus
    with pytest.raises(ValueError):
        sample_sentences(corpus, 0, seed=0)


def test_ranking_needs_by_hand():
    # D: bank%1 x5 and bank%2 x1 (NOUN), bank VERB x5, river x5 (no query), one untagged instance
    d_rows = ([(f"b{i}", f"s{i}", "bank", "NOUN", "bank%1") for i in range(5)]
              + [("b5", "s5", "bank", "NOUN", "bank%2")]
              + [(f"v{i}", f"t{i}", "bank", "VERB", "bank%3") for i in range(5)]
              + [(f"r{i}", f"u{i}", "river", "NOUN", "river%1") for i in range(5)] + [("x", "s0", "bank", "NOUN", None)])
    q_rows = [("q0", "Q0", "bank", "NOUN", "bank%1"), ("q1", "Q1", "bank", "NOUN", "bank%2"),
              ("q2", "Q1", "lake", "NOUN", "lake%1")]
    d, q, counts = ranking_needs(_corpus("d", d_rows), _corpus("q", q_rows), min_sense_count=5)
    assert q.targets.column("instance_id").to_pylist() == ["q0"]  # bank%2 is in D once, lake never
    assert sorted(d.targets.column("instance_id").to_pylist()) == [f"b{i}" for i in range(6)]  # NOUN bank only
    assert sorted(d.sentences.column("sentence_id").to_pylist()) == [f"s{i}" for i in range(6)]
    assert q.sentences.column("sentence_id").to_pylist() == ["Q0"]
    assert counts["eligible queries"] == 1 and counts["database instances encoded"] == 6
    _, q_any, _ = ranking_needs(_corpus("d", d_rows), _corpus("q", q_rows), min_sense_count=5, match_pos=False)
    assert q_any.targets.column("instance_id").to_pylist() == ["q0"]


def test_the_cut_ranks_exactly_as_the_whole_corpora():
    rng = np.random.default_rng(0)
    lemmas = ["bank", "bank", "run", "river"]
    d_rows = [(f"d{i}", f"s{i}", lemmas[i % 4], "NOUN", f"{lemmas[i % 4]}%{rng.integers(2)}") for i in range(60)]
    q_rows = [(f"q{i}", f"Q{i}", lemmas[i % 4], "NOUN", f"{lemmas[i % 4]}%{rng.integers(2)}") for i in range(12)]
    whole_d, whole_q = _corpus("d", d_rows), _corpus("q", q_rows)
    d, q, _ = ranking_needs(whole_d, whole_q, min_sense_count=5)
    vectors = {i: v for i, v in zip([r[0] for r in d_rows + q_rows],
                                    rng.normal(size=(72, 4)).astype(np.float32))}

    def instances(corpus):
        ids = corpus.targets.column("instance_id").to_pylist()
        v = np.stack([vectors[i] for i in ids])
        return Instances(corpus.targets, v / np.linalg.norm(v, axis=1, keepdims=True))

    whole, _ = rank_senses(instances(whole_d), instances(whole_q), k_max=5)
    cut, _ = rank_senses(instances(d), instances(q), k_max=5)
    for column in ("instance_id", "lemma_freq", "sense_ratio", "cell", "ap", "random_ap"):
        assert cut.column(column).to_pylist() == whole.column(column).to_pylist()


def test_streusle_split_on_the_real_files(shared_data):
    from lexprobe.sources.datasets.corpora import read_corpus

    root = shared_data / "streusle" / "v4.7.1"
    whole = read_corpus(f"streusle:{root}")
    train, held = split_corpus(whole, ["train"]), split_corpus(whole, ["dev", "test"])
    ids = {name: {line.rpartition("=")[2].strip() for line in
                  (root / "releaseutil" / f"ud_{name}_sent_ids.txt").read_text().splitlines() if line.strip()}
           for name in ("train", "dev", "test")}
    assert set(train.targets.column("split").to_pylist()) == {"train"}
    assert set(held.targets.column("split").to_pylist()) == {"dev", "test"}
    assert len(held.targets) == 462 + 485  # the SNACS targets of dev and test
    assert set(train.sentences.column("sentence_id").to_pylist()) <= ids["train"]
    assert set(held.sentences.column("sentence_id").to_pylist()) <= ids["dev"] | ids["test"]
    assert train.sentences.num_rows + held.sentences.num_rows == whole.sentences.num_rows
    d, q, counts = ranking_needs(train, held, min_sense_count=5)
    assert 0 < counts["eligible queries"] < len(held.targets)
    d_keys = set(zip(d.targets.column("lemma").to_pylist(), d.targets.column("pos").to_pylist()))
    assert set(zip(q.targets.column("lemma").to_pylist(), q.targets.column("pos").to_pylist())) <= d_keys


def test_causal_prefixes_end_at_each_sentences_last_target():
    corpus = _corpus("c", [("a", "s0", "x", "N", "x%1"), ("b", "s1", "y", "N", "y%1")], {"s2": "d0"})
    words = [["w0", "w1", "w2", "w3"], ["v0", "v1", "v2"], ["u0", "u1"]]
    sentences = corpus.sentences.set_column(4, "words", pa.array(words, corpus.sentences.schema.field("words").type))
    targets = corpus.targets.set_column(5, "position", pa.array([1, 0], pa.int32())).set_column(
        6, "length", pa.array([2, 1], pa.int32()))
    cut = causal_prefixes(Corpus("c", sentences, targets))
    assert cut.sentences.column("words").to_pylist() == [["w0", "w1", "w2"], ["v0"], ["u0", "u1"]]
    assert cut.targets.equals(targets)
