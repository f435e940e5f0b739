"""Typed sentences into words the way the sense-annotated corpora split them (Penn Treebank style), so that a
query typed as prose lines up with the indexed words: punctuation at a word's edges is its own word
(``banks.`` -> ``banks`` ``.``; ``"(money)"`` -> ``(`` ``money`` ``)``), clitics are split off
(``bank's`` -> ``bank`` ``'s``; ``don't`` -> ``do`` ``n't``), and what lies inside a word stays
(``U.S``, ``well-known``, ``3.5``). A sentence already split with spaces (``I put it in banks .``) is unchanged.
"""

from __future__ import annotations

import re

_LEADING = "\"'([{`“‘«"
_TRAILING = "\"'.,;:!?)]}”’»…"
_CLITICS = re.compile(r"(?i)^(.+?)(n't|'s|'re|'ve|'ll|'d|'m|’s|’re|’ve|’ll|’d|’m)$")


def split_words(text: str) -> list[str]:
    """The words of a typed sentence (see the module doc)."""
    words: list[str] = []
    for chunk in text.split():
        head: list[str] = []
        tail: list[str] = []
        while len(chunk) > 1 and chunk[0] in _LEADING:
            head.append(chunk[0])
            chunk = chunk[1:]
        while len(chunk) > 1 and chunk[-1] in _TRAILING:
            # an abbreviation keeps its inner dots (U.S.) and gives up only the last one; '...' stays one word
            cut = 3 if chunk.endswith("...") and len(chunk) > 3 else 1
            tail.insert(0, chunk[-cut:])
            chunk = chunk[:-cut]
        clitic = _CLITICS.match(chunk)
        middle = [clitic.group(1), clitic.group(2)] if clitic and clitic.group(1).isalpha() else [chunk]
        words += head + middle + tail
    return words
