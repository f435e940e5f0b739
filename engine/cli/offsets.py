"""``query offsets`` (OCS and PCS of one relation or pair file) and ``run offsets`` (Table 1, Figure 5)."""

from __future__ import annotations

from pathlib import Path

import click

from .root import Context, format_option, keep_known, paper_command, query_group, skip_unknown_option
from .options import SEED
from ..core.errors import LexprobeError
from ..core.formatting import render
from .query import DATASET_HELP, _default_offsets_name


@query_group.command("offsets")
@click.option("--index", "name", required=True, help="A words index: the raw vectors the offsets are taken from.")
@click.option("--relation", "relation", multiple=True,
              help="A relation of --dataset, by code (I01) or full name ('I01 [noun - plural_reg]'); repeat it for "
                   "several (one row each).")
@click.option("--dataset", help="With --relation: " + DATASET_HELP)
@click.option("--pairs", "pairs_file", type=click.Path(dir_okay=False),
              help="Instead of --relation: a file of word pairs, 'start end' per line ('#' starts a comment).")
@click.option("--shuffles", type=click.IntRange(1), default=50, show_default=True,
              help="Shuffled offset sets the PCS averages its AUC over.")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of the shuffles (the same as 'bench offsets' uses for a relation of the same name).")
@skip_unknown_option
@format_option
@click.pass_obj
def query_offsets(obj: Context, name, relation, dataset, pairs_file, shuffles, seed, skip_unknown, fmt) -> None:
    """Offset concentration (OCS) and pairing consistency (PCS) of one set of word pairs.

    OCS: mean cosine between the pairs' offsets (end - start). PCS: mean ROC AUC separating those pairwise
    similarities from the ones of --shuffles shuffled sets (end words re-assigned without true pairs or zero
    offsets). Rows: relation, n_pairs, ocs, pcs.
    """
    from ..analogies.offset_consistency import pair_file_ids, score_pairs
    from ..kinds.words import WordIndex
    from ..sources.datasets.analogy_sets import usable_relations

    if bool(pairs_file) == bool(relation):
        raise LexprobeError("give either --relation (with --dataset) or --pairs")
    words = WordIndex.open(obj.home, name)
    sets = []  # (label, start ids, end ids)
    if pairs_file:
        from ..analogies.offset_consistency import read_pair_file

        rows = keep_known(words, read_pair_file(pairs_file), lambda p: p[:2], skip=skip_unknown, source=pairs_file,
                          label=lambda p: p[2])
        sets.append((Path(pairs_file).name, *pair_file_ids(words, pairs_file, rows)))
    else:
        if not dataset:
            raise LexprobeError("--relation needs --dataset (e.g. bats:PATH)")
        relations, coverage = usable_relations(words, dataset)
        dropped = {c.relation: c for c in coverage}
        chosen = []
        for wanted in relation:
            found = [r for r in relations if wanted == r.name or wanted.upper() == r.code]
            if not found:
                raise LexprobeError(f"{dataset}: no relation {wanted!r} (relations: "
                                    f"{', '.join(r.code for r in relations)})")
            if found[0] not in chosen:  # a relation named twice is answered once
                chosen.append(found[0])
        for rel in chosen:
            c = dropped.get(rel.name)
            if c is not None and c.kept < c.pairs:  # never silently: which pairs were left out, and why
                why = ([f"{c.dropped} not in index {name!r} ({' '.join(c.dropped_words[:5])})"] if c.dropped else []) \
                    + ([f"{c.identity} with the answer equal to the start word"] if c.identity else [])
                click.echo(f"note: {rel.name}: {c.pairs - c.kept} of {c.pairs} pairs left out: {'; '.join(why)}",
                           err=True)
            sets.append((rel.name, words.ids(rel.starts, source=rel.file), words.ids(rel.ends, source=rel.file)))
    out = []
    for label, starts, ends in sets:
        s = score_pairs(words, label, starts, ends, n_shuffles=shuffles, seed=seed)
        out.append({"relation": label, "n_pairs": s.n_pairs, "ocs": s.ocs, "pcs": s.pcs})
    click.echo(render(out, fmt, ["relation", "n_pairs", "ocs", "pcs"]))


@paper_command("offsets")
@click.option("--words", "words_index", required=True, help="The words index whose raw vectors give the offsets.")
@click.option("--dataset", required=True, help=DATASET_HELP)
@click.option("--offsets", "offsets_name",
              help="Offsets index holding the true, shuffled and random-set offsets (default: WORDS-bats-offsets; "
                   "built when missing).")
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
def bench_offsets(obj: Context, words_index, dataset, offsets_name, shuffles, replicates, pool_size, seed, out,
                  compare, loop_sample, record) -> None:
    """Table 1 and Figure 5 of Fournier et al. (2020): OCS and PCS of every relation beside six random
    analogy sets (permuted, mismatched within / across broad types, random start / end / both words);
    with --compare, timed against a per-pair Python-loop baseline run on a sample in the same process."""
    options = dict(offsets_name=offsets_name or _default_offsets_name(words_index, dataset), n_shuffles=shuffles,
                   replicates=replicates, seed=seed, pool_size=pool_size, out=out)
    if compare:
        from ..analogies.bench_offsets import run_offsets_bench

        record = record or str(Path(out) / "benchmark.md")
        bench = run_offsets_bench(obj.home, words_index, dataset, loop_sample=loop_sample, record_path=record,
                                  **options)
        summary = bench["summary"]
    else:
        from ..analogies.run_analogies import run_table1

        summary = run_table1(obj.home, words_index, dataset, **options)
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
