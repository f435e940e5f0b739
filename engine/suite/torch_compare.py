"""The torch stages of the main job run two ways on the same inputs (two devices, or two inference dtypes), and how
far their answers agree: token vectors (cosine per target), probing answers (top-1 and top-10 agreement per query,
the MRR difference with its paired bootstrap interval), OTA vectors (cosine, final losses). Each comparison times
both ways on the same inputs, after a warm-up, so its speed ratio is measured in one run.

Used by ``bench perf`` (bfloat16 against float32, :mod:`lexprobe.suite.bench_perf`) and by ``tools/gpu-check.sh``
(the GPU against the CPU, :mod:`lexprobe.suite.gpu_check`). A way is a dict of keyword arguments for the loaders:
``{"device": "cpu", "dtype": "float32"}``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..runs.bench_record import timed


def _label(way: dict) -> str:
    return "/".join(str(way[k]) for k in ("device", "dtype") if k in way) or "default"


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``a`` with the same row of ``b`` (float64; a zero row against a zero row counts 1)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    num = (a * b).sum(1)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    both_zero = (np.linalg.norm(a, axis=1) == 0) & (np.linalg.norm(b, axis=1) == 0)
    return np.where(both_zero, 1.0, np.divide(num, den, out=np.zeros_like(num), where=den > 0))


def compare_encoding(model: str, sentences: Sequence[Sequence[str]], spans: Sequence[Sequence[tuple[int, int]]],
                     first: dict, second: dict, *, threads: int | None = None) -> dict:
    """Token vectors of the target ``spans`` made by :class:`lexprobe.sources.encoder.TokenEncoder` both ways:
    seconds of each, ``speedup`` (first's time / second's), and the cosine of each target's two vectors
    (``min_cosine``, ``mean_cosine``, ``targets``)."""
    from ..sources.encoder import TokenEncoder

    out, vectors = {}, []
    for name, way in (("first", first), ("second", second)):
        encoder = TokenEncoder(model, threads=threads, **way)
        encoder.encode(sentences[:8], spans[:8], desc=f"warm-up {_label(way)}")
        seconds, (vecs, ok, stats) = timed(lambda: encoder.encode(sentences, spans, desc=f"encode {_label(way)}"))
        out[f"{name}_seconds"] = seconds
        out["tokens"] = stats.subword_tokens
        vectors.append((vecs, ok))
    (va, oka), (vb, okb) = vectors
    both = oka & okb
    cos = row_cosines(va[both], vb[both])
    return {**out, "speedup": out["first_seconds"] / out["second_seconds"], "targets": int(both.sum()),
            "min_cosine": float(cos.min()), "mean_cosine": float(cos.mean())}


def probing_queries(lm, entries: Sequence) -> tuple[list, list[list[int]], list, list[list[int]]]:
    """Every pattern of every probed entry as ``lm``'s cloze with the keyword's own tokens (the ``original``
    strategy of :func:`lexprobe.rare_words.probing.probe`): (queries, their targets at the blank, the kept
    entries, their target ids)."""
    from ..rare_words.probing import entry_queries, prepare

    prep = prepare(entries, lm)
    queries, targets = entry_queries(lm, prep, replace=False)
    return queries, targets, prep.entries, prep.target_ids


def compare_probing(model: str, entries: Sequence, first: dict, second: dict, *, batch_size: int = 64,
                    seed: int = 0) -> dict:
    """WNLaMPro probing of ``entries`` (keywords as their own tokens) with :func:`lexprobe.rare_words.language_models
    .load_lm` both ways: seconds of each and ``speedup``; per query the share with the same top-1 answer
    (``top1_agreement``) and the mean overlap of the two top-10 sets (``top10_agreement``); the MRR of each and
    ``mrr_difference`` (second - first) with its paired bootstrap 95% interval (entries resampled within their
    (relation, bucket) cell)."""
    from ..core.intervals import paired_bootstrap
    from ..rare_words.language_models import load_lm
    from ..rare_words.probing import answer
    from ..rare_words.probing_scores import entry_scores

    out, answers = {}, []
    for name, way in (("first", first), ("second", second)):
        lm = load_lm(model, **way)
        queries, targets, kept, target_ids = probing_queries(lm, entries)
        answer(lm, queries[:8], None, targets[:8], batch_size=8, desc="warm-up")
        seconds, (ranks, tops) = timed(lambda: answer(lm, queries, None, targets, batch_size=batch_size,
                                                      desc=f"probe {_label(way)}"))
        scores = entry_scores(np.array([q.entry for q in queries]), ranks, tops, target_ids, len(kept),
                              query_targets=targets)
        out[f"{name}_seconds"] = seconds
        answers.append((tops, scores["rr"]))
    (tops_a, rr_a), (tops_b, rr_b) = answers
    overlap = [len(set(a) & set(b)) / len(a) for a, b in zip(tops_a.tolist(), tops_b.tolist())]
    diff, low, high = paired_bootstrap(rr_b, rr_a, strata=[f"{e.relation}/{e.bucket}" for e in kept], seed=seed)
    return {**out, "speedup": out["first_seconds"] / out["second_seconds"], "queries": len(tops_a),
            "entries": len(kept), "top1_agreement": float((tops_a[:, 0] == tops_b[:, 0]).mean()),
            "top10_agreement": float(np.mean(overlap)), "mrr_first": float(rr_a.mean()),
            "mrr_second": float(rr_b.mean()), "mrr_difference": diff, "mrr_low": low, "mrr_high": high}


def compare_ota(model: str, words: Sequence[str], first: dict, second: dict, *, iterations: int = 100,
                seed: int = 0) -> dict:
    """OTA of ``words`` (:func:`lexprobe.rare_words.ota.approximate`, a fixed number of iterations, no early stop)
    with the model loaded on each way's device (OTA runs in float32 everywhere): seconds of each and ``speedup``;
    the cosine of each word's two vectors (``min_cosine``, ``mean_cosine``) and the largest relative difference of
    the final losses (``max_rel_loss_diff``)."""
    from ..rare_words.ota import approximate
    from ..sources.models import load_encoder, load_tokenizer

    tokenizer = load_tokenizer(model)
    out, results = {}, []
    options = dict(iterations=iterations, patience=None, seed=seed)
    for name, way in (("first", first), ("second", second)):
        encoder = load_encoder(model, device=way.get("device", "auto"))
        approximate(encoder, tokenizer, list(words[:2]), **{**options, "iterations": 5})  # warm-up
        seconds, result = timed(lambda: approximate(encoder, tokenizer, list(words), **options))
        out[f"{name}_seconds"] = seconds
        results.append(result)
    a, b = results
    cos = row_cosines(a.vectors, b.vectors)
    rel = np.abs(a.final_loss - b.final_loss) / np.maximum(np.abs(a.final_loss), 1e-12)
    return {**out, "speedup": out["first_seconds"] / out["second_seconds"], "words": len(words),
            "min_cosine": float(cos.min()), "mean_cosine": float(cos.mean()), "max_rel_loss_diff": float(rel.max())}
