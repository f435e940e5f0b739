"""Benchmark: WNLaMPro probing sentences/s, batched against the authors' evaluation: one sentence per forward pass
with full-vocabulary logits at every position (``model(**enc).logits[0, mask]``, what one writes for one sentence).
Batched: length-sorted batches with logits only at the mask position; for a causal model the batches are prefix
trees (:func:`lexprobe.rare_words.cloze_queries.pack_queries`). Both rank the same targets on the same sentences;
the ranks must agree."""

from __future__ import annotations

import os

import numpy as np

from .patterns import patterns_for
from .cloze_queries import Query, make_query
from .language_models import LanguageModel, load_lm
from .probing import answer
from ..runs.bench_record import record, timed


def benchmark_queries(lm: LanguageModel, n: int, *, dataset=None, seed: int = 0) -> tuple[list[Query], list[list[int]]]:
    """``n`` probing sentences with their target ids (in the form the blank gives them), whole entries at a time
    as a WNLaMPro run probes them (every pattern of the entry's relation): entries of a WNLaMPro file drawn with
    ``seed`` or, without one, hypernym entries around whole-word vocabulary tokens (target "thing")."""
    rng = np.random.default_rng(seed)
    vocab = lm.whole_words()
    if dataset is not None:
        from ..sources.datasets.wnlampro import read_dataset
        from .probing import prepare

        prep = prepare(read_dataset(dataset), lm)
        pairs = [(e.keyword, e.relation, t) for e, t in zip(prep.entries, prep.target_ids)]
    else:
        words = [w for w in vocab if w.isalpha() and w.isascii()]
        pairs = [(w, "hypernym", [vocab["thing"]]) for w in words]
    queries, targets = [], []
    for i in rng.permutation(len(pairs)):
        keyword, relation, t = pairs[i]
        for p in patterns_for(relation)[:n - len(queries)]:
            queries.append(make_query(lm, p, keyword, replace=False))
            targets.append(lm.at_blank(t, p))
        if len(queries) == n:
            break
    return queries, targets


def run_probing_bench(model: str, *, dataset=None, n_sentences: int, loop_sample: int, batch_size: int, seed: int,
                      record_path: str | None, device="auto", dtype="float32") -> dict:
    import torch

    lm = load_lm(model, device=device, dtype=dtype)
    queries, targets = benchmark_queries(lm, n_sentences, dataset=dataset, seed=seed)
    sample = np.unique(np.linspace(0, len(queries) - 1, min(loop_sample, len(queries))).astype(int))  # spread out
    answer(lm, queries[:8], None, targets[:8], batch_size=8)  # warm-up
    t_batch, (ranks, _) = timed(lambda: answer(lm, queries, None, targets, batch_size=batch_size))
    t_loop, (ranks_loop, _) = timed(lambda: answer(lm, [queries[i] for i in sample], None,
                                                   [targets[i] for i in sample], batch_size=1, full_logits=True))
    agree = float((ranks[sample] == ranks_loop).mean())
    rate_batch, rate_loop = len(queries) / t_batch, len(sample) / t_loop
    if lm.kind == "causal":
        from .cloze_queries import PACKED_TOKENS, pack_queries

        shared = sum(len(t.ids) for t in pack_queries(queries, None, PACKED_TOKENS))
    how = "prefix trees" if lm.kind == "causal" else "length-sorted"
    rows = [
        {"method": f"lexprobe: {batch_size} sentences per pass, {how}, mask-only logits", "sentences": len(queries),
         "seconds": t_batch, "sentences_per_s": rate_batch},
        {"method": "authors' way: one sentence per pass, full-vocabulary logits", "sentences": len(sample),
         "seconds": t_loop, "sentences_per_s": rate_loop},
    ]
    source = dataset or "hypernym patterns around random vocabulary words"
    notes = [f"model {model} on {lm.device} ({dtype}): vocabulary {lm.vocab_size}, torch threads "
             f"{torch.get_num_threads()}, "
             f"sentences: every pattern of entries from {source}, seed={seed}",
             "load average (1 min) at the end: {:.2f} on {} cores (a shared machine)".format(os.getloadavg()[0],
                                                                                        os.cpu_count()),
             f"speed-up: **{rate_batch / rate_loop:.1f}x** sentences/s (floor 10x)",
             *([f"tokens run batched: {shared} in prefix trees for {sum(len(q.ids) for q in queries)} in the "
                "sentences"] if lm.kind == "causal" else []),
             f"identical target ranks on the shared sample: {agree:.1%} (largest difference "
             f"{int(np.abs(ranks[sample] - ranks_loop).max())}: float rounding under another batch shape can swap "
             "near-equal logits)"]
    md = record(record_path, "bench probing: batched mask-only logits vs one sentence at a time, full logits", rows,
                notes=notes)
    return {"speedup": rate_batch / rate_loop, "agree": agree, "markdown": md}
