"""Shared click parameter types: every numeric option gets its range, every float is finite, index names are
checked as they are parsed. A value out of range is click's one-line usage error (exit 2), never a traceback
deeper down. Also ``--replace`` of the index builders and the note printed when ``-k`` is clamped.
"""

from __future__ import annotations

import math

import click

from ..core.store import check_name
from ..core.errors import LexprobeError

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
