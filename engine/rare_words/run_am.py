"""The main job's Attentive Mimicking stage ("Rare words", section 3): AM trained on SPLADE-tiny's input embeddings
(its whole-word tokens plus OTA vectors of multi-token context words, section 4's purpose) and, for the static case
(AM's original setting), on the packaged GloVe (the words index ``glove`` of the glove-analogy stage), from the
contexts of SemCor, the WSD evaluation sets and STREUSLE, with three models per target table trained on the same
words, targets and seed: ``am``, ``am-context`` (the paper's presets) and ``fcm`` (the form-context model: preset
``am`` with uniform attention). Checked three ways:

* **recovery at fixed words** (:mod:`.am_recovery`): held-out words with 32+ usable windows, each read at k = 0,
  1, 2, 4, 8, 16, 32 of its windows (nested), against the form alone, the mean of the context vectors and a
  learned linear map of it (the "a la carte" context-only baseline), with the paired differences the findings
  judge (:mod:`.am_claims`);
* **WNLaMPro** (the SPLADE-tiny sample of the ``wnlampro`` stage: same entries per relation, same seed) probed
  with ``original``, ``ota``, ``am`` and ``am-context`` (replace policy ``all``, the authors'), MRR and P@k by
  relation and bucket, the paired intervals of am - original and am - ota by bucket, the share of probed keywords
  with >= 1 and >= 8 contexts and the mean gate by bucket;
* **simulated rarity** (:func:`rarity_entries`): frequent WNLaMPro keywords whose first 8 windows are usable,
  held out of AM's training, probed with ``am``, ``am-context`` and ``fcm`` given only k = 0, 1, 2, 4, 8 of their
  windows, beside ``original`` (the keyword's own tokens): the cost of rarity and what the contexts recover of it.

Smaller than the authors' settings so that the stage fits the main job's budget (``STAGE``, one torch thread):
fewer epochs (the authors: 10 over a 1e9-word corpus; the loss curves, ``losses.png``, show how flat they are),
fewer OTA iterations for the targets and samples of words and entries. The models and the contexts index are
reused when nothing changed, and so are the ``original`` and ``ota`` rows of the ``wnlampro`` stage when the same
run probed the same sample (:func:`wnlampro_rows`), and the WNLaMPro it built from WordNet for SPLADE-tiny with
the same seed (:func:`wnlampro_entries`). Every store is opened once, at the stage's start, and passed down.

SmolLM2 (the causal model the wnlampro stage probes) is left out: its targets would need OTA of its multi-token
context words through the 135M-parameter model; :func:`smollm2_cost` counts them and prices them at the measured
batched OTA speed (``benchmarks/ota-smollm2.md``), which the report prints beside the stage's budget.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from ..core.errors import LexprobeError
from .probing import WNLaMProScores
from ..runs.report import Image, Section, Table
from ..runs.run_dir import RunDir

TITLE = "Attentive Mimicking: recovery, its mechanism, WNLaMPro and simulated rarity (section 3)"
MODEL = "splade-tiny"
CORPORA = ("semcor", "wsd-eval", "streusle")
CONTEXTS_INDEX = "main-am-contexts"
# model key -> (preset, attention); the keys are the recovery's methods and the probing's AM strategies
MODELS = {"am": ("am", "clustering"), "am-context": ("am-context", "clustering"), "fcm": ("am", "uniform")}
AM_MODELS = {"am": "main-am", "am-context": "main-am-context", "fcm": "main-fcm"}  # key -> model name
STATIC_INDEX = "glove"  # the static case: GloVe's words index (made by suite.main_job)
STATIC_MODELS = {"am": "main-am-glove", "am-context": "main-am-context-glove", "fcm": "main-fcm-glove"}
# (epochs, OTA iterations of the targets, held-out recovery words, entries per relation, probe OTA iterations,
# contexts a probed keyword reads at most; GloVe's epochs and held-out recovery words; simulated-rarity entries
# per relation)
STAGE = {"quick": {"epochs": 2, "target_ota": 50, "recovery_words": 200, "limit": 40, "ota_iterations": 100,
                   "max_contexts": 32, "glove_epochs": 1, "glove_words": 200, "rarity_limit": 25},
         "full": {"epochs": 4, "target_ota": 100, "recovery_words": 500, "limit": 200, "ota_iterations": 400,
                  "max_contexts": 32, "glove_epochs": 2, "glove_words": 200, "rarity_limit": 50}}
STRATEGIES = ("original", "ota", "am", "am-context")
BUCKETS = ("rare", "medium", "frequent", "all")
RARITY_KS = (0, 1, 2, 4, 8)
# SmolLM2's batched OTA, one torch thread: ms per word and iteration (benchmarks/ota-smollm2.md)
SMOLLM2_OTA_MS = 47


def corpus_specs(data: dict) -> list[str]:
    """``KIND:PATH`` of the stage's corpora among the located datasets ``data`` (name -> path)."""
    from ..sources.datahome import SPEC_KINDS

    out = []
    for name in CORPORA:
        kind, sub = SPEC_KINDS[name]
        out.append(f"{kind}:{data[name] / sub if sub else data[name]}")
    return out


def ensure_contexts(home, specs: list[str], *, seed: int) -> dict:
    """The contexts index of ``specs``, built once and reused while its corpora and settings are the same."""
    from ..kinds.contexts import DEFAULT_CAP, DEFAULT_WINDOW, KIND, build_contexts_index
    from ..runs.index_reuse import ensure_index
    from ..sources.datasets.corpora import provenance

    wanted = {"kind": KIND, "corpora": [provenance(s) for s in specs], "window": DEFAULT_WINDOW, "cap": DEFAULT_CAP,
              "seed": seed, "max_sentences": None}
    return ensure_index(home, CONTEXTS_INDEX, wanted,
                        lambda: build_contexts_index(CONTEXTS_INDEX, specs, home=home, seed=seed, replace=True))


def rarity_entries(entries, data, targets, *, limit: int, seed: int, k: int = max(RARITY_KS)) -> list:
    """Simulated rarity's entries: frequent WNLaMPro entries whose keyword (lowercased, as the contexts index
    stores it) has its first ``k`` windows usable (each with a known word other than the keyword), so that the
    first 1, 2, 4, ``k`` are nested and usable; at most ``limit`` per relation (seeded). One-token and multi-token
    keywords alike."""
    from .mimicking import context_vectors
    from .probing import select

    import pyarrow as pa

    owners = data.owners.to_numpy(zero_copy_only=False)
    words, starts, sizes = np.unique(owners, return_index=True, return_counts=True)
    where = {w: (int(a), int(n)) for w, a, n in zip(words.tolist(), starts, sizes) if n >= k}
    wanted = sorted({e.keyword.lower() for e in entries if e.bucket == "frequent"} & set(where))
    if not wanted:
        return []
    rows = pa.array(np.concatenate([np.arange(where[w][0], where[w][0] + k) for w in wanted]), pa.int64())
    _, counts = context_vectors(data.windows.take(rows), data.owners.take(rows), targets)
    usable = {w for w, c in zip(wanted, counts.reshape(len(wanted), k)) if (c > 0).all()}
    return select([e for e in entries if e.bucket == "frequent" and e.keyword.lower() in usable], limit=limit,
                  seed=seed)


def train_case(home, index, data, table, names: dict[str, str], *, epochs: int, recovery_words: int, seed: int,
               also_held: tuple[str, ...] = ()):
    """One target table's three models (``names``: key of :data:`MODELS` -> model name; reused when unchanged),
    trained on the same words (the held-out recovery words and ``also_held`` left out), the linear-map baseline
    fitted on those words, and the recovery at fixed words. Returns (models, summaries, recovery, differences)."""
    from .am_recovery import am_recovery, differences, fit_linear_map, recovery_words as pick, word_means
    from .am_store import train_model
    from .mimicking import preset, training_set

    words, windows = pick(table, data, recovery_words, seed=seed)
    held = sorted(set(words) | set(also_held))
    prepared = training_set(table, data, preset("am", epochs=epochs, seed=seed), held_out=held)
    models, summaries = {}, {}
    for key, name in names.items():
        preset_name, attention = MODELS[key]
        config = preset(preset_name, attention=attention, epochs=epochs, seed=seed)
        models[key], summaries[key] = train_model(name, index, table, config, home=home, held_out=held, replace=True,
                                                  data=data, prepared=prepared)
    linear = fit_linear_map(word_means(prepared[0]), prepared[0].targets)
    recovery = am_recovery(models, words, windows, linear_map=linear, seed=seed)
    return models, summaries, recovery, differences(recovery, seed=seed)


def context_shares(rows: list[dict], providers: dict) -> list[dict]:
    """Per AM strategy and bucket: probed keywords, the share with >= 1 and >= 8 usable contexts and the mean gate
    alpha over those with any (NaN when none has)."""
    out = []
    for strategy, provider in providers.items():
        for bucket in BUCKETS:
            words = sorted({r["keyword"] for r in rows if r["strategy"] == strategy and bucket in ("all", r["bucket"])})
            seen = [provider.inferred[w] for w in words if w in provider.inferred]
            counts = np.array([c for c, _ in seen])
            gates = [a for _, a in seen if not math.isnan(a)]
            out.append({"strategy": strategy, "bucket": bucket, "keywords": len(words),
                        ">= 1 context": float((counts >= 1).mean()) if len(seen) else math.nan,
                        ">= 8 contexts": float((counts >= 8).mean()) if len(seen) else math.nan,
                        "mean gate alpha": float(np.mean(gates)) if gates else math.nan})
    return out


def probe_differences(result: dict, *, seed: int) -> list[dict]:
    """am - original and am - ota (and the same for am-context) by bucket, paired bootstrap 95% intervals."""
    from .probing_scores import compare_strategies

    out = []
    for first in ("am", "am-context"):
        for second in ("original", "ota"):
            for bucket in BUCKETS:
                rows = [r for r in result.rows if bucket in ("all", r["bucket"])]
                gap = compare_strategies(rows, first, second, population=result.population, seed=seed)
                out.append({"comparison": f"{first} - {second}", "bucket": bucket, **gap})
    return out


def wnlampro_rows(folder, *, limit: int, seed: int, dtype: str) -> list[dict] | None:
    """The ``original`` and ``ota`` rows the ``wnlampro`` stage of the same run wrote for SPLADE-tiny
    (``folder``: its ``<run>/wnlampro/splade-tiny``), when it probed the same sample (limit, seed, dtype); else
    None."""
    import json
    from pathlib import Path

    import pyarrow.parquet as pq

    folder = Path(folder)
    try:
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        rows = pq.read_table(folder / "entries.parquet").to_pylist()
    except (OSError, ValueError):
        return None
    if (summary.get("limit"), summary.get("seed"), summary.get("dtype", "float32")) != (limit, seed, dtype) \
            or not {"original", "ota"} <= set(summary.get("strategies", ())):
        return None
    return [r for r in rows if r["strategy"] in ("original", "ota")]


def wnlampro_entries(folder, *, seed: int) -> list | None:
    """The WNLaMPro the ``wnlampro`` stage of the same run built for SPLADE-tiny (``folder``: its
    ``<run>/wnlampro/splade-tiny``) when it built it with ``seed`` (the same build: same model, WordNet and seed);
    else None."""
    import json
    from pathlib import Path

    from ..sources.datasets.wnlampro import read_dataset

    folder = Path(folder)
    try:
        same = json.loads((folder / "summary.json").read_text(encoding="utf-8")).get("seed") == seed
        return read_dataset(folder / "dataset") if same else None
    except (OSError, ValueError, LexprobeError):
        return None


def probe_stage(lm, every: list, providers: dict, *, limit: int, ota_iterations: int, seed: int,
                earlier: list[dict] | None = None) -> WNLaMProScores:
    """A sample of ``limit`` entries per relation of ``every`` (the WNLaMPro built for SPLADE-tiny) probed with
    the four strategies on the loaded ``lm`` (``earlier``: the original and ota rows of the same sample, probed by
    the wnlampro stage: only the AM strategies are probed here); :func:`lexprobe.rare_words.probing.probe_tables`'
    scores (every strategy's rows and tables)."""
    from .probing import aggregate, population_of, probe_tables, select

    chosen = select(every, limit=limit, seed=seed)
    population = population_of(every)
    ids = {e.id for e in chosen}
    reuse = earlier is not None and {r["id"] for r in earlier} <= ids
    am = ("am", "am-context")
    result = probe_tables(chosen, lm, strategies=am if reuse else STRATEGIES, ota_iterations=ota_iterations,
                          seed=seed, population=population, providers={s: providers[s] for s in am})
    if reuse:
        probed = {r["id"] for r in result.rows}
        rows = [r for r in earlier if r["id"] in probed] + result.rows
        result = replace(result, rows=rows, by_bucket=aggregate(rows, population=population),
                         overall=aggregate(rows, by=("strategy", "bucket"), population=population))
        result.summary["strategies"] = list(STRATEGIES)
    result.summary["original and ota"] = "the wnlampro stage's rows" if reuse else "probed here"
    return result


def probe_rarity(lm, entries: list, models: dict, index, *, seed: int) -> list[dict]:
    """Simulated rarity: ``entries`` probed with ``original`` and with each model of ``models`` (key -> AM model)
    given the first k of its keyword's windows, k in :data:`RARITY_KS` (0: the form alone); one row per (strategy,
    entry), the strategy named ``KEY (k)``."""
    from .am_store import AMVectors
    from .probing import probe

    if not entries:
        return []
    rows, _ = probe(entries, lm, strategies=("original",), seed=seed)
    for key, model in models.items():
        for k in RARITY_KS:
            got, _ = probe(entries, lm, strategies=("am",), seed=seed, policy="all",
                           providers={"am": AMVectors(model, index=index, max_contexts=k)})
            rows += [{**r, "strategy": f"{key} ({k})"} for r in got]
    return rows


def rarity_differences(rows: list[dict], *, seed: int) -> list[dict]:
    """Paired bootstrap intervals of MRR over the simulated-rarity entries: each model with k windows minus
    ``original`` (the cost of rarity), ``am`` with k minus ``am`` with its form alone (what the contexts recover),
    ``am`` minus ``fcm`` and ``am-context`` minus ``am`` at each k."""
    from .probing_scores import compare_strategies

    present = {r["strategy"] for r in rows}
    pairs = [(f"{key} ({k})", "original") for key in MODELS for k in RARITY_KS]
    pairs += [(f"am ({k})", "am (0)") for k in RARITY_KS if k]
    pairs += [(f"am ({k})", f"{other} ({k})") for other in ("fcm", "am-context") for k in RARITY_KS]
    return [{"comparison": f"{a} - {b}", **compare_strategies(rows, a, b, seed=seed)}
            for a, b in pairs if a in present and b in present]


def smollm2_cost(index, *, iterations: int, model: str = "smollm2") -> dict:
    """What AM on SmolLM2 would cost here: its whole-word tokens, the multi-token context words that would need
    OTA targets (8+ windows, as for SPLADE-tiny) and their OTA time at ``iterations`` per word, priced at
    :data:`SMOLLM2_OTA_MS` (the measured batched speed, one thread)."""
    from ..sources.models import load_tokenizer, whole_word_tokens
    from .am_targets import ota_candidates

    tokenizer = load_tokenizer(model)
    words, _ = whole_word_tokens(tokenizer)
    ota = ota_candidates(tokenizer, index, known=set(words), min_contexts=8)
    return {"model": model, "whole_word_tokens": len(words), "ota_words": len(ota), "iterations": iterations,
            "ota_seconds": len(ota) * iterations * SMOLLM2_OTA_MS / 1000}


def _training_rows(case: str, summaries: dict) -> list[dict]:
    return [{"targets": case, "model": key, "preset": s["preset"], "attention": s["attention"], "epochs": s["epochs"],
             "words": s["words"], "words below smin": s["below_smin"],
             "share below smin": s["below_smin"] / max(s["words"], 1), "smin": s["smin"],
             "instances per epoch": float(np.mean(s["instances"])) if s["instances"] else math.nan,
             "loss first epoch": s["losses"][0], "loss last epoch": s["losses"][-1],
             "last epoch / previous": s["losses"][-1] / s["losses"][-2] if len(s["losses"]) > 1 else math.nan,
             "reused": s["reused"], "seconds": s["seconds"]} for key, s in summaries.items()]


def _last_gain(summary: dict) -> str:
    """How much of its loss a model lost in its last epoch, as a percentage ("n/a" after one epoch)."""
    losses = summary["losses"]
    return f"{1 - losses[-1] / losses[-2]:.0%}" if len(losses) > 1 else "n/a (one epoch)"


def am_stage(run_dir: RunDir, settings) -> Section:
    """Open the stores once (the contexts index, built or reused; SPLADE-tiny's targets; GloVe's index; the
    language model), train the three models per target table, the recovery at fixed words, WNLaMPro with original,
    ota, am, am-context, simulated rarity, and the findings; written into ``run_dir``."""
    from ..kinds.contexts import ContextIndex
    from ..kinds.words import WordIndex
    from ..core.cores import usable_cores
    from ..runs.plots import line_plot
    from ..sources.models import torch_threads
    from . import am_claims
    from .am_store import AMVectors
    from .am_targets import index_targets, lm_targets
    from .language_models import load_lm
    from .mimicking import ContextData
    from .wnlampro_build import build_wnlampro

    mode = STAGE["quick" if settings.quick else "full"]
    home, seed = settings.home, settings.seed
    stage = run_dir.path.parent / "wnlampro" / MODEL
    clock, seconds = time.perf_counter(), {}

    def lap(phase: str) -> None:
        nonlocal clock
        seconds[phase] = round(time.perf_counter() - clock, 1)
        clock = time.perf_counter()

    with torch_threads(1):
        built = ensure_contexts(home, corpus_specs(settings.data), seed=seed)
        index = ContextIndex.open(CONTEXTS_INDEX, home=home)
        data = ContextData.from_index(index)
        ota_options = {"iterations": mode["target_ota"], "seed": seed, "batch_threads": usable_cores()}
        targets = lm_targets(MODEL, home=home, contexts=index, ota_options=ota_options)
        every = wnlampro_entries(stage, seed=seed)
        every = build_wnlampro(MODEL, seed=seed, home=home) if every is None else every
        rare = rarity_entries(every, data, targets, limit=mode["rarity_limit"], seed=seed)
        lap("contexts, targets, WNLaMPro")
        models, trained, recovery, gaps = train_case(
            home, index, data, targets, AM_MODELS, epochs=mode["epochs"], recovery_words=mode["recovery_words"],
            seed=seed, also_held=tuple(sorted({e.keyword.lower() for e in rare})))
        lap(f"{MODEL}: training and recovery")
        glove = index_targets(WordIndex.open(STATIC_INDEX, home=home))
        _, static_trained, static, static_gaps = train_case(
            home, index, data, glove, STATIC_MODELS, epochs=mode["glove_epochs"],
            recovery_words=mode["glove_words"], seed=seed)
        lap("GloVe: training and recovery")
        lm = load_lm(MODEL, device=settings.device, dtype=settings.dtype)
        providers = {s: AMVectors(models[s], index=index, max_contexts=mode["max_contexts"])
                     for s in ("am", "am-context")}
        for provider in providers.values():
            provider.check_model(MODEL)
        result = probe_stage(lm, every, providers, limit=mode["limit"], ota_iterations=mode["ota_iterations"],
                             seed=seed, earlier=wnlampro_rows(stage, limit=mode["limit"], seed=seed,
                                                              dtype=settings.dtype))
        lap("WNLaMPro probing")
        rarity_rows = probe_rarity(lm, rare, models, index, seed=seed)
        lap("simulated rarity")
        smollm2 = smollm2_cost(index, iterations=mode["target_ota"])
        lap("SmolLM2's cost")
    probe_gaps = probe_differences(result, seed=seed)
    shares = context_shares(result.rows, providers)
    rarity_gaps = rarity_differences(rarity_rows, seed=seed) if rarity_rows else []
    training = _training_rows(MODEL, trained) + _training_rows("GloVe", static_trained)
    run_dir.write_table("recovery", recovery.rows)
    run_dir.write_table("recovery_differences", gaps)
    run_dir.write_table("recovery_glove", static.rows)
    run_dir.write_table("recovery_glove_differences", static_gaps)
    run_dir.write_table("training", training)
    run_dir.write_table("entries", result.rows, markdown=False)
    run_dir.write_table("by_bucket", result.by_bucket)
    run_dir.write_table("differences", probe_gaps)
    run_dir.write_table("contexts", shares)
    if rarity_rows:
        run_dir.write_table("rarity_entries", rarity_rows, markdown=False)
        run_dir.write_table("rarity", rarity_gaps)
    epochs = {f"{case} {key}": s["losses"] for case, summaries in ((MODEL, trained), ("GloVe", static_trained))
              for key, s in summaries.items()}
    longest = max(len(v) for v in epochs.values())
    line_plot(run_dir.file("losses.png"), list(range(1, longest + 1)),
              {name: [v / losses[0] for v in losses] + [math.nan] * (longest - len(losses))
               for name, losses in epochs.items()},
              title="AM training loss by epoch (relative to the first epoch)", xlabel="epoch",
              ylabel="mean squared error / first epoch's")
    run_dir.write_json("summary.json", {**result.summary, "contexts_index": built,
                                        "models": {k: {x: v for x, v in t.items() if x != "path"}
                                                   for k, t in trained.items()},
                                        "static": {k: {x: v for x, v in t.items() if x != "path"}
                                                   for k, t in static_trained.items()},
                                        "targets": {"words": len(targets.words), **targets.provenance},
                                        "rarity": {"entries": len(rare),
                                                   "keywords": len({e.keyword for e in rare}),
                                                   "multi-token keywords": len({r["keyword"] for r in rarity_rows
                                                                                if r["multi_token"]})},
                                        "smollm2": smollm2, "seconds": seconds})
    section = Section("am", TITLE, "rare-words")
    am_s, amc = trained["am"], trained["am-context"]
    section.text.append(
        f"AM mimics {MODEL}'s input embeddings: {targets.provenance['tokens']} whole-word tokens plus OTA vectors "
        f"of {targets.provenance['ota_words']} multi-token words with 8+ windows ({mode['target_ota']} iterations); "
        f"contexts: {' + '.join(CORPORA)} (+-25 words, at most 1,000 windows a word, seed {seed}). Three models "
        f"per target table on the same words, targets and seed: am (1-20 contexts an instance), am-context (8-20 "
        "contexts and 10% n-gram dropout; an instance with fewer than its minimum is dropped, so words with fewer "
        f"than 8 usable windows are never its targets) and fcm (am with uniform attention); {mode['epochs']} epochs "
        f"on {MODEL} and {mode['glove_epochs']} on GloVe (the authors: 10; the stage's time budget allows no more). "
        f"The curves are not flat yet: {MODEL}'s am loses {_last_gain(am_s)} of its loss in the last epoch "
        f"(am-context {_last_gain(amc)}; losses.png and the training table), so more epochs would still lower "
        f"the training loss. {am_s['words']:,} training "
        f"words on {MODEL}, {amc['below_smin']:,} ({amc['below_smin'] / max(amc['words'], 1):.0%}) below "
        "am-context's minimum of 8 usable windows.")
    section.text.append(
        f"Recovery at fixed words: {len(recovery.words)} held-out {MODEL} words and {len(static.words)} GloVe "
        "words, each with 32+ usable windows, read at k = 0, 1, 2, 4, 8, 16, 32 of its windows (the same words in "
        "every column, nested windows), against the form alone, the mean of the context vectors and a linear map "
        "of it fitted by least squares on the training words (the a la carte context-only baseline).")
    section.text.append(
        f"WNLaMPro: at most {mode['limit']} entries per relation (the wnlampro stage's sample), every keyword "
        f"replaced by its AM vector (policy all, the authors' evaluation), at most {mode['max_contexts']} contexts "
        "a keyword; means weighted to the dataset's (relation, bucket) cells; original and ota: "
        f"{result.summary['original and ota']}. Simulated rarity: {len(rare)} frequent entries "
        f"({len({e.keyword for e in rare})} keywords, "
        f"{len({r['keyword'] for r in rarity_rows if r['multi_token']})} of them multi-token) whose first 8 "
        f"windows are usable, at most {mode['rarity_limit']} per relation, the keywords held out of AM's "
        "training, probed given k = 0, 1, 2, 4, 8 of their windows.")
    section.text.append(
        f"SmolLM2 is left out of this stage: its targets would be its {smollm2['whole_word_tokens']:,} whole-word "
        f"tokens plus OTA vectors of {smollm2['ota_words']:,} multi-token context words with 8+ windows, about "
        f"{smollm2['ota_seconds'] / 60:.0f} min of OTA at {mode['target_ota']} iterations and the measured "
        f"{SMOLLM2_OTA_MS} ms per word and iteration (batched, one thread; benchmarks/ota-smollm2.md), against "
        "the stage's budget of a few minutes.")
    overall = {(r["strategy"], r["bucket"]): r["mrr"] for r in result.overall}
    tables = {MODEL: gaps, "GloVe": static_gaps}
    section.findings += [am_claims.contexts_accumulate(tables, section=section.key),
                         am_claims.beats_context_only(tables, section=section.key),
                         am_claims.lead_shrinks(tables, section=section.key),
                         am_claims.attention_beats_uniform(tables, section=section.key),
                         am_claims.context_preset_weighs_contexts(tables, section=section.key)]
    share = {(r["strategy"], r["bucket"]): r for r in shares}
    gap = {(r["comparison"], r["bucket"]): r for r in probe_gaps}
    section.findings += [am_claims.am_form_half(gap, share, section=section.key),
                         am_claims.am_context_half(gap, share, section=section.key),
                         am_claims.simulated_rarity(rarity_gaps, section=section.key)]
    section.tables.append(Table(f"Recovery at fixed words, {MODEL} (cosine to the true embedding, rank among all "
                                "targets, top-10 share, mean gate)", recovery.rows))
    section.tables.append(Table(f"Recovery, paired differences ({MODEL})", gaps))
    section.tables.append(Table("Recovery at fixed words, static case: GloVe", static.rows))
    section.tables.append(Table("Recovery, paired differences (GloVe)", static_gaps))
    section.tables.append(Table("Training: epochs, words, instances per epoch, words below each preset's minimum, "
                                "loss", training))
    section.images.append(Image("losses.png", "AM training loss by epoch, relative to the first"))
    section.tables.append(Table("WNLaMPro MRR by bucket and strategy (SPLADE-tiny)",
                                [{"strategy": s, **{b: overall.get((s, b)) for b in BUCKETS}} for s in STRATEGIES]))
    section.tables.append(Table("Paired differences of MRR by bucket, bootstrap 95% intervals", probe_gaps))
    section.tables.append(Table("Probed keywords with contexts, and the mean gate (alpha: the form's weight)", shares))
    section.tables.append(Table("Simulated rarity: paired differences of MRR (frequent keywords given k windows)",
                                rarity_gaps))
    section.tables.append(Table("MRR, P@3, P@10 by relation and bucket", result.by_bucket))
    section.settings = {"model": MODEL, "corpora": ", ".join(CORPORA), **mode, "seed": seed,
                        "replace policy": "all"}
    return section
