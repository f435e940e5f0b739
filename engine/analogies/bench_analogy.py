"""Benchmark: the whole BATS 3CosAdd test over a words index, against gensim's one-question-at-a-time loop
(``KeyedVectors.most_similar`` on the same vectors, vocabulary restriction and exclusion of a, a*, b).

Three ways to answer in the same run: lexprobe's relation kernel (every question; answers only, as gensim
gives, and, when the analysis ran first, with the gold ranks too), the batched
FAISS search (:func:`lexprobe.analogies.analogy.answer_questions`) on a sample, and gensim on a sample of at least 2,000
questions. Answers are compared on gensim's sample. The achieved GFLOP/s are given against numpy's float32
matrix product on the same machine: real for FAISS (a brute-force product), brute-force-equivalent for the
relation kernel (it does far fewer operations: one product per relation, then element-wise work).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .analogy import run_relations

from ..kinds.analogy_queries import answer_questions
from ..sources.datasets.bats import Relation
from ..kinds.words import WordIndex
from ..runs.bench_record import numpy_gflops, record, timed


def gensim_vectors(words: WordIndex):
    """A gensim KeyedVectors over the same raw vectors and word order as the words index."""
    from gensim.models import KeyedVectors

    kv = KeyedVectors(words.dim)
    kv.add_vectors(words.words, np.asarray(words.raw))
    kv.fill_norms()
    return kv


def gensim_loop(kv, questions: list[tuple[str, str, str]], restrict_vocab: int | None) -> list[str]:
    """gensim's way: one most_similar call per question (a, a*, b excluded by gensim itself)."""
    return [kv.most_similar(positive=[a_star, b], negative=[a], topn=1, restrict_vocab=restrict_vocab)[0][0]
            for a, a_star, b in questions]


def run_analogy_bench(home: Path, words_name: str, relations: list[Relation], *, sample: int, faiss_sample: int,
                      restrict_vocab: int | None, seed: int, record_path: str | None, dataset: str,
                      analysis_seconds: float | None = None) -> dict:
    """Time the three ways (``analysis_seconds``: the same kernel's earlier run with gold ranks, if any)."""
    words = WordIndex.open(words_name, home=home)
    V = len(words.raw) if restrict_vocab is None else min(restrict_vocab, len(words.raw))
    _ = words.unit, words.word_to_id  # build the lookups outside the timings
    t_kernel, run = timed(lambda: run_relations(words, relations, method="add", k=1, restrict_vocab=restrict_vocab,
                                                ranks=False))
    table = run.table
    m = len(table)
    a, a_star, b = (words.ids(table.column(c).to_pylist()) for c in ("a", "a_star", "b"))
    predicted = np.asarray(table.column("prediction").to_pylist(), dtype=object)
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(m, size=min(sample, m), replace=False))
    fpick = np.sort(rng.choice(m, size=min(max(faiss_sample, len(pick)), m), replace=False))
    fpick = np.union1d(fpick, pick)
    answer_questions(words, a[:8], a_star[:8], b[:8], restrict_vocab=restrict_vocab)  # warm-up (subset index, threads)
    t_faiss, (_, I) = timed(lambda: answer_questions(words, a[fpick], a_star[fpick], b[fpick],
                                                     restrict_vocab=restrict_vocab))
    faiss_words = np.asarray(words.words, dtype=object)[I[:, 0]]
    kv = gensim_vectors(words)
    vocab = np.asarray(words.words, dtype=object)
    questions = list(zip(vocab[a[pick]], vocab[a_star[pick]], vocab[b[pick]]))
    gensim_loop(kv, questions[:5], restrict_vocab)  # warm-up
    t_gensim, gensim_answers = timed(lambda: gensim_loop(kv, questions, restrict_vocab))
    gensim_answers = np.asarray(gensim_answers, dtype=object)
    in_faiss = np.searchsorted(fpick, pick)
    agree_kernel = float((predicted[pick] == gensim_answers).mean())
    agree_faiss = float((faiss_words[in_faiss] == gensim_answers).mean())
    flops_per_q = 2.0 * V * words.dim
    peak = numpy_gflops()
    qps = {"kernel": m / t_kernel, "faiss": len(fpick) / t_faiss, "gensim": len(pick) / t_gensim}
    rows = [
        {"method": "lexprobe relation kernel (all questions, answers only)", "questions": m,
         "seconds": t_kernel, "questions_per_s": qps["kernel"], "vs_gensim": qps["kernel"] / qps["gensim"],
         "gflops": m * flops_per_q / t_kernel / 1e9, "same_answers_as_gensim": agree_kernel},
        {"method": "lexprobe batched FAISS flat search", "questions": len(fpick), "seconds": t_faiss,
         "questions_per_s": qps["faiss"], "vs_gensim": qps["faiss"] / qps["gensim"],
         "gflops": len(fpick) * flops_per_q / t_faiss / 1e9, "same_answers_as_gensim": agree_faiss},
        {"method": "gensim most_similar, one question at a time", "questions": len(pick), "seconds": t_gensim,
         "questions_per_s": qps["gensim"], "vs_gensim": 1.0, "gflops": len(pick) * flops_per_q / t_gensim / 1e9,
         "same_answers_as_gensim": 1.0},
    ]
    if analysis_seconds:
        rows.insert(1, {"method": "lexprobe relation kernel (all questions, with gold ranks)", "questions": m,
                        "seconds": analysis_seconds, "questions_per_s": m / analysis_seconds,
                        "vs_gensim": m / analysis_seconds / qps["gensim"],
                        "gflops": m * flops_per_q / analysis_seconds / 1e9, "same_answers_as_gensim": agree_kernel})
    notes = [f"index {words_name}: {len(words.raw)} words x {words.dim} dims, candidates: {V} words; "
             f"dataset {dataset}: {len(relations)} relations, {m} questions (3CosAdd, a, a*, b excluded); seed {seed}",
             f"numpy float32 matrix product on this machine: {peak:.1f} GFLOP/s; gflops column = questions x "
             f"2 x {V} x {words.dim} / seconds (real for FAISS and gensim, brute-force-equivalent for the kernel)",
             f"speed-up of the relation kernel over gensim: **{qps['kernel'] / qps['gensim']:.1f}x** questions/s; "
             f"FAISS: **{qps['faiss'] / qps['gensim']:.1f}x**",
             f"identical answers on gensim's {len(pick)} questions: kernel {agree_kernel:.2%}, FAISS {agree_faiss:.2%}"]
    md = record(record_path, "bench analogy: whole-BATS 3CosAdd vs gensim's one-question loop", rows, notes=notes)
    return {"rows": rows, "markdown": md, "speedup": qps["kernel"] / qps["gensim"], "agree": agree_kernel,
            "agree_faiss": agree_faiss, "numpy_gflops": peak}
