"""The ``lexprobe`` command line: click commands only (parse, call the library, render).

:mod:`.root` holds the root group, the command classes and the error handling, :mod:`.options` the shared
options; each other module is one command group (index, query, run, bench, data, serve, sql), :mod:`.insert` holds
``ota`` and :mod:`.am` Attentive Mimicking.
"""

from . import am, bench, data, index, insert, query, run, serve, sql  # noqa: F401  (each registers its commands)
from .root import cli, main

__all__ = ["cli", "main"]
