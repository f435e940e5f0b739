"""One-token approximation (OTA; Schick & Schütze, "Rare words", section 4): one input embedding ``v`` for a
word that the tokenizer splits into several subword tokens, chosen so that the model's hidden states of the
*context* tokens around the word are as close as possible to those it produces with the word's subwords::

    OTA(w) = argmin_v  sum over contexts (l, r), layers k, context positions i of
             || h~_i^k(l, e(t(w)), r) - h~_i^k(l, [v], r) ||^2

Definitions used here (the paper's text where it is explicit):

- Context positions are the left and the right context tokens only, never the word's own slots. Positions
  after the word shift with its length in the target sequence, so both sequences are gathered by the place
  of each context token (left tokens at 0..a-1, right tokens right after the word).
- ``contexts="static"``: left ``[CLS]``, right ``. [SEP]``. ``contexts="random"``: left ``[CLS] t_l``, right
  ``t_r . [SEP]`` with t_l, t_r drawn uniformly from the vocabulary tokens that are whole words made of ASCII
  letters (the paper's "tokens that represent an actual word"), a new draw every iteration. Each word's draws
  come from its own generator seeded with ``(seed, crc32(word))``: a word gets the same numbers whatever batch
  it is in, so batched and one-at-a-time runs agree.
- ``layers="all"`` (default, the paper's formula: layers 1..L, i.e. ``hidden_states[1:]``; the embedding
  output at context positions does not depend on v). ``"all-but-last"`` is what the authors' code does;
  a list of 1-based layer numbers picks any.
- Adam (beta 0.9/0.999, eps 1e-8) on v only; the model is frozen (parameters get no gradient and are not
  changed) and in eval mode; attention masks always. Many words are optimised together: the summed loss of
  independent words has exactly each word's gradient. Words are grouped by subword count (sorted), the target
  sequences padded and masked.
- ``distance`` (the adaptation to causal LMs; ``"auto"``: ``"raw"`` for masked LMs, ``"normalised"`` for
  causal ones). ``"raw"`` is the paper's squared distance of the hidden states. ``"normalised"`` divides each
  hidden state (target and approximation alike) by its root mean square over the hidden dimensions before the
  squared distance, i.e. compares the states as the next layer's RMSNorm/LayerNorm sees them, scale removed.
  Why: in a causal LM only the right context sees the word, and a few dimensions of the residual stream carry
  massive activations (SmolLM2), so the raw distance is almost entirely the mismatch of those coordinates' size
  and its gradient reaches a handful of input coordinates. Masked LMs keep the paper's objective (it recovers
  there). Measurements: ``benchmarks/ota_recovery.md`` ("SmolLM2: which distance").
- Early stop (``patience``): every 50 iterations each word's mean loss over the last 50 iterations is compared
  with its best so far; a word stops when it has not improved by the relative ``tol`` for ``patience``
  iterations. ``patience=None`` runs every word for ``iterations``.
- Defaults (``DEFAULTS``) come from the speed-to-quality tables in ``benchmarks/ota_recovery.md``: random
  contexts (they beat static, as in the paper), ``init="mean"`` and ``lr=3e-3`` (far closer than the paper's
  zeros and 1e-3 at a fraction of the iterations), at most 1,000 iterations with an early stop after 300
  iterations without a 1% improvement. The paper's setting is ``init="zeros", lr=1e-3, iterations=4000,
  patience=None``.

``model`` is any BERT- or RoBERTa-like ``AutoModel`` or causal LM (GPT-2, Llama; or a model with a head, e.g.
``...ForMaskedLM``: its ``base_model`` is used); vectors live in its input-embedding space. OTA runs on the model's
device (load it with ``device=``: :func:`lexprobe.sources.models.load_encoder`), always in float32.
"""

from __future__ import annotations

import contextlib
import zlib
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..core.errors import LexprobeError
from ..core.progress import bar

CONTEXTS = ("random", "static")
INITS = ("zeros", "mean")
DISTANCES = ("auto", "raw", "normalised")
BASELINES = ("first", "last", "avg")
WINDOW = 50  # iterations per loss window (early stop, final loss)
DEFAULTS = {"iterations": 1000, "contexts": "random", "init": "mean", "lr": 3e-3, "layers": "all",
            "patience": 300, "tol": 0.01, "distance": "auto"}


@dataclass
class OTAResult:
    """What :func:`optimise` returns; rows follow the input order."""

    vectors: np.ndarray          # (n, hidden) float32: the approximations
    final_loss: np.ndarray       # (n,) mean loss over each word's last WINDOW iterations
    iterations: np.ndarray       # (n,) iterations run (fewer than asked when stopped early)
    loss_history: np.ndarray     # (n, iterations) loss of each iteration; NaN after a word stopped
    snapshots: np.ndarray | None  # (len(snapshot_at), n, hidden): vectors after those iterations
    snapshot_at: list[int]


# ---------------------------------------------------------------------------------------------- tokens


def word_pieces(tokenizer, words: Sequence[str]) -> list[list[int]]:
    """Subword token ids of each word as it is tokenized inside a sentence (after a space)."""
    bad = [w for w in words if not isinstance(w, str) or not w.strip()]
    if bad:
        raise LexprobeError(f"empty word in the list of words to approximate ({len(bad)} empty)")
    ids = tokenizer([" " + w.strip() for w in words], add_special_tokens=False)["input_ids"]
    unk = tokenizer.unk_token_id
    for w, p in zip(words, ids):
        if not p:
            raise LexprobeError(f"word {w!r} has no tokens for this tokenizer")
        if unk is not None and unk in p:
            raise LexprobeError(f"word {w!r} tokenizes to the unknown token {tokenizer.unk_token!r}")
    return [list(p) for p in ids]


def context_vocabulary(tokenizer) -> np.ndarray:
    """Token ids the random contexts draw from: whole-word vocabulary tokens made of ASCII letters."""
    from ..sources.models import whole_word_tokens

    words, ids = whole_word_tokens(tokenizer)
    keep = [t for w, t in zip(words, ids) if w.isascii() and w.isalpha()]
    if not keep:
        raise LexprobeError("the tokenizer has no whole-word alphabetic tokens to draw random contexts from")
    return np.asarray(keep, dtype=np.int64)


def _special_ids(tokenizer) -> tuple[int, int, int, int]:
    """(cls, sep, period, pad) token ids."""
    from ..sources.models import document_start_id

    cls = tokenizer.cls_token_id
    if cls is None:  # a causal LM: the token its documents start with, else its BOS
        cls = document_start_id(tokenizer)
        cls = cls if cls is not None else tokenizer.bos_token_id
    sep = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    period = tokenizer(".", add_special_tokens=False)["input_ids"]
    if cls is None or sep is None or len(period) != 1:
        raise LexprobeError("OTA needs a tokenizer with [CLS]/<s>, [SEP]/</s> and a single '.' token")
    return cls, sep, period[0], pad


def _encoder(model):
    return getattr(model, "base_model", model)


def _embedding_matrix(model):
    return _encoder(model).get_input_embeddings().weight


@contextlib.contextmanager
def _frozen(model):
    """Eval mode and no parameter gradients for the duration; the flags are restored afterwards."""
    params = list(model.parameters())
    flags = [p.requires_grad for p in params]
    training = model.training
    model.eval()
    for p in params:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, f in zip(params, flags):
            p.requires_grad_(f)
        model.train(training)


def _layer_indices(layers, n_layers: int) -> list[int]:
    """Indices into ``hidden_states`` (0 = embedding output) of the layers that enter the loss."""
    if layers == "all":
        return list(range(1, n_layers + 1))
    if layers == "all-but-last":
        return list(range(1, max(n_layers, 2)))
    if isinstance(layers, str):
        try:
            layers = [int(x) for x in layers.split(",") if x.strip()]
        except ValueError:
            raise LexprobeError(f"layers must be 'all', 'all-but-last' or layer numbers like '1,2,3', "
                                f"not {layers!r}") from None
    out = sorted(set(int(x) for x in layers))
    if not out or out[0] < 1 or out[-1] > n_layers:
        raise LexprobeError(f"layers {layers!r}: the model has layers 1..{n_layers}")
    return out


# ------------------------------------------------------------------------------------------- optimiser


def optimise(model, tokenizer, pieces: Sequence[Sequence[int]], init: np.ndarray, *, keys: Sequence[str],
             iterations: int = DEFAULTS["iterations"], contexts: str = DEFAULTS["contexts"],
             lr: float | np.ndarray = DEFAULTS["lr"], layers=DEFAULTS["layers"], seed: int = 0,
             batch_size: int = 64, patience: int | None = DEFAULTS["patience"], tol: float = DEFAULTS["tol"],
             distance: str = DEFAULTS["distance"], snapshot_every: int | None = None, desc: str = "OTA",
             batch_threads: int = 1, until: Callable[[int, np.ndarray], bool] | None = None) -> OTAResult:
    """OTA of words given as subword ``pieces``, starting from ``init`` (n, hidden).

    ``keys`` (one string per row, usually the word) seed each row's random contexts; ``lr`` may be one rate
    per row. ``snapshot_every``: keep the vectors at iteration 0 and every that many iterations.
    ``batch_threads`` > 1: that many batches are optimised at once, in threads of one torch thread each (the same
    batches, each computing what it computes alone: the same numbers; for CPUs where one batch's small matrix
    products keep one core busy but not several).
    ``until(iteration, vectors)``, called at every snapshot with all rows' vectors, ends the run when it returns
    True (the recovery check stops past its curve's minimum); the snapshots end there. It needs the rows in one
    batch.
    """
    import torch

    n = len(pieces)
    if contexts not in CONTEXTS:
        raise LexprobeError(f"contexts must be one of {', '.join(CONTEXTS)}, not {contexts!r}")
    if iterations < 1 or batch_size < 1 or batch_threads < 1:
        raise LexprobeError("iterations, batch size and batch threads must be positive")
    if len(keys) != n or np.shape(init)[0] != n:
        raise ValueError("pieces, init and keys must have one row per word")
    if until is not None and (n > batch_size or not snapshot_every):
        raise LexprobeError("a stopping rule (until) needs every word in one batch and snapshots")
    encoder = _encoder(model)
    emb = _embedding_matrix(model)
    device, hidden = emb.device, emb.shape[1]
    layer_idx = _layer_indices(layers, encoder.config.num_hidden_layers)
    cls, sep, period, pad = _special_ids(tokenizer)
    normalise = resolve_distance(distance, model) == "normalised"
    vocab = torch.as_tensor(context_vocabulary(tokenizer), device=device) if contexts == "random" else None
    rates = np.broadcast_to(np.asarray(lr, dtype=np.float32), (n,))
    init = np.asarray(init, dtype=np.float32)
    snap_at = list(range(0, iterations + 1, snapshot_every)) if snapshot_every else []
    result = OTAResult(np.empty((n, hidden), np.float32), np.empty(n, np.float32), np.empty(n, np.int64),
                       np.full((n, iterations), np.nan, np.float32),
                       np.empty((len(snap_at), n, hidden), np.float32) if snap_at else None, snap_at)
    order = sorted(range(n), key=lambda i: len(pieces[i]))  # group by subword count: little padding
    # counted in word-iterations, so that the bar moves inside a batch (a batch often holds every word); a
    # word that stops early has its remaining iterations counted when its batch ends
    progress = _Locked(bar(total=n * iterations, desc=desc, unit="step"))

    def one_batch(start: int):
        rows = np.asarray(order[start:start + batch_size])
        draws = None
        if vocab is not None:  # (b, iterations, 2) indices into vocab, per word from its own generator
            draws = torch.as_tensor(np.stack([np.random.default_rng([seed, zlib.crc32(keys[i].encode())])
                                              .integers(0, len(vocab), size=(iterations, 2)) for i in rows]),
                                    device=device)
        batch = _Batch(encoder, emb, [pieces[i] for i in rows], layer_idx, (cls, sep, period, pad),
                       random=vocab is not None, device=device, normalise=normalise)
        out = batch.run(torch.as_tensor(init[rows], device=device), torch.as_tensor(rates[rows], device=device),
                        iterations, vocab, draws, patience, tol, snap_at, progress,
                        None if until is None else (lambda at, vecs: until(at, vecs[np.argsort(rows)])))
        progress.update(int((iterations - out[2]).sum()))
        return rows, out

    starts = range(0, n, batch_size)
    at_once = min(batch_threads, len(starts))
    with _frozen(model), contextlib.closing(progress), _threads(at_once) as pool:
        for rows, (vecs, hist, its, snaps) in (pool.map(one_batch, starts) if pool else map(one_batch, starts)):
            result.vectors[rows] = vecs
            result.loss_history[rows] = hist
            result.iterations[rows] = its
            if snaps is not None:
                result.snapshots[:, rows] = snaps
    if until is not None:  # the run ended where the rule said: no snapshots after it
        kept = [at for at in snap_at if at <= result.iterations.max()]
        result.snapshot_at, result.snapshots = kept, result.snapshots[:len(kept)]
        result.loss_history = result.loss_history[:, :int(result.iterations.max())]
    tail = np.arange(result.loss_history.shape[1])[None, :]
    window = (tail < result.iterations[:, None]) & (tail >= result.iterations[:, None] - WINDOW)
    result.final_loss[:] = np.where(window, result.loss_history, 0).sum(1) / window.sum(1)
    return result


@contextlib.contextmanager
def _threads(at_once: int):
    """A pool of ``at_once`` threads on one torch thread each (None for one: the batches run here)."""
    if at_once <= 1:
        yield None
        return
    from concurrent.futures import ThreadPoolExecutor

    from ..sources.models import torch_threads

    with torch_threads(1), ThreadPoolExecutor(at_once) as pool:
        yield pool


class _Locked:
    """A progress bar that threads may update at once."""

    def __init__(self, progress):
        import threading

        self.progress, self.lock = progress, threading.Lock()

    def update(self, n: int) -> None:
        with self.lock:
            self.progress.update(n)

    def set_postfix(self, **kwargs) -> None:
        with self.lock:
            self.progress.set_postfix(**kwargs)

    def close(self) -> None:
        self.progress.close()


class _Batch:
    """One batch of words: the fixed token layout of the target and approximation sequences."""

    def __init__(self, encoder, emb, pieces, layer_idx, special, *, random: bool, device, normalise: bool = False):
        import torch

        cls, sep, period, pad = special
        self.encoder, self.emb, self.layer_idx, self.random = encoder, emb, layer_idx, random
        self.normalise = normalise
        b = len(pieces)
        self.a, self.r = (2, 3) if random else (1, 2)  # left: [CLS] (t_l); right: (t_r) . [SEP]
        a, r = self.a, self.r
        self.counts = torch.tensor([len(p) for p in pieces], device=device)
        width = a + int(self.counts.max()) + r
        right = [period, sep] if not random else [pad, period, sep]  # pad: t_r's place, filled per iteration
        target = torch.full((b, width), pad, dtype=torch.long)
        for j, p in enumerate(pieces):
            target[j, :a + len(p) + r] = torch.tensor([cls] + [pad] * (a - 1) + list(p) + right)
        self.target = target.to(device)
        self.target_mask = (torch.arange(width, device=device)[None] < (a + r + self.counts)[:, None]).long()
        self.approx = torch.tensor([cls] + [pad] * (a - 1) + [pad] + right, device=device).repeat(b, 1)
        # where the context tokens sit: target (b, a + r) shifts with the word's length; approximation fixed
        self.target_pos = torch.cat([torch.arange(a, device=device).expand(b, a),
                                     a + self.counts[:, None] + torch.arange(r, device=device)], 1)
        self.approx_pos = torch.cat([torch.arange(a), a + 1 + torch.arange(r)]).to(device)

    def _hidden(self, ids=None, embeds=None, mask=None):
        import torch

        out = self.encoder(input_ids=ids, inputs_embeds=embeds, attention_mask=mask, output_hidden_states=True)
        return torch.stack([out.hidden_states[k] for k in self.layer_idx], 1)  # (b, layers, T, hidden)

    def _set_context(self, rows, tl_tr):
        """Token ids of both sequences for the active ``rows``, with this iteration's t_l, t_r."""
        import torch

        target, approx = self.target[rows].clone(), self.approx[rows].clone()
        if tl_tr is not None:
            target[:, 1] = approx[:, 1] = tl_tr[:, 0]
            target[torch.arange(len(rows), device=target.device), self.a + self.counts[rows]] = tl_tr[:, 1]
            approx[:, self.a + 1] = tl_tr[:, 1]
        return target, approx

    def _targets(self, rows, target):
        import torch

        with torch.no_grad():
            h = self._hidden(ids=target, mask=self.target_mask[rows])
            idx = self.target_pos[rows][:, None, :, None].expand(-1, h.shape[1], -1, h.shape[3])
            h = h.gather(2, idx)  # (b, layers, a + r, hidden)
            return rms_normalised(h) if self.normalise else h

    def loss(self, rows, v, tl_tr, cached_targets=None):
        """Per-word loss (b,) of approximations ``v`` (b, hidden) for the active ``rows``."""
        import torch

        target, approx = self._set_context(rows, tl_tr)
        want = cached_targets[rows] if cached_targets is not None else self._targets(rows, target)
        e = self.emb[approx]
        e = torch.cat([e[:, :self.a], v[:, None].to(e.dtype), e[:, self.a + 1:]], 1)
        h = self._hidden(embeds=e, mask=torch.ones(approx.shape, dtype=torch.long, device=approx.device))
        got = h[:, :, self.approx_pos]
        if self.normalise:  # distance="normalised" (the targets come normalised)
            got = rms_normalised(got)
        return (got - want).float().pow(2).sum(dim=(1, 2, 3))

    def run(self, v0, rates, iterations, vocab, draws, patience, tol, snap_at, progress, until=None):
        import torch

        b = len(v0)
        V = v0.clone()
        m, s = torch.zeros_like(V), torch.zeros_like(V)
        hist = np.full((b, iterations), np.nan, np.float32)
        its = np.full(b, iterations, np.int64)
        snaps = np.empty((len(snap_at), b, V.shape[1]), np.float32) if snap_at else None
        if snap_at and snap_at[0] == 0:
            snaps[0] = V.cpu().numpy()
        active = torch.arange(b, device=V.device)
        cached = None if self.random else self._targets(active, self.target)
        best = np.full(b, np.inf)
        stale = np.zeros(b, np.int64)
        beta1, beta2, eps = 0.9, 0.999, 1e-8
        for it in range(iterations):
            tl_tr = vocab[draws[active, it]] if draws is not None else None
            v = V[active].clone().requires_grad_(True)
            loss = self.loss(active, v, tl_tr, cached)
            (g,) = torch.autograd.grad(loss.sum(), v)
            with torch.no_grad():  # Adam, row by row (rows are independent)
                m[active] = beta1 * m[active] + (1 - beta1) * g
                s[active] = beta2 * s[active] + (1 - beta2) * g * g
                step = (m[active] / (1 - beta1 ** (it + 1))) / ((s[active] / (1 - beta2 ** (it + 1))).sqrt() + eps)
                V[active] = v.detach() - rates[active, None] * step
            act = active.cpu().numpy()
            hist[act, it] = loss.detach().cpu().numpy()
            progress.update(len(act))
            if snap_at and (it + 1) in snap_at:
                snaps[snap_at.index(it + 1)] = V.cpu().numpy()
                if until is not None and until(it + 1, snaps[snap_at.index(it + 1)]):
                    its[:] = it + 1
                    break
            if patience is not None and (it + 1) % WINDOW == 0:
                best[act], stale[act] = plateau_step(best[act], stale[act], hist[act, it + 1 - WINDOW:it + 1].mean(1),
                                                     tol)
                done = act[stale[act] * WINDOW >= patience]
                if len(done):
                    its[done] = it + 1
                    keep = ~np.isin(act, done)
                    if not keep.any():
                        break
                    active = active[torch.as_tensor(keep, device=V.device)]
            if it % 50 == 0:
                progress.set_postfix(iteration=it, active=len(active), refresh=False)
        if snap_at:  # words that stopped early keep their last vector in later snapshots
            for k, at in enumerate(snap_at):
                late = its < at
                snaps[k, late] = V.cpu().numpy()[late]
        return V.cpu().numpy(), hist, its, snaps


def rms_normalised(h):
    """``h`` over its root mean square along the last axis (the scale-free part of an RMSNorm)."""
    return h * (h.float().pow(2).mean(-1, keepdim=True) + 1e-12).rsqrt().to(h.dtype)


def resolve_distance(distance: str, model) -> str:
    """``auto``: ``raw`` (the paper's distance) for a model type that has a masked-LM head in transformers
    (BERT, RoBERTa, ...), ``normalised`` for any other (causal LMs: GPT-2, Llama, SmolLM2)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    if distance not in DISTANCES:
        raise LexprobeError(f"distance must be one of {', '.join(DISTANCES)}, not {distance!r}")
    if distance != "auto":
        return distance
    return "raw" if _encoder(model).config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES else "normalised"


def plateau_step(best: np.ndarray, stale: np.ndarray, window_mean: np.ndarray, tol: float):
    """One early-stop check: a word improved when its window mean is below ``best * (1 - tol)``."""
    improved = window_mean < best * (1 - tol)
    return np.where(improved, window_mean, best), np.where(improved, 0, stale + 1)


# ---------------------------------------------------------------------------------------------- public


def one_token_approximation(model, tokenizer, words: Sequence[str], *, iterations: int = DEFAULTS["iterations"],
                            contexts: str = DEFAULTS["contexts"], init: str = DEFAULTS["init"],
                            lr: float = DEFAULTS["lr"], layers=DEFAULTS["layers"], seed: int = 0,
                            batch_size: int = 64, patience: int | None = DEFAULTS["patience"],
                            tol: float = DEFAULTS["tol"], distance: str = DEFAULTS["distance"],
                            batch_threads: int = 1) -> np.ndarray:
    """OTA vectors (len(words), hidden) float32 in the model's input-embedding space (see the module doc);
    ``batch_threads`` as in :func:`optimise`."""
    return approximate(model, tokenizer, words, iterations=iterations, contexts=contexts, init=init, lr=lr,
                       layers=layers, seed=seed, batch_size=batch_size, patience=patience, tol=tol,
                       distance=distance, batch_threads=batch_threads).vectors


def approximate(model, tokenizer, words: Sequence[str], *, init: str = DEFAULTS["init"], **options) -> OTAResult:
    """Like :func:`one_token_approximation`, returning the whole :class:`OTAResult`."""
    if init not in INITS:
        raise LexprobeError(f"init must be one of {', '.join(INITS)}, not {init!r}")
    words = list(words)
    pieces = word_pieces(tokenizer, words)
    hidden = _embedding_matrix(model).shape[1]  # "mean": the authors' start, the mean subword embedding
    start = subword_vectors(model, pieces, "avg") if init == "mean" else np.zeros((len(words), hidden), np.float32)
    return optimise(model, tokenizer, pieces, start, keys=words, **options)


def subword_vectors(model, pieces: Sequence[Sequence[int]], how: str) -> np.ndarray:
    """``first``, ``last`` or ``avg`` (mean) of each word's subword input embeddings."""
    if how not in BASELINES:
        raise LexprobeError(f"baseline must be one of {', '.join(BASELINES)}, not {how!r}")
    E = _embedding_matrix(model).detach().float().cpu().numpy()
    if how == "first":
        return E[[p[0] for p in pieces]].copy()
    if how == "last":
        return E[[p[-1] for p in pieces]].copy()
    flat = np.concatenate([np.asarray(p, dtype=np.int64) for p in pieces])
    starts = np.cumsum([0] + [len(p) for p in pieces[:-1]])
    return (np.add.reduceat(E[flat], starts, axis=0) / np.array([len(p) for p in pieces])[:, None]).astype(np.float32)


def subword_baseline(model, tokenizer, words: Sequence[str], how: str = "avg") -> np.ndarray:
    """The paper's baselines for a multi-token word t_1..t_n: e(t_1) (``first``), e(t_n) (``last``) or the
    mean of e(t_1)..e(t_n) (``avg``)."""
    return subword_vectors(model, word_pieces(tokenizer, list(words)), how)


def inputs_embeds_with(model, input_ids, positions, vectors):
    """Input embeddings of ``input_ids`` (B, T) with row b's token at ``positions[b]`` replaced by
    ``vectors[b]`` (a stored OTA vector); rows with a negative position are left as they are."""
    import torch

    emb = _embedding_matrix(model)
    input_ids = torch.as_tensor(input_ids, device=emb.device)
    positions = torch.as_tensor(np.asarray(positions), device=emb.device).long()
    vectors = torch.as_tensor(np.asarray(vectors, dtype=np.float32), device=emb.device).to(emb.dtype)
    if positions.shape != (input_ids.shape[0],) or vectors.shape != (input_ids.shape[0], emb.shape[1]):
        raise LexprobeError(f"inputs_embeds_with: {tuple(input_ids.shape)} ids need ({input_ids.shape[0]},) positions "
                            f"and ({input_ids.shape[0]}, {emb.shape[1]}) vectors")
    with torch.no_grad():
        out = _encoder(model).get_input_embeddings()(input_ids).clone()
        rows = torch.nonzero(positions >= 0).flatten()
        out[rows, positions[rows]] = vectors[rows]
    return out


# --------------------------------------------------------------------------------------- the index's model


def check_index_model(store, model: str) -> None:
    """The words index must hold the input embeddings of ``model`` (its manifest's ``meta.model``)."""
    import os

    from ..sources.models import resolve_model

    built = store.meta.get("model")
    if built is None:
        raise LexprobeError(f"{store.path}: index {store.name!r} holds vectors from {store.manifest['source']}, not a "
                            f"model's input embeddings; build one with: lexprobe index words --vectors hf:{model}")

    def same(name: str) -> str:
        target = resolve_model(name)
        return os.path.realpath(target) if os.path.exists(target) else target

    if same(built) != same(model):
        raise LexprobeError(f"{store.path}: index {store.name!r} holds the input embeddings of {built!r}, "
                            f"not of {model!r} (pass --model {built})")
