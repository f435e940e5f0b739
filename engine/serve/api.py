"""The JSON API: one function per endpoint, from the request's query parameters to a plain dict.

Rows carry the CLI's field names (``query neighbors``: query, rank, word, score; ``query analogy``: a, a_star, b,
rank, word, score; ``query offsets``: relation, n_pairs, ocs, pcs; ``query senses``: rank, score, sense, lemma, pos,
sentence, instance_id; ``query probe``: rank, token, probability); ``/api/projection`` draws a view's points in 2-D
(:mod:`.projection`). :data:`ENDPOINTS` documents every endpoint once: the app routes from it, exports each
answer's table as CSV from it and serves it as an OpenAPI document (:func:`openapi`). Bad input raises
:class:`BadRequest` (HTTP 400), something named that does not exist :class:`~.opened.NotFound` (404); the app
turns both into ``{"error": ...}``. Nothing here writes, and there is no SQL: every answer comes from the library's
own queries. The masked LMs ``/api/probe`` may run are the ones the server was started with (``models``): a
request names one of them or gets a 400, so no request loads a model from a path or converts one (a GGUF file is
dequantised into the cache on first use, a write). No answer holds an absolute path (:func:`public_text`): the
client learns names, not the layout of the server's disks.
"""

from __future__ import annotations

import csv
import io
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..kinds.analogy_queries import METHODS
from ..analogies.offset_consistency import score_pairs, unit_offsets
from ..rare_words.cloze_queries import top_predictions
from ..rare_words.language_models import MaskedLM
from ..core.errors import LexprobeError
from ..core.store import Store
from ..kinds.tokens import TokenIndex, mark
from ..kinds.words import WordIndex
from ..sources import datahome
from ..sources.datasets.analogy_sets import DATASET_KINDS, read_dataset
from ..sources.datasets.bats import apply_vocab
from ..sources.models import DEFAULT_CAUSAL, DEFAULT_MLM
from . import projection
from .opened import Models, NotFound, OpenIndexes, warm_kernels

MAX_K = 1000          # the most results one request may ask for
MAX_TEXT = 2000       # the longest sentence or probe text, in characters
MAX_SHUFFLES = 500
MAX_LIST = 20_000     # the longest word or pair list or metadata file, in characters (1000 words of 20)
MAX_COLUMNS = 20      # the most metadata columns besides the label
VIEWS = ("words", "neighbors", "relation", "senses", "inserted")
INSERTED = ("ota", "am")  # the origins of words inserted into a words index (lexprobe ota/am --into)
# frequency buckets of a words index's row order (its rank column: frequency rank in GloVe, word2vec and fastText
# files, which list words by falling frequency); an inserted word (rank 0) has none
FREQUENCY_BUCKETS = ((1_000, "top 1k"), (10_000, "1k-10k"), (100_000, "10k-100k"))


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


def real(params: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    """A number parameter in [low, high]."""
    raw = params.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise BadRequest(f"parameter {name!r} must be a number, not {raw[:40]!r}") from None
    if not low <= value <= high:  # NaN fails too
        raise BadRequest(f"parameter {name!r} must be between {low:g} and {high:g}, not {raw[:40]}")
    return value


def word_list(params: Mapping[str, str], name: str) -> list[str]:
    """The distinct words of a comma-, space- or newline-separated list, in their order."""
    words = [w for w in re.split(r"[,\s]+", text(params, name, limit=MAX_LIST)) if w]
    return list(dict.fromkeys(words))


def pair_list(params: Mapping[str, str], name: str) -> list[tuple[str, str]]:
    """Pairs from lines ``start end`` (two words separated by spaces, a tab or a comma); blank lines skipped."""
    pairs = []
    for number, line in enumerate(text(params, name, limit=MAX_LIST).splitlines(), 1):
        fields = [f for f in re.split(r"[,\s]+", line) if f]
        if not fields:
            continue
        if len(fields) != 2:
            raise BadRequest(f"parameter {name!r}, line {number}: expected two words 'start end', not "
                             f"{line.strip()[:80]!r}")
        pairs.append((fields[0], fields[1]))
    return list(dict.fromkeys(pairs))


def metadata_table(params: Mapping[str, str], name: str) -> tuple[list[str], dict[str, dict]]:
    """A user's metadata file (CSV, or TSV when its header has a tab): a header row naming the label column and up
    to :data:`MAX_COLUMNS` more, then one row per label. Returns the columns besides the label and each label's
    values by column (an empty cell None; a label given twice keeps its first row); no file: ``([], {})``."""
    raw = text(params, name, default="", limit=MAX_LIST)
    if not raw:
        return [], {}
    reader = csv.reader(io.StringIO(raw), delimiter="\t" if "\t" in raw.splitlines()[0] else ",")
    header = [h.strip() for h in next(reader)]
    if len(header) < 2 or not all(header) or len(set(header)) < len(header) or len(header) > MAX_COLUMNS + 1:
        raise BadRequest(f"parameter {name!r}: the header row must name the label column and 1 to {MAX_COLUMNS} more "
                         f"columns, each once (e.g. word,category), not {','.join(header)[:80]!r}")
    rows: dict[str, dict] = {}
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise BadRequest(f"parameter {name!r}, line {reader.line_num}: {len(row)} fields where the header has "
                             f"{len(header)}")
        rows.setdefault(row[0].strip(), {h: cell.strip() or None for h, cell in zip(header[1:], row[1:])})
    return header[1:], rows


def check_size(n: int, method: str, what: str) -> None:
    """A 400 when ``n`` points are more than ``method`` projects in one request (:data:`.projection.MAX_POINTS`)."""
    cap = projection.MAX_POINTS[method]
    if n > cap:
        bigger = f" or use pca (up to {projection.MAX_POINTS['pca']})" if cap < projection.MAX_POINTS["pca"] else ""
        raise BadRequest(f"too many points for {method}: {what}, more than its cap of {cap} (MAX_POINTS); ask for "
                         f"fewer{bigger}")


def frequency_bucket(rank: int) -> str | None:
    """The bucket of a 1-based frequency rank (:data:`FREQUENCY_BUCKETS`); None for rank 0 (an inserted word)."""
    if rank < 1:
        return None
    return next((label for top, label in FREQUENCY_BUCKETS if rank <= top), "100k+")


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
        self._relations: dict[tuple, tuple[list, list]] = {}
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

    def warm(self) -> dict:
        """Before the first request: the search kernels compiled or loaded (:func:`~.opened.warm_kernels`), then
        every words index of the home opened and searched once, so that its exact searcher (the int8 copy of its
        vectors) is built too. An index that cannot be opened is left for its requests to report. Returns the
        seconds, the kernels and the indexes warmed."""
        t0 = time.perf_counter()
        done = warm_kernels()
        opened = []
        for name in self.indexes.names():
            try:
                if Store.open(self.indexes.home / name, verify=False).manifest["kind"] != WordIndex.kind:
                    continue
                index = self.indexes.get(name, WordIndex)
                index.searcher.search(np.full((1, index.dim), index.dim ** -0.5, np.float32), 1)
                opened.append(name)
            except (LexprobeError, OSError, KeyError, TypeError, ValueError):
                continue
        return {**done, "indexes": opened, "seconds": time.perf_counter() - t0}

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
        """``word``, or a 404 with the CLI's suggestion (the case the index has: ``try 'king'``)."""
        if word not in index.word_to_id:
            s = index.suggestion(word)
            raise NotFound(f"unknown word {word!r} (not in index {index.name!r}{f'; try {s!r}' if s else ''})")
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
        path = datahome.find_or_packaged(name, self.data_places)
        if path is None:
            raise NotFound(f"dataset {name!r} is not on this server: {datahome.fetch_hint(name)}")
        return f"{name}:{path}"

    def _relations_of(self, index: WordIndex, dataset: str, lowercase: bool) -> list:
        """The dataset's relations with the index's out-of-vocabulary policy applied, cached per index version."""
        return self._dataset_of(index, dataset, lowercase)[0]

    def _dataset_of(self, index: WordIndex, dataset: str, lowercase: bool) -> tuple[list, list]:
        """:meth:`_relations_of` and what the policy did to each relation (its dropped words)."""
        key = (index.name, index.store.manifest["version_id"], dataset, lowercase)
        with self._relations_lock:
            cached = self._relations.get(key)
        if cached is None:
            cached = apply_vocab(read_dataset(self._dataset_spec(dataset), lowercase=lowercase), index.word_to_id)
            with self._relations_lock:
                # an index's older versions are dropped (inserts would grow the cache without end); the same
                # version's other datasets and other indexes stay
                self._relations = {k: v for k, v in self._relations.items() if k[0] != key[0] or k[1] == key[1]}
                self._relations[key] = cached
        return cached

    @staticmethod
    def _relation(relations: list, dataset: str, wanted: str):
        """The relation named ``wanted`` (its name, or its code in any case)."""
        found = [r for r in relations if wanted == r.name or wanted.upper() == r.code]
        if not found:
            raise NotFound(f"dataset {dataset!r} has no relation {wanted[:80]!r} (relations: "
                           f"{', '.join(r.code for r in relations)})")
        return found[0]

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
        rel = self._relation(relations, dataset, wanted)
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

    # ------------------------------------------------------------------------------------ projection

    def projection(self, params: Mapping[str, str]) -> dict:
        """``GET /api/projection?index=&view=&method=&seed=&...``: a 2-D projection (:mod:`.projection`: PCA, t-SNE
        or UMAP of the vectors' directions) of one view's points, each with its label, x, y, group, origin, score
        (cosine to the query where there is one), gloss and frequency bucket:

        - ``words``: the words of ``words=`` (comma-, space- or newline-separated); group ``word``;
        - ``neighbors``: ``word=`` and its ``k=`` nearest words; group ``query`` / ``neighbor``;
        - ``relation``: the pairs of ``dataset=&relation=`` (as ``offsets``) or of ``pairs=`` (lines ``start end``);
          group ``start`` / ``end``; ``edges`` holds one ``[start, end]`` pair of point numbers per pair;
        - ``senses`` (a token index): the instances of ``lemma=``, group = their sense key, with the WordNet gloss
          when ``definitions=1``; the label is the target in a few words of its sentence;
        - ``inserted``: the words inserted into the index by ``ota`` or ``am`` (group = that origin) and each
          one's ``k=`` nearest original words (group = their origin, score = cosine to the inserted word).

        ``method=axes`` places each point by its cosine with two directions (:meth:`_axis`: ``x_axis=man->woman``,
        ``y_axis=bats:I01``), listed in ``axes``. ``metadata=`` (a CSV or TSV file's text, :func:`metadata_table`)
        gives each point the ``metadata`` of its label (null where the file lacks it); ``metadata_columns`` names
        them. Words the index lacks are listed in ``unknown`` (``suggestions``: the case the index has, as the CLI
        suggests); fewer than two known points (three for UMAP, one for axes) is a 400, and so is a set larger than
        the method's :data:`~.projection.MAX_POINTS`."""
        view = choice(params, "view", VIEWS, "words")
        method = choice(params, "method", projection.METHODS, "pca")
        seed = integer(params, "seed", 0, 0, 2 ** 31 - 1)
        perplexity = real(params, "perplexity", projection.PERPLEXITY, 1, 100)
        n_neighbors = integer(params, "n_neighbors", projection.N_NEIGHBORS, 2, 200)
        columns, metadata = metadata_table(params, "metadata")
        if view == "senses":
            if method == "axes":
                raise BadRequest("method axes takes word axes of a words index; the senses view projects a token "
                                 "index (use pca, tsne or umap)")
            index = self.indexes.get(text(params, "index"), TokenIndex)
            labels, matrix, meta, edges, unknown = self._sense_points(index, params, method)
            suggestions = {}
        else:
            index = self._words(params)
            labels, matrix, meta, edges, unknown = getattr(self, f"_{view}_points")(index, params, method)
            suggestions = {w: s for w in unknown[:MAX_K] if (s := index.suggestion(w))}
        axes = [self._axis(index, params, name) for name in ("x_axis", "y_axis")] if method == "axes" else []
        check_size(len(labels), method, f"{len(labels)} points")
        needed = projection.MIN_POINTS[method]
        if len(labels) < needed:
            missing = f" (not in index {index.name!r}: {', '.join(map(repr, unknown[:10]))})" if unknown else ""
            raise BadRequest(f"{method} needs at least {needed} points; this {view} view has {len(labels)}{missing}")
        coords, library, explained = projection.project(
            matrix, method, seed, perplexity=perplexity, n_neighbors=n_neighbors,
            axes=np.stack([direction for direction, _ in axes]) if axes else None)
        points = [{"label": label, "x": float(x), "y": float(y), **m}
                  for label, (x, y), m in zip(labels, coords, meta)]
        if columns:
            for point in points:
                point["metadata"] = metadata.get(point["label"])
        about = [info for _, info in axes]
        if axes:
            x, y = (direction / np.linalg.norm(direction) for direction, _ in axes)
            about[1]["cosine_to_x"] = float(x @ y)
        return {"index": index.name, "view": view, "method": method, "library": library, "seed": seed,
                "n": len(points), "points": points, "edges": edges, "unknown": unknown, "suggestions": suggestions,
                "explained": explained, "axes": about, "metadata_columns": columns}

    def _axis(self, index: WordIndex, params: Mapping[str, str], name: str) -> tuple[np.ndarray, dict]:
        """The direction of one word axis and what it is: ``FROM->TO`` is the unit offset of a word pair, and
        ``DATASET:RELATION`` (``bats:I01``) the mean of the relation's unit offsets (OCS's offsets, the pairs the
        index has; ``lowercase=1`` lowercases the dataset). A zero direction is a 400."""
        spec = text(params, name)
        if "->" in spec:
            start, _, end = (part.strip() for part in spec.partition("->"))
            if not start or not end:
                raise BadRequest(f"parameter {name!r}: a word each side of '->' (e.g. man->woman), not {spec[:80]!r}")
            pairs = [(self._known(index, start), self._known(index, end))]
        elif ":" in spec:
            dataset, _, wanted = (part.strip() for part in spec.partition(":"))
            rel = self._relation(self._relations_of(index, dataset, flag(params, "lowercase")), dataset, wanted)
            pairs = [(s, e) for s, e in zip(rel.starts, rel.ends) if s != e]
        else:
            raise BadRequest(f"parameter {name!r} must be FROM->TO (two words, e.g. man->woman) or DATASET:RELATION "
                             f"(e.g. bats:I01), not {spec[:80]!r}")
        starts, ends = index.ids([s for s, _ in pairs]), index.ids([e for _, e in pairs])
        keep = np.any(index.raw_of(starts) != index.raw_of(ends), axis=1) if len(pairs) else np.zeros(0, bool)
        direction = unit_offsets(index.raw, starts[keep], ends[keep])[1].mean(axis=0) if keep.any() else None
        if direction is None or not np.linalg.norm(direction) > 0:
            raise BadRequest(f"parameter {name!r}: {spec[:80]!r} gives no direction (no pair of two different "
                             "vectors)")
        return direction, {"axis": name[0], "spec": spec, "pairs": int(keep.sum())}

    @staticmethod
    def _word_meta(index: WordIndex, ids: np.ndarray, groups: Sequence[str], scores: Sequence) -> list[dict]:
        """Group, origin (the index's origin column), score, gloss (none for words) and frequency bucket."""
        take = pa.array(np.asarray(ids, dtype=np.int64))
        origins = index.store.column("origin").take(take).to_pylist()
        ranks = index.store.column("rank").take(take).to_pylist()
        return [{"group": g, "origin": o, "score": None if s is None else float(s), "gloss": None,
                 "frequency_bucket": frequency_bucket(r)} for g, o, s, r in zip(groups, origins, scores, ranks)]

    @staticmethod
    def _split_known(index: WordIndex, words: list[str]) -> tuple[list[str], list[str]]:
        """The words the index has and those it lacks, each in the given order."""
        known = index.known(words)
        return [w for w in words if w in known], [w for w in words if w not in known]

    def _words_points(self, index: WordIndex, params: Mapping[str, str], method: str):
        words = word_list(params, "words")
        check_size(len(words), method, f"{len(words)} words")
        known, unknown = self._split_known(index, words)
        ids = index.ids(known)
        return known, index.raw_of(ids), self._word_meta(index, ids, ["word"] * len(known), [None] * len(known)), \
            [], unknown

    def _neighbors_points(self, index: WordIndex, params: Mapping[str, str], method: str):
        word = text(params, "word")
        k = integer(params, "k", 10, 1, MAX_K)
        check_size(k + 1, method, f"a word and its {k} neighbours")
        if word not in index:
            return [], np.zeros((0, index.dim), np.float32), [], [], [word]
        table = index.neighbors([word], k)
        words = [word] + table.column("word").to_pylist()
        ids = index.ids(words)
        meta = self._word_meta(index, ids, ["query"] + ["neighbor"] * len(table),
                               [1.0] + table.column("score").to_pylist())
        return words, index.raw_of(ids), meta, [], []

    def _relation_points(self, index: WordIndex, params: Mapping[str, str], method: str):
        if params.get("pairs", "").strip():
            pairs = pair_list(params, "pairs")
            words = list(dict.fromkeys(w for pair in pairs for w in pair))
            check_size(len(words), method, f"{len(words)} words in {len(pairs)} pairs")
            known, unknown = self._split_known(index, words)
            known = set(known)
            pairs = [(s, e) for s, e in pairs if s in known and e in known and s != e]
        else:
            dataset = text(params, "dataset")
            relations, coverage = self._dataset_of(index, dataset, flag(params, "lowercase"))
            rel = self._relation(relations, dataset, text(params, "relation"))
            pairs = [(s, e) for s, e in zip(rel.starts, rel.ends) if s != e]
            unknown = next(c.dropped_words for c in coverage if c.relation == rel.name)
        position: dict[str, int] = {}
        groups = []
        for start, end in pairs:
            for word, role in ((start, "start"), (end, "end")):
                if word not in position:
                    position[word] = len(position)
                    groups.append(role)
        words = list(position)
        check_size(len(words), method, f"{len(words)} words in {len(pairs)} pairs")
        ids = index.ids(words)
        edges = [[position[s], position[e]] for s, e in pairs]
        return words, index.raw_of(ids), self._word_meta(index, ids, groups, [None] * len(words)), edges, unknown

    def _inserted_points(self, index: WordIndex, params: Mapping[str, str], method: str):
        k = integer(params, "k", 5, 1, MAX_K)
        column = index.store.column("origin")
        mask = pc.is_in(column, value_set=pa.array(INSERTED, pa.string())).to_numpy(zero_copy_only=False)
        inserted = np.flatnonzero(mask & ~index.dead_rows())
        if not len(inserted):
            raise BadRequest(f"index {index.name!r} has no inserted words (origin ota or am: 'lexprobe ota --into' "
                             f"or 'lexprobe am --into' adds them)")
        check_size(len(inserted), method, f"{len(inserted)} inserted words")
        scores, found = index.searcher.search(index.unit_of(inserted), k, exclude=np.tile(inserted, (len(inserted), 1)))
        best: dict[int, float] = {}
        for row_ids, row_scores in zip(found, scores):
            for i, score in zip(row_ids.tolist(), row_scores.tolist()):
                if i >= 0:
                    best[i] = max(best.get(i, -np.inf), score)
        ids = np.concatenate([inserted, np.fromiter(best, dtype=np.int64, count=len(best))])
        check_size(len(ids), method, f"{len(inserted)} inserted words and {len(best)} neighbours")
        words = index.words_at(ids)
        origins = index.store.column("origin").take(pa.array(ids)).to_pylist()
        meta = self._word_meta(index, ids, origins, [None] * len(inserted) + list(best.values()))
        return words, index.raw_of(ids), meta, [], []

    def _sense_points(self, index: TokenIndex, params: Mapping[str, str], method: str):
        lemma = text(params, "lemma")
        definitions = flag(params, "definitions")
        rows = np.flatnonzero(index.table.column("lemma").to_numpy(zero_copy_only=False) == lemma)
        if not len(rows):
            raise NotFound(f"index {index.name!r} has no instance of lemma {lemma[:80]!r}")
        check_size(len(rows), method, f"{len(rows)} instances of {lemma!r}")
        hits = index.table.take(pa.array(rows))
        senses = hits.column("sense").to_pylist()
        glosses = [None] * len(rows)
        if definitions:
            from ..sources.wordnet import definition, load_wordnet

            wordnet = load_wordnet(index.store.path.parent)
            glosses = [definition(wordnet, key) for key in senses]
        labels = [context(words, p, n) for words, p, n in zip(index.words_of(hits.column("sentence_id").to_pylist()),
                                                               hits.column("position").to_pylist(),
                                                               hits.column("length").to_pylist())]
        meta = [{"group": sense, "origin": corpus, "score": None, "gloss": gloss, "frequency_bucket": None}
                for sense, corpus, gloss in zip(senses, hits.column("corpus").to_pylist(), glosses)]
        return labels, index.raw[rows], meta, [], []

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


def context(words: Sequence[str], position: int, length: int, width: int = 3) -> str:
    """The target with ``width`` words each side, marked as the senses rows mark it (``... the [[bank]] of the
    ...``): a label short enough for a scatter plot."""
    start, end = max(0, position - width), min(len(words), position + length + width)
    return " ".join((["..."] if start else []) + [mark(words[start:end], position - start, length)]
                    + (["..."] if end < len(words) else []))


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


# ------------------------------------------------------------------------ the endpoints, documented once
# One table: the app routes from it, the CSV export takes each answer's rows and columns from it, and
# /api/openapi.json is generated from it (:func:`openapi`); tests check the live app against that document.


@dataclass(frozen=True)
class Param:
    """One query parameter as a client sees it (type, bounds, default) in the OpenAPI document."""

    name: str
    about: str
    type: str = "string"          # string, integer or number
    required: bool = False
    default: object = None
    enum: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = 200  # text parameters are cut at 200 characters unless said otherwise


@dataclass(frozen=True)
class Endpoint:
    """``GET /api/<path>`` answered by ``Service.<method>``; ``rows``: the keys of the answer holding its table
    (the first one present), ``fields``: each row's columns and their JSON types; ``answer``: the other keys."""

    path: str
    method: str
    summary: str
    params: tuple[Param, ...]
    rows: tuple[str, ...]
    fields: dict
    answer: dict


FLAG = ("0", "1", "true", "false", "yes", "no")
_S, _I, _N = {"type": "string"}, {"type": "integer"}, {"type": "number"}
_NS, _SN = {"type": ["number", "null"]}, {"type": ["string", "null"]}
_FORMAT = Param("format", "json, or csv: the answer's rows as a CSV file (header row; the same values; empty for null)",
                default="json", enum=("json", "csv"))
_INDEX = Param("index", "an index of the server's home (GET /api/indexes)", required=True)


def _k(default: int | None) -> Param:
    return Param("k", "how many results" + ("" if default else " (neighbors view: 10; inserted view: neighbours "
                                                                "per inserted word, 5)"),
                 "integer", default=default, minimum=1, maximum=MAX_K)


def _flag(name: str, about: str) -> Param:
    return Param(name, about, default="0", enum=FLAG)


_SEED = Param("seed", "random seed", "integer", default=0, minimum=0, maximum=2 ** 31 - 1)

ENDPOINTS = (
    Endpoint("indexes", "list_indexes", "Every index of the home with its kind, count, dimension and source.",
             (_FORMAT,), ("indexes",),
             {"name": _S, "kind": _SN, "count": _I, "dim": _I, "source": _S, "created": _S, "error": _S}, {}),
    Endpoint("neighbors", "neighbors", "The k nearest words by cosine (the word itself excluded).",
             (_INDEX, Param("word", "a word of the index", required=True), _k(10), _FORMAT), ("rows",),
             {"query": _S, "rank": _I, "word": _S, "score": _N}, {"index": _S, "word": _S, "k": _I}),
    Endpoint("analogy", "analogy", "a:a*::b:? by 3CosAdd, 3CosMul or PairDirection.",
             (_INDEX, Param("a", "a", required=True), Param("a_star", "a*", required=True),
              Param("b", "b", required=True), _k(5), Param("method", "the scoring method", default="add", enum=METHODS),
              _flag("honest", "1: a, a* and b may be answers"), _FORMAT), ("rows",),
             {"a": _S, "a_star": _S, "b": _S, "rank": _I, "word": _S, "score": _N},
             {"index": _S, "method": _S, "honest": {"type": "boolean"}, "k": _I}),
    Endpoint("offsets", "offsets", "OCS and PCS of a relation and a 2-D view of its unit offsets; without relation, "
                                   "the dataset's relations.",
             (_INDEX, Param("dataset", "an analogy dataset", required=True, enum=tuple(DATASET_KINDS)),
              Param("relation", "a relation's name or code (e.g. I01)", max_length=None),
              _flag("lowercase", "1: lowercase the dataset's words"),
              Param("shuffles", "shuffled sets of the PCS", "integer", default=50, minimum=1, maximum=MAX_SHUFFLES),
              _SEED, _FORMAT), ("points", "relations"),
             {"start": _S, "end": _S, "x": _N, "y": _N, "relation": _S, "code": _S, "category": _S, "n_pairs": _I},
             {"index": _S, "dataset": _S}),
    Endpoint("senses", "senses", "Rank a token index's instances of the target's lemma for the target in a sentence.",
             (Param("index", "a token index of the server's home", required=True),
              Param("sentence", "a sentence holding the target", required=True, max_length=MAX_TEXT),
              Param("target", "the target word(s) in the sentence", required=True), _k(10),
              Param("occurrence", "which occurrence of the target", "integer", default=1, minimum=1, maximum=1000),
              _flag("definitions", "1: add each sense's WordNet gloss"), _FORMAT), ("rows",),
             {"rank": _I, "score": _N, "sense": _S, "definition": _S, "lemma": _S, "pos": _S, "sentence": _S,
              "instance_id": _S}, {"index": _S, "query": _S, "note": _S, "k": _I}),
    Endpoint("probe", "probe", "A masked LM's top-k tokens for the blank ___ of a text.",
             (Param("model", "one of the served models (default: the first)"),
              Param("text", "a text with one blank ___", required=True, max_length=MAX_TEXT), _k(10), _FORMAT),
             ("rows",), {"rank": _I, "token": _S, "probability": _N}, {"model": _S, "text": _S, "k": _I}),
    Endpoint("projection", "projection", "A 2-D projection (PCA, t-SNE, UMAP or two word axes) of one view's "
                                         "points.",
             (Param("index", "a words index (a token index for view=senses)", required=True),
              Param("view", "which points", default="words", enum=VIEWS),
              Param("method", "the projection", default="pca", enum=projection.METHODS), _SEED,
              Param("perplexity", "t-SNE's perplexity (clipped to the points less one)", "number",
                    default=projection.PERPLEXITY, minimum=1, maximum=100),
              Param("n_neighbors", "UMAP's n_neighbors (clipped to the points less one)", "integer",
                    default=projection.N_NEIGHBORS, minimum=2, maximum=200),
              Param("words", "view=words: the words, separated by commas, spaces or newlines", max_length=MAX_LIST),
              Param("word", "view=neighbors: the query word"), _k(None),
              Param("dataset", "view=relation: an analogy dataset", enum=tuple(DATASET_KINDS)),
              Param("relation", "view=relation: a relation's name or code"),
              _flag("lowercase", "view=relation: 1 lowercases the dataset's words"),
              Param("pairs", "view=relation: your own pairs, one 'start end' per line (instead of dataset and "
                             "relation)", max_length=MAX_LIST),
              Param("lemma", "view=senses: the lemma whose instances are projected"),
              _flag("definitions", "view=senses: 1 adds each sense's WordNet gloss"),
              Param("x_axis", "method=axes: the x axis, FROM->TO (a word pair, e.g. man->woman) or DATASET:RELATION "
                              "(its mean offset, e.g. bats:I01)"),
              Param("y_axis", "method=axes: the y axis, as x_axis"),
              Param("metadata", "a CSV or TSV file's text: a header row (the label column, then up to "
                                f"{MAX_COLUMNS} more), one row per label; each point gets its row as metadata",
                    max_length=MAX_LIST), _FORMAT), ("points",),
             {"label": _S, "x": _N, "y": _N, "group": _S, "origin": _SN, "score": _NS, "gloss": _SN,
              "frequency_bucket": _SN, "metadata": {"type": ["object", "null"]}},
             {"index": _S, "view": {"type": "string", "enum": list(VIEWS)},
              "method": {"type": "string", "enum": list(projection.METHODS)}, "library": _S, "seed": _I, "n": _I,
              "edges": {"type": "array", "items": {"type": "array", "items": _I, "minItems": 2, "maxItems": 2}},
              "unknown": {"type": "array", "items": _S},
              "suggestions": {"type": "object", "additionalProperties": _S},
              "explained": {"type": "array", "items": _N},
              "axes": {"type": "array", "items": {"type": "object", "properties": {
                  "axis": _S, "spec": _S, "pairs": _I, "cosine_to_x": _N}}},
              "metadata_columns": {"type": "array", "items": _S}}),
)
ENDPOINT = {e.path: e for e in ENDPOINTS}


def table_rows(endpoint: Endpoint, answer: dict) -> tuple[list[str], list[dict]]:
    """The columns and rows of an answer (its first ``rows`` key present): the columns in the rows' order, or the
    documented ones when there is no row."""
    rows = next((answer[key] for key in endpoint.rows if key in answer), [])
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if not rows:
        columns = list(endpoint.fields) if len(endpoint.rows) == 1 else []
    return columns, rows


def _param_schema(p: Param) -> dict:
    schema = {"type": p.type}
    for key, value in (("default", p.default), ("minimum", p.minimum), ("maximum", p.maximum)):
        if value is not None:
            schema[key] = value
    if p.enum:
        schema["enum"] = list(p.enum)
    elif p.type == "string":
        schema["minLength"] = 1 if p.required else 0
        if p.max_length is not None:
            schema["maxLength"] = p.max_length
    out = {"name": p.name, "in": "query", "required": p.required, "description": p.about, "schema": schema}
    if not p.required:
        out["allowEmptyValue"] = True  # an empty value is the parameter left out: its default
    return out


def openapi(version: str) -> dict:
    """The OpenAPI 3.1 document of every endpoint: parameters, the JSON answer (its table's rows typed), the CSV
    answer of ``format=csv`` and the ``{"error": ...}`` answers (400, 404, 500)."""
    error = {"description": "{\"error\": \"one clear message\"}", "content": {"application/json": {"schema": {
        "type": "object", "required": ["error"], "properties": {"error": _S}, "additionalProperties": False}}}}
    paths = {}
    for e in ENDPOINTS:
        row = {"type": "object", "properties": e.fields}
        tables = {key: {"type": "array", "items": row} for key in e.rows}
        answer = {"type": "object", "properties": {**e.answer, **tables},
                  "required": list(e.answer) + (list(e.rows) if len(e.rows) == 1 else [])}
        if len(e.rows) > 1:
            answer["anyOf"] = [{"required": [key]} for key in e.rows]
        paths[f"/api/{e.path}"] = {"get": {
            "operationId": e.path, "summary": e.summary, "parameters": [_param_schema(p) for p in e.params],
            "responses": {"200": {"description": "the answer (JSON; CSV with format=csv)", "content": {
                "application/json": {"schema": answer}, "text/csv": {"schema": {"type": "string"}}}},
                "400": error, "403": error, "404": error, "500": error,
                **({"503": error} if e.path == "projection" else {})}}}
    paths["/api/openapi.json"] = {"get": {
        "operationId": "openapi", "summary": "This document.",
        "responses": {"200": {"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {
            "type": "object", "required": ["openapi", "paths"]}}}}}}}
    return {"openapi": "3.1.0",
            "info": {"title": "lexprobe serve", "version": version,
                     "description": "The JSON API of lexprobe's web page: read-only, GET only, answering requests "
                                    "addressed to the server's own host."},
            "paths": paths}
