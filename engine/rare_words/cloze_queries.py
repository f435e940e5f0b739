"""Cloze queries for probing a language model (Schick & Schütze, "Rare words", section 6.2): a pattern filled with
a keyword, tokenized, with the position whose logits answer it; their batches; and the blank of a typed sentence.

A masked model answers at its mask token (:func:`masked_query`). A causal model predicts the token after its
input, so a cloze can be asked only when the blank ends the text (punctuation, quotes and spaces may follow it:
they come after the answer and cannot change it); the query is the text before the blank and its last position
answers (:func:`next_token_query`). Each model builds its own kind (``lm.query``); :func:`make_query` asks it.

With ``replace`` a multi-token keyword's tokens shrink to one slot (its first token's place) that a keyword
vector fills later (the strategies of :mod:`lexprobe.rare_words.probing`); ``replace="all"`` opens the slot for a
one-token keyword too (its token's place: the replace policy ``all`` of the AM strategies).

Batches: a masked model's queries go length-sorted and right-padded (:func:`length_batches`). A causal model's
share prefixes (:func:`pack_queries`): the queries, sorted, go into prefix trees of at most ``PACKED_TOKENS``
tokens, one tree per row, each token once with the position it has in its query and attending to its ancestors
only (a 4-D attention mask), so every query's last hidden state is the one it gets alone, while an entry's
patterns ("<W> is a", "<W> is an", "<W> is a kind of") and the keywords' common starts ("a", a quote) are computed
once (the tokens saved: ``benchmarks/probing-smollm2.md``).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..core.errors import LexprobeError
from .patterns import BLANK, PATTERNS, fill_parts

if TYPE_CHECKING:
    from .language_models import LanguageModel

PACKED_TOKENS = 64  # tokens per prefix tree: the dev split's tokens fall to 0.50 of the unshared ones at 32, 0.47 at 64
MASK_WORD = "[MASK]"  # LAMA's (and BERT's) way to write the blank, taken as well as ___


@dataclass
class Query:
    """One cloze: entry ``entry``, pattern ``pattern``, its token ids, the mask position and the keyword slot
    (the position a replacement vector goes to, -1 when the keyword is fed as tokens)."""

    entry: int
    pattern: int
    ids: list[int]
    mask_pos: int
    slot: int = -1
    keyword_tokens: int = 1


def make_query(lm: LanguageModel, pattern: str, keyword: str, *, replace: bool | str) -> Query:
    """``pattern`` filled with ``keyword`` as the cloze ``lm`` answers: :func:`masked_query` for a masked model,
    :func:`next_token_query` for a causal one. ``replace``: False (the keyword's tokens), True or ``"multi"`` (a
    slot for a multi-token keyword), ``"all"`` (a slot for every keyword)."""
    return lm.query(pattern, keyword, replace=replace)


def masked_query(lm: LanguageModel, pattern: str, keyword: str, *, replace: bool | str) -> Query:
    """Tokenize ``pattern`` filled with ``keyword``, its blank the mask token; with ``replace`` a multi-token keyword
    shrinks to one slot (its first token's place; the vector is put in later); ``replace="all"``: every keyword."""
    tok = lm.tokenizer
    before, _, after = fill_parts(pattern, keyword, tok.mask_token)
    ids = lm.encode(before + keyword + after)
    if ids.count(tok.mask_token_id) != 1:
        raise LexprobeError(f"pattern {pattern!r} with keyword {keyword!r}: the blank does not give one mask token")
    lead = int(ids[0] in tok.all_special_ids)  # [CLS] / <s>
    plain = tok(before + keyword, add_special_tokens=False)["input_ids"]
    start = lead + (len(tok(before, add_special_tokens=False)["input_ids"]) if before else 0)
    n = len(plain) - (start - lead)
    if n < 1 or ids[start:start + n] != plain[start - lead:]:
        raise LexprobeError(f"pattern {pattern!r}: cannot locate the keyword {keyword!r} among its tokens")
    if replace and (n > 1 or replace == "all"):
        ids = ids[:start + 1] + ids[start + n:]
        return Query(-1, -1, ids, ids.index(tok.mask_token_id), start, n)
    return Query(-1, -1, ids, ids.index(tok.mask_token_id), -1, n)


def next_token_query(lm: LanguageModel, pattern: str, keyword: str, *, replace: bool | str) -> Query:
    """The text of ``pattern`` filled with ``keyword`` up to the blank, tokenized; the last position predicts the
    target. With ``replace`` a multi-token keyword shrinks to one slot (its first token's place); ``replace="all"``:
    every keyword."""
    before, _, after = fill_parts(pattern, keyword, BLANK)
    query, _ = split_at_blank(before + keyword + after)
    tok = lm.tokenizer
    ids = lm.encode(query)
    lead = len(ids) - len(tok(query, add_special_tokens=False)["input_ids"])  # the document start / BOS
    head = before.rstrip(" ")  # a space before the keyword is part of its first token in BPE vocabularies
    head_ids = tok(head, add_special_tokens=False)["input_ids"] if head else []
    with_kw = tok(before + keyword, add_special_tokens=False)["input_ids"]
    start, n = lead + len(head_ids), len(with_kw) - len(head_ids)
    if n < 1 or ids[lead:start] != head_ids or ids[start:start + n] != with_kw[len(head_ids):]:
        raise LexprobeError(f"pattern {pattern!r}: cannot locate the keyword {keyword!r} among its tokens")
    if replace and (n > 1 or replace == "all"):
        ids = ids[:start + 1] + ids[start + n:]
        return Query(-1, -1, ids, len(ids) - 1, start, n)
    return Query(-1, -1, ids, len(ids) - 1, -1, n)


# ------------------------------------------------------------------------------------------------- the blank


def split_at_blank(text: str) -> tuple[str, bool]:
    """(the text before the blank, whether the target takes a leading space) for a causal model's cloze.

    The blank must be the last word: only spaces, punctuation and quotes may follow it (a clear error
    otherwise); a space right before the blank belongs to the target, so it is cut from the query.
    """
    if text.count(BLANK) != 1:
        raise LexprobeError(f"{text!r}: write exactly one blank {BLANK} where the model should predict a word")
    before, after = text.split(BLANK)
    if any(not (c.isspace() or unicodedata.category(c).startswith("P")) for c in after):
        raise LexprobeError(f"{text!r}: a causal model predicts the next word, so the blank {BLANK} must end the "
                            f"text (only punctuation and quotes may follow it, not {after.strip()[:30]!r})")
    spaced = before.endswith(" ")
    query = before.rstrip(" ")
    if not query:
        raise LexprobeError(f"{text!r}: a causal model needs some text before the blank {BLANK}")
    return query, spaced


def spaced_blank(pattern: str) -> bool:
    """Whether ``pattern``'s blank gives the target a leading space (see :func:`split_at_blank`)."""
    before, _, after = fill_parts(pattern, "word", BLANK)
    return split_at_blank(before + "word" + after)[1]


def blank_forms() -> set[bool]:
    """The forms WNLaMPro's patterns give a target (True: after a space), over every relation's patterns."""
    return {spaced_blank(p) for patterns in PATTERNS.values() for p in patterns}


def with_blank(lm: LanguageModel, text: str) -> str:
    """``text`` with its blank written ``___``: ``[MASK]`` and the model's own mask token (``<mask>``) are
    taken too; exactly one blank is required."""
    typed = text
    for form in dict.fromkeys([MASK_WORD, getattr(lm.tokenizer, "mask_token", None) or MASK_WORD]):
        text = text.replace(form, BLANK)
    if text.count(BLANK) != 1:
        raise LexprobeError(f"{typed!r}: write exactly one blank ({BLANK} or {MASK_WORD}) where the model should "
                            "predict a word")
    return text


def top_predictions(lm: LanguageModel, text: str, k: int = 10) -> list[dict]:
    """The ``k`` most probable tokens for the one blank (``___`` or ``[MASK]``) of ``text``: at a masked model's
    mask, or a causal model's next tokens after the text before the blank (``lm.top_predictions``)."""
    return lm.top_predictions(with_blank(lm, text), k)


def gold_rank(lm: LanguageModel, text: str, gold: str) -> tuple[int, float]:
    """(rank, probability) of the word ``gold`` at the blank of ``text``: 1 + the number of tokens more probable.
    ``gold`` must be one token of the model's vocabulary (the blank predicts one token)."""
    if lm.kind == "causal":
        raise LexprobeError("--gold ranks a word at a masked LM's blank; this is a causal model")
    pieces = lm.tokenizer.tokenize(gold)
    if len(pieces) != 1:
        raise LexprobeError(f"gold word {gold!r} is {len(pieces)} tokens for this model ({' '.join(pieces)}); the "
                            "blank predicts one token")
    probs = lm.blank_probabilities(with_blank(lm, text))
    p = probs[lm.tokenizer.convert_tokens_to_ids(pieces[0])]
    return int((probs > p).sum()) + 1, float(p)


# ----------------------------------------------------------------------------------------------- batches


def length_batches(queries: Sequence[Query], batch_size: int):
    """Indices of ``queries`` in length-sorted batches (little padding)."""
    order = sorted(range(len(queries)), key=lambda i: len(queries[i].ids))
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


@dataclass
class PrefixTree:
    """Queries of a causal model sharing their beginnings, as one row: each node a token, after its ``parent``
    (-1: the first token) at position ``depth``; ``vector``: per node, the query whose keyword vector fills it
    (-1: none); query ``queries[n]`` is answered by the next-token logits of node ``ends[n]``."""

    ids: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    vector: list[int] = field(default_factory=list)
    queries: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)

    def ancestors(self) -> np.ndarray:
        """(N, N) bool: row j marks the nodes token j attends to, itself and its ancestors (its query's
        prefix)."""
        out = np.zeros((len(self.ids), len(self.ids)), bool)
        for j, p in enumerate(self.parent):  # a parent comes before its children
            if p >= 0:
                out[j] = out[p]
            out[j, j] = True
        return out


def pack_queries(queries: Sequence[Query], vectors: np.ndarray | None, max_tokens: int) -> list[PrefixTree]:
    """The queries in prefix trees of at most ``max_tokens`` nodes (a longer query alone), filled in sorted order
    so that neighbours share the most. Two tokens are one node when they have the same parent and id and, at a
    keyword slot, the same vector: a query's path from the root is exactly its tokens (and vector), so in a causal
    model its hidden states are the ones it gets alone; equal queries share their end node."""
    trees: list[PrefixTree] = []
    tree, children = PrefixTree(), {}
    for i in sorted(range(len(queries)), key=lambda i: queries[i].ids):
        q = queries[i]
        keys = [(t, vectors[i].tobytes() if p == q.slot else None) for p, t in enumerate(q.ids)]
        path, node = [], -1
        while len(path) < len(keys) and (node, keys[len(path)]) in children:
            node = children[(node, keys[len(path)])]
            path.append(node)
        if tree.ids and len(tree.ids) + len(keys) - len(path) > max_tokens:
            trees.append(tree)
            tree, children, path, node = PrefixTree(), {}, [], -1
        for p in range(len(path), len(keys)):
            parent, node = node, len(tree.ids)
            children[(parent, keys[p])] = node
            tree.ids.append(q.ids[p])
            tree.parent.append(parent)
            tree.depth.append(p)
            tree.vector.append(i if p == q.slot else -1)
            path.append(node)
        tree.queries.append(i)
        tree.ends.append(path[q.mask_pos])
    if tree.ids:
        trees.append(tree)
    return trees


def tree_batches(queries: Sequence[Query], vectors: np.ndarray | None, batch_size: int) -> list[list[PrefixTree]]:
    """The queries' prefix trees (:func:`pack_queries`, ``PACKED_TOKENS`` tokens each) sorted by size, as many per
    batch as hold at most ``batch_size`` queries (at least one tree)."""
    trees = sorted(pack_queries(queries, vectors, PACKED_TOKENS), key=lambda t: len(t.ids))
    batches, n = [[]], 0
    for t in trees:
        if batches[-1] and n + len(t.queries) > batch_size:
            batches.append([])
            n = 0
        batches[-1].append(t)
        n += len(t.queries)
    return batches
