"""word2vec binary, read forwards in blocks (plain or compressed alike)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import numpy as np

from ...core.errors import InputError
from ...core.store import MAX_WORD_BYTES
from .checks import CHUNK_ROWS, Chunk, _check_finite, _fail, _header
from .streams import LIMITS, compression_name, open_binary, read_limit


def _w2v_bin_chunks(path: Path) -> Iterator[Chunk]:
    """word2vec binary: header ``n d\\n``, then per entry ``word<space>`` + d little-endian float32 (a newline
    after the vector is optional). Read forwards in blocks, plain or compressed alike: memory holds one block."""
    kind = compression_name(path)
    with open_binary(path) as f:
        header = f.readline(1024)
        count, dim = _header(path, header.split())
        longest = read_limit("line")
        if 4 * dim + 2 > longest:  # an entry is read whole, as a text line is
            _fail(path, f"header declares dimension {dim}: each entry would pass the {longest}-byte line limit "
                  f"({LIMITS['line'][0]}=BYTES raises it)", 1, True)
        need = count * (4 * dim + 2)  # a word of one byte, its space and the vector, at the least
        have = (os.stat(path).st_size - len(header)) if kind is None else read_limit("decompressed")
        if need > have:
            where = f"the file's {have} bytes after the header" if kind is None else \
                f"the {have}-byte limit on what a compressed file may hold ({LIMITS['decompressed'][0]} raises it)"
            _fail(path, f"header declares {count} vectors of {dim} values: {need} bytes at the least, more than "
                  f"{where} (truncated, or not this format)", None, True)
        yield from _w2v_bin_entries(path, f, count, dim)


def _w2v_bin_entries(path: Path, f, count: int, dim: int) -> Iterator[Chunk]:
    """The entries of a word2vec binary stream ``f`` after its header."""
    block = max(1 << 24, 4 * (MAX_WORD_BYTES + 4 * dim + 2))
    data, pos, ended = b"", 0, False
    entry = 0
    step = 4 * dim
    words: list[str] = []
    rows: list[np.ndarray] = []
    while entry < count:
        if len(data) - pos < MAX_WORD_BYTES + 2 + step and not ended:
            more = f.read(block)
            ended = not more
            data, pos = data[pos:] + more, 0
        size = len(data)
        while pos < size and data[pos:pos + 1] in (b"\n", b"\r"):
            pos += 1
        if pos == size and entry == 0:
            _fail(path, "no vectors after the header", None, True)
        space = data.find(b" ", pos, min(size, pos + MAX_WORD_BYTES))
        if space < 0:
            _fail(path, f"entry {entry + 1}: file ends or no word separator (header declares {count} vectors)",
                  None, entry == 0)
        try:
            word = data[pos:space].decode("utf-8")
        except UnicodeDecodeError:
            _fail(path, f"entry {entry + 1}: word is not valid UTF-8", None, entry == 0)
        if space + 1 + step > size:
            _fail(path, f"entry {entry + 1}: file ends inside the vector (truncated)", None, entry == 0)
        words.append(word)
        rows.append(np.frombuffer(data, dtype="<f4", count=dim, offset=space + 1).copy())
        pos = space + 1 + step
        entry += 1
        if len(words) == CHUNK_ROWS:
            yield words, _checked_stack(path, rows, entry - len(words) + 1)
            words, rows = [], []
    if words:
        yield words, _checked_stack(path, rows, entry - len(words) + 1)
    rest = len(data[pos:].strip())
    while more := f.read(block):
        rest += len(more.strip())
    if rest:
        raise InputError(path, f"{rest} bytes after the {count} vectors the header declares")


def _checked_stack(path: Path, rows: list[np.ndarray], first_entry: int) -> np.ndarray:
    matrix = np.stack(rows).astype(np.float32)
    _check_finite(path, matrix, first_entry, unit="entry")
    return matrix
