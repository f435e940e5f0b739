"""``index contexts`` (a word's context windows in a corpus) and ``am train|apply|show`` (Attentive Mimicking:
embeddings of rare words inferred from their form and contexts, inserted into a words index)."""

from __future__ import annotations

import json

import click

from .options import INDEX_NAME, K, POSITIVE, SEED, clamp_k, engine_option, replace_option
from .root import Context, bench_group, cli, format_option, index_group

_CORPUS_HELP = ("Corpus as KIND:PATH (repeat for more): text: plain text, one sentence a line (.gz/.bz2/.xz too); "
                "wsd:, streusle:, jsonl: as for index tokens; or a data-home name (semcor, wsd-eval, streusle).")


@index_group.command("contexts")
@click.option("--corpus", "corpora", required=True, multiple=True, help=_CORPUS_HELP)
@click.option("--name", required=True, type=INDEX_NAME, help="Name of the contexts index to build under the home.")
@click.option("--words", "word_args", multiple=True,
              help="Only these words: a word, or @FILE with one word a line (repeatable); default every word.")
@click.option("--window", type=POSITIVE, default=25, show_default=True, help="Words kept on each side of the word.")
@click.option("--cap", type=POSITIVE, default=1000, show_default=True,
              help="Distinct windows kept a word at most (a seeded uniform sample of them).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the sample over the cap.")
@click.option("--keep-case", is_flag=True, help="Do not lowercase the corpus (the authors lowercase).")
@click.option("--max-sentences", type=POSITIVE, help="Only the first N sentences of each corpus (a quick trial).")
@replace_option
@engine_option
@click.pass_obj
def index_contexts(obj: Context, corpora, name, word_args, window, cap, seed, keep_case, max_sentences,
                   replace, engine, ray_address) -> None:
    """Collect every word's context windows (+-WINDOW words in its sentence, at most CAP distinct ones a word)
    into a contexts index, the input of Attentive Mimicking (lexprobe am train). With --engine ray, map tasks
    over corpus blocks and reduce tasks over word ranges build the same index (the home on a file system every
    node mounts)."""
    from .insert import read_words

    if engine == "ray":
        from ..scale.contexts_ray import build_contexts_index_ray as build
        extra = {"address": ray_address}
    else:
        from ..kinds.contexts import build_contexts_index as build
        extra = {}
    words = read_words(word_args) if word_args else None
    s = build(name, corpora, home=obj.home, words=words, window=window, cap=cap, seed=seed,
              lowercase=not keep_case, max_sentences=max_sentences, replace=replace, **extra)
    click.echo(f"built {s['name']}: {s['windows']} windows of {s['words']} words from {s['sentences']} sentences, "
               f"{s['tokens']} tokens at {s['tokens_per_s']:.0f} tokens/s; {s['seconds']} s in all")
    if s["words_without_windows"]:
        click.echo(f"note: {s['words_without_windows']} of the words have no window in the corpora")


@cli.group("am")
def am_group() -> None:
    """Attentive Mimicking: embeddings for rare words inferred from their form and contexts (Schick & Schuetze,
    "Rare words", section 3), trained to mimic known embeddings; models live under <home>/.models/am/."""


@am_group.command("train")
@click.option("--targets", help="A words index whose vectors AM mimics (e.g. GloVe: AM's original setting).")
@click.option("--model", help="Or a language model whose input embeddings AM mimics: its whole-word tokens plus "
                              "one-token approximations (OTA) of multi-token context words (cached).")
@click.option("--contexts", required=True, type=INDEX_NAME, help="The contexts index (lexprobe index contexts).")
@click.option("--name", required=True, type=INDEX_NAME, help="Name of the AM model.")
@click.option("--preset", "preset_name", type=click.Choice(["am", "am-context"]), default="am", show_default=True,
              help="am: 1-20 contexts a training instance; am-context: 8-20 and 10% n-gram dropout (section 3.2).")
@click.option("--attention", type=click.Choice(["clustering", "uniform"]), default="clustering", show_default=True,
              help="clustering: AM's attention over contexts; uniform: the plain form-context model.")
@click.option("--epochs", type=POSITIVE, default=10, show_default=True, help="Training epochs (the authors: 10).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of initialisation and sampling.")
@click.option("--min-count", type=POSITIVE, default=1, show_default=True,
              help="Train on words with at least this many occurrences in the corpora (the authors: 100, in a "
                   "corpus a thousand times larger).")
@click.option("--held-out", "held_args", multiple=True,
              help="Words never trained on (a word or @FILE; repeatable), e.g. for a recovery check.")
@click.option("--ota-min-contexts", type=POSITIVE, default=8, show_default=True,
              help="With --model: OTA targets for multi-token words with at least this many windows.")
@click.option("--ota-max-words", type=int, help="With --model: at most this many OTA targets (0: none).")
@click.option("--ota-iterations", type=POSITIVE, help="With --model: OTA iterations per word (default OTA's).")
@replace_option
@click.pass_obj
def am_train(obj: Context, targets, model, contexts, name, preset_name, attention, epochs, seed, min_count, held_args,
             ota_min_contexts, ota_max_words, ota_iterations, replace) -> None:
    """Train an AM model to mimic a table of embeddings from its words' contexts (reused when nothing changed)."""
    from ..rare_words.am_store import train_am
    from .insert import read_words

    s = train_am(name, contexts=contexts, targets=targets, model=model, home=obj.home, preset_name=preset_name,
                 attention=attention, epochs=epochs, seed=seed, min_count=min_count, held_out=read_words(held_args) if held_args else (),
                 ota_min_contexts=ota_min_contexts, ota_max_words=ota_max_words,
                 ota_options={"iterations": ota_iterations} if ota_iterations else None, replace=replace)
    verb = "reused" if s["reused"] else f"trained in {s['seconds']} s"
    click.echo(f"{verb} AM model {s['name']} ({s['preset']}, {s['attention']}): {s['words']} words, "
               f"{s['contexts']} contexts, {s['ngrams']} n-grams, {s['targets']} target vectors of dim {s['dim']}; "
               f"loss by epoch {' '.join(f'{x:.4g}' for x in s['losses'])}")


@am_group.command("apply")
@click.argument("name")
@click.option("--words", "word_args", multiple=True, required=True,
              help="A word, or @FILE with one word a line (repeatable).")
@click.option("--into", required=True, help="The words index the vectors go into (the model's embedding space).")
@click.option("--contexts", type=INDEX_NAME, help="Contexts index to read the words' windows from "
                                                  "(default: the one the model was trained on).")
@click.option("--max-contexts", type=POSITIVE, help="At most this many windows a word (a seeded sample).")
@click.option("--replace", is_flag=True, help="Replace words the index already has (otherwise an error).")
@format_option
@click.pass_obj
def am_apply(obj: Context, name, word_args, into, contexts, max_contexts, replace, fmt) -> None:
    """Infer WORDS with AM model NAME and insert them into a words index (origin 'am')."""
    from ..core.formatting import render
    from ..rare_words.inserted_vectors import insert_am
    from .insert import read_words

    s = insert_am(name, read_words(word_args), into=into, home=obj.home, contexts=contexts,
                  max_contexts=max_contexts, replace=replace)
    click.echo(render(s["words"], fmt, ["word", "contexts", "alpha"]))
    if fmt == "table":
        click.echo(f"inserted {s['inserted']} words into {into} ({s['replaced']} replaced, {s['count']} rows)")


@am_group.command("show")
@click.argument("name")
@click.argument("word")
@click.option("--contexts", type=INDEX_NAME, help="Contexts index to read the word's windows from "
                                                  "(default: the one the model was trained on).")
@click.option("--max-contexts", type=POSITIVE, help="At most this many windows (a seeded sample).")
@click.option("-k", type=K, default=10, show_default=True, help="Nearest target words to show.")
@format_option
@click.pass_obj
def am_show(obj: Context, name, word, contexts, max_contexts, k, fmt) -> None:
    """How AM model NAME sees WORD: the form gate, each context's weight, and the nearest target words."""
    from ..core.formatting import render
    from ..kinds.contexts import ContextIndex
    from ..rare_words.am_store import nearest
    from ..rare_words.mimicking import AMModel

    model = AMModel.open(name, home=obj.home)
    index = ContextIndex.open(contexts or model.meta["contexts"]["name"], home=obj.home)
    windows = index.windows(word, max_contexts)
    got = model.infer([word], [windows])
    used = [w for w in windows if any(t != word and model.targets.row(t) is not None for t in w)]
    alpha = "none (no context: the form alone)" if got.contexts[0] == 0 else f"{got.alpha[0]:.3f}"
    rows = [{"rho": float(r), "context": " ".join(f"[[{t}]]" if t == word else t for t in w)}
            for r, w in zip(got.rho[0], used)]
    neighbours = [{"rank": i + 1, "word": w, "cosine": c}
                  for i, (w, c) in enumerate(nearest(model.targets, got.vectors[0], clamp_k(k, len(model.targets.words),
                                                                                            "target words")))]
    if fmt == "json":
        click.echo(json.dumps({"word": word, "alpha": None if got.contexts[0] == 0 else float(got.alpha[0]),
                               "contexts": int(got.contexts[0]), "weights": rows, "neighbours": neighbours},
                              ensure_ascii=False))
        return
    if fmt == "csv":  # one table: the contexts' weights, then the neighbours
        click.echo(render([{"kind": "context", "rank": i + 1, "text": r["context"], "value": r["rho"]}
                           for i, r in enumerate(rows)] +
                          [{"kind": "neighbour", "rank": n["rank"], "text": n["word"], "value": n["cosine"]}
                           for n in neighbours], fmt, ["kind", "rank", "text", "value"]))
        return
    click.echo(f"{word}: gate alpha (weight of the form) {alpha}; {got.contexts[0]} of {len(windows)} windows "
               "have a known word")
    if rows:
        click.echo(render(sorted(rows, key=lambda r: -r["rho"]), fmt, ["rho", "context"]))
    click.echo(render(neighbours, fmt, ["rank", "word", "cosine"]))


@bench_group.command("am")
@click.option("--targets", default="glove", show_default=True, help="The words index AM mimics.")
@click.option("--corpus", default="semcor", show_default=True, help="Corpus of the contexts index (KIND:PATH or a "
                                                                      "data-home name).")
@click.option("--preset", "preset_name", type=click.Choice(["am", "am-context"]), default="am", show_default=True)
@click.option("--batches", type=POSITIVE, default=100, show_default=True, help="Training batches timed each way.")
@click.option("--min-count", type=POSITIVE, default=1, show_default=True,
              help="Train on words with at least this many occurrences (the authors: 100).")
@click.option("--max-sentences", type=POSITIVE, help="Only the first N sentences of the corpus.")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/am.md", show_default=True,
              help="Markdown file the result is appended to.")
@click.pass_obj
def bench_am(obj: Context, targets, corpus, preset_name, batches, min_count, max_sentences, seed, record) -> None:
    """AM training instances/s, batched against instance at a time (the authors' batch builder), and the
    contexts index build in tokens/s."""
    from ..rare_words.bench_am import run_am_bench

    result = run_am_bench(home=obj.home, targets=targets, corpus=corpus, preset_name=preset_name, batches=batches,
                          min_count=min_count, max_sentences=max_sentences, seed=seed, record_path=record)
    click.echo(result["markdown"])
