"""Several embeddings side by side, as vecto runs its benchmarks over a folder of embeddings into one table: per
embedding, analogy accuracy for each chosen method, the mean offset concentration (OCS) and pairing consistency
(PCS) over the dataset's relations, and word similarity (Spearman and Pearson) on each word-similarity set.

Each number is the one the single-embedding command gives: analogy accuracy is ``run analogy``'s ``accuracy``
(every question of every relation pooled, the usual test: a, a*, b excluded, or vecto's with ``exclude="vecto"``)
with its Wilson 95% interval; LRCos's is the mean over ``lrcos_seeds`` seeds of its random negatives with their t
interval (:func:`~lexprobe.analogies.set_solvers.lrcos_over_seeds`: one seed's accuracy is not a result);
OCS and PCS are ``query offsets --relation`` per relation (:func:`~lexprobe.analogies.offset_consistency.score_pairs`,
same shuffles and seed), averaged over the relations with at least 3 pairs in the embedding's vocabulary (no
interval: the relations are not a sample); word similarity is ``query similarity``
(:meth:`~lexprobe.kinds.words.WordIndex.evaluate_word_pairs`, gensim's rules) with its bootstrap intervals. The
vocabulary differs between embeddings, so every row says how many questions, relations or pairs it rests on.
:func:`compare_embeddings` returns the table; :func:`run_compare` writes it (``compare.parquet``/``.md``) and one
figure (``compare.png``: grouped bars per measure, one bar per embedding).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from ..core.conventions import Result
from ..core.errors import LexprobeError
from ..core.intervals import wilson
from ..core.progress import bar
from ..kinds.analogy_queries import DEFAULT_EPS, LRCOS_SEEDS, method_name
from ..runs import plots
from ..runs.run_dir import RunDir
from ..sources.datasets.analogy_sets import usable_relations
from .offset_consistency import score_pairs
from .set_solvers import answer_relations, lrcos_over_seeds

COLUMNS = ("embedding", "measure", "dataset", "value", "low", "high", "n")
MIN_OFFSET_PAIRS = 3  # OCS and PCS need three pairs (score_pairs)


@dataclass(repr=False)
class Comparison(Result):
    """One row per embedding and measure: ``embedding, measure, dataset, value, low, high, n`` (``low``/``high``
    the 95% interval where there is one, ``n`` the questions, relations or pairs scored); :meth:`to_arrow`."""

    table: pa.Table

    def to_arrow(self) -> pa.Table:
        return self.table


def embedding_rows(label: str, words, *, dataset: str, methods: Sequence[str] = ("add",),
                   similarity: Sequence[str | Path] = (), answers: str = "first", lowercase: bool = False,
                   restrict_vocab: int | None = None, eps: float = DEFAULT_EPS, n_shuffles: int = 50,
                   seed: int = 0, exclude: str = "inputs", lrcos_seeds: int = LRCOS_SEEDS) -> list[dict]:
    """The rows of one embedding (a words index) for :func:`compare_embeddings`."""
    row = lambda measure, data, value, n, low=None, high=None: {
        "embedding": label, "measure": measure, "dataset": data, "value": float(value), "low": low, "high": high,
        "n": int(n)}
    rows = []
    relations, _ = usable_relations(words, dataset, answers=answers, lowercase=lowercase)
    for method in map(method_name, methods):
        if method == "lrcos":
            spread = lrcos_over_seeds(words, relations, seeds=lrcos_seeds, seed=seed, restrict_vocab=restrict_vocab)
            rows.append(row(f"analogy lrcos ({lrcos_seeds} seeds)", dataset, spread.mean, spread.questions,
                            *spread.interval))
            continue
        table = answer_relations(words, relations, method=method, restrict_vocab=restrict_vocab, eps=eps,
                                 seed=seed, ranks=False, exclude=exclude).table
        correct = table.column("correct").to_numpy(zero_copy_only=False)
        rows.append(row(f"analogy {method}", dataset, correct.mean(), len(correct), *wilson(int(correct.sum()),
                                                                                             len(correct))))
    scores = [score_pairs(words, r.name, words.ids(r.starts), words.ids(r.ends), n_shuffles=n_shuffles, seed=seed)
              for r in relations if sum(s != e for s, e in zip(r.starts, r.ends)) >= MIN_OFFSET_PAIRS]
    if scores:
        rows.append(row("OCS", dataset, np.mean([s.ocs for s in scores]), len(scores)))
        rows.append(row("PCS", dataset, np.mean([s.pcs for s in scores]), len(scores)))
    for path in similarity:
        s = words.evaluate_word_pairs(path, seed=seed)
        rows.append(row("spearman", s.dataset, s.spearman[0], s.n_scored, *s.spearman_interval))
        rows.append(row("pearson", s.dataset, s.pearson[0], s.n_scored, *s.pearson_interval))
    return rows


def compare_embeddings(embeddings: Sequence[tuple[str, Callable[[], object]]], *, dataset: str,
                       methods: Sequence[str] = ("add",), similarity: Sequence[str | Path] = (), **options
                       ) -> Comparison:
    """Analogy accuracy (each of ``methods``), mean OCS and PCS over ``dataset``'s relations, and word
    similarity on each file of ``similarity``, for every embedding: ``(label, open)`` pairs, ``open()`` giving
    its words index (opened one at a time, in order, under a progress bar). ``options``: ``answers``,
    ``lowercase``, ``restrict_vocab``, ``eps``, ``n_shuffles``, ``seed``, ``exclude``, ``lrcos_seeds``
    (:func:`embedding_rows`)."""
    labels = [label for label, _ in embeddings]
    if len(set(labels)) != len(labels):
        raise LexprobeError(f"two embeddings share a name: {', '.join(labels)}")
    rows = []
    for label, open_words in bar(embeddings, total=len(embeddings), desc="compare", unit="embedding"):
        rows += embedding_rows(label, open_words(), dataset=dataset, methods=methods, similarity=similarity,
                               **options)
    types = {"value": pa.float64(), "low": pa.float64(), "high": pa.float64(), "n": pa.int64()}
    return Comparison(pa.table({c: pa.array([r[c] for r in rows], types.get(c, pa.string())) for c in COLUMNS}))


def run_compare(embeddings: Sequence[tuple[str, Callable[[], object]]], out: str | Path, **kwargs) -> Comparison:
    """:func:`compare_embeddings`, written to ``out``: ``compare.parquet`` and ``compare.md`` (the table) and
    ``compare.png`` (one group of bars per measure and dataset, one bar per embedding)."""
    result = compare_embeddings(embeddings, **kwargs)
    run_dir = RunDir(out)
    run_dir.write_table("compare", result.table)
    rows = result.table.to_pylist()
    groups = list(dict.fromkeys(f"{r['measure']} ({Path(r['dataset']).name})" for r in rows))
    cell = {(r["embedding"], f"{r['measure']} ({Path(r['dataset']).name})"): r for r in rows}

    def span(row):
        return None if row is None or row["low"] is None else (row["low"], row["high"])

    plots.bar_chart(run_dir.file("compare.png"), groups,
                    {label: [cell[label, g]["value"] if (label, g) in cell else None for g in groups]
                     for label, _ in embeddings},
                    intervals={label: [span(cell.get((label, g))) for g in groups] for label, _ in embeddings},
                    title="Embeddings compared (95% intervals where the measure has one)",
                    ylabel="accuracy, mean OCS / PCS, correlation")
    return result
