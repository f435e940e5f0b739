"""lexprobe: a vector-index retrieval engine for probing word embeddings.

The public API (what notebooks use; the CLI and the main job are built on the same functions)::

    >>> import lexprobe
    >>> glove = lexprobe.open_index("glove")          # the home: $LEXPROBE_HOME, the checkout's indexes/, ...
    >>> glove
    <WordIndex glove: 400000 x 50, flat>
    >>> glove.most_similar("king", topn=3)[0][0]
    'prince'

Every public name follows one convention (CONTRIBUTING.md, "API convention"): the index name first and
``home=None`` as a keyword, ``k`` for top-k, ``exclude_inputs`` for leaving a query's own words out, results as
Arrow tables or result dataclasses with ``to_arrow()``/``to_pandas()``. Names are loaded on first use, so
``import lexprobe`` stays fast (no torch, FAISS or Arrow until needed).
"""

from __future__ import annotations

from importlib import import_module

from .core.version import __version__

# public name -> (module relative to this package, attribute)
_EXPORTS = {
    "open_index": ("kinds", "open_index"),
    "default_home": ("core.store", "default_home"),
    "WordIndex": ("kinds.words", "WordIndex"),
    "TokenIndex": ("kinds.tokens", "TokenIndex"),
    "OffsetIndex": ("kinds.offsets", "OffsetIndex"),
    "build_word_index": ("kinds.words", "build_word_index"),
    "load_vectors": ("kinds.words", "load_vectors"),  # a vector file in memory, as gensim's load_word2vec_format
    "build_token_index": ("kinds.tokens", "build_token_index"),
    "LexprobeError": ("core.errors", "LexprobeError"),
    # the analogies paper: the analogy test with its decomposition, OCS/PCS of word pairs, Table 1
    "analogy_dataset": ("sources.datasets.analogy_sets", "usable_relations"),
    "analogy_test": ("analogies.analogy_evaluation", "analogy_test"),
    "relation_offsets": ("analogies.offset_consistency", "relation_offsets"),
    "offset_table1": ("analogies.run_analogies", "run_table1"),
    # BERT has uncommon sense: query by example (TokenIndex.query) and the ranking with its cells
    "sense_ranking": ("senses.sense_ranking", "sense_ranking"),
    # rare words: OTA (inserted into a words index, or on its own), WNLaMPro built, read and probed
    "insert_ota": ("rare_words.inserted_vectors", "insert_ota"),
    "one_token_approximation": ("rare_words.ota", "one_token_approximation"),
    "load_lm": ("rare_words.language_models", "load_lm"),
    "build_wnlampro": ("rare_words.wnlampro_build", "build_wnlampro"),
    "read_wnlampro": ("sources.datasets.wnlampro", "read_dataset"),
    "probe_wnlampro": ("rare_words.probing", "probe_tables"),
    # rare words: Attentive Mimicking trained, opened, inserted into a words index
    "train_am": ("rare_words.am_store", "train_am"),
    "AMModel": ("rare_words.mimicking", "AMModel"),
    "insert_am": ("rare_words.inserted_vectors", "insert_am"),
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _EXPORTS[name]
    value = getattr(import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
