"""Indexes a run builds once and reuses: :func:`ensure_index` rebuilds only when the manifest's source and
settings differ from what the run wants (or the index fails verification)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from ..core.errors import LexprobeError
from ..core.store import MANIFEST, Store


def _plain(value):
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def ensure_index(home: Path, name: str, wanted: dict, build: Callable[[], object]) -> dict:
    """Reuse index ``name`` when its manifest matches ``wanted``, else run ``build()``; says which and why.

    ``wanted`` is compared key by key with ``{"kind", "source"} | manifest["meta"]`` (JSON values). The existing
    index is verified (checksums) before it is reused; a damaged one is rebuilt.
    """
    path = home / name
    reason = "not built yet"
    if (path / MANIFEST).exists():
        try:
            store = Store.open(path)
        except LexprobeError as exc:
            reason = f"the existing index failed verification ({exc})"
        else:
            have = {"kind": store.kind, "source": store.manifest.get("source"), **store.meta}
            changed = [k for k, v in wanted.items() if _plain(have.get(k)) != _plain(v)]
            if not changed:
                return {"name": name, "reused": True, "reason": "manifest matches",
                        "version": store.manifest.get("version_id"), "created": store.manifest.get("created"),
                        "seconds": 0.0}
            reason = "settings differ: " + ", ".join(f"{k} {have.get(k)!r} -> {wanted[k]!r}" for k in changed)
    t0 = time.perf_counter()
    build()
    manifest = Store.open(path, verify=False).manifest
    return {"name": name, "reused": False, "reason": reason, "version": manifest.get("version_id"),
            "created": manifest.get("created"), "seconds": round(time.perf_counter() - t0, 2)}
