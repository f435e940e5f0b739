"""Seeded random streams: every random choice in lexprobe draws from a generator keyed by (seed, keys...), so
one stream's draws never shift another's and the same seed gives the same numbers."""

from __future__ import annotations

import zlib

import numpy as np

from .errors import LexprobeError


def rng_for(seed: int, *keys: int | str) -> np.random.Generator:
    """An independent generator for (seed, keys...); strings are keyed by their CRC32."""
    if seed < 0:
        raise LexprobeError(f"seed must be >= 0, got {seed}")
    words = [seed] + [zlib.crc32(k.encode()) if isinstance(k, str) else int(k) for k in keys]
    return np.random.default_rng(words)
