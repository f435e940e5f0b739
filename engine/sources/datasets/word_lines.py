"""Line-based text inputs, read one bounded line at a time (:func:`bounded_lines`: what every line reader of
corpora, word lists, pair sets and datasets calls); small inputs of words, a fixed number per line (analogy
questions, word-pair files): whitespace-separated, blank lines and ``#`` comments skipped, a malformed line one
error naming the file and the line; and files of whole lines (sentences to probe)."""

from __future__ import annotations

import lzma
import os
from pathlib import Path
from typing import Iterator

from ...core.errors import InputError
from ..vectors import BOM, LIMITS, open_binary, read_limit, regular_file


def bounded_lines(path: str | os.PathLike, *, text_only: bool = True) -> Iterator[tuple[int, str]]:
    """(line number, line without its end) of a UTF-8 text file, compressed with gzip, bzip2 or xz or not, read
    one line at a time under the vector readers' caps (a line at most ``$LEXPROBE_MAX_LINE`` bytes, at most
    ``$LEXPROBE_MAX_DECOMPRESSED`` bytes out of a compressed file): memory stays bounded by one line whatever the
    file holds. Only a regular file is opened (a FIFO or a device would block or never end); a byte-order mark
    before the first line is dropped; with ``text_only`` a NUL byte (binary data) is refused. Every problem is one
    :class:`InputError` naming the file (and line)."""
    path = Path(path)
    regular_file(path)
    longest = read_limit("line")
    number = 0
    try:
        with open_binary(path) as f:
            while raw := f.readline(longest + 1):
                number += 1
                if len(raw) > longest:
                    raise InputError(path, f"line longer than {longest} bytes ({LIMITS['line'][0]}=BYTES raises "
                                           "the limit)", number)
                if text_only and b"\0" in raw:
                    raise InputError(path, "binary data (a NUL byte), not text", number)
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as exc:
                    raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", number) from None
                yield number, line.removeprefix(BOM) if number == 1 else line
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise InputError(path, f"damaged or truncated compressed file ({exc})") from None


def word_lines(path, fields: int, shape: str, what: str) -> list[tuple]:
    """(word_1, ..., word_fields, line number) per line of ``path``; ``shape`` names a line's fields in the
    error (e.g. ``3 words 'a a* b'``), ``what`` the contents when there are none (e.g. ``questions``)."""
    rows = []
    for number, line in bounded_lines(path):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) != fields:
            raise InputError(path, f"expected {shape}, found {len(parts)} fields", number)
        rows.append((*parts, number))
    if not rows:
        raise InputError(path, f"no {what}")
    return rows


def text_lines(path, what: str) -> list[str]:
    """The lines of ``path`` that hold text, stripped (blank lines and ``#`` comments skipped), e.g. sentences;
    none is an error naming ``what``."""
    lines = [line.strip() for _, line in bounded_lines(path)]
    lines = [line for line in lines if line and not line.startswith("#")]
    if not lines:
        raise InputError(path, f"no {what}")
    return lines

