"""The runs of *Analogies minus analogy test* (Fournier, Dunbar, Dupoux 2020): the analogy test with its score
decomposition, and Table 1 / Figure 5 (OCS and PCS beside the random analogy sets); each written into a run
folder. ``run analogy`` / ``run offsets`` and the main job's stages call the same runners
(:func:`run_analogy`, :func:`run_table1`); the analyses they call (:mod:`lexprobe.analogies.analogy`,
:mod:`~lexprobe.analogies.decomposition`, :mod:`~lexprobe.analogies.offset_baselines`) write nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .analogy_evaluation import AnalogyTest, analogy_test
from ..kinds.analogy_queries import DEFAULT_EPS
from ..core.conventions import old_order
from ..core.errors import LexprobeError
from ..core.store import MANIFEST, home_path
from ..sources.datasets.bats import Coverage, Relation
from ..runs import plots
from ..runs.index_reuse import ensure_index
from ..runs.report import Image, Section, Table
from ..runs.run_dir import RunDir

GLOVE = "glove-6b-50d"
TITLES = {
    "glove-analogy": "GloVe word index, neighbours, word similarity and 3CosAdd on the Google analogy set",
    "analogy": "BATS analogy test (3CosAdd, 3CosMul, PairDirection, 3CosAvg, LRCos) and score decomposition "
               "(Figures 1, 2, 8)",
    "offsets": "Offset concentration and pairing consistency vs random sets (Table 1, Figure 5)",
}
NEIGHBOR_WORDS = ("king", "frog", "paris", "computer")
def glove_word_index(home: Path) -> dict:
    """Build (or reuse) ``glove``: the packaged 400k GloVe, exact flat index."""
    from ..core import vector_index as vindex
    from ..kinds.words import build_word_index

    wanted = {"kind": "words", "source": GLOVE, "index": vindex.IndexParams().as_dict(), "lowercase": False,
              "limit": None}
    return ensure_index(home, "glove", wanted, lambda: build_word_index("glove", GLOVE, home=home, replace=True))


# ------------------------------------------------------------------------------------ the analogy run


def plot_decomposition(rows: list[dict], out_dir: str | Path, *, normalized: bool) -> list[Path]:
    """Horizontal bar charts of the decomposition means per relation: Figure 1 (score terms), Figure 8
    (reference), Figure 2 (Delta_sim)."""
    from .decomposition import DELTA, REFERENCE, TERMS

    labels = [r["relation"] for r in rows]
    kind = "unit vectors" if normalized else "raw vectors"
    series = lambda cols, names: {nm: [r[c] for r in rows] for c, nm in zip(cols, names)}
    out_dir = Path(out_dir)
    return [
        plots.bar_chart(out_dir / "decomposition_score.png", labels,
                        series(TERMS, (r"within-pair $b \cdot b^*$", r"offset $o_a \cdot o_b$",
                                       r"start-offset $o_a \cdot b$")),
                        title=f"3CosAdd score terms, mean per relation ({kind})", ylabel="mean term",
                        horizontal=True),
        plots.bar_chart(out_dir / "decomposition_reference.png", labels,
                        series(REFERENCE, (r"within-pair $b \cdot (b + o_a)$", r"offset $o_a \cdot o_a$",
                                           r"start-offset $o_a \cdot b$")),
                        title=f"reference decomposition, $b^* = b + o_a$ ({kind})", ylabel="mean term",
                        horizontal=True),
        plots.bar_chart(out_dir / "decomposition_delta_sim.png", labels,
                        series(DELTA, ("norm term", "offset term", r"$b \cdot o_b$ term")),
                        title=rf"$\Delta_{{sim}}$ terms, mean per relation ({kind})", ylabel="mean term",
                        horizontal=True),
    ]


@dataclass
class AnalogyRun:
    """What :func:`run_analogy` computed (:class:`~lexprobe.analogies.analogy_evaluation.AnalogyTest`) and wrote."""

    test: AnalogyTest
    plots: list[Path]
    summary: dict                # also summary.json


def run_analogy(words, relations: list[Relation], coverage: list[Coverage], out: str | Path, *, dataset: str,
                method: str = "add", answers: str = "first", restrict_vocab: int | None = None,
                eps: float = DEFAULT_EPS, honest: bool = True, normalize: bool = False, seed: int = 0,
                ranks: bool = True) -> AnalogyRun:
    """:func:`~lexprobe.analogies.analogy_evaluation.analogy_test` (``seed``: LRCos's random negatives; ``ranks``:
    the gold ranks and MRR), written to
    ``out``: coverage (the out-of-vocabulary
    report), questions.parquet (one row per question), accuracy_relation / accuracy_category, honest.parquet +
    honest_shares (``honest``), decomposition (per tuple) and decomposition_means (per relation) with their PNG
    bar charts, and summary.json.
    """
    test = analogy_test(words, relations, coverage, method=method, restrict_vocab=restrict_vocab, eps=eps,
                        honest=honest, normalize=normalize, seed=seed, ranks=ranks)
    run_dir = RunDir(out)
    run_dir.write_table("coverage", test.coverage)
    run_dir.write_table("questions", test.questions, markdown=False)
    run_dir.write_table("accuracy_relation", test.by_relation)
    run_dir.write_table("accuracy_category", test.by_category)
    summary = {"words": words.name, "dataset": dataset, "method": method, "seed": seed, "answers": answers,
               "restrict_vocab": restrict_vocab, "eps": eps, "questions": len(test.questions),
               "accuracy": test.accuracy, "pairs_dropped": sum(c.dropped for c in coverage),
               "identity_pairs_dropped": sum(c.identity for c in coverage), "skipped": test.skipped}
    if honest:
        run_dir.write_table("honest", test.honest, markdown=False)
        run_dir.write_table("honest_shares", [test.honest_shares])
        summary["honest"] = test.honest_shares
    run_dir.write_table("decomposition", test.decomposition, markdown=False)
    run_dir.write_table("decomposition_means", test.means)
    figures = plot_decomposition(test.means, run_dir.path, normalized=normalize)
    summary["plots"] = [p.name for p in figures]
    run_dir.write_json("summary.json", summary)
    return AnalogyRun(test, figures, summary)


# ------------------------------------------------------------------------------- the offsets (Table 1) run


def open_offsets(home: Path, words, dataset: str, offsets_name: str):
    """The offsets index ``offsets_name`` of ``dataset`` over ``words`` (this version of it), built if missing."""
    from ..kinds.offsets import OffsetIndex, build_offset_index

    if not (home / offsets_name / MANIFEST).exists():
        build_offset_index(home, offsets_name, words.name, dataset)
    index = OffsetIndex.open(offsets_name, home=home)
    meta = index.store.meta
    if meta.get("words_index") != words.name or meta.get("dataset") != dataset:
        raise LexprobeError(f"{index.store.path}: offsets index {offsets_name!r} holds {meta.get('dataset')} over "
                            f"{meta.get('words_index')!r}, not {dataset} over {words.name!r} (choose another --offsets)")
    if meta.get("words_version") != words.store.manifest["version_id"]:
        raise LexprobeError(f"{index.store.path}: offsets index {offsets_name!r} was built from an older version of "
                            f"words index {words.name!r} (rebuild it with 'lexprobe index offsets' or remove it)")
    return index


@old_order("home", "words_name", "dataset")
def run_table1(words_name: str, dataset: str, *, home: str | Path | None = None, offsets_name: str,
               n_shuffles: int = 50, replicates: int = 10, seed: int = 0, pool_size: int = 10_000, out=None,
               relation_names: Sequence[str] = ()) -> dict:
    """Table 1 and Figure 5 (:func:`lexprobe.analogies.offset_baselines.table1`), written to ``out``;
    ``relation_names`` (codes such as ``I01`` or full names): those relations only, their random sets drawn from
    them and not stored in the offsets index (it keeps the whole dataset's).

    The offsets index is built when missing; the shuffled offsets of the real relations and the random sets
    it does not hold yet for this seed are appended to it (kinds ``shuffled``, ``permuted``, ...). Writes
    table1.{md,parquet}, table1_rule.* (the paper's half-IQR rule per category and random set,
    :func:`~lexprobe.analogies.offset_baselines.chance_rows`), table1_relations.*, sets.parquet, the Figure 5 PNG
    and summary.json; returns the summary with the tables as lists of rows (``sets``: one row per scored set).
    """
    from .offset_baselines import KINDS, chance_rows, random_pool, scored_relations, table1
    from .offset_consistency import SHUFFLED, missing_shuffles
    from ..kinds.offsets import append_offsets
    from ..kinds.words import WordIndex
    from ..sources.datasets.analogy_sets import dataset_words

    home = home_path(home)
    words = WordIndex.open(words_name, home=home)
    index = open_offsets(home, words, dataset, offsets_name)
    relations, skipped = scored_relations(index.select(kind="true"))
    if not relations:
        raise LexprobeError(f"{dataset}: no relation has 3 or more pairs in words index {words_name!r}")
    if relation_names:
        chosen = {}
        for wanted in relation_names:
            found = [r for r in relations if wanted == r.relation or wanted.upper() == r.relation.split()[0].upper()]
            if not found:
                raise LexprobeError(f"{dataset}: no relation {wanted!r} with 3 or more pairs in words index "
                                    f"{words_name!r} (relations: {', '.join(r.relation.split()[0] for r in relations)})")
            chosen[found[0].relation] = found[0]
        relations = list(chosen.values())
    appended = 0
    shuffled = missing_shuffles(words, relations, index.select(kind=SHUFFLED), n_shuffles, seed)
    if shuffled is not None:
        appended += append_offsets(home, offsets_name, shuffled)["appended"]
        index = open_offsets(home, words, dataset, offsets_name)
    pool = random_pool(words.words, dataset_words(dataset), pool_size)
    t1 = table1(words, index, relations, pool, n_shuffles=n_shuffles, replicates=replicates, seed=seed)
    if t1.new_sets is not None and not relation_names:
        appended += append_offsets(home, offsets_name, t1.new_sets)["appended"]
    summary = {"words": words_name, "dataset": dataset, "offsets_index": offsets_name, "shuffles": n_shuffles,
               "replicates": replicates, "seed": seed, "pool_size": int(len(pool)), "relations": len(relations),
               "skipped_relations": skipped, "skipped_kinds": [k for k in KINDS if k not in t1.kinds],
               "only_relations": [r.relation for r in relations] if relation_names else [],
               "rows_appended": appended, "table1": t1.by_category, "table1_rule": chance_rows(t1.by_category)}
    if out is not None:
        run = RunDir(out)
        run.write_table("table1", t1.by_category)
        run.write_table("table1_rule", summary["table1_rule"])
        run.write_table("table1_relations", t1.by_relation)
        run.write_table("sets", t1.results, markdown=False)
        plots.histograms(run.file("figure5_offset_similarities.png"), t1.similarities, bins=60,
                         title=f"Pairwise similarities of true offsets ({words_name})", xlabel="o_i . o_j")
        run.write_json("summary.json", summary)
    summary["table1_relations"], summary["sets"] = t1.by_relation, t1.results
    return summary


# ------------------------------------------------------------------------- the main job's stages


def add_honest_test(section: Section, title: str, shares: dict[str, float], n: int, *, dataset: str) -> None:
    """What the honest test returns (``shares`` of ``n`` questions) with Wilson 95% intervals, as a table of
    ``section`` and its finding (:func:`lexprobe.analogies.analogy_claims.honest_returns_b`)."""
    from .analogy import share_intervals
    from .analogy_claims import honest_returns_b

    rows = share_intervals(shares, n)
    section.findings.append(honest_returns_b(rows, n, dataset=dataset, section=section.key))
    section.tables.append(Table(title, rows, ["returned", "count", "share", "low", "high"]))


def glove_analogy_stage(run_dir: RunDir, settings) -> Section:
    """Word index from the packaged GloVe, a few neighbours, and 3CosAdd on the Google set (with and without
    excluding the inputs)."""
    from ..kinds.section_scores import score_sections
    from ..kinds.words import WordIndex
    from ..sources.datasets.google import read_questions

    built = glove_word_index(settings.home)
    index = WordIndex.open("glove", home=settings.home)
    section = Section("glove-analogy", TITLES["glove-analogy"], "analogies")
    section.text.append(f"Index `glove` ({index.store.count} words x {index.dim} dims) "
                        + ("reused: its manifest matches." if built["reused"] else
                           f"built in {built['seconds']} s ({built['reason']})."))
    section.tables.append(Table("Nearest neighbours (cosine, query word excluded)",
                                index.neighbors(list(NEIGHBOR_WORDS), 5).to_pylist(), ["query", "rank", "word", "score"]))

    scores = score_sections(index, read_questions(settings.data["google"], lowercase=True),
                            sample=2000 if settings.quick else None, seed=settings.seed)
    rows = [{"section": "all" if r["section"] == "total" else r["section"], "questions": r["answered"],
             "oov_dropped": r["oov"], **{c: r[c] for c in ("accuracy", "honest_accuracy", "honest_returns_b")}}
            for r in scores.rows if r["answered"]]
    section.tables.append(Table("3CosAdd accuracy per section (inputs excluded, and the honest test)", rows))

    total = scores.rows[-1]
    shares = {"b": total["honest_returns_b"], "a*": total["honest_returns_a_star"], "a": total["honest_returns_a"],
              "gold b*": total["honest_accuracy"]}
    shares["other"] = 1.0 - sum(shares.values())
    add_honest_test(section, "What the honest test (inputs not excluded) returns", shares, total["answered"],
                    dataset="Google")
    labels = [r["section"] for r in rows[:-1]]
    plots.bar_chart(run_dir.file("google_accuracy.png"), labels,
              {"inputs excluded": [r["accuracy"] for r in rows[:-1]],
               "honest": [r["honest_accuracy"] for r in rows[:-1]],
               "honest returns b": [r["honest_returns_b"] for r in rows[:-1]]},
              title="3CosAdd on the Google analogy set, packaged GloVe 50d", ylabel="share of questions",
              unit_y=True)
    section.images.append(Image("google_accuracy.png", "3CosAdd accuracy per Google section, and how often "
                                "the honest test returns b"))
    run_dir.write_table("google_per_section", rows)
    section.settings = {"vectors": GLOVE, "index": "glove (exact, inner product on unit vectors)",
                        "vocabulary": f"all {index.store.count} words", "questions": "lowercased; OOV dropped",
                        "sample": f"2000 questions, seed {settings.seed}" if settings.quick else "all"}
    add_word_similarity(section, run_dir, index, settings)
    return section


def add_word_similarity(section: Section, run_dir: RunDir, index, settings) -> None:
    """The word-similarity sets (WordSim-353, SimLex-999, MEN, the Rare Words) scored by ``index``
    (:meth:`~lexprobe.kinds.words.WordIndex.evaluate_word_pairs` with gensim's defaults: the 300,000 most frequent
    words, case ignored, pairs with an unknown word left out): Spearman and Pearson with their p-values and 95%
    bootstrap intervals (1,000 resamples, the run's seed), the share of pairs left out; a table of ``section``,
    word_similarity.{md,parquet,png}. Each set as located (``settings.data``: the data home, ../shared/data, else
    gensim's test copies of WordSim-353 and SimLex-999); where it came from goes into the settings."""
    from ..sources.datahome import fetch_hint, tree_checksum
    from ..sources.datasets.word_pairs import SETS

    rows = []
    for name in SETS:
        if name not in settings.data:
            section.settings[f"similarity {name}"] = f"not found: {fetch_hint(name)}"
            continue
        path, source = settings.data[name], settings.data_info.get(name, {}).get("source", "located data")
        scores = index.evaluate_word_pairs(path, seed=settings.seed)
        section.settings[f"similarity {name}"] = f"{source}, sha256 {tree_checksum(path)['sha256'][:16]}"
        (s_low, s_high), (p_low, p_high) = scores.spearman_interval, scores.pearson_interval
        rows.append({"dataset": name, "pairs": scores.pairs.num_rows, "scored": scores.n_scored,
                     "oov_percent": scores.oov_ratio, "spearman": scores.spearman[0], "spearman_p": scores.spearman[1],
                     "spearman_low": s_low, "spearman_high": s_high, "pearson": scores.pearson[0],
                     "pearson_p": scores.pearson[1], "pearson_low": p_low, "pearson_high": p_high})
    if not rows:
        return
    section.settings["similarity vocabulary"] = "the 300000 most frequent words, case ignored (gensim's defaults)"
    shown = [{**r, **{p: f"{r[p]:.2g}" for p in ("spearman_p", "pearson_p")}} for r in rows]  # not 0.0000
    section.tables.append(Table("Word similarity: Spearman and Pearson of the cosines with the human scores "
                                "(p-values, 95% bootstrap intervals; pairs with an unknown word left out)", shown))
    run_dir.write_table("word_similarity", rows)
    plots.bar_chart(run_dir.file("word_similarity.png"), [r["dataset"] for r in rows],
                    {"Spearman": [r["spearman"] for r in rows], "Pearson": [r["pearson"] for r in rows]},
                    title="Word similarity, packaged GloVe 50d", ylabel="correlation with the human scores")
    section.images.append(Image("word_similarity.png", "Spearman and Pearson correlation of GloVe's cosines with "
                                "the human similarity scores, per set"))


LRCOS_SEEDS = 3  # seeds of LRCos's random negatives in the main job (one draw is not a result)
SAMPLED_QUESTIONS = 50  # questions per relation that 3CosMul and PairDirection answer in the main job
METHOD_NAMES = {"add": "3CosAdd", "mul": "3CosMul", "pairdir": "PairDirection", "avg": "3CosAvg", "lrcos": "LRCos"}


def analogy_stage(run_dir: RunDir, settings) -> Section:
    """3CosAdd over every BATS tuple with the honest test, and the score decomposition (Figures 1, 2, 8) on
    the raw GloVe vectors (:func:`run_analogy`); 3CosMul and PairDirection over a seeded sample of
    :data:`SAMPLED_QUESTIONS` tuples per relation (PairDirection costs about 15 times 3CosAdd per question: the
    whole set would take minutes; the sample resolves the gap the paper cites, see its finding), vecto's 3CosAvg
    and LRCos (:data:`LRCOS_SEEDS` seeds) over the same relations. ``--quick``: the first 12 pairs of each
    relation, LRCos with 2 seeds."""
    from .analogy_claims import (decomposition_columns, drozd_findings, figure1, figure2, figure8, pairdirection_fails,
                                 within_accuracy)
    from .analogy_evaluation import (accuracy_intervals, matching_rows, method_tables, relation_accuracy,
                                     sampled_questions, seed_interval)
    from .decomposition import relation_intervals
    from ..kinds.words import WordIndex
    from ..sources.datasets.analogy_sets import usable_relations

    glove_word_index(settings.home)
    words = WordIndex.open("glove", home=settings.home)
    spec = f"bats:{settings.data['bats']}"
    relations, coverage = usable_relations(words, spec, answers="first")
    if settings.quick:
        relations = [Relation(r.name, r.code, r.category, r.file, r.pairs[:12]) for r in relations]
    run = run_analogy(words, relations, coverage, run_dir.path, dataset=spec, ranks=False)  # no claim needs MRR
    shares, means = run.test.honest_shares, run.test.means
    section = Section("analogy", TITLES["analogy"], "analogies")
    section.text.append(f"{len(run.test.questions)} questions a:a*::b:b* (all ordered pairs of pairs within each of "
                        f"{len(relations)} relations); pairs dropped as out of vocabulary: "
                        f"{sum(c.dropped for c in coverage)}; identity pairs (a = a*) dropped: "
                        f"{sum(c.identity for c in coverage)} (the coverage table counts both per relation).")
    picks = {k: shares[k] for k in ("b", "a_star", "a", "gold", "other")}
    add_honest_test(section, "What the honest test (nothing excluded) returns on BATS", picks, shares["questions"],
                    dataset="BATS")
    intervals = relation_intervals(run.test.decomposition, decomposition_columns(run.test.decomposition),
                                   seed=settings.seed)
    run_dir.write_table("decomposition_intervals", intervals, markdown=False)
    section.findings += figure1(intervals, section=section.key)
    section.findings.append(figure8(intervals, section=section.key, seed=settings.seed))
    section.findings += figure2(intervals, section=section.key, seed=settings.seed)
    section.findings.append(within_accuracy({r["relation"]: r["within"] for r in intervals},
                                            {r["relation"]: r["accuracy"] for r in run.test.by_relation},
                                            section=section.key, seed=settings.seed))

    seeds = [settings.seed + k for k in range(2 if settings.quick else LRCOS_SEEDS)]
    sample = sampled_questions(relations, SAMPLED_QUESTIONS, seed=settings.seed)  # set methods answer every pair
    tables = {"add": [run.test.questions],
              **method_tables(words, sample, ("mul", "pairdir", "avg", "lrcos"), lrcos_seeds=seeds)}
    accuracy = accuracy_intervals(tables)
    run_dir.write_table("method_accuracy", accuracy)
    categories = {r["relation"]: r["category"] for r in run.test.by_relation}
    section.findings.append(pairdirection_fails(matching_rows(run.test.questions, tables["pairdir"][0]),
                                                tables["pairdir"][0], section=section.key, seed=settings.seed,
                                                population=len(run.test.questions)))
    section.findings += drozd_findings({m: relation_accuracy(tables[m]) for m in ("add", "avg", "lrcos")},
                                       categories, lrcos_seeds=seeds, section=section.key, seed=settings.seed)
    per_seed = [float(np.mean(list(relation_accuracy([t]).values()))) for t in tables["lrcos"]]
    mean, low, high = seed_interval(per_seed)
    section.text.append(f"LRCos accuracy (mean over relations) over {len(seeds)} seeds of its random negatives: "
                        f"{mean:.4f}, t 95% interval over seeds [{low:.4f}, {high:.4f}]; per seed " + ", ".join(
                            f"{s}: {a:.4f}" for s, a in zip(seeds, per_seed)) + ".")
    section.tables.append(Table("Accuracy per method and broad category (inputs excluded; Wilson 95% intervals; "
                                f"3CosAdd answers every tuple, 3CosMul and PairDirection a seeded sample of "
                                f"{SAMPLED_QUESTIONS} per relation, 3CosAvg and LRCos one question per pair, learned "
                                "from the relation's other pairs)",
                                [{**r, "method": METHOD_NAMES[r["method"]]} for r in accuracy]))
    cats = list(dict.fromkeys(r["category"] for r in accuracy))
    plots.bar_chart(run_dir.file("method_accuracy.png"), cats,
                    {METHOD_NAMES[m]: [next(r["accuracy"] for r in accuracy if r["method"] == m and r["category"] == c)
                                       for c in cats] for m in tables},
                    title="BATS accuracy per method, packaged GloVe 50d", ylabel="accuracy", unit_y=True)
    section.images.append(Image("method_accuracy.png", "Accuracy of the five solvers per broad category"))
    section.tables.append(Table(
        "Score decomposition: mean terms per relation (Figure 1), reference (Figure 8) and Delta_sim (Figure 2)",
        means, ["relation", "category", "tuples", "score", "within", "offset", "start_offset", "ref_within",
                "ref_offset", "delta_sim", "delta_norm", "delta_offset", "delta_b_ob"]))
    section.tables.append(Table("Figure 1's terms per relation with pair-bootstrap 95% intervals", intervals,
                                ["relation", "pairs", "within", "within_low", "within_high", "offset", "offset_low",
                                 "offset_high", "within_minus_offset_low", "within_minus_offset_high"]))
    section.tables.append(Table("3CosAdd accuracy per relation", run.test.by_relation))
    captions = {"decomposition_score.png": "Figure 1: the three terms of the analogy score, mean per relation",
                "decomposition_reference.png": "Figure 8: the reference decomposition (b* = b + o_a)",
                "decomposition_delta_sim.png": "Figure 2: the three terms of Delta_sim, mean per relation"}
    section.images += [Image(p.name, captions.get(p.name, p.stem)) for p in run.plots]
    section.settings = {"words": "glove (raw vectors for the decomposition)", "dataset": spec,
                        "answers": "first listed (the paper)", "vocabulary": "all 400000 words",
                        "pairs per relation": "first 12" if settings.quick else "all",
                        "methods": ", ".join(METHOD_NAMES[m] for m in tables), "LRCos seeds": seeds,
                        "3CosMul and PairDirection": f"{SAMPLED_QUESTIONS} questions per relation, seed "
                                                     f"{settings.seed}",
                        "bootstrap": f"2000 resamples over relations, 1000 over a relation's pairs, seed "
                                     f"{settings.seed}"}
    return section


def offsets_stage(run_dir: RunDir, settings) -> Section:
    """Table 1 and Figure 5 (:func:`run_table1`) over the GloVe word index and BATS."""
    from .analogy_claims import figure5, table1_findings, within_pcs
    from .decomposition import pair_set_terms
    from .offset_baselines import scored_relations
    from ..core.store import open_index
    from ..kinds.offsets import OffsetIndex, build_offset_index
    from ..kinds.words import WordIndex

    glove_word_index(settings.home)
    spec = f"bats:{settings.data['bats']}"
    words_version = open_index(settings.home, "glove", verify=False).manifest["version_id"]
    wanted = {"kind": "offsets", "source": spec, "words_index": "glove", "words_version": words_version,
              "answers": "first", "lowercase": False}
    built = ensure_index(settings.home, "glove-bats-offsets", wanted,
                         lambda: build_offset_index(settings.home, "glove-bats-offsets", "glove", spec,
                                                            replace=True))
    shuffles, replicates = (10, 2) if settings.quick else (50, 10)
    summary = run_table1("glove", spec, home=settings.home, offsets_name="glove-bats-offsets", n_shuffles=shuffles,
                         replicates=replicates, seed=settings.seed, out=run_dir.path)
    overall = [r for r in summary["table1"] if r["category"] == "all"]
    section = Section("offsets", TITLES["offsets"], "analogies")
    section.text.append("Offsets index `glove-bats-offsets` " + ("reused." if built["reused"] else
                        f"built ({built['reason']}).") + f" {summary['relations']} relations; skipped: "
                        f"{', '.join(summary['skipped_relations']) or 'none'}.")
    sets, key = summary["sets"], section.key
    raw = WordIndex.open("glove", home=settings.home).raw
    true_pairs, _ = scored_relations(OffsetIndex.open("glove-bats-offsets", home=settings.home).select(kind="true"))
    within_term = {r.relation: pair_set_terms(raw, r.start_ids, r.end_ids)["within"] for r in true_pairs}
    section.findings += table1_findings(sets, section=key, seed=settings.seed)
    section.findings += [figure5(sets, section=key, seed=settings.seed),
                         within_pcs(within_term, sets, section=key, seed=settings.seed)]
    section.tables.append(Table(
        "Table 1: OCS and PCS of BATS and of the random analogy sets (by broad category)", summary["table1"]))
    section.tables.append(Table("OCS of the random sets (all relations)",
                                [{"set": r["set"], "ocs": r["ocs"], "ocs_iqr": r["ocs_iqr"]} for r in overall]))
    section.tables.append(Table(
        "Table 1's rule per broad category and set: is a random set's PCS within one half-interquartile range of "
        "0.5?", summary["table1_rule"], ["category", "set", "pcs", "distance", "half_iqr", "within"]))
    section.tables.append(Table("OCS and PCS per relation (mean over replicates)", summary["table1_relations"],
                                ["relation", "category", "n_pairs", "bats_ocs", "bats_pcs", "permuted_pcs",
                                 "random-both_ocs", "random-both_pcs"]))
    section.images.append(Image("figure5_offset_similarities.png",
                                "Figure 5: pairwise similarities of true offsets by broad category"))
    section.settings = {"words": "glove", "dataset": spec, "shuffles": shuffles, "replicates": replicates,
                        "seed": settings.seed, "random pool": summary["pool_size"]}
    return section
