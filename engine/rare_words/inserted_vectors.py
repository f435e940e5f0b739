"""Vectors the rare-words slice makes, inserted into a words index through :func:`lexprobe.kinds.words.insert_words`
(a new shard and a FAISS add, atomic; neighbours, analogies and SQL see them like any word): OTA's one-token
approximations of words the tokenizer splits (:func:`insert_ota`, origin ``ota``) and Attentive Mimicking vectors
(:func:`insert_am`, origin ``am``, the AM model, its target table and the contexts' corpora in the index's history).
The one module of the slice that writes into an index; every other computes and returns."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core.conventions import old_order
from ..core.errors import LexprobeError
from ..core.store import home_path
from .am_store import context_windows, contexts_identity
from .am_targets import same_space
from .mimicking import AMModel
from .ota import approximate, check_index_model, word_pieces


@old_order("home", "name", "model_name", "words")
def insert_ota(name: str, model_name: str, words: Sequence[str], *, home=None, replace: bool = False,
               device="auto", **options) -> dict:
    """Approximate ``words`` with ``model_name`` on ``device`` (float32) and add them to the words index ``name``
    (origin ``ota``). Returns the insertion's summary with ``model`` and ``words``: per word its subword
    ``tokens``, the ``iterations`` run and the ``final_loss`` (the vectors are in the index;
    :func:`lexprobe.rare_words.ota.approximate` gives them without inserting).

    Checks first (before any optimisation) that the index was built from this model's input embeddings and,
    unless ``replace``, that none of the words is in it already.
    """
    from ..sources.models import load_encoder, load_tokenizer
    from ..kinds.words import WordIndex, insert_words

    home = home_path(home)
    index = WordIndex.open(name, home=home)
    check_index_model(index.store, model_name)
    existing = [w for w in words if w in index.word_to_id]
    if existing and not replace:
        raise LexprobeError(f"index {name!r} already has {', '.join(map(repr, existing[:5]))}"
                            f"{' ...' if len(existing) > 5 else ''}: use --replace to replace")
    tokenizer, model = load_tokenizer(model_name), load_encoder(model_name, device=device)
    result = approximate(model, tokenizer, words, **options)
    settings = {"model": model_name, **{k: v for k, v in options.items()}}
    summary = insert_words(home, name, list(words), result.vectors, origin="ota", settings=settings, replace=replace)
    rows = [{"word": w, "tokens": len(p), "iterations": int(i), "final_loss": float(f)}
            for w, p, i, f in zip(words, word_pieces(tokenizer, words), result.iterations, result.final_loss)]
    return {**summary, "model": model_name, "words": rows}


def insert_am(name: str, words: Sequence[str], *, into: str, home=None, contexts: str | None = None,
              max_contexts: int | None = None, replace: bool = False) -> dict:
    """Infer ``words`` with AM model ``name`` from their form and their windows in ``contexts`` (default: the
    contexts index the model was trained on; at most ``max_contexts`` a word) and add them to the words index
    ``into`` (origin ``am``). The index must hold the model's embedding space. Returns a summary, with each
    word's number of contexts and gate."""
    from ..kinds.contexts import ContextIndex
    from ..kinds.words import WordIndex, insert_words

    words = list(dict.fromkeys(words))
    if not words:
        raise LexprobeError("am apply: no words")
    am = AMModel.open(name, home=home)
    target = WordIndex.open(into, home=home)
    same_space(am.meta["targets"], target.store)
    existing = [w for w in words if w in target.word_to_id]
    if existing and not replace:
        raise LexprobeError(f"index {into!r} already has {', '.join(map(repr, existing[:5]))}"
                            f"{' ...' if len(existing) > 5 else ''}: use --replace to replace")
    index = ContextIndex.open(contexts or am.meta["contexts"]["name"], home=home)
    inferred = am.infer(words, context_windows(index, words, max_contexts))
    settings = {"am_model": name, "preset": am.config.preset, "attention": am.config.attention,
                "targets": {k: am.meta["targets"].get(k) for k in ("kind", "index", "model", "source", "checksum")},
                "contexts": contexts_identity(index), "max_contexts": max_contexts,
                "with_contexts": int((inferred.contexts > 0).sum())}
    summary = insert_words(target.store.path.parent, into, words, inferred.vectors, origin="am", settings=settings,
                           replace=replace)
    rows = [{"word": w, "contexts": int(c), "alpha": None if np.isnan(a) else float(a)}
            for w, c, a in zip(words, inferred.contexts, inferred.alpha)]
    return {**summary, "am_model": name, "contexts": index.name, "words": rows}
