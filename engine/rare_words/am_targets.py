"""The embeddings Attentive Mimicking mimics (its targets) and reads contexts with (a :class:`TargetTable`),
from any embedding table:

- a **words index** (static vectors such as GloVe, AM's original setting, or a model's input embeddings built
  with ``index words --vectors hf:MODEL``): its live rows, AM's own inserted rows (origin ``am``) left out, so that
  inserting AM vectors never changes the table a model was trained on;
- a **language model's input embeddings** (the rare-words paper's setting, section 4): its whole-word tokens
  (:func:`lexprobe.sources.models.whole_word_tokens`) plus one-token approximations (OTA, :mod:`.ota`) of
  multi-token words, those of a contexts index with at least ``ota_min_contexts`` windows (most frequent first,
  at most ``ota_max_words``): OTA exists to give AM targets for words the tokenizer splits. The table is computed
  batched and cached as a verified store under ``<home>/.models/am-targets/<key>/`` (key: a hash of the model's
  resolved path, the OTA words and settings), with its provenance in the manifest, and read back when asked again.

A table's identity is :attr:`~.mimicking.TargetTable.checksum` (words and vectors), recorded with every AM model.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
import numpy as np
import pyarrow as pa

from ..core.errors import LexprobeError
from ..core.home import models_dir
from ..core.store import Store, StoreWriter, column_matrix, vector_array, vector_type, write_lock

TARGETS_KIND = "am-targets"
AM_ORIGIN = "am"


@dataclass
class TargetTable:
    """The known embeddings AM mimics and reads its contexts with: words, their vectors, where they come from."""

    words: list[str]
    matrix: np.ndarray  # (n, d) float32
    provenance: dict = field(default_factory=dict)

    def __post_init__(self):
        self.matrix = np.ascontiguousarray(self.matrix, dtype=np.float32)
        if self.matrix.ndim != 2 or len(self.words) != len(self.matrix):
            raise LexprobeError(f"target table: {len(self.words)} words for a matrix of shape {self.matrix.shape}")
        if len(set(self.words)) != len(self.words):
            raise LexprobeError("target table: a word appears twice")

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    def row(self, word: str) -> int | None:
        if not hasattr(self, "_row"):
            self._row = {w: i for i, w in enumerate(self.words)}
        return self._row.get(word)

    @property
    def checksum(self) -> str:
        """SHA-256 over the words and the float32 vectors: the table's identity in a model's config."""
        if not hasattr(self, "_checksum"):
            h = hashlib.sha256("\n".join(self.words).encode("utf-8", "surrogatepass"))
            h.update(self.matrix.tobytes())
            self._checksum = h.hexdigest()
        return self._checksum


def index_targets(index) -> TargetTable:
    """The target table of a words index (a :class:`lexprobe.kinds.words.WordIndex`): its live rows but AM's own."""
    origin = index.store.column("origin").to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(~index.dead_rows() & (origin != AM_ORIGIN))
    m = index.store.manifest
    provenance = {"kind": "index", "index": index.name, "source": m["source"], "model": index.store.meta.get("model"),
                  "rows": int(len(rows))}
    return TargetTable([index.words[i] for i in rows], index.raw[rows], provenance)


def ota_candidates(tokenizer, contexts, *, known: set[str], min_contexts: int = 8,
                   max_words: int | None = None) -> list[str]:
    """Multi-token words worth an OTA target: words of the contexts index (a
    :class:`lexprobe.kinds.contexts.ContextIndex`) with at least ``min_contexts`` windows, made of letters, not
    whole-word tokens (``known``) and split by the tokenizer into 2+ pieces; most occurrences first."""
    from .ota import word_pieces

    table = contexts.store.table(["word", "occurrences"])
    words, first, n = np.unique(table.column("word").to_numpy(zero_copy_only=False), return_index=True,
                                return_counts=True)
    occurrences = table.column("occurrences").to_numpy()[first]
    pool = [(int(-c), w) for w, c, k in zip(words.tolist(), occurrences.tolist(), n.tolist())
            if k >= min_contexts and w.isalpha() and w not in known]
    pool = [w for _, w in sorted(pool)]
    multi = [w for w, p in zip(pool, word_pieces(tokenizer, pool) if pool else []) if len(p) > 1]
    return multi[:max_words] if max_words is not None else multi


def lm_targets(model_name: str, *, home=None, contexts=None, ota_min_contexts: int = 8,
               ota_max_words: int | None = None, ota_options: dict | None = None) -> TargetTable:
    """A language model's whole-word token embeddings plus OTA vectors of the multi-token words of ``contexts``
    (see the module doc), cached under the home. ``ota_options`` go to :func:`lexprobe.rare_words.ota.approximate`
    (iterations, lr, seed, batch_size, ...; ``batch_threads`` changes the speed, not the numbers: it is no part of
    the table's identity); no ``contexts``, or ``ota_max_words=0``: tokens only."""
    from ..sources.models import load_encoder, load_tokenizer, resolve_model, whole_word_tokens

    tokenizer = load_tokenizer(model_name)
    token_words, token_ids = whole_word_tokens(tokenizer)
    ota_words = [] if contexts is None or ota_max_words == 0 else ota_candidates(
        tokenizer, contexts, known=set(token_words), min_contexts=ota_min_contexts, max_words=ota_max_words)
    options = dict(sorted((ota_options or {}).items()))
    speed = {"batch_threads": options.pop("batch_threads")} if "batch_threads" in options else {}
    resolved = resolve_model(model_name)
    resolved = os.path.realpath(resolved) if os.path.exists(resolved) else resolved
    key = hashlib.sha256(json.dumps({"model": resolved, "tokens": len(token_words), "ota": ota_words,
                                     "options": options}, sort_keys=True).encode()).hexdigest()[:16]
    root = models_dir(home, TARGETS_KIND)
    name = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', model_name.rstrip('/').split('/')[-1]).lstrip('.')[:40] or 'model'}-{key}"
    cached = _read_cached(root / name)
    if cached is not None:
        return cached
    model = load_encoder(model_name)
    matrix = model.get_input_embeddings().weight.detach().float().numpy()[np.asarray(token_ids)]
    vectors, origins = [matrix], ["token"] * len(token_words)
    if ota_words:
        from .ota import approximate

        vectors.append(approximate(model, tokenizer, ota_words, **options, **speed).vectors)
        origins += ["ota"] * len(ota_words)
    words, matrix = token_words + ota_words, np.concatenate(vectors).astype(np.float32)
    provenance = {"kind": "model", "model": model_name, "model_path": resolved, "cache": name,
                  "tokens": len(token_words), "ota_words": len(ota_words), "ota_min_contexts": ota_min_contexts,
                  "ota_max_words": ota_max_words, "ota_options": options,
                  "contexts": getattr(contexts, "name", None)}
    table = TargetTable(words, matrix, provenance)
    with write_lock(root, name):
        with StoreWriter(root, name, kind=TARGETS_KIND, dim=table.dim, schema=_schema(table.dim)) as writer:
            writer.write(pa.table({"word": pa.array(words, pa.string()), "vector": vector_array(matrix),
                                   "origin": pa.array(origins, pa.string())}, schema=_schema(table.dim)))
            writer.commit(source=f"hf:{model_name}", meta={**provenance, "checksum": table.checksum},
                          history=[{"op": "build", "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "rows": len(words)}])
    return table


def _schema(dim: int) -> pa.Schema:
    return pa.schema([("word", pa.string()), ("vector", vector_type(dim)), ("origin", pa.string())])


def _read_cached(path: Path) -> TargetTable | None:
    if not (path / "manifest.json").exists():
        return None
    store = Store.open(path)
    meta = {k: v for k, v in store.meta.items() if k != "checksum"}
    table = TargetTable(store.column("word").to_pylist(), column_matrix(store.column("vector")), meta)
    if table.checksum != store.meta.get("checksum"):
        raise LexprobeError(f"{path}: cached AM target table does not match its recorded checksum (remove the folder)")
    return table


def cached_targets(cache: str, *, home=None) -> TargetTable:
    """A cached language-model target table by its folder name (recorded in a model's provenance)."""
    table = _read_cached(models_dir(home, TARGETS_KIND) / cache)
    if table is None:
        raise LexprobeError(f"{models_dir(home, TARGETS_KIND) / cache}: the cached AM target table is gone "
                            "(train the AM model again)")
    return table


def targets_for(provenance: dict, *, home=None) -> TargetTable:
    """The target table a model's provenance names, read again (a words index by name, or the cache)."""
    if provenance.get("kind") == "index":
        from ..kinds.words import WordIndex

        return index_targets(WordIndex.open(provenance["index"], home=home))
    if provenance.get("kind") == "model":
        return cached_targets(provenance["cache"], home=home)
    raise LexprobeError(f"unknown AM target table kind {provenance.get('kind')!r}")


def same_space(targets: dict, store) -> None:
    """Refuse to put AM vectors into a words index of another embedding space than the model's targets: for
    targets from a model, the index must hold that model's input embeddings; from a words index, the index must
    be built from the same source."""
    if targets.get("kind") == "model":
        from .ota import check_index_model

        check_index_model(store, targets["model"])
    elif store.manifest["source"] != targets.get("source"):
        raise LexprobeError(f"{store.path}: index {store.name!r} holds vectors from {store.manifest['source']}, the AM "
                            f"model mimics {targets.get('source')} (index {targets.get('index')!r}): insert there")
