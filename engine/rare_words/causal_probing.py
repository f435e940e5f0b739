"""Probing a causal (left-to-right) language model on WNLaMPro: the next-token distribution at the blank.

A causal model predicts the token after its input, so a cloze can be asked only when the blank ends the text
(punctuation, quotes and spaces may follow it: they come after the answer and cannot change it). The query is
the text before the blank; its last position's logits rank the candidates, exactly where a masked model's mask
position would (:mod:`lexprobe.rare_words.probing` does the batching, ranking and scores for both kinds).

The form of a target at the blank: byte-level BPE and SentencePiece vocabularies hold "bird" after a space
(" bird", one token ``Ġbird``) apart from "bird" glued to what precedes it (after an opening quote). The blank
decides: when a space precedes it, the query ends before that space and the target is the word with its
leading space; otherwise the target is the bare word. A target counts (in WNLaMPro's build and in probing) only
when it is one token in the form every blank of the patterns gives it, so that each candidate is ranked by one
next-token probability, like the paper's restriction of targets to single tokens of BERT's vocabulary.

Batches share prefixes (:func:`pack_queries`): the queries, sorted, go into prefix trees of at most
``PACKED_TOKENS`` tokens, one tree per row, each token once with the position it has in its query and attending to
its ancestors only (a 4-D attention mask), so every query's last hidden state is the one it gets alone, while an
entry's patterns ("<W> is a", "<W> is an", "<W> is a kind of") and the keywords' common starts ("a", a quote)
are computed once: the dev split's 17,035 queries hold 117,654 tokens, their trees 55,533.

The keyword strategies (original, ota, first, last, avg) work as for a masked model: a multi-token keyword's
tokens shrink to one slot that gets one vector from :mod:`lexprobe.rare_words.ota`. One vector per word, taken
from the word as it is tokenized inside a sentence (after a space), whether the keyword opens the pattern or
not (the paper gives each word one embedding).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..core.errors import LexprobeError
from ..core.progress import bar
from .patterns import BLANK, PATTERNS, fill_parts
from .probing import MaskedLM, Query

PACKED_TOKENS = 64  # tokens per prefix tree: the dev split's tokens fall to 0.50 of the unshared ones at 32, 0.47 at 64


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


def one_token_ids(tokenizer, words, spaced: bool) -> list[int | None]:
    """The token id of each word in its form at a blank (with the leading space when ``spaced``), None where that
    form is not exactly one vocabulary token."""
    special = set(tokenizer.all_special_ids)
    encoded = tokenizer([(" " if spaced else "") + w for w in words], add_special_tokens=False)["input_ids"]
    return [ids[0] if len(ids) == 1 and ids[0] not in special else None for ids in encoded]


def blank_vocabulary(tokenizer, forms: set[bool] | None = None) -> dict[str, int]:
    """word -> token id (its spaced form when the patterns use it) for the whole words that are one token in
    every form of ``forms`` (default :func:`blank_forms`): WNLaMPro's target vocabulary T for a causal model."""
    from ..sources.models import whole_word_tokens

    forms = sorted(blank_forms() if forms is None else forms, reverse=True)  # the spaced form first
    words = sorted({w for w in whole_word_tokens(tokenizer)[0] if w and w == w.strip()})
    found = [one_token_ids(tokenizer, words, spaced) for spaced in forms]
    return {w: ids[0] for w, ids in zip(words, zip(*found)) if all(i is not None for i in ids)}


class CausalLM(MaskedLM):
    """A causal language model and its tokenizer, answering "which token comes next" in batches.

    It shares :class:`~lexprobe.rare_words.probing.MaskedLM`'s machinery (the body runs on the batch, the head only
    at one position per row), with the query's last position in place of the mask.
    """

    kind = "causal"

    def __init__(self, model, tokenizer):
        from ..sources.models import document_start_id

        super().__init__(model, tokenizer)
        self._vocab: dict[str, int] | None = None
        self._words: dict[int, str] | None = None
        self.start_id = document_start_id(tokenizer)  # once: it reads the whole vocabulary (26 ms for SmolLM2)
        self._special = set(tokenizer.all_special_ids)

    @classmethod
    def load(cls, name: str) -> "CausalLM":
        from ..sources.models import load_causal_lm, load_tokenizer

        return cls(load_causal_lm(name), load_tokenizer(name))

    def whole_words(self) -> dict[str, int]:
        """word -> token id for the targets a causal model can rank: :func:`blank_vocabulary`."""
        if self._vocab is None:
            self._vocab = blank_vocabulary(self.tokenizer)
        return self._vocab

    def at_blank(self, target_ids, pattern: str) -> list[int]:
        """``target_ids`` (from :meth:`whole_words`) in the form ``pattern``'s blank gives them."""
        spaced = spaced_blank(pattern)
        if spaced:  # whole_words gives the spaced form whenever a pattern asks for it
            return list(target_ids)
        if self._words is None:
            self._words = {t: w for w, t in self.whole_words().items()}
        words = [self._words[int(t)] for t in target_ids]
        return [i for i in one_token_ids(self.tokenizer, words, spaced) if i is not None]

    def query(self, pattern: str, keyword: str, *, replace: bool) -> Query:
        return make_query(self, pattern, keyword, replace=replace)

    def answer_logits(self, queries: Sequence[Query], vectors: np.ndarray | None, *, batch_size: int,
                      full: bool = False, desc: str = "probe"):
        """Yield (query indices, their next-token logits (n, V)): prefix trees (:func:`pack_queries`), as many per
        forward pass as hold at most ``batch_size`` queries (at least one tree). ``full``: one query per row with the
        whole-sequence logits, as :class:`MaskedLM` does (the benchmark's baseline)."""
        import torch

        if full:
            yield from super().answer_logits(queries, vectors, batch_size=batch_size, full=True, desc=desc)
            return
        trees = sorted(pack_queries(queries, vectors, PACKED_TOKENS), key=lambda t: len(t.ids))
        batches, n = [[]], 0
        for t in trees:
            if batches[-1] and n + len(t.queries) > batch_size:
                batches.append([])
                n = 0
            batches[-1].append(t)
            n += len(t.queries)
        pad = self.tokenizer.pad_token_id or 0
        dtype = self.model.get_input_embeddings().weight.dtype
        for batch in bar(batches, desc=desc, unit="batch"):
            width = max(len(t.ids) for t in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            positions = torch.zeros((len(batch), width), dtype=torch.long)
            sees = np.broadcast_to(np.eye(width, dtype=bool), (len(batch), 1, width, width)).copy()  # padding: itself
            for b, t in enumerate(batch):
                ids[b, :len(t.ids)], positions[b, :len(t.ids)] = torch.tensor(t.ids), torch.tensor(t.depth)
                sees[b, 0, :len(t.ids), :len(t.ids)] = t.ancestors()
            # an additive mask (0 where a token sees, the lowest float elsewhere) means the same to every attention
            # implementation (SDPA and eager)
            mask = torch.where(torch.from_numpy(sees), 0.0, torch.finfo(dtype).min).to(dtype)
            embeds = None
            slots = [(b, j, i) for b, t in enumerate(batch) for j, i in enumerate(t.vector) if i >= 0]
            if slots:
                with torch.inference_mode():
                    embeds = self.model.get_input_embeddings()(ids).clone()
                    b, j, i = map(list, zip(*slots))
                    embeds[b, j] = torch.as_tensor(np.asarray(vectors)[i], dtype=dtype)
            rows = torch.tensor([b for b, t in enumerate(batch) for _ in t.ends])
            ends = torch.tensor([e for t in batch for e in t.ends])
            yield ([i for t in batch for i in t.queries],
                   self.mask_logits(ids, mask, ends, embeds, rows=rows, position_ids=positions))

    def top_predictions(self, text: str, k: int = 10) -> list[dict]:
        return top_predictions(self, text, k)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` after the document start (:func:`lexprobe.sources.models.document_start_id`) or
        the tokenizer's own BOS, with no special token at the end."""
        ids = list(self.tokenizer(text)["input_ids"])
        while len(ids) > 1 and ids[-1] in self._special:
            ids.pop()
        return ([self.start_id] if self.start_id is not None else []) + ids


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


def make_query(lm: CausalLM, pattern: str, keyword: str, *, replace: bool) -> Query:
    """The text of ``pattern`` filled with ``keyword`` up to the blank, tokenized; the last position predicts the
    target. With ``replace`` a multi-token keyword shrinks to one slot (its first token's place)."""
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
    if replace and n > 1:
        ids = ids[:start + 1] + ids[start + n:]
        return Query(-1, -1, ids, len(ids) - 1, start, n)
    return Query(-1, -1, ids, len(ids) - 1, -1, n)


def top_predictions(lm: CausalLM, text: str, k: int = 10) -> list[dict]:
    """The ``k`` most probable next tokens after the text before the blank of ``text``, shown as words (the
    token's text without its leading space); ``whole_word`` says whether the token is by itself that word in
    the form the blank asks for (a piece that continues a word, like "quat", is not)."""
    import torch

    query, spaced = split_at_blank(text)
    ids = lm.encode(query)
    ids_t = torch.tensor([ids])
    logits = lm.mask_logits(ids_t, torch.ones_like(ids_t), torch.tensor([len(ids) - 1]))[0]
    p, idx = torch.softmax(logits, -1).topk(k)
    out = []
    for r, (tid, pp) in enumerate(zip(idx.tolist(), p.tolist())):
        word = lm.tokenizer.decode([tid]).strip()
        out.append({"rank": r + 1, "token": word, "probability": float(pp),
                    "whole_word": bool(word) and one_token_ids(lm.tokenizer, [word], spaced)[0] == tid})
    return out
