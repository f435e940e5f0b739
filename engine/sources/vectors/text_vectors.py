"""word2vec/fastText text (header ``count dimension``) and GloVe text (no header)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import numpy as np

from ...core.errors import InputError
from .checks import CHUNK_ROWS, Chunk, _check_finite, _fail, _header, _lines
from .streams import BOM, LIMITS, compression_name, open_binary, read_limit


def _text_chunks(path: Path, has_header: bool) -> Iterator[Chunk]:
    """word2vec/fastText text (header ``n d``) or GloVe text (no header): ``word v1 ... vd`` per line."""
    dim = None
    declared = None
    words: list[str] = []
    rows: list[list[str]] = []
    start_line = 1
    first_data = 2 if has_header else 1
    n_rows = 0
    with open_binary(path) as f:
        for lineno, raw in enumerate(_lines(f, path, first=lambda n: n <= first_data), 1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                _fail(path, f"not valid UTF-8 (byte {exc.start})", lineno, lineno <= first_data)
            if lineno == 1:  # a byte-order mark is not part of the first word
                line = line.removeprefix(BOM)
            if lineno == 1 and has_header:
                declared, dim = _header(path, line.split())
                _check_text_size(path, declared, dim)
                start_line = 2
                continue
            parts = line.rstrip().split(" ")
            if not line.strip():
                _fail(path, "empty line", lineno, lineno == first_data)
            if dim is None:
                dim = len(parts) - 1
                if dim < 1:
                    _fail(path, "a word with no vector", lineno, True)
            if len(parts) < dim + 1:
                _fail(path, f"{len(parts) - 1} values, expected {dim} (inconsistent dimension)", lineno,
                      lineno == first_data)
            if len(parts) > dim + 1 and not has_header:
                # GloVe words may contain spaces: the vector is always the last ``dim`` fields, unless every
                # field the word would take after its first is a number (then the line has values too many)
                if all(_is_float(p) for p in parts[1: len(parts) - dim]):
                    raise InputError(path, f"{len(parts) - 1} values, expected {dim} (inconsistent dimension)",
                                     lineno)
                parts = [" ".join(parts[: len(parts) - dim])] + parts[len(parts) - dim:]
            elif len(parts) > dim + 1:
                _fail(path, f"{len(parts) - 1} values, expected {dim} (inconsistent dimension)", lineno,
                      lineno == first_data)
            if lineno == first_data:  # the first vector decides whether this is the format at all
                _parse_rows(path, [parts[1:]], lineno, first_data)
            words.append(parts[0])
            rows.append(parts[1:])
            if len(words) == CHUNK_ROWS:
                yield words, _parse_rows(path, rows, start_line, first_data)
                n_rows += len(words)
                start_line += len(words)
                words, rows = [], []
    if words:
        yield words, _parse_rows(path, rows, start_line, first_data)
        n_rows += len(words)
    if n_rows == 0:
        _fail(path, "no vectors (empty file)" if declared is None else "no vectors after the header", None, True)
    if declared is not None and declared != n_rows:
        raise InputError(path, f"header declares {declared} vectors, the file holds {n_rows} (truncated?)")


def _check_text_size(path: Path, count: int, dim: int) -> None:
    """A text header's counts against the file: each line holds a word and ``dim`` values (2 bytes each at the
    least), and no line may pass the line limit."""
    longest = read_limit("line")
    if 2 * dim + 1 > longest:
        variable = LIMITS["line"][0]
        raise InputError(path, f"header declares dimension {dim}: its lines would pass the {longest}-byte line "
                         f"limit ({variable}=BYTES raises it)", 1)
    if compression_name(path) is None:
        size = os.stat(path).st_size
        if count * (2 * dim + 1) > size:
            raise InputError(path, f"header declares {count} vectors of {dim} values, more than the file's {size} "
                             "bytes can hold (truncated, or not this format)", 1)


def _parse_rows(path: Path, rows: list[list[str]], first_line: int, first_data: int = 1) -> np.ndarray:
    try:
        matrix = np.array(rows, dtype=np.float32)
    except ValueError:
        for offset, row in enumerate(rows):
            try:
                np.array(row, dtype=np.float32)
            except ValueError:
                bad = next(v for v in row if not _is_float(v))
                _fail(path, f"not a number: {bad[:40]!r}", first_line + offset, first_line + offset == first_data)
        raise
    _check_finite(path, matrix, first_line)
    return matrix


def _is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False
