"""Trained Attentive Mimicking models on disk, and their vectors as words-index entries.

A model is a small folder ``<home>/.models/am/<name>/`` written like an index (:class:`~lexprobe.core.store.
StoreWriter`: built aside, fsynced, swapped in atomically, every file checksummed in the manifest and verified on
open; the format is read and written in one place, :meth:`~.mimicking.AMModel.open` and
:meth:`~.mimicking.AMModel.write`): ``shards/`` hold the n-gram vocabulary (``id``, ``ngram``),
``model.safetensors`` the weights, and the manifest's ``meta`` the config, each tensor's shape, the target table's
provenance and SHA-256, the contexts index (name, content digest, corpora), the held-out words' digest and the
training log. :func:`train_model` reuses the model when all of these match, and refuses other settings under the
same name unless ``replace``; the check, the training and the swap-in hold the index builds' writer lock.

:class:`AMVectors` gives a model's vectors to WNLaMPro's AM strategies; :func:`lexprobe.rare_words.
inserted_vectors.insert_am` adds them to a words index as entries.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Sequence

import numpy as np

from ..core.errors import LexprobeError
from ..core.store import check_name, shards_digest, write_lock
from .am_targets import TargetTable, index_targets, lm_targets, models_dir
from .mimicking import AMConfig, AMModel, ContextData, NGramVocab, TrainingSet, preset, train


def model_path(name: str, *, home=None) -> Path:
    return models_dir(home, "am") / check_name(name)


def _words_digest(words: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(sorted(set(words))).encode("utf-8", "surrogatepass")).hexdigest()


def contexts_identity(index) -> dict:
    """What names a contexts index in a model's or an index's provenance: name, content digest, corpora, window, cap."""
    return {"name": index.name, "digest": shards_digest(index.store.manifest),
            "corpora": [c.get("corpus") for c in index.settings.get("corpora", [])],
            "window": index.settings.get("window"), "cap": index.settings.get("cap")}


def train_am(name: str, *, contexts: str, targets: str | None = None, model: str | None = None, home=None,
             preset_name: str = "am", attention: str = "clustering", epochs: int = 10, seed: int = 0,
             min_count: int = 1, held_out: Sequence[str] = (), ota_min_contexts: int = 8, ota_max_words: int | None = None,
             ota_options: dict | None = None, replace: bool = False) -> dict:
    """Train AM model ``name`` on the contexts index ``contexts`` to mimic ``targets`` (a words index) or
    ``model``'s input embeddings (whole-word tokens plus OTA of multi-token context words, cached). Reused when
    the settings, target table, contexts and held-out words are the same; other settings under an existing name
    only with ``replace``. ``min_count``: train on words with at least so many corpus occurrences (the authors:
    100 in a 1e9-word corpus). ``held_out``: words never trained on (for a recovery check). Returns a summary.
    Opens the indexes and the targets once and calls :func:`train_model`."""
    from ..kinds.contexts import ContextIndex
    from ..kinds.words import WordIndex

    check_name(name)
    if (targets is None) == (model is None):
        raise LexprobeError("am train: give the targets as a words index (--targets) or a model (--model), one of them")
    config = preset(preset_name, attention=attention, epochs=epochs, seed=seed, min_count=min_count)
    index = ContextIndex.open(contexts, home=home)
    if targets is not None:
        table = index_targets(WordIndex.open(targets, home=home))
    else:
        table = lm_targets(model, home=home, contexts=index, ota_min_contexts=ota_min_contexts,
                           ota_max_words=ota_max_words, ota_options=ota_options)
    return train_model(name, index, table, config, home=home, held_out=held_out, replace=replace)[1]


def train_model(name: str, index, table: TargetTable, config: AMConfig, *, home=None, held_out: Sequence[str] = (),
                replace: bool = False, data: ContextData | None = None,
                prepared: tuple[TrainingSet, NGramVocab] | None = None) -> tuple[AMModel, dict]:
    """Train (or reuse) AM model ``name`` on the open contexts index ``index`` to mimic ``table``; returns the
    model and its summary. The existence check, the training and the swap-in happen under the model folder's
    writer lock (the index builds' lock), so a second train of the same name at the same time is refused as
    at once as a sequential one with other settings. ``data``: :meth:`ContextData.from_index` of ``index``,
    ``prepared``: its training set, when the caller computed them once for several models."""
    check_name(name)
    root = models_dir(home, "am")
    wanted = {"config": config.as_dict(), "targets": {**table.provenance, "checksum": table.checksum,
                                                      "words": len(table.words), "dim": table.dim},
              "contexts": contexts_identity(index),
              "held_out": {"words": len(set(held_out)), "sha256": _words_digest(held_out)}}
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LexprobeError(f"{root}: cannot write the AM model ({exc.strerror or exc})") from None
    with write_lock(root, name):
        path = root / name
        if (path / "manifest.json").exists():
            existing = AMModel.open(name, home=home, targets=table) if _same(path, wanted) else None
            if existing is not None:
                return existing, {"name": name, "reused": True, "path": str(path), **_summary(existing.meta)}
            if not replace:
                raise LexprobeError(f"{path}: AM model {name!r} exists with other settings, targets or "
                                    "contexts: pass --replace to train it again")
        am, log = train(table, data if data is not None else ContextData.from_index(index), config,
                        held_out=held_out, desc=f"am {name}", prepared=prepared)
        meta = {**wanted, "training": log.as_dict(), "ngrams": len(am.vocab)}
        am.write(root, name, meta)
    return am, {"name": name, "reused": False, "path": str(path), **_summary(am.meta)}


def _same(path: Path, wanted: dict) -> bool:
    """Whether the model folder's manifest records the ``wanted`` settings (its meta read without verifying the
    files: :meth:`AMModel.open` verifies them when the model is reused)."""
    try:
        meta = json.loads((path / "manifest.json").read_text(encoding="utf-8")).get("meta", {})
    except (OSError, ValueError):
        return False
    return all(meta.get(k) == json.loads(json.dumps(v)) for k, v in wanted.items())


def _summary(meta: dict) -> dict:
    log = meta["training"]
    return {"preset": meta["config"]["preset"], "attention": meta["config"]["attention"],
            "epochs": meta["config"]["epochs"], "smin": meta["config"]["smin"], "words": log["words"],
            "below_smin": log.get("below_smin", 0), "instances": log["instances"], "contexts": log["contexts"],
            "ngrams": meta["ngrams"], "targets": meta["targets"]["words"], "dim": meta["targets"]["dim"],
            "losses": log["losses"], "seconds": round(log["seconds"], 2)}


def am_providers(names: dict[str, str | None], strategies, *, model: str, home=None,
                 max_contexts: int | None = None) -> dict[str, AMVectors]:
    """An :class:`AMVectors` for each AM strategy in ``strategies`` from ``names`` (strategy -> AM model name),
    each checked to mimic ``model``'s input embeddings; a strategy without a model is a clear error. Each model
    and contexts index is opened once."""
    from ..kinds.contexts import ContextIndex

    out, indexes = {}, {}
    for strategy in strategies:
        if not names.get(strategy):
            raise LexprobeError(f"strategy {strategy} needs an AM model: --{strategy} NAME (lexprobe am train)")
    for strategy in strategies:
        am = AMModel.open(names[strategy], home=home)
        where = am.meta["contexts"]["name"]
        if where not in indexes:
            indexes[where] = ContextIndex.open(where, home=home)
        out[strategy] = AMVectors(am, index=indexes[where], max_contexts=max_contexts)
        out[strategy].check_model(model)
    return out


def context_windows(index, words: Sequence[str], max_contexts: int | None = None) -> list[list[list[str]]]:
    """Each word's windows in a contexts index (its first ``max_contexts``: a seeded uniform sample)."""
    return [index.windows(w, max_contexts) for w in words]


class AMVectors:
    """A keyword-vector provider for WNLaMPro's AM strategies (:func:`lexprobe.rare_words.probing.probe`'s
    ``providers``): called with words, the AM model's vectors for them from their form and their windows in the
    contexts index ``index`` (default: the one it was trained on; at most ``max_contexts`` a word; None: every
    window the index holds), looked up lowercased as the index stores them. ``model``: an open
    :class:`~.mimicking.AMModel`, or a model name opened here. ``inferred`` keeps each word's contexts used and
    gate alpha (NaN: no context, the form alone)."""

    def __init__(self, model: AMModel | str, *, index=None, home=None, max_contexts: int | None = None):
        from ..kinds.contexts import ContextIndex

        self.model = model if isinstance(model, AMModel) else AMModel.open(model, home=home)
        self.index = index if index is not None else ContextIndex.open(self.model.meta["contexts"]["name"], home=home)
        self.max_contexts = max_contexts
        self.inferred: dict[str, tuple[int, float]] = {}

    def __call__(self, words: Sequence[str]) -> np.ndarray:
        words = list(words)
        inferred = self.model.infer(words, context_windows(self.index, [w.lower() for w in words],
                                                           self.max_contexts))
        self.inferred.update({w: (int(c), float(a)) for w, c, a in zip(words, inferred.contexts, inferred.alpha)})
        return inferred.vectors

    def check_model(self, model_name: str) -> None:
        """A clear error unless the AM model mimics ``model_name``'s input embeddings."""
        mimics = self.model.meta["targets"].get("model")
        if mimics != model_name:
            raise LexprobeError(f"AM model {self.model.name!r} mimics "
                                f"{mimics or 'the words index ' + repr(self.model.meta['targets'].get('index'))}, "
                                f"not {model_name!r}'s input embeddings")


def nearest(table: TargetTable, vector: np.ndarray, k: int = 10) -> list[tuple[str, float]]:
    """The ``k`` words of the target table nearest to ``vector`` by cosine, best first."""
    unit = table.matrix / np.maximum(np.linalg.norm(table.matrix, axis=1, keepdims=True), 1e-12)
    scores = unit @ (vector / max(float(np.linalg.norm(vector)), 1e-12))
    top = np.argsort(-scores, kind="stable")[:k]
    return [(table.words[i], float(scores[i])) for i in top]
