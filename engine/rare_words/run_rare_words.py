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
                     contexts_side_by_side: bool = False, stop_after: int | None = None) -> dict:
    """The single-token recovery check (:func:`lexprobe.rare_words.ota_recovery.run_recovery`) of ``model`` on
    ``device`` (float32, as OTA always runs) written into ``out``: ``curve``, ``summary`` and ``paired`` tables
    (Parquet + markdown), ``words.json``, ``recovery.png`` (one curve per setting, named by its context variant
    alone when only one init and rate ran) and, with both variants, ``paired.png`` (static minus random with its
    interval). Returns the recovery's result plus ``png`` (the plot's path). ``stop_after``: each variant stops
    that many iterations past its curve's minimum (:func:`lexprobe.rare_words.ota_recovery.past_minimum`).
    ``contexts_side_by_side``: the context variants run at once in worker processes of ``threads`` (default 1)
    torch threads each (:func:`lexprobe.sources.models.in_processes`), with the same numbers."""
    from .ota_recovery import merge_recovery, run_recovery
    from ..sources.models import in_processes, load_encoder, load_tokenizer

    bad = [c for c in contexts if c not in ("static", "random")] + [i for i in inits if i not in ("zeros", "mean")]
    if bad:
        raise LexprobeError(f"unknown context variant or init: {', '.join(bad)}")
    options = dict(n_words=n_words, iterations=iterations, inits=inits, lrs=lrs, every=every, layers=layers,
                   seed=seed, batch_size=batch_size, patience=patience, tol=tol, stop_after=stop_after)
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
    run.write_table("paired", res["paired"])
    run.write_json("words.json", {"model": model, "seed": seed, "words": res["words"]})
    one_setting = len(inits) * len(lrs) == 1
    at = sorted({r["iteration"] for r in res["curve"]})
    curves: dict[str, dict[int, float]] = {}
    for r in res["curve"]:
        label = r["contexts"] if one_setting else f"{r['contexts']} {r['init']} lr={r['lr']:g}"
        curves.setdefault(label, {})[r["iteration"]] = r["mean_cos_distance"]
    png = line_plot(run.file("recovery.png"), at, {k: [v.get(i, float("nan")) for i in at] for k, v in curves.items()},
                    title=f"OTA recovery of {n_words} one-token words ({model})", xlabel="iteration",
                    ylabel="mean cosine distance to e(w)")
    if res["paired"] and one_setting:
        line_plot(run.file("paired.png"), [r["iteration"] for r in res["paired"]],
                  {k: [r[key] for r in res["paired"]] for k, key in (("static - random", "difference"),
                                                                     ("95% low", "low"), ("95% high", "high"))},
                  title=f"Static minus random contexts, paired over {n_words} words ({model})", xlabel="iteration",
                  ylabel="difference of cosine distance")
    return {**res, "png": png}


def recovery_part_of(model: str, ctx: str, device="auto", **options) -> dict:
    """:func:`lexprobe.rare_words.ota_recovery.recovery_part` of the model named ``model`` (loaded here: a worker
    process's call)."""
    from .ota_recovery import recovery_part
    from ..sources.models import load_encoder, load_tokenizer

    return recovery_part(load_encoder(model, device=device), load_tokenizer(model), ctx, **options)


# The main job's Figure 1: (words, most iterations, iterations past the minimum) for --quick and the full run. The
# paper searches 100..5,000 iterations in steps of 100 over 1,000 words; here 100 words, logged every 100
# iterations, each variant stopping 500 iterations (five of the paper's steps) past its own minimum, at most 3,000
# (SPLADE-tiny's random minimum lies near 600: 100 words, 3,000 iterations measured; the cap bounds the static
# variant, which only has to cover it).
OTA_STAGE = {"quick": (20, 400, 200), "full": (100, 3000, 500)}
OTA_STAGE_MODEL = "splade-tiny"


def ota_stage(run_dir: RunDir, settings) -> Section:
    """The main job's single-token recovery (Figure 1, :func:`run_ota_recovery`) on SPLADE-tiny: BERT's
    vocabulary and architecture (2 layers of 128), the masked LM the WNLaMPro stage approximates keywords with;
    MiniLM (6 layers of 384) costs about seven times as much per iteration, too much for thousands of iterations
    over 100 words on 2 cores. The paper's setting (zeros, Adam at 1e-3, random and static contexts); each variant
    runs until ``OTA_STAGE``'s window past its minimum.

    Runs on one torch thread per context variant, the two variants side by side in two worker processes: its
    batches are tiny (a few short sequences), and on a busy 2-core machine two OpenMP threads spinning against
    each other made one process about 10 times slower (``benchmarks/main-job.md``).
    """
    from .wnlampro_claims import figure1_minimum, figure1_random_beats_static

    n_words, iterations, after = OTA_STAGE["quick" if settings.quick else "full"]
    every = 50 if settings.quick else 100
    res = run_ota_recovery(OTA_STAGE_MODEL, run_dir.path, n_words=n_words, iterations=iterations,
                           contexts=("static", "random"), every=every, seed=settings.seed, threads=1,
                           device=settings.device, contexts_side_by_side=True, stop_after=after)
    section = Section("ota", OTA_TITLE, "rare-words")
    section.findings.append(figure1_random_beats_static(res["paired"], res["summary"], section=section.key,
                                                        model=OTA_STAGE_MODEL))
    section.findings.append(figure1_minimum(res["summary"], section=section.key, model=OTA_STAGE_MODEL,
                                            words=n_words))
    section.tables.append(Table(
        "Mean cosine distance to the true embedding: start, end, the minimum and where, iterations run",
        res["summary"], ["contexts", "init", "lr", "start", "end", "best", "best_iteration", "iterations_run",
                         "its_to_95"]))
    section.tables.append(Table("Static minus random distance per logged iteration, paired over the words "
                                "(bootstrap 95% interval)", res["paired"]))
    section.images.append(Image("recovery.png", "Figure 1: mean cosine distance to e(w) against iterations"))
    section.images.append(Image("paired.png", "Static minus random contexts with its paired 95% interval"))
    section.settings = {"model": OTA_STAGE_MODEL, "words": f"{n_words} one-token words (seed {settings.seed})",
                        "iterations": f"at most {iterations}, each variant stopping {after} past its minimum, "
                                      f"logged every {every}", "init": "zeros", "lr": 1e-3}
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
                   policy=None, ota_batch_threads: int = 1, lm=None, per_cell: int | None = None) -> WNLaMProScores:
    """WNLaMPro ``entries`` (those of ``split`` and ``relations``, at most ``limit`` per relation, or ``per_cell``
    per (relation, bucket) cell: :func:`lexprobe.rare_words.probing.select_cells`) probed with
    ``model`` (:func:`lexprobe.rare_words.probing.probe_tables`; ``dataset`` names where the entries came from in
    the summary); ``providers`` (the AM strategies' keyword vectors), ``policy`` and ``ota_batch_threads`` as
    there; ``lm``: ``model`` already loaded. Writes nothing."""
    from .language_models import load_lm
    from .probing import population_of, probe_tables, select, select_cells

    every = select(entries, split=split, relations=relations)
    chosen = select(every, limit=limit, seed=seed) if per_cell is None else select_cells(every, per_cell, seed=seed)
    if not chosen:
        raise LexprobeError(f"{dataset}: no entries for split {split!r} and relations {list(relations) or 'all'}")
    with torch_threads(threads):
        lm = lm if lm is not None else load_lm(model, device=device, dtype=dtype)
        result = probe_tables(chosen, lm, strategies=strategies,
                              cutoff=cutoff, batch_size=batch_size, ota_iterations=ota_iterations, seed=seed,
                              population=population_of(every) if limit is not None or per_cell else None,
                              providers=providers, policy=policy, ota_batch_threads=ota_batch_threads)
    result.summary.update({"model": model, "dataset": dataset, "split": split, "limit": limit, "seed": seed,
                           **({"per_cell": per_cell} if per_cell is not None else {}),
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


# Models of the WNLaMPro stage, the masked and the causal one, each with (entries, OTA iterations) for --quick and
# for the full run, the entries per relation (``per`` "relation": the AM stage probes the same SPLADE-tiny sample)
# or per (relation, bucket) cell ("cell"). SmolLM2 (135M parameters, 30 layers) costs about 100 times SPLADE-tiny
# per token: its OTA sample is small so that the whole main job stays within its time (README), and drawn per
# cell, so that each bucket's OTA - baseline interval has entries in every cell (32 per relation left rare cells
# of 3 to 9, and a cell of one entry has no spread). Its OTA: MRR .089 at 20 iterations, .109 at 60. The
# frequency effect needs no OTA: it is probed on a sample of its own, sized per cell by the power argument.
STAGE_MODELS = {"splade-tiny": {"quick": (40, 100), "full": (200, 400), "per": "relation"},
                "smollm2": {"quick": (3, 10), "full": (12, 60), "per": "cell"}}
STAGE_STRATEGIES = ("original", "ota", "first", "last", "avg")
# The frequency sample: the relations holding both a rare and a frequent bucket, and the most entries per cell
# (--quick, full) the power argument may ask for (it asks for what detects the paper's effect with 80% power).
FREQUENCY_RELATIONS = ("antonym", "hypernym", "cohyponym")
FREQUENCY_CAP = {"quick": 8, "full": 120}
FREQUENCY_FLOOR = 20  # fewer entries per cell leave a percentile bootstrap too narrow (it undercovers)
# Table 1 of the paper: BERT's top answers for two frequent and two rare words of the same domains.
TABLE1 = {"lime": "lime, lemon, fruit", "bicycle": "bicycle, motorcycle, bike", "kumquat": "noun, horse, dog",
          "unicycle": "structure, unit, chain"}


def frequency_sample_size(rows, population, *, cap: int, floor: int = FREQUENCY_FLOOR) -> dict:
    """Entries per cell for the frequency effect, from a pilot's original-keyword rows: the pooled within-cell
    standard deviation of RR (:func:`lexprobe.rare_words.probing_scores.relation_gap`) put into
    :func:`lexprobe.rare_words.wnlampro_claims.entries_for_power` at the paper's effect, at least ``floor`` and at
    most ``cap``. Returns ``per_cell``, ``needed``, ``sd``."""
    from .probing_scores import relation_gap
    from .wnlampro_claims import PAPER_FREQUENCY_EFFECT, entries_for_power

    pilot = relation_gap(rows, "original", "frequent", "rare", population=population)
    sizes = [population.get((r, b), 0) for r in pilot["relations"] for b in ("frequent", "rare")]
    weights = [sizes[2 * k] + sizes[2 * k + 1] for k in range(len(pilot["relations"]))]
    if not weights or not sum(weights) or pilot["sd"] != pilot["sd"]:
        return {"per_cell": cap, "needed": None, "sd": pilot["sd"]}
    needed = entries_for_power(pilot["sd"], PAPER_FREQUENCY_EFFECT, [w / sum(weights) for w in weights])
    return {"per_cell": min(max(needed, floor), cap), "needed": needed, "sd": pilot["sd"]}


def stage_probe(model: str, dataset: str, *, quick: bool, seed: int, home, device="auto", dtype="float32",
                ota_batch_threads: int = 1) -> dict:
    """What one model of the WNLaMPro stage computes, writing nothing (a worker process's call): WNLaMPro built
    from WordNet for its vocabulary (``entries``), probed with every strategy on a sample capped per relation
    (:func:`probe_wnlampro`'s ``result``; ``dataset`` is where the stage writes the entries; OTA's batches
    ``ota_batch_threads`` at once), the original keywords probed again on the ``frequency`` sample (rare and
    frequent cells of ``FREQUENCY_RELATIONS``, sized by :func:`frequency_sample_size` from the first sample:
    ``sizing``), the paper's Table 1 queries (``examples``) and where this process's CPU time went (``seconds``)."""
    import time

    from .cloze_queries import top_predictions
    from .language_models import load_lm
    from .probing import population_of, probe_tables, select_cells
    from .wnlampro_build import build_wnlampro

    size, ota_iterations = STAGE_MODELS[model]["quick" if quick else "full"]
    per_cell = STAGE_MODELS[model]["per"] == "cell"
    clock = [time.process_time()]

    def lap() -> float:
        clock.append(time.process_time())
        return round(clock[-1] - clock[-2], 1)

    entries = build_wnlampro(model, seed=seed, home=home)
    seconds = {"model": model, "build WNLaMPro": lap()}
    lm = load_lm(model, device=device, dtype=dtype)
    seconds["load the model"] = lap()
    result = probe_wnlampro(model, entries, dataset=dataset, strategies=STAGE_STRATEGIES,
                            limit=None if per_cell else size, per_cell=size if per_cell else None,
                            ota_iterations=ota_iterations, seed=seed, ota_batch_threads=ota_batch_threads, lm=lm)
    seconds["probe the OTA sample (every strategy)"] = lap()
    population = population_of(entries)
    sizing = frequency_sample_size(result.rows, population, cap=FREQUENCY_CAP["quick" if quick else "full"])
    cells = [e for e in select_cells(entries, sizing["per_cell"], relations=FREQUENCY_RELATIONS, seed=seed)
             if e.bucket in ("rare", "frequent")]
    frequency = probe_tables(cells, lm, strategies=("original",), seed=seed, population=population)
    seconds["probe the frequency sample (original)"] = lap()
    examples = [{"model": model, "word": w, "zipf": zipf(w), "answers": ", ".join(
        p["token"] for p in top_predictions(lm, f"A {w} is a ___ .", 3)), "paper (BERT)": paper}
        for w, paper in TABLE1.items()]
    seconds["Table 1 queries"] = lap()
    return {"entries": entries, "result": result, "frequency": frequency, "sizing": sizing, "examples": examples,
            "seconds": seconds}


def _stage_model(run_dir: RunDir, settings, model: str, computed: dict) -> dict:
    """One model of the WNLaMPro stage written into ``<stage>/<model>/`` from :func:`stage_probe`'s ``computed``;
    returns what the stage's tables and findings need."""
    from .probing import aggregate, population_of
    from .probing_scores import bucket_gap, compare_strategies, mrr_interval, relation_gap

    limit, ota_iterations = STAGE_MODELS[model]["quick" if settings.quick else "full"]
    folder = run_dir.path / model
    entries, result, frequency = computed["entries"], computed["result"], computed["frequency"]
    result.summary["dataset"] = str(write_dataset(entries, folder / "dataset")["jsonl"])
    write_wnlampro(result, folder)
    RunDir(folder).write_table("frequency_entries", frequency.rows, markdown=False)
    overall = {(r["strategy"], r["bucket"]): r["mrr"] for r in result.overall}
    mrr = lambda s, b: overall.get((s, b), float("nan"))  # noqa: E731
    population, seed = result.population, settings.seed
    gaps = {}
    for bucket in ("rare", "medium", "frequent"):
        rows = [r for r in result.rows if r["bucket"] == bucket]
        if rows:
            gaps.update({(model, b, bucket): compare_strategies(rows, "ota", b, population=population, seed=seed)
                         for b in ("first", "last", "avg")})
    original = mrr_interval(result.rows, "original", population=population, seed=seed)
    marginal = {"model": model, **compare_strategies(result.rows, "ota", "original", population=population, seed=seed),
                "original": original[0], "original_low": original[1], "original_high": original[2]}
    gap = relation_gap(frequency.rows, "original", "frequent", "rare", population=frequency.population, seed=seed)
    flat = bucket_gap(frequency.rows, "original", "frequent", "rare", population=frequency.population, seed=seed)
    others = [(s, relation_gap(result.rows, s, "frequent", "rare", population=population, seed=seed))
              for s in STAGE_STRATEGIES[1:]]
    effect = {"model": model, **{k: gap[k] for k in ("difference", "low", "high", "entries")},
              "per_cell": computed["sizing"]["per_cell"], "needed": computed["sizing"]["needed"],
              "sd": computed["sizing"]["sd"], "bucket_difference": flat["difference"], "bucket_low": flat["low"],
              "bucket_high": flat["high"],
              "others": "Other strategies (the OTA sample, within relations): " + "; ".join(
                  f"{s} {g['difference']:+.3f} [{g['low']:+.3f}, {g['high']:+.3f}]" for s, g in others) + "."}
    splits = []
    for split in ("dev", "test"):
        rows = [r for r in result.rows if r["split"] == split]
        pop = population_of([e for e in entries if e.split == split])
        splits += [{"model": model, "split": split, **r} for r in aggregate(rows, by=("strategy", "bucket"),
                                                                           population=pop)] if rows else []
    return {"model": model, "entries": entries, "result": result, "limit": limit, "ota_iterations": ota_iterations,
            "mrr": mrr, "gaps": gaps, "marginal": marginal, "effect": effect, "splits": splits,
            "examples": computed["examples"], "seconds": computed["seconds"]}


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
    and probe each with every keyword strategy (:func:`stage_probe`): Table 1's queries, Table 4 per model, Figure
    2 with both, the frequency effect on a sample sized for it, OTA against each baseline per bucket and against
    the original keywords, dev beside test, MRR by relation and bucket with intervals; the findings of
    :mod:`lexprobe.rare_words.wnlampro_claims`.

    Both cores work: the two models are built and probed side by side, each in a worker process on one torch thread
    (:func:`lexprobe.sources.models.in_processes`), and the causal model's OTA (nearly all of the stage) runs its
    batches on every usable core at once (``batch_threads``: once the masked model is done, both cores are its);
    then everything is written here. The same numbers as one after the other on one thread: each batch and each
    model computes what it computes alone (checked: ``benchmarks/main-job.md``).
    """
    from . import wnlampro_claims as claims
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
        e = run["effect"]
        section.text.append(
            f"WNLaMPro built from WordNet 3.0 for {run['model']}: {len(run['entries'])} entries; probed a sample of "
            f"at most {run['limit']} entries per {STAGE_MODELS[run['model']]['per']} (seed {settings.seed}, "
            "drawn apart from the dev/test "
            f"split), dev and test, OTA with {run['ota_iterations']} iterations; the bucket and overall means weight "
            "each (relation, bucket) cell by its share of the dataset, so they estimate the whole dataset's. The "
            f"frequency effect is probed apart (original keywords): {e['per_cell']} entries per rare and frequent "
            "cell of antonym, hypernym and cohyponym+, the size that detects the paper's effect of "
            f"{claims.PAPER_FREQUENCY_EFFECT:.2f} with 80% power at this model's RR spread (sd {e['sd']:.3f}"
            + (f"; the power argument asked for {e['needed']}, cut to {e['per_cell']} for time" if e["needed"]
               and e["needed"] > e["per_cell"] else "") + ").")
    section.tables.append(Table("Table 1: 'A <W> is a ___ .', top 3 answers (frequent: lime, bicycle; rare: kumquat, "
                                "unicycle)", [r for run in runs for r in run["examples"]]))
    for run in runs:
        section.tables.append(Table(f"Table 4 ({run['model']}): entries by relation and frequency bucket",
                                    table4(run["entries"])))
    versus = [{"model": run["model"], **r} for run in runs for r in table4_against_paper(run["entries"])]
    section.findings += claims.table4(versus, section=section.key)
    section.tables.append(Table("Table 4 rebuilt beside the paper's (ratio = rebuilt / paper)", versus))
    by_bucket = [{"model": run["model"], "strategy": s, **{b: run["mrr"](s, b) for b in buckets}}
                 for run in runs for s in STAGE_STRATEGIES]
    by_bucket += [{"model": run["model"], "strategy": "random",
                   **{b: run["result"].summary["random_mrr_by_bucket"].get(b) for b in buckets}} for run in runs]
    section.tables.append(Table("MRR by keyword frequency, model and strategy (Figure 2)", by_bucket))
    section.findings += claims.frequency_effect([run["effect"] for run in runs], section=section.key)
    section.tables.append(Table("The frequency effect: frequent minus rare MRR of the original keywords within "
                                "relations, bootstrap 95% interval, and the sample's size",
                                [{k: v for k, v in run["effect"].items() if k != "others"} for run in runs]))
    gaps = {k: v for run in runs for k, v in run["gaps"].items()}
    section.findings += claims.ota_vs_baselines(gaps, section=section.key)
    section.tables.append(Table("OTA minus each subword baseline per bucket (MRR, paired bootstrap 95% interval)",
                                [{"model": m, "baseline": b, "bucket": bucket, **g}
                                 for (m, b, bucket), g in gaps.items()]))
    section.findings += claims.ota_vs_original([run["marginal"] for run in runs], section=section.key)
    section.tables.append(Table("OTA minus the original keywords (all entries, paired) and the original's MRR",
                                [run["marginal"] for run in runs]))
    section.tables.append(Table("Dev beside test (the paper's numbers are test only): MRR by split, strategy and "
                                "bucket", [{k: r[k] for k in ("model", "split", "strategy", "bucket", "n", "mrr",
                                                                "random_mrr")} for run in runs for r in run["splits"]]))
    for run in runs:
        section.tables.append(Table(f"MRR (95% bootstrap interval), P@3 and P@10 by relation and bucket "
                                    f"({run['model']})", _with_intervals(run, settings.seed)))
    labels = [f"{b} ({run['model']})" for run in runs for b in buckets]
    series = {s: [run["mrr"](s, b) for run in runs for b in buckets] for s in STAGE_STRATEGIES}
    series["random"] = [run["result"].summary["random_mrr_by_bucket"].get(b, 0.0) for run in runs for b in buckets]
    bar_chart(run_dir.file("figure2.png"), labels, series, ylabel="MRR",
              title="WNLaMPro MRR by keyword frequency: " + " and ".join(STAGE_MODELS))
    section.images.append(Image("figure2.png", "Figure 2: MRR by keyword frequency and strategy, both models"))
    section.tables.append(Table("Where the stage's time goes: CPU seconds of each model's worker process",
                                [run["seconds"] for run in runs]))
    section.settings = {f"{run['model']}": f"at most {run['limit']} entries per {STAGE_MODELS[run['model']]['per']}, "
                                          f"OTA {run['ota_iterations']} "
                                          f"iterations; frequency sample {run['effect']['per_cell']} per cell"
                        for run in runs}
    section.settings.update({"strategies": ", ".join(STAGE_STRATEGIES), "cutoff": 100, "seed": settings.seed})
    return section
