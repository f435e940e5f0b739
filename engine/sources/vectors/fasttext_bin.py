"""fastText ``.bin`` models, both layouts, with the character n-gram vectors that give unseen words a vector."""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from ...core.errors import InputError
from ...core.store import MAX_WORD_BYTES, word_problem
from .checks import CHUNK_ROWS, Chunk, _Unrecognised, _check_finite
from .streams import compression_name, regular_file

FASTTEXT_MAGIC = (793712314).to_bytes(4, "little")  # the first int32 of a fastText .bin model (since 2017)

# fastText's training arguments, as ``struct`` fields: since 2017 after the magic number and a version, before
# that (the old layout) with ``dim`` and ``ws`` where the magic number and the version are now
_FT_ARGS = ("dim", "ws", "epoch", "min_count", "neg", "word_ngrams", "loss", "model", "bucket", "minn", "maxn",
            "lr_update_rate")
_FT_FNV_BASIS, _FT_FNV_PRIME = 2166136261, 16777619


@dataclass
class FastTextHeader:
    """What a fastText ``.bin`` file declares before its vectors, and where they start."""

    new_layout: bool
    args: dict
    nwords: int
    ntokens: int
    words_at: int       # byte offset of the first word
    prune: int          # entries of the pruned-n-gram index (quantised models only)


def _fasttext_layout(path: Path) -> FastTextHeader | None:
    """The header of ``path`` read as a fastText ``.bin`` model (either layout), or None when its fields do not
    fit one: the old layout has no magic number, so it is recognised by every field being in its range and by
    the counts fitting in the file."""
    try:
        size = os.stat(path).st_size
        with open(path, "rb") as f:
            head = f.read(64 + 28)
    except OSError:
        return None
    new = head.startswith(FASTTEXT_MAGIC)
    if len(head) < (92 if new else 76):
        if new:
            raise InputError(path, f"a fastText .bin model (its magic number) of only {size} bytes (truncated)")
        return None
    ints = struct.unpack_from("<12i", head, 8 if new else 0)
    args = dict(zip(_FT_ARGS, ints))
    at = (8 if new else 0) + 48
    args["t"] = struct.unpack_from("<d", head, at)[0]
    at += 8
    vocab, nwords, nlabels = struct.unpack_from("<3i", head, at)
    ntokens = struct.unpack_from("<q", head, at + 12)[0]
    prune = struct.unpack_from("<q", head, at + 20)[0] if new else 0
    at += 28 if new else 20
    fits = (0 < args["dim"] <= 1 << 16 and 0 < args["ws"] <= 1 << 16 and 0 < args["epoch"] <= 1 << 20
            and args["min_count"] >= 0 and args["neg"] >= 0 and args["word_ngrams"] >= 0 and 1 <= args["loss"] <= 4
            and 1 <= args["model"] <= 3 and args["bucket"] >= 0 and 0 <= args["minn"] <= args["maxn"] <= 256
            and 0.0 <= args["t"] <= 1.0 and 0 < nwords <= vocab and nlabels >= 0 and nwords + nlabels == vocab
            and ntokens >= 0 and prune >= -1)
    if not fits and not new:
        return None
    if not fits:
        raise InputError(path, "a fastText .bin model (its magic number) whose header fields are out of range "
                         "(damaged)")
    if nlabels:
        raise InputError(path, f"a supervised fastText model ({nlabels} labels): no word vectors to index")
    # each word: at least its NUL, a count and a type (10 bytes); then the matrix's own header
    if at + 10 * nwords + max(prune, 0) * 8 + 17 > size:
        if not new:
            return None
        raise InputError(path, f"header declares {nwords} words, more than the file's {size} bytes can hold "
                         "(truncated)")
    return FastTextHeader(new, args, nwords, ntokens, at, prune)


@dataclass
class FastTextBin:
    """A fastText ``.bin`` model's word list and input matrix (memory-mapped): the words' vectors and the
    character n-gram vectors from which fastText (and gensim's ``FastTextKeyedVectors``) make a vector for a
    word it never saw. Made by :func:`read_fasttext_bin`."""

    path: Path
    words: list[str]
    word_rows: np.ndarray   # (nwords, dim): the words' own input rows
    ngrams: np.ndarray      # (bucket, dim): the n-gram buckets' rows
    minn: int
    maxn: int
    args: dict
    word_to_id: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.word_to_id = {w: i for i, w in enumerate(self.words)}

    def __repr__(self) -> str:
        return (f"<FastTextBin {self.path.name}: {len(self.words)} words x {self.word_rows.shape[1]}, "
                f"{len(self.ngrams)} n-gram buckets, n = {self.minn}..{self.maxn}>")

    @property
    def dim(self) -> int:
        return self.word_rows.shape[1]

    def ngram_buckets(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(buckets, offsets)``: word ``i``'s n-gram rows are ``buckets[offsets[i]:offsets[i + 1]]``, in
        fastText's order (by start, then length)."""
        return ngram_buckets(words, self.minn, self.maxn, len(self.ngrams))

    def word_vectors(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """The vectors of words ``start:stop`` as fastText gives them: the mean of the word's own row and its
        n-grams' rows (summed in float32 in fastText's order, as gensim does)."""
        stop = len(self.words) if stop is None else stop
        rows = np.array(self.word_rows[start:stop], dtype=np.float32)
        if not len(self.ngrams) or self.maxn == 0:
            return rows
        words = self.words[start:stop]
        for first, last in _ngram_batches(words, self.minn, self.maxn):
            buckets, offsets = self.ngram_buckets(words[first:last])
            rows[first:last] = _mean_rows(rows[first:last], self.ngrams, buckets, offsets, with_own=True)
        return rows

    def vector(self, word: str) -> np.ndarray | None:
        """``word``'s vector: its own (:meth:`word_vectors`) when the model knows it, else the mean of its
        n-grams' rows (gensim's ``FastTextKeyedVectors[word]``); None when it has no n-gram (no vector at all) or
        is longer than any word an index takes (:data:`MAX_WORD_BYTES`: its n-grams are not worth the work)."""
        i = self.word_to_id.get(word)
        if i is not None:
            return self.word_vectors(i, i + 1)[0]
        if not len(self.ngrams) or self.maxn == 0 or word_problem(word) is not None:
            return None
        buckets, offsets = self.ngram_buckets([word])
        if not len(buckets):
            return None
        return _mean_rows(np.zeros((1, self.dim), np.float32), self.ngrams, buckets, offsets, with_own=False)[0]


NGRAM_BATCH = 1 << 22  # n-grams hashed and summed at once: memory stays bounded whatever the words' lengths


def _ngram_batches(words: list[str], minn: int, maxn: int) -> Iterator[tuple[int, int]]:
    """``(first, last)`` ranges of ``words`` whose n-grams (at most ``maxn - minn + 1`` per byte of ``<word>``)
    number about :data:`NGRAM_BATCH` at most (a longer word alone), so that a file of long words is read in
    time and memory linear in its size."""
    per_byte = max(maxn - minn + 1, 1)
    first = total = 0
    for i, word in enumerate(words):
        n = (len(word) * 4 + 2) * per_byte if len(word) > 64 else (len(word.encode("utf-8")) + 2) * per_byte
        if total and total + n > NGRAM_BATCH:
            yield first, i
            first, total = i, 0
        total += n
    if first < len(words):
        yield first, len(words)


def _mean_rows(rows: np.ndarray, table: np.ndarray, buckets: np.ndarray, offsets: np.ndarray, *,
               with_own: bool) -> np.ndarray:
    """Each row plus its buckets' rows of ``table``, added one at a time in float32 in fastText's and gensim's
    order (``np.add.at`` adds in index order: each row's n-grams by rank, in time linear in their number, a
    bounded slice of ``table`` at a time), divided by how many were added."""
    counts = np.diff(offsets)
    owner = np.repeat(np.arange(len(rows)), counts)
    step = max(1, (1 << 25) // max(4 * table.shape[1], 1))
    for at in range(0, len(buckets), step):
        np.add.at(rows, owner[at:at + step], table[buckets[at:at + step]])
    return rows / (counts + (1 if with_own else 0)).astype(np.float32)[:, None]


def ngram_buckets(words: list[str], minn: int, maxn: int, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """fastText's character n-grams of each word (of ``<word>``, ``minn``..``maxn`` characters of UTF-8, not the
    lone ``<`` or ``>``), hashed with its FNV-1a (bytes taken as signed chars) into ``bucket`` rows:
    ``(buckets, offsets)`` as in :meth:`FastTextBin.ngram_buckets`. Every n-gram start is hashed at once, one
    byte position after another."""
    encoded = [("<" + w + ">").encode("utf-8") for w in words]
    lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
    data = np.frombuffer(b"".join(encoded), np.uint8)
    ends = np.cumsum(lengths)
    owner = np.repeat(np.arange(len(words)), lengths)
    word_start, word_end = (ends - lengths)[owner], ends[owner]
    char_start = (data & 0xC0) != 0x80
    chars_before = np.concatenate([[0], np.cumsum(char_start)])
    starts = np.flatnonzero(char_start)
    h = np.full(len(starts), _FT_FNV_BASIS, np.uint32)
    found_start, found_n, found_hash = [], [], []
    active = np.arange(len(starts))
    t = 0
    while active.size:
        s = starts[active]
        byte = data[s + t].astype(np.int8).astype(np.int32).astype(np.uint32)  # fastText hashes signed chars
        h[active] = (h[active] ^ byte) * np.uint32(_FT_FNV_PRIME)
        end = s + t + 1
        last = end == word_end[s]
        boundary = last | char_start[np.minimum(end, len(data) - 1)]
        n = chars_before[end] - chars_before[s]
        take = boundary & (n >= minn) & (n <= maxn) & ~((n == 1) & ((s == word_start[s]) | last))
        found_start.append(s[take])
        found_n.append(n[take])
        found_hash.append(h[active[take]])
        active = active[~last & ~(boundary & (n >= maxn))]
        t += 1
    s, n, hashes = (np.concatenate(x) if x else np.zeros(0, np.int64) for x in (found_start, found_n, found_hash))
    order = np.lexsort((n, s))
    buckets = (hashes[order].astype(np.int64) % bucket) if bucket else np.zeros(0, np.int64)
    per_word = np.bincount(owner[s[order]], minlength=len(words)) if len(s) else np.zeros(len(words), np.int64)
    return buckets, np.concatenate([[0], np.cumsum(per_word)])


def read_fasttext_bin(path: str | os.PathLike) -> FastTextBin:
    """A fastText ``.bin`` model (the layout since 2017, or the older one without a magic number), read without
    gensim: every count is checked against the file's size before anything is allocated, the input matrix is
    memory-mapped. Quantised (``.ftz``) and supervised models are refused with one line."""
    path = regular_file(Path(path))
    if compression_name(path) is not None:
        raise InputError(path, "a compressed fastText .bin model: decompress it first (it is memory-mapped)")
    header = _fasttext_layout(path)
    if header is None:
        raise _Unrecognised(path, "not a fastText .bin model (no magic number, and the header fields are not "
                            "those of the old layout)")
    size = os.stat(path).st_size
    with open(path, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    pos = header.words_at
    words = []
    for i in range(header.nwords):
        nul = data.find(b"\0", pos, min(size, pos + MAX_WORD_BYTES + 1))
        if nul < 0 or nul + 10 > size:
            raise InputError(path, f"word {i + 1}: no end within {MAX_WORD_BYTES} bytes, or the file ends "
                             "(truncated or damaged)")
        words.append(data[pos:nul].decode("utf-8", errors="backslashreplace"))  # as fastText and gensim do
        if data[nul + 9] != 0:
            raise InputError(path, f"word {i + 1}: entry type {data[nul + 9]} is not a word (a label?)")
        pos = nul + 10
    pos += max(header.prune, 0) * 8
    if header.new_layout:
        if pos >= size:
            raise InputError(path, "the file ends before the input matrix (truncated)")
        if data[pos]:
            raise InputError(path, "a quantised fastText model (.ftz): its vectors are compressed; use the .bin "
                             "or the .vec release")
        pos += 1
    if pos + 16 > size:
        raise InputError(path, "the file ends before the input matrix (truncated)")
    rows, cols = struct.unpack_from("<2q", data, pos)
    pos += 16
    dim, bucket = header.args["dim"], header.args["bucket"]
    if cols != dim or rows != header.nwords + bucket:
        raise InputError(path, f"input matrix of {rows} x {cols}, the header declares {header.nwords} words + "
                         f"{bucket} buckets x {dim} (damaged)")
    if pos + rows * cols * 4 > size:
        raise InputError(path, f"input matrix of {rows} x {cols} float32 needs {rows * cols * 4} bytes, the file "
                         f"has {size - pos} left (truncated)")
    matrix = np.frombuffer(data, dtype="<f4", count=rows * cols, offset=pos).reshape(rows, cols)
    if len(set(words)) != len(words):
        raise InputError(path, "the same word twice in the model's vocabulary (damaged)")
    return FastTextBin(path, words, matrix[:header.nwords], matrix[header.nwords:], header.args["minn"],
                       header.args["maxn"], {**header.args, "ntokens": header.ntokens,
                                             "layout": "new" if header.new_layout else "old"})


def _fasttext_chunks(path: Path, source) -> Iterator[Chunk]:
    """The words of a fastText ``.bin`` model with the vectors fastText gives them (:meth:`FastTextBin.word_vectors`);
    ``source`` (a :class:`lexprobe.sources.vectors.VectorSource`, not imported: the dispatch imports this module)
    gets the model as its ``subwords``."""
    model = read_fasttext_bin(path)
    source.subwords = model
    source.extra.update({"fasttext": {k: model.args[k] for k in ("bucket", "minn", "maxn", "layout")}})
    for start in range(0, len(model.words), CHUNK_ROWS):
        chunk = model.word_vectors(start, start + CHUNK_ROWS)
        _check_finite(path, chunk, start + 1, unit="word")
        yield model.words[start:start + CHUNK_ROWS], chunk
