"""Attentive Mimicking (AM; Schick & Schuetze, "Rare words", section 3): an embedding for a word inferred from
its surface form and its contexts, trained to mimic the embeddings of known words, as the authors implemented it
(timoschick/form-context-model, which the paper used for every AM experiment).

The model, for a word w with contexts C_1..C_m (each a window of words around w):

- **Form**: the mean of learned d-dimensional embeddings of the character 3- to 5-grams of ``<S>w<S>`` (``<S>``
  counts as one character). The n-gram vocabulary holds the n-grams that occur at least 4 times over the training
  words' n-gram lists (the authors count every occurrence, so a word with a repeated n-gram counts it twice), most
  frequent first, after ``UNK`` (id 0, every unknown n-gram, and a word whose n-grams were all dropped) and
  ``PAD`` (id 1, never looked up).
- **Context vectors**: v_C, the mean of the known embeddings (rows of the target table) of the words of C other
  than w (every occurrence of w is removed); a context with no known word is dropped.
- **Attention** (``attention="clustering"``, the authors' default): s(C, C') = (M v_C).(M v_C') / sqrt(d) with M a
  d x d matrix without bias, rho(C) = sum_C' s(C, C') / (sum_C sum_C' s(C, C') + 1e-9). This is a plain
  normalisation of the summed scores, **not a softmax** (the authors' code, "match_scores_softmax" by name only):
  weights can be negative or exceed 1. The context vector is sum_C rho(C) v_C. ``attention="uniform"`` is the
  plain form-context model: every known word of every context weighs the same (the authors' ``default`` context
  weights), i.e. rho(C) = n_C / sum n_C with n_C the known words of C.
- **Gate**: alpha = sigmoid(w.[form; ctx] + b) on the untransformed context vector; the output is
  alpha * form + (1 - alpha) * A ctx with A a d x d matrix without bias. (The authors divide both weights by
  their sum + 1e-9, a factor 1 - 1e-9, left out.) A word without contexts gets its form vector (the authors'
  ``infer_vector``); its alpha is reported as NaN.
- **Training**: mean squared error (over instances and dimensions, ``tf.losses.mean_squared_error``), Adam
  (beta 0.9/0.999, eps 1e-8; dense, as TensorFlow 1's Adam updates every row of the n-gram table each step even
  from a sparse gradient; PyTorch adds eps after the bias correction, TensorFlow before: negligible at 1e-8),
  learning rate 0.01, batches of 64, 10 epochs (``train.py``'s defaults; ``epochs``
  is a parameter). Each epoch, a word with count c gives int(max(1, min(c / 100, 5))) instances; its contexts are
  shuffled and each instance takes the next randint(smin, smax) of them (inclusive), so a word's instances share
  no context within an epoch and an instance past the word's contexts is dropped (``batch_builder.py``). An
  instance left with fewer than smin contexts (the tail of a word's contexts, or a word with fewer than smin) is
  dropped too: the paper's smin is "the minimum number of sampled contexts for each training instance" (section
  3.2), where the authors' builder gave such an instance all the word has. So ``am-context`` (smin 8) never trains
  on a word with fewer than 8 usable windows; the log counts them (``below_smin``). N-gram dropout removes each
  n-gram of an instance with probability p.
- **Presets**: ``am`` (smin 1, smax 20, no dropout: the rare-words paper's AM minimum of 1 context) and
  ``am-context`` (smin 8, smax 20, n-gram dropout 0.1: section 3.2).

Choices where the paper and the code are silent or do not fit here (each a parameter of :class:`AMConfig`):

- smax 20 for both presets: ``train.py``'s default; the paper gives only the minimums.
- ``min_count`` 1: the authors train on words with at least 100 corpus occurrences (``min_word_count``) in a
  corpus of about 1e9 words; the corpora here are about 1e6 words, where 100 leaves a few hundred words. The
  count is the contexts index's ``occurrences`` (every occurrence, before deduplication and the cap).
- The n-gram vocabulary is built from the training words (the authors: every corpus word with at least 100
  occurrences, with or without an embedding).
- Shuffling: all instances of an epoch are shuffled together (the authors shuffled within 25 buckets of words and
  the buckets' order); the last, smaller batch is kept (the authors dropped it).
- An instance whose sampled contexts all lack a known word cannot occur: such contexts are dropped before
  sampling (the authors dropped them after, leaving a zero context vector).
- Initialisation: Glorot-uniform n-gram embeddings, M, A and gate weights (TensorFlow's default, as in the authors'
  graph), gate bias 0; from a torch generator seeded with ``seed``. Every random draw of an epoch (context order,
  instance sizes, n-gram dropout, instance order) comes from :func:`lexprobe.core.seeds.rng_for` (seed, epoch).

Training is batched: every context's v_C is computed once (a sparse word-count matrix times the target table),
instances are sampled with numpy, and a batch is a padded (instances x contexts x d) tensor with a mask.
:func:`train` with ``reference=True`` instead builds each batch instance by instance from the contexts' words,
as the authors' batch builder does (a padded instances x contexts x words x d tensor of word vectors); it draws
the same instances and reaches the same loss, and exists for the speed benchmark (:mod:`.bench_am`).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core.conventions import Result
from ..core.errors import LexprobeError
from ..core.progress import bar
from ..core.seeds import rng_for
from .am_targets import TargetTable, models_dir, targets_for

START, UNK_TOKEN, PAD_TOKEN = "<S>", "UNK", "PAD"
UNK, PAD = 0, 1
ATTENTIONS = ("clustering", "uniform")
PRESETS = {"am": {"smin": 1, "smax": 20, "ngram_dropout": 0.0},
           "am-context": {"smin": 8, "smax": 20, "ngram_dropout": 0.1}}
EPS = 1e-9  # the authors' constant in rho's normalisation
MODEL_KIND = "am-model"  # a trained model's folder (see :mod:`.am_store`)
WEIGHTS_FILE = "model.safetensors"


@dataclass(frozen=True)
class AMConfig:
    """Every setting of an AM model and its training (see the module doc for where each comes from)."""

    preset: str = "am"
    attention: str = "clustering"
    smin: int = 1
    smax: int = 20
    ngram_dropout: float = 0.0
    lr: float = 0.01
    batch_size: int = 64
    epochs: int = 10
    nmin: int = 3
    nmax: int = 5
    ngram_threshold: int = 4
    min_count: int = 1
    count_per_copy: int = 100
    max_copies: int = 5
    seed: int = 0

    def __post_init__(self):
        if self.attention not in ATTENTIONS:
            raise LexprobeError(f"attention must be one of {', '.join(ATTENTIONS)}, not {self.attention!r}")
        if not 1 <= self.smin <= self.smax:
            raise LexprobeError(f"contexts per instance: need 1 <= smin <= smax, not {self.smin}..{self.smax}")
        if not 0 <= self.ngram_dropout < 1:
            raise LexprobeError(f"n-gram dropout must be in [0, 1), not {self.ngram_dropout}")
        if min(self.batch_size, self.epochs, self.nmin, self.ngram_threshold, self.count_per_copy,
               self.max_copies) < 1 or self.nmax < self.nmin or not self.lr > 0:
            raise LexprobeError("AM settings: batch size, epochs, n-gram sizes, threshold and copies must be "
                                "positive (nmin <= nmax) and the learning rate above 0")

    def as_dict(self) -> dict:
        return asdict(self)


def preset(name: str = "am", **overrides) -> AMConfig:
    """The config of a preset (``am`` or ``am-context``) with any field overridden."""
    if name not in PRESETS:
        raise LexprobeError(f"unknown AM preset {name!r} (choose from {', '.join(PRESETS)})")
    return AMConfig(preset=name, **{**PRESETS[name], **overrides})


# ------------------------------------------------------------------------------------------------ n-grams


def char_ngrams(word: str, nmin: int = 3, nmax: int = 5) -> list[str]:
    """The n-grams (nmin..nmax characters) of ``<S>word<S>``, ``<S>`` one character, in the authors' order."""
    letters = [START, *word, START]
    return ["".join(letters[i:j]) for i in range(len(letters)) for j in range(i + nmin, min(len(letters), i + nmax) + 1)]


@dataclass
class NGramVocab:
    """The n-gram vocabulary: id 0 ``UNK``, id 1 ``PAD``, then the kept n-grams, most frequent first."""

    ngrams: list[str]
    nmin: int = 3
    nmax: int = 5

    def __post_init__(self):
        self.index = {g: i for i, g in enumerate(self.ngrams)}

    @classmethod
    def build(cls, words: Sequence[str], nmin: int = 3, nmax: int = 5, threshold: int = 4) -> "NGramVocab":
        return cls.from_lists([char_ngrams(w, nmin, nmax) for w in words], nmin, nmax, threshold)

    @classmethod
    def from_lists(cls, lists: Sequence[Sequence[str]], nmin: int = 3, nmax: int = 5,
                   threshold: int = 4) -> "NGramVocab":
        """The vocabulary of the words whose n-gram lists are ``lists``."""
        counts = Counter()
        for grams in lists:
            counts.update(grams)
        return cls([UNK_TOKEN, PAD_TOKEN] + [g for g, c in counts.most_common() if c >= threshold], nmin, nmax)

    def __len__(self) -> int:
        return len(self.ngrams)

    def ids(self, word: str) -> list[int]:
        """The n-gram ids of ``word`` (UNK for n-grams not in the vocabulary)."""
        return [self.index.get(g, UNK) for g in char_ngrams(word, self.nmin, self.nmax)]

    def encode(self, words: Sequence[str], lists: Sequence[Sequence[str]] | None = None):
        """The n-gram ids of many words as one flat array and offsets (word i: flat[offsets[i]:offsets[i+1]]);
        ``lists``: their n-grams when already cut."""
        get = self.index.get
        ids = [[get(g, UNK) for g in grams] for grams in (lists if lists is not None else
                                                          (char_ngrams(w, self.nmin, self.nmax) for w in words))]
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum([len(x) for x in ids], out=offsets[1:])
        flat = np.fromiter((i for x in ids for i in x), dtype=np.int64, count=int(offsets[-1]))
        return flat, offsets


def ngram_dropout(flat: np.ndarray, offsets: np.ndarray, p: float, rng: np.random.Generator):
    """Each n-gram removed with probability ``p``; a word left with none gets ``UNK`` (the authors' rule).
    Returns new (flat, offsets); unchanged when ``p`` is 0."""
    if p <= 0:
        return flat, offsets
    keep = rng.random(len(flat)) >= p
    owner = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    kept = np.bincount(owner[keep], minlength=len(offsets) - 1)
    empty = np.flatnonzero(kept == 0)
    owner = np.concatenate([owner[keep], empty])
    values = np.concatenate([flat[keep], np.full(len(empty), UNK, dtype=flat.dtype)])
    order = np.argsort(owner, kind="stable")
    counts = np.maximum(kept, 1)
    new_offsets = np.zeros_like(offsets)
    np.cumsum(counts, out=new_offsets[1:])
    return values[order], new_offsets


# ------------------------------------------------------------------------------------------ contexts


def context_vectors(windows, owners, targets: TargetTable) -> tuple[np.ndarray, np.ndarray]:
    """v_C and n_C of each window: the mean of the target vectors of its known words other than its owner word
    (every occurrence removed), and how many there are (0: no known word, v_C = 0). ``windows``: Arrow list
    arrays of strings (or lists of words); ``owners``: the word each window belongs to."""
    from scipy.sparse import csr_matrix

    windows = windows if isinstance(windows, (pa.Array, pa.ChunkedArray)) else pa.array(list(windows), pa.list_(pa.string()))
    if isinstance(windows, pa.ChunkedArray):
        windows = windows.combine_chunks() if windows.num_chunks else pa.array([], pa.list_(pa.string()))
    n = len(windows)
    vocabulary = pa.array(targets.words, pa.string())
    flat = pc.list_flatten(windows)
    parents = pc.list_parent_indices(windows).to_numpy()
    ids = pc.index_in(flat, value_set=vocabulary)
    owners = owners if isinstance(owners, pa.Array) else pa.array(list(owners), pa.string())
    owner_ids = pc.index_in(owners, value_set=vocabulary)
    known = ids.is_valid().to_numpy(zero_copy_only=False)
    cols = ids.fill_null(-1).to_numpy()
    own = owner_ids.fill_null(-2).to_numpy()[parents] if len(parents) else np.zeros(0, np.int64)
    keep = known & (cols != own)
    rows, cols = parents[keep], cols[keep]
    counts = np.bincount(rows, minlength=n).astype(np.int64)
    weights = 1.0 / counts[rows] if len(rows) else np.zeros(0)
    mean = csr_matrix((weights.astype(np.float32), (rows, cols)), shape=(n, len(targets.words)))
    return np.asarray(mean @ targets.matrix, dtype=np.float32), counts


# ----------------------------------------------------------------------------------------------- network


def _net(n_ngrams: int, dim: int, attention: str, seed: int = 0):
    """The form-context network (torch), initialised as the module doc says."""
    import torch
    from torch import nn

    class FormContextNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = attention
            self.ngrams = nn.EmbeddingBag(n_ngrams, dim, mode="mean")
            self.M = nn.Linear(dim, dim, bias=False)  # read by clustering attention only (kept in every state)
            self.gate = nn.Linear(2 * dim, 1)
            self.A = nn.Linear(dim, dim, bias=False)
            g = torch.Generator().manual_seed(int(seed))
            for weight in (self.ngrams.weight, self.M.weight, self.gate.weight, self.A.weight):
                nn.init.xavier_uniform_(weight, generator=g)
            nn.init.zeros_(self.gate.bias)

        def form(self, flat, offsets):
            return self.ngrams(flat, offsets[:-1])

        def weights(self, vectors, mask, counts):
            """rho (B, K) for contexts ``vectors`` (B, K, d) with ``mask`` (B, K) and known-word ``counts``."""
            m = mask.to(vectors.dtype)
            if self.attention == "uniform":
                w = counts.to(vectors.dtype) * m
                return w / w.sum(1, keepdim=True).clamp_min(1.0)
            q = self.M(vectors)
            s = q @ q.transpose(1, 2) / math.sqrt(vectors.shape[-1])
            s = s * m[:, None, :] * m[:, :, None]
            r = s.sum(-1) * m
            return r / (r.sum(1, keepdim=True) + EPS)

        def forward(self, flat, offsets, vectors, mask, counts):
            """(output (B, d), alpha (B,), rho (B, K)); rows without contexts get their form vector."""
            form = self.form(flat, offsets)
            rho = self.weights(vectors, mask, counts)
            ctx = (rho[..., None] * vectors).sum(1)
            alpha = torch.sigmoid(self.gate(torch.cat([form, ctx], -1))).squeeze(-1)
            out = alpha[:, None] * form + (1 - alpha)[:, None] * self.A(ctx)
            has = mask.any(1)
            return torch.where(has[:, None], out, form), alpha, rho

    return FormContextNet()


# --------------------------------------------------------------------------------------------- the model


@dataclass
class AMInference(Result):
    """What :meth:`AMModel.infer` returns, rows in the order of the words; :meth:`to_arrow`: one row a word."""

    words: list[str]
    vectors: np.ndarray        # (n, d) float32
    alpha: np.ndarray          # (n,) the form gate; NaN for a word without contexts (its vector is the form)
    rho: list[np.ndarray]      # each word's context weights, one per context it was given
    contexts: np.ndarray       # (n,) contexts used (those with a known word)

    def to_arrow(self) -> pa.Table:
        """``word, contexts, alpha, vector``."""
        from ..core.store import vector_array

        return pa.table({"word": pa.array(self.words, pa.string()), "contexts": pa.array(self.contexts, pa.int64()),
                         "alpha": pa.array(self.alpha, pa.float32(), from_pandas=True),
                         "vector": vector_array(self.vectors)})


class AMModel:
    """A trained AM model: config, n-gram vocabulary, weights and the target table its contexts are read with."""

    def __init__(self, config: AMConfig, vocab: NGramVocab, state: dict, targets: TargetTable):
        self.config, self.vocab, self.targets = config, vocab, targets
        self.name, self.meta = None, {}  # set when opened from a model folder
        self.net = _net(len(vocab), targets.dim, config.attention)
        self.net.load_state_dict(state)
        self.net.eval()

    @classmethod
    def open(cls, name: str, *, home=None, targets: TargetTable | None = None) -> "AMModel":
        """The trained model ``name`` under the home (verified), its target table (``targets`` when the caller
        has it open, else read again) checked against the SHA-256 recorded at training (a words index rebuilt
        since, or a cache removed, is an error), and each weight tensor's name and shape against the manifest."""
        from safetensors.torch import load_file

        from ..core.store import Store, check_name

        path = models_dir(home, "am") / check_name(name)
        if not (path / "manifest.json").exists():
            known = sorted(p.name for p in path.parent.glob("*") if (p / "manifest.json").exists())
            raise LexprobeError(f"{path}: no AM model named {name!r} (AM models: {', '.join(known) or 'none'}; "
                                "train one with lexprobe am train)")
        store = Store.open(path)
        if store.kind != MODEL_KIND:
            raise LexprobeError(f"{path}: not an AM model (kind {store.kind!r})")
        meta = store.meta
        targets = targets if targets is not None else targets_for(meta["targets"], home=home)
        if targets.checksum != meta["targets"]["checksum"]:
            raise LexprobeError(f"{path}: the target table of AM model {name!r} changed since training "
                                f"({meta['targets'].get('index') or meta['targets'].get('model')}): train it again "
                                "(lexprobe am train ... --replace)")
        vocab = NGramVocab(store.column("ngram").to_pylist(), meta["config"]["nmin"], meta["config"]["nmax"])
        state = load_file(store.file_path("weights"))
        config = AMConfig(**meta["config"])
        expected = {k: list(v.shape) for k, v in _net(len(vocab), targets.dim, config.attention).state_dict().items()}
        recorded = meta.get("tensors", expected)
        for tensors, what in ((recorded, "the manifest"), (expected, f"{len(vocab)} n-grams of dim {targets.dim}")):
            got = {k: list(v.shape) for k, v in state.items()}
            if got != tensors:
                bad = sorted(set(got) ^ set(tensors)) or sorted(k for k in got if got[k] != tensors[k])
                raise LexprobeError(f"{store.file_path('weights')}: weight {bad[0]!r} is "
                                    f"{got.get(bad[0], 'missing')}, {what} says {tensors.get(bad[0], 'none')}: "
                                    "the model folder is damaged (train it again with --replace)")
        model = cls(config, vocab, state, targets)
        model.name, model.meta = name, meta
        return model

    def write(self, root, name: str, meta: dict) -> None:
        """Write the model folder ``<root>/<name>`` (the format :meth:`open` reads): the n-gram shard, the weights
        (safetensors) and ``meta`` with each tensor's shape, built aside and swapped in. The caller holds the
        folder's :func:`~lexprobe.core.store.write_lock`. A full or read-only disk is one clear error."""
        from safetensors.torch import save

        from ..core.store import StoreWriter

        schema = pa.schema([("id", pa.int64()), ("ngram", pa.string())])
        state = self.state()
        meta = {**meta, "tensors": {k: list(v.shape) for k, v in state.items()}}
        try:
            with StoreWriter(root, name, kind=MODEL_KIND, dim=self.dim, schema=schema) as writer:
                writer.write(pa.table({"id": pa.array(np.arange(len(self.vocab)), pa.int64()),
                                       "ngram": pa.array(self.vocab.ngrams, pa.string())}, schema=schema))
                with open(writer.side_file("weights", WEIGHTS_FILE), "wb") as f:
                    f.write(save(state))
                writer.commit(source=f"am:{meta['targets'].get('index') or meta['targets'].get('model')}", meta=meta,
                              history=[{"op": "train", "time": time.strftime("%Y-%m-%dT%H:%M:%S")}])
        except OSError as exc:  # ENOSPC, EROFS, ...: the folder and the reason, as the store says it
            raise LexprobeError(f"{root / name}: cannot write the AM model ({exc.strerror or exc})") from None
        self.name, self.meta = name, meta

    @property
    def dim(self) -> int:
        return self.targets.dim

    def state(self) -> dict:
        """The weights as named torch tensors (what the model folder's safetensors holds)."""
        return {k: v.detach().clone().contiguous() for k, v in self.net.state_dict().items()}

    def __repr__(self) -> str:
        return (f"<AMModel {self.config.preset}/{self.config.attention}: d={self.dim}, {len(self.vocab)} n-grams, "
                f"{len(self.targets.words)} target words>")

    def form(self, words: Sequence[str]) -> np.ndarray:
        """The form vectors (n, d) of ``words``."""
        import torch

        flat, offsets = self.vocab.encode(list(words))
        with torch.no_grad():
            return self.net.form(torch.from_numpy(flat), torch.from_numpy(offsets)).numpy().astype(np.float32)

    def infer(self, words: Sequence[str], contexts: Sequence[Sequence] | None = None, *,
              max_batch: int = 1 << 24) -> AMInference:
        """Vectors for ``words`` from their form and ``contexts`` (one list per word of windows, each a list of
        words or a whitespace-separated string; None or an empty list: the form alone), with the gate alpha and
        each context's weight rho for inspection. Windows are read as given (the contexts index lowercases); each
        word's own occurrences in its windows are ignored. ``max_batch`` bounds words x contexts^2 per step."""
        import torch

        words = list(words)
        contexts = [list(c or []) for c in contexts] if contexts is not None else [[] for _ in words]
        if len(contexts) != len(words):
            raise LexprobeError(f"infer: {len(words)} words but {len(contexts)} lists of contexts")
        windows = [w.split() if isinstance(w, str) else list(w) for c in contexts for w in c]
        owners = [word for word, c in zip(words, contexts) for _ in c]
        V, counts = context_vectors(windows, owners, self.targets) if windows else (np.zeros((0, self.dim), np.float32),
                                                                                     np.zeros(0, np.int64))
        starts = np.cumsum([0] + [len(c) for c in contexts])
        usable = [np.flatnonzero(counts[a:b] > 0) + a for a, b in zip(starts[:-1], starts[1:])]
        n_ctx = np.array([len(u) for u in usable], dtype=np.int64)
        out = np.empty((len(words), self.dim), np.float32)
        alpha = np.full(len(words), np.nan, np.float32)
        rho: list[np.ndarray] = [np.zeros(0, np.float32)] * len(words)
        order = np.argsort(n_ctx, kind="stable")  # few contexts with few: little padding
        i = 0
        while i < len(order):
            j = i + 1
            while j < len(order) and (j + 1 - i) * max(int(n_ctx[order[j]]), 1) ** 2 <= max_batch:
                j += 1
            rows = order[i:j]
            K = int(n_ctx[rows].max())
            idx = np.zeros((len(rows), K), np.int64)
            mask = np.arange(K)[None, :] < n_ctx[rows][:, None]
            for r, w in enumerate(rows):
                idx[r, :n_ctx[w]] = usable[w]
            flat, offsets = self.vocab.encode([words[w] for w in rows])
            with torch.no_grad():
                vec, a, p = self.net(torch.from_numpy(flat), torch.from_numpy(offsets), torch.from_numpy(V[idx]),
                                     torch.from_numpy(mask), torch.from_numpy(counts[idx]))
            out[rows] = vec.numpy()
            for r, w in enumerate(rows):
                if n_ctx[w]:
                    alpha[w] = float(a[r])
                    rho[w] = p[r, :n_ctx[w]].numpy().astype(np.float32)
            i = j
        return AMInference(words, out, alpha, rho, n_ctx)


# -------------------------------------------------------------------------------------------- training


@dataclass
class ContextData:
    """The contexts AM trains on: each window's owner word and words (Arrow), and each word's corpus count."""

    owners: pa.Array          # (N,) string: the word each window belongs to
    windows: pa.Array         # (N,) list<string>
    occurrences: dict[str, int]
    provenance: dict = field(default_factory=dict)

    @classmethod
    def from_index(cls, index) -> "ContextData":
        """From a :class:`lexprobe.kinds.contexts.ContextIndex`."""
        table = index.store.table(["word", "occurrences", "context"]).combine_chunks()
        owners = table.column("word").chunk(0) if table.num_rows else pa.array([], pa.string())
        words, first = np.unique(owners.to_numpy(zero_copy_only=False), return_index=True)
        counts = table.column("occurrences").to_numpy()
        return cls(owners, table.column("context").chunk(0) if table.num_rows else pa.array([], pa.list_(pa.string())),
                   dict(zip(words.tolist(), counts[first].tolist())),
                   {"contexts": index.name, "contexts_meta": index.store.meta})


@dataclass
class TrainingSet:
    """Everything the batched trainer reads: the training words, their targets and n-grams, and every usable
    context's v_C, grouped by word."""

    words: list[str]
    targets: np.ndarray         # (W, d)
    copies: np.ndarray          # (W,) instances a word gives per epoch
    ngram_flat: np.ndarray
    ngram_offsets: np.ndarray   # (W + 1,)
    ctx_vectors: np.ndarray     # (N, d) v_C
    ctx_counts: np.ndarray      # (N,) n_C > 0
    ctx_rows: np.ndarray        # (N,) the window's row in the ContextData
    word_start: np.ndarray      # (W,) first context of each word
    word_contexts: np.ndarray   # (W,) contexts of each word


def training_set(targets: TargetTable, data: ContextData, config: AMConfig, vocab: NGramVocab | None = None,
                 held_out: Sequence[str] = ()) -> tuple[TrainingSet, NGramVocab]:
    """The training words (target words with a usable context, count >= ``min_count``, not ``held_out``), the
    n-gram vocabulary built from them (unless given) and every usable context's v_C."""
    owners = data.owners.to_numpy(zero_copy_only=False)
    skip = set(held_out)
    candidates = sorted(w for w in np.unique(owners).tolist() if targets.row(w) is not None and w not in skip
                        and data.occurrences.get(w, 0) >= config.min_count)
    wanted = np.flatnonzero(pc.is_in(data.owners, value_set=pa.array(candidates, pa.string()))
                            .to_numpy(zero_copy_only=False))
    V, counts = context_vectors(data.windows.take(pa.array(wanted)), data.owners.take(pa.array(wanted)), targets)
    usable = counts > 0
    if not usable.any():
        raise LexprobeError("AM: no training word (no target word has a context with a known word)")
    order = np.argsort(owners[wanted[usable]], kind="stable")  # grouped by word, in sorted word order
    V, counts, rows = V[usable][order], counts[usable][order], wanted[usable][order]
    group, start, n = np.unique(owners[rows], return_index=True, return_counts=True)
    words = group.tolist()
    occ = np.array([data.occurrences.get(w, 0) for w in words], dtype=np.float64)
    copies = np.maximum(1, np.minimum(occ / config.count_per_copy, config.max_copies)).astype(np.int64)
    lists = [char_ngrams(w, config.nmin, config.nmax) for w in words]
    vocab = vocab or NGramVocab.from_lists(lists, config.nmin, config.nmax, config.ngram_threshold)
    flat, offsets = vocab.encode(words, lists)
    return TrainingSet(words, targets.matrix[[targets.row(w) for w in words]], copies, flat, offsets, V, counts, rows,
                       start.astype(np.int64), n.astype(np.int64)), vocab


@dataclass
class Instances:
    """One epoch's instances in training order: the word, and the instance's contexts as a slice
    ``order[start:start + count]`` of the epoch's context order."""

    word: np.ndarray
    start: np.ndarray
    count: np.ndarray
    order: np.ndarray


def epoch_instances(data: TrainingSet, config: AMConfig, epoch: int) -> tuple[Instances, np.random.Generator]:
    """The instances of one epoch (see the module doc), and the generator the epoch's dropout continues."""
    rng = rng_for(config.seed, "am-epoch", epoch)
    n_words = len(data.words)
    owner = np.repeat(np.arange(n_words), data.word_contexts)
    order = np.lexsort((rng.random(len(owner)), owner))  # each word's contexts shuffled, words in place
    word = np.repeat(np.arange(n_words), data.copies)
    size = rng.integers(config.smin, config.smax + 1, size=len(word))
    first = np.cumsum(data.copies) - data.copies  # first instance of each word
    taken = np.cumsum(size) - size
    offset = taken - taken[first][word]  # contexts the word's earlier instances took
    count = np.clip(data.word_contexts[word] - offset, 0, size)
    keep = count >= config.smin
    word, offset, count = word[keep], offset[keep], count[keep]
    shuffle = rng.permutation(len(word))
    return Instances(word[shuffle], (data.word_start[word] + offset)[shuffle], count[shuffle], order), rng


def _batch_ngrams(data: TrainingSet, words: np.ndarray, dropout: float, rng):
    lengths = np.diff(data.ngram_offsets)[words]
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    idx = np.repeat(data.ngram_offsets[words] - offsets[:-1], lengths) + np.arange(offsets[-1])
    return ngram_dropout(data.ngram_flat[idx], offsets, dropout, rng)


@dataclass
class TrainingLog:
    """How training went: the mean loss of each epoch, instances and seconds."""

    losses: list[float] = field(default_factory=list)
    instances: list[int] = field(default_factory=list)
    seconds: float = 0.0        # in all
    setup_seconds: float = 0.0  # context vectors, n-grams (and the reference's windows as text)
    loop_cpu_seconds: float = 0.0  # this process's CPU time in the training steps (robust to a busy machine)
    words: int = 0
    contexts: int = 0
    below_smin: int = 0  # training words with fewer usable contexts than the preset's minimum (never trained on)

    def as_dict(self) -> dict:
        return asdict(self)


def train(targets: TargetTable, data: ContextData, config: AMConfig, *, held_out: Sequence[str] = (),
          reference: bool = False, max_batches: int | None = None, desc: str = "AM",
          prepared: tuple[TrainingSet, NGramVocab] | None = None) -> tuple[AMModel, TrainingLog]:
    """Train an AM model to mimic ``targets`` from the windows of ``data`` (see the module doc); ``held_out``:
    words never trained on. ``reference``: build batches instance by instance from the windows' words
    (the authors' way; for the benchmark). ``max_batches``: stop each epoch after so many batches (benchmarks).
    ``prepared``: :func:`training_set` of the same targets, data, held-out words and n-gram settings, computed
    once for several models."""
    import torch

    t0 = time.perf_counter()
    ts, vocab = prepared if prepared is not None else training_set(targets, data, config, held_out=held_out)
    net = _net(len(vocab), targets.dim, config.attention, config.seed)
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=config.lr, betas=(0.9, 0.999), eps=1e-8, fused=True)
    V = torch.from_numpy(ts.ctx_vectors)
    C = torch.from_numpy(ts.ctx_counts)
    Y = torch.from_numpy(ts.targets)
    builder = _ReferenceBatches(ts, data, targets, vocab) if reference else None
    below = int((ts.word_contexts < config.smin).sum())
    if below == len(ts.words):
        raise LexprobeError(f"AM: no training word has {config.smin} usable contexts (the preset's minimum)")
    log = TrainingLog(words=len(ts.words), contexts=len(ts.ctx_rows), below_smin=below,
                      setup_seconds=time.perf_counter() - t0)
    progress = bar(total=config.epochs, desc=desc, unit="epoch")
    cpu = time.process_time()
    for epoch in range(config.epochs):
        inst, rng = epoch_instances(ts, config, epoch)
        total, n_seen = 0.0, 0
        starts = range(0, len(inst.word), config.batch_size)
        for b, s in enumerate(starts):
            if max_batches is not None and b >= max_batches:
                break
            sel = slice(s, s + config.batch_size)
            words, count = inst.word[sel], inst.count[sel]
            K = int(count.max())
            slots = np.arange(K)
            mask = slots[None, :] < count[:, None]
            rows = inst.order[np.where(mask, inst.start[sel][:, None] + slots[None, :], 0)]
            if builder is None:
                flat, offsets = _batch_ngrams(ts, words, config.ngram_dropout, rng)
                vectors, counts = V[torch.from_numpy(rows)], C[torch.from_numpy(rows)]
            else:
                flat, offsets, vectors, counts = builder.batch(words, rows, mask, config.ngram_dropout, rng)
            out, _, _ = net(torch.from_numpy(flat), torch.from_numpy(offsets), vectors, torch.from_numpy(mask),
                            counts)
            loss = torch.nn.functional.mse_loss(out, Y[torch.from_numpy(words)])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(words)
            n_seen += len(words)
        log.losses.append(total / max(n_seen, 1))
        log.instances.append(n_seen)
        progress.update()
        progress.set_postfix(loss=f"{log.losses[-1]:.4g}", refresh=False)
    progress.close()
    log.loop_cpu_seconds = time.process_time() - cpu
    log.seconds = time.perf_counter() - t0
    net.eval()
    return AMModel(config, vocab, net.state_dict(), targets), log


class _ReferenceBatches:
    """The authors' batch building (``batch_builder.py``, ``context_builder.py``, ``ngram_builder.py``), instance
    by instance: each context is a string, split into words; the word's positions are found and every word's
    distance to the nearest one computed (clipped to +-10; the authors compute it whether or not a model uses it);
    the words kept are those other than the word that have a vector; their vectors are written one by one into a
    zero-padded float64 (instances x contexts x words x d) array beside a distances array (padded with
    ``zip_longest``); the word's n-grams are cut from its string, looked up and padded."""

    def __init__(self, ts: TrainingSet, data: ContextData, targets: TargetTable, vocab: NGramVocab):
        self.ts, self.vocab = ts, vocab
        self.windows = [" ".join(w) for w in data.windows.to_pylist()]  # the authors' files hold windows as text
        self.vectors = dict(zip(targets.words, targets.matrix))
        self.dim = targets.dim

    def _features(self, word: str, contexts: list[str]):
        kept_words, kept_distances = [], []
        for context in contexts:
            tokens = context.split()
            hits = [i for i, t in enumerate(tokens) if t == word]
            near = [max(-10, min(10, min((i - h for h in hits), key=abs))) for i in range(len(tokens))]
            kept = [(d, t) for d, t in zip(near, tokens) if t != word and t in self.vectors]
            if kept:
                kept_distances.append([d for d, _ in kept])
                kept_words.append([t for _, t in kept])
        return kept_words, kept_distances

    def batch(self, words, rows, mask, dropout, rng):
        import itertools

        import torch

        ts = self.ts
        features = [self._features(ts.words[w], [self.windows[ts.ctx_rows[row]] for row in r[m]])
                    for w, r, m in zip(words, rows, mask)]
        n_contexts = np.array([len(c) for c, _ in features], dtype=np.int32)
        K = int(n_contexts.max())
        per_context = np.array(list(itertools.zip_longest(*[[len(x) for x in c] for c, _ in features], fillvalue=0)),
                               dtype=np.int32).T.reshape(len(features), K)
        width = int(per_context.max())
        vectors = np.zeros((len(features), K, width, self.dim))
        distances = np.zeros((len(features), K, width))
        for b, (contexts, dists) in enumerate(features):
            for k, context in enumerate(contexts):
                for j, t in enumerate(context):
                    vectors[b, k, j] = self.vectors[t]
            for k, d in enumerate(dists):
                for j, x in enumerate(d):
                    distances[b, k, j] = x
        lists = [self.vocab.ids(ts.words[w]) for w in words]
        padded = np.array(list(itertools.zip_longest(*lists, fillvalue=PAD)), dtype=np.int64).T
        lengths = np.array([len(x) for x in lists])
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = padded[np.arange(padded.shape[1])[None, :] < lengths[:, None]]
        flat, offsets = ngram_dropout(flat, offsets, dropout, rng)
        n = torch.from_numpy(per_context.astype(np.int64))
        v = torch.from_numpy(vectors).float().sum(2) / (n[..., None].float() + EPS)
        return flat, offsets, v, n
