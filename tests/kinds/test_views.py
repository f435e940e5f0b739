"""The public Python API (``import lexprobe``): opening indexes by name, gensim's semantics for most_similar and
similarity, words in and out, short reprs, and the docstring examples run as doctests."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import numpy as np
import pytest

import lexprobe
from lexprobe.core.errors import LexprobeError
from topk_ties import analogy_scores, assert_topk_agrees, dot_error, similar_scores, unit_error, unit_float64

G = float(dot_error(50, inputs=unit_error(50)))  # a float32 cosine of GloVe's vectors normalised in float32


@pytest.fixture(scope="module")
def glove(glove_home):
    return lexprobe.open_index("glove", home=str(glove_home))


@pytest.fixture(scope="module")
def kv(glove):
    from lexprobe.analogies.bench_analogy import gensim_vectors

    return gensim_vectors(glove)


def _agrees_with_gensim(glove, ours, theirs, exact_scores):
    """Our ``[(word, score)]`` against gensim's: the same list up to both sides' float32 rounding
    (tests/topk_ties.py); ``exact_scores(ids)`` gives the float64 scores of the words ``ids`` and one side's bound."""
    ids = lambda pairs: glove.ids([w for w, _ in pairs]).tolist()
    err = 2 * exact_scores(ids(ours) + ids(theirs))[1].max()
    assert_topk_agrees(ids(ours), (ids(theirs), [s for _, s in theirs]), err, scores=[s for _, s in ours])


def test_import_is_light():
    """``import lexprobe`` loads neither torch nor FAISS: a notebook's first cell stays fast."""
    code = "import sys, lexprobe; print(sorted({'torch', 'faiss', 'transformers'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_public_names():
    assert {"open_index", "WordIndex", "TokenIndex", "OffsetIndex", "__version__"} <= set(lexprobe.__all__)
    for name in lexprobe.__all__:
        assert getattr(lexprobe, name) is not None
    with pytest.raises(AttributeError):
        lexprobe.not_a_name


def test_open_index_takes_str_path_and_env(glove_home, monkeypatch, tmp_path):
    assert isinstance(lexprobe.open_index("glove", home=glove_home), lexprobe.WordIndex)
    assert lexprobe.open_index(glove_home / "glove").name == "glove"           # the index folder itself
    monkeypatch.setenv("LEXPROBE_HOME", str(glove_home))
    assert lexprobe.open_index("glove").store.count == 400_000
    assert lexprobe.WordIndex.open("glove", home=str(glove_home)).dim == 50   # a str home, not only a Path
    with pytest.raises(LexprobeError, match="no index named 'nope'"):
        lexprobe.open_index("nope")


def test_repr_is_one_short_line(glove):
    assert repr(glove) == "<WordIndex glove: 400000 x 50, flat>"


@pytest.mark.parametrize("positive, negative, restrict", [
    (["king"], [], None),
    (["woman", "king"], ["man"], None),
    (["paris", "italy"], ["france"], 50_000),
    (["frog", "toad", "lizard"], [], 10_000),
])
def test_most_similar_matches_gensim(glove, kv, positive, negative, restrict):
    ours = glove.most_similar(positive, negative, topn=10, restrict_vocab=restrict)
    theirs = kv.most_similar(positive=positive, negative=negative, topn=10, restrict_vocab=restrict)
    U = unit_float64(glove.raw)
    _agrees_with_gensim(glove, ours, theirs, lambda ids: similar_scores(U, glove.ids(positive), glove.ids(negative),
                                                                        G, ids))
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-5)


def test_a_str_is_one_word_never_its_letters(glove):
    one = glove.most_similar("king", topn=5)
    assert one == glove.most_similar(["king"], topn=5)
    assert all(w not in ("k", "i", "n", "g") for w, _ in one)
    assert glove.most_similar(positive="queen", negative="woman", topn=3) == \
        glove.most_similar(["queen"], ["woman"], topn=3)


def test_similarity_and_vector(glove, kv):
    assert glove.similarity("king", "queen") == pytest.approx(float(kv.similarity("king", "queen")), abs=1e-6)
    np.testing.assert_array_equal(glove.vector("frog"), kv["frog"])


@pytest.mark.parametrize("a, a_star, b", [("man", "king", "woman"), ("france", "paris", "italy"),
                                           ("good", "better", "bad")])
def test_analogy_in_words_matches_gensim(glove, kv, a, a_star, b):
    ours = glove.analogy(a, a_star, b, k=5)
    theirs = kv.most_similar(positive=[a_star, b], negative=[a], topn=5)
    U, question = unit_float64(glove.raw), glove.ids([a, a_star, b])
    _agrees_with_gensim(glove, ours, theirs, lambda ids: analogy_scores(U, "add", *question, G, ids))
    # 3CosMul with gensim's epsilon
    ours = glove.analogy(a, a_star, b, k=3, method="mul", eps=1e-6)
    theirs = kv.most_similar_cosmul(positive=[a_star, b], negative=[a], topn=3)
    _agrees_with_gensim(glove, ours, theirs, lambda ids: analogy_scores(U, "mul", *question, G, ids, eps=1e-6))
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-5)


def test_honest_analogy_may_return_the_inputs(glove):
    honest = [w for w, _ in glove.analogy("man", "king", "woman", k=3, exclude_inputs=False)]
    assert "king" in honest and set(honest) & {"man", "king", "woman"}
    usual = [w for w, _ in glove.analogy("man", "king", "woman", k=3)]
    assert not set(usual) & {"man", "king", "woman"}


def test_unknown_words_and_bad_topn_are_clear(glove):
    with pytest.raises(LexprobeError, match="unknown word 'qqqzzz'"):
        glove.most_similar(["king", "qqqzzz"])
    assert glove.most_similar("king", topn=0) == []  # gensim's answer
    assert glove.most_similar(42, topn=3) == glove.most_similar(glove.index_to_key[42], topn=3)  # a row, as gensim
    with pytest.raises(TypeError):
        glove.most_similar(b"king")
    with pytest.raises(TypeError):
        glove.analogy(["man"], "king", "woman")
    with pytest.raises(LexprobeError, match="unknown analogy method"):
        glove.analogy("man", "king", "woman", method="sub")


DOCTESTED = ["lexprobe", "lexprobe.kinds.words", "lexprobe.kinds.keyed_vectors", "lexprobe.analogies.analogy_evaluation",  # kinds.tokens: test_tokens
             "lexprobe.analogies.offset_consistency", "lexprobe.senses.sense_ranking"]


@pytest.mark.parametrize("module", DOCTESTED)
def test_docstring_examples(module, glove_home, shared_data, monkeypatch):
    """Every ``>>>`` example of the main entry points runs (on the packaged GloVe)."""
    monkeypatch.setenv("LEXPROBE_HOME", str(glove_home))
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs = {"lexprobe": lexprobe, "BATS": shared_data / "BATS_3.0"}
    tests = [t for t in finder.find(mod, globs=globs) if t.examples]
    assert tests, f"{module} has no examples"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {module}"
