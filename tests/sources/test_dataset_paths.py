"""A dataset path relative to the checkout or to a data place reads the same dataset from any working folder (a
notebook's), as the CLI run from the checkout reads it; a path that exists is taken as given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import lexprobe
from lexprobe.core.errors import LexprobeError
from lexprobe.sources.datahome import dataset_path
from lexprobe.sources.datasets.analogy_sets import read_dataset

CHECKOUT = Path(__file__).resolve().parents[2]
RELATION = "BATS_3.0/1_Inflectional_morphology/I01 [noun - plural_reg].txt"


def test_relative_paths_resolve_through_the_data_places(shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("LEXPROBE_DATA", str(tmp_path / "empty-data-home"))
    from_checkout = os.path.relpath(shared_data / RELATION, CHECKOUT)  # ../shared/data/BATS_3.0/...
    monkeypatch.chdir(tmp_path)  # a notebook's folder: neither path exists from here
    assert not Path(from_checkout).exists() and not Path(RELATION).exists()
    assert dataset_path(from_checkout) == dataset_path(RELATION) == (shared_data / RELATION).resolve()
    mine = read_dataset(f"bats:{from_checkout}")
    assert [r.pairs for r in mine] == [r.pairs for r in read_dataset(f"bats:{shared_data / RELATION}")]
    assert [r.pairs for r in read_dataset(f"bats:{RELATION}")] == [r.pairs for r in mine] and len(mine[0].pairs) == 50
    (tmp_path / "BATS_3.0").mkdir()  # a path that exists from the working folder is taken as given
    assert dataset_path("BATS_3.0") == Path("BATS_3.0")
    with pytest.raises(LexprobeError, match="nowhere.txt"):
        read_dataset("bats:nowhere.txt")


def test_gensim_methods_take_the_same_relative_paths(shared_data, tmp_path, monkeypatch):
    kv = lexprobe.load_vectors("glove-6b-50d", limit=3000)
    questions = "google_analogy/questions-words.txt"
    monkeypatch.chdir(tmp_path)
    score, sections = kv.evaluate_word_analogies(questions, restrict_vocab=3000)
    assert (score, [s["section"] for s in sections]) == (lambda r: (r[0], [s["section"] for s in r[1]]))(
        kv.evaluate_word_analogies(str(shared_data / questions), restrict_vocab=3000))
