"""The runs of "Rare words" (Schick & Schütze): the single-token recovery check of OTA (Figure 1) and WNLaMPro
(built from WordNet, probed with a masked LM: Tables 2-4, Figure 2), each written into a run folder.

One runner per run, shared by the command line (``lexprobe run ota-recovery``, ``run wnlampro``,
``data build-wnlampro``) and the main job's ``ota`` and ``wnlampro`` stages (:func:`ota_stage`,
:func:`wnlampro_stage`). The computations are in :mod:`lexprobe.rare_words.ota_recovery`,
:mod:`lexprobe.rare_words.probing` and :mod:`lexprobe.rare_words.wnlampro_build`.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from .ota import DEFAULTS as OTA_DEFAULTS
from .probing import WNLaMProScores
from ..core.errors import LexprobeError
from ..core.formatting import markdown_table
from ..sources.datasets.wnlampro import BUCKETS, DATASET_FILE, Entry, estimated_count, zipf
from ..runs.plots import bar_chart, line_plot
from ..runs.report import Image, Section, Table
from ..runs.run_dir import RunDir
from ..sources.models import torch_threads

OTA_TITLE = "One-token approximation: single-token recovery (Figure 1)"
WNLAMPRO_TITLE = "WNLaMPro probing by frequency and keyword strategy (Tables 2-4, Figure 2)"




# ------------------------------------------------------------------------------------------- OTA recovery


def run_ota_recovery(model: str, out: str | Path, *, n_words: int, iterations: int,
                     contexts: Sequence[str] = ("static", "random"), inits: Sequence[str] = ("zeros",),
                     lrs: Sequence[float] = (1e-3,), every: int = 50, layers="all",
                     patience: int = OTA_DEFAULTS["patience"], tol: float = OTA_DEFAULTS["tol"],
                     batch_size: int = 256, seed: int = 0, threads: int | None = None, device="auto",
                     contexts_side_by_side: bool = False) -> dict:
    """The single-token recovery check (:func:`lexprobe.rare_words.ota_recovery.run_recovery`) of ``model`` on
    ``device`` (float32, as OTA always runs) written into ``out``: ``curve`` and ``summary`` tables (Parquet +
    markdown), ``words.json`` and ``recovery.png`` (one curve per setting, named by its context variant alone when
    only one init and rate ran). Returns the recovery's result plus ``png`` (the plot's path).
    ``contexts_side_by_side``: the context variants run at once in worker processes of ``threads`` (default 1)
    torch threads each (:func:`lexprobe.sources.models.in_processes`), with the same numbers."""
    from .ota_recovery import merge_recovery, run_recovery
    from ..sources.models import in_processes, load_encoder, load_tokenizer

    bad = [c for c in contexts if c not in ("static", "random")] + [i for i in inits if i not in ("zeros", "mean")]
    if bad:
        raise LexprobeError(f"unknown context variant or init: {', '.join(bad)}")
    options = dict(n_words=n_words, iterations=iterations, inits=inits, lrs=lrs, every=every, layers=layers,
                   seed=seed, batch_size=batch_size, patience=patience, tol=tol)
    if contexts_side_by_side:
        res = merge_recovery(in_processes([(recovery_part_of, (model, ctx, device), options) for ctx in contexts],
                                          threads=threads or 1))
    else:
        tokenizer, encoder = load_tokenizer(model), load_encoder(model, device=device)
        with torch_threads(threads):
            res = run_recovery(encoder, tokenizer, contexts=contexts, **options)
    run = RunDir(out)
    run.write_table("curve", res["curve"])
    run.write_table("summary", res["summary"])
    run.write_json("words.json", {"model": model, "seed": seed, "words": res["words"]})
    one_setting = len(inits) * len(lrs) == 1
    curves: dict[str, list[float]] = {}
    for r in res["curve"]:
        label = r["contexts"] if one_setting else f"{r['contexts']} {r['init']} lr={r['lr']:g}"
        curves.setdefault(label, []).append(r["mean_cos_distance"])
    png = line_plot(run.file("recovery.png"), sorted({r["iteration"] for r in res["curve"]}), curves,
                    title=f"OTA recovery of {n_words} one-token words ({model})", xlabel="iteration",
                    ylabel="mean cosine distance to e(w)")
    return {**res, "png": png}


def recovery_part_of(model: str, ctx: str, device="auto", **options) -> dict:
    """:func:`lexprobe.rare_words.ota_recovery.recovery_part` of the model named ``model`` (loaded here: a worker
    process's call)."""
    from .ota_recovery import recovery_part
    from ..sources.models import load_encoder, load_tokenizer

    return recovery_part(load_encoder(model, device=device), load_tokenizer(model), ctx, **options)


def ota_stage(run_dir: RunDir, settings) -> Section:
    """The main job's single-token recovery (Figure 1) on the packaged MiniLM: :func:`run_ota_recovery`.

    Runs on one torch thread per context variant, the two variants side by side in two worker processes: its
    batches are tiny (a few short sequences), and on a busy 2-core machine two OpenMP threads spinning against
    each other made one process about 10 times slower (``benchmarks/main-job.md``).
    """
    from .rare_word_claims import ota_recovery

    n_words, iterations = (8, 200) if settings.quick else (16, 600)
    res = run_ota_recovery("minilm", run_dir.path, n_words=n_words, iterations=iterations,
                           contexts=("static", "random"), every=50, seed=settings.seed, threads=1,
                           device=settings.device, contexts_side_by_side=True)
    section = Section("ota", OTA_TITLE, "rare-words")
    section.findings.append(ota_recovery(res["summary"], section=section.key))
    section.tables.append(Table(
        "Mean cosine distance to the true embedding: start, end, and iterations to 95% of the final quality",
        res["summary"], ["contexts", "init", "lr", "start", "end", "best_iteration", "its_to_95", "stop_it"]))
    section.images.append(Image("recovery.png", "Figure 1: mean cosine distance to e(w) against iterations"))
    section.settings = {"model": "minilm", "words": f"{n_words} one-token words (seed {settings.seed})",
                        "iterations": iterations, "init": "zeros", "lr": 1e-3}
    return section


# ------------------------------------------------------------------------------------------------ WNLaMPro


def _annotated(word: str, pos: str, z: float, count: int) -> str:
    return f"{word} ({pos or '-'},{z:g},{count})"


def write_dataset(entries: Sequence[Entry], out: str | Path) -> dict[str, Path]:
    """``<out>/wnlampro.jsonl``, ``wnlampro.parquet``, the authors' ``WNLaMPro.txt`` format, ``table4`` and
    ``table4_vs_paper`` (the rebuilt Table 4 beside the paper's, with ratios)."""
    import pyarrow as pa

    from .wnlampro_build import table4, table4_against_paper

    run = RunDir(out)
    rows = [asdict(e) for e in entries]
    paths = {"jsonl": run.write_text(DATASET_FILE, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))}
    paths["parquet"] = run.write_table("wnlampro", pa.Table.from_pylist(rows), markdown=False)
    lines = []
    for e in entries:
        targets = [_annotated(t, e.pos, round(zipf(t), 2), estimated_count(round(zipf(t), 2))) for t in e.targets]
        lines.append("\t".join([str(e.id), e.split, _annotated(e.keyword, e.pos, e.zipf, e.count), e.relation]
                               + targets))
    paths["txt"] = run.write_text("WNLaMPro.txt", "\n".join(lines) + "\n")
    paths["table4"] = run.write_table("table4", table4(entries))
    paths["table4_vs_paper"] = run.write_table("table4_vs_paper", table4_against_paper(entries))
    return paths


def run_wnlampro(model: str, dataset, out: str | Path, *, strategies: Sequence[str] = ("original",),
                 split: str = "all", relations: Sequence[str] = (), limit: int | None = None, cutoff: int = 100,
                 batch_size: int = 64, ota_iterations: int | None = None, seed: int = 0,
                 threads: int | None = None, device="auto", dtype="float32", providers=None, policy=None) -> dict:
    """Probe a WNLaMPro file with ``model`` on ``device``, inference in ``dtype`` (OTA in float32)
    (:func:`probe_wnlampro`) and write the run folder ``out`` (:func:`write_wnlampro`). Returns the ``summary``
    and the side-by-side table as ``markdown``."""
    from ..sources.datasets.wnlampro import read_dataset

    result = probe_wnlampro(model, read_dataset(dataset), dataset=str(dataset), strategies=strategies, split=split,
                            relations=relations, limit=limit, cutoff=cutoff, batch_size=batch_size,
                            ota_iterations=ota_iterations, seed=seed, threads=threads, device=device, dtype=dtype,
                            providers=providers, policy=policy)
    write_wnlampro(result, out)
    return {"summary": result.summary, "markdown": markdown_table(result.wide)}


def probe_wnlampro(model: str, entries: Sequence[Entry], *, dataset: str, strategies: Sequence[str] = ("original",),
                   split: str = "all", relations: Sequence[str] = (), limit: int | None = None, cutoff: int = 100,
                   batch_size: int = 64, ota_iterations: int | None = None, seed: int = 0,
                   threads: int | None = None, device="auto", dtype="float32", providers=None,
                   policy=None, ota_batch_threads: int = 1) -> WNLaMProScores:
    """WNLaMPro ``entries`` (those of ``split`` and ``relations``, at most ``limit`` per relation) probed with
    ``model`` (:func:`lexprobe.rare_words.probing.probe_tables`; ``dataset`` names where the entries came from in
    the summary); ``providers`` (the AM strategies' keyword vectors), ``policy`` and ``ota_batch_threads`` as
    there. Writes nothing."""
    from .language_models import load_lm
    from .probing import population_of, probe_tables, select

    every = select(entries, split=split, relations=relations)
    chosen = select(every, limit=limit, seed=seed)
    if not chosen:
        raise LexprobeError(f"{dataset}: no entries for split {split!r} and relations {list(relations) or 'all'}")
    with torch_threads(threads):
        result = probe_tables(chosen, load_lm(model, device=device, dtype=dtype), strategies=strategies,
                              cutoff=cutoff, batch_size=batch_size, ota_iterations=ota_iterations, seed=seed,
                              population=population_of(every) if limit is not None else None,
                              providers=providers, policy=policy, ota_batch_threads=ota_batch_threads)
    result.summary.update({"model": model, "dataset": dataset, "split": split, "limit": limit, "seed": seed,
                           **({"dtype": dtype} if dtype != "float32" else {})})
    return result


def write_wnlampro(result: WNLaMProScores, out: str | Path) -> None:
    """The run folder of :func:`probe_wnlampro`'s ``result``: ``entries.parquet`` (one row per strategy and entry),
    ``by_bucket`` and ``overall`` (long), ``table.md`` (strategies side by side), ``figure2.png``,
    ``summary.json``."""
    summary, overall = result.summary, result.overall
    run = RunDir(out)
    run.write_table("entries", result.rows, markdown=False)
    run.write_table("by_bucket", result.by_bucket)
    run.write_table("overall", overall)
    run.write_text("table.md", markdown_table(result.wide) + "\n")
    run.write_json("summary.json", summary)
    labels = [b for b in BUCKETS + ("all",) if any(r["bucket"] == b for r in overall)]
    series = {s: [next((r["mrr"] for r in overall if r["strategy"] == s and r["bucket"] == b), 0.0) for b in labels]
              for s in summary["strategies"]}
    series["random"] = [summary["random_mrr_by_bucket"].get(b, 0.0) for b in labels]
    bar_chart(run.file("figure2.png"), labels, series, ylabel="MRR",
              title=f"WNLaMPro MRR by keyword frequency ({summary['model']}, {summary['split']})")


# Models of the WNLaMPro stage, the masked and the causal one, each with (entries per relation, OTA iterations) for
# --quick and for the full run. SmolLM2 (135M parameters, 30 layers) costs about 100 times SPLADE-tiny per token:
# its sample and OTA are small so that the whole main job stays within 15 minutes on 2 cores (README). Its OTA:
# MRR .089 at 20 iterations, .109 at 60; 32 entries a relation bring OTA's paired interval against the best
# baseline to about +-.04 (16: +-.05).
STAGE_MODELS = {"splade-tiny": {"quick": (40, 100), "full": (200, 400)},
                "smollm2": {"quick": (6, 10), "full": (32, 60)}}
STAGE_STRATEGIES = ("original", "ota", "first", "last", "avg")


def stage_probe(model: str, dataset: str, *, quick: bool, seed: int, home, device="auto", dtype="float32",
                ota_batch_threads: int = 1) -> dict:
    """What one model of the WNLaMPro stage computes, writing nothing (a worker process's call): WNLaMPro built
    from WordNet for its vocabulary (``entries``) and probed with every strategy (:func:`probe_wnlampro`'s
    ``result``; ``dataset`` is where the stage writes the entries), OTA's batches ``ota_batch_threads`` at once."""
    from .wnlampro_build import build_wnlampro

    limit, ota_iterations = STAGE_MODELS[model]["quick" if quick else "full"]
    entries = build_wnlampro(model, seed=seed, home=home)
    result = probe_wnlampro(model, entries, dataset=dataset, strategies=STAGE_STRATEGIES, limit=limit,
                            ota_iterations=ota_iterations, seed=seed, device=device, dtype=dtype,
                            ota_batch_threads=ota_batch_threads)
    return {"entries": entries, "result": result}


def _stage_model(run_dir: RunDir, settings, model: str, computed: dict) -> dict:
    """One model of the WNLaMPro stage written into ``<stage>/<model>/`` from :func:`stage_probe`'s ``computed``;
    returns what the stage's tables need."""
    from .probing_scores import bucket_gap, compare_strategies

    limit, ota_iterations = STAGE_MODELS[model]["quick" if settings.quick else "full"]
    folder = run_dir.path / model
    entries, result = computed["entries"], computed["result"]
    result.summary["dataset"] = str(write_dataset(entries, folder / "dataset")["jsonl"])
    write_wnlampro(result, folder)
    overall = {(r["strategy"], r["bucket"]): r["mrr"] for r in result.overall}
    mrr = lambda s, b: overall.get((s, b), float("nan"))  # noqa: E731
    best = max(("first", "last", "avg"), key=lambda s: mrr(s, "all"))
    population = result.population
    return {"model": model, "entries": entries, "result": result, "limit": limit, "ota_iterations": ota_iterations,
            "mrr": mrr, "best": best,
            "gap": compare_strategies(result.rows, "ota", best, population=population, seed=settings.seed),
            "frequency": {s: bucket_gap(result.rows, s, "frequent", "rare", population=population,
                                        seed=settings.seed) for s in STAGE_STRATEGIES}}


def _with_intervals(run: dict, seed: int) -> list[dict]:
    """The by-relation-and-bucket table of one model with a 95% bootstrap interval of each MRR."""
    from .probing_scores import mrr_interval

    out = []
    for r in run["result"].by_bucket:
        _, low, high = mrr_interval(run["result"].rows, r["strategy"], relation=r["relation"],
                                    bucket=r["bucket"], population=run["result"].population, seed=seed)
        head = {k: r[k] for k in ("strategy", "relation", "bucket", "n", "mrr")}
        out.append({"model": run["model"], **head, "mrr_low": low, "mrr_high": high,
                    **{k: v for k, v in r.items() if k not in head}})
    return out


def wnlampro_stage(run_dir: RunDir, settings) -> Section:
    """Build WNLaMPro from WordNet for the packaged masked LM (SPLADE-tiny) and the packaged causal LM (SmolLM2)
    and probe each with every keyword strategy (:func:`run_wnlampro`): Table 4 per model, Figure 2 with both,
    the frequency effect and OTA against the subword baselines with bootstrap intervals, MRR by relation and
    bucket with intervals.

    A sample of entries per relation (``STAGE_MODELS``, seeded) and a short OTA keep the stage within minutes. Both
    cores work: the two models are built and probed side by side, each in a worker process on one torch thread
    (:func:`lexprobe.sources.models.in_processes`), and the causal model's OTA (nearly all of the stage) runs its
    batches on every usable core at once (``batch_threads``: once the masked model is done, both cores are its);
    then everything is written here. The same numbers as one after the other on one thread: each batch and each
    model computes what it computes alone (checked: ``benchmarks/main-job.md``).
    """
    from .rare_word_claims import frequency_effect, ota_vs_baselines, table4 as table4_finding
    from .wnlampro_build import table4, table4_against_paper
    from ..core.cores import usable_cores
    from ..sources.models import in_processes

    options = {"quick": settings.quick, "seed": settings.seed, "home": settings.home, "device": settings.device,
               "dtype": settings.dtype}
    batch_threads = {"smollm2": usable_cores()}  # the causal model's OTA: the dearest part by far
    computed = in_processes([(stage_probe, (model, str(run_dir.path / model / "dataset" / DATASET_FILE)),
                              {**options, "ota_batch_threads": batch_threads.get(model, 1)}) for model in STAGE_MODELS])
    runs = [_stage_model(run_dir, settings, model, c) for model, c in zip(STAGE_MODELS, computed)]
    buckets = ("rare", "medium", "frequent", "all")
    section = Section("wnlampro", WNLAMPRO_TITLE, "rare-words")
    for run in runs:
        section.text.append(
            f"WNLaMPro built from WordNet 3.0 for {run['model']}: {len(run['entries'])} entries; probed a sample of "
            f"at most {run['limit']} entries per relation (seed {settings.seed}, drawn apart from the dev/test "
            f"split), dev and test, OTA with {run['ota_iterations']} iterations; the bucket and overall means weight "
            "each (relation, bucket) cell by its share of the dataset, so they estimate the whole dataset's.")
    for run in runs:
        section.tables.append(Table(f"Table 4 ({run['model']}): entries by relation and frequency bucket",
                                    table4(run["entries"])))
    versus = [{"model": run["model"], **r} for run in runs for r in table4_against_paper(run["entries"])]
    section.findings.append(table4_finding(versus, section=section.key))
    section.tables.append(Table("Table 4 rebuilt beside the paper's (ratio = rebuilt / paper)", versus))
    by_bucket = [{"model": run["model"], "strategy": s, **{b: run["mrr"](s, b) for b in buckets}}
                 for run in runs for s in STAGE_STRATEGIES]
    by_bucket += [{"model": run["model"], "strategy": "random",
                   **{b: run["result"].summary["random_mrr_by_bucket"].get(b) for b in buckets}} for run in runs]
    effect = [{"model": run["model"], "strategy": s, "rare": run["mrr"](s, "rare"),
               "frequent": run["mrr"](s, "frequent"), **{f"frequent - rare {k}": run["frequency"][s][k]
                                                        for k in ("difference", "low", "high", "entries")}}
              for run in runs for s in STAGE_STRATEGIES]
    section.tables.append(Table("MRR by keyword frequency, model and strategy (Figure 2)", by_bucket))
    section.findings.append(frequency_effect(effect, section=section.key))
    section.tables.append(Table(
        "The frequency effect: MRR of frequent minus rare keywords, with its bootstrap 95% interval", effect))
    versus_baselines = [{"model": run["model"], **{s: run["mrr"](s, "all") for s in STAGE_STRATEGIES},
                         "best baseline": run["best"], **{f"ota - best {k}": run["gap"][k]
                                                          for k in ("difference", "low", "high", "entries")}}
                        for run in runs]
    section.findings.append(ota_vs_baselines(versus_baselines, section=section.key))
    section.tables.append(Table("OTA against the subword baselines (MRR, all entries)", versus_baselines))
    for run in runs:
        section.tables.append(Table(f"MRR (95% bootstrap interval), P@3 and P@10 by relation and bucket "
                                    f"({run['model']})", _with_intervals(run, settings.seed)))
    labels = [f"{b} ({run['model']})" for run in runs for b in buckets]
    series = {s: [run["mrr"](s, b) for run in runs for b in buckets] for s in STAGE_STRATEGIES}
    series["random"] = [run["result"].summary["random_mrr_by_bucket"].get(b, 0.0) for run in runs for b in buckets]
    bar_chart(run_dir.file("figure2.png"), labels, series, ylabel="MRR",
              title="WNLaMPro MRR by keyword frequency: " + " and ".join(STAGE_MODELS))
    section.images.append(Image("figure2.png", "Figure 2: MRR by keyword frequency and strategy, both models"))
    section.settings = {f"{run['model']}": f"at most {run['limit']} entries per relation, OTA {run['ota_iterations']} "
                                          "iterations" for run in runs}
    section.settings.update({"strategies": ", ".join(STAGE_STRATEGIES), "cutoff": 100, "seed": settings.seed})
    return section
