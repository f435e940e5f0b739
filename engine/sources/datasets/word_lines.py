"""Small text inputs of words, a fixed number per line (analogy questions, word-pair files): whitespace-separated,
blank lines and ``#`` comments skipped, a malformed line one error naming the file and the line."""

from __future__ import annotations

from ...core.errors import InputError


def word_lines(path, fields: int, shape: str, what: str) -> list[tuple]:
    """(word_1, ..., word_fields, line number) per line of ``path``; ``shape`` names a line's fields in the
    error (e.g. ``3 words 'a a* b'``), ``what`` the contents when there are none (e.g. ``questions``)."""
    try:
        text = open(path, "rb").read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) != fields:
            raise InputError(path, f"expected {shape}, found {len(parts)} fields", number)
        rows.append((*parts, number))
    if not rows:
        raise InputError(path, f"no {what}")
    return rows
