"""A paper's finding checked against a run's numbers, as data: the claim, the criterion (its text and the test
it applies), the evidence (numbers with their intervals) and the verdict, computed from the criterion and the
evidence. The paper slices build findings from their result tables (their ``*_claims`` modules); the run
report renders them (one line each in its findings table, the details in each section).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from numbers import Integral
from typing import Callable

AGREES, DISAGREES, UNTESTABLE = "agrees", "does not agree", "untestable here"


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

    def text(self, *, with_n: bool = False) -> str:
        if isinstance(self.value, Integral) and self.n is not None:
            return f"{self.name} {self.value}/{self.n}"
        out = f"{self.name} {number(self.value)}"
        if self.low is not None:
            out += f" [{number(self.low)}, {number(self.high)}]"
        return out + (f" (n = {self.n})" if with_n and self.n is not None else "")


@dataclass(frozen=True)
class Criterion:
    """How a claim is tested: ``text`` for the reader and ``test``, the same rule over the evidence (True: the
    run agrees, False: it does not, None: these numbers cannot test it)."""

    text: str
    test: Callable[[tuple[Evidence, ...]], bool | None]


def intervals_above(bound: float, text: str) -> Criterion:
    """Every evidence interval lies above ``bound`` (an interval that reaches or straddles it does not)."""
    return Criterion(text, lambda evidence: all(e.low > bound for e in evidence))


def judge(criterion: Criterion, evidence: tuple[Evidence, ...]) -> str:
    """The verdict: :data:`UNTESTABLE` without evidence or when the test says so, else whether it holds."""
    held = criterion.test(evidence) if evidence else None
    return UNTESTABLE if held is None else AGREES if held else DISAGREES


@dataclass(frozen=True)
class Finding:
    """One claim of ``paper`` (a key of the report's papers) tested on this run; ``section`` is the report
    section it belongs to, ``details`` its longer text (the paper's words, exceptions, causes) for that section.
    The first evidence is the key number."""

    paper: str
    claim: str
    criterion: Criterion
    evidence: tuple[Evidence, ...]
    verdict: str = field(init=False)
    section: str = ""
    details: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "evidence", tuple(self.evidence))
        object.__setattr__(self, "details", tuple(self.details))
        object.__setattr__(self, "verdict", judge(self.criterion, self.evidence))

    def observed(self, *, with_n: bool = False) -> str:
        """The evidence in one line."""
        return "; ".join(e.text(with_n=with_n) for e in self.evidence) or "no numbers"

    def as_dict(self) -> dict:
        """The finding as JSON-ready data (the criterion as its text)."""
        return {"paper": self.paper, "claim": self.claim, "criterion": self.criterion.text,
                "evidence": [asdict(e) for e in self.evidence], "verdict": self.verdict, "section": self.section,
                "details": list(self.details)}
