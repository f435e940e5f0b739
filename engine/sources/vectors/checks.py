"""What every vector reader checks and shares: the chunk size, finite rows, the first-entry rule (a file that fails
there may be in another format), word2vec's header and bounded lines."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from ...core.errors import InputError
from .streams import LIMITS, read_limit

CHUNK_ROWS = 50_000
Chunk = tuple  # (words, matrix) or (words, matrix, source ids)


class _Unrecognised(InputError):
    """The file is not in the format tried (its header or first entry does not fit): with ``--format auto`` the
    error names the formats tried and the option that forces one."""


def _check_finite(path: Path, matrix: np.ndarray, first_line: int, unit: str = "line") -> None:
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        raise InputError(path, f"{unit} has a NaN or infinite value", first_line + row)
    row = first_overflowing_row(matrix)
    if row is not None:
        raise InputError(path, f"{unit} has values so large that the vector's length overflows float32",
                         first_line + row)


def first_overflowing_row(matrix: np.ndarray) -> int | None:
    """The first row whose float32 squared length is infinite (it could not be normalised), or None."""
    with np.errstate(over="ignore"):
        bad = ~np.isfinite(np.einsum("ij,ij->i", matrix, matrix))
    return int(np.argmax(bad)) if bad.any() else None


def _fail(path: Path, problem: str, line: int | None, first: bool):
    """An :class:`InputError`; at the file's first line or entry the file may simply be in another format."""
    raise (_Unrecognised if first else InputError)(path, problem, line)


def _lines(f, path: Path, first=lambda n: False) -> Iterator[bytes]:
    """Lines of an open (maybe compressed) file, each at most the line limit long (a longer one is refused: a
    file with no line ends would otherwise be read whole into memory)."""
    longest = read_limit("line")
    number = 0
    while True:
        line = f.readline(longest + 1)
        if not line:
            return
        number += 1
        if len(line) > longest:
            variable = LIMITS["line"][0]
            _fail(path, f"line longer than {longest} bytes ({variable}=BYTES raises the limit)", number,
                  first(number))
        yield line


def _header(path: Path, parts: list) -> tuple[int, int]:
    """word2vec's first line ``count dimension`` (text or bytes fields)."""
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise _Unrecognised(path, "expected a header 'count dimension'", 1)
    count, dim = int(parts[0]), int(parts[1])
    if dim < 1:
        raise _Unrecognised(path, f"header declares dimension {dim}", 1)
    return count, dim
