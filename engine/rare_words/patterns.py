"""WNLaMPro's cloze patterns (Table 3 of Schick & Schütze, "Rare words") as the authors' evaluation script ran
them (``eval-script/patterns.py`` and ``mlm.py`` of timoschick/am-for-bert), one list per relation.

A pattern holds exactly one keyword placeholder ``<W>`` and one blank ``___`` (where the model predicts the
target). As in the authors' script: quotes are ASCII ``"`` set apart by spaces (Table 3 prints typographic
quotes); a hypernym pattern whose blank follows the article "a" comes twice, with "a ___" and "an ___", so the
article never rules a target out (eight hypernym patterns, not Table 3's five: rank and precision take the best
pattern); and a period is appended to the filled text only when it does not already end in ``.``, ``?`` or
``!``. Filling puts the keyword in and turns the article "a" before it into "an" before a vowel sound (a short
exception list covers "a unicorn", "an hour"; the authors' script looks at the first letter only).
"""

from __future__ import annotations

import re

from ..core.errors import LexprobeError
from ..sources.datasets.wnlampro import RELATIONS

KEYWORD = "<W>"
BLANK = "___"

PATTERNS: dict[str, tuple[str, ...]] = {
    "antonym": (
        "<W> is the opposite of ___",
        "<W> is not ___",
        "someone who is <W> is not ___",
        "something that is <W> is not ___",
        '" <W> " is the opposite of " ___ "',
    ),
    "hypernym": (
        "<W> is a ___",
        "<W> is an ___",
        "a <W> is a ___",
        "a <W> is an ___",
        '" <W> " refers to a ___',
        '" <W> " refers to an ___',
        "<W> is a kind of ___",
        "a <W> is a kind of ___",
    ),
    "cohyponym": (
        "<W> and ___",
        '" <W> " and " ___ "',
    ),
    "corruption": (
        '" <W> " is a misspelling of " ___ " .',
        '" <W> " . did you mean " ___ " ?',
    ),
}
SENTENCE_END = (".", "?", "!")
assert tuple(PATTERNS) == RELATIONS  # one pattern list per relation of the dataset

# Words spelled with a vowel letter but said with a consonant sound ("a unicorn") and the reverse ("an hour").
_A_BEFORE_VOWEL = re.compile(r"(uni|use|usu|uti|ure|uro|eu|ewe|one|once|ubiq|uvu|ufo)")
_AN_BEFORE_CONSONANT = re.compile(r"(hour|honest|honor|honour|heir)")


def article(word: str) -> str:
    """"a" or "an" before ``word`` (by its first letters; a short exception list covers "unit", "hour"...)."""
    w = word.lower().lstrip("“\"'")
    if _AN_BEFORE_CONSONANT.match(w):
        return "an"
    if w[:1] in "aeiou" and w and not _A_BEFORE_VOWEL.match(w):
        return "an"
    return "a"


def check_pattern(pattern: str) -> str:
    """``pattern`` itself, or a clear error when it lacks exactly one ``<W>`` and one ``___``."""
    n_key, n_blank = pattern.count(KEYWORD), pattern.count(BLANK)
    if n_key != 1 or n_blank != 1:
        raise LexprobeError(f"pattern {pattern!r}: needs exactly one keyword placeholder {KEYWORD} and one blank "
                            f"{BLANK} (found {n_key} and {n_blank})")
    return pattern


def patterns_for(relation: str) -> tuple[str, ...]:
    """The Table 3 patterns of ``relation`` (antonym, hypernym, cohyponym, corruption)."""
    try:
        return PATTERNS[relation]
    except KeyError:
        raise LexprobeError(f"unknown relation {relation!r} (known: {', '.join(RELATIONS)})") from None


def fill_parts(pattern: str, keyword: str, blank: str) -> tuple[str, str, str]:
    """(text before the keyword, the keyword, text after it) of the filled pattern: see :func:`fill`."""
    check_pattern(pattern)
    before, after = pattern.split(KEYWORD)
    before = re.sub(r"\ba $", article(keyword) + " ", before)
    if not (after or keyword).endswith(SENTENCE_END):
        after += "."
    return before.replace(BLANK, blank), keyword, after.replace(BLANK, blank)


def fill(pattern: str, keyword: str, blank: str) -> str:
    """``pattern`` with the keyword in and the blank replaced by ``blank`` (e.g. the mask token) and a period
    appended unless it ends one already; "a <W>" becomes "an <W>" where the keyword needs it."""
    return "".join(fill_parts(pattern, keyword, blank))
