"""Masked-LM probing on WNLaMPro (Schick & Schütze, "Rare words", section 6.2).

For an entry x = (k, r, T), a pattern p of relation r and a target w in T, the model fills the blank of p[k];
its answers a_1..a_n are the whole vocabulary sorted by logit, and

    rank(p[k], w) = j such that a_j = w          (1 + the number of tokens with a strictly higher logit)
    rank(x)       = min over p and w of rank(p[k], w)
    precision_i(x) = max over p of |{a_1..a_i} ∩ T| / i
    RR(x)         = 1 / rank(x) when rank(x) <= cutoff (default 100), else 0;  MRR = mean RR

Targets that are not whole-word tokens of the model are dropped; an entry left with none is skipped (counted).
Logits are computed only at the mask position: the encoder body runs on the batch, the mask rows of its last
hidden state go through the MLM head (models whose head is not one module fall back to full logits).

Keyword strategies: ``original`` feeds the keyword's subword tokens. ``ota``, ``first``, ``last``, ``avg`` put
one vector (from ``lexprobe.rare_words.ota``) in the keyword's place through ``inputs_embeds``, for keywords of two or more
tokens; a one-token keyword is fed as it is by every strategy (the paper replaces multi-token keywords only).

The random baseline is exact: the expected RR, P@3 and P@10 of a model that answers every query with an
independent uniformly random ranking of the V vocabulary tokens, given each entry's number of targets and patterns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..core.errors import LexprobeError
from ..core.seeds import rng_for
from .patterns import BLANK, RELATIONS, fill_parts, patterns_for
from ..core.progress import bar

STRATEGIES = ("original", "ota", "first", "last", "avg")
PRECISION_AT = (3, 10)
DEFAULT_CUTOFF = 100


# ------------------------------------------------------------------------------------------------- the model


class MaskedLM:
    """A masked language model and its tokenizer, answering "which token fills the mask" in batches."""

    kind = "masked"  # lexprobe.rare_words.causal_probing.CausalLM (a subclass) is "causal"; load either kind with
    # lexprobe.rare_words.language_models.load_lm

    def __init__(self, model, tokenizer):
        import torch

        self.model, self.tokenizer = model.eval(), tokenizer
        self.body = model.base_model
        heads = [m for m in model.children() if m is not self.body and not isinstance(m, torch.nn.modules.loss._Loss)]
        self.head = heads[0] if len(heads) == 1 else None  # e.g. BERT's ``cls``, RoBERTa's ``lm_head``
        if self.kind == "masked" and tokenizer.mask_token_id is None:
            raise LexprobeError("the tokenizer has no mask token: not a masked language model")
        self.vocab_size = model.get_output_embeddings().weight.shape[0]

    @classmethod
    def load(cls, name: str) -> "MaskedLM":
        from ..sources.models import load_masked_lm, load_tokenizer

        return cls(load_masked_lm(name), load_tokenizer(name))

    def whole_words(self) -> dict[str, int]:
        """word -> token id for the vocabulary's whole-word tokens (the candidate targets T)."""
        from ..sources.models import whole_word_tokens

        words, ids = whole_word_tokens(self.tokenizer)
        return dict(zip(words, ids))

    def mask_logits(self, input_ids, attention_mask, mask_pos, inputs_embeds=None, *, full: bool = False,
                    rows=None, position_ids=None):
        """Logits (B, V) at each row's mask position (or at (``rows``, ``mask_pos``) pairs, several per row).
        ``full``: the whole-sequence logits, then the mask rows (the slow way, kept for the benchmark's baseline
        and for heads that are not one module). ``position_ids`` go to the model as they are."""
        import torch

        rows = torch.arange(len(mask_pos)) if rows is None else rows
        with torch.inference_mode():
            kwargs = {"attention_mask": attention_mask}
            kwargs.update({"inputs_embeds": inputs_embeds} if inputs_embeds is not None else {"input_ids": input_ids})
            if position_ids is not None:
                kwargs["position_ids"] = position_ids
            if full or self.head is None:
                return self.model(**kwargs).logits[rows, mask_pos].float()
            hidden = self.body(**kwargs)[0]
            return self.head(hidden[rows, mask_pos]).float()

    def answer_logits(self, queries: Sequence["Query"], vectors: np.ndarray | None, *, batch_size: int,
                      full: bool = False, desc: str = "probe"):
        """Yield (query indices, their logits at the mask (n, V)) batch by batch: ``batch_size`` queries per
        forward pass, length-sorted, right-padded; ``vectors`` (one row per query) replace the keyword slots."""
        import torch

        pad = self.tokenizer.pad_token_id or 0
        for rows in bar(list(_batches(queries, batch_size)), desc=desc, unit="batch"):
            width = max(len(queries[i].ids) for i in rows)
            ids = torch.full((len(rows), width), pad, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for j, i in enumerate(rows):
                ids[j, :len(queries[i].ids)] = torch.tensor(queries[i].ids)
                mask[j, :len(queries[i].ids)] = 1
            mask_pos = torch.tensor([queries[i].mask_pos for i in rows])
            slots = np.array([queries[i].slot for i in rows])
            embeds = None
            if (slots >= 0).any():
                from .ota import inputs_embeds_with

                embeds = inputs_embeds_with(self.model, ids, slots, vectors[rows])
            yield rows, self.mask_logits(ids, mask, mask_pos, embeds, full=full)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text)["input_ids"]


# ------------------------------------------------------------------------------------------------ the queries


@dataclass
class Query:
    """One cloze: entry ``entry``, pattern ``pattern``, its token ids, the mask position and the keyword slot
    (the position a replacement vector goes to, -1 when the keyword is fed as tokens)."""

    entry: int
    pattern: int
    ids: list[int]
    mask_pos: int
    slot: int = -1
    keyword_tokens: int = 1


def make_query(lm: MaskedLM, pattern: str, keyword: str, *, replace: bool) -> Query:
    """Tokenize ``pattern`` filled with ``keyword``; with ``replace`` a multi-token keyword shrinks to one slot
    (its first token's place; the vector is put in later). A causal model's query is the text before the blank
    (:func:`lexprobe.rare_words.causal_probing.make_query`)."""
    if lm.kind == "causal":
        return lm.query(pattern, keyword, replace=replace)
    tok = lm.tokenizer
    before, _, after = fill_parts(pattern, keyword, tok.mask_token)
    ids = lm.encode(before + keyword + after)
    if ids.count(tok.mask_token_id) != 1:
        raise LexprobeError(f"pattern {pattern!r} with keyword {keyword!r}: the blank does not give one mask token")
    lead = int(ids[0] in tok.all_special_ids)  # [CLS] / <s>
    plain = tok(before + keyword, add_special_tokens=False)["input_ids"]
    start = lead + (len(tok(before, add_special_tokens=False)["input_ids"]) if before else 0)
    n = len(plain) - (start - lead)
    if n < 1 or ids[start:start + n] != plain[start - lead:]:
        raise LexprobeError(f"pattern {pattern!r}: cannot locate the keyword {keyword!r} among its tokens")
    if replace and n > 1:
        ids = ids[:start + 1] + ids[start + n:]
        return Query(-1, -1, ids, ids.index(tok.mask_token_id), start, n)
    return Query(-1, -1, ids, ids.index(tok.mask_token_id), -1, n)


def _batches(queries: Sequence[Query], batch_size: int):
    """Indices of ``queries`` in length-sorted batches (little padding)."""
    order = sorted(range(len(queries)), key=lambda i: len(queries[i].ids))
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


def answer(lm: MaskedLM, queries: Sequence[Query], vectors: np.ndarray | None, targets: Sequence[Sequence[int]], *,
           top: int = max(PRECISION_AT), batch_size: int = 64, full_logits: bool = False, desc: str = "probe"):
    """For each query: the best rank of its ``targets`` (token ids) and its ``top`` answers.

    ``vectors`` (one row per query; used where ``query.slot >= 0``) replace the keyword slot.
    Returns (ranks (Q,) int64, top_ids (Q, top) int64).
    """
    ranks = np.zeros(len(queries), np.int64)
    tops = np.zeros((len(queries), top), np.int64)
    for rows, logits in lm.answer_logits(queries, vectors, batch_size=batch_size, full=full_logits, desc=desc):
        ranks[rows], tops[rows] = rank_targets(logits, [targets[i] for i in rows], top)
    return ranks, tops


def rank_targets(logits, targets: Sequence[Sequence[int]], top: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``logits`` (B, V; a tensor or an array): min over its targets of 1 + #tokens with a strictly
    higher logit, and the ``top`` token ids by logit (ties: lower id first).

    The top set comes from ``torch.topk`` (a partial selection on all cores, far cheaper than sorting or numpy's
    single-threaded argpartition); only a row whose tie straddles the cut is sorted fully.
    """
    import torch

    logits = torch.as_tensor(logits)
    width = max(len(t) for t in targets)
    tid = torch.zeros((len(targets), width), dtype=torch.long)
    valid = torch.zeros((len(targets), width), dtype=torch.bool)
    for j, t in enumerate(targets):
        tid[j, :len(t)], valid[j, :len(t)] = torch.as_tensor(t, dtype=torch.long), True
    best = torch.where(valid, logits.gather(1, tid), float("-inf")).amax(1)  # the best target's logit
    ranks = 1 + (logits > best[:, None]).sum(1)
    vals, part = torch.topk(logits, top, dim=1)
    vals, part = vals.numpy(), part.numpy()
    top_ids = np.take_along_axis(part, np.lexsort((part, -vals), axis=1), 1)
    tied = ((logits >= torch.from_numpy(vals.min(1, keepdims=True))).sum(1) > top).numpy()  # a tie across the cut
    for row in np.flatnonzero(tied):
        top_ids[row] = np.argsort(-logits[row].numpy(), kind="stable")[:top]
    return ranks.numpy().astype(np.int64), top_ids.astype(np.int64)


# ------------------------------------------------------------------------------------------------- entries


@dataclass
class Prepared:
    """Entries ready to probe: kept entries, their target token ids and what was skipped."""

    entries: list
    target_ids: list[list[int]]
    skipped: dict[str, int] = field(default_factory=dict)


def prepare(entries: Sequence, lm: MaskedLM) -> Prepared:
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


def entry_scores(query_entry: np.ndarray, ranks: np.ndarray, tops: np.ndarray, target_ids: Sequence[Sequence[int]],
                 n_entries: int, *, cutoff: int = DEFAULT_CUTOFF, at: Sequence[int] = PRECISION_AT,
                 query_targets: Sequence[Sequence[int]] | None = None) -> dict:
    """rank(x) = min over x's queries, RR with the cut-off, precision_i(x) = max over x's queries. ``query_targets``
    (one list per query) replace the entry's ``target_ids`` in precision where a query's targets are other tokens
    (a causal model's form at the blank)."""
    rank = np.full(n_entries, np.iinfo(np.int64).max)
    np.minimum.at(rank, query_entry, ranks)
    out = {"rank": rank, "rr": np.where(rank <= cutoff, 1.0 / rank, 0.0)}
    per_query = query_targets if query_targets is not None else [target_ids[n] for n in query_entry]
    padded = np.full((len(per_query), max(len(t) for t in per_query)), -1, np.int64)
    for n, t in enumerate(per_query):
        padded[n, :len(t)] = t
    is_target = (tops[:, :, None] == padded[:, None, :]).any(2)  # (Q, top)
    for i in at:
        p = np.zeros(n_entries)
        np.maximum.at(p, query_entry, is_target[:, :i].sum(1) / i)
        out[f"p@{i}"] = p
    return out


def random_scores(n_targets: np.ndarray, n_patterns: np.ndarray, vocab_size: int, *, cutoff: int = DEFAULT_CUTOFF,
                  at: Sequence[int] = PRECISION_AT) -> dict:
    """Expected RR and P@i per entry when each of its ``n_patterns`` queries gets an independent uniformly random
    ranking of ``vocab_size`` tokens and ``n_targets`` of them are targets (exact; computed once per target count)."""
    from math import comb

    n_targets, n_patterns = np.asarray(n_targets), np.asarray(n_patterns, float)
    V = vocab_size
    j = np.arange(1, cutoff + 2)
    out = {"rr": np.zeros(len(n_targets)), **{f"p@{i}": np.zeros(len(n_targets)) for i in at}}
    for t in np.unique(n_targets):
        rows = n_targets == t
        P = n_patterns[rows][:, None]
        # P(a query's best target rank >= j) = C(V-j+1, t) / C(V, t), then best over the patterns
        surv = np.array([comb(V - jj + 1, int(t)) / comb(V, int(t)) if V - jj + 1 >= t else 0.0 for jj in j])
        best = surv[None, :] ** P
        out["rr"][rows] = ((best[:, :-1] - best[:, 1:]) / j[None, :-1]).sum(1)
        for i in at:  # hits in the top i: hypergeometric; E[max over patterns] = sum_m P(max > m)
            pmf = np.array([comb(int(t), m) * comb(V - int(t), i - m) / comb(V, i) for m in range(i + 1)])
            cdf = np.cumsum(pmf)[None, :-1]
            out[f"p@{i}"][rows] = (1 - cdf ** P).sum(1) / i
    return out


def keyword_vectors(lm: MaskedLM, words: Sequence[str], strategy: str, *, ota_options: Mapping | None = None,
                    seed: int = 0) -> np.ndarray:
    """One input-embedding vector per word for ``strategy`` (ota, first, last, avg), from ``lexprobe.rare_words.ota``.

    A word that is one token inside a sentence (a BPE vocabulary may split only its sentence-initial form, as
    SmolLM2 splits "basketball" but not " basketball") needs no approximation: OTA gives it that token's own
    embedding, the exact solution of its objective, without optimising."""
    from . import ota

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


def probe(entries: Sequence, lm: MaskedLM, *, strategies: Sequence[str] = ("original",), cutoff: int = DEFAULT_CUTOFF,
          batch_size: int = 64, ota_options: Mapping | None = None, seed: int = 0) -> tuple[list[dict], dict]:
    """Probe ``entries`` with every strategy. Returns one row per (strategy, entry) with rank, rr, p@3, p@10 and
    the random baseline's expected rr/p@k, and a summary (skips, multi-token keywords, vocabulary size)."""
    bad = [s for s in strategies if s not in STRATEGIES]
    if bad:
        raise LexprobeError(f"unknown keyword strategy {bad[0]!r} (known: {', '.join(STRATEGIES)})")
    prep = prepare(entries, lm)
    if not prep.entries:
        raise LexprobeError(f"no entry to probe: {prep.skipped}")
    n_patterns = np.array([len(patterns_for(e.relation)) for e in prep.entries])
    rand = random_scores(np.array([len(t) for t in prep.target_ids]), n_patterns, lm.vocab_size, cutoff=cutoff)
    rows, multi = [], set()
    plain: dict[tuple[int, int], tuple] = {}  # (entry, pattern) -> (rank, top ids) with the keyword's own tokens
    for strategy in strategies:
        replace = strategy != "original"
        queries, qtargets = [], []
        for n, (e, t) in enumerate(zip(prep.entries, prep.target_ids)):
            for k, pattern in enumerate(patterns_for(e.relation)):
                q = make_query(lm, pattern, e.keyword, replace=replace)
                q.entry, q.pattern = n, k
                queries.append(q)
                qtargets.append(lm.at_blank(t, pattern) if lm.kind == "causal" else t)
                if q.keyword_tokens > 1:
                    multi.add(e.keyword)
        vectors = None
        if replace:
            words = sorted({prep.entries[q.entry].keyword for q in queries if q.slot >= 0})
            table = dict(zip(words, keyword_vectors(lm, words, strategy, ota_options=ota_options, seed=seed))) \
                if words else {}
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
        for n, e in enumerate(prep.entries):
            row = {"strategy": strategy, "id": e.id, "split": e.split, "relation": e.relation, "bucket": e.bucket,
                   "keyword": e.keyword, "multi_token": e.keyword in multi, "n_targets": len(prep.target_ids[n]),
                   "rank": int(scores["rank"][n]), "rr": float(scores["rr"][n])}
            row.update({f"p@{i}": float(scores[f"p@{i}"][n]) for i in PRECISION_AT})
            row["random_rr"] = float(rand["rr"][n])
            row.update({f"random_p@{i}": float(rand[f"p@{i}"][n]) for i in PRECISION_AT})
            rows.append(row)
    summary = {"entries": len(prep.entries), "skipped": prep.skipped, "multi_token_keywords": len(multi),
               "vocab_size": lm.vocab_size, "cutoff": cutoff, "strategies": list(strategies)}
    return rows, summary


def cell_weights(rows: Sequence[dict], population: Mapping[tuple[str, str], int] | None) -> np.ndarray:
    """Per row, the weight that makes a sample stand for the dataset it was drawn from (post-stratification):
    ``population[(relation, bucket)] / the rows of that cell among the rows of the row's strategy``; all 1 without
    a ``population``. A per-relation cap over-samples small relations, and each relation fills the frequency
    buckets differently, so unweighted bucket means mix the relations in the sample's proportions, not the
    dataset's."""
    if population is None:
        return np.ones(len(rows))
    sampled: dict[tuple, int] = {}
    for r in rows:
        key = (r["strategy"], r["relation"], r["bucket"])
        sampled[key] = sampled.get(key, 0) + 1
    return np.array([population.get((r["relation"], r["bucket"]), 0) / sampled[(r["strategy"], r["relation"],
                                                                               r["bucket"])] for r in rows])


def aggregate(rows: Sequence[dict], by: Sequence[str] = ("strategy", "relation", "bucket"), *,
              population: Mapping[tuple[str, str], int] | None = None) -> list[dict]:
    """Mean RR (MRR), P@3, P@10 and the random baseline's MRR per group, plus an ``all`` bucket per relation.

    With ``population`` ((relation, bucket) -> entries in the dataset the rows were sampled from) every mean is
    weighted by :func:`cell_weights`, so that a group mixing relations (a bucket over all relations) estimates
    the dataset's mean; ``n_dataset`` gives the group's entries in the dataset. A group inside one (relation,
    bucket) cell has equal weights: its means are the plain ones."""
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


def compare_strategies(rows: Sequence[dict], first: str, second: str, *,
                       population: Mapping[tuple[str, str], int] | None = None, resamples: int = 2000,
                       seed: int = 0) -> dict:
    """MRR of ``first`` minus MRR of ``second`` over the same entries, with its paired bootstrap 95% interval
    (:func:`lexprobe.core.intervals.paired_bootstrap`; entries resampled within their (relation, bucket)
    cell, cells weighted by ``population`` when the entries are a sample of it): ``difference``, ``low``,
    ``high``, ``entries``."""
    from ..core.intervals import paired_bootstrap

    rr = {s: {r["id"]: r for r in rows if r["strategy"] == s} for s in (first, second)}
    ids = sorted(set(rr[first]) & set(rr[second]))
    cells = [(rr[first][i]["relation"], rr[first][i]["bucket"]) for i in ids]
    diff, low, high = paired_bootstrap([rr[first][i]["rr"] for i in ids], [rr[second][i]["rr"] for i in ids],
                                       strata=[f"{r}/{b}" for r, b in cells], resamples=resamples, seed=seed,
                                       weights=None if population is None else
                                       {f"{r}/{b}": population[(r, b)] for r, b in set(cells)})
    return {"difference": diff, "low": low, "high": high, "entries": len(ids)}


def _cells(rows: Sequence[dict], strategy: str, relation: str | None = None,
           bucket: str | None = None) -> dict[tuple[str, str], np.ndarray]:
    """RR values of ``strategy`` per (relation, bucket) cell, keeping ``relation`` / ``bucket`` when given
    ("all" or None: every bucket)."""
    out: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r["strategy"] == strategy and relation in (None, r["relation"]) and bucket in (None, "all", r["bucket"]):
            out.setdefault((r["relation"], r["bucket"]), []).append(r["rr"])
    return {c: np.asarray(v) for c, v in sorted(out.items())}


def _weighted_mean_bootstrap(cells: Mapping[tuple[str, str], np.ndarray],
                             population: Mapping[tuple[str, str], int] | None, rng, resamples: int):
    """(the cells' means weighted by ``population`` (by the cells' sizes without it), the same over
    ``resamples`` resamples that draw each cell's values on their own)."""
    w = np.array([population.get(c, 0) if population is not None else len(v) for c, v in cells.items()], float)
    estimate = float(w @ [v.mean() for v in cells.values()] / w.sum())
    boots = w @ np.array([v[rng.integers(0, len(v), size=(resamples, len(v)))].mean(1)
                          for v in cells.values()]) / w.sum()
    return estimate, boots


def mrr_interval(rows: Sequence[dict], strategy: str, *, relation: str | None = None, bucket: str | None = None,
                 population: Mapping[tuple[str, str], int] | None = None, resamples: int = 2000, seed: int = 0,
                 level: float = 0.95) -> tuple[float, float, float]:
    """MRR of ``strategy`` over a relation and/or bucket with its percentile bootstrap interval: (mrr, low, high).
    Entries are resampled within their (relation, bucket) cell and the cells weighted as :func:`aggregate`
    weights them, so the MRR is the table's."""
    cells = _cells(rows, strategy, relation, bucket)
    if not cells:
        return float("nan"), float("nan"), float("nan")
    estimate, boots = _weighted_mean_bootstrap(cells, population, np.random.default_rng(seed), resamples)
    low, high = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return estimate, float(low), float(high)


def bucket_gap(rows: Sequence[dict], strategy: str, high: str, low: str, *,
               population: Mapping[tuple[str, str], int] | None = None, resamples: int = 2000, seed: int = 0,
               level: float = 0.95) -> dict:
    """MRR of bucket ``high`` minus MRR of bucket ``low`` for ``strategy`` (the frequency effect: frequent minus
    rare) with a percentile bootstrap interval. The two buckets hold different entries (not paired): each
    (relation, bucket) cell is resampled on its own, a bucket's MRR is its cells' means weighted as in
    :func:`aggregate`. Returns ``difference``, ``low``, ``high``, ``entries``; NaN when a bucket has no entry."""
    rng = np.random.default_rng(seed)
    parts = [_cells(rows, strategy, bucket=b) for b in (high, low)]
    entries = sum(len(v) for cells in parts for v in cells.values())
    if not all(parts):
        return {"difference": float("nan"), "low": float("nan"), "high": float("nan"), "entries": entries}
    (e_high, b_high), (e_low, b_low) = [_weighted_mean_bootstrap(c, population, rng, resamples) for c in parts]
    lo, hi = np.quantile(b_high - b_low, [(1 - level) / 2, (1 + level) / 2])
    return {"difference": e_high - e_low, "low": float(lo), "high": float(hi), "entries": entries}


MASK_WORD = "[MASK]"  # LAMA's (and BERT's) way to write the blank, taken as well as ___


def with_blank(lm, text: str) -> str:
    """``text`` with its blank written ``___``: ``[MASK]`` and the model's own mask token (``<mask>``) are
    taken too; exactly one blank is required."""
    typed = text
    for form in dict.fromkeys([MASK_WORD, getattr(lm.tokenizer, "mask_token", None) or MASK_WORD]):
        text = text.replace(form, BLANK)
    if text.count(BLANK) != 1:
        raise LexprobeError(f"{typed!r}: write exactly one blank ({BLANK} or {MASK_WORD}) where the model should "
                            "predict a word")
    return text


def _blank_probabilities(lm: MaskedLM, text: str):
    """The masked LM's distribution over its vocabulary at the one blank of ``text``."""
    import torch

    ids = lm.encode(with_blank(lm, text).replace(BLANK, lm.tokenizer.mask_token))
    ids_t = torch.tensor([ids])
    logits = lm.mask_logits(ids_t, torch.ones_like(ids_t), torch.tensor([ids.index(lm.tokenizer.mask_token_id)]))[0]
    return torch.softmax(logits, -1)


def gold_rank(lm: MaskedLM, text: str, gold: str) -> tuple[int, float]:
    """(rank, probability) of the word ``gold`` at the blank of ``text``: 1 + the number of tokens more probable.
    ``gold`` must be one token of the model's vocabulary (the blank predicts one token)."""
    if lm.kind == "causal":
        raise LexprobeError("--gold ranks a word at a masked LM's blank; this is a causal model")
    pieces = lm.tokenizer.tokenize(gold)
    if len(pieces) != 1:
        raise LexprobeError(f"gold word {gold!r} is {len(pieces)} tokens for this model ({' '.join(pieces)}); the "
                            "blank predicts one token")
    probs = _blank_probabilities(lm, text)
    p = probs[lm.tokenizer.convert_tokens_to_ids(pieces[0])]
    return int((probs > p).sum()) + 1, float(p)


def top_predictions(lm: MaskedLM, text: str, k: int = 10) -> list[dict]:
    """The ``k`` most probable tokens for the one blank (``___`` or ``[MASK]``) of ``text`` (a causal model: the
    next tokens after the text before the blank, :func:`lexprobe.rare_words.causal_probing.top_predictions`)."""
    if lm.kind == "causal":
        return lm.top_predictions(with_blank(lm, text), k)

    probs = _blank_probabilities(lm, text)
    p, idx = probs.topk(k)
    tokens = lm.tokenizer.convert_ids_to_tokens(idx.tolist())
    return [{"rank": r + 1, "token": t, "probability": float(pp)} for r, (t, pp) in enumerate(zip(tokens, p))]


# ------------------------------------------------------------------------------------------------- a whole run


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


def probe_tables(entries: Sequence, lm: MaskedLM, *, strategies: Sequence[str] = ("original",),
                 cutoff: int = DEFAULT_CUTOFF, batch_size: int = 64, ota_iterations: int | None = None,
                 seed: int = 0, population: Mapping[tuple[str, str], int] | None = None) -> dict:
    """:func:`probe` and its tables: ``rows`` (one per strategy and entry), ``by_bucket`` (MRR, P@k per strategy,
    relation and bucket), ``overall`` (per strategy and bucket), ``wide`` (strategies side by side) and
    ``summary`` (with ``mrr_by_bucket`` and the random baseline's ``random_mrr_by_bucket``). ``population``
    (:func:`population_of` the dataset a sample was drawn from) reweights the means to the dataset."""
    ota_options = {"iterations": ota_iterations} if ota_iterations else {}
    rows, summary = probe(entries, lm, strategies=strategies, cutoff=cutoff, batch_size=batch_size,
                          ota_options=ota_options, seed=seed)
    long = aggregate(rows, population=population)
    overall = aggregate(rows, by=("strategy", "bucket"), population=population)
    summary["weighting"] = ("means weighted to the dataset's (relation, bucket) cells" if population is not None
                            else "plain means over the probed entries")
    summary.update({"mrr_by_bucket": {f"{r['strategy']}/{r['bucket']}": r["mrr"] for r in overall},
                    "random_mrr_by_bucket": {r["bucket"]: r["random_mrr"] for r in overall
                                             if r["strategy"] == strategies[0]}})
    return {"rows": rows, "by_bucket": long, "overall": overall, "wide": side_by_side(long, strategies),
            "summary": summary, "population": population}
