"""The index kinds: words, tokens, contexts and offsets, each a view over a store with its own schema and queries."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.conventions import old_order
from ..core.store import MANIFEST, home_path, open_index as open_store


@old_order("name", "home")
def open_index(name: str | os.PathLike, *, home: str | os.PathLike | None = None):
    """Open index ``name`` as its kind's view (:class:`~.words.WordIndex`, :class:`~.tokens.TokenIndex`,
    :class:`~.contexts.ContextIndex` or :class:`~.offsets.OffsetIndex`), verified. ``home`` defaults to the CLI's
    (``$LEXPROBE_HOME``, the checkout's ``indexes/``, or the per-user folder); ``name`` may also be the path of an
    index folder.
    """
    path = Path(name)
    if home is None and (path.parent != Path(".") or (path / MANIFEST).exists()):
        home, name = path.parent, path.name
    home = home_path(home)
    store = open_store(home, str(name))
    if store.kind == "words":
        from .words import WordIndex as view
    elif store.kind == "tokens":
        from .tokens import TokenIndex as view
    elif store.kind == "contexts":  # Attentive Mimicking's contexts
        from .contexts import ContextIndex as view
    else:
        from .offsets import OffsetIndex as view
    return view.open(store.name, home=home)
