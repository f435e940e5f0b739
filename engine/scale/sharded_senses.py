"""The sense-ranking run (``run senses`` / ``bench senses``) on Ray: its token indexes built by encoder
actors, and their vectors served by shard-group actors, from which the ranking gathers one lemma's candidates
at a time. The ranking itself is the local one on the same unit vectors, so its numbers are identical."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.store import open_index
from ..kinds.tokens import TokenIndex
from .build import DEFAULT_BLOCK_SENTENCES, build_token_index_ray
from .cluster import connect
from .search import RemoteRows, ShardedVectors


class RayEngine:
    """What :func:`lexprobe.senses.run_senses.run_senses` asks of an engine: ``build`` a token index, ``open`` one.
    Close it to stop the actors it started."""

    def __init__(self, address: str | None = None, *, workers: int | None = None,
                 block_sentences: int = DEFAULT_BLOCK_SENTENCES, groups: int | None = None):
        connect(address)
        self.address, self.workers, self.block_sentences, self.groups = address, workers, block_sentences, groups
        self.served: list[ShardedVectors] = []

    def build(self, name: str, model: str, corpus_spec: str, *, home: Path, **options) -> dict:
        return build_token_index_ray(name, model, corpus_spec, home=home, workers=self.workers,
                                     block_sentences=self.block_sentences, address=self.address, **options)

    def open(self, name: str, *, home: Path) -> TokenIndex:
        """The token index with its vectors on Ray: ``vectors`` searches the shard groups, ``unit`` gathers rows
        from them on demand."""
        store = open_index(home, name, kind=TokenIndex.kind, verify=False)
        vectors = ShardedVectors(store, self.groups, address=self.address)
        self.served.append(vectors)
        index = TokenIndex(store, vectors)
        index.__dict__["unit"] = RemoteRows(vectors, np.arange(store.count))  # in place of the local matrix
        return index

    def close(self) -> None:
        for vectors in self.served:
            vectors.close()
        self.served = []
