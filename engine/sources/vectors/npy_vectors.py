"""A ``.npy`` float matrix with its vocabulary (one word per line, or Parquet)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from ...core.errors import InputError
from .checks import CHUNK_ROWS, Chunk, _check_finite, _lines
from .streams import BOM, regular_file


def _read_vocab(path: Path) -> list[str]:
    """A vocabulary file: one word per line, or a Parquet file with one string column (``index``/``word``)."""
    if not path.exists():
        raise InputError(path, "vocabulary file not found")
    regular_file(path)
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(path, f"not a readable Parquet file ({reason})") from None
        if not table.num_columns:
            raise InputError(path, "a Parquet vocabulary needs a column of words")
        col = next((c for c in ("word", "index", "token") if c in table.column_names), table.column_names[0])
        return [str(w) for w in table.column(col).to_pylist()]
    words = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(_lines(f, path), 1):
            try:
                words.append(raw.decode("utf-8").rstrip("\r\n").removeprefix(BOM if lineno == 1 else ""))
            except UnicodeDecodeError:
                raise InputError(path, "not valid UTF-8", lineno) from None
    return words


def _npy_chunks(path: Path, vocab: Path | None) -> Iterator[Chunk]:
    """A float matrix in ``.npy`` with its vocabulary (``--vocab``, or ``<stem>.vocab``/``.txt`` beside it)."""
    if vocab is None:
        vocab = next((p for p in (path.with_suffix(".vocab"), path.with_suffix(".txt")) if p.exists()), None)
        if vocab is None:
            raise InputError(path, "no vocabulary file: pass --vocab (one word per line)")
    try:
        matrix = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(path, f"not a readable .npy matrix ({exc})") from None
    if matrix.ndim != 2 or matrix.shape[1] < 1 or not np.issubdtype(matrix.dtype, np.floating):
        raise InputError(path, f"expected a 2-D float matrix, found shape {matrix.shape} of {matrix.dtype}")
    words = _read_vocab(vocab)
    if len(words) != len(matrix):
        raise InputError(vocab, f"{len(words)} words for {len(matrix)} vectors in {path.name}")
    if not words:
        raise InputError(path, "no vectors (empty matrix)")
    for start in range(0, len(words), CHUNK_ROWS):
        chunk = np.asarray(matrix[start:start + CHUNK_ROWS], dtype=np.float32)
        _check_finite(path, chunk, start, unit="row")
        yield words[start:start + CHUNK_ROWS], chunk
