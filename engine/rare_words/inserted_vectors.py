"""Vectors the rare-words slice makes, inserted into a words index: OTA's one-token approximations of words the
tokenizer splits (:func:`insert_ota`), rows of origin ``ota`` added through :func:`lexprobe.kinds.words.insert_words`.
The one module of the slice that writes into an index; every other computes and returns."""

from __future__ import annotations

from typing import Sequence

from ..core.conventions import old_order
from ..core.errors import LexprobeError
from ..core.store import home_path
from .ota import OTAResult, approximate, check_index_model


@old_order("home", "name", "model_name", "words")
def insert_ota(name: str, model_name: str, words: Sequence[str], *, home=None, replace: bool = False,
               device="auto", **options) -> tuple[OTAResult, dict]:
    """Approximate ``words`` with ``model_name`` on ``device`` (float32) and add them to the words index ``name``
    (origin ``ota``).

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
    return result, summary
