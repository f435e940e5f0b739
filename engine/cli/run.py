"""``query senses`` (query-by-example over a token index) and ``bench senses`` (the paper's Table 1)."""

from __future__ import annotations

from pathlib import Path

import click

from .root import Context, format_option, paper_command, query_group
from .options import K, POSITIVE, SEED
from .scale import build_engine_options, opened, search_engine_options, shard_groups_option
from ..core.errors import LexprobeError
from ..core.formatting import render
from ..senses.sense_cells import DEFAULT_LEMMA_EDGES, DEFAULT_RATIO_EDGES
from ..senses.sense_ranking import DEFAULT_K, DEFAULT_MIN_SENSE_COUNT, FREQUENCIES


def _floats(text: str, what: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise LexprobeError(f"bad {what} {text!r}: give comma-separated numbers like 500 or 100,500") from None


@query_group.command("senses")
@click.option("--index", "name", required=True, help="A token index (built by 'lexprobe index tokens').")
@click.option("--sentence", required=True,
              help="The query sentence as typed: punctuation and clitics are split off the words as in the corpora "
                   "('banks.' -> 'banks .', \"bank's\" -> \"bank 's\").")
@click.option("--target", required=True, help="The target word(s) in the sentence, e.g. 'on' or 'take place'.")
@click.option("--occurrence", type=POSITIVE, default=1, show_default=True,
              help="Which occurrence of the target in the sentence, when it occurs more than once.")
@click.option("--lemma", help="Rank only the index's instances of this lemma (default: the lowercased target, "
                              "with '_' between words, or its WordNet base form, when the index has it; "
                              "otherwise every instance).")
@click.option("--all-lemmas", is_flag=True, help="Rank every instance of the index, whatever its lemma.")
@click.option("-k", "k", type=K, default=10, show_default=True, help="Number of results.")
@click.option("--definitions", is_flag=True,
              help="Add each result's WordNet definition (sense labels WordNet cannot resolve, such as SNACS "
                   "supersenses, get none and are counted).")
@search_engine_options
@format_option
@click.pass_obj
def query_senses(obj: Context, name, sentence, target, occurrence, lemma, all_lemmas, k, definitions, engine,
                 ray_address, shard_groups, fmt) -> None:
    """Embed TARGET in SENTENCE with the index's model, layers and pooling, and list the index's instances
    most similar to it (cosine). Rows: rank, score, sense, lemma, pos, the instance's sentence with its target
    marked [[...]] and its instance id. With --engine ray the index's shards are searched by Ray actors and
    their top-k merged: the same rows as the local search."""
    from ..kinds.tokens import TokenIndex

    with opened(TokenIndex, obj, name, engine, ray_address, shard_groups) as index:
        hits = index.query(sentence, target, k, same_lemma=not all_lemmas, lemma=lemma, occurrence=occurrence,
                           definitions=definitions)
    meta = {key.decode(): value.decode() for key, value in (hits.schema.metadata or {}).items()}
    for note in filter(None, meta.get("note", "").split("\n")):
        click.echo(f"note: {note}", err=True)
    rows = hits.to_pylist()
    if fmt == "table":  # a table row per hit: long sentences cut around their marked target (JSON/CSV: whole)
        click.echo(f"query: {meta['query']}")
        rows = [{**r, "sentence": around_target(r["sentence"])} for r in rows]
    click.echo(render(rows, fmt, hits.column_names))


def around_target(text: str, width: int = 100) -> str:
    """``text`` cut to about ``width`` characters around its ``[[...]]`` target, at word boundaries, with ``…``
    where words were left out; a text that fits (or has no marked target) is returned whole."""
    start, end = text.find("[["), text.find("]]")
    if len(text) <= width or start < 0 or end < start:
        return text
    budget = max(0, width - (end + 2 - start))
    left, right = text[:start], text[end + 2:]
    left_room = max(budget // 2, budget - len(right))  # room one side does not need goes to the other
    right_room = budget - min(len(left), left_room)
    if len(left) > left_room:
        left = "… " + left[len(left) - left_room:].partition(" ")[2]
    if len(right) > right_room:
        right = right[:right_room].rpartition(" ")[0] + " …"
    return left + text[start:end + 2] + right


# ------------------------------------------------------------------------------------------------- bench


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
@click.pass_obj
def bench_senses(obj: Context, database_spec, queries_spec, models, layer_list, pooling, out, limit_queries,
                 database_sentences, query_sentences, k_max, min_sense_count, lemma_edges, ratio_edges, any_pos,
                 all_lemmas, frequency, no_proper_names, seed, compare, record, engine, ray_address, workers,
                 block_sentences, shard_groups) -> None:
    """CWE similarity ranking (Gessler & Schneider, section 3 and Table 1): every query instance of Q whose
    sense occurs at least --min-sense-count times in D ranks D's instances of its lemma by cosine; per query
    P@k and recall@k (k = 1..K) and average precision; per cell of l x r, the mean over k of P@k (the paper's
    number) and MAP beside the exact random baseline. Token indexes are reused when one with the same corpus,
    model, layer and pooling exists under --home, else built. With --engine ray they are built by Ray encoder
    actors and their vectors served by Ray shard actors (the ranking gathers one lemma's candidates at a time);
    the numbers are the same."""
    from ..senses.run_senses import SenseRunOptions, run_senses, write_ranking_speed

    if compare and all_lemmas:
        raise LexprobeError("--compare times the per-lemma ranking: leave out --all-lemmas")
    options = SenseRunOptions(pooling=pooling, k_max=k_max, min_sense_count=min_sense_count,
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
        summary = run_senses(obj.home, database_spec, queries_spec, settings, out, options, ray_engine)
        click.echo((Path(out) / "buckets.md").read_text().rstrip())
        for label, checks in summary["checks"].items():
            below = checks["cells_not_above_random"]
            click.echo(f"{label}: every cell beats random: {checks['every_cell_beats_random']} "
                       f"({checks['cells_compared']} non-empty cells"
                       + (f"; not above random: {', '.join(below)}" if below else "") + "); rare senses "
                       f"(lowest r interval) score lower: {checks['rare_senses_score_lower']}")
        if compare:
            bench = write_ranking_speed(out, summary, k_max=k_max, min_sense_count=min_sense_count,
                                        match_pos=not any_pos, record_path=record or None)
            click.echo(f"speed: grouped ranking {bench['speedup']:.1f}x the one-query loop (APs agree: "
                       f"{bench['agree']}); {Path(out) / 'speed.md'}", err=True)
        click.echo(f"wrote {out}")
    finally:
        if ray_engine is not None:
            ray_engine.close()
