"""2-D projections of a set of vectors for the page's scatter plots: PCA (exact, numpy), t-SNE (scikit-learn),
UMAP (umap-learn) and word axes (two directions the analyst chooses), each a pure function from an (n, d) matrix
(and a seed, or the axes) to (n, 2) coordinates.

What is projected is each vector's direction (the rows normalised to unit length), because cosine is the
similarity every other view of the page uses: two words close by cosine are close in the projection's input.

- **PCA**: the rows centred on their mean, then their top two right singular vectors (``numpy.linalg.svd``); each
  axis's sign is fixed as scikit-learn's ``PCA`` fixes it (each axis's largest-magnitude component is positive),
  so the picture does not flip between runs or libraries. ``explained`` is each axis's share of the centred rows'
  variance. The seed is not used: PCA is exact.
- **t-SNE**: ``sklearn.manifold.TSNE`` (Barnes-Hut, PCA initialisation, automatic learning rate) with
  ``random_state=seed``, run on one OpenMP thread so that the same seed gives the same coordinates (several
  threads sum the gradient in varying order; one is also faster on a busy machine). Starting from the PCA
  layout, not a random one, it draws the same picture for every seed. The perplexity must be
  below the number of points: it is clipped to ``n - 1`` for small sets.
- **Word axes** (:func:`onto_axes`): each coordinate is the cosine of the vector with one of two given directions
  (a word pair's offset, or a relation's mean unit offset: the API builds them). The axes are not made orthogonal:
  each keeps its meaning (``x`` is how far a word leans from ``man`` towards ``woman``), and their cosine is reported.
- **UMAP**: ``umap.UMAP`` with ``random_state=seed`` (which makes it single-threaded and reproducible) and
  ``n_neighbors`` clipped to ``n - 1``; its spectral initialisation needs more points than components + 1, so
  sets of fewer than :data:`SPECTRAL_MIN` points start from a random layout (seeded too); it needs 3 points.

scikit-learn and umap-learn are imported inside the functions: the server starts without them, and only a t-SNE or
UMAP request pays their import. umap-learn's numba functions are compiled in each process (seconds, tens of seconds
on a busy machine): ``lexprobe serve`` runs :func:`warm_up` on a background thread once it answers, so that the
first UMAP request seldom waits for them. :data:`MAX_POINTS` is the largest set each method projects in one request.

t-SNE and UMAP take seconds; they run in a small bounded pool of their own (:data:`GATE`: :data:`SLOW_SLOTS` at
once, :data:`SLOW_WAITING` more waiting for a slot, fewer than the server's 8 threads together), and a request
beyond it is refused at once (:class:`Busy`: a 503 with ``Retry-After``), so that cheap requests always find a
thread free however many clients ask for projections.
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings

import numpy as np

from ..core.errors import LexprobeError
from ..core.vector_index import unit_rows

METHODS = ("pca", "tsne", "umap", "axes")
MAX_POINTS = {"pca": 1000, "tsne": 500, "umap": 500, "axes": 1000}  # t-SNE and UMAP take seconds at 500 points
MIN_POINTS = {"pca": 2, "tsne": 2, "umap": 3, "axes": 1}  # UMAP's neighbour graph needs two neighbours per point
PERPLEXITY = 30.0    # scikit-learn's default
N_NEIGHBORS = 15     # umap-learn's default
SPECTRAL_MIN = 4     # UMAP's spectral start needs more than n_components + 1 points
SLOW = ("tsne", "umap")
SLOW_SLOTS, SLOW_WAITING = 2, 4  # projections running at once, and waiting: 6 of the server's 8 threads at most
RETRY_AFTER = 2  # seconds a refused projection is asked to wait (about a t-SNE of a few hundred points)


class Busy(LexprobeError):
    """Every slot of the projection pool and every waiting place is taken: the server answers 503, Retry-After."""

    retry_after = RETRY_AFTER


class Gate:
    """A bounded pool of ``slots`` running at once and ``waiting`` more queued for a slot; one more is :class:`Busy`."""

    def __init__(self, slots: int, waiting: int):
        self.slots, self.most = slots, slots + waiting
        self._running = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self.inside = 0

    @contextlib.contextmanager
    def enter(self):
        with self._lock:
            if self.inside >= self.most:
                raise Busy(f"the server is busy with {self.inside} t-SNE and UMAP projections ({self.slots} "
                           f"at a time, {self.most - self.slots} waiting); retry in {RETRY_AFTER} s, or use pca")
            self.inside += 1
        try:
            with self._running:
                yield
        finally:
            with self._lock:
                self.inside -= 1


GATE = Gate(SLOW_SLOTS, SLOW_WAITING)


def pca(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, 2) coordinates of the unit rows of ``matrix`` on their first two principal axes, and each axis's share
    of the variance (zeros where the rows span fewer than two dimensions)."""
    unit = unit_rows(matrix)[0].astype(np.float64)
    centred = unit - unit.mean(axis=0)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    keep = min(2, len(s))
    signs = np.sign(vt[np.arange(keep), np.argmax(np.abs(vt[:keep]), axis=1)])  # scikit-learn's PCA sign rule
    coords = np.zeros((len(unit), 2))
    coords[:, :keep] = u[:, :keep] * s[:keep] * signs
    total = float((s ** 2).sum())
    explained = np.zeros(2)
    if total > 0:
        explained[:keep] = s[:keep] ** 2 / total
    return coords, explained


def onto_axes(matrix: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """(n, 2) cosines of the rows of ``matrix`` with the two rows of ``axes`` (directions of any length, not zero)."""
    unit = unit_rows(matrix)[0].astype(np.float64)
    axes = np.asarray(axes, dtype=np.float64)
    return unit @ (axes / np.linalg.norm(axes, axis=1, keepdims=True)).T


def tsne(matrix: np.ndarray, seed: int = 0, perplexity: float = PERPLEXITY) -> tuple[np.ndarray, str]:
    """(n, 2) t-SNE coordinates of the unit rows, and the library call that made them (perplexity as used)."""
    import sklearn
    from sklearn.manifold import TSNE
    from threadpoolctl import threadpool_limits

    unit = unit_rows(matrix)[0]
    perplexity = float(min(perplexity, len(unit) - 1))
    model = TSNE(n_components=2, perplexity=perplexity, init="pca", learning_rate="auto", random_state=seed,
                 n_jobs=1)
    with threadpool_limits(1, user_api="openmp"):
        coords = model.fit_transform(unit)
    return np.asarray(coords, dtype=np.float64), f"scikit-learn {sklearn.__version__} TSNE(perplexity={perplexity:g})"


def umap(matrix: np.ndarray, seed: int = 0, n_neighbors: int = N_NEIGHBORS) -> tuple[np.ndarray, str]:
    """(n, 2) UMAP coordinates of the unit rows, and the library call that made them (n_neighbors as used)."""
    import umap as umap_learn

    unit = unit_rows(matrix)[0]
    n_neighbors = int(min(n_neighbors, len(unit) - 1))
    init = "spectral" if len(unit) >= SPECTRAL_MIN else "random"
    model = umap_learn.UMAP(n_components=2, n_neighbors=n_neighbors, random_state=seed, init=init)
    with warnings.catch_warnings():  # "n_jobs overridden by random_state", disconnected small sets: expected
        warnings.simplefilter("ignore", UserWarning)
        coords = model.fit_transform(unit)
    return (np.asarray(coords, dtype=np.float64),
            f"umap-learn {umap_learn.__version__} UMAP(n_neighbors={n_neighbors}, init={init})")


def project(matrix: np.ndarray, method: str, seed: int = 0, *, perplexity: float = PERPLEXITY,
            n_neighbors: int = N_NEIGHBORS, axes: np.ndarray | None = None) -> tuple[np.ndarray, str, list[float]]:
    """``(coordinates, library, explained)`` of one method (``explained``: PCA's variance shares, else []; ``axes``:
    the (2, d) directions of method ``axes``); t-SNE and UMAP in the bounded pool (:data:`GATE`; beyond it
    :class:`Busy`)."""
    if method == "axes":
        if axes is None:
            raise ValueError("method axes needs its two axes")
        return onto_axes(matrix, axes), f"numpy {np.__version__} cosine with two word axes", []
    if method == "pca":
        coords, explained = pca(matrix)
        return coords, f"numpy {np.__version__} PCA", [float(e) for e in explained]
    if method not in SLOW:
        raise ValueError(f"unknown projection method {method!r} (choose from {', '.join(METHODS)})")
    with GATE.enter():
        coords, library = tsne(matrix, seed, perplexity) if method == "tsne" else umap(matrix, seed, n_neighbors)
    return coords, library, []


def warm_up() -> dict:
    """Import scikit-learn's t-SNE and umap-learn and run each on a few random points, so that their imports and
    compiled code are ready; a library that is not installed is skipped. Returns the seconds and libraries."""
    t0 = time.perf_counter()
    points = np.random.default_rng(0).standard_normal((SPECTRAL_MIN + 4, 4))
    ready = []
    for run in (tsne, umap):
        try:
            ready.append(run(points)[1])
        except ImportError:
            continue
    return {"seconds": time.perf_counter() - t0, "libraries": ready}
