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
    run: Callable[["SuiteRun"], dict]  # returns at least {"speedup": float}


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
        try:
            result = bench.run(ctx)
            ratio, status = float(result["speedup"]), "ok"
            if bench.floor is not None and ratio < bench.floor:
                status = f"below floor {bench.floor:g}x"
        except LexprobeError as exc:
            ratio, status = float("nan"), f"not run: {exc}"
        seconds = time.perf_counter() - t0
        rows.append({"benchmark": bench.name, "lexprobe": bench.lexprobe, "baseline": bench.baseline,
                     "unit": bench.unit, "ratio": ratio, "floor": bench.floor, "status": status,
                     "seconds": round(seconds, 1), "details": f"{bench.name}.md"})
        echo(f"[{bench.name}] {ratio:.1f}x ({status}, {seconds:.0f} s)")
    ctx.out.write_table("perf", rows)
    text = record(results_path, "bench perf: every speed benchmark, ratio against its baseline in the same run",
                  rows, notes=[f"details of each benchmark (this run): {out}/<benchmark>.md",
                               "ratio = lexprobe's rate / the baseline's rate, same machine, same process"])
    ctx.out.write_text("RESULTS.md", text)
    return rows
