"""Shared click parameter types and options: every numeric option gets its range, every float is finite, index
names are checked as they are parsed. A value out of range is click's one-line usage error (exit 2), never a
traceback deeper down. Also the options several command groups share (``--replace`` of the index builders, the
encoder's and the language model's options, OTA's, ``--engine local|ray``) and the note printed when ``-k`` is
clamped.

Ray is imported only when ``--engine ray`` is chosen (or by ``bench scale``): the local path never loads it.
"""

from __future__ import annotations

import math

import click

from ..core.store import check_name
from ..core.errors import LexprobeError
from ..rare_words.ota import DEFAULTS as _DEFAULTS
from ..sources.models import DEFAULT_MLM, DEVICES, DTYPES

MAX_K = 100_000  # results per query: far above any candidate set a query ranks, far below an array that kills
MAX_COUNT = 2**31 - 1
MAX_SEED = 2**32 - 1  # numpy's seeds


def int_range(low: int, high: int = MAX_COUNT) -> click.IntRange:
    """Integers from ``low`` to ``high`` inclusive."""
    return click.IntRange(low, high)


POSITIVE = int_range(1)  # counts: sentences, words, iterations, batch sizes, shard rows, ...
NON_NEGATIVE = int_range(0)
K = int_range(1, MAX_K)  # -k: larger than the candidates is clamped with a note (clamp_k)
SEED = int_range(0, MAX_SEED)
THREADS = int_range(1, 1024)


class FiniteFloat(click.ParamType):
    """A finite float (never NaN or infinity) within optional bounds; ``open`` bounds exclude the bound."""

    name = "number"

    def __init__(self, low: float | None = None, high: float | None = None, *, low_open: bool = False,
                 high_open: bool = False):
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open

    def convert(self, value, param, ctx):
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        if self.low is not None and (number < self.low or (self.low_open and number == self.low)):
            self.fail(f"{number:g} is not {'above' if self.low_open else 'at least'} {self.low:g}", param, ctx)
        if self.high is not None and (number > self.high or (self.high_open and number == self.high)):
            self.fail(f"{number:g} is not {'below' if self.high_open else 'at most'} {self.high:g}", param, ctx)
        return number


POSITIVE_FLOAT = FiniteFloat(0.0, low_open=True)  # learning rates, 3CosMul's epsilon
NON_NEGATIVE_FLOAT = FiniteFloat(0.0)  # tolerances


class IndexName(click.ParamType):
    """An index name, checked exactly (:func:`lexprobe.core.store.check_name`) before the command runs."""

    name = "name"

    def convert(self, value, param, ctx):
        try:
            return check_name(value)
        except LexprobeError as exc:
            self.fail(str(exc), param, ctx)


INDEX_NAME = IndexName()


def replace_option(f):
    """``--replace``: a build replaces an existing index of the same name only when asked."""
    return click.option("--replace", is_flag=True,
                        help="Replace an existing index of that name (never the index the build reads).")(f)


def clamp_k(k: int, available: int, what: str = "candidates") -> int:
    """``k`` or, when fewer ``what`` exist, their number, with a note on stderr."""
    if k > available:
        click.echo(f"note: -k {k} is more than the {available} {what}; showing {available}", err=True)
        return available
    return k


def check_arguments(argv) -> None:
    """Refuse command-line arguments that are not UTF-8 text (Python keeps such bytes as lone surrogates, which
    no file, index or model can hold)."""
    for n, arg in enumerate(argv, 1):
        try:
            str(arg).encode("utf-8")
        except UnicodeEncodeError:
            shown = str(arg).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise LexprobeError(f"argument {n} '{shown}' is not valid UTF-8 text") from None


DATASET_HELP = "bats:PATH (the BATS root, a category folder or one relation file) or google:PATH (questions-words.txt)."


def default_offsets_name(words: str, dataset: str) -> str:
    """The offsets index an analogy set gets by default: WORDS-<bats|google>-offsets."""
    return f"{words}-{dataset.partition(':')[0]}-offsets"


CORPUS_HELP = ("Corpus as KIND:PATH. wsd: the Raganato et al. XML + gold keys (a folder holding one *.data.xml, "
               "or the .data.xml file: SemCor, senseval2, ..., ALL); streusle: STREUSLE .conllulex/.vis files or a "
               "folder of them (SNACS-labelled adpositions and possessives are the targets); jsonl: one sentence a "
               "line, {\"words\": [...], \"targets\": [{\"position\": 3, \"sense\": \"...\"}]} (see README).")


def model_options(f):
    """--model, --layer/--layers, --pooling, --batch-tokens, --threads: how token vectors are made."""
    f = click.option("--threads", type=THREADS, help="Torch threads (default: every core this process may use; "
                                          "on a busy shared machine, 1 is faster).")(f)
    f = click.option("--batch-tokens", type=POSITIVE, default=512, show_default=True,
                     help="Padded subword tokens per batch (sentences are sorted by length first).")(f)
    f = click.option("--pooling", type=click.Choice(["mean", "first", "last"]), default="mean", show_default=True,
                     help="How a word's (or multi-word target's) subword vectors become one vector.")(f)
    f = click.option("--layers", help="Average several hidden states: A-B (e.g. 3-6) or a list (2,4).")(f)
    f = click.option("--layer", type=int, help="One hidden state: 0 = embeddings, 1..L = transformer layers "
                                               "(default: the last; negative counts from the end).")(f)
    f = click.option("--model", default="minilm", show_default=True,
                     help="Encoder: 'minilm' (packaged all-MiniLM-L6-v2), a Hugging Face name or a local path.")(f)
    return f


def _checked_device(ctx, param, value):
    """The device as given, once torch is known to have it (one clear error before any work otherwise)."""
    from ..sources.models import resolve_device

    resolve_device(value)
    return value


def device_option(f):
    """``--device cpu|cuda|mps|auto``: where the command's torch stages run."""
    return click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True,
                        callback=_checked_device,
                        help="Where the models run: auto (a GPU when torch sees one, else the CPU), cpu, cuda, "
                             "mps. A device asked for and absent is an error.")(f)


def dtype_option(f):
    """``--dtype float32|bfloat16``: the precision of inference (encoding, probing)."""
    return click.option("--dtype", type=click.Choice(DTYPES), default="float32", show_default=True,
                        help="Inference precision: float32, or bfloat16 autocast (matrix products in bfloat16: "
                             "faster on GPUs and CPUs with bfloat16 units; the agreement with float32 is measured "
                             "by 'bench perf'). OTA always runs in float32.")(f)


def device_options(f):
    """``--device`` and ``--dtype``: for commands that encode or probe."""
    return device_option(dtype_option(f))


def language_model_option(f):
    """``--model``: the masked or causal language model of the rare-words commands."""
    return click.option("--model", default=DEFAULT_MLM, show_default=True,
                        help="A masked or causal language model: 'splade-tiny' (masked) or 'smollm2' (causal), both "
                             "packaged, a Hugging Face name or a local path.")(f)


def ota_options(f):
    """The optimisation options shared by ``ota`` and the benchmarks."""
    for option in reversed([
        click.option("--iterations", type=POSITIVE, default=_DEFAULTS["iterations"], show_default=True,
                     help="Adam steps per word at most (the paper: 4000 with random contexts)."),
        click.option("--contexts", type=click.Choice(["random", "static"]), default=_DEFAULTS["contexts"],
                     show_default=True, help="static: [CLS] w . [SEP]; random: [CLS] t_l w t_r . [SEP] with new "
                                             "random whole words every iteration."),
        click.option("--init", type=click.Choice(["zeros", "mean"]), default=_DEFAULTS["init"], show_default=True,
                     help="Start from zeros (the paper) or the mean of the word's subword embeddings."),
        click.option("--lr", type=POSITIVE_FLOAT, default=_DEFAULTS["lr"], show_default=True, help="Adam learning rate."),
        click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the random contexts."),
    ]):
        f = option(f)
    return f


def engine_option(f):
    """``--engine local|ray`` and ``--ray-address`` (env ``RAY_ADDRESS``)."""
    f = click.option("--ray-address", envvar="RAY_ADDRESS",
                     help="Ray cluster to join with --engine ray (env RAY_ADDRESS): 'auto', 'HOST:6379' or "
                          "'ray://HOST:10001'; default a new local Ray.")(f)
    f = click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
                     help="local: this process; ray: a Ray cluster (pip install 'lexprobe[ray]'; see the README's "
                          "'Running on a Ray cluster').")(f)
    return f


def build_engine_options(f):
    """``--engine``, ``--ray-address``, ``--workers`` and ``--block-sentences`` for a token-index build."""
    f = click.option("--block-sentences", type=int, default=2000, show_default=True,
                     help="--engine ray: sentences per block sent to an encoder actor.")(f)
    f = click.option("--workers", type=int,
                     help="--engine ray: encoder actors (default: the cluster's CPUs / --threads; --threads is "
                          "per actor there, default 1).")(f)
    return engine_option(f)


def shard_groups_option(f):
    """``--shard-groups``: how many search actors serve an index with ``--engine ray``."""
    return click.option("--shard-groups", type=int,
                        help="--engine ray: groups of shards, one search actor each (default: the cluster's CPUs, "
                             "at most one group per shard).")(f)


def search_engine_options(f):
    """``--engine``, ``--ray-address`` and ``--shard-groups`` for a query over an index."""
    return engine_option(shard_groups_option(f))
