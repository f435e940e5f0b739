"""Benchmark: token-embedding throughput of the batched, length-sorted :class:`lexprobe.sources.encoder.TokenEncoder`
against one sentence per forward pass (the way the paper's code embeds a corpus), same model, same sentences,
same pooling, in one run; plus the achieved model GFLOP/s against numpy's float32 matrix product.

GFLOP/s = 2 x (parameters a token passes through: all but the embedding tables and the pooler) x (real subword
tokens, padding not counted) / seconds. Attention-score FLOPs (about 4 x layers x width x length per token) are
left out, so this slightly understates the work done; padding the batched encoder computes is not credited.
Optionally (``build_index``) times a whole token-index build of the corpus, end to end.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from ..sources.datasets.corpora import read_corpus
from ..sources.datasets.corpus import Corpus
from ..sources.encoder import TokenEncoder
from ..runs.bench_record import numpy_gflops, record, timed


def one_sentence_at_a_time(encoder: TokenEncoder, sentences: Sequence[Sequence[str]],
                           spans: Sequence[Sequence[tuple[int, int]]]) -> np.ndarray:
    """The baseline: per sentence, tokenise, run the model on that sentence alone, pool each target. Like the
    paper's code it truncates at the model's limit, so its vectors match lexprobe's where sentences fit (all of
    SemCor's do; lexprobe reads longer ones in windows)."""
    import torch

    from ..sources.models import inference_dtype

    out = []
    layers = list(encoder.layers)
    with torch.inference_mode(), inference_dtype(encoder.device, encoder.dtype):
        for words, targets in zip(sentences, spans):
            enc = encoder.tokenizer(list(words), is_split_into_words=True, truncation=True,
                                    max_length=encoder.max_length, return_tensors="pt")
            hidden = encoder._hidden(enc["input_ids"].to(encoder.device), enc["attention_mask"].to(encoder.device),
                                     layers)[0].float().cpu()
            word_ids = np.array([-1 if w is None else w for w in enc.word_ids()])
            for position, length in targets:
                idx = np.flatnonzero((word_ids >= position) & (word_ids < position + length))
                chosen = {"mean": idx, "first": idx[:1], "last": idx[-1:]}[encoder.pooling]
                out.append(hidden[torch.from_numpy(chosen)].mean(0).numpy())
    return np.stack(out)


def sample_sentences(corpus: Corpus, n: int, seed: int) -> tuple[list[list[str]], list[list[tuple[int, int]]]]:
    """``n`` random sentences that hold targets (seeded), with their target spans."""
    targets = corpus.targets
    by_sentence: dict[str, list[tuple[int, int]]] = {}
    for s, p, k in zip(targets.column("sentence_id").to_pylist(), targets.column("position").to_pylist(),
                       targets.column("length").to_pylist()):
        by_sentence.setdefault(s, []).append((p, k))
    ids = corpus.sentences.column("sentence_id").to_pylist()
    rows = [i for i, s in enumerate(ids) if s in by_sentence]
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(len(rows), size=min(n, len(rows)), replace=False).tolist())
    words = corpus.sentences.column("words")
    return ([words[rows[c]].as_py() for c in chosen], [by_sentence[ids[rows[c]]] for c in chosen])


def run_encode_bench(model: str, corpus_spec: str, *, layers=None, pooling: str = "mean", batch_tokens: int = 512,
                     threads: int | None = None, n_sentences: int = 400, seed: int = 0,
                     record_path: str | None = None, build_index: tuple[Path, str] | None = None,
                     device="auto", dtype="float32") -> dict:
    corpus = read_corpus(corpus_spec)
    encoder = TokenEncoder(model, layers=layers, pooling=pooling, batch_tokens=batch_tokens, threads=threads,
                           device=device, dtype=dtype)
    sentences, spans = sample_sentences(corpus, n_sentences, seed)
    encoder.encode(sentences[:16], spans[:16])  # warm-up
    t_batch, (vectors, ok, stats) = timed(lambda: encoder.encode(sentences, spans))
    t_loop, baseline = timed(lambda: one_sentence_at_a_time(encoder, sentences, spans))
    tokens = stats.subword_tokens
    diff = float(np.abs(vectors[ok] - baseline[ok]).max()) if ok.any() else float("nan")
    flops_per_token = 2 * encoder.parameters
    yardstick = numpy_gflops()
    gf_batch, gf_loop = flops_per_token * tokens / t_batch / 1e9, flops_per_token * tokens / t_loop / 1e9
    rows = [
        {"method": f"lexprobe batched, length-sorted ({batch_tokens} tokens/batch)", "sentences": len(sentences),
         "tokens": tokens, "seconds": t_batch, "tokens_per_s": tokens / t_batch, "model_gflops": gf_batch},
        {"method": "one sentence per forward pass (paper's code)", "sentences": len(sentences), "tokens": tokens,
         "seconds": t_loop, "tokens_per_s": tokens / t_loop, "model_gflops": gf_loop},
        {"method": "numpy float32 matmul 1024^3 (yardstick)", "model_gflops": yardstick},
    ]
    notes = [f"model {model} on {encoder.device} ({encoder.dtype_name}): {encoder.parameters:,} non-embedding "
             f"parameters, layers {list(encoder.layers)}, "
             f"{pooling} pooling; corpus {corpus_spec}, {len(sentences)} sentences sampled with seed {seed}, "
             f"{len(vectors)} targets; padding {stats.padded_tokens / tokens - 1:.1%} of real tokens in "
             f"{stats.batches} batches",
             f"speed-up: **{t_loop / t_batch:.1f}x** tokens/s (floor 2x)",
             f"model GFLOP/s = 2 x non-embedding parameters x real tokens / s (attention scores not counted): "
             f"**{gf_batch / yardstick:.0%}** of numpy's float32 matmul (aim: 50%)",
             f"largest difference between the two methods' vectors: {diff:.2e}",
             "load average (1, 5, 15 min) at the end of the timed part: "
             + ", ".join(f"{x:.1f}" for x in os.getloadavg()) + " (the machine is shared; a load above the core "
             "count slows every row alike)"]
    result = {"speedup": t_loop / t_batch, "gflops": gf_batch, "numpy_gflops": yardstick, "max_diff": diff}
    if build_index is not None:
        from ..kinds.tokens import build_token_index

        home, name = build_index
        summary = build_token_index(name, model, corpus_spec, home=home, layers=layers, pooling=pooling,
                                    batch_tokens=batch_tokens, threads=threads, device=device, dtype=dtype)
        e = summary["encode"]
        rows.append({"method": f"whole index build of {corpus_spec} (read, encode, shards, FAISS)",
                     "sentences": summary["sentences"], "tokens": e.subword_tokens, "seconds": summary["seconds"],
                     "tokens_per_s": e.subword_tokens / summary["seconds"]})
        notes.append(f"whole build: {summary['targets']:,} targets of {summary['sentences']:,} sentences in "
                     f"**{summary['seconds'] / 60:.1f} min** (limit 15 min); encoding alone {e.seconds:.0f} s at "
                     f"{e.tokens_per_s:.0f} tokens/s")
        result["build_seconds"] = summary["seconds"]
    result["markdown"] = record(record_path, "bench encode: batched token encoder vs one sentence at a time", rows,
                                notes=notes)
    return result
