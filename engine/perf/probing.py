"""Benchmark: WNLaMPro probing sentences/s, batched (length-sorted) with logits only at the mask position, against
the authors' evaluation: one sentence per forward pass with full-vocabulary logits at every position. Both rank
the same targets on the same sentences; the ranks must agree."""

from __future__ import annotations

import numpy as np

from ..analyses.patterns import patterns_for
from ..analyses.language_models import load_lm
from ..analyses.probing import MaskedLM, Query, answer, make_query
from .common import record, timed


def benchmark_queries(lm: MaskedLM, n: int, *, dataset=None, seed: int = 0) -> tuple[list[Query], list[list[int]]]:
    """``n`` probing sentences with their target ids: from a WNLaMPro file (entries drawn with ``seed``) or, without
    one, hypernym patterns around whole-word vocabulary tokens (target "thing")."""
    rng = np.random.default_rng(seed)
    vocab = lm.whole_words()
    if dataset is not None:
        from ..sources.datasets.wnlampro import read_dataset
        from ..analyses.probing import prepare

        prep = prepare(read_dataset(dataset), lm)
        pairs = [(e.keyword, e.relation, t) for e, t in zip(prep.entries, prep.target_ids)]
    else:
        words = [w for w in vocab if w.isalpha() and w.isascii()]
        pairs = [(words[i], "hypernym", [vocab["thing"]]) for i in rng.permutation(len(words))[:n]]
    pool = [(kw, p, t) for kw, rel, t in pairs for p in patterns_for(rel)]
    chosen = rng.permutation(len(pool))[:n]
    queries = [make_query(lm, pool[i][1], pool[i][0], replace=False) for i in chosen]
    return queries, [pool[i][2] for i in chosen]


def run_probing_bench(model: str, *, dataset=None, n_sentences: int, loop_sample: int, batch_size: int, seed: int,
                      record_path: str | None) -> dict:
    import torch

    lm = load_lm(model)
    queries, targets = benchmark_queries(lm, n_sentences, dataset=dataset, seed=seed)
    sample = min(loop_sample, len(queries))
    answer(lm, queries[:8], None, targets[:8], batch_size=8)  # warm-up
    t_batch, (ranks, _) = timed(lambda: answer(lm, queries, None, targets, batch_size=batch_size))
    t_loop, (ranks_loop, _) = timed(lambda: answer(lm, queries[:sample], None, targets[:sample], batch_size=1,
                                                   full_logits=True))
    agree = float((ranks[:sample] == ranks_loop).mean())
    rate_batch, rate_loop = len(queries) / t_batch, sample / t_loop
    rows = [
        {"method": f"lexprobe: batches of {batch_size}, length-sorted, mask-only logits", "sentences": len(queries),
         "seconds": t_batch, "sentences_per_s": rate_batch},
        {"method": "authors' way: one sentence per pass, full-vocabulary logits", "sentences": sample,
         "seconds": t_loop, "sentences_per_s": rate_loop},
    ]
    notes = [f"model {model}: vocabulary {lm.vocab_size}, torch threads {torch.get_num_threads()}, "
             f"sentences from {dataset or 'hypernym patterns around random vocabulary words'}, seed={seed}",
             f"speed-up: **{rate_batch / rate_loop:.1f}x** sentences/s (floor 10x)",
             f"identical target ranks on the shared sample: {agree:.1%}"]
    md = record(record_path, "bench probing: batched mask-only logits vs one sentence at a time, full logits", rows,
                notes=notes)
    return {"speedup": rate_batch / rate_loop, "agree": agree, "markdown": md}
