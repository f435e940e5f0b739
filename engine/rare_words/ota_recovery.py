"""The single-token recovery check (paper section 6.1, Figure 1) and the speed-to-quality table.

Words that are one token of the vocabulary are approximated as if they were unknown: the target sequence
holds the true token, so the ideal v is its input embedding e(w), and the quality of OTA after t iterations
is the mean cosine distance 1 - cos(v_t, e(w)) over the words (a zero vector counts as cosine 0, distance 1).

- ``read_distance`` (beside the paper's number): the same distance after multiplying both vectors by the weights
  of the first normalisation layer the embeddings pass through (:func:`input_norm_weights`), i.e. between the
  vectors as the model reads them. On SmolLM2 the first RMSNorm's weights span 0.0002 to 0.31 (median 0.022):
  the 10% most-weighted dimensions carry 51-71% of a word's weighted energy but only 8-11% of its raw energy
  (4 words measured). The rest of e(w) is hardly seen by the model and no hidden-state objective pins it down,
  so the paper's number stays high there while the read distance shows what OTA recovers.

- ``init="mean"`` starts, as for an unknown word, from the mean of the pieces the word would get without its
  own token (WordPiece longest-match over the vocabulary minus that token), never from e(w) itself.
- ``stop_after``: the run ends once every setting's mean distance has gone that many iterations without a new
  minimum (the paper searches the iteration count of the minimum; past it, the curve only rises or idles).
- ``paired`` (both context variants run): per snapshot, the mean of static minus random distance over the same
  words with its paired bootstrap 95% interval (words resampled), over the iterations both variants reached.
- Several inits and learning rates run in one batch (one row per word and setting; Adam is per row) and
  share each word's random contexts, so settings are compared on the same draws.
- Speed to quality: quality = mean cosine similarity 1 - distance. ``its_to_95`` is the first snapshot
  iteration whose similarity is at least 95% of the same setting's similarity at the last iteration;
  ``its_to_95_ref`` the same against the reference setting (random contexts, zeros, lr 1e-3: the paper's).
  ``stop_it`` / ``dist_at_stop`` say where the early stop (``patience``, ``tol``) would end each word, from the
  recorded losses, and the mean distance of the vectors at those iterations.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core.errors import LexprobeError
from .ota import WINDOW, _embedding_matrix, optimise, plateau_step, subword_vectors

REFERENCE = ("random", "zeros", 1e-3)


def recovery_words(tokenizer, n: int, seed: int, min_len: int = 4) -> tuple[list[str], list[int]]:
    """``n`` whole-word vocabulary tokens of at least ``min_len`` ASCII letters, drawn with ``seed``."""
    from ..sources.models import whole_word_tokens

    words, ids = whole_word_tokens(tokenizer)
    pool = [(w, t) for w, t in zip(words, ids) if w.isascii() and w.isalpha() and len(w) >= min_len]
    if len(pool) < n:
        raise LexprobeError(f"only {len(pool)} one-token words of {min_len}+ letters, {n} asked")
    pick = np.random.default_rng(seed).choice(len(pool), size=n, replace=False)
    return [pool[i][0] for i in pick], [pool[i][1] for i in pick]


def split_without(tokenizer, word: str) -> list[int]:
    """WordPiece longest-match split of ``word`` over the vocabulary without the token ``word`` itself."""
    vocab = tokenizer.get_vocab()
    if sum(t.startswith("##") for t in vocab) < len(vocab) // 10:  # a BPE vocabulary may hold a few "##..." too
        raise LexprobeError("the 'mean' init of the recovery check needs a WordPiece (BERT-style) tokenizer")
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            sub = word[start:end] if start == 0 else "##" + word[start:end]
            if sub in vocab and (start, end) != (0, len(word)):
                pieces.append(vocab[sub])
                break
        else:
            raise LexprobeError(f"word {word!r} cannot be split without its own token")
        start = end
    return pieces


def cosine_distance(vectors: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """1 - cos along the last axis; a zero vector has cosine 0 (distance 1)."""
    num = (vectors * truth).sum(-1)
    den = np.linalg.norm(vectors, axis=-1) * np.linalg.norm(truth, axis=-1)
    return 1 - np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def input_norm_weights(model) -> np.ndarray | None:
    """The per-dimension weights of the first normalisation layer the input embeddings pass through (Llama's
    ``layers.0.input_layernorm``, GPT-2's ``h.0.ln_1``, BERT's ``embeddings.LayerNorm``): the first module of the
    encoder whose class name holds "Norm" with a weight of one value per hidden dimension; None without one."""
    from .ota import _embedding_matrix, _encoder

    hidden = _embedding_matrix(model).shape[1]
    for module in _encoder(model).modules():
        weight = getattr(module, "weight", None)
        if "Norm" in type(module).__name__ and weight is not None and tuple(weight.shape) == (hidden,):
            return weight.detach().float().cpu().numpy()
    return None


def stop_iterations(loss_history: np.ndarray, patience: int, tol: float) -> np.ndarray:
    """Where the early stop of :func:`lexprobe.rare_words.ota.optimise` would end each row, from its recorded losses."""
    n, total = loss_history.shape
    best, stale = np.full(n, np.inf), np.zeros(n, np.int64)
    stop = np.full(n, total, np.int64)
    for w in range(total // WINDOW):
        best, stale = plateau_step(best, stale, loss_history[:, w * WINDOW:(w + 1) * WINDOW].mean(1), tol)
        stop[(stale * WINDOW >= patience) & (stop == total)] = (w + 1) * WINDOW
    return stop


def past_minimum(truth: np.ndarray, groups: int, after: int):
    """A stopping rule for :func:`lexprobe.rare_words.ota.optimise` (``until``): True once each of ``groups``
    equal blocks of rows has gone ``after`` iterations without a new minimum of its mean cosine distance to
    ``truth`` (one row per vector)."""
    best, best_at = np.full(groups, np.inf), np.zeros(groups)

    def until(at: int, vectors: np.ndarray) -> bool:
        mean = cosine_distance(vectors, truth).reshape(groups, -1).mean(1)
        better = mean < best
        best[better], best_at[better] = mean[better], at
        return bool((at - best_at >= after).all())

    return until


def run_recovery(model, tokenizer, *, n_words: int, iterations: int, contexts: Sequence[str] = ("static", "random"),
                 inits: Sequence[str] = ("zeros",), lrs: Sequence[float] = (1e-3,), every: int = WINDOW,
                 layers="all", seed: int = 0, batch_size: int = 256, patience: int = 300,
                 tol: float = 0.01, distance: str = "auto", stop_after: int | None = None) -> dict:
    """Run the check; returns ``curve`` rows (iteration, contexts, init, lr, mean_cos_distance, read_distance),
    ``summary`` rows (one per setting) and ``paired`` rows (static against random per snapshot), plus the words.
    ``distance``: the OTA distance (see
    :mod:`lexprobe.rare_words.ota`). The context variants are independent (:func:`recovery_part` each, joined by
    :func:`merge_recovery`), so they may also run side by side."""
    parts = [recovery_part(model, tokenizer, ctx, n_words=n_words, iterations=iterations, inits=inits, lrs=lrs,
                           every=every, layers=layers, seed=seed, batch_size=batch_size, patience=patience, tol=tol,
                           distance=distance, stop_after=stop_after) for ctx in contexts]
    return merge_recovery(parts)


def recovery_part(model, tokenizer, ctx: str, *, n_words: int, iterations: int, inits: Sequence[str] = ("zeros",),
                  lrs: Sequence[float] = (1e-3,), every: int = WINDOW, layers="all", seed: int = 0,
                  batch_size: int = 256, patience: int = 300, tol: float = 0.01, distance: str = "auto",
                  stop_after: int | None = None) -> dict:
    """One context variant of :func:`run_recovery`: the words, its curve rows and its summary rows (with the
    distances :func:`merge_recovery` compares with the reference setting's and pairs across variants)."""
    if every % WINDOW or iterations % every:
        raise LexprobeError(f"the snapshot step must be a multiple of {WINDOW} and divide the iterations")
    words, token_ids = recovery_words(tokenizer, n_words, seed)
    truth = _embedding_matrix(model).detach().float().cpu().numpy()[token_ids]
    weights = input_norm_weights(model)
    settings = [(i, lr) for i in inits for lr in lrs]
    starts = {"zeros": np.zeros_like(truth),
              "mean": subword_vectors(model, [split_without(tokenizer, w) for w in words], "avg") if "mean" in inits
              else None}
    init = np.concatenate([starts[i] for i, _ in settings])
    rates = np.repeat([lr for _, lr in settings], len(words))
    curve, summary = [], []
    res = optimise(model, tokenizer, [[t] for t in token_ids] * len(settings), init, keys=words * len(settings),
                   iterations=iterations, contexts=ctx, lr=rates, layers=layers, seed=seed,
                   batch_size=batch_size, patience=None, distance=distance, snapshot_every=every,
                   desc=f"recovery {ctx}", until=None if stop_after is None else
                   past_minimum(np.tile(truth, (len(settings), 1)), len(settings), stop_after))
    dist = cosine_distance(res.snapshots, np.tile(truth, (len(settings), 1))[None])  # (snaps, rows)
    read = None if weights is None else cosine_distance(res.snapshots * weights,
                                                        np.tile(truth * weights, (len(settings), 1))[None])
    stops = stop_iterations(res.loss_history, patience, tol)
    for s, (init_name, lr) in enumerate(settings):
        rows = slice(s * len(words), (s + 1) * len(words))
        mean = dist[:, rows].mean(1)
        read_mean = read[:, rows].mean(1) if read is not None else np.full(len(mean), np.nan)
        curve += [{"iteration": at, "contexts": ctx, "init": init_name, "lr": lr, "mean_cos_distance": float(d),
                   "read_distance": float(r)} for at, d, r in zip(res.snapshot_at, mean, read_mean)]
        at_stop = dist[np.asarray(res.snapshot_at).searchsorted(stops[rows]), np.arange(len(words))
                       + s * len(words)]
        summary.append({"contexts": ctx, "init": init_name, "lr": lr, "start": float(mean[0]),
                        "end": float(mean[-1]), "best": float(mean.min()),
                        "best_iteration": int(res.snapshot_at[int(mean.argmin())]),
                        "its_to_95": _iterations_to(mean, res.snapshot_at, 1 - mean[-1]),
                        "stop_it": float(stops[rows].mean()), "dist_at_stop": float(at_stop.mean()),
                        "read_start": float(read_mean[0]), "read_end": float(read_mean[-1]),
                        "iterations_run": int(res.snapshot_at[-1]),
                        "_mean": mean, "_at": res.snapshot_at, "_dist": dist[:, rows]})
    return {"words": words, "curve": curve, "summary": summary}


def merge_recovery(parts: Sequence[dict]) -> dict:
    """The context variants' :func:`recovery_part` results as one :func:`run_recovery` result: curves and summaries
    in order, each setting's ``its_to_95_ref`` against the reference setting (``REFERENCE``), and ``paired``
    (:func:`paired_curve`)."""
    curve = [r for p in parts for r in p["curve"]]
    summary = [dict(r) for p in parts for r in p["summary"]]
    ref = next((r for r in summary if (r["contexts"], r["init"], r["lr"]) == REFERENCE), None)
    runs = {}
    for r in summary:
        mean, at = r.pop("_mean"), r.pop("_at")
        runs[(r["contexts"], r["init"], r["lr"])] = (at, r.pop("_dist"))
        r["its_to_95_ref"] = _iterations_to(mean, at, 1 - ref["end"]) if ref else None
    paired = [row for (ctx, init, lr), static in runs.items() if ctx == "static" and ("random", init, lr) in runs
              for row in paired_curve(static, runs[("random", init, lr)], init=init, lr=lr)]
    return {"words": parts[0]["words"] if parts else [], "curve": curve, "summary": summary, "paired": paired}


def paired_curve(static: tuple[Sequence[int], np.ndarray], random: tuple[Sequence[int], np.ndarray], *,
                 init: str = "zeros", lr: float = 1e-3, seed: int = 0) -> list[dict]:
    """Static against random contexts per snapshot both reached: ``static`` and ``random`` are (snapshot
    iterations, distances (snapshots, words)) over the same words. Rows: iteration, the two mean distances,
    ``difference`` (static - random) with its paired bootstrap 95% interval (``low``, ``high``), ``words``."""
    from ..core.intervals import paired_bootstrap

    (at_s, d_s), (at_r, d_r) = static, random
    common = sorted(set(at_s) & set(at_r))
    out = []
    for at in common:
        a, b = d_s[list(at_s).index(at)], d_r[list(at_r).index(at)]
        diff, low, high = paired_bootstrap(a, b, seed=seed)
        out.append({"iteration": int(at), "init": init, "lr": lr, "static": float(a.mean()),
                    "random": float(b.mean()), "difference": diff, "low": low, "high": high, "words": len(a)})
    return out


def _iterations_to(mean_distance: np.ndarray, at: Sequence[int], final_similarity: float) -> int | None:
    """First iteration whose mean similarity reaches 95% of ``final_similarity`` (None: never)."""
    reached = np.nonzero(1 - mean_distance >= 0.95 * final_similarity)[0]
    return int(at[reached[0]]) if len(reached) else None


def winner(summary: Sequence[dict], inits: str = "zeros", lr: float = 1e-3) -> str | None:
    """The context variant with the lower final distance for one init and rate (None if not both ran)."""
    ends = {r["contexts"]: r["end"] for r in summary if r["init"] == inits and r["lr"] == lr}
    return min(ends, key=ends.get) if len(ends) > 1 else None
