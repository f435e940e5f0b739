"""The home layout: one folder holds the indexes and everything lexprobe caches for them, so that a run with
``--home X`` writes under ``X`` only (and its run folder).

- ``<home>/<name>/``: the indexes (:mod:`lexprobe.core.store`);
- ``<home>/.models/<what>/``: AM models (``am``) and cached AM target tables (``am-targets``); hidden, so that no
  index name is ever the same folder;
- ``<home>/.cache/`` (:func:`cache_dir`; ``$LEXPROBE_CACHE`` instead when set): compiled kernels (``numba/``,
  ``objects/``), WordNet converted for NLTK (``nltk_data/``) and dequantised language models (``models/``).

The downloaded data sets are the one exception: they live in the data home (:mod:`lexprobe.sources.datahome`),
shared by every index home. The home itself is the one given, else :func:`default_home`; the CLI makes its
``--home`` the default for the command's duration (:func:`using`), so that code deep down that has no home
parameter (the compiled-code cache) follows it too.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_given: list[Path] = []  # the homes made default by :func:`using`, innermost last


def default_home() -> Path:
    """The index home, resolved once: the home of an enclosing :func:`using` block (the CLI's ``--home``); else
    ``$LEXPROBE_HOME``; else, inside a lexprobe checkout, its ``indexes/`` folder (found from the working directory
    upwards); else a per-user folder (``$XDG_DATA_HOME/lexprobe/indexes``, by default
    ``~/.local/share/lexprobe/indexes``). Absolute, so that it means the same from any folder."""
    if _given:
        return _given[-1]
    env = os.environ.get("LEXPROBE_HOME")
    if env:
        return Path(env).expanduser().resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "indexes" / "README.md").is_file() and (folder / "pyproject.toml").is_file() \
                and 'name = "lexprobe"' in (folder / "pyproject.toml").read_text(errors="replace"):
            return folder / "indexes"
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return (data / "lexprobe" / "indexes").resolve()


def home_path(home: str | os.PathLike | None) -> Path:
    """``home`` as a path; None is :func:`default_home` (the public API's ``home=None``)."""
    return default_home() if home is None else Path(home)


@contextmanager
def using(home: str | os.PathLike) -> Iterator[Path]:
    """Within the block, ``home=None`` (and every cache) means ``home``: the CLI's ``--home`` for one command."""
    _given.append(Path(home).expanduser().resolve())
    try:
        yield _given[-1]
    finally:
        _given.pop()


def cache_dir(home: str | os.PathLike | None = None) -> Path:
    """Where caches live: ``$LEXPROBE_CACHE`` when set, else ``<home>/.cache`` (not created here)."""
    env = os.environ.get("LEXPROBE_CACHE")
    if env:
        return Path(env).expanduser()
    return home_path(home) / ".cache"


def models_dir(home: str | os.PathLike | None, what: str) -> Path:
    """``<home>/.models/<what>``: where AM models (``am``) and cached target tables (``am-targets``) live. Hidden,
    so that no index name can ever be the same folder (an index build swaps its folder in whole)."""
    return home_path(home) / ".models" / what
