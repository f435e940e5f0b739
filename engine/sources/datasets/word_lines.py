"""Small text inputs of words, a fixed number per line (analogy questions, word-pair files): whitespace-separated,
blank lines and ``#`` comments skipped, a malformed line one error naming the file and the line; and files of
whole lines (sentences to probe)."""

from __future__ import annotations

from ...core.errors import InputError


def word_lines(path, fields: int, shape: str, what: str) -> list[tuple]:
    """(word_1, ..., word_fields, line number) per line of ``path``; ``shape`` names a line's fields in the
    error (e.g. ``3 words 'a a* b'``), ``what`` the contents when there are none (e.g. ``questions``)."""
    rows = []
    for number, line in enumerate(_text(path).splitlines(), 1):
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
    lines = [line.strip() for line in _text(path).splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    if not lines:
        raise InputError(path, f"no {what}")
    return lines


def _text(path) -> str:
    try:
        return open(path, "rb").read().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
