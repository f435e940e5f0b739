"""gensim ``KeyedVectors`` files (``.kv``, ``.model``): pickles, read by gensim only when named so."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from ...core.errors import InputError, LexprobeError
from .checks import CHUNK_ROWS, Chunk, _check_finite

GENSIM_EXTRA = "pip install 'lexprobe[gensim]'"


def _gensim_chunks(path: Path) -> Iterator[Chunk]:
    """A gensim ``KeyedVectors`` file (``.kv``, or a whole model's ``.model`` and its ``.wv``), read by gensim. It is
    a pickle, and loading a pickle runs code: lexprobe opens one only when the user names it so."""
    what = "a gensim KeyedVectors file"
    try:
        from gensim.models import KeyedVectors
    except ImportError:
        raise LexprobeError(f"{path}: reading {what} needs gensim ({GENSIM_EXTRA}); or export it as word2vec "
                            "text and pass that") from None
    try:
        kv = KeyedVectors.load(str(path), mmap="r")
    except Exception as exc:  # gensim raises many types for a damaged or foreign file
        raise InputError(path, f"not readable as {what} ({type(exc).__name__}: {str(exc)[:120]})") from None
    if not hasattr(kv, "index_to_key"):  # a whole model saved with .save(): its vectors are .wv
        kv = getattr(kv, "wv", kv)
    if not hasattr(kv, "index_to_key") or len(kv.index_to_key) == 0:
        raise InputError(path, f"{what} without word vectors")
    words = list(kv.index_to_key)
    for start in range(0, len(words), CHUNK_ROWS):
        chunk = np.asarray(kv.vectors[start:start + CHUNK_ROWS], dtype=np.float32)
        _check_finite(path, chunk, start, unit="row")
        yield words[start:start + CHUNK_ROWS], chunk
