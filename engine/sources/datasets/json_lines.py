"""JSON Lines input, shared by the readers of users' corpora and of WNLaMPro datasets: one JSON object a line,
blank lines skipped, and every problem one error naming the file and the line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterator

from ...core.errors import InputError
from .word_lines import bounded_lines

_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def json_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of ``path`` (UTF-8, read by :func:`.word_lines.bounded_lines`:
    a line at most the line limit, a byte-order mark dropped, a regular file only)."""
    for number, line in bounded_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not valid JSON ({exc.msg} at column {exc.colno})", number) from None
        except RecursionError:
            raise InputError(path, "JSON nested too deeply", number) from None
        if not isinstance(obj, dict):
            raise InputError(path, "each line must be a JSON object", number)
        if _SURROGATE.search(line):  # JSON may escape half of a UTF-16 pair: not a character
            try:
                json.dumps(obj, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InputError(path, f"holds {exc.object[exc.start:exc.end]!r}, half of a UTF-16 "
                                       "surrogate pair, not a character", number) from None
        yield number, obj
