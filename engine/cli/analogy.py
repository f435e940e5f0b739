"""``index offsets``, ``query analogy`` and ``bench analogy``."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from ..analyses.analogy import DEFAULT_EPS, METHODS
from .root import Context, format_option, index_group, paper_command, query_group
from ..sources.datasets.bats import ANSWER_POLICIES
from ..core.formatting import render
from .options import INDEX_NAME, replace_option

DATASET_HELP = "bats:PATH (the BATS root, a category folder or one relation file) or google:PATH (questions-words.txt)."


def _default_offsets_name(words: str, dataset: str) -> str:
    return f"{words}-{dataset.partition(':')[0]}-offsets"


@index_group.command("offsets")
@click.option("--words", "words_index", required=True, help="The words index whose raw vectors give the offsets.")
@click.option("--dataset", required=True, help=DATASET_HELP)
@click.option("--name", type=INDEX_NAME, help="Name of the offsets index (default: WORDS-<bats|google>-offsets).")
@replace_option
@click.option("--answers", type=click.Choice(ANSWER_POLICIES), default="first", show_default=True,
              help="first: each pair's first listed answer (the paper); any: its first in-vocabulary answer.")
@click.option("--lowercase", is_flag=True, help="Lowercase the dataset's words (e.g. Google's names for GloVe).")
@click.pass_obj
def index_offsets(obj: Context, words_index, dataset, name, replace, answers, lowercase) -> None:
    """Build an offsets index: one row per word pair (end - start, raw and unit), kind 'true'.

    Pairs whose start word or answer is not in the words index are dropped and reported per relation.
    """
    from ..kinds.offsets import build_offset_index

    name = name or _default_offsets_name(words_index, dataset)
    s = build_offset_index(obj.home, name, words_index, dataset, answers=answers, lowercase=lowercase,
                           replace=replace)
    click.echo(f"built {s['name']}: {s['rows']} offsets in {s['relations']} relations ({s['pairs_dropped']} of "
               f"{s['pairs_read']} pairs dropped as out of vocabulary)")
    dropped = [row for row in s["coverage"] if row["dropped"]]
    if dropped:
        click.echo(render(dropped, "table", ["code", "category", "pairs", "kept", "dropped", "coverage",
                                             "oov_examples"]))


@query_group.command("analogy")
@click.option("--index", "name", required=True, help="A words index.")
@click.argument("words", nargs=-1)
@click.option("--questions", type=click.Path(dir_okay=False, exists=True),
              help="A file of questions, one 'a a* b' per line (instead of A ASTAR B).")
@click.option("--method", type=click.Choice(METHODS), default="add", show_default=True,
              help="add: 3CosAdd; mul: 3CosMul (Levy & Goldberg 2014); pairdir: PairDirection.")
@click.option("--honest", is_flag=True, help="Do not exclude a, a* and b from the answers.")
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="Answers per question.")
@click.option("--restrict-vocab", type=click.IntRange(min=1), help="Answer only with the N most frequent words.")
@click.option("--eps", type=float, default=DEFAULT_EPS, show_default=True, help="3CosMul's epsilon.")
@format_option
@click.pass_obj
def analogy_cmd(obj: Context, name, words, questions, method, honest, k, restrict_vocab, eps, fmt) -> None:
    """Answer A:ASTAR::B:? (or every line of --questions). Rows: a, a_star, b, rank, word, score."""
    from ..analyses.analogy import answer_questions
    from ..sources.datasets.word_lines import word_lines
    from ..core.errors import LexprobeError
    from ..kinds.words import WordIndex

    if questions and words:
        raise LexprobeError("give either A ASTAR B or --questions FILE, not both")
    if questions:
        items = word_lines(questions, 3, "3 words 'a a* b'", "questions")
    elif len(words) == 3:
        items = [(*words, None)]
    else:
        raise LexprobeError(f"expected three words A ASTAR B (or --questions FILE), got {len(words)}")
    index = WordIndex.open(obj.home, name)
    ids = []
    for a, a_star, b, line in items:
        where = f"{questions}:{line}" if line else "query"
        ids.append(index.ids([a, a_star, b], source=where))
    ids = np.asarray(ids, dtype=np.int64)
    D, I = answer_questions(index, ids[:, 0], ids[:, 1], ids[:, 2], method=method, k=k, honest=honest,
                            restrict_vocab=restrict_vocab, eps=eps)
    rows = []
    for (a, a_star, b, _), d, i in zip(items, D, I):
        rows += [{"a": a, "a_star": a_star, "b": b, "rank": r, "word": index.words[j], "score": float(s)}
                 for r, (s, j) in enumerate(zip(d, i), 1) if j >= 0]
    click.echo(render(rows, fmt, ["a", "a_star", "b", "rank", "word", "score"]))


@paper_command("analogy")
@click.option("--words", "words_index", required=True, help="A words index (e.g. the 400k GloVe).")
@click.option("--dataset", required=True, help=DATASET_HELP)
@click.option("--method", type=click.Choice(METHODS), default="add", show_default=True,
              help="add: 3CosAdd; mul: 3CosMul; pairdir: PairDirection.")
@click.option("--answers", type=click.Choice(ANSWER_POLICIES), default="first", show_default=True,
              help="first: only each pair's first answer is correct (the paper); any: any listed answer (vecto).")
@click.option("--lowercase", is_flag=True, help="Lowercase the dataset's words (e.g. Google's names for GloVe).")
@click.option("--restrict-vocab", type=click.IntRange(min=1), help="Answer only with the N most frequent words.")
@click.option("--eps", type=float, default=DEFAULT_EPS, show_default=True, help="3CosMul's epsilon.")
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
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --compare samples.")
@click.option("--record", type=click.Path(dir_okay=False),
              help="--compare: markdown file the timing is appended to (default: benchmark.md in --out).")
@click.pass_obj
def bench_analogy(obj: Context, words_index, dataset, method, answers, lowercase, restrict_vocab, eps, honest,
                  normalize, out_dir, compare, sample, faiss_sample, seed, record) -> None:
    """The analogy test over every tuple of every relation, its score decomposition, and (--compare) a timing.

    Writes to --out: questions.parquet (one row per question), accuracy_relation / accuracy_category,
    coverage (the out-of-vocabulary report), honest.parquet + honest_shares, decomposition (per tuple) and
    decomposition_means (per relation) with their PNG bar charts, and summary.json.
    """
    from ..kinds.words import WordIndex
    from ..runs.analogies import run_analogy
    from ..sources.datasets.analogy_sets import usable_relations

    words = WordIndex.open(obj.home, words_index)
    relations, coverage = usable_relations(words, dataset, answers=answers, lowercase=lowercase)
    run = run_analogy(words, relations, coverage, out_dir, dataset=dataset, method=method, answers=answers,
                      restrict_vocab=restrict_vocab, eps=eps, honest=honest, normalize=normalize)
    click.echo(render(run.by_category, "table", ["category", "questions", "accuracy", "mrr"]))
    if run.honest:
        click.echo("honest test shares: " + ", ".join(f"{k} {v:.1%}" for k, v in run.honest.items()
                                                      if k != "questions"))
    for s in run.summary["skipped"]:
        click.echo(f"skipped {s['relation']}: {s['reason']} ({s['pairs']})")
    click.echo(f"wrote {out_dir}")
    if compare:
        from ..perf.analogy import run_analogy_bench

        record = record or str(Path(out_dir) / "benchmark.md")
        bench = run_analogy_bench(obj.home, words_index, relations, sample=sample, faiss_sample=faiss_sample,
                                  restrict_vocab=restrict_vocab, seed=seed, record_path=record, dataset=dataset,
                                  analysis_seconds=run.seconds if method == "add" else None)
        click.echo(f"speed (--compare gensim): {bench['speedup']:.1f}x gensim's one-question loop, identical "
                   f"answers {bench['agree']:.2%}; recorded in {record}")
