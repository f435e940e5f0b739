"""The Table-1 experiment of "BERT Has Uncommon Sense" as one call: find or build the token indexes of the
database D and the query corpus Q for each model (or layer), rank, and write the bucket report side by side.

Used by ``lexprobe run senses`` and by the main job's ``senses`` stage (:func:`senses_stage`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa

from .bench_senses import run_ranking_bench
from .sense_cells import (DEFAULT_LEMMA_EDGES, DEFAULT_RATIO_EDGES, bucket_checks, cell_labels, check_edges,
                                    summarize_runs)
from .sense_ranking import (DEFAULT_K, DEFAULT_MIN_SENSE_COUNT, FREQUENCIES, Instances, rank_senses,
                               without_proper_names)
from ..core.errors import LexprobeError
from ..core.formatting import markdown_table
from ..runs.plots import bar_chart, line_grid
from ..runs.report import Image, Section, Table
from ..runs.run_dir import RunDir

TITLE = "Similarity ranking of sense-annotated tokens (Table 1, Figure 2)"


@dataclass
class SenseRunOptions:
    """What ``bench senses`` takes besides the corpora and models (see its ``--help``)."""

    pooling: str = "mean"
    k_max: int = DEFAULT_K
    min_sense_count: int = DEFAULT_MIN_SENSE_COUNT
    lemma_edges: Sequence[float] = DEFAULT_LEMMA_EDGES
    ratio_edges: Sequence[float] = DEFAULT_RATIO_EDGES
    match_pos: bool = True
    all_lemmas: bool = False
    limit_queries: int | None = None
    database_sentences: int | None = None
    query_sentences: int | None = None
    seed: int = 0
    frequency: str = "lemma"         # what l counts: the lemma's instances in D (the paper's text) or the sense's
    proper_names: bool = True        # False: leave out SemCor's person/group/location names

    def check(self) -> None:
        if self.k_max < 1 or self.min_sense_count < 1:
            raise LexprobeError("-k and --min-sense-count must be at least 1")
        if self.frequency not in FREQUENCIES:
            raise LexprobeError(f"--frequency must be one of {', '.join(FREQUENCIES)}, not {self.frequency!r}")
        try:
            self.lemma_edges = check_edges("--lemma-edges", self.lemma_edges)
            self.ratio_edges = check_edges("--ratio-edges", self.ratio_edges)
        except ValueError as exc:
            raise LexprobeError(str(exc)) from None


def _canonical_spec(spec: str) -> str:
    """``KIND:PATH`` with the path made absolute, so the same corpus always gives the same spec."""
    from ..sources.datasets.corpora import parse_spec

    kind, path = parse_spec(spec)
    return f"{kind}:{path.resolve()}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.-") or "x"


def token_index_for(home: Path, spec: str, model: str, layers: tuple[int, ...] | None, pooling: str,
                    max_sentences: int | None, build=None, *, device="auto", dtype="float32") -> tuple[str, bool]:
    """The name of a token index of ``spec`` made with these settings (``dtype`` among them; the ``device`` a new
    build runs on is not one): an existing one whose manifest says so (the same corpus: the same SHA-256 of its
    files, recorded at build time), else a new one built now (by ``build``, default :func:`build_token_index`).
    Returns (name, built)."""
    from ..sources.datasets.corpora import parse_spec, provenance
    from ..core.store import list_indexes, read_manifest
    from ..kinds.tokens import KIND, build_token_index

    origin = provenance(spec)
    want = origin["corpus"]
    for path in list_indexes(home):
        try:
            meta = read_manifest(path / "manifest.json")
        except Exception:  # a damaged index is not reused; 'index verify' reports it
            continue
        if meta.get("kind") != KIND:
            continue
        m = meta.get("meta", {})
        if m.get("corpus_sha256"):  # the same files, wherever they lie and however the path was typed
            same_corpus = (m["corpus_sha256"] == origin["corpus_sha256"]
                           and m.get("corpus", "").partition(":")[0] == want.partition(":")[0])
        else:  # an index from before checksums were recorded: by resolved path
            try:
                same_corpus = _canonical_spec(m.get("corpus", "")) == want
            except LexprobeError:
                continue
        n_states = int(m.get("num_layers", 0)) + 1
        asked = sorted({l % n_states for l in layers}) if layers else [n_states - 1]
        if (same_corpus and m.get("model") == model and m.get("layers") == asked and m.get("pooling") == pooling
                and m.get("max_sentences") == max_sentences and m.get("dtype", "float32") == dtype):
            return path.name, False
    kind, corpus_path = parse_spec(spec)
    stem = corpus_path.name.replace(".data.xml", "")
    layer_part = "-".join(str(l) for l in layers) if layers else "last"
    base = _slug(f"{stem}-{Path(model).name or model}-l{layer_part}-{pooling}"
                 + (f"-s{max_sentences}" if max_sentences else "") + (f"-{dtype}" if dtype != "float32" else ""))[:100]
    name, n = base, 2
    while (home / name).exists():
        name, n = f"{base}-{n}", n + 1
    (build or build_token_index)(name, model, want, home=home, layers=layers, pooling=pooling,
                                 max_sentences=max_sentences, **({"device": device, "dtype": dtype} if build is None
                                                                  else {}))
    return name, True


def run_senses(home: Path, database_spec: str, queries_spec: str, settings: Sequence[tuple[str, tuple | None]],
               out: str | Path, options: SenseRunOptions, engine=None, *, device="auto",
               dtype="float32") -> dict:
    """Rank Q against D once per (model, layers) in ``settings`` and write the report into ``out``.

    The same spec for both (and the same sentence limit) ranks D against itself, leaving each query out.
    Returns the report's summary plus ``runs`` (label -> per-query table) and ``instances`` (the first
    run's (database, queries) :class:`Instances`, for the speed benchmark).
    ``engine`` (:class:`lexprobe.scale.sharded_senses.RayEngine`) builds the token indexes and serves their vectors
    on Ray instead of this process; the ranking and its numbers are the same. ``device`` and ``dtype``: where and
    in which precision the token indexes are built (:class:`lexprobe.sources.encoder.TokenEncoder`; Ray's
    encoder actors run on their CPUs in float32).
    """
    from ..kinds.tokens import TokenIndex

    options.check()
    if engine is not None and dtype != "float32":
        raise LexprobeError(f"--dtype {dtype} needs --engine local (Ray's encoder actors run in float32)")
    same = (_canonical_spec(database_spec) == _canonical_spec(queries_spec)
            and options.database_sentences == options.query_sentences)
    runs, meta_runs, first = {}, {}, None
    for model, layers in settings:
        label = _slug(f"{Path(model).name or model}" + (f"-l{'-'.join(map(str, layers))}" if layers else ""))
        build, open_index = (engine.build, engine.open) if engine else (None, TokenIndex.open)
        d_name, d_built = token_index_for(home, database_spec, model, layers, options.pooling,
                                          options.database_sentences, build, device=device, dtype=dtype)
        q_name, q_built = (d_name, False) if same else token_index_for(home, queries_spec, model, layers,
                                                                       options.pooling, options.query_sentences,
                                                                       build, device=device, dtype=dtype)
        d_index = open_index(d_name, home=home)
        database = Instances(d_index.table, d_index.unit)
        if same:
            queries = database
        else:
            q_index = open_index(q_name, home=home)
            queries = Instances(q_index.table, q_index.unit)
        left_out = {}
        if not options.proper_names:
            database, left_out["database"] = without_proper_names(database)
            queries, left_out["queries"] = (database, left_out["database"]) if same else without_proper_names(queries)
        table, skips = rank_senses(database, queries, k_max=options.k_max, min_sense_count=options.min_sense_count,
                                   match_pos=options.match_pos, all_lemmas=options.all_lemmas, same_corpus=same,
                                   lemma_edges=options.lemma_edges, ratio_edges=options.ratio_edges,
                                   limit_queries=options.limit_queries, seed=options.seed,
                                   frequency=options.frequency, desc=f"rank {label}")
        if not len(table):
            raise LexprobeError(f"no query of {queries_spec} has a sense occurring {options.min_sense_count}+ times "
                                f"in {database_spec} ({'; '.join(f'{n} {r}' for r, n in skips.items())})")
        runs[label] = table
        meta_runs[label] = {"model": model, "database_index": d_name, "query_index": q_name,
                            "built": [n for n, b in ((d_name, d_built), (q_name, q_built)) if b],
                            "skipped_queries": skips, "layers": d_index.settings.get("layers"),
                            "multi_key_queries": _multi_key(table),
                            **({"proper_names_left_out": left_out} if left_out else {})}
        first = first or (database, queries)
    meta = {"database": database_spec, "queries": queries_spec, "same_corpus": same,
            **options.__dict__, "runs": meta_runs}
    summary = write_bucket_report(RunDir(out), runs, cell_labels(options.lemma_edges, options.ratio_edges),
                                  meta=meta)
    return {**summary, "runs": runs, "instances": first}


def write_ranking_speed(out: str | Path, summary: dict, *, k_max: int, min_sense_count: int, match_pos: bool,
                        record_path: str | None = None) -> dict:
    """Time the grouped ranking against one query at a time on the run's first (database, queries)
    (:func:`.bench_senses.run_ranking_bench`, ``summary`` from :func:`run_senses`) and write the comparison
    into the run folder as speed.md."""
    database, queries = summary["instances"]
    bench = run_ranking_bench(database, queries, label=next(iter(summary["runs"])), k_max=k_max,
                              min_sense_count=min_sense_count, match_pos=match_pos, record_path=record_path)
    RunDir(out).write_text("speed.md", bench["markdown"])
    return bench


def _multi_key(table: pa.Table) -> int:
    """How many queries have more than one gold key (each is ranked by its first)."""
    if "senses" not in table.column_names:
        return 0
    return int(sum(len(keys or ()) > 1 for keys in table.column("senses").to_pylist()))


def write_bucket_report(run: RunDir, runs: dict[str, pa.Table], labels: Sequence[str], *, meta: dict) -> dict:
    """Write a Table-1 report of several runs (models or layers) side by side into ``run``:

    - ``queries.parquet``: every run's per-query table with a ``run`` column;
    - ``cells.parquet`` / ``cells.md``: one row per (run, cell) with the summary numbers;
    - ``buckets.md``: the cells as rows and each run's mean P@k and MAP as columns, beside the random baseline
      (taken from the first run; the same database and queries give every run the same baseline);
    - ``p_at_k-<cell>.png``: P@k curves per cell (one per run, and the random baseline), like Figure 2;
    - ``summary.json``: ``meta``, the cell rows and the two checks (every cell beats random; rare senses
      r below the first ratio edge score lower than the rest).
    Returns the summary.
    """
    tables = [table.append_column("run", pa.array([name] * len(table), pa.string())) for name, table in runs.items()]
    cell_rows, all_curves = summarize_runs(runs, labels)
    run.write_table("queries", pa.concat_tables(tables, promote_options="default"), markdown=False)
    run.write_table("cells", cell_rows)
    names = list(runs)
    first = [r for r in cell_rows if r["run"] == names[0]]
    wide = []
    for base in first:
        row = {"cell": base["cell"], "queries": base["queries"], "random P@k": base["random_p_at_k_mean"],
               "random MAP": base["random_map"]}
        for name in names:
            mine = next(r for r in cell_rows if r["run"] == name and r["cell"] == base["cell"])
            row[f"{name} P@k"], row[f"{name} MAP"] = mine["p_at_k_mean"], mine["map"]
        wide.append(row)
    k_max = next((len(c["p_at_k"]) for curves in all_curves.values() for c in curves.values()), 0)
    note = (f"P@k = mean over k = 1..{k_max} of the mean P@k of the cell's queries (the paper's Table-1 number); "
            "MAP = mean true average precision over the full candidate ranking.")
    run.write_text("buckets.md", markdown_table(wide) + "\n\n" + note + "\n")
    panels = {}
    for label in labels:
        curves = {name: all_curves[name][label]["p_at_k"] for name in names if label in all_curves[name]}
        if curves:
            panels[label] = {**curves, "random": all_curves[names[0]][label]["random_p_at_k"]}
    plots = {}
    if panels:  # one figure: a panel per cell, shared axes from 0 to 1
        plots["all cells"] = line_grid(run.file("p_at_k.png"), np.arange(1, k_max + 1), panels, unit_y=True,
                                       title="P@k against k per cell (lemma frequency l, sense proportion r)",
                                       xlabel="k", ylabel="P@k").name
    summary = {"meta": meta, "cells": cell_rows, "plots": plots, "checks": bucket_checks(cell_rows)}
    run.write_json("summary.json", summary)
    return summary



COMPARED = ("minilm", "splade-tiny", "smollm2")
MODEL_LABELS = {"minilm": "MiniLM", "splade-tiny": "SPLADE-tiny", "smollm2": "SmolLM2"}
MODEL_ABOUT = {"minilm": "all-MiniLM-L6-v2, a sentence encoder distilled from a BERT-like model",
               "splade-tiny": "a 2-layer BERT masked LM (BERT's WordPiece vocabulary)",
               "smollm2": "SmolLM2-135M, a causal LM: the paper's GPT-2 analogue"}
CAUSAL = "smollm2"
MAX_LENGTH = 128          # subwords per model input; a longer sentence is read in windows (SemCor: a handful)
SEMCOR_FRACTION = 0.1     # of SemCor's sentences, stratified by document: what 330 s on 2 cores allow (docs/senses.md)
QUICK_FRACTIONS = {"semcor": 0.01, "streusle": 0.2}
PAPER_LEMMA_EDGE = 500


def _sample_key(corpus) -> str:
    """What a cut corpus holds: the SHA-256 of its target ids in order (the sentences follow from them)."""
    import hashlib

    return hashlib.sha256("\n".join(corpus.targets.column("instance_id").to_pylist()).encode()).hexdigest()


def _model_key(model: str, dtype: str) -> str:
    return f"{model}|last layer|mean|max_length {MAX_LENGTH}|{dtype}"


def sample_index_for(home: Path, corpus, origin: dict, model: str, encoder, *, part: str,
                     dtype: str = "float32", causal: bool = False) -> tuple[str, bool]:
    """The token index of a cut corpus (:mod:`.sense_sample`) for ``model`` (last layer, mean pooling,
    :data:`MAX_LENGTH`): one whose manifest records the same cut (the SHA-256 of its target ids) and model
    settings, else one built now with ``encoder()`` (called only then: a reused index loads no model). A
    ``causal`` model reads each sentence only up to its last target (:func:`.sense_sample.causal_prefixes`: the
    same vectors, less work); the index keeps the whole sentences. Returns (name, built)."""
    from ..core.store import check_new_index, list_indexes, read_manifest, write_lock
    from ..core.vector_index import IndexParams
    from ..kinds.tokens import KIND, encode_corpus, write_token_index
    from .sense_sample import causal_prefixes

    key, model_key = _sample_key(corpus), _model_key(model, dtype)
    for path in list_indexes(home):
        try:
            meta = read_manifest(path / "manifest.json")
        except Exception:  # a damaged index is not reused; 'index verify' reports it
            continue
        m = meta.get("meta", {})
        if meta.get("kind") == KIND and m.get("sample_sha256") == key and m.get("sample_model") == model_key:
            return path.name, False
    base = _slug(f"{corpus.name}-{part}-{Path(model).name or model}-{key[:10]}")
    name, n = base, 2
    while (home / name).exists():
        name, n = f"{base}-{n}", n + 1
    check_new_index(home, name)
    enc = encoder()
    with write_lock(home, name):
        encoded = encode_corpus(enc, causal_prefixes(corpus) if causal else corpus, desc=f"index {name}")
        write_token_index(home, name, corpus, [(corpus.targets, *encoded)], settings=enc.settings(),
                          corpus_spec=origin["corpus"], max_sentences=None, params=IndexParams(),
                          meta={**origin, "sample_sha256": key, "sample_model": model_key, "sample_part": part})
    return name, True


def _corpora(settings) -> tuple[dict, list[str]]:
    """The two corpora of the comparison, each cut to what its ranking reads: ``key -> (database, queries,
    origin, counts, lemma edges, description)``; and notes on what is left out."""
    from ..sources.datasets.corpora import provenance, read_corpus
    from .sense_sample import ranking_needs, sample_sentences, split_corpus

    quick, seed = settings.quick, settings.seed
    out, notes = {}, []
    fraction = QUICK_FRACTIONS["semcor"] if quick else SEMCOR_FRACTION
    semcor_spec = f"wsd:{settings.data['semcor']}"
    semcor = sample_sentences(read_corpus(semcor_spec), fraction, seed=seed)
    queries = read_corpus(f"wsd:{Path(settings.data['wsd-eval']) / 'ALL'}")
    d, q, counts = ranking_needs(semcor, queries, min_sense_count=DEFAULT_MIN_SENSE_COUNT)
    out["semcor"] = (d, q, provenance(semcor_spec), counts, [PAPER_LEMMA_EDGE * fraction],
                     f"D = {fraction:.0%} of SemCor's sentences (seeded, stratified by document), Q = the five "
                     "WSD evaluation sets (ALL)")
    if "streusle" in settings.data:
        spec = f"streusle:{settings.data['streusle']}"
        whole = read_corpus(spec)
        train, held = split_corpus(whole, ["train"]), split_corpus(whole, ["dev", "test"])
        if quick:
            train = sample_sentences(train, QUICK_FRACTIONS["streusle"], seed=seed)
            held = sample_sentences(held, QUICK_FRACTIONS["streusle"], seed=seed)
        d, q, counts = ranking_needs(train, held, min_sense_count=DEFAULT_MIN_SENSE_COUNT)
        out["streusle"] = (d, q, provenance(spec), counts, list(DEFAULT_LEMMA_EDGES),
                           "D = STREUSLE's train split, Q = its dev and test splits (the paper's split of PDEP: "
                           "the train split is the database, dev and test query it); senses = SNACS construals")
    else:
        notes.append("STREUSLE not found: the preposition corpus is left out.")
    return out, notes


CORPUS_LABELS = {"semcor": "SemCor", "streusle": "STREUSLE"}


def compare_senses(settings, run_dir: RunDir) -> dict:
    """The model comparison of the main job: index (or reuse) both cut corpora with each model of
    :data:`COMPARED`, rank, and write per corpus the Table-1 report (:func:`write_bucket_report`), the comparison
    tables and the lift figure into ``run_dir/<corpus>``. Returns per corpus its comparison, report summary,
    counts and description, and the notes."""
    from ..kinds.tokens import TokenIndex
    from ..sources.encoder import TokenEncoder
    from ..sources.models import model_kind
    from .sense_compare import compare_models

    corpora, notes = _corpora(settings)
    home = Path(settings.home)
    names: dict[tuple[str, str], tuple[str, str]] = {}
    built = []
    for model in COMPARED:  # one model at a time, on every core, loaded once for both corpora
        loaded, causal = [], model_kind(model) == "causal"

        def encoder(model=model, loaded=loaded):
            if not loaded:
                loaded.append(TokenEncoder(model, max_length=MAX_LENGTH, device=settings.device,
                                           dtype=settings.dtype))
            return loaded[0]

        for key, (d, q, origin, *_rest) in corpora.items():
            pair = []
            for part, corpus in (("database", d), ("queries", q)):
                name, new = sample_index_for(home, corpus, origin, model, encoder, part=part, dtype=settings.dtype,
                                             causal=causal)
                pair.append(name)
                built += [name] if new else []
            names[(key, model)] = tuple(pair)
        loaded.clear()
    results = {}
    for key, (_d, _q, _origin, counts, edges, about) in corpora.items():
        labels = cell_labels(edges, DEFAULT_RATIO_EDGES)
        runs = {}
        for model in COMPARED:
            d_name, q_name = names[(key, model)]
            d_index, q_index = TokenIndex.open(d_name, home=home), TokenIndex.open(q_name, home=home)
            table, _skips = rank_senses(Instances(d_index.table, d_index.unit), Instances(q_index.table, q_index.unit),
                                        min_sense_count=DEFAULT_MIN_SENSE_COUNT, lemma_edges=edges,
                                        seed=settings.seed, desc=f"rank {key} {model}")
            runs[model] = table
        sub = RunDir(run_dir.path / key)
        summary = write_bucket_report(sub, runs, labels, meta={"corpus": key, "about": about, "counts": counts,
                                                               "indexes": {m: names[(key, m)] for m in COMPARED}})
        comparison = compare_models(runs, labels, causal=CAUSAL, seed=settings.seed, key=key)
        sub.write_table("compare_cells", comparison.cells)
        sub.write_table("spreads", comparison.spreads)
        sub.write_table("contrasts", comparison.contrasts)
        sub.write_table("causal_gaps", comparison.causal_gaps)
        judged = [c for c in labels if any(r["cell"] == c and r["queries"] for r in comparison.cells)]
        lift = bar_chart(sub.file("lift.png"), judged,
                         {MODEL_LABELS[m]: [_row(comparison, m, c)["lift"] for c in judged] for m in COMPARED},
                         intervals={MODEL_LABELS[m]: [(_row(comparison, m, c)["lift_low"],
                                                       _row(comparison, m, c)["lift_high"]) for c in judged]
                                    for m in COMPARED},
                         title=f"{CORPUS_LABELS[key]}: lift over the random baseline per cell (95% lemma bootstrap)",
                         ylabel="mean P@k / random mean P@k")
        results[key] = {"comparison": comparison, "summary": summary, "counts": counts, "about": about,
                        "edges": edges, "plots": [f"{key}/{p}" for p in summary["plots"].values()]
                        + [f"{key}/{lift.name}"]}
    return {"corpora": results, "notes": notes, "built": built}


def _row(comparison, model: str, cell: str) -> dict:
    return next(r for r in comparison.cells if r["model"] == model and r["cell"] == cell)


def senses_stage(run_dir: RunDir, settings) -> Section:
    """The main job's section: MiniLM, SPLADE-tiny and SmolLM2 compared on SemCor (a sample of it as D, the WSD
    evaluation sets as Q) and on STREUSLE (train as D, dev and test as Q); ``--quick`` samples 1% of SemCor and a
    fifth of STREUSLE."""
    from .sense_claims import comparison_findings, not_here

    result = compare_senses(settings, run_dir)
    section = Section("senses", TITLE, "senses")
    section.text += result["notes"]
    section.text.append("Token indexes " + (f"built now: {', '.join(result['built'])}." if result["built"]
                                            else "reused (manifests match)."))
    for key, r in result["corpora"].items():
        c, comparison = r["counts"], r["comparison"]
        section.text.append(
            f"{CORPUS_LABELS[key]}: {r['about']}. Encoded: {c['database sentences encoded']:,} of "
            f"{c['database sentences']:,} database sentences (those holding an instance of an eligible query's "
            f"lemma: the rankings are those of the whole D), {c['eligible queries']:,} of {c['query instances']:,} "
            f"query instances (sense {DEFAULT_MIN_SENSE_COUNT}+ times in D), {comparison.lemmas:,} lemmas. Cells: "
            f"l edge {r['edges'][0]:g}" + (f" (the paper's 500 scaled by the sample fraction, so the cells hold the "
                                            f"lemmas they would in the whole SemCor)" if key == "semcor" else "")
            + "." + (" Why a sample: SmolLM2 costs about 8 times MiniLM per subword, and the three models on the "
                     "whole SemCor would take about 20 minutes on 2 cores; a tenth of it (with STREUSLE whole) keeps "
                     "the stage within 330 s. What it buys is judged claim by claim: a finding whose interval could "
                     "not have detected the effect the paper describes says underpowered." if key == "semcor"
                     and not settings.quick else ""))
        section.findings += comparison_findings(comparison, corpus=CORPUS_LABELS[key], labels=MODEL_LABELS,
                                                section=section.key)
        section.tables.append(Table(
            f"{CORPUS_LABELS[key]}: mean P@k (k = 1..50) per model and cell, the random baseline, the lift over it "
            "and the share of the possible gain, with 95% lemma-clustered bootstrap intervals", comparison.cells,
            ["model", "cell", "queries", "lemmas", "p_at_k", "random_p_at_k", "lift", "lift_low", "lift_high",
             "share", "share_low", "share_high"]))
        section.tables.append(Table(
            f"{CORPUS_LABELS[key]}: between-model spread per cell (share of possible gain; and of mean P@k against "
            "the smallest gain over random)", comparison.spreads,
            ["cell", "lemmas", "spread_share", "spread_share_low", "spread_share_high", "spread_p_at_k", "gain_min",
             "little_ratio", "little_ratio_low", "little_ratio_high"]))
        captions = [f"Figure 2 ({CORPUS_LABELS[key]}): P@k against k per cell, each model and the random baseline",
                    f"{CORPUS_LABELS[key]}: lift over the random baseline per cell and model"]
        section.images += [Image(p, cap) for p, cap in zip(r["plots"], captions)]
    section.findings += not_here(section=section.key)
    section.settings = {
        "models": "; ".join(f"{MODEL_LABELS[m]} ({MODEL_ABOUT[m]})" for m in COMPARED),
        "token vectors": f"last layer, mean of the target's subwords; at most {MAX_LENGTH} subwords per input "
                         "(longer sentences in overlapping windows)",
        "l": "the query lemma's instances in D (the paper's text)", "k": DEFAULT_K,
        "min sense count": DEFAULT_MIN_SENSE_COUNT, "intervals": "95% percentile bootstrap over lemmas, "
                                                                "2000 resamples",
        "sample": (f"SemCor {QUICK_FRACTIONS['semcor']:.0%}, STREUSLE {QUICK_FRACTIONS['streusle']:.0%} (quick)"
                   if settings.quick else f"SemCor {SEMCOR_FRACTION:.0%} of sentences; STREUSLE whole")}
    return section
