"""A paper's claim checked against a run's numbers, as data: the paper's own sentence (quoted, with its section
and the number it prints), the criterion (its text, which says why it is a fair test of that sentence, and the
rule it applies), the evidence (numbers with their intervals) and the verdict, computed from the criterion and
the evidence, never written by hand.

Four verdicts:

- :data:`AGREES`: the evidence lies on the claim's side of its line (an interval: wholly);
- :data:`CONTRADICTS`: it lies wholly on the other side;
- :data:`INCONCLUSIVE`: the interval straddles or touches the line: no evidence either way. The report then gives
  the interval and the smallest effect the sample could have detected (:attr:`Evidence.detectable`);
- :data:`UNTESTABLE`: the data cannot speak (no numbers, or the criterion says why not: :func:`untestable`).

A claim of several parts is judged part by part, one :class:`Finding` each. The paper slices build findings from
their result tables (their ``*_claims`` modules); the run report renders them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from numbers import Integral
from typing import Callable, Iterable

AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE = "agrees", "contradicts", "inconclusive", "untestable here"
VERDICTS = (AGREES, CONTRADICTS, INCONCLUSIVE, UNTESTABLE)

Z95 = 1.959963984540054   # the standard normal's 97.5% quantile: a 95% interval's half-width in standard errors
Z80 = 0.8416212335729143  # its 80% quantile: the extra standard errors an effect needs for 80% power
DETECTABLE_FACTOR = (Z95 + Z80) / Z95


def number(value) -> str:
    """A number for a sentence: integers as they are, others with three significant digits."""
    if value is None:
        return ""
    if isinstance(value, Integral):
        return str(value)
    if math.isnan(value):
        return "nan"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:#.3g}".rstrip(".")


@dataclass(frozen=True)
class Evidence:
    """A number this run measured: ``value``, its interval [``low``, ``high``] (None: none), over ``n`` items.
    An integer ``value`` with ``n`` is a count out of ``n``."""

    name: str
    value: float
    low: float | None = None
    high: float | None = None
    n: int | None = None

    @property
    def has_interval(self) -> bool:
        return (self.low is not None and self.high is not None
                and not (math.isnan(self.low) or math.isnan(self.high)))

    @property
    def detectable(self) -> float | None:
        """The smallest true effect this sample would detect (its 95% interval excluding 0) with 80% power:
        (z_0.975 + z_0.8) standard errors, the standard error read off the interval's half-width as
        half-width / z_0.975 (exact for a normal interval, the usual reading of a bootstrap one). None without an
        interval."""
        if not self.has_interval:
            return None
        return DETECTABLE_FACTOR * (self.high - self.low) / 2

    def text(self, *, with_n: bool = False) -> str:
        if isinstance(self.value, Integral) and self.n is not None:
            return f"{self.name} {self.value}/{self.n}"
        out = f"{self.name} {number(self.value)}"
        if self.low is not None:
            out += f" [{number(self.low)}, {number(self.high)}]"
        return out + (f" (n = {self.n})" if with_n and self.n is not None else "")


@dataclass(frozen=True)
class Untestable:
    """A criterion's answer when the data cannot speak, with the reason (:func:`untestable`)."""

    reason: str


def untestable(reason: str) -> Untestable:
    """What a criterion's test returns when these numbers cannot test the claim; ``reason`` says why."""
    return Untestable(reason)


@dataclass(frozen=True)
class Criterion:
    """How a claim is tested: ``text`` for the reader (the rule and why it is a fair test of the paper's sentence;
    tolerances in units of a measured spread) and ``test``, the same rule over the evidence. ``test`` returns a
    verdict (one of :data:`VERDICTS`), :func:`untestable` with a reason, or, for a rule without a middle ground, a
    bool (True: agrees, False: contradicts) or None (untestable)."""

    text: str
    test: Callable[[tuple[Evidence, ...]], object]


# ------------------------------------------------------------------------------------ rules of judgement


def side(e: Evidence, bound: float, *, above: bool = True) -> str:
    """One number against a line: the claim is that the value lies above ``bound`` (``above=False``: below).
    With an interval: :data:`AGREES` when it lies wholly on the claim's side, :data:`CONTRADICTS` when wholly
    on the other, :data:`INCONCLUSIVE` when it reaches or straddles the line; without one, the value decides
    (a value on the line contradicts: it is not above). A NaN value is :data:`UNTESTABLE`."""
    sign = 1.0 if above else -1.0
    if e.value is None or (not isinstance(e.value, Integral) and math.isnan(e.value)):
        return UNTESTABLE
    if not e.has_interval:
        return AGREES if sign * (e.value - bound) > 0 else CONTRADICTS
    near, far = (e.low, e.high) if above else (e.high, e.low)
    if sign * (near - bound) > 0:
        return AGREES
    if sign * (far - bound) < 0:
        return CONTRADICTS
    return INCONCLUSIVE


def within(e: Evidence, centre: float, tolerance: float) -> str:
    """An equivalence claim: the value equals ``centre`` up to ``tolerance`` (which the caller derives from a
    measured spread: an IQR, an interval's width). :data:`AGREES` when the interval lies inside
    [centre - tolerance, centre + tolerance], :data:`CONTRADICTS` when it lies wholly outside, else
    :data:`INCONCLUSIVE`; without an interval the value decides."""
    if e.value is None or (not isinstance(e.value, Integral) and math.isnan(e.value)) or math.isnan(tolerance):
        return UNTESTABLE
    lo, hi = centre - tolerance, centre + tolerance
    a, b = (e.low, e.high) if e.has_interval else (e.value, e.value)
    if lo <= a and b <= hi:
        return AGREES
    if b < lo or a > hi:
        return CONTRADICTS
    return INCONCLUSIVE


def combine(verdicts: Iterable[str]) -> str:
    """Every part must hold: :data:`CONTRADICTS` if any part contradicts, else :data:`INCONCLUSIVE` if any part is
    inconclusive or some parts cannot be tested while others can, :data:`UNTESTABLE` if none can, else
    :data:`AGREES`. (No parts: untestable.)"""
    verdicts = list(verdicts)
    if not verdicts or all(v == UNTESTABLE for v in verdicts):
        return UNTESTABLE
    if CONTRADICTS in verdicts:
        return CONTRADICTS
    if INCONCLUSIVE in verdicts or UNTESTABLE in verdicts:
        return INCONCLUSIVE
    return AGREES


def intervals_above(bound: float, text: str) -> Criterion:
    """Every evidence interval lies above ``bound`` (:func:`side` per evidence, :func:`combine` over them)."""
    return Criterion(text, lambda evidence: combine(side(e, bound) for e in evidence))


def intervals_below(bound: float, text: str) -> Criterion:
    """Every evidence interval lies below ``bound``."""
    return Criterion(text, lambda evidence: combine(side(e, bound, above=False) for e in evidence))


def judge(criterion: Criterion, evidence: tuple[Evidence, ...]) -> tuple[str, str]:
    """The verdict and, for :data:`UNTESTABLE`, why: untestable without evidence, else what the test says."""
    if not evidence:
        return UNTESTABLE, "this run has no numbers for it"
    held = criterion.test(evidence)
    if isinstance(held, Untestable):
        return UNTESTABLE, held.reason
    if held is None:
        return UNTESTABLE, "these numbers cannot test it"
    if isinstance(held, bool):
        return (AGREES if held else CONTRADICTS), ""
    if held not in VERDICTS:
        raise ValueError(f"a criterion's test returned {held!r}, not a verdict")
    return held, ("these numbers cannot test it" if held == UNTESTABLE else "")


# ----------------------------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Finding:
    """One part of a claim of ``paper`` (a key of the report's papers) tested on this run.

    ``claim`` names the part in a few words (the findings table's text); ``quote`` is the paper's own sentence
    and ``where`` its place in the paper (section, figure, table); ``paper_value`` the number the paper prints for
    it, its model named ("" where it prints none). ``section`` is the report section the finding belongs to,
    ``details`` its longer text (exceptions, causes). The first evidence is the key number. ``verdict`` and
    ``reason`` (why it is untestable) are computed."""

    paper: str
    claim: str
    criterion: Criterion
    evidence: tuple[Evidence, ...]
    verdict: str = field(init=False)
    reason: str = field(init=False)
    section: str = ""
    details: tuple[str, ...] = ()
    quote: str = ""
    where: str = ""
    paper_value: str = ""

    def __post_init__(self):
        object.__setattr__(self, "evidence", tuple(self.evidence))
        object.__setattr__(self, "details", tuple(self.details))
        verdict, reason = judge(self.criterion, self.evidence)
        object.__setattr__(self, "verdict", verdict)
        object.__setattr__(self, "reason", reason)

    @property
    def key_number(self) -> str:
        """The first evidence in a few words ("" without evidence)."""
        return self.evidence[0].text() if self.evidence else ""

    def observed(self, *, with_n: bool = False) -> str:
        """The evidence in one line."""
        return "; ".join(e.text(with_n=with_n) for e in self.evidence) or "no numbers"

    def power_note(self) -> str:
        """For an inconclusive verdict: the smallest effect each interval could have detected (80% power)."""
        if self.verdict != INCONCLUSIVE:
            return ""
        parts = [f"{e.name}: {number(e.detectable)}" for e in self.evidence if e.detectable is not None]
        return ("Smallest effect this sample could detect (80% power, 95% interval): " + "; ".join(parts) + "."
                if parts else "")

    def as_dict(self) -> dict:
        """The finding as JSON-ready data (the criterion as its text)."""
        return {"paper": self.paper, "claim": self.claim, "quote": self.quote, "where": self.where,
                "paper_value": self.paper_value, "criterion": self.criterion.text,
                "evidence": [{**asdict(e), "detectable": e.detectable} for e in self.evidence],
                "verdict": self.verdict, "reason": self.reason, "section": self.section,
                "details": list(self.details)}


def count_verdicts(verdicts: Iterable[str]) -> dict[str, int]:
    """How many of ``verdicts`` are each verdict, in :data:`VERDICTS` order."""
    verdicts = list(verdicts)
    return {v: verdicts.count(v) for v in VERDICTS}


def verdict_line(verdicts: Iterable[str]) -> str:
    """The line above a findings table: how many claim parts got each verdict."""
    return "Verdicts: " + ", ".join(f"{n} {v}" for v, n in count_verdicts(verdicts).items()) + "."
