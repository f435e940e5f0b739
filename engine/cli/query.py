"""``query ...``: ask an index questions (neighbours, analogies, the offsets of a relation, senses) and a
language model what fills a blank (``query probe``)."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np

from ..kinds.analogy_queries import (ALL_METHODS, DEFAULT_EPS, LRCOS_SEEDS, METHODS_HELP, SET_METHODS, VECTO_NAMES,
                                     method_name)
from ..kinds.words import WordIndex
from .root import Context, format_option, keep_known, model_hint, opened, query_group, skip_unknown_option
from ..core.errors import LexprobeError
from ..core.formatting import render
from .options import (DATASET_HELP, K, POSITIVE, POSITIVE_FLOAT, SEED, clamp_k, device_option, device_options,
                      language_model_option,
                      search_engine_options)


@query_group.command("neighbors")
@click.option("--index", "name", required=True, help="A words index.")
@click.argument("words", nargs=-1, required=True)
@click.option("-k", "k", type=K, default=10, show_default=True, help="Neighbours per word.")
@click.option("--restrict-vocab", type=POSITIVE, help="Search only the N most frequent words.")
@click.option("--include-self", is_flag=True, help="Do not exclude the query word itself.")
@skip_unknown_option
@search_engine_options
@format_option
@click.pass_obj
def query_neighbors(obj: Context, name, words, k, restrict_vocab, include_self, skip_unknown, engine, ray_address,
                    shard_groups, fmt) -> None:
    """Nearest neighbours of WORDS by cosine. Rows: query, rank, word, score. With --engine ray the index's
    shards are searched by Ray actors and their top-k merged: the same rows as the local exact search."""
    with opened(WordIndex, obj, name, engine, ray_address, shard_groups) as index:
        candidates = min(restrict_vocab or index.searcher.ntotal, index.searcher.ntotal) - (not include_self)
        words = keep_known(index, list(words), skip=skip_unknown)
        rows = index.neighbors(words, clamp_k(k, max(candidates, 1), "words to rank"),
                               exclude_inputs=not include_self, restrict_vocab=restrict_vocab).to_pylist()
    click.echo(render(rows, fmt, ["query", "rank", "word", "score"]))


class MethodChoice(click.Choice):
    """An analogy method by lexprobe's name or vecto's (``3CosAvg``; any case), given on as lexprobe's."""

    def __init__(self):
        super().__init__(ALL_METHODS + tuple(VECTO_NAMES), case_sensitive=False)

    def convert(self, value, param, ctx):
        return method_name(super().convert(value, param, ctx))


METHOD = MethodChoice()


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
@click.option("--method", type=METHOD, default="add", show_default=True,
              help=METHODS_HELP + " avg and lrcos need a four-column --questions file (each section a relation: "
                   "every pair's b:? learned from the section's other pairs).")
@click.option("--honest", is_flag=True, help="Do not exclude a, a* and b from the answers.")
@click.option("-k", "k", type=K, default=5, show_default=True, help="Answers per question.")
@click.option("--restrict-vocab", type=click.IntRange(min=1), help="Answer only with the N most frequent words.")
@click.option("--eps", type=POSITIVE_FLOAT, default=DEFAULT_EPS, show_default=True, help="3CosMul's epsilon.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="lrcos: seed of the random negative words.")
@click.option("--seeds", type=POSITIVE, default=LRCOS_SEEDS, show_default=True,
              help="lrcos: seeds of its random negatives (--seed, --seed + 1, ...); each section's accuracy is their "
                   "mean with a t interval (accuracy_low, accuracy_high): one seed's accuracy is not a result.")
@format_option
@click.pass_obj
def query_analogy(obj: Context, name, words, questions, case_insensitive, skip_unknown, method, honest, k,
                  restrict_vocab, eps, seed, seeds, fmt) -> None:
    """Answer A:ASTAR::B:? (or every line of --questions). Rows: a, a_star, b, rank, word, score; for a
    four-column file: section, questions, oov, answered, correct, accuracy (questions with an unknown word
    are counted as oov and skipped, as gensim does; with avg or lrcos the questions are the section's pairs)."""
    from ..kinds.analogy_queries import answer_questions
    from ..sources.datasets.word_lines import word_lines
    from ..core.errors import LexprobeError
    from ..kinds.words import WordIndex

    if questions and words:
        raise LexprobeError("give either A ASTAR B or --questions FILE, not both")
    if method in SET_METHODS:
        if not (questions and _four_columns(questions)):
            raise LexprobeError(f"--method {method} learns from a relation's other pairs: give a four-column "
                                "--questions file (each section a relation), or use 'lexprobe run analogy --dataset'")
        from ..analogies.set_solvers import pair_section_accuracy, seed_interval

        index = WordIndex.open(name, home=obj.home)
        runs = [pair_section_accuracy(index, questions, method=method, restrict_vocab=restrict_vocab,
                                      case_insensitive=case_insensitive, honest=honest, seed=seed + s)
                for s in range(seeds if method == "lrcos" else 1)]
        columns = ["section", "questions", "oov", "answered", "correct", "accuracy"]
        rows = runs[0]
        if len(runs) > 1:  # LRCos: the mean over the seeds and its t interval, per section
            for j, row in enumerate(rows):
                shares = [run[j]["accuracy"] for run in runs]
                row["correct"] = float(np.mean([run[j]["correct"] for run in runs]))
                row["accuracy"], row["accuracy_low"], row["accuracy_high"] = (None, None, None) if shares[0] is None \
                    else (float(np.mean(shares)), *seed_interval(np.array(shares)))
                row["seeds"] = len(runs)
            columns += ["accuracy_low", "accuracy_high", "seeds"]
        click.echo(render(rows, fmt, columns))
        return
    if questions and _four_columns(questions):
        from ..analogies.analogy_sections import section_accuracy
        from ..sources.datasets.google import read_questions

        rows = section_accuracy(WordIndex.open(name, home=obj.home), read_questions(questions), method=method,
                                restrict_vocab=restrict_vocab, case_insensitive=case_insensitive, eps=eps)
        click.echo(render(rows, fmt, ["section", "questions", "oov", "answered", "correct", "accuracy"]))
        return
    if questions:
        items = word_lines(questions, 3, "3 words 'a a* b'", "questions")
    elif len(words) == 3:
        items = [(*words, None)]
    else:
        raise LexprobeError(f"expected three words A ASTAR B (or --questions FILE), got {len(words)}")
    index = WordIndex.open(name, home=obj.home)
    items = keep_known(index, items, lambda q: q[:3], skip=skip_unknown, source=questions or "query",
                       label=lambda q: q[3])
    ids = np.asarray([index.ids(q[:3]) for q in items], dtype=np.int64)
    candidates = min(restrict_vocab or index.searcher.ntotal, index.searcher.ntotal) - (0 if honest else 3)
    k = clamp_k(k, max(candidates, 1), "candidate answers")
    D, I = answer_questions(index, ids[:, 0], ids[:, 1], ids[:, 2], method=method, k=k,
                            exclude_inputs=not honest, restrict_vocab=restrict_vocab, eps=eps)
    rows = []
    for (a, a_star, b, _), d, i in zip(items, D, I):
        rows += [{"a": a, "a_star": a_star, "b": b, "rank": r, "word": index.words[j], "score": float(s)}
                 for r, (s, j) in enumerate(zip(d, i), 1) if j >= 0]
    click.echo(render(rows, fmt, ["a", "a_star", "b", "rank", "word", "score"]))


def _four_columns(path) -> bool:
    """Whether a questions file is the four-column kind: its first line that is not blank or a '#' comment is
    a ': section' line or holds four words (read as every reader reads: a regular file, bounded lines)."""
    from ..sources.datasets.word_lines import bounded_lines

    for _, line in bounded_lines(path):
        line = line.strip()
        if line and not line.startswith("#"):
            return line.startswith(":") or len(line.split()) == 4
    return False


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
    words = WordIndex.open(name, home=obj.home)
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


@query_group.command("similarity")
@click.option("--index", "name", required=True, help="A words index.")
@click.option("--pairs", "pair_files", required=True, multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="A word-similarity set in its released format (WordSim-353, SimLex-999, MEN, Rare Words) or "
                   "'word word score' lines; repeat it for several (one row each).")
@click.option("--restrict-vocab", type=POSITIVE, default=300000, show_default=True,
              help="Match words within the N most frequent only (gensim's default).")
@click.option("--case-sensitive", is_flag=True,
              help="Match words as written (default: ignoring case, each form its most frequent variant, as gensim).")
@click.option("--dummy4unknown", is_flag=True,
              help="Score a pair with an unknown word 0.0 instead of leaving it out (gensim's option).")
@click.option("--resamples", type=POSITIVE, default=1000, show_default=True,
              help="Bootstrap resamples of the pairs for the correlations' 95% intervals.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the bootstrap.")
@format_option
@click.pass_obj
def query_similarity(obj: Context, name, pair_files, restrict_vocab, case_sensitive, dummy4unknown, resamples, seed,
                     fmt) -> None:
    """Word similarity as gensim's evaluate_word_pairs scores it: Spearman's and Pearson's correlation between a
    set's human scores and the cosines of its pairs, with p-values, the share of pairs with an unknown word
    (a fraction; gensim's oov_ratio is that share in percent), and 95% bootstrap intervals of both correlations.
    Rows: dataset, pairs, scored, oov_share, spearman, spearman_p, spearman_low, spearman_high, pearson, pearson_p, pearson_low, pearson_high."""
    index = WordIndex.open(name, home=obj.home)
    rows = []
    for path in pair_files:
        s = index.evaluate_word_pairs(path, restrict_vocab=restrict_vocab, case_insensitive=not case_sensitive,
                                      dummy4unknown=dummy4unknown, n_resamples=resamples, seed=seed)
        rows.append({"dataset": s.dataset, "pairs": s.pairs.num_rows, "scored": s.n_scored,
                     "oov_share": s.oov_ratio / 100, "spearman": s.spearman[0], "spearman_p": s.spearman[1],
                     "spearman_low": s.spearman_interval[0], "spearman_high": s.spearman_interval[1],
                     "pearson": s.pearson[0], "pearson_p": s.pearson[1], "pearson_low": s.pearson_interval[0],
                     "pearson_high": s.pearson_interval[1]})
    if fmt == "table":  # p-values far below 1e-4 would print as 0.0000
        rows = [{**r, **{c: f"{r[c]:.2g}" for c in ("spearman_p", "pearson_p")}} for r in rows]
    click.echo(render(rows, fmt, list(rows[0])))


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
@device_option
@format_option
@click.pass_obj
def query_senses(obj: Context, name, sentence, target, occurrence, lemma, all_lemmas, k, definitions, engine,
                 ray_address, shard_groups, device, fmt) -> None:
    """Embed TARGET in SENTENCE with the index's model, layers and pooling, and list the index's instances
    most similar to it (cosine). Rows: rank, score, sense, lemma, pos, the instance's sentence with its target
    marked [[...]] and its instance id. With --engine ray the index's shards are searched by Ray actors and
    their top-k merged: the same rows as the local search. The query is embedded on --device in the index's dtype."""
    import warnings

    from ..kinds.tokens import NoLemmaInstances, TokenIndex

    with opened(TokenIndex, obj, name, engine, ray_address, shard_groups) as index, warnings.catch_warnings():
        warnings.simplefilter("ignore", NoLemmaInstances)  # printed below as a note, from the table
        with model_hint(index.settings.get("model", "the index's model")):
            encoder = index.encoder(device=device)
        hits = index.query(sentence, target, k, same_lemma=not all_lemmas, lemma=lemma, occurrence=occurrence,
                           definitions=definitions, encoder=encoder)
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


@query_group.command("probe")
@language_model_option
@click.argument("texts", metavar="TEXT...", nargs=-1)
@click.option("--file", "text_file", type=click.Path(dir_okay=False, exists=True),
              help="Sentences to probe, one a line (blank lines and '#' comments skipped), besides any TEXT.")
@click.option("-k", "k", type=K, default=10, show_default=True, help="Number of predictions.")
@click.option("--gold", help="A word: print its rank and probability at each blank (with the top k, joined), "
                             "instead of the top-k rows (masked LMs).")
@device_options
@format_option
def query_probe(model, texts, text_file, k, gold, device, dtype, fmt) -> None:
    """The model's top-k tokens for the blank in each TEXT: ___ or [MASK] (LAMA's habit), e.g.
    "A kumquat is a [MASK] ." With several sentences (or --file) each row names its sentence.

    A causal model (e.g. --model smollm2) predicts the next token: the blank must end TEXT (only punctuation and
    quotes may follow); its top-k next tokens are shown as words (whole_word: false for a piece that continues a
    word).
    """
    from ..rare_words.language_models import load_lm
    from ..rare_words.cloze_queries import gold_rank, top_predictions
    from ..sources.datasets.word_lines import text_lines

    sentences = list(texts) + (text_lines(text_file, "sentences") if text_file else [])
    if not sentences:
        raise LexprobeError("give a sentence with a blank (TEXT) or --file FILE")
    with model_hint(model):
        lm = load_lm(model, device=device, dtype=dtype)
    k = clamp_k(k, lm.vocab_size, "tokens of the vocabulary")
    several = len(sentences) > 1
    if gold:
        rows = []
        for text in sentences:
            rank, p = gold_rank(lm, text, gold)
            top = ", ".join(r["token"] for r in top_predictions(lm, text, k))
            rows.append({"sentence": text, "gold": gold, "rank": rank, "probability": p, f"top_{k}": top})
        click.echo(render(rows, fmt, ["sentence", "gold", "rank", "probability", f"top_{k}"]))
        return
    rows = [{"sentence": text, **row} for text in sentences for row in top_predictions(lm, text, k)]
    columns = ["rank", "token", "probability"] + (["whole_word"] if lm.kind == "causal" else [])
    click.echo(render(rows, fmt, (["sentence"] if several else []) + columns))
