"""Opening a vector file within limits: regular files only, gzip/bzip2/xz decompressed on the fly and bounded
(:data:`LIMITS`, each raised by its environment variable)."""

from __future__ import annotations

import bz2
import io
import lzma
import os
import stat
import zlib
from pathlib import Path

from ...core.errors import InputError, LexprobeError

MAGICS = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ\x00"}
BOM = "\ufeff"  # a byte-order mark some editors put before the first line
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
