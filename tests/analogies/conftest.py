"""Fixtures of the analogy tests: the packaged GloVe words index and BATS's relations over it."""

from __future__ import annotations

import pytest

from lexprobe.kinds.words import WordIndex
from lexprobe.sources.datasets.analogy_sets import usable_relations


@pytest.fixture(scope="module")
def glove(glove_home):
    return WordIndex.open("glove", home=glove_home)


@pytest.fixture(scope="module")
def bats(glove, shared_data):
    """BATS 3.0's relations, by code, with GloVe's out-of-vocabulary policy applied."""
    relations, _ = usable_relations(glove, f"bats:{shared_data / 'BATS_3.0'}")
    return {r.code: r for r in relations}
