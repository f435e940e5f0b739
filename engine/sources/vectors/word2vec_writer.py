"""Writing vectors back as word2vec text or binary (:func:`write_word2vec`)."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
from pathlib import Path

import numpy as np

from ...core.errors import LexprobeError
from .checks import CHUNK_ROWS


def write_word2vec(path: str | os.PathLike, words: list[str], matrix: np.ndarray, *, binary: bool) -> Path:
    """Write ``words`` and their vectors as word2vec text (``count dim`` header, one ``word v1 ... vd`` line
    each) or binary (header, then ``word<space>`` + dim little-endian float32 and a newline each); compressed
    when ``path`` ends in ``.gz``, ``.bz2`` or ``.xz``. Written under a temporary name and renamed, so only a
    regular file is ever replaced: a link, a FIFO or a device at ``path`` is refused (renaming over it would put
    a file where the link or the device was); a failing write (full disk) names the file."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise LexprobeError(f"{path}: cannot write it ({exc.strerror or exc})") from None
    if mode is not None and not stat.S_ISREG(mode):
        what = ("a link" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode) else "a FIFO"
                if stat.S_ISFIFO(mode) else "a device or socket")
        raise LexprobeError(f"{path}: {what}, not a regular file: write to a new file name (only a regular file "
                            "is replaced)")
    matrix = np.asarray(matrix, dtype=np.float32)
    bad = next((w for w in words if not w or any(c.isspace() for c in w)), None)
    if bad is not None:
        raise LexprobeError(f"cannot write the word {bad!r} to a word2vec file (empty or holds whitespace)")
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(path.suffix.lower(), open)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with opener(tmp, "wb") as f:
            f.write(f"{len(words)} {matrix.shape[1]}\n".encode())
            for start in range(0, len(words), CHUNK_ROWS):
                block = matrix[start:start + CHUNK_ROWS]
                if binary:
                    f.write(b"".join(w.encode("utf-8") + b" " + row.astype("<f4").tobytes() + b"\n"
                                     for w, row in zip(words[start:start + CHUNK_ROWS], block)))
                else:
                    f.write("".join(w + " " + row + "\n"
                                    for w, row in zip(words[start:start + CHUNK_ROWS], _exact_text(block))).encode())
        os.replace(tmp, path)
    except OSError as exc:  # a full disk names no file by itself
        raise LexprobeError(f"{path}: cannot write it ({exc.strerror or exc})") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def _exact_text(block: np.ndarray) -> list[str]:
    """Each row's values as text that reads back to the same float32: 7 significant digits where that is
    exact for the whole row (e.g. GloVe's 6-decimal values), else 9 (always exact for float32)."""
    rows = block.tolist()
    short_fmt, long_fmt = (" ".join([f] * block.shape[1]) for f in ("%.7g", "%.9g"))
    short = [short_fmt % tuple(r) for r in rows]
    back = np.array(" ".join(short).split(), dtype=np.float32).reshape(block.shape)
    exact = (back == block).all(axis=1)
    return [s if ok else long_fmt % tuple(r) for s, ok, r in zip(short, exact.tolist(), rows)]
