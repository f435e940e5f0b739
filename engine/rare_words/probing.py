"""Probing a language model on WNLaMPro (Schick & Schütze, "Rare words", section 6.2): every entry's patterns
filled with its keyword (:mod:`lexprobe.rare_words.cloze_queries`), answered by the model
(:mod:`lexprobe.rare_words.language_models`), scored (:mod:`lexprobe.rare_words.probing_scores`: rank, RR, P@k and
the random baseline), and the tables of a run: MRR and P@k per strategy, relation and frequency bucket.

Targets that are not whole-word tokens of the model are dropped; an entry left with none is skipped (counted).

Keyword strategies: ``original`` feeds the keyword's subword tokens. ``ota``, ``first``, ``last``, ``avg`` put
one vector (from :mod:`lexprobe.rare_words.ota`) in the keyword's place through ``inputs_embeds``, for keywords of
two or more tokens; a one-token keyword is fed as it is by every strategy (the paper replaces multi-token keywords
only). ``am`` and ``am-context`` put an Attentive Mimicking vector there (section 3; the AM model mimics the LM's
input embeddings: :mod:`lexprobe.rare_words.mimicking`), given by a *provider* (a callable words -> vectors, e.g.
:class:`lexprobe.rare_words.am_store.AMVectors`), so that probing never trains.

Replace policy (which keywords get a slot): ``multi`` (multi-token keywords only: the paper's OTA evaluation,
the default of ota, first, last, avg) or ``all`` (every keyword, one-token ones included, as the authors'
evaluation script for AM with BERT does: the default of the AM strategies). A provider's row that is not finite
(NaN) means "no vector for this word": its keyword is fed as its tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from ..core.conventions import Result
from ..core.errors import LexprobeError
from ..core.seeds import rng_for
from .cloze_queries import Query, make_query
from .language_models import LanguageModel
from .patterns import RELATIONS, patterns_for
from .probing_scores import (DEFAULT_CUTOFF, PRECISION_AT, cell_weights, entry_scores, random_scores,
                             rank_targets)

STRATEGIES = ("original", "ota", "first", "last", "avg", "am", "am-context")
AM_STRATEGIES = ("am", "am-context")  # their vectors come from a provider
REPLACE_POLICIES = ("multi", "all")
Provider = Callable[[Sequence[str]], np.ndarray]  # words -> (n, d) input-embedding vectors (NaN rows: none)


def replace_policy(strategy: str, policy: str | None = None) -> str | bool:
    """The replace policy of ``strategy`` (False for ``original``): ``policy`` when given, else ``all`` for the AM
    strategies (the authors' evaluation) and ``multi`` for the others (the paper's)."""
    if policy is not None and policy not in REPLACE_POLICIES:
        raise LexprobeError(f"unknown replace policy {policy!r} (known: {', '.join(REPLACE_POLICIES)})")
    if strategy == "original":
        return False
    return policy or ("all" if strategy in AM_STRATEGIES else "multi")


@dataclass
class Prepared:
    """Entries ready to probe: kept entries, their target token ids and what was skipped."""

    entries: list
    target_ids: list[list[int]]
    skipped: dict[str, int] = field(default_factory=dict)


def prepare(entries: Sequence, lm: LanguageModel) -> Prepared:
    """Keep entries with a known relation and at least one target among the model's whole-word tokens; drop
    the other targets. Counts what was skipped (``no_target_in_vocab``, ``unknown_relation``, ``targets_dropped``)."""
    vocab = lm.whole_words()
    kept, ids = [], []
    skipped = {"no_target_in_vocab": 0, "unknown_relation": 0, "targets_dropped": 0}
    for e in entries:
        try:
            patterns_for(e.relation)
        except LexprobeError:
            skipped["unknown_relation"] += 1
            continue
        t = [vocab[w] for w in e.targets if w in vocab]
        skipped["targets_dropped"] += len(e.targets) - len(t)
        if not t:
            skipped["no_target_in_vocab"] += 1
            continue
        kept.append(e)
        ids.append(t)
    return Prepared(kept, ids, skipped)


def answer(lm: LanguageModel, queries: Sequence[Query], vectors: np.ndarray | None,
           targets: Sequence[Sequence[int]], *, top: int = max(PRECISION_AT), batch_size: int = 64,
           full_logits: bool = False, desc: str = "probe"):
    """For each query: the best rank of its ``targets`` (token ids) and its ``top`` answers.

    ``vectors`` (one row per query; used where ``query.slot >= 0``) replace the keyword slot.
    Returns (ranks (Q,) int64, top_ids (Q, top) int64).
    """
    ranks = np.zeros(len(queries), np.int64)
    tops = np.zeros((len(queries), top), np.int64)
    for rows, logits in lm.answer_logits(queries, vectors, batch_size=batch_size, full=full_logits, desc=desc):
        ranks[rows], tops[rows] = rank_targets(logits, [targets[i] for i in rows], top)
    return ranks, tops


def keyword_vectors(lm: LanguageModel, words: Sequence[str], strategy: str, *, ota_options: Mapping | None = None,
                    seed: int = 0, provider: Provider | None = None) -> np.ndarray:
    """One input-embedding vector per word for ``strategy``: ``provider(words)`` when given (the AM strategies
    need one), else ota, first, last, avg from ``lexprobe.rare_words.ota``.

    A word that is one token inside a sentence (a BPE vocabulary may split only its sentence-initial form, as
    SmolLM2 splits "basketball" but not " basketball") needs no approximation: OTA gives it that token's own
    embedding, the exact solution of its objective, without optimising."""
    from . import ota

    if provider is not None:
        out = np.asarray(provider(list(words)), np.float32)
        hidden = lm.model.get_input_embeddings().weight.shape[1]
        if out.shape != (len(words), hidden):
            raise LexprobeError(f"strategy {strategy}: the provider gave vectors of shape {out.shape}, the model "
                                f"takes ({len(words)}, {hidden})")
        return out
    if strategy in AM_STRATEGIES:
        raise LexprobeError(f"strategy {strategy} needs an AM model (--{strategy} NAME; in Python providers="
                            f"{{{strategy!r}: AMVectors(NAME)}})")
    if strategy == "ota":
        pieces = ota.word_pieces(lm.tokenizer, words)
        out = ota.subword_vectors(lm.model, pieces, "first")
        multi = [i for i, p in enumerate(pieces) if len(p) > 1]
        if multi:
            out[multi] = ota.one_token_approximation(lm.model, lm.tokenizer, [words[i] for i in multi], seed=seed,
                                                     **dict(ota_options or {}))
        return out
    if strategy in ota.BASELINES:
        return ota.subword_baseline(lm.model, lm.tokenizer, words, strategy)
    raise LexprobeError(f"unknown keyword strategy {strategy!r} (known: {', '.join(STRATEGIES)})")


def entry_query(lm: LanguageModel, entry, n: int, k: int, *, replace: bool | str) -> Query:
    """The query of ``entry`` (the ``n``-th prepared entry) under its relation's ``k``-th pattern, tagged with both."""
    q = make_query(lm, patterns_for(entry.relation)[k], entry.keyword, replace=replace)
    q.entry, q.pattern = n, k
    return q


def entry_queries(lm: LanguageModel, prep, *, replace: bool | str) -> tuple[list[Query], list[list[int]]]:
    """One query per (prepared entry, pattern), entry by entry, and each query's target ids at its blank."""
    queries, targets = [], []
    for n, (e, t) in enumerate(zip(prep.entries, prep.target_ids)):
        for k, pattern in enumerate(patterns_for(e.relation)):
            queries.append(entry_query(lm, e, n, k, replace=replace))
            targets.append(lm.at_blank(t, pattern))
    return queries, targets


def probe(entries: Sequence, lm: LanguageModel, *, strategies: Sequence[str] = ("original",),
          cutoff: int = DEFAULT_CUTOFF, batch_size: int = 64, ota_options: Mapping | None = None,
          seed: int = 0, providers: Mapping[str, Provider] | None = None,
          policy: str | None = None) -> tuple[list[dict], dict]:
    """Probe ``entries`` with every strategy. Returns one row per (strategy, entry) with rank, rr, p@3, p@10,
    whether the keyword was replaced (``replaced``) and the random baseline's expected rr/p@k, and a summary
    (skips, multi-token keywords, vocabulary size, replaced keywords per strategy). ``providers``: strategy ->
    provider of its keyword vectors (required for the AM strategies); ``policy``: the replace policy of every
    replacing strategy (default: each strategy's own, :func:`replace_policy`)."""
    bad = [s for s in strategies if s not in STRATEGIES]
    if bad:
        raise LexprobeError(f"unknown keyword strategy {bad[0]!r} (known: {', '.join(STRATEGIES)})")
    prep = prepare(entries, lm)
    if not prep.entries:
        raise LexprobeError(f"no entry to probe: {prep.skipped}")
    n_patterns = np.array([len(patterns_for(e.relation)) for e in prep.entries])
    rand = random_scores(np.array([len(t) for t in prep.target_ids]), n_patterns, lm.vocab_size, cutoff=cutoff)
    providers = dict(providers or {})
    rows, multi, replaced_words = [], set(), {}
    plain: dict[tuple[int, int], tuple] = {}  # (entry, pattern) -> (rank, top ids) with the keyword's own tokens
    for strategy in strategies:
        replace = replace_policy(strategy, policy)
        queries, qtargets = entry_queries(lm, prep, replace=replace)
        multi |= {prep.entries[q.entry].keyword for q in queries if q.keyword_tokens > 1}
        vectors = None
        if replace:
            words = sorted({prep.entries[q.entry].keyword for q in queries if q.slot >= 0})
            table = dict(zip(words, keyword_vectors(lm, words, strategy, ota_options=ota_options, seed=seed,
                                                    provider=providers.get(strategy)))) if words else {}
            table = {w: v for w, v in table.items() if np.isfinite(v).all()}
            for i, q in enumerate(queries):  # no vector for the word: its tokens, as ``original`` feeds them
                if q.slot >= 0 and prep.entries[q.entry].keyword not in table:
                    queries[i] = entry_query(lm, prep.entries[q.entry], q.entry, q.pattern, replace=False)
            replaced_words[strategy] = len(table)
            hidden = lm.model.get_input_embeddings().weight.shape[1]
            vectors = np.stack([table[prep.entries[q.entry].keyword] if q.slot >= 0 else np.zeros(hidden, np.float32)
                                for q in queries])
        # a query that keeps the keyword's own tokens (a one-token keyword) is the same under every strategy:
        # answered once, copied for the other strategies
        todo = [i for i, q in enumerate(queries) if q.slot >= 0 or (q.entry, q.pattern) not in plain]
        ranks, tops = np.zeros(len(queries), np.int64), np.zeros((len(queries), max(PRECISION_AT)), np.int64)
        if todo:
            ranks[todo], tops[todo] = answer(lm, [queries[i] for i in todo], None if vectors is None else
                                             vectors[todo], [qtargets[i] for i in todo], batch_size=batch_size,
                                             desc=strategy)
        for i, q in enumerate(queries):
            if q.slot < 0:
                ranks[i], tops[i] = plain.setdefault((q.entry, q.pattern), (ranks[i], tops[i].copy()))
        scores = entry_scores(np.array([q.entry for q in queries]), ranks, tops, prep.target_ids, len(prep.entries),
                              cutoff=cutoff, query_targets=qtargets)
        slotted = {q.entry for q in queries if q.slot >= 0}
        for n, e in enumerate(prep.entries):
            row = {"strategy": strategy, "id": e.id, "split": e.split, "relation": e.relation, "bucket": e.bucket,
                   "keyword": e.keyword, "multi_token": e.keyword in multi, "n_targets": len(prep.target_ids[n]),
                   "replaced": n in slotted, "rank": int(scores["rank"][n]), "rr": float(scores["rr"][n])}
            row.update({f"p@{i}": float(scores[f"p@{i}"][n]) for i in PRECISION_AT})
            row["random_rr"] = float(rand["rr"][n])
            row.update({f"random_p@{i}": float(rand[f"p@{i}"][n]) for i in PRECISION_AT})
            rows.append(row)
    summary = {"entries": len(prep.entries), "skipped": prep.skipped, "multi_token_keywords": len(multi),
               "vocab_size": lm.vocab_size, "cutoff": cutoff, "strategies": list(strategies),
               "replace_policy": {s: replace_policy(s, policy) or "none" for s in strategies},
               "replaced_keywords": replaced_words}
    return rows, summary


def aggregate(rows: Sequence[dict], by: Sequence[str] = ("strategy", "relation", "bucket"), *,
              population: Mapping[tuple[str, str], int] | None = None) -> list[dict]:
    """Mean RR (MRR), P@3, P@10 and the random baseline's MRR per group, plus an ``all`` bucket per relation.

    With ``population`` ((relation, bucket) -> entries in the dataset the rows were sampled from) every mean is
    weighted by :func:`lexprobe.rare_words.probing_scores.cell_weights`, so that a group mixing relations (a bucket
    over all relations) estimates the dataset's mean; ``n_dataset`` gives the group's entries in the dataset. A
    group inside one (relation, bucket) cell has equal weights: its means are the plain ones."""
    from ..sources.datasets.wnlampro import BUCKETS

    weights = cell_weights(rows, population)
    groups: dict[tuple, list[int]] = {}
    for n, r in enumerate(rows):
        groups.setdefault(tuple(r[b] for b in by), []).append(n)
        if "bucket" in by:
            groups.setdefault(tuple("all" if b == "bucket" else r[b] for b in by), []).append(n)
    order = {v: i for i, v in enumerate(STRATEGIES + RELATIONS + BUCKETS + ("all",))}
    out = []
    for key in sorted(groups, key=lambda k: [order.get(x, len(order)) for x in k]):
        sel, w = [rows[n] for n in groups[key]], weights[groups[key]]
        mean = lambda name: float(np.average([r[name] for r in sel], weights=w))  # noqa: E731
        row = {**dict(zip(by, key)), "n": len(sel), "mrr": mean("rr")}
        row.update({f"p@{i}": mean(f"p@{i}") for i in PRECISION_AT})
        row["random_mrr"] = mean("random_rr")
        if population is not None:
            cells = {(r["relation"], r["bucket"]) for r in sel}
            row["n_dataset"] = int(sum(population.get(c, 0) for c in cells))
        out.append(row)
    return out


def select(entries: Sequence, *, split: str = "all", relations: Sequence[str] = (), limit: int | None = None,
           seed: int = 0) -> list:
    """Entries of ``split`` (dev, test, all) and ``relations``; at most ``limit`` per relation, drawn with ``seed``
    from a stream of its own (purpose "probe-sample" and the relation), independent of the dev/test split's."""
    for r in relations:
        patterns_for(r)  # unknown relation: a clear error
    kept = [e for e in entries if (split == "all" or e.split == split) and (not relations or e.relation in relations)]
    if limit is None:
        return kept
    out = []
    for relation in sorted({e.relation for e in kept}):
        sel = [e for e in kept if e.relation == relation]
        out += [sel[i] for i in sorted(rng_for(seed, "probe-sample", relation).permutation(len(sel))[:limit])]
    return out


def select_cells(entries: Sequence, per_cell: int, *, relations: Sequence[str] = (), seed: int = 0) -> list:
    """At most ``per_cell`` entries of each (relation, bucket) cell (of ``relations``; all without), drawn with
    ``seed`` from a stream of their own (purpose "cell-sample"): a sample sized per cell, where a difference of
    buckets needs enough entries in each."""
    kept = [e for e in entries if not relations or e.relation in relations]
    out = []
    for cell in sorted({(e.relation, e.bucket) for e in kept}):
        sel = [e for e in kept if (e.relation, e.bucket) == cell]
        out += [sel[i] for i in sorted(rng_for(seed, "cell-sample", *cell).permutation(len(sel))[:per_cell])]
    return out


def side_by_side(summary_rows: Sequence[dict], strategies: Sequence[str]) -> list[dict]:
    """One row per (relation, bucket): n, the random MRR, then MRR, P@3, P@10 of each strategy."""
    cells: dict[tuple, dict] = {}
    for r in summary_rows:
        row = cells.setdefault((r["relation"], r["bucket"]), {"relation": r["relation"], "bucket": r["bucket"],
                                                              "n": r["n"], "random_mrr": r["random_mrr"]})
        for m in ("mrr", *(f"p@{i}" for i in PRECISION_AT)):
            row[f"{r['strategy']} {m}"] = r[m]
    columns = ["relation", "bucket", "n", "random_mrr"] + [f"{s} {m}" for s in strategies
                                                           for m in ("mrr", *(f"p@{i}" for i in PRECISION_AT))]
    return [{c: row.get(c) for c in columns} for row in cells.values()]


def population_of(entries: Sequence) -> dict[tuple[str, str], int]:
    """(relation, bucket) -> number of ``entries``: what a sample of them stands for (:func:`aggregate`)."""
    out: dict[tuple[str, str], int] = {}
    for e in entries:
        out[(e.relation, e.bucket)] = out.get((e.relation, e.bucket), 0) + 1
    return out


@dataclass
class WNLaMProScores(Result):
    """What :func:`probe_tables` (``lexprobe.probe_wnlampro``) returns. :meth:`to_arrow`: ``rows``, one per strategy
    and entry (rank, rr, p@k, the random baseline's). The other tables are records (lists of dicts):
    ``by_bucket`` (MRR, P@k per strategy, relation and bucket), ``overall`` (per strategy and bucket), ``wide``
    (strategies side by side); ``summary`` (skips, counts, ``mrr_by_bucket``, the random baseline's
    ``random_mrr_by_bucket``) and ``population`` (what the means are weighted to, or None)."""

    rows: list[dict]
    by_bucket: list[dict]
    overall: list[dict]
    wide: list[dict]
    summary: dict
    population: Mapping[tuple[str, str], int] | None = None

    def to_arrow(self):
        import pyarrow as pa

        return pa.Table.from_pylist(self.rows)


def probe_tables(entries: Sequence, lm: LanguageModel, *, strategies: Sequence[str] = ("original",),
                 cutoff: int = DEFAULT_CUTOFF, batch_size: int = 64, ota_iterations: int | None = None,
                 seed: int = 0, population: Mapping[tuple[str, str], int] | None = None,
                 providers: Mapping[str, Provider] | None = None, policy: str | None = None,
                 ota_batch_threads: int = 1) -> WNLaMProScores:
    """:func:`probe` and its tables (:class:`WNLaMProScores`). ``population`` (:func:`population_of` the dataset a
    sample was drawn from) reweights the means to the dataset; ``providers`` and ``policy`` as in :func:`probe`;
    ``ota_batch_threads``: OTA batches optimised at once (:func:`lexprobe.rare_words.ota.optimise`'s
    ``batch_threads``: the same numbers)."""
    ota_options = {"iterations": ota_iterations} if ota_iterations else {}
    if ota_batch_threads != 1:
        ota_options["batch_threads"] = ota_batch_threads
    rows, summary = probe(entries, lm, strategies=strategies, cutoff=cutoff, batch_size=batch_size,
                          ota_options=ota_options, seed=seed, providers=providers, policy=policy)
    long = aggregate(rows, population=population)
    overall = aggregate(rows, by=("strategy", "bucket"), population=population)
    summary["weighting"] = ("means weighted to the dataset's (relation, bucket) cells" if population is not None
                            else "plain means over the probed entries")
    summary.update({"mrr_by_bucket": {f"{r['strategy']}/{r['bucket']}": r["mrr"] for r in overall},
                    "random_mrr_by_bucket": {r["bucket"]: r["random_mrr"] for r in overall
                                             if r["strategy"] == strategies[0]}})
    return WNLaMProScores(rows, long, overall, side_by_side(long, strategies), summary, population)
