"""The main job's Attentive Mimicking stage ("Rare words", section 3; issue 26): AM trained on SPLADE-tiny's input
embeddings (its whole-word tokens plus OTA vectors of multi-token context words, section 4's purpose) and, for the
static case (AM's original setting), on the packaged GloVe (the words index ``glove`` of the glove-analogy stage),
from the contexts of SemCor, the WSD evaluation sets and STREUSLE, checked two ways:

* the recovery tables (:func:`lexprobe.rare_words.am_recovery.am_recovery`), one per target table: held-out known
  words inferred from their form and 0, 1, 8, 32 contexts, against the mean of the context vectors;
* WNLaMPro (the SPLADE-tiny sample of the ``wnlampro`` stage: same entries per relation, same seed) probed with
  ``original``, ``ota``, ``am`` and ``am-context`` (replace policy ``all``, the authors'), MRR and P@k by relation
  and bucket, the paired bootstrap intervals of am - original and am - ota by bucket, the share of probed
  keywords with >= 1 and >= 8 contexts and the mean gate by bucket, and the findings against the paper's
  (:func:`lexprobe.rare_words.rare_word_claims.am_form_half`, :func:`~lexprobe.rare_words.rare_word_claims.
  am_context_half`).

Smaller than the authors' settings so that the stage fits the main job's budget (``STAGE``, one torch thread):
fewer epochs (the authors: 10 over a 1e9-word corpus), fewer OTA iterations for the targets, a recovery sample
of held-out words and at most ``max_contexts`` windows a probed keyword; GloVe's case is its recovery table alone,
one model (preset ``am``), few epochs and held-out words (``glove_epochs``, ``glove_words``: seconds of
training, the table's words need no probing). The models and the contexts index are
reused when nothing changed, and so are the ``original`` and ``ota`` rows of the ``wnlampro`` stage when the same
run probed the same sample (:func:`wnlampro_rows`), and the WNLaMPro it built from WordNet for SPLADE-tiny with
the same seed (:func:`wnlampro_entries`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..core.errors import LexprobeError
from .probing import WNLaMProScores
from ..runs.report import Section, Table
from ..runs.run_dir import RunDir

TITLE = "Attentive Mimicking: recovery and WNLaMPro (section 3)"
MODEL = "splade-tiny"
CORPORA = ("semcor", "wsd-eval", "streusle")
CONTEXTS_INDEX = "main-am-contexts"
AM_MODELS = {"am": "main-am", "am-context": "main-am-context"}  # strategy (= preset) -> model name
STATIC_INDEX, STATIC_MODEL = "glove", "main-am-glove"  # the static case: GloVe's words index (made by suite.main_job)
# (epochs, OTA iterations of the targets, held-out recovery words, entries per relation, probe OTA iterations,
# contexts a probed keyword reads at most; GloVe's epochs and held-out recovery words)
STAGE = {"quick": {"epochs": 2, "target_ota": 50, "recovery_words": 200, "limit": 40, "ota_iterations": 100,
                   "max_contexts": 32, "glove_epochs": 1, "glove_words": 200},
         "full": {"epochs": 4, "target_ota": 100, "recovery_words": 500, "limit": 200, "ota_iterations": 400,
                  "max_contexts": 32, "glove_epochs": 2, "glove_words": 500}}
STRATEGIES = ("original", "ota", "am", "am-context")
BUCKETS = ("rare", "medium", "frequent", "all")


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


def train_stage_models(home, *, epochs: int, target_ota: int, recovery_words: int, seed: int):
    """The target table (cached; its OTA's batches on every usable core at once, the same numbers), the held-out
    recovery words and the two AM models (reused when unchanged)."""
    from ..core.cores import usable_cores
    from ..kinds.contexts import ContextIndex
    from .am_recovery import recovery_words as pick
    from .am_store import train_am
    from .am_targets import lm_targets

    index = ContextIndex.open(CONTEXTS_INDEX, home=home)
    ota_options = {"iterations": target_ota, "seed": seed, "batch_threads": usable_cores()}
    targets = lm_targets(MODEL, home=home, contexts=index, ota_options=ota_options)
    held = pick(targets, index, recovery_words, seed=seed)
    trained = {strategy: train_am(name, contexts=CONTEXTS_INDEX, model=MODEL, home=home, preset_name=strategy,
                                  epochs=epochs, seed=seed, held_out=held, ota_options=ota_options, replace=True)
               for strategy, name in AM_MODELS.items()}
    return index, targets, held, trained


def recovery_table(home, index, held: list[str], *, seed: int) -> list[dict]:
    """:func:`lexprobe.rare_words.am_recovery.am_recovery` of both stage models on the held-out words."""
    from .am_recovery import am_recovery
    from .mimicking import AMModel

    models = {strategy: AMModel.open(name, home=home) for strategy, name in AM_MODELS.items()}
    return am_recovery(models, held, [index.windows(w) for w in held], seed=seed).to_pylist()


def static_recovery(home, index, *, epochs: int, recovery_words: int, seed: int) -> tuple[list[dict], dict]:
    """The static case: AM (preset ``am``) trained on GloVe (the words index ``STATIC_INDEX``, reused when
    unchanged) from the same contexts, ``recovery_words`` held out; its recovery table and the training summary."""
    from .am_recovery import am_recovery, recovery_words as pick
    from .am_store import train_am
    from .am_targets import index_targets
    from .mimicking import AMModel
    from ..kinds.words import WordIndex

    held = pick(index_targets(WordIndex.open(STATIC_INDEX, home=home)), index, recovery_words, seed=seed)
    trained = train_am(STATIC_MODEL, contexts=CONTEXTS_INDEX, targets=STATIC_INDEX, home=home, preset_name="am",
                       epochs=epochs, seed=seed, held_out=held, replace=True)
    table = am_recovery({"am": AMModel.open(STATIC_MODEL, home=home)}, held, [index.windows(w) for w in held],
                        seed=seed)
    return table.to_pylist(), trained


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


def differences(result: dict, *, seed: int) -> list[dict]:
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


def probe_stage(home, *, limit: int, ota_iterations: int, max_contexts: int, seed: int, device="auto",
                dtype="float32", earlier: list[dict] | None = None,
                entries: list | None = None) -> tuple[WNLaMProScores, dict]:
    """WNLaMPro for SPLADE-tiny (built from WordNet), a sample of ``limit`` entries per relation probed with the
    four strategies (``earlier``: the original and ota rows of the same sample, probed by the wnlampro stage: only
    the AM strategies are probed here; ``entries``: the WNLaMPro it built, else built here); returns :func:`lexprobe.rare_words.probing.probe_tables`' scores (every
    strategy's rows and tables) and the providers."""
    from .am_store import am_providers
    from .language_models import load_lm
    from .probing import aggregate, population_of, probe_tables, select
    from .wnlampro_build import build_wnlampro

    every = build_wnlampro(MODEL, seed=seed, home=home) if entries is None else entries
    chosen = select(every, limit=limit, seed=seed)
    population = population_of(every)
    providers = am_providers(AM_MODELS, ("am", "am-context"), model=MODEL, home=home, max_contexts=max_contexts)
    ids = {e.id for e in chosen}
    reuse = earlier is not None and {r["id"] for r in earlier} <= ids
    result = probe_tables(chosen, load_lm(MODEL, device=device, dtype=dtype),
                          strategies=tuple(AM_MODELS) if reuse else STRATEGIES, ota_iterations=ota_iterations,
                          seed=seed, population=population, providers=providers)
    if reuse:
        probed = {r["id"] for r in result.rows}
        rows = [r for r in earlier if r["id"] in probed] + result.rows
        result = replace(result, rows=rows, by_bucket=aggregate(rows, population=population),
                         overall=aggregate(rows, by=("strategy", "bucket"), population=population))
        result.summary["strategies"] = list(STRATEGIES)
    result.summary["original and ota"] = "the wnlampro stage's rows" if reuse else "probed here"
    return result, providers


def am_stage(run_dir: RunDir, settings) -> Section:
    """Build the contexts index, train ``am`` and ``am-context`` on SPLADE-tiny's input embeddings (OTA targets),
    the recovery table, WNLaMPro with original, ota, am, am-context, and the findings; written into ``run_dir``."""
    from ..sources.models import torch_threads
    from .rare_word_claims import am_context_half, am_form_half, am_recovery as am_recovery_finding

    mode = STAGE["quick" if settings.quick else "full"]
    home, seed = settings.home, settings.seed
    with torch_threads(1):
        built = ensure_contexts(home, corpus_specs(settings.data), seed=seed)
        index, targets, held, trained = train_stage_models(home, epochs=mode["epochs"], target_ota=mode["target_ota"],
                                                           recovery_words=mode["recovery_words"], seed=seed)
        recovery = recovery_table(home, index, held, seed=seed)
        static, static_trained = static_recovery(home, index, epochs=mode["glove_epochs"],
                                                 recovery_words=mode["glove_words"], seed=seed)
        stage = run_dir.path.parent / "wnlampro" / MODEL
        earlier = wnlampro_rows(stage, limit=mode["limit"], seed=seed, dtype=settings.dtype)
        result, providers = probe_stage(home, limit=mode["limit"], ota_iterations=mode["ota_iterations"],
                                        max_contexts=mode["max_contexts"], seed=seed, device=settings.device,
                                        dtype=settings.dtype, earlier=earlier,
                                        entries=wnlampro_entries(stage, seed=seed))
    gaps = differences(result, seed=seed)
    shares = context_shares(result.rows, providers)
    run_dir.write_table("recovery", recovery)
    run_dir.write_table("recovery_glove", static)
    run_dir.write_table("entries", result.rows, markdown=False)
    run_dir.write_table("by_bucket", result.by_bucket)
    run_dir.write_table("differences", gaps)
    run_dir.write_table("contexts", shares)
    run_dir.write_json("summary.json", {**result.summary, "contexts_index": built,
                                        "models": {s: {k: v for k, v in t.items() if k != "path"}
                                                   for s, t in trained.items()},
                                        "targets": {"words": len(targets.words), **targets.provenance},
                                        "static": {k: v for k, v in static_trained.items() if k != "path"}})
    section = Section("am", TITLE, "rare-words")
    section.text.append(
        f"AM mimics {MODEL}'s input embeddings: {targets.provenance['tokens']} whole-word tokens plus OTA vectors "
        f"of {targets.provenance['ota_words']} multi-token words with 8+ windows ({mode['target_ota']} iterations); "
        f"contexts: {' + '.join(CORPORA)} (+-25 words, at most 1,000 windows a word, seed {seed}); presets am and "
        f"am-context, {mode['epochs']} epochs (the authors: 10), {len(held)} held-out words for the recovery table. "
        f"WNLaMPro: at most {mode['limit']} entries per relation (the wnlampro stage's sample), every keyword "
        f"replaced by its AM vector (policy all, the authors' evaluation), at most {mode['max_contexts']} contexts "
        "a keyword; means weighted to the dataset's (relation, bucket) cells; original and ota: "
        f"{result.summary['original and ota']}. The static case (AM's original setting): preset am trained on the "
        f"packaged GloVe (index {STATIC_INDEX}, {static_trained['targets']:,} words; {static_trained['words']:,} "
        f"trained words with contexts) from the same contexts, {mode['glove_epochs']} epoch(s), "
        f"{mode['glove_words']} held-out words for its recovery table.")
    overall = {(r["strategy"], r["bucket"]): r["mrr"] for r in result.overall}
    section.tables.append(Table("WNLaMPro MRR by bucket and strategy (SPLADE-tiny)",
                                [{"strategy": s, **{b: overall.get((s, b)) for b in BUCKETS}} for s in STRATEGIES]))
    section.tables.append(Table("Paired differences of MRR by bucket, bootstrap 95% intervals", gaps))
    section.tables.append(Table("Probed keywords with contexts, and the mean gate (alpha: the form's weight)", shares))
    share = {(r["strategy"], r["bucket"]): r for r in shares}
    gap = {(r["comparison"], r["bucket"]): r for r in gaps}
    section.findings.append(am_recovery_finding({MODEL: recovery, "GloVe": static}, section=section.key))
    section.findings.append(am_form_half(gap, share, section=section.key))
    section.findings.append(am_context_half(gap, share, section=section.key))
    section.tables.append(Table("Recovery of held-out words (cosine to the true embedding, rank among all targets)",
                                recovery))
    section.tables.append(Table("Recovery of held-out words, static case: AM trained on GloVe", static))
    section.tables.append(Table("MRR, P@3, P@10 by relation and bucket", result.by_bucket))
    section.settings = {"model": MODEL, "corpora": ", ".join(CORPORA), **mode, "seed": seed,
                        "replace policy": "all"}
    return section
