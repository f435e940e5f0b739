"""Language models of either kind for probing: masked (:class:`MaskedLM`: which token fills the mask) or causal
(:class:`CausalLM`: which token comes next), both answering what :class:`LanguageModel` asks; :func:`load_lm` picks
the kind from the checkpoint (:func:`lexprobe.sources.models.model_kind`). Also the target vocabulary T that
WNLaMPro restricts targets to (:func:`target_words`).

Logits are computed only at the answering position: the body runs on the batch, the rows of its last hidden state
at those positions go through the LM head (models whose head is not one module fall back to full logits).

The form of a target at a causal model's blank: byte-level BPE and SentencePiece vocabularies hold "bird" after a
space (" bird", one token ``Ġbird``) apart from "bird" glued to what precedes it (after an opening quote). The
blank decides (:func:`lexprobe.rare_words.cloze_queries.split_at_blank`): when a space precedes it, the query ends
before that space and the target is the word with its leading space; otherwise the target is the bare word. A
target counts (in WNLaMPro's build and in probing) only when it is one token in the form every blank of the
patterns gives it, so that each candidate is ranked by one next-token probability, like the paper's restriction of
targets to single tokens of BERT's vocabulary.

``device`` and ``dtype`` (:func:`load_lm`; :func:`lexprobe.sources.models.resolve_device`, ``resolve_dtype``): the
model and every tensor of a batch live on the device; ``bfloat16`` runs the forward passes under autocast, the
weights stay float32 (OTA on the same model stays float32). Logits come back float32 on the CPU.
"""

from __future__ import annotations

from typing import Iterator, Protocol, Sequence

import numpy as np

from ..core.errors import LexprobeError
from ..core.progress import bar
from .cloze_queries import (Query, blank_forms, length_batches, masked_query, next_token_query, spaced_blank,
                            split_at_blank, tree_batches)
from .patterns import BLANK


class LanguageModel(Protocol):
    """What probing asks of a model and its tokenizer (``model``, ``tokenizer``, ``vocab_size``)."""

    kind: str  # "masked" or "causal", for what the commands show

    def whole_words(self) -> dict[str, int]:
        """word -> token id of the targets the model can rank."""

    def at_blank(self, target_ids: Sequence[int], pattern: str) -> Sequence[int]:
        """``target_ids`` (from :meth:`whole_words`) in the form ``pattern``'s blank gives them."""

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` as the model reads it."""

    def query(self, pattern: str, keyword: str, *, replace: bool) -> Query:
        """``pattern`` filled with ``keyword`` as this model's cloze."""

    def answer_logits(self, queries: Sequence[Query], vectors: np.ndarray | None, *, batch_size: int,
                      full: bool = False, desc: str = "probe") -> Iterator[tuple[list[int], object]]:
        """Yield (query indices, their logits at the answering position (n, V)) batch by batch."""

    def top_predictions(self, text: str, k: int = 10) -> list[dict]:
        """The ``k`` most probable tokens for the one blank ``___`` of ``text``."""


class _LogitsAt:
    """What both kinds share: the model in eval mode, its body and LM head, logits at chosen positions."""

    def __init__(self, model, tokenizer, *, dtype="float32"):
        import torch

        from ..sources.models import max_tokens, resolve_dtype

        self.model, self.tokenizer = model.eval(), tokenizer
        self.max_length = max_tokens(tokenizer, model.config)
        self.device, self.dtype = model.get_input_embeddings().weight.device, resolve_dtype(dtype)
        self.body = model.base_model
        heads = [m for m in model.children() if m is not self.body and not isinstance(m, torch.nn.modules.loss._Loss)]
        self.head = heads[0] if len(heads) == 1 else None  # e.g. BERT's ``cls``, RoBERTa's ``lm_head``
        self.vocab_size = model.get_output_embeddings().weight.shape[0]

    def fitting(self, ids: list[int]) -> list[int]:
        """``ids`` when the model can take them in one input; else one error saying how long the text is."""
        if len(ids) > self.max_length:
            raise LexprobeError(f"the text is {len(ids)} tokens for this model; it takes at most {self.max_length} "
                                "(shorten the text around the blank)")
        return ids

    def __repr__(self) -> str:
        from pathlib import Path

        name = Path(str(getattr(self.model, "name_or_path", "") or type(self.model).__name__)).name
        return (f"<{type(self).__name__} {name}: vocabulary {self.vocab_size}, {self.device} "
                f"{str(self.dtype).replace('torch.', '')}>")

    def mask_logits(self, input_ids, attention_mask, mask_pos, inputs_embeds=None, *, full: bool = False,
                    rows=None, position_ids=None):
        """Logits (B, V) float32 on the CPU at each row's mask position (or at (``rows``, ``mask_pos``) pairs,
        several per row). ``full``: the whole-sequence logits, then the mask rows (the slow way, kept for the
        benchmark's baseline and for heads that are not one module). ``position_ids`` go to the model as they are.
        The tensors are moved to the model's device."""
        import torch

        from ..sources.models import inference_dtype

        on = lambda t: None if t is None else torch.as_tensor(t).to(self.device)  # noqa: E731
        rows = torch.arange(len(mask_pos)) if rows is None else rows
        rows, mask_pos = on(rows), on(mask_pos)
        with torch.inference_mode(), inference_dtype(self.device, self.dtype):
            kwargs = {"attention_mask": on(attention_mask)}
            kwargs.update({"inputs_embeds": on(inputs_embeds)} if inputs_embeds is not None
                          else {"input_ids": on(input_ids)})
            if position_ids is not None:
                kwargs["position_ids"] = on(position_ids)
            if full or self.head is None:
                return self.model(**kwargs).logits[rows, mask_pos].float().cpu()
            hidden = self.body(**kwargs)[0]
            return self.head(hidden[rows, mask_pos]).float().cpu()

    def padded_logits(self, queries: Sequence[Query], vectors: np.ndarray | None, *, batch_size: int,
                      full: bool = False, desc: str = "probe"):
        """Yield (query indices, their logits at the mask (n, V)) batch by batch: ``batch_size`` queries per
        forward pass, length-sorted, right-padded; ``vectors`` (one row per query) replace the keyword slots."""
        import torch

        pad = self.tokenizer.pad_token_id or 0
        for rows in bar(list(length_batches(queries, batch_size)), desc=desc, unit="batch"):
            width = max(len(queries[i].ids) for i in rows)
            ids = torch.full((len(rows), width), pad, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for j, i in enumerate(rows):
                ids[j, :len(queries[i].ids)] = torch.tensor(queries[i].ids)
                mask[j, :len(queries[i].ids)] = 1
            mask_pos = torch.tensor([queries[i].mask_pos for i in rows])
            slots = np.array([queries[i].slot for i in rows])
            embeds = None
            if (slots >= 0).any():
                from .ota import inputs_embeds_with

                embeds = inputs_embeds_with(self.model, ids, slots, vectors[rows])
            yield rows, self.mask_logits(ids, mask, mask_pos, embeds, full=full)


class MaskedLM(_LogitsAt):
    """A masked language model and its tokenizer, answering "which token fills the mask" in batches."""

    kind = "masked"

    def __init__(self, model, tokenizer, *, dtype="float32"):
        if tokenizer.mask_token_id is None:
            raise LexprobeError("the tokenizer has no mask token: not a masked language model")
        super().__init__(model, tokenizer, dtype=dtype)

    @classmethod
    def load(cls, name: str, *, device="auto", dtype="float32") -> "MaskedLM":
        from ..sources.models import load_masked_lm, load_tokenizer, resolve_dtype

        resolve_dtype(dtype)  # a bad dtype fails before the model loads
        return cls(load_masked_lm(name, device=device), load_tokenizer(name), dtype=dtype)

    def whole_words(self) -> dict[str, int]:
        """word -> token id for the vocabulary's whole-word tokens (the candidate targets T)."""
        from ..sources.models import whole_word_tokens

        words, ids = whole_word_tokens(self.tokenizer)
        return dict(zip(words, ids))

    def at_blank(self, target_ids: Sequence[int], pattern: str) -> Sequence[int]:
        """``target_ids`` as they are: a mask has one form."""
        return target_ids

    def encode(self, text: str) -> list[int]:
        return self.tokenizer(text)["input_ids"]

    def query(self, pattern: str, keyword: str, *, replace: bool) -> Query:
        return masked_query(self, pattern, keyword, replace=replace)

    def answer_logits(self, queries: Sequence[Query], vectors: np.ndarray | None, *, batch_size: int,
                      full: bool = False, desc: str = "probe"):
        """:meth:`padded_logits`."""
        return self.padded_logits(queries, vectors, batch_size=batch_size, full=full, desc=desc)

    def blank_probabilities(self, text: str):
        """The distribution over the vocabulary at the one blank ``___`` of ``text``."""
        import torch

        ids = self.fitting(self.encode(text.replace(BLANK, self.tokenizer.mask_token)))
        ids_t = torch.tensor([ids])
        mask_pos = torch.tensor([ids.index(self.tokenizer.mask_token_id)])
        logits = self.mask_logits(ids_t, torch.ones_like(ids_t), mask_pos)[0]
        return torch.softmax(logits, -1)

    def top_predictions(self, text: str, k: int = 10) -> list[dict]:
        """The ``k`` most probable tokens at the one blank ``___`` of ``text``."""
        probs = self.blank_probabilities(text)
        p, idx = probs.topk(k)
        tokens = self.tokenizer.convert_ids_to_tokens(idx.tolist())
        return [{"rank": r + 1, "token": t, "probability": float(pp)} for r, (t, pp) in enumerate(zip(tokens, p))]


class CausalLM(_LogitsAt):
    """A causal language model and its tokenizer, answering "which token comes next" in batches: the query's last
    position takes the place of the mask."""

    kind = "causal"

    def __init__(self, model, tokenizer, *, dtype="float32"):
        from ..sources.models import document_start_id

        super().__init__(model, tokenizer, dtype=dtype)
        self._vocab: dict[str, int] | None = None
        self._words: dict[int, str] | None = None
        self.start_id = document_start_id(tokenizer)  # once: it reads the whole vocabulary (26 ms for SmolLM2)
        self._special = set(tokenizer.all_special_ids)

    @classmethod
    def load(cls, name: str, *, device="auto", dtype="float32") -> "CausalLM":
        from ..sources.models import load_causal_lm, load_tokenizer, resolve_dtype

        resolve_dtype(dtype)
        return cls(load_causal_lm(name, device=device), load_tokenizer(name), dtype=dtype)

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

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` after the document start (:func:`lexprobe.sources.models.document_start_id`) or
        the tokenizer's own BOS, with no special token at the end."""
        ids = list(self.tokenizer(text)["input_ids"])
        while len(ids) > 1 and ids[-1] in self._special:
            ids.pop()
        return ([self.start_id] if self.start_id is not None else []) + ids

    def query(self, pattern: str, keyword: str, *, replace: bool) -> Query:
        return next_token_query(self, pattern, keyword, replace=replace)

    def answer_logits(self, queries: Sequence[Query], vectors: np.ndarray | None, *, batch_size: int,
                      full: bool = False, desc: str = "probe"):
        """Yield (query indices, their next-token logits (n, V)): prefix trees
        (:func:`lexprobe.rare_words.cloze_queries.tree_batches`), as many per forward pass as hold at most
        ``batch_size`` queries. ``full``: one query per row with the whole-sequence logits (:meth:`padded_logits`,
        the benchmark's baseline)."""
        import torch

        if full:
            yield from self.padded_logits(queries, vectors, batch_size=batch_size, full=True, desc=desc)
            return
        batches = tree_batches(queries, vectors, batch_size)
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
                    embeds = self.model.get_input_embeddings()(ids.to(self.device)).clone()
                    b, j, i = map(list, zip(*slots))
                    embeds[b, j] = torch.as_tensor(np.asarray(vectors)[i], dtype=dtype, device=self.device)
            rows = torch.tensor([b for b, t in enumerate(batch) for _ in t.ends])
            ends = torch.tensor([e for t in batch for e in t.ends])
            yield ([i for t in batch for i in t.queries],
                   self.mask_logits(ids, mask, ends, embeds, rows=rows, position_ids=positions))

    def top_predictions(self, text: str, k: int = 10) -> list[dict]:
        """The ``k`` most probable next tokens after the text before the blank of ``text``, shown as words (the
        token's text without its leading space); ``whole_word`` says whether the token is by itself that word in
        the form the blank asks for (a piece that continues a word, like "quat", is not)."""
        import torch

        query, spaced = split_at_blank(text)
        ids = self.fitting(self.encode(query))
        ids_t = torch.tensor([ids])
        logits = self.mask_logits(ids_t, torch.ones_like(ids_t), torch.tensor([len(ids) - 1]))[0]
        p, idx = torch.softmax(logits, -1).topk(k)
        out = []
        for r, (tid, pp) in enumerate(zip(idx.tolist(), p.tolist())):
            word = self.tokenizer.decode([tid]).strip()
            out.append({"rank": r + 1, "token": word, "probability": float(pp),
                        "whole_word": bool(word) and one_token_ids(self.tokenizer, [word], spaced)[0] == tid})
        return out


def load_lm(name: str, *, device="auto", dtype="float32") -> LanguageModel:
    """The model ``name`` as a :class:`MaskedLM` or, when its checkpoint is a causal LM (e.g. ``smollm2``), as a
    :class:`CausalLM` (the probing code takes either), on ``device`` with inference in ``dtype``."""
    from ..sources.models import model_kind

    return (CausalLM if model_kind(name) == "causal" else MaskedLM).load(name, device=device, dtype=dtype)


# ------------------------------------------------------------------------------------------ target vocabulary


def one_token_ids(tokenizer, words, spaced: bool) -> list[int | None]:
    """The token id of each word in its form at a blank (with the leading space when ``spaced``), None where that
    form is not exactly one vocabulary token."""
    special = set(tokenizer.all_special_ids)
    encoded = tokenizer([(" " if spaced else "") + w for w in words], add_special_tokens=False)["input_ids"]
    return [ids[0] if len(ids) == 1 and ids[0] not in special else None for ids in encoded]


def blank_vocabulary(tokenizer, forms: set[bool] | None = None) -> dict[str, int]:
    """word -> token id (its spaced form when the patterns use it) for the whole words that are one token in
    every form of ``forms`` (default :func:`lexprobe.rare_words.cloze_queries.blank_forms`): WNLaMPro's target
    vocabulary T for a causal model."""
    from ..sources.models import whole_word_tokens

    forms = sorted(blank_forms() if forms is None else forms, reverse=True)  # the spaced form first
    words = sorted({w for w in whole_word_tokens(tokenizer)[0] if w and w == w.strip()})
    found = [one_token_ids(tokenizer, words, spaced) for spaced in forms]
    return {w: ids[0] for w, ids in zip(words, zip(*found)) if all(i is not None for i in ids)}


def target_words(model: str) -> list[str]:
    """WNLaMPro's target vocabulary T for the model ``model``: its whole-word tokens for a masked model, the words
    that are one token in the form every blank gives them (:func:`blank_vocabulary`) for a causal one."""
    from ..sources.models import load_tokenizer, model_kind
    from ..sources.models import whole_word_tokens

    tokenizer = load_tokenizer(model)
    if model_kind(model) == "causal":
        return list(blank_vocabulary(tokenizer))
    return whole_word_tokens(tokenizer)[0]
