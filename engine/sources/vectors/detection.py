"""A vector file's format from its name and first bytes (:func:`detect`)."""

from __future__ import annotations

from pathlib import Path

from ...core.errors import InputError
from .fasttext_bin import FASTTEXT_MAGIC, _fasttext_layout
from .streams import BOM, compression_name, open_binary

NPY_MAGIC = b"\x93NUMPY"
PICKLE_MARK = b"\x80"  # a pickle's first byte (protocol 2 and later)


def _sniff(path: Path) -> tuple[bytes, str | None]:
    """The first 64 decompressed bytes of ``path`` and its compressor (None: not compressed)."""
    kind = compression_name(path)
    with open_binary(path) as f:
        return f.read(64), kind


def detect_format(path: Path) -> str:
    """The format of ``path`` from its extension and layout (a compression suffix ignored); see
    :func:`detect`."""
    return detect(path)[0]


def detect(path: Path) -> tuple[str, list[str]]:
    """``(format, formats tried)``: fastText ``.bin`` by its magic number or, in the old layout without one, by
    a header whose fields fit fastText's (checked against the file's size); a ``.npy`` by its magic; gensim only
    for ``.kv``/``.model`` (a pickle is never opened because of its first bytes: it would run code); ``.bin``
    word2vec binary; else text with header ``n d`` (word2vec text, or binary when the bytes after the first word
    are not UTF-8) or without (GloVe)."""
    head, kind = _sniff(path)
    suffixes = [x.lower() for x in path.suffixes[-2:]]
    if kind is not None and suffixes and suffixes[-1] in (".gz", ".bz2", ".xz"):
        suffixes = suffixes[:-1]
    suffix = suffixes[-1] if suffixes else ""
    if suffix in (".kv", ".model"):
        return "gensim", ["gensim KeyedVectors (by the name)"]
    tried = ["fastText .bin"]
    if head.startswith(FASTTEXT_MAGIC) or (kind is None and _fasttext_layout(path) is not None):
        if kind is not None:
            raise InputError(path, f"a {kind}-compressed fastText .bin model: decompress it first (it is "
                             "memory-mapped)")
        return "fasttext-bin", tried
    if head.startswith(NPY_MAGIC):
        return "npy", [".npy matrix (by its magic)"]
    if suffix == ".npy":
        return "npy", [".npy matrix (by the name)"]
    if head.startswith(PICKLE_MARK):
        raise InputError(path, "a Python pickle (a gensim .kv/.model file?): loading a pickle runs code, so "
                         "lexprobe opens one only when it is named .kv or .model or given with --format gensim; "
                         "open only files you trust")
    if suffix == ".bin":
        return "w2v-bin", tried + ["word2vec binary"]
    with open_binary(path) as f:
        first = f.readline(1 << 16)
        probe = f.read(4096)
    parts = first.removeprefix(BOM.encode()).split()
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        # a header; binary files have raw float bytes after the first word of the second line
        try:
            probe.decode("utf-8")
            return "w2v-text", tried + ["word2vec text"]
        except UnicodeDecodeError as exc:
            if exc.start >= len(probe) - 4:  # a character cut by the probe's end: still text
                return "w2v-text", tried + ["word2vec text"]
            return "w2v-bin", tried + ["word2vec binary"]
    return "glove", tried + ["word2vec text (no 'count dimension' header)", "GloVe text"]
