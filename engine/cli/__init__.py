"""The ``lexprobe`` command line: click commands only (parse, call the library, render).

:mod:`.root` holds the groups and the error handling; each other module adds one family of commands.
"""

from . import am, bench, data, index, insert, offsets, perf, query, run, scale, serve, sql, tokens, wnlampro  # noqa: F401  (each registers its commands)
from .root import cli, main

__all__ = ["cli", "main"]
