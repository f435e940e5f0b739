"""The one exception type users see: a clear, one-line message naming the file and the problem.

The CLI turns it into ``error: <message>`` on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import os


class LexprobeError(Exception):
    """A user-facing error: bad input, unknown index or word, missing model, corrupt data."""

    exit_code = 2


class InputError(LexprobeError):
    """Bad content in an input file, located by file and (when known) line."""

    def __init__(self, path: str | os.PathLike, problem: str, line: int | None = None):
        self.path, self.problem, self.line = str(path), problem, line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class CorruptIndexError(LexprobeError):
    """An index on disk that fails its checksums or structure checks."""


class LockedError(LexprobeError):
    """Another process is writing the same index."""
