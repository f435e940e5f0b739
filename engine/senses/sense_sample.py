"""What the model comparison encodes: a seeded sample of the database's sentences, stratified by document, and the
corpora cut to what the ranking reads.

The ranking of a query reads only the database's instances of the query's lemma (its candidates, which also
give ``l`` and ``r``), so :func:`ranking_needs` keeps the eligible queries and every database instance of their
lemmas, and the sentences that hold them: the rankings, cells and baselines are exactly those of the whole
corpora, at a fraction of the encoding (a sentence without a needed target is never run through a model).
Pure computation over :class:`~lexprobe.sources.datasets.corpus.Corpus` tables.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core.seeds import rng_for
from ..sources.datasets.corpus import Corpus
from .sense_cells import query_statistics


def _keep_sentences(corpus: Corpus, sentence_ids) -> Corpus:
    """The corpus with only these sentences and their targets (order kept)."""
    ids = pa.array(list(sentence_ids), pa.string())
    sentences = corpus.sentences.filter(pc.is_in(corpus.sentences.column("sentence_id"), value_set=ids))
    targets = corpus.targets.filter(pc.is_in(corpus.targets.column("sentence_id"), value_set=ids))
    return Corpus(corpus.name, sentences, targets, corpus.skipped)


def sample_sentences(corpus: Corpus, fraction: float, *, seed: int) -> Corpus:
    """A seeded sample of ``fraction`` of the sentences, stratified by document: each document gives
    ``round(fraction * its sentences)`` (at least one), drawn at random, so every text keeps its share and the
    sample's lemma frequencies are the whole corpus's scaled by ``fraction``. ``fraction >= 1``: the corpus."""
    if not 0 < fraction:
        raise ValueError(f"the sample fraction must be above 0, not {fraction}")
    if fraction >= 1:
        return corpus
    docs = np.asarray(corpus.sentences.column("document").to_pylist(), dtype=object)
    ids = np.asarray(corpus.sentences.column("sentence_id").to_pylist(), dtype=object)
    rng = rng_for(seed, "senses-sentence-sample", corpus.name)
    keep = []
    for doc in dict.fromkeys(docs.tolist()):
        rows = np.flatnonzero(docs == doc)
        take = max(1, int(round(fraction * len(rows))))
        keep.append(rows[rng.permutation(len(rows))[:take]])
    return _keep_sentences(corpus, ids[np.sort(np.concatenate(keep))])


def split_corpus(corpus: Corpus, splits) -> Corpus:
    """The targets and sentences of the named splits (STREUSLE's ``train``; ``dev`` and ``test``)."""
    rows = pc.is_in(corpus.sentences.column("split"), value_set=pa.array(list(splits), pa.string()))
    return _keep_sentences(corpus, corpus.sentences.filter(rows).column("sentence_id").to_pylist())


def ranking_needs(database: Corpus, queries: Corpus, *, min_sense_count: int, match_pos: bool = True
                  ) -> tuple[Corpus, Corpus, dict]:
    """(database, queries, counts) cut to what the ranking reads: the queries whose sense occurs
    ``min_sense_count``+ times among the database's instances of their lemma (and POS), every database instance of
    those lemmas, and the sentences holding them. Targets without a sense are never candidates or queries."""
    d_targets = database.targets.filter(database.targets.column("sense").is_valid())
    q_targets = queries.targets.filter(queries.targets.column("sense").is_valid())
    _, count = query_statistics(d_targets, q_targets, match_pos=match_pos)
    q_targets = q_targets.filter(pa.array(count >= max(1, min_sense_count)))

    def keys(table: pa.Table) -> list:
        lemma = table.column("lemma").to_pylist()
        return list(zip(lemma, table.column("pos").to_pylist())) if match_pos else lemma

    wanted = set(keys(q_targets))
    d_targets = d_targets.filter(pa.array([k in wanted for k in keys(d_targets)], pa.bool_()))
    cut_d = _keep_sentences(Corpus(database.name, database.sentences, d_targets, database.skipped),
                            dict.fromkeys(d_targets.column("sentence_id").to_pylist()))
    cut_q = _keep_sentences(Corpus(queries.name, queries.sentences, q_targets, queries.skipped),
                            dict.fromkeys(q_targets.column("sentence_id").to_pylist()))
    counts = {"database sentences": database.sentences.num_rows, "database sentences encoded":
              cut_d.sentences.num_rows, "database instances": database.targets.num_rows,
              "database instances encoded": cut_d.targets.num_rows, "query instances": queries.targets.num_rows,
              "eligible queries": cut_q.targets.num_rows, "query sentences encoded": cut_q.sentences.num_rows}
    return cut_d, cut_q, counts


def causal_prefixes(corpus: Corpus) -> Corpus:
    """Each sentence cut after its last target's last word. A causal LM's hidden state of a word depends only on
    the words before it, so the targets' vectors are the same (a sentence longer than the model's limit aside: its
    windows may then differ) and the words after the last target are never run through the model."""
    ends: dict[str, int] = {}
    for s, p, n in zip(corpus.targets.column("sentence_id").to_pylist(), corpus.targets.column("position").to_pylist(),
                       corpus.targets.column("length").to_pylist()):
        ends[s] = max(ends.get(s, 0), p + n)
    words = [w if s not in ends else w[:ends[s]] for s, w in zip(corpus.sentences.column("sentence_id").to_pylist(),
                                                                  corpus.sentences.column("words").to_pylist())]
    column = corpus.sentences.schema.get_field_index("words")
    sentences = corpus.sentences.set_column(column, "words", pa.array(words, corpus.sentences.schema.field("words").type))
    return Corpus(corpus.name, sentences, corpus.targets, corpus.skipped)
