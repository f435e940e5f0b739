"""Progress bars: tqdm on a terminal, silent when ``--quiet`` or when stderr is not a terminal."""

from __future__ import annotations

import sys
from typing import Iterable, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

_quiet = False


def set_quiet(quiet: bool) -> None:
    """Turn every progress bar off (``--quiet``)."""
    global _quiet
    _quiet = quiet


def enabled() -> bool:
    return not _quiet and sys.stderr.isatty()


def bar(iterable: Iterable[T] | None = None, **kwargs) -> tqdm:
    """A tqdm bar that honours ``--quiet`` and non-terminal output."""
    kwargs.setdefault("disable", not enabled())
    kwargs.setdefault("dynamic_ncols", True)
    kwargs.setdefault("leave", False)
    return tqdm(iterable, **kwargs)
