"""The JSON API: one function per endpoint, from the request's query parameters to a plain dict.

Rows carry the CLI's field names (``query neighbors``: query, rank, word, score; ``query analogy``: a, a_star, b,
rank, word, score; ``query offsets``: relation, n_pairs, ocs, pcs; ``query senses``: rank, score, sense, lemma, pos,
sentence, instance_id; ``query probe``: rank, token, probability). Bad input raises :class:`BadRequest` (HTTP 400),
something named that does not exist :class:`~.opened.NotFound` (404); the app turns both into ``{"error": ...}``.
Nothing here writes, and there is no SQL: every answer comes from the library's own queries. The masked LMs
``/api/probe`` may run are the ones the server was started with (``models``): a request names one of them or gets
a 400, so no request loads a model from a path or converts one (a GGUF file is dequantised into the cache on first
use, a write). No answer holds an absolute path (:func:`public_text`): the client learns names, not the layout of
the server's disks.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..kinds.analogy_queries import METHODS
from ..analogies.offset_consistency import score_pairs, unit_offsets
from ..rare_words.cloze_queries import top_predictions
from ..rare_words.language_models import MaskedLM
from ..core.errors import LexprobeError
from ..core.store import Store
from ..kinds.tokens import TokenIndex
from ..kinds.words import WordIndex
from ..sources import datahome
from ..sources.datasets.analogy_sets import DATASET_KINDS, read_dataset
from ..sources.datasets.bats import apply_vocab
from ..sources.models import DEFAULT_CAUSAL, DEFAULT_MLM
from .opened import Models, NotFound, OpenIndexes

MAX_K = 1000          # the most results one request may ask for
MAX_TEXT = 2000       # the longest sentence or probe text, in characters
MAX_SHUFFLES = 500


class BadRequest(LexprobeError):
    """A request whose parameters are missing or malformed: HTTP 400."""


_ABSOLUTE = re.compile(r"(?<![\w.~/])/(?!/)(?:[^\s'\",;()/]+/)*([^\s'\",;():/]*)")


def public_text(text: str, places: Mapping[str, str]) -> str:
    """``text`` without absolute paths: each folder of ``places`` (path -> what to show instead, "" for nothing)
    is cut from the paths under it (``<home>/glove/manifest.json`` -> ``glove/manifest.json``), any other path
    on this machine's disks (its first folder exists) is cut to its last name; URL paths (``/api/sql``) stay."""
    for place in sorted(places, key=len, reverse=True):
        shown = places[place]
        text = text.replace(place.rstrip("/") + "/", f"{shown}/" if shown else "")
        text = text.replace(place.rstrip("/"), shown or ".")

    def cut(match: re.Match) -> str:
        first = match.group(0)[1:].split("/", 1)[0]
        return (match.group(1) or ".") if first and os.path.exists("/" + first) else match.group(0)

    return _ABSOLUTE.sub(cut, text)


def served_models(names: Sequence[str]) -> tuple[str, ...]:
    """The masked LMs a server may run, checked at start: names, not empty; not a GGUF model (a causal LM here,
    and converted into the cache on first use: a write)."""
    out = []
    for name in names:
        name = name.strip()
        if not name:
            raise LexprobeError("--model: an empty model name")
        if name == DEFAULT_CAUSAL or name.lower().endswith(".gguf"):
            raise LexprobeError(f"--model {name}: a GGUF causal LM; /api/probe runs masked language models "
                                f"(e.g. {DEFAULT_MLM})")
        if name not in out:
            out.append(name)
    return tuple(out)


# ------------------------------------------------------------------------------------------ parameters


def text(params: Mapping[str, str], name: str, *, default: str | None = None, limit: int = 200) -> str:
    """A required (or defaulted) text parameter, stripped, at most ``limit`` characters."""
    value = params.get(name)
    value = value.strip() if value is not None else ""
    if not value:
        if default is not None:
            return default
        raise BadRequest(f"missing parameter {name!r}")
    if len(value) > limit:
        raise BadRequest(f"parameter {name!r} is longer than {limit} characters")
    return value


def integer(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    """An integer parameter in [low, high]."""
    raw = params.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(f"parameter {name!r} must be an integer, not {raw[:40]!r}") from None
    if not low <= value <= high:
        raise BadRequest(f"parameter {name!r} must be between {low} and {high}, not {value}")
    return value


def choice(params: Mapping[str, str], name: str, options: tuple[str, ...], default: str) -> str:
    value = text(params, name, default=default)
    if value not in options:
        raise BadRequest(f"parameter {name!r} must be one of {', '.join(options)}, not {value[:40]!r}")
    return value


def flag(params: Mapping[str, str], name: str) -> bool:
    value = text(params, name, default="0").lower()
    if value not in ("0", "1", "true", "false", "yes", "no"):
        raise BadRequest(f"parameter {name!r} must be 0 or 1, not {value[:40]!r}")
    return value in ("1", "true", "yes")


# ------------------------------------------------------------------------------------------- the service


class Service:
    """The endpoints over one index home, with the indexes and models this process holds."""

    def __init__(self, home, *, data_places=None, models: Sequence[str] = (DEFAULT_MLM,)):
        self.indexes = OpenIndexes(home)
        self.models = Models()
        self.served = served_models(models)
        self.data_places = [Path(p) for p in data_places] if data_places is not None else [
            datahome.data_home(), datahome.shared_data()]
        self._relations: dict[tuple, list] = {}
        self._relations_lock = threading.Lock()
        places = {str(Path(home)): "", str(Path(home).resolve()): ""}
        for place in self.data_places:
            places.update({str(place): "<data>", str(place.resolve()): "<data>"})
        self.places = {k: v for k, v in places.items() if k not in ("", "/", ".")}

    def public(self, text: str) -> str:
        """``text`` as a client may see it: no absolute path (:func:`public_text`)."""
        return public_text(text, self.places)

    def preload(self) -> None:
        """Load every served model now (``lexprobe serve`` does, before it answers): a model that cannot be loaded
        stops the start with one line, and the first probe is as fast as the others."""
        for name in self.served:
            self._masked_lm(name)

    def _masked_lm(self, name: str):
        return self.models.get(("mlm", name), lambda: MaskedLM.load(name))

    # -------------------------------------------------------------------------------------- indexes

    def list_indexes(self, params: Mapping[str, str]) -> dict:
        """``GET /api/indexes``: name, kind, count, dim, source (a path cut to its file name), created of every
        index (``index list``); an index that cannot be read is listed with its ``error``."""
        rows = []
        for name in self.indexes.names():
            try:
                m = Store.open(self.indexes.home / name, verify=False).manifest
                rows.append({"name": name, "kind": m["kind"], "count": m["count"], "dim": m["dim"],
                             "source": self.public(m["source"]), "created": m["created"]})
            except (LexprobeError, OSError, KeyError, TypeError, ValueError) as exc:  # one bad index hides none
                rows.append({"name": name, "kind": None, "error": self.public(str(exc) or type(exc).__name__)})
        return {"indexes": rows}

    def _words(self, params: Mapping[str, str]) -> WordIndex:
        return self.indexes.get(text(params, "index"), WordIndex)

    @staticmethod
    def _known(index: WordIndex, word: str) -> str:
        if word not in index.word_to_id:
            raise NotFound(f"unknown word {word!r} (not in index {index.name!r})")
        return word

    # ------------------------------------------------------------------------------------ neighbours

    def neighbors(self, params: Mapping[str, str]) -> dict:
        """``GET /api/neighbors?index=&word=&k=``: the k nearest words by cosine, the word itself excluded."""
        index = self._words(params)
        word = self._known(index, text(params, "word"))
        k = integer(params, "k", 10, 1, MAX_K)
        return {"index": index.name, "word": word, "k": k, "rows": index.neighbors([word], k).to_pylist()}

    # --------------------------------------------------------------------------------------- analogy

    def analogy(self, params: Mapping[str, str]) -> dict:
        """``GET /api/analogy?index=&a=&a_star=&b=&k=&method=&honest=``: a:a*::b:? (3CosAdd, 3CosMul or
        PairDirection); a, a* and b are excluded from the answers unless ``honest=1``."""
        index = self._words(params)
        a, a_star, b = (self._known(index, text(params, p)) for p in ("a", "a_star", "b"))
        k = integer(params, "k", 5, 1, MAX_K)
        method = choice(params, "method", METHODS, "add")
        honest = flag(params, "honest")
        rows = [{"a": a, "a_star": a_star, "b": b, "rank": r, "word": word, "score": score}
                for r, (word, score) in enumerate(index.analogy(a, a_star, b, k=k, method=method,
                                                                exclude_inputs=not honest), 1)]
        return {"index": index.name, "method": method, "honest": honest, "k": k, "rows": rows}

    # --------------------------------------------------------------------------------------- offsets

    def _dataset_spec(self, name: str) -> str:
        if name not in DATASET_KINDS:
            raise NotFound(f"unknown dataset {name!r} (choose from {', '.join(DATASET_KINDS)})")
        hit = datahome.find(name, self.data_places)
        if hit is None:
            packaged = datahome.packaged_copy(name)
            if packaged is None:
                raise NotFound(f"dataset {name!r} is not on this server: {datahome.fetch_hint(name)}")
            return f"{name}:{packaged[0]}"
        return f"{name}:{hit[0]}"

    def _relations_of(self, index: WordIndex, dataset: str, lowercase: bool) -> list:
        """The dataset's relations with the index's out-of-vocabulary policy applied, cached per index version."""
        key = (index.name, index.store.manifest["version_id"], dataset, lowercase)
        with self._relations_lock:
            cached = self._relations.get(key)
        if cached is None:
            cached, _ = apply_vocab(read_dataset(self._dataset_spec(dataset), lowercase=lowercase), index.word_to_id)
            with self._relations_lock:
                self._relations = {k: v for k, v in self._relations.items() if k[:2] != key[:2]}
                self._relations[key] = cached
        return cached

    def offsets(self, params: Mapping[str, str]) -> dict:
        """``GET /api/offsets?index=&dataset=&relation=&lowercase=&shuffles=&seed=``: OCS and PCS of one relation
        (as ``query offsets``) and a 2-D view of its unit offset vectors; without ``relation``, the dataset's
        relations.

        The view projects the unit offsets ``o_i`` onto the plane of their first two principal axes taken
        through the origin (the top two right singular vectors of the uncentred matrix), so an arrow from the
        origin to each point is the offset's direction: a concentrated relation (high OCS) is a tight fan along
        the first axis. The offsets of the first shuffled set of the PCS are projected onto the same plane.
        """
        index = self._words(params)
        dataset = text(params, "dataset")
        lowercase = flag(params, "lowercase")
        relations = self._relations_of(index, dataset, lowercase)
        wanted = params.get("relation", "").strip()
        if not wanted:
            return {"index": index.name, "dataset": dataset,
                    "relations": [{"relation": r.name, "code": r.code, "category": r.category, "n_pairs": len(r.pairs)}
                                  for r in relations]}
        found = [r for r in relations if wanted == r.name or wanted.upper() == r.code]
        if not found:
            raise NotFound(f"dataset {dataset!r} has no relation {wanted[:80]!r} (relations: "
                           f"{', '.join(r.code for r in relations)})")
        rel = found[0]
        n_shuffles = integer(params, "shuffles", 50, 1, MAX_SHUFFLES)
        seed = integer(params, "seed", 0, 0, 2 ** 31 - 1)
        starts, ends = index.ids(rel.starts), index.ids(rel.ends)
        scores = score_pairs(index, rel.name, starts, ends, n_shuffles=n_shuffles, seed=seed)
        keep = starts != ends  # score_pairs leaves zero offsets out; so does the view
        starts, ends = starts[keep], ends[keep]
        _, unit = unit_offsets(index.raw, starts, ends)
        _, shuffled = unit_offsets(index.raw, starts, ends[scores.permutations[0]])
        axes, explained = plane_through_origin(unit)
        true_xy, shuffled_xy = unit @ axes.T, shuffled @ axes.T
        points = [{"start": index.words[s], "end": index.words[e], "x": float(x), "y": float(y)}
                  for s, e, (x, y) in zip(starts, ends, true_xy)]
        shuffled_points = [{"start": index.words[s], "end": index.words[e], "x": float(x), "y": float(y)}
                           for s, e, (x, y) in zip(starts, ends[scores.permutations[0]], shuffled_xy)]
        return {"index": index.name, "dataset": dataset, "relation": rel.name, "category": rel.category,
                "n_pairs": scores.n_pairs, "ocs": scores.ocs, "pcs": scores.pcs, "shuffles": n_shuffles, "seed": seed,
                "explained": [float(e) for e in explained], "points": points, "shuffled": shuffled_points}

    # ---------------------------------------------------------------------------------------- senses

    def senses(self, params: Mapping[str, str]) -> dict:
        """``GET /api/senses?index=&sentence=&target=&k=&occurrence=&definitions=``: embed the target in the
        sentence with the token index's model, layers and pooling, and rank the index's instances of its lemma by
        cosine (``query senses``: each row's sentence has its target marked ``[[...]]``). ``query`` is the query
        sentence marked the same way; ``note`` says when the index had no instance of the lemma (all ranked)."""
        index = self.indexes.get(text(params, "index"), TokenIndex)
        sentence = text(params, "sentence", limit=MAX_TEXT)
        target = text(params, "target")
        k = integer(params, "k", 10, 1, MAX_K)
        occurrence = integer(params, "occurrence", 1, 1, 1000)
        definitions = flag(params, "definitions")
        settings = index.settings
        key = ("encoder", settings["model"], tuple(settings["layers"]), settings["pooling"])
        encoder, lock = self.models.get(key, index.encoder)
        with lock:  # one encoder per model for the whole process
            table = index.query(sentence, target, k, occurrence=occurrence, definitions=definitions, encoder=encoder)
        meta = {key.decode(): value.decode() for key, value in (table.schema.metadata or {}).items()}
        return {"index": index.name, "query": meta.get("query", ""), "note": meta.get("note", ""),
                "k": k, "rows": table.to_pylist()}

    # ----------------------------------------------------------------------------------------- probe

    def probe(self, params: Mapping[str, str]) -> dict:
        """``GET /api/probe?model=&text=&k=``: the masked LM's top-k tokens for the one blank ``___`` of the text;
        ``model`` is one of the served models (default: the first)."""
        if not self.served:
            raise BadRequest("no model is served here: start the server with --model NAME (e.g. "
                             f"--model {DEFAULT_MLM})")
        model = text(params, "model", default=self.served[0])
        if model not in self.served:
            raise BadRequest(f"model {model[:80]!r} is not served here (served: {', '.join(self.served)}); start "
                             f"the server with --model {model[:80]} to serve it")
        sentence = text(params, "text", limit=MAX_TEXT)
        k = integer(params, "k", 10, 1, MAX_K)
        lm, lock = self._masked_lm(model)
        with lock:
            rows = top_predictions(lm, sentence, min(k, lm.vocab_size))
        return {"model": model, "text": sentence, "k": k, "rows": rows}


def plane_through_origin(unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(2, d) orthonormal axes of the plane through the origin closest to the rows of ``unit`` (least squares:
    the top two right singular vectors), and the share of the rows' squared length each axis holds. The first
    axis is turned to point along the rows' mean, so that a concentrated set points right."""
    unit = np.asarray(unit, dtype=np.float64)
    _, s, vt = np.linalg.svd(unit, full_matrices=False)
    axes = vt[:2].copy()
    if len(axes) < 2:  # fewer than two rows or dimensions: pad with a zero axis
        axes = np.vstack([axes, np.zeros((2 - len(axes), unit.shape[1]))])
    if axes[0] @ unit.mean(axis=0) < 0:
        axes[0] = -axes[0]
    total = float((s ** 2).sum()) or 1.0
    explained = np.zeros(2)
    explained[: min(2, len(s))] = (s[:2] ** 2) / total
    return axes, explained
