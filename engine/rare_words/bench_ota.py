"""Benchmark: OTA words/s, one batch of many words against one word at a time, on the same model, words,
settings and iterations in one run; the final losses of the shared words must agree (same random contexts:
each word's draws come from its own seed)."""

from __future__ import annotations

import numpy as np

from ..core.errors import LexprobeError
from ..runs.bench_record import record, timed


def multi_token_words(tokenizer, n: int, seed: int, pool: int = 30000) -> list[str]:
    """``n`` frequent English words (wordfreq's top ``pool``, ASCII letters) the tokenizer splits in 2+ pieces."""
    try:
        from wordfreq import top_n_list
    except ImportError:
        raise LexprobeError("bench ota draws its words from wordfreq (pip install 'lexprobe[wordnet]')") from None
    from .ota import word_pieces

    candidates = [w for w in top_n_list("en", pool) if w.isascii() and w.isalpha()]
    multi = [w for w, p in zip(candidates, word_pieces(tokenizer, candidates)) if len(p) > 1]
    if len(multi) < n:
        raise LexprobeError(f"only {len(multi)} multi-token words among wordfreq's top {pool}, {n} asked")
    pick = np.random.default_rng(seed).choice(len(multi), size=n, replace=False)
    return [multi[i] for i in sorted(pick)]


def run_ota_bench(model_name: str, *, n_words: int, loop_words: int, iterations: int, contexts: str, init: str,
                  lr: float, seed: int, record_path: str | None, device="auto") -> dict:
    from ..sources.models import load_encoder, load_tokenizer
    from .ota import approximate

    tokenizer, model = load_tokenizer(model_name), load_encoder(model_name, device=device)
    words = multi_token_words(tokenizer, n_words, seed)
    options = dict(iterations=iterations, contexts=contexts, init=init, lr=lr, seed=seed, patience=None)
    approximate(model, tokenizer, words[:2], **{**options, "iterations": 5})  # warm-up
    t_batch, batched = timed(lambda: approximate(model, tokenizer, words, batch_size=n_words, **options))
    sample = words[:min(loop_words, n_words)]
    t_loop, single = timed(lambda: [approximate(model, tokenizer, [w], batch_size=1, **options) for w in sample])
    single_loss = np.array([r.final_loss[0] for r in single])
    batch_loss = batched.final_loss[:len(sample)]
    rel = np.abs(batch_loss - single_loss) / np.maximum(np.abs(single_loss), 1e-12)
    wps_batch, wps_loop = len(words) / t_batch, len(sample) / t_loop
    rows = [{"method": f"lexprobe OTA, one batch of {len(words)} words", "words": len(words), "seconds": t_batch,
             "words_per_s": wps_batch, "mean_final_loss": float(batch_loss.mean())},
            {"method": "one word at a time (the authors' way)", "words": len(sample), "seconds": t_loop,
             "words_per_s": wps_loop, "mean_final_loss": float(single_loss.mean())}]
    notes = [f"model {model_name} on {model.device}; {iterations} iterations, contexts {contexts}, init {init}, lr {lr}, seed {seed}, "
             f"no early stop; words: wordfreq top-30k words split into 2+ pieces",
             f"speed-up: **{wps_batch / wps_loop:.1f}x** words/s; per word and iteration: batched "
             f"{1000 * t_batch / (len(words) * iterations):.0f} ms, one at a time "
             f"{1000 * t_loop / (len(sample) * iterations):.0f} ms",
             f"final loss (mean of the last 50 iterations) on the {len(sample)} shared words: largest relative "
             f"difference batched vs one at a time **{rel.max():.2e}**"]
    md = record(record_path, "bench ota: batched OTA vs one word at a time", rows, notes=notes)
    return {"speedup": wps_batch / wps_loop, "max_rel_loss_diff": float(rel.max()), "markdown": md}
