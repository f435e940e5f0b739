"""``run ...``: the papers' analyses, each into a run folder (``--out``); ``run all`` runs them together and writes
one report. Each is also a hidden ``bench NAME``, its name before ``run`` existed (:func:`.root.paper_command`)."""

from __future__ import annotations

import math
from pathlib import Path

import click

from ..kinds.analogy_queries import DEFAULT_EPS, EXCLUSIONS, LRCOS_SEEDS, METHODS_HELP
from .query import METHOD
from .root import Context, paper_command
from ..sources.datasets.bats import ANSWER_POLICIES
from ..sources.datasets.google import QUESTION_SOURCES
from ..core.errors import LexprobeError
from ..core.formatting import render
from ..rare_words.ota import DEFAULTS as _DEFAULTS
from ..senses.sense_cells import DEFAULT_LEMMA_EDGES, DEFAULT_RATIO_EDGES
from ..senses.sense_ranking import DEFAULT_K, DEFAULT_MIN_SENSE_COUNT, FREQUENCIES
from .options import (DATASET_HELP, K, NON_NEGATIVE, NON_NEGATIVE_FLOAT, POSITIVE, POSITIVE_FLOAT, SEED, THREADS,
                      build_engine_options, default_offsets_name, device_option, device_options,
                      language_model_option, shard_groups_option)


def _stage_list(value: str | None) -> list[str] | None:
    return [s.strip() for s in value.split(",") if s.strip()] if value else None


@paper_command("all")
@click.option("--out", "out", type=click.Path(file_okay=False),
              help="Run folder: report.md, report.html, report.json and one sub-folder per stage (required).")
@click.option("--data", "data", type=click.Path(file_okay=False, exists=True),
              help="A folder holding the datasets (a data home, or ../shared/data). Default: the data home, "
                   "then ../shared/data beside the repository, then the Google set in gensim's test data.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice in every stage.")
@click.option("--stages", help="Comma-separated stages to run (default: all). See --list-stages.")
@click.option("--quick", is_flag=True, help="Subsets everywhere (e.g. 2,000 Google questions): a smoke run.")
@click.option("--list-stages", is_flag=True, help="Print the stages, what each needs, and exit.")
@device_options
@click.pass_obj
def run_all(obj: Context, out, data, seed, stages, quick, list_stages, device, dtype) -> None:
    """Run the papers' analyses end to end and write RUN_DIR/report.md and a self-contained report.html.

    Indexes are built under --home once and reused when their manifest matches. A stage whose dataset is
    missing is skipped, saying which `lexprobe data fetch` to run. The total time is printed at the end.
    """
    from ..suite import main_job

    if list_stages:
        rows = [{"stage": s.name, "paper": s.paper, "datasets": ",".join(s.datasets), "about": s.about}
                for s in main_job.STAGES]
        click.echo(render(rows, "table"))
        return
    if not out:
        raise click.UsageError("Missing option '--out'.")
    chosen = main_job.select(_stage_list(stages))
    paths, info = main_job.locate_data(Path(data) if data else None)
    settings = main_job.Settings(home=obj.home, seed=seed, quick=quick, device=device, dtype=dtype, data=paths,
                                 data_info=info)
    report = main_job.run_all(Path(out), settings, chosen, echo=click.echo)
    click.echo(f"report: {Path(out) / 'report.md'} and {Path(out) / 'report.html'}")
    failed = [s.key for s in report.sections if s.status == "failed"]
    if failed:
        raise LexprobeError(f"stage(s) failed: {', '.join(failed)} (see the report)")


@paper_command("analogy")
@click.option("--words", "words_index", required=True, help="A words index (e.g. the 400k GloVe).")
@click.option("--dataset", required=True, help=DATASET_HELP)
@click.option("--method", type=METHOD, default="add", show_default=True, help=METHODS_HELP)
@click.option("--answers", type=click.Choice(ANSWER_POLICIES), default="first", show_default=True,
              help="first: only each pair's first answer is correct (the paper); any: any listed answer (vecto).")
@click.option("--lowercase", is_flag=True, help="Lowercase the dataset's words (e.g. Google's names for GloVe).")
@click.option("--google-questions", type=click.Choice(QUESTION_SOURCES), default="file", show_default=True,
              help="google: the file's own 19,544 questions (the standard test), or every ordered pair of pairs "
                   "within a section (pairs, 30,360 questions).")
@click.option("--restrict-vocab", type=click.IntRange(min=1), help="Answer only with the N most frequent words.")
@click.option("--eps", type=POSITIVE_FLOAT, default=DEFAULT_EPS, show_default=True, help="3CosMul's epsilon.")
@click.option("--honest/--no-honest", default=True, show_default=True,
              help="Also run the honest test (nothing excluded) and report how often it returns b, a, a*.")
@click.option("--normalize", is_flag=True, help="Decompose the score on unit vectors instead of the raw ones.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="runs/analogy", show_default=True,
              help="Run folder for the Parquet tables, markdown, summary.json and PNG plots.")
@click.option("--compare", type=click.Choice(["gensim"]),
              help="Also time gensim's one-question loop against lexprobe (3CosAdd) and record it (--record).")
@click.option("--sample", type=click.IntRange(min=1), default=2000, show_default=True,
              help="--compare: questions answered by gensim (and compared).")
@click.option("--faiss-sample", type=click.IntRange(min=1), default=5000, show_default=True,
              help="--compare: questions answered by the batched FAISS search.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of LRCos's random negatives (--method lrcos) and of the --compare samples.")
@click.option("--record", type=click.Path(dir_okay=False),
              help="--compare: markdown file the timing is appended to (default: benchmark.md in --out).")
@click.pass_obj
def run_analogy(obj: Context, words_index, dataset, method, answers, lowercase, google_questions, restrict_vocab,
                eps, honest, normalize, out_dir, compare, sample, faiss_sample, seed, record) -> None:
    """The analogy test over every tuple of every relation, its score decomposition, and (--compare) a timing.

    Writes to --out: questions.parquet (one row per question), accuracy_relation / accuracy_category,
    coverage (the out-of-vocabulary report), honest.parquet + honest_shares, decomposition (per tuple) and
    decomposition_means (per relation) with their PNG bar charts, and summary.json.
    """
    from ..kinds.words import WordIndex
    from ..analogies import run_analogies
    from ..sources.datasets.analogy_sets import usable_relations

    words = WordIndex.open(words_index, home=obj.home)
    relations, coverage = usable_relations(words, dataset, answers=answers, lowercase=lowercase,
                                           questions=google_questions)
    run = run_analogies.run_analogy(words, relations, coverage, out_dir, dataset=dataset, method=method,
                                    answers=answers, restrict_vocab=restrict_vocab, eps=eps, honest=honest,
                                    normalize=normalize, seed=seed)
    click.echo(render(run.test.by_category, "table", ["category", "questions", "accuracy", "mrr"]))
    if run.test.honest_shares:
        click.echo("honest test shares: " + ", ".join(f"{k} {v:.1%}" for k, v in run.test.honest_shares.items()
                                                      if k != "questions"))
    for s in run.summary["skipped"]:
        click.echo(f"skipped {s['relation']}: {s['reason']} ({s['pairs']})")
    click.echo(f"wrote {out_dir}")
    if compare:
        from ..analogies.bench_analogy import run_analogy_bench

        record = record or str(Path(out_dir) / "benchmark.md")
        bench = run_analogy_bench(obj.home, words_index, relations, sample=sample, faiss_sample=faiss_sample,
                                  restrict_vocab=restrict_vocab, seed=seed, record_path=record, dataset=dataset,
                                  analysis_seconds=run.test.seconds if method == "add" else None)
        click.echo(f"speed (--compare gensim): {bench['speedup']:.1f}x gensim's one-question loop, identical "
                   f"answers {bench['agree']:.2%}; recorded in {record}")


@paper_command("compare")
@click.option("--vectors", "vectors", required=True, multiple=True,
              help="An embedding: a words index of the home, else a vector file or packaged alias (as 'index words' "
                   "reads them); repeat it for each embedding.")
@click.option("--limit", type=POSITIVE, help="Vector files: keep the first N words (the most frequent first).")
@click.option("--vocab", type=click.Path(dir_okay=False), help="Vector files: vocabulary of .npy vectors.")
@click.option("--dataset", default="bats", show_default=True, help=DATASET_HELP + " Default: BATS from the data home.")
@click.option("--method", "methods", type=METHOD, multiple=True, default=("add",),
              show_default=True, help="Analogy method(s), repeat for several. " + METHODS_HELP)
@click.option("--exclude", type=click.Choice(EXCLUSIONS), default="inputs", show_default=True,
              help="What 3CosAdd leaves out of the answers: inputs (a, a*, b) or vecto (a, every listed answer of "
                   "a's pair, b: vecto's rule, which it also applies to SimilarToAny).")
@click.option("--lrcos-seeds", type=POSITIVE, default=LRCOS_SEEDS, show_default=True,
              help="LRCos: seeds of its random negatives (--seed, --seed + 1, ...); the row is their mean with a t "
                   "interval (one seed's accuracy is not a result).")
@click.option("--similarity", "similarity", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="Word-similarity set(s) in their released formats (default: every set of WordSim-353, "
                   "SimLex-999, MEN and the Rare Words found in the data home or ../shared/data, else gensim's "
                   "test copies of the first two).")
@click.option("--answers", type=click.Choice(ANSWER_POLICIES), default="first", show_default=True,
              help="first: only each pair's first answer is correct (the paper); any: any listed answer (vecto).")
@click.option("--lowercase", is_flag=True, help="Lowercase the dataset's words.")
@click.option("--restrict-vocab", type=click.IntRange(min=1),
              help="Answer analogies only with the N most frequent words.")
@click.option("--shuffles", type=click.IntRange(1), default=50, show_default=True,
              help="Shuffled offset sets each relation's PCS averages its AUC over.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the PCS shuffles, the bootstrap intervals and LRCos's random words.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="runs/compare", show_default=True,
              help="Run folder for compare.parquet, compare.md and compare.png.")
@click.pass_obj
def run_compare(obj: Context, vectors, limit, vocab, dataset, methods, exclude, lrcos_seeds, similarity, answers,
                lowercase, restrict_vocab, shuffles, seed, out_dir) -> None:
    """Several embeddings in one table and one figure, as vecto's benchmark runner gives them: analogy
    accuracy per --method (with Wilson 95% intervals), mean OCS and PCS over the dataset's relations, and
    word similarity (Spearman and Pearson, 95% bootstrap intervals) per set. Each value is the one 'run
    analogy', 'query offsets' and 'query similarity' give for that embedding alone."""
    from ..analogies.run_compare import run_compare as compare
    from ..core.store import MANIFEST
    from ..kinds.words import WordIndex, load_vectors
    from ..sources import datahome
    from ..sources.datasets.word_pairs import SETS

    def embedding(spec):  # (label, open): an index of the home, else a vector file or alias read in memory
        if (obj.home / spec / MANIFEST).is_file():
            return spec, lambda: WordIndex.open(spec, home=obj.home)
        return f"{spec} (first {limit})" if limit else spec, lambda: load_vectors(spec, limit=limit, vocab=vocab)

    if not similarity:
        places = [datahome.data_home(), datahome.shared_data()]
        similarity = [p for p in (datahome.find_or_packaged(name, places) for name in SETS) if p is not None]
    result = compare([embedding(spec) for spec in vectors], out_dir, dataset=dataset, methods=methods,
                     similarity=similarity, answers=answers, lowercase=lowercase, restrict_vocab=restrict_vocab,
                     n_shuffles=shuffles, seed=seed, exclude=exclude, lrcos_seeds=lrcos_seeds)
    click.echo(render(result.table.to_pylist(), "table", ["embedding", "measure", "dataset", "value", "low", "high",
                                                           "n"]))
    click.echo(f"wrote {out_dir}")


@paper_command("offsets")
@click.option("--words", "words_index", required=True, help="The words index whose raw vectors give the offsets.")
@click.option("--dataset", required=True, help=DATASET_HELP)
@click.option("--offsets", "offsets_name",
              help="Offsets index holding the true, shuffled and random-set offsets (default: WORDS-bats-offsets; "
                   "built when missing).")
@click.option("--relation", "relations", multiple=True,
              help="Only this relation of --dataset, by code (I01) or full name; repeat it for several (their "
                   "random sets are drawn from them and not stored in the offsets index).")
@click.option("--shuffles", type=click.IntRange(1), default=50, show_default=True,
              help="Shuffled offset sets per relation (and per random set) for the PCS.")
@click.option("--replicates", type=click.IntRange(1), default=10, show_default=True,
              help="Replicates of each of the 6 random analogy sets.")
@click.option("--pool", "pool_size", type=click.IntRange(1), default=10_000, show_default=True,
              help="Random words come from the N most frequent alphabetic words of the index not in the dataset.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of every random choice.")
@click.option("--out", type=click.Path(file_okay=False), default="runs/offsets", show_default=True,
              help="Folder for table1.{md,parquet}, table1_relations.*, sets.parquet, figure5 PNG, summary.json.")
@click.option("--compare", is_flag=True,
              help="Also time the run against a per-pair Python-loop baseline (the paper's scripts) on a sample "
                   "of relations, and record it (--record).")
@click.option("--loop-sample", type=click.IntRange(1), default=2, show_default=True,
              help="--compare: relations scored again by the baseline.")
@click.option("--record", type=click.Path(dir_okay=False),
              help="--compare: markdown file the timing is appended to (default: benchmark.md in --out).")
@click.pass_obj
def run_offsets(obj: Context, words_index, dataset, offsets_name, relations, shuffles, replicates, pool_size, seed,
                out, compare, loop_sample, record) -> None:
    """Table 1 and Figure 5 of Fournier et al. (2020): OCS and PCS of every relation beside six random
    analogy sets (permuted, mismatched within / across broad types, random start / end / both words);
    with --compare, timed against a per-pair Python-loop baseline run on a sample in the same process."""
    options = dict(offsets_name=offsets_name or default_offsets_name(words_index, dataset), n_shuffles=shuffles,
                   replicates=replicates, seed=seed, pool_size=pool_size, out=out)
    if relations and compare:
        raise LexprobeError("--relation runs a part of Table 1; --compare times the whole of it: give one")
    if relations:
        options["relation_names"] = relations
    if compare:
        from ..analogies.bench_offsets import run_offsets_bench

        record = record or str(Path(out) / "benchmark.md")
        bench = run_offsets_bench(obj.home, words_index, dataset, loop_sample=loop_sample, record_path=record,
                                  **options)
        summary = bench["summary"]
    else:
        from ..analogies.run_analogies import run_table1

        summary = run_table1(words_index, dataset, home=obj.home, **options)
    click.echo(render(summary["table1"], "table", ["category", "set", "ocs", "ocs_iqr", "pcs", "pcs_iqr", "sets"]))
    why = {"mismatched-within": "needs every broad type to hold 2 relations or more",
           "mismatched-across": "needs 2 broad types or more"}
    types = ", ".join(dict.fromkeys(r["category"] for r in summary["table1"] if r["category"] != "all"))
    for kind in summary.get("skipped_kinds", []):  # never silently: a random set this dataset cannot give
        click.echo(f"note: random set {kind} not built ({why.get(kind, 'not possible here')}; the dataset's "
                   f"types: {types})", err=True)
    if summary.get("skipped_relations"):
        click.echo(f"note: relations left out (fewer than 2 pairs): {', '.join(summary['skipped_relations'])}",
                   err=True)
    click.echo(f"results: {out}")
    if compare:
        click.echo(f"speed (--compare): {bench['speedup']:.0f}x the per-pair loop on {loop_sample} relation(s), "
                   f"same numbers to {bench['gap']:.1e}; recorded in {record}")


def _floats(text: str, what: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise LexprobeError(f"bad {what} {text!r}: give comma-separated numbers like 500 or 100,500") from None


@paper_command("senses")
@click.option("--database", "database_spec", required=True,
              help="The database corpus D as KIND:PATH (e.g. wsd:../shared/data/semcor3.0).")
@click.option("--queries", "queries_spec", required=True,
              help="The query corpus Q as KIND:PATH (e.g. wsd:../shared/data/wsd_eval/ALL); the same spec as "
                   "--database ranks D against itself, leaving each query out.")
@click.option("--model", "models", multiple=True, default=["minilm"], show_default=True,
              help="Encoder (alias, Hugging Face name or local path); repeat to compare models side by side.")
@click.option("--layer", "layer_list", multiple=True, type=int,
              help="Hidden layer (0 = embeddings, negative from the end; default the last); repeat to compare "
                   "layers side by side.")
@click.option("--pooling", type=click.Choice(["mean", "first", "last"]), default="mean", show_default=True,
              help="How a word's subword vectors become one vector.")
@click.option("--out", type=click.Path(file_okay=False), default="runs/senses", show_default=True,
              help="Run folder for queries.parquet, cells.parquet/.md, buckets.md, P@k plots, summary.json.")
@click.option("--limit-queries", type=POSITIVE, help="Rank only a random sample (--seed) of N eligible queries.")
@click.option("--database-sentences", type=POSITIVE, help="Use only the first N sentences of D (trials, tests).")
@click.option("--query-sentences", type=POSITIVE, help="Use only the first N sentences of Q (trials, tests).")
@click.option("-k", "k_max", type=K, default=DEFAULT_K, show_default=True, help="Largest k of P@k and recall@k.")
@click.option("--min-sense-count", type=POSITIVE, default=DEFAULT_MIN_SENSE_COUNT, show_default=True,
              help="A query needs its gold sense at least this often among its candidates in D.")
@click.option("--lemma-edges", default=",".join(str(e) for e in DEFAULT_LEMMA_EDGES), show_default=True,
              help="Cell edges of l, the lemma's frequency in D (comma-separated).")
@click.option("--ratio-edges", default=",".join(str(e) for e in DEFAULT_RATIO_EDGES), show_default=True,
              help="Cell edges of r, the share of the lemma's instances in D with the query's sense.")
@click.option("--any-pos", is_flag=True, help="A lemma's candidates are all its instances, whatever their POS "
                                              "(default: the query's POS only, as WordNet senses are).")
@click.option("--all-lemmas", is_flag=True, help="Rank every instance of D for each query, not only its lemma's.")
@click.option("--frequency", type=click.Choice(FREQUENCIES), default="lemma", show_default=True,
              help="What l of the cells counts: the query lemma's instances in D (the paper's text) or the query "
                   "sense's instances (the authors' code).")
@click.option("--no-proper-names", "no_proper_names", is_flag=True,
              help="Leave out SemCor's proper names (instances of the lemmas person, group and location whose "
                   "words are a name, such as 'Fulton County') from D and Q.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the --limit-queries sample.")
@click.option("--compare", is_flag=True,
              help="Also time the grouped ranking against one query at a time (the paper's loop) on the same "
                   "queries; the comparison goes to OUT/speed.md and one line on stderr.")
@click.option("--record", type=click.Path(dir_okay=False), default="",
              help="With --compare, also append the comparison to this markdown file (e.g. benchmarks/senses.md).")
@build_engine_options
@shard_groups_option
@device_options
@click.pass_obj
def run_senses(obj: Context, database_spec, queries_spec, models, layer_list, pooling, out, limit_queries,
               database_sentences, query_sentences, k_max, min_sense_count, lemma_edges, ratio_edges, any_pos,
               all_lemmas, frequency, no_proper_names, seed, compare, record, engine, ray_address, workers,
               block_sentences, shard_groups, device, dtype) -> None:
    """CWE similarity ranking (Gessler & Schneider, section 3 and Table 1): every query instance of Q whose
    sense occurs at least --min-sense-count times in D ranks D's instances of its lemma by cosine; per query
    P@k and recall@k (k = 1..K) and average precision; per cell of l x r, the mean over k of P@k (the paper's
    number) and MAP beside the exact random baseline. Token indexes are reused when one with the same corpus,
    model, layer and pooling exists under --home, else built. With --engine ray they are built by Ray encoder
    actors and their vectors served by Ray shard actors (the ranking gathers one lemma's candidates at a time);
    the numbers are the same."""
    from ..senses import run_senses as senses_run

    if compare and all_lemmas:
        raise LexprobeError("--compare times the per-lemma ranking: leave out --all-lemmas")
    options = senses_run.SenseRunOptions(pooling=pooling, k_max=k_max, min_sense_count=min_sense_count,
                              lemma_edges=_floats(lemma_edges, "--lemma-edges"),
                              ratio_edges=_floats(ratio_edges, "--ratio-edges"), match_pos=not any_pos,
                              all_lemmas=all_lemmas, limit_queries=limit_queries,
                              database_sentences=database_sentences, query_sentences=query_sentences, seed=seed,
                              frequency=frequency, proper_names=not no_proper_names)
    settings = [(m, (l,) if l is not None else None) for m in models for l in (layer_list or [None])]
    ray_engine = None
    if engine == "ray":
        from ..scale.sharded_senses import RayEngine

        ray_engine = RayEngine(ray_address, workers=workers, block_sentences=block_sentences, groups=shard_groups)
    try:
        summary = senses_run.run_senses(obj.home, database_spec, queries_spec, settings, out, options, ray_engine,
                                        device=device, dtype=dtype)
        click.echo((Path(out) / "buckets.md").read_text().rstrip())
        for label, checks in summary["checks"].items():
            below = checks["cells_not_above_random"]
            click.echo(f"{label}: every cell beats random: {checks['every_cell_beats_random']} "
                       f"({checks['cells_compared']} non-empty cells"
                       + (f"; not above random: {', '.join(below)}" if below else "") + "); rare senses "
                       f"(lowest r interval) score lower: {checks['rare_senses_score_lower']}")
        if compare:
            bench = senses_run.write_ranking_speed(out, summary, k_max=k_max, min_sense_count=min_sense_count,
                                        match_pos=not any_pos, record_path=record or None)
            click.echo(f"speed: grouped ranking {bench['speedup']:.1f}x the one-query loop (APs agree: "
                       f"{bench['agree']}); {Path(out) / 'speed.md'}", err=True)
        click.echo(f"wrote {out}")
    finally:
        if ray_engine is not None:
            ray_engine.close()


@paper_command("wnlampro")
@language_model_option
@click.option("--dataset", required=True, type=click.Path(),
              help="A folder from 'data build-wnlampro', its wnlampro.jsonl, or the authors' WNLaMPro.txt.")
@click.option("--strategies", default="original", show_default=True,
              help="Comma-separated keyword strategies: original (subword tokens), ota (one-token approximation), "
                   "first, last, avg (of the subword embeddings), am, am-context (Attentive Mimicking vectors of "
                   "--am, --am-context).")
@click.option("--am", "am_model", help="AM model (lexprobe am train, preset am) for the am strategy.")
@click.option("--am-context", "am_context_model", help="AM model (preset am-context) for the am-context strategy.")
@click.option("--am-max-contexts", type=POSITIVE, help="Contexts an AM keyword reads at most (default: all its "
                                                        "windows in the model's contexts index).")
@click.option("--replace-policy", type=click.Choice(["multi", "all"]),
              help="Keywords a strategy replaces: multi-token ones (multi) or every one (all). Default: all for am "
                   "strategies (the authors' evaluation), multi for the others (the paper's).")
@click.option("--split", type=click.Choice(["dev", "test", "all"]), default="all", show_default=True,
              help="Which entries to probe (the paper's Figure 2 uses dev+test).")
@click.option("--relations", default="", help="Comma-separated relations to keep (default: all).")
@click.option("--limit", type=POSITIVE, help="Probe at most N entries per relation, drawn with --seed.")
@click.option("--cutoff", type=POSITIVE, default=100, show_default=True, help="Reciprocal rank is 0 beyond this rank.")
@click.option("--batch-size", type=POSITIVE, default=64, show_default=True, help="Sentences per forward pass.")
@click.option("--ota-iterations", type=POSITIVE, help="OTA iterations (default: lexprobe.rare_words.ota's default).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of --limit's sample and of OTA's contexts.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run folder for tables and plots.")
@click.option("--threads", type=THREADS, help="torch CPU threads (default: torch's choice).")
@device_options
@click.pass_obj
def run_wnlampro(obj: Context, model, dataset, strategies, split, relations, limit, cutoff, batch_size,
                 ota_iterations, seed, out, threads, device, dtype, am_model, am_context_model, am_max_contexts,
                 replace_policy) -> None:
    """MRR, P@3 and P@10 per relation and frequency bucket for each keyword strategy, beside a random ranking."""
    from ..rare_words import run_rare_words
    from ..rare_words.am_store import am_providers

    names = [s.strip() for s in strategies.split(",") if s.strip()]
    providers = am_providers({"am": am_model, "am-context": am_context_model},
                             [n for n in names if n in ("am", "am-context")], model=model, home=obj.home,
                             max_contexts=am_max_contexts)
    rels = [r.strip() for r in relations.split(",") if r.strip()]
    result = run_rare_words.run_wnlampro(model, dataset, out, strategies=names, split=split, relations=rels,
                                         limit=limit, cutoff=cutoff, batch_size=batch_size,
                                         ota_iterations=ota_iterations, seed=seed, threads=threads, device=device,
                                         dtype=dtype, providers=providers, policy=replace_policy)
    click.echo(result["markdown"])
    click.echo(f"skipped: {result['summary']['skipped']}; run folder: {out}")


def _rates(text: str) -> list[float]:
    """--lrs: learning rates, each a finite number above 0."""
    try:
        rates = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas, not {text!r}") from None
    bad = [r for r in rates if not math.isfinite(r) or r <= 0]
    if bad or not rates:
        raise click.BadParameter(f"learning rates must be finite numbers above 0, not {text!r}")
    return rates


@paper_command("ota-recovery")
@click.option("--model", default="minilm", show_default=True, help="The model.")
@click.option("--words", "n_words", type=POSITIVE, default=32, show_default=True,
              help="One-token words approximated as if unknown (the paper: 1000).")
@click.option("--iterations", type=POSITIVE, default=1000, show_default=True, help="Iterations (the paper: up to 5000).")
@click.option("--contexts", default="static,random", show_default=True, help="Context variants, comma-separated.")
@click.option("--inits", default="zeros", show_default=True, help="Inits, comma-separated (zeros, mean).")
@click.option("--lrs", default="0.001", show_default=True, callback=lambda ctx, param, value: _rates(value),
              help="Learning rates, comma-separated.")
@click.option("--every", type=POSITIVE, default=50, show_default=True, help="Iterations between measurements.")
@click.option("--layers", default="all", show_default=True, help="Layers in the loss (see lexprobe ota).")
@click.option("--patience", type=NON_NEGATIVE, default=_DEFAULTS["patience"], show_default=True,
              help="Early stop evaluated on the recorded losses.")
@click.option("--tol", type=NON_NEGATIVE_FLOAT, default=_DEFAULTS["tol"], show_default=True,
              help="Relative improvement for --patience.")
@click.option("--batch-size", type=POSITIVE, default=256, show_default=True, help="Rows (word x setting) per batch.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the word sample and contexts.")
@click.option("--out", type=click.Path(file_okay=False), default="runs/ota_recovery", show_default=True,
              help="Run folder: curve and summary tables (Parquet + markdown), recovery.png.")
@click.option("--record", type=click.Path(dir_okay=False), default="", show_default=False,
              help="Also append the printed summary to this markdown file (default: none; the run writes only "
                   "into --out).")
@device_option
def run_ota_recovery(model, n_words, iterations, contexts, inits, lrs, every, layers, patience, tol, batch_size,
                     seed, out, record, device) -> None:
    """Single-token recovery (the paper's Figure 1): mean cosine distance of OTA to the true embedding of
    one-token words against iterations, per context variant, init and learning rate; plus how many
    iterations each setting needs for 95% of its final quality and where the early stop would end."""
    from ..rare_words.ota_recovery import REFERENCE, winner
    from ..runs.bench_record import record as record_md
    from ..rare_words import run_rare_words

    variants = [c.strip() for c in contexts.split(",") if c.strip()]
    init_list = [i.strip() for i in inits.split(",") if i.strip()]
    res = run_rare_words.run_ota_recovery(model, out, n_words=n_words, iterations=iterations, contexts=variants,
                                          inits=init_list, lrs=lrs, every=every, layers=layers,
                                          patience=patience, tol=tol, batch_size=batch_size, seed=seed,
                                          device=device)
    png = res["png"]
    best = winner(res["summary"], *REFERENCE[1:]) or winner(res["summary"], init_list[0], lrs[0])
    notes = [f"model {model}, {n_words} one-token words (seed {seed}), {iterations} iterations, layers {layers}; "
             f"curve and PNG in {out} ({png.name})",
             "start/end: mean cosine distance to the true input embedding at iteration 0 and at the last iteration",
             "its_to_95: first iteration with mean similarity >= 95% of the same setting's final similarity; "
             f"its_to_95_ref: the same against the reference setting {REFERENCE}",
             f"stop_it / dist_at_stop: mean iteration where the early stop (patience {patience}, tol {tol}) ends a "
             "word, and the mean distance there",
             "read_start/read_end: the same distance with both vectors weighted by the first normalisation layer's "
             "weights (the embedding as the model reads it)"] + \
            ([f"winning context variant (lower final distance): **{best}**"] if best else [])
    md = record_md(record or None, f"bench ota-recovery: {model}", res["summary"], notes=notes,
                   columns=["contexts", "init", "lr", "start", "end", "best_iteration", "its_to_95", "its_to_95_ref",
                            "stop_it", "dist_at_stop", "read_start", "read_end"])
    click.echo(md)
