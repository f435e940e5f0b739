"""Contextual word vectors from any Hugging Face encoder: subword pooling, layer choice, length-sorted batches.

:class:`TokenEncoder` embeds pre-split sentences (lists of words) and returns one vector per target span
(a word or several consecutive words). Each sentence goes through the model once, whatever number of targets
it holds. How:

- Tokenise all sentences at once (fast tokenizer, ``is_split_into_words``), keeping each subword's word index.
- Sort sentences by subword length and cut batches of at most ``batch_tokens`` padded tokens (and at most
  ``max_batch`` sentences), with attention masks, so little compute goes into padding.
- Run the model under ``torch.inference_mode`` with all hidden states; a *layer* is an index into them:
  0 = the embedding output, 1..L = the transformer layers (default: L, the last). Several layers are averaged.
- A target's vector pools the vectors of all subwords of all its words: ``mean`` (default), ``first`` (first
  subword of the first word) or ``last`` (last subword of the last word). Pooling is one gather + index_add
  per batch, no loop over targets.
- Sentences longer than the model's limit (``max_length`` subwords, specials included; a smaller ``max_length``
  caps it, to bound a large model's cost on long sentences) are split into
  overlapping windows (half a window apart, each with the model's special tokens), and a target is read from
  the window that gives it the most context on its tighter side, so every target keeps at least a quarter
  window of context each way where the sentence has it. Only a target longer than a window gets no vector.
  Both are counted (:class:`EncodeStats`) and reported.
- ``device`` (:func:`lexprobe.sources.models.resolve_device`; default ``auto``: a GPU when torch sees one) holds the
  model and every tensor of a batch; ``dtype="bfloat16"`` runs the model under bfloat16 autocast
  (:func:`lexprobe.sources.models.inference_dtype`); vectors come back float32 either way.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..core.cores import usable_cores
from ..core.errors import LexprobeError
from .models import (DEFAULT_ENCODER, inference_dtype, load_encoder, max_tokens, resolve_device, resolve_dtype,
                     resolve_model)
from ..core.progress import bar

POOLINGS = ("mean", "first", "last")
LOST_PAST_LIMIT = "longer than the model's length limit"
LOST_NO_SUBWORDS = "no subword tokens"
DEFAULT_BATCH_TOKENS = 512
DEFAULT_MAX_BATCH = 256
_BIG = np.int64(1 << 32)  # key = sentence * _BIG + word index, for vectorised span lookup


def parse_layers(layer: int | None = None, layers: str | None = None) -> tuple[int, ...] | None:
    """``--layer 6`` -> (6,); ``--layers 3-6`` -> (3, 4, 5, 6); ``--layers 2,4`` -> (2, 4); neither -> None
    (the model's last layer). Negative numbers count from the end (-1 = last)."""
    if layer is not None and layers:
        raise LexprobeError("give --layer or --layers, not both")
    if layer is not None:
        return (int(layer),)
    if not layers:
        return None
    out: list[int] = []
    for part in layers.split(","):
        m = re.fullmatch(r"\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?", part)
        if not m:
            raise LexprobeError(f"bad layer list {layers!r}: use N, A-B or a comma list like 2,4")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if b < a:
            raise LexprobeError(f"bad layer range {part.strip()!r}: the end is before the start")
        out.extend(range(a, b + 1))
    return tuple(dict.fromkeys(out))


def default_threads() -> int:
    """Torch threads: the cores this process may use (its CPU affinity). On a machine shared with other busy
    processes, pass ``--threads 1``: threads beyond the idle cores spin-wait on each other (measured here under
    load 9 on 2 cores: 2 threads took twice the wall time of 1 thread)."""
    return usable_cores()


@dataclass
class EncodeStats:
    """What one :meth:`TokenEncoder.encode` call did."""

    sentences: int = 0
    subword_tokens: int = 0       # real (unpadded) tokens, specials included
    padded_tokens: int = 0        # tokens the model computed, padding included
    batches: int = 0
    split_sentences: int = 0      # longer than the model's limit: encoded in overlapping windows
    windows: int = 0              # windows encoded for them
    lost_targets: dict = field(default_factory=dict)  # reason -> count (past the cut, no subwords)
    seconds: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return self.subword_tokens / self.seconds if self.seconds else 0.0

    def add(self, other: "EncodeStats") -> None:
        """Count in the work of another call (blocks of one corpus encoded apart, e.g. by Ray workers);
        ``seconds`` sums the calls' own times."""
        for name in ("sentences", "subword_tokens", "padded_tokens", "batches", "split_sentences", "windows",
                     "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for reason, n in other.lost_targets.items():
            self.lost_targets[reason] = self.lost_targets.get(reason, 0) + n

    def as_dict(self) -> dict:
        return {"sentences": self.sentences, "subword_tokens": self.subword_tokens,
                "padded_tokens": self.padded_tokens, "batches": self.batches,
                "split_sentences": self.split_sentences, "windows": self.windows,
                "lost_targets": dict(self.lost_targets),
                "seconds": round(self.seconds, 3), "tokens_per_s": round(self.tokens_per_s, 1)}


def _drop_layers_above(model, top: int) -> None:
    """Cut the encoder's stack of transformer layers after layer ``top`` (the highest one pooled): the layers
    above it would only cost time. The stack is found as the module list holding ``num_hidden_layers`` blocks
    (``encoder.layer`` in BERT-like models); a model without one is left whole. A decoder with a final ``norm``
    (Llama, SmolLM2) reports its last hidden state after that norm, so one layer more is kept: hidden state ``top``
    stays the raw output of layer ``top``, as in the whole model."""
    import torch

    n = int(getattr(model.config, "num_hidden_layers", 0) or 0)
    if isinstance(getattr(model, "norm", None), torch.nn.Module):
        top += 1
    if top >= n:
        return
    stacks = [m for m in model.modules() if isinstance(m, torch.nn.ModuleList) and len(m) == n]
    if len(stacks) == 1:
        del stacks[0][top:]


class TokenEncoder:
    """A loaded encoder with fixed settings: ``encode(sentences, spans)`` -> one vector per span."""

    def __init__(self, model: str = DEFAULT_ENCODER, *, layers: Sequence[int] | None = None, pooling: str = "mean",
                 batch_tokens: int = DEFAULT_BATCH_TOKENS, max_batch: int = DEFAULT_MAX_BATCH,
                 threads: int | None = None, device="auto", dtype="float32", max_length: int | None = None):
        import torch

        if pooling not in POOLINGS:
            raise LexprobeError(f"unknown pooling {pooling!r} (choose from {', '.join(POOLINGS)})")
        if batch_tokens < 1 or max_batch < 1:
            raise LexprobeError("batch sizes must be at least 1")
        if max_length is not None and max_length < 8:
            raise LexprobeError(f"max_length must be at least 8 subwords, not {max_length}")
        self.device, self.dtype = resolve_device(device), resolve_dtype(dtype)
        torch.set_num_threads(threads or default_threads())
        self.name, self.pooling = model, pooling
        self.batch_tokens, self.max_batch = batch_tokens, max_batch
        self.tokenizer = _load_word_tokenizer(model)
        self.model = load_encoder(model, device=self.device)
        config = self.model.config
        self.num_layers = int(getattr(config, "num_hidden_layers", 0) or 0)
        self.dim = int(config.hidden_size)
        n_states = self.num_layers + 1
        chosen = tuple(layers) if layers else (self.num_layers,)
        bad = [l for l in chosen if not -n_states <= l < n_states]
        if bad:
            raise LexprobeError(f"{model}: no layer {bad[0]} (hidden states 0..{self.num_layers}: 0 = embeddings)")
        self.layers = tuple(sorted({l % n_states for l in chosen}))
        _drop_layers_above(self.model, self.layers[-1])
        limit = max_tokens(self.tokenizer, config)
        self.max_length = min(limit, max_length) if max_length else limit

    def __repr__(self) -> str:
        return (f"<TokenEncoder {self.name}: layers {list(self.layers)}, {self.pooling} pooling, dim {self.dim}, "
                f"{self.device} {str(self.dtype).replace('torch.', '')}>")

    @property
    def parameters(self) -> int:
        """Parameters a token is multiplied through: all but the embedding tables and the pooler head
        (a forward pass costs about 2 FLOPs per such parameter per token, attention scores aside)."""
        import torch

        skip = {id(p) for m in self.model.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters()}
        pooler = getattr(self.model, "pooler", None)
        if pooler is not None:
            skip |= {id(p) for p in pooler.parameters()}
        return int(sum(p.numel() for p in self.model.parameters() if id(p) not in skip))

    def settings(self) -> dict:
        """What an index records about how its vectors were made (``dtype`` only when not float32, so that the
        settings of float32 indexes read as they always did)."""
        return {"model": self.name, "model_path": resolve_model(self.name), "layers": list(self.layers),
                "pooling": self.pooling, "dim": self.dim, "max_length": self.max_length,
                "num_layers": self.num_layers, **({"dtype": self.dtype_name} if self.dtype_name != "float32" else {})}

    @property
    def dtype_name(self) -> str:
        return str(self.dtype).removeprefix("torch.")

    def tokenize(self, sentences: Sequence[Sequence[str]]) -> tuple[list[list[int]], list[np.ndarray]]:
        """Subword ids and word index per subword (-1 for specials) of each whole sentence (no truncation: long
        sentences are split into windows by :meth:`encode`)."""
        enc = self.tokenizer([list(s) for s in sentences], is_split_into_words=True, add_special_tokens=True,
                             truncation=False, verbose=False)
        ids = enc["input_ids"]
        word_ids = [np.array([-1 if w is None else w for w in e.word_ids], dtype=np.int64) for e in enc.encodings]
        return ids, word_ids

    def _windows(self, ids: list[list[int]], word_ids: list[np.ndarray], t_sent: np.ndarray, tok_lo: np.ndarray,
                 tok_hi: np.ndarray, found: np.ndarray, stats: EncodeStats):
        """The sequences the model runs: each sentence that fits, and for a longer one the windows its targets
        are read from. Returns (sequences, target's sequence, tok_lo and tok_hi in it, found)."""
        long = np.array([len(x) > self.max_length for x in ids], dtype=bool)
        seqs = [None if too_long else x for x, too_long in zip(ids, long)]
        t_seq, lo, hi = t_sent.copy(), tok_lo.copy(), tok_hi.copy()
        stats.split_sentences = int(long.sum())
        by_sentence: dict[int, list[int]] = {}
        for t in np.flatnonzero(long[t_sent] & found):
            by_sentence.setdefault(int(t_sent[t]), []).append(int(t))
        opened: dict[tuple[int, int], int] = {}
        for s, targets in by_sentence.items():
            content = np.flatnonzero(word_ids[s] >= 0)
            first, last = int(content[0]), int(content[-1])  # specials before and after the words stay
            width = self.max_length - first - (len(ids[s]) - 1 - last)  # content tokens per window
            n = last - first + 1
            step = max(1, width // 2)
            starts = np.unique(np.minimum(np.arange(0, max(n - width, 0) + step, step), max(n - width, 0)))
            for t in targets:
                a, b = tok_lo[t] - first, tok_hi[t] - first  # the target's content positions
                fits = starts[(starts <= a) & (b < starts + width)]
                if not len(fits):
                    found[t] = False  # longer than a window
                    continue
                start = int(fits[np.argmax(np.minimum(a - fits, fits + width - 1 - b))])
                if (s, start) not in opened:
                    opened[(s, start)] = len(seqs)
                    seqs.append(ids[s][:first] + ids[s][first + start:first + start + width] + ids[s][last + 1:])
                t_seq[t], lo[t], hi[t] = opened[(s, start)], tok_lo[t] - start, tok_hi[t] - start
        stats.windows = len(opened)
        return seqs, t_seq, lo, hi, found

    def encode(self, sentences: Sequence[Sequence[str]], spans: Sequence[Sequence[tuple[int, int]]], *,
               desc: str = "encode") -> tuple[np.ndarray, np.ndarray, EncodeStats]:
        """Vectors of the target spans ``(position, length)`` of each sentence, in sentence then span order.

        Returns ``(vectors (n, dim) float32, ok (n,) bool, stats)``; rows with ``ok`` False (a target longer
        than the model's length limit, or a word the tokenizer gives no subwords) are zero.
        """
        import time

        import torch

        if len(spans) != len(sentences):
            raise LexprobeError(f"{len(spans)} span lists for {len(sentences)} sentences")
        t0 = time.perf_counter()
        stats = EncodeStats(sentences=len(sentences))
        ids, word_ids = self.tokenize(sentences)

        # every target: its sentence, and first/last subword position, found by one searchsorted
        t_sent = np.repeat(np.arange(len(spans), dtype=np.int64), [len(s) for s in spans])
        flat = np.array([p for s in spans for p in s], dtype=np.int64).reshape(-1, 2)
        n_targets = len(flat)
        out = np.zeros((n_targets, self.dim), dtype=np.float32)
        ok = np.zeros(n_targets, dtype=bool)
        if n_targets == 0:
            stats.seconds = time.perf_counter() - t0
            return out, ok, stats
        pos = np.concatenate([np.flatnonzero(w >= 0) for w in word_ids]) if word_ids else np.zeros(0, np.int64)
        keys = np.concatenate([s * _BIG + w[w >= 0] for s, w in enumerate(word_ids)]) if word_ids else pos
        first_word, last_word = flat[:, 0], flat[:, 0] + flat[:, 1] - 1
        n_words = np.array([len(s) for s in sentences], dtype=np.int64)
        outside = (first_word < 0) | (flat[:, 1] < 1) | (last_word >= n_words[t_sent])
        if outside.any():
            i = int(np.argmax(outside))
            raise LexprobeError(f"target span (position {flat[i, 0]}, length {flat[i, 1]}) lies outside sentence "
                                f"{t_sent[i]} of {n_words[t_sent[i]]} words")
        lo = np.searchsorted(keys, t_sent * _BIG + first_word, side="left")
        hi = np.searchsorted(keys, t_sent * _BIG + last_word, side="right") - 1
        found = (lo <= hi) & (lo < len(keys))
        tok_lo = np.where(found, pos[np.minimum(lo, len(pos) - 1)], 0)
        tok_hi = np.where(found, pos[np.clip(hi, 0, len(pos) - 1)], 0)
        no_subwords = int((~found).sum())
        seqs, t_seq, tok_lo, tok_hi, found = self._windows(ids, word_ids, t_sent, tok_lo, tok_hi, found, stats)
        too_long = int((~found).sum()) - no_subwords
        lost = {LOST_PAST_LIMIT: too_long, LOST_NO_SUBWORDS: no_subwords}
        stats.lost_targets = {k: v for k, v in lost.items() if v}
        if too_long:
            warnings.warn(f"{too_long} targets are longer than the model's {self.max_length}-subword limit and got "
                          "no vector", stacklevel=2)

        lengths = np.array([0 if x is None else len(x) for x in seqs], dtype=np.int64)
        stats.subword_tokens = int(lengths.sum())
        live = np.array([i for i, x in enumerate(seqs) if x is not None], dtype=np.int64)
        batches = [live[b] for b in _length_batches(lengths[live], self.batch_tokens, self.max_batch)]
        seq_batch = np.zeros(len(seqs), dtype=np.int64)  # a long sentence's own slot is never read
        seq_row = np.zeros(len(seqs), dtype=np.int64)
        for b, members in enumerate(batches):
            seq_batch[members] = b
            seq_row[members] = np.arange(len(members))
        target_order = np.argsort(seq_batch[t_seq], kind="stable")
        target_bounds = np.searchsorted(seq_batch[t_seq][target_order], np.arange(len(batches) + 1))
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        layers = list(self.layers)
        progress = bar(total=stats.subword_tokens, desc=desc, unit="tok", unit_scale=True)
        with torch.inference_mode(), inference_dtype(self.device, self.dtype):
            for b, members in enumerate(batches):
                width = int(lengths[members].max())
                input_ids = np.full((len(members), width), pad_id, dtype=np.int64)
                mask = np.zeros((len(members), width), dtype=np.int64)
                for row, s in enumerate(members):
                    input_ids[row, : lengths[s]] = seqs[s]
                    mask[row, : lengths[s]] = 1
                stats.padded_tokens += input_ids.size
                stats.batches += 1
                targets = target_order[target_bounds[b]:target_bounds[b + 1]]
                targets = targets[found[targets]]
                hidden = self._hidden(torch.from_numpy(input_ids).to(self.device),
                                      torch.from_numpy(mask).to(self.device), layers)
                if len(targets):
                    out[targets] = self._pool(hidden, seq_row[t_seq[targets]], tok_lo[targets], tok_hi[targets])
                    ok[targets] = True
                progress.update(int(lengths[members].sum()))
        progress.close()
        stats.seconds = time.perf_counter() - t0
        return out, ok, stats

    def _hidden(self, input_ids, mask, layers: list[int]):
        """(B, T, d) hidden states of the chosen layer, or the mean of the chosen layers."""
        import torch

        result = self.model(input_ids=input_ids, attention_mask=mask, output_hidden_states=True)
        states = result.hidden_states
        if len(layers) == 1:
            return states[layers[0]]
        total = states[layers[0]].to(torch.float32, copy=True)
        for l in layers[1:]:
            total += states[l]
        return total / len(layers)

    def _pool(self, hidden, rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Pool subword vectors ``hidden[row, lo..hi]`` per target: mean, first (lo) or last (hi)."""
        import torch

        B, T, d = hidden.shape
        flat = hidden.reshape(B * T, d).float()  # bfloat16 states are pooled in float32
        on = lambda a: torch.from_numpy(a).to(flat.device)  # noqa: E731
        if self.pooling == "first":
            return flat[on(rows * T + lo)].cpu().numpy()
        if self.pooling == "last":
            return flat[on(rows * T + hi)].cpu().numpy()
        counts = hi - lo + 1
        owner = np.repeat(np.arange(len(rows)), counts)
        offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        index = np.repeat(rows * T + lo, counts) + offsets
        summed = torch.zeros((len(rows), d), dtype=flat.dtype, device=flat.device)
        summed.index_add_(0, on(owner), flat[on(index)])
        return (summed / on(counts).to(flat.dtype)[:, None]).cpu().numpy()


def _length_batches(lengths: np.ndarray, batch_tokens: int, max_batch: int) -> list[np.ndarray]:
    """Sentence indices grouped into batches in order of length; each batch's padded size stays within
    ``batch_tokens`` (a single longer sentence gets a batch of its own) and ``max_batch`` sentences."""
    order = np.argsort(lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        end = start + 1
        # lengths grow along ``order``: the padded size of [start, end) is (end - start) * lengths[order[end-1]]
        while end < len(order) and end - start < max_batch and (end + 1 - start) * lengths[order[end]] <= batch_tokens:
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


def _load_word_tokenizer(name: str):
    """A fast tokenizer that accepts pre-split words (byte-level BPE ones need ``add_prefix_space``)."""
    from .models import load_tokenizer

    tokenizer = load_tokenizer(name)
    if not getattr(tokenizer, "is_fast", False):
        raise LexprobeError(f"{name}: needs a fast (Rust) tokenizer to map subwords to words")
    try:
        tokenizer([["a", "b"]], is_split_into_words=True)
    except Exception:  # e.g. RoBERTa/GPT-2: "instantiate with add_prefix_space=True to use pretokenized inputs"
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(resolve_model(name), add_prefix_space=True)
    return tokenizer
