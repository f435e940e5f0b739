"""``index offsets``, ``query analogy`` and ``run analogy`` (its old name ``bench analogy`` kept as an alias)."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from ..kinds.analogy_queries import DEFAULT_EPS, METHODS
from .root import Context, format_option, index_group, keep_known, paper_command, query_group, skip_unknown_option
from ..sources.datasets.bats import ANSWER_POLICIES
from ..sources.datasets.google import QUESTION_SOURCES
from ..core.formatting import render
from .options import INDEX_NAME, K, POSITIVE_FLOAT, SEED, clamp_k, replace_option

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
               f"{s['pairs_read']} pairs dropped as out of vocabulary, {s['identity_dropped']} identity pairs "
               "a = a* left out)")
    dropped = [row for row in s["coverage"] if row["dropped"]]
    if dropped:
        click.echo(render(dropped, "table", ["code", "category", "pairs", "kept", "dropped", "coverage",
                                             "oov_examples"]))


@query_group.command("analogy")
@click.option("--index", "name", required=True, help="A words index.")
@click.argument("words", nargs=-1)
@click.option("--questions", type=click.Path(dir_okay=False, exists=True),
              help="A file of questions instead of A ASTAR B: 'a a* b' per line (answers listed), or the standard "
                   "four-column file 'a a* b b*' with ': section' lines (questions-words.txt; accuracy per "
                   "section, as gensim's evaluate_word_analogies).")
@click.option("--case-insensitive", is_flag=True,
              help="Four-column files: match words and answers ignoring case (gensim's default).")
@skip_unknown_option
@click.option("--method", type=click.Choice(METHODS), default="add", show_default=True,
              help="add: 3CosAdd; mul: 3CosMul (Levy & Goldberg 2014); pairdir: PairDirection.")
@click.option("--honest", is_flag=True, help="Do not exclude a, a* and b from the answers.")
@click.option("-k", "k", type=K, default=5, show_default=True, help="Answers per question.")
@click.option("--restrict-vocab", type=click.IntRange(min=1), help="Answer only with the N most frequent words.")
@click.option("--eps", type=POSITIVE_FLOAT, default=DEFAULT_EPS, show_default=True, help="3CosMul's epsilon.")
@format_option
@click.pass_obj
def analogy_cmd(obj: Context, name, words, questions, case_insensitive, skip_unknown, method, honest, k,
                restrict_vocab, eps, fmt) -> None:
    """Answer A:ASTAR::B:? (or every line of --questions). Rows: a, a_star, b, rank, word, score; for a
    four-column file: section, questions, oov, answered, correct, accuracy (questions with an unknown word
    are counted as oov and skipped, as gensim does)."""
    from ..kinds.analogy_queries import answer_questions
    from ..sources.datasets.word_lines import word_lines
    from ..core.errors import LexprobeError
    from ..kinds.words import WordIndex

    if questions and words:
        raise LexprobeError("give either A ASTAR B or --questions FILE, not both")
    if questions and _four_columns(questions):
        from ..analogies.analogy_sections import section_accuracy
        from ..sources.datasets.google import read_questions

        rows = section_accuracy(WordIndex.open(obj.home, name), read_questions(questions), method=method,
                                restrict_vocab=restrict_vocab, case_insensitive=case_insensitive, eps=eps)
        click.echo(render(rows, fmt, ["section", "questions", "oov", "answered", "correct", "accuracy"]))
        return
    if questions:
        items = word_lines(questions, 3, "3 words 'a a* b'", "questions")
    elif len(words) == 3:
        items = [(*words, None)]
    else:
        raise LexprobeError(f"expected three words A ASTAR B (or --questions FILE), got {len(words)}")
    index = WordIndex.open(obj.home, name)
    items = keep_known(index, items, lambda q: q[:3], skip=skip_unknown, source=questions or "query",
                       label=lambda q: q[3])
    ids = np.asarray([index.ids(q[:3]) for q in items], dtype=np.int64)
    candidates = min(restrict_vocab or index.vectors.ntotal, index.vectors.ntotal) - (0 if honest else 3)
    k = clamp_k(k, max(candidates, 1), "candidate answers")
    D, I = answer_questions(index, ids[:, 0], ids[:, 1], ids[:, 2], method=method, k=k, honest=honest,
                            restrict_vocab=restrict_vocab, eps=eps)
    rows = []
    for (a, a_star, b, _), d, i in zip(items, D, I):
        rows += [{"a": a, "a_star": a_star, "b": b, "rank": r, "word": index.words[j], "score": float(s)}
                 for r, (s, j) in enumerate(zip(d, i), 1) if j >= 0]
    click.echo(render(rows, fmt, ["a", "a_star", "b", "rank", "word", "score"]))


def _four_columns(path) -> bool:
    """Whether a questions file is the four-column kind: its first line that is not blank or a '#' comment is
    a ': section' line or holds four words."""
    with open(path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "replace").strip()
            if line and not line.startswith("#"):
                return line.startswith(":") or len(line.split()) == 4
    return False


@paper_command("analogy")
@click.option("--words", "words_index", required=True, help="A words index (e.g. the 400k GloVe).")
@click.option("--dataset", required=True, help=DATASET_HELP)
@click.option("--method", type=click.Choice(METHODS), default="add", show_default=True,
              help="add: 3CosAdd; mul: 3CosMul; pairdir: PairDirection.")
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
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the --compare samples.")
@click.option("--record", type=click.Path(dir_okay=False),
              help="--compare: markdown file the timing is appended to (default: benchmark.md in --out).")
@click.pass_obj
def bench_analogy(obj: Context, words_index, dataset, method, answers, lowercase, google_questions, restrict_vocab,
                  eps, honest, normalize, out_dir, compare, sample, faiss_sample, seed, record) -> None:
    """The analogy test over every tuple of every relation, its score decomposition, and (--compare) a timing.

    Writes to --out: questions.parquet (one row per question), accuracy_relation / accuracy_category,
    coverage (the out-of-vocabulary report), honest.parquet + honest_shares, decomposition (per tuple) and
    decomposition_means (per relation) with their PNG bar charts, and summary.json.
    """
    from ..kinds.words import WordIndex
    from ..analogies.run_analogies import run_analogy
    from ..sources.datasets.analogy_sets import usable_relations

    words = WordIndex.open(obj.home, words_index)
    relations, coverage = usable_relations(words, dataset, answers=answers, lowercase=lowercase,
                                           questions=google_questions)
    run = run_analogy(words, relations, coverage, out_dir, dataset=dataset, method=method, answers=answers,
                      restrict_vocab=restrict_vocab, eps=eps, honest=honest, normalize=normalize)
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
