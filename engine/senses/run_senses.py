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
from ..runs.plots import line_grid
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



def senses_stage(run_dir: RunDir, settings) -> Section:
    """The main job's section: SemCor (D) against the five evaluation sets (Q, ``ALL``) with the packaged
    MiniLM; ``--quick`` uses the first 3000 SemCor sentences, the first 400 of ALL and edge l = 100."""
    from .sense_claims import table1

    quick = settings.quick
    database = f"wsd:{settings.data['semcor']}"
    queries = f"wsd:{Path(settings.data['wsd-eval']) / 'ALL'}"
    options = SenseRunOptions(database_sentences=3000 if quick else None, query_sentences=400 if quick else None,
                              lemma_edges=[100] if quick else list(DEFAULT_LEMMA_EDGES), seed=settings.seed)
    summary = run_senses(settings.home, database, queries, [("minilm", None)], run_dir.path, options,
                         device=settings.device, dtype=settings.dtype)
    rows = summary["cells"]
    by_cell = {r["cell"]: r for r in rows if r["queries"]}
    section = Section("senses", TITLE, "senses")
    built = summary["meta"]["runs"]["minilm"]["built"]
    section.text.append(f"Token indexes {summary['meta']['runs']['minilm']['database_index']} (D) and "
                        f"{summary['meta']['runs']['minilm']['query_index']} (Q): "
                        + (f"built now: {', '.join(built)}." if built else "reused (manifests match)."))
    section.findings.append(table1(rows, summary["checks"]["minilm"], section=section.key))
    section.tables.append(Table(
        "Table 1: mean P@k (k = 1..50) and MAP per cell of lemma frequency l and sense proportion r, "
        "beside the random baseline", rows,
        ["cell", "queries", "lemmas", "p_at_k_mean", "random_p_at_k_mean", "map", "random_map"]))
    for cell, plot in summary["plots"].items():
        section.images.append(Image(plot, f"Figure 2: P@k against k, {cell}, with the random baseline"))
    run_meta = summary["meta"]["runs"]["minilm"]
    section.settings = {"model": "minilm (last layer, mean pooling)", "database": database, "queries": queries,
                        "l": "the query lemma's instances in D (the paper's text; the authors' code counts the "
                             "sense's: run senses --frequency sense)",
                        "multi-key instances": f"ranked by their first gold key ({run_meta['multi_key_queries']} of "
                                               f"{by_cell['all']['queries']} queries have more than one)",
                        "proper names": "kept (SemCor's person/group/location names; run senses --no-proper-names "
                                        "leaves them out)",
                        "k": options.k_max, "min sense count": options.min_sense_count,
                        "cells": f"l edges {options.lemma_edges}, r edges {options.ratio_edges}",
                        "sentences": "D first 3000, Q first 400" if quick else "all"}
    return section
