"""``lexprobe bench perf``: every speed benchmark in one run, each a ratio against its named baseline measured in
the same process, summarised in one table (``benchmarks/RESULTS.md``) with the command and the machine.

Each benchmark keeps its own detailed record (``RUN_DIR/<name>.md``); sizes are chosen so the whole suite takes
minutes on 2 cores. Indexes are built once under the home and reused.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..core.errors import LexprobeError
from ..core.progress import bar
from ..runs.run_dir import RunDir
from ..runs.bench_record import record


@dataclass
class Benchmark:
    name: str
    lexprobe: str          # what is measured
    baseline: str          # the named baseline it is compared with
    unit: str              # the rate's unit
    floor: float | None    # the floor on the ratio, if any
    run: Callable[["SuiteRun"], dict]  # returns at least {"speedup": float}; "answers": their agreement, if measured


@dataclass
class SuiteRun:
    """What every benchmark of the suite gets: the index home, the run folder, the located datasets, the seed."""

    home: Path
    out: RunDir
    data: dict[str, Path]
    seed: int

    def record_path(self, name: str) -> str:
        return str(self.out.file(f"{name}.md"))


def _glove(ctx: SuiteRun) -> str:
    from ..analogies.run_analogies import glove_word_index

    glove_word_index(ctx.home)
    return "glove"


def _need(ctx: SuiteRun, name: str) -> Path:
    if name not in ctx.data:
        raise LexprobeError(f"dataset {name!r} not found (lexprobe data fetch {name})")
    return ctx.data[name]


def _neighbors(ctx: SuiteRun) -> dict:
    from .bench_neighbors import run_neighbors_bench

    return run_neighbors_bench(ctx.home, _glove(ctx), n_queries=8192, ks=(10,), seed=ctx.seed,
                               record_path=ctx.record_path("neighbors"))


def _analogy(ctx: SuiteRun) -> dict:
    from ..sources.datasets.bats import apply_vocab, read_bats
    from ..kinds.words import WordIndex
    from ..analogies.bench_analogy import run_analogy_bench

    name = _glove(ctx)
    relations, _ = apply_vocab(read_bats(str(_need(ctx, "bats"))), WordIndex.open(name, home=ctx.home).word_to_id)
    return run_analogy_bench(ctx.home, name, relations, sample=2000, faiss_sample=2000, restrict_vocab=None,
                             seed=ctx.seed, record_path=ctx.record_path("analogy"), dataset="bats")


def _offsets(ctx: SuiteRun) -> dict:
    from ..analogies.bench_offsets import run_offsets_bench

    result = run_offsets_bench(ctx.home, _glove(ctx), f"bats:{_need(ctx, 'bats')}", offsets_name="glove-bats-offsets",
                               n_shuffles=50, replicates=10, seed=ctx.seed, pool_size=10_000,
                               out=str(ctx.out.file("offsets-run")), loop_sample=2,
                               record_path=ctx.record_path("offsets"))
    return result


def _encode(ctx: SuiteRun) -> dict:
    from .bench_encode import run_encode_bench

    return run_encode_bench("minilm", f"wsd:{_need(ctx, 'semcor')}", n_sentences=400, seed=ctx.seed,
                            record_path=ctx.record_path("encode"))


def _senses(ctx: SuiteRun) -> dict:
    from ..senses.run_senses import SenseRunOptions, run_senses
    from ..senses.bench_senses import run_ranking_bench

    wsd = _need(ctx, "wsd-eval")
    queries = wsd / "ALL" if (wsd / "ALL").exists() else wsd
    summary = run_senses(ctx.home, f"wsd:{_need(ctx, 'semcor')}", f"wsd:{queries}", [("minilm", None)],
                         ctx.out.file("senses-run"), SenseRunOptions(database_sentences=5000, seed=ctx.seed))
    database, query_instances = summary["instances"]
    return run_ranking_bench(database, query_instances, label="minilm", record_path=ctx.record_path("senses"))


def _ota(ctx: SuiteRun) -> dict:
    from ..rare_words.bench_ota import run_ota_bench

    return run_ota_bench("splade-tiny", n_words=64, loop_words=8, iterations=100, contexts="random", init="mean",
                         lr=3e-3, seed=ctx.seed, record_path=ctx.record_path("ota"))


def _probing(ctx: SuiteRun) -> dict:
    from ..rare_words.bench_probing import run_probing_bench

    return run_probing_bench("splade-tiny", n_sentences=1024, loop_sample=128, batch_size=64, seed=ctx.seed,
                             record_path=ctx.record_path("probing"))


def _am(ctx: SuiteRun) -> dict:
    from ..rare_words.bench_am import run_am_bench

    r = run_am_bench(home=ctx.home, targets=_glove(ctx), corpus=f"wsd:{_need(ctx, 'semcor')}", batches=100,
                     min_count=100, seed=ctx.seed, record_path=ctx.record_path("am"))
    return {**r, "answers": f"mean loss relative difference {r['max_rel_loss_diff']:.1e}; contexts index "
                            f"{r['tokens_per_s']:.0f} tokens/s"}


def _on_one_thread(run: Callable[[], dict]) -> dict:
    """SmolLM2's benchmarks run on one torch thread, both ways: on this shared 2-core machine two spinning
    OpenMP threads made a 135M-parameter model many times slower (the record says the thread count)."""
    from ..sources.models import torch_threads

    with torch_threads(1):
        return run()


def _ota_causal(ctx: SuiteRun) -> dict:
    from ..rare_words.bench_ota import run_ota_bench

    return _on_one_thread(lambda: run_ota_bench(
        "smollm2", n_words=32, loop_words=4, iterations=10, contexts="random", init="mean", lr=3e-3, seed=ctx.seed,
        record_path=ctx.record_path("ota-smollm2")))


def _probing_causal(ctx: SuiteRun) -> dict:
    from ..rare_words.bench_probing import run_probing_bench

    return _on_one_thread(lambda: run_probing_bench(
        "smollm2", n_sentences=1024, loop_sample=64, batch_size=64, seed=ctx.seed,  # 256/24 swung 9-13x
        record_path=ctx.record_path("probing-smollm2")))


def _bf16_encode(ctx: SuiteRun) -> dict:
    """MiniLM token vectors of SemCor sentences in bfloat16 autocast against float32 (the same encoder settings,
    sentences and threads): tokens/s ratio and each target's cosine to its float32 vector."""
    from ..sources.datasets.corpora import read_corpus
    from .bench_encode import sample_sentences
    from .torch_compare import compare_encoding

    sentences, spans = sample_sentences(read_corpus(f"wsd:{_need(ctx, 'semcor')}"), 400, ctx.seed)
    r = compare_encoding("minilm", sentences, spans, {"dtype": "float32"}, {"dtype": "bfloat16"})
    rows = [{"dtype": d, "seconds": r[f"{w}_seconds"], "tokens_per_s": r["tokens"] / r[f"{w}_seconds"]}
            for d, w in (("float32", "first"), ("bfloat16", "second"))]
    record(ctx.record_path("bf16-encode"), "bench perf bf16-encode: MiniLM token vectors, bfloat16 vs float32", rows,
           notes=[f"{len(sentences)} SemCor sentences (seed {ctx.seed}), {r['targets']} targets, {r['tokens']} "
                  f"subword tokens; speed ratio **{r['speedup']:.2f}x**",
                  f"cosine of each target's bfloat16 vector to its float32 vector: min **{r['min_cosine']:.5f}**, "
                  f"mean {r['mean_cosine']:.6f}"])
    return {**r, "answers": f"token-vector cosine to float32: min {r['min_cosine']:.5f}, mean {r['mean_cosine']:.6f}"}


def _bf16_probing(model: str, ctx: SuiteRun) -> dict:
    """WNLaMPro probing (keywords as their own tokens) in bfloat16 autocast against float32 on the same sample:
    sentences/s ratio, top-1 and top-10 agreement of the answers, the MRR difference with its paired interval."""
    from ..rare_words.probing import select
    from ..rare_words.wnlampro_build import build_wnlampro
    from .torch_compare import compare_probing

    entries = select(build_wnlampro(model, seed=ctx.seed, home=ctx.home), limit=25, seed=ctx.seed)
    r = compare_probing(model, entries, {"dtype": "float32"}, {"dtype": "bfloat16"}, seed=ctx.seed)
    rows = [{"dtype": d, "seconds": r[f"{w}_seconds"], "sentences_per_s": r["queries"] / r[f"{w}_seconds"],
             "mrr": r[f"mrr_{w}"]} for d, w in (("float32", "first"), ("bfloat16", "second"))]
    record(ctx.record_path(f"bf16-probing-{model}"), f"bench perf bf16-probing: {model}, bfloat16 vs float32", rows,
           notes=[f"WNLaMPro for {model} built from WordNet, 25 entries per relation (seed {ctx.seed}): "
                  f"{r['entries']} entries, {r['queries']} sentences; speed ratio **{r['speedup']:.2f}x**",
                  f"same top-1 answer: **{r['top1_agreement']:.1%}** of the sentences; top-10 overlap "
                  f"**{r['top10_agreement']:.1%}**",
                  f"MRR bfloat16 - float32: **{r['mrr_difference']:+.4f}** (paired bootstrap 95% interval "
                  f"{r['mrr_low']:+.4f} to {r['mrr_high']:+.4f})"])
    return {**r, "answers": f"top-1 {r['top1_agreement']:.1%}, top-10 {r['top10_agreement']:.1%} as float32; MRR "
                            f"{r['mrr_difference']:+.4f} [{r['mrr_low']:+.4f}, {r['mrr_high']:+.4f}]"}


BENCHMARKS = [
    Benchmark("neighbors", "exact top-k kernel, k=10, 400k GloVe", "FAISS IndexFlatIP, one large batch",
              "queries/s", 2.0, _neighbors),
    Benchmark("analogy", "BATS 3CosAdd kernel, 400k GloVe", "gensim most_similar, one question at a time",
              "questions/s", 20.0, _analogy),
    Benchmark("offsets", "Table 1 OCS/PCS, vectorised", "per-pair Python loop (the paper's scripts)",
              "relations/s", None, _offsets),
    Benchmark("encode", "length-sorted batched MiniLM encoder", "one sentence at a time (the paper's code)",
              "tokens/s", 2.0, _encode),
    Benchmark("senses", "sense ranking grouped by lemma", "one query at a time", "queries/s", None, _senses),
    Benchmark("ota", "batched OTA (many words per batch)", "one word at a time, same settings", "words/s", 10.0,
              _ota),
    Benchmark("probing", "batched, mask-only MLM logits", "one sentence at a time, full-vocabulary logits",
              "sentences/s", 10.0, _probing),
    Benchmark("ota-smollm2", "batched OTA on the causal SmolLM2-135M", "one word at a time, same settings",
              "words/s", 10.0, _ota_causal),
    Benchmark("probing-smollm2", "batched next-token probing on SmolLM2-135M, shared prefixes, last-position logits",
              "one sentence at a time, full-vocabulary logits at every position", "sentences/s", 10.0,
              _probing_causal),
    Benchmark("am", "batched AM training (v_C once, padded tensors), GloVe targets, SemCor contexts, min count 100",
              "instance at a time (the authors' batch builder)", "instances/s", 10.0, _am),
    Benchmark("bf16-encode", "MiniLM token encoding, bfloat16 autocast", "float32, same sentences", "tokens/s",
              None, _bf16_encode),
    Benchmark("bf16-probing", "SPLADE-tiny WNLaMPro probing, bfloat16 autocast", "float32, same sentences",
              "sentences/s", None, lambda ctx: _bf16_probing("splade-tiny", ctx)),
    Benchmark("bf16-probing-smollm2", "SmolLM2 WNLaMPro probing, bfloat16 autocast", "float32, same sentences",
              "sentences/s", None, lambda ctx: _on_one_thread(lambda: _bf16_probing("smollm2", ctx))),
]


def run_perf(home: Path, out: str | Path, data: dict[str, Path], *, seed: int = 0, only: list[str] | None = None,
             results_path: str | None = "benchmarks/RESULTS.md", echo: Callable[[str], None] = print) -> list[dict]:
    """Run the benchmarks (all, or ``only``) and write the summary table; a failing one is reported, not fatal."""
    chosen = [b for b in BENCHMARKS if not only or b.name in only]
    if only and len(chosen) != len(set(only)):
        unknown = set(only) - {b.name for b in BENCHMARKS}
        raise LexprobeError(f"unknown benchmark(s) {', '.join(sorted(unknown))} "
                            f"(choose from {', '.join(b.name for b in BENCHMARKS)})")
    ctx = SuiteRun(Path(home), RunDir(out), data, seed)
    rows = []
    for bench in bar(chosen, desc="bench perf", unit="benchmark"):
        echo(f"[{bench.name}] {bench.lexprobe} vs {bench.baseline}")
        t0 = time.perf_counter()
        answers = ""
        try:
            result = bench.run(ctx)
            ratio, status, answers = float(result["speedup"]), "ok", result.get("answers", "")
            if bench.floor is not None and ratio < bench.floor:
                status = f"below floor {bench.floor:g}x"
        except LexprobeError as exc:
            ratio, status = float("nan"), f"not run: {exc}"
        seconds = time.perf_counter() - t0
        rows.append({"benchmark": bench.name, "lexprobe": bench.lexprobe, "baseline": bench.baseline,
                     "unit": bench.unit, "ratio": ratio, "floor": bench.floor, "status": status,
                     "seconds": round(seconds, 1), "answers": answers, "details": f"{bench.name}.md"})
        echo(f"[{bench.name}] {ratio:.1f}x ({status}, {seconds:.0f} s)")
    ctx.out.write_table("perf", rows)
    text = record(results_path, "bench perf: every speed benchmark, ratio against its baseline in the same run",
                  rows, notes=[f"details of each benchmark (this run): {out}/<benchmark>.md",
                               "ratio = lexprobe's rate / the baseline's rate, same machine, same process"])
    ctx.out.write_text("RESULTS.md", text)
    return rows
