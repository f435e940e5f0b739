"""WordIndex as gensim's KeyedVectors: lexprobe.load_vectors opens a vector file in memory,
and len, in, index[...], key_to_index, index_to_key, most_similar, most_similar_cosmul, doesnt_match,
closer_than, rank, most_similar_to_given and evaluate_word_analogies answer as gensim's do on the same file
(gensim's own test vectors; the packaged GloVe for the analogy sections); a fastText .bin gives unseen words their
n-gram vectors as gensim's FastTextKeyedVectors does."""

from __future__ import annotations

import numpy as np
import pytest

import lexprobe
from lexprobe.core.errors import LexprobeError
from lexprobe.kinds.words import UnknownWords, WordIndex
from topk_ties import assert_topk_agrees

gensim_models = pytest.importorskip("gensim.models")
GENSIM_DATA = __import__("pathlib").Path(gensim_models.__file__).parent.parent / "test" / "test_data"
FILES = {"lee_fasttext.vec": False, "euclidean_vectors.bin": True}  # file -> word2vec binary
ERR = 1e-5  # float32 cosines of the same vectors, computed in another order: far above their rounding


@pytest.fixture(scope="module", params=sorted(FILES))
def pair(request):
    """(lexprobe's in-memory index, gensim's KeyedVectors) of one of gensim's test files."""
    path = GENSIM_DATA / request.param
    kv = gensim_models.KeyedVectors.load_word2vec_format(str(path), binary=FILES[request.param])
    return lexprobe.load_vectors(str(path)), kv


def test_load_vectors_is_a_words_index_in_memory(pair):
    ours, kv = pair
    assert isinstance(ours, WordIndex) and repr(ours).startswith("<WordIndex ") and "flat" in repr(ours)
    assert len(ours) == len(kv) and ours.dim == kv.vector_size
    assert ours.index_to_key == kv.index_to_key and ours.key_to_index == kv.key_to_index
    first, last = kv.index_to_key[0], kv.index_to_key[-1]
    assert first in ours and last in ours and "qqxyzz" not in ours and 42 not in ours
    np.testing.assert_array_equal(ours[first], kv[first])
    np.testing.assert_array_equal(ours[[first, last]], kv[[first, last]])
    with pytest.raises(KeyError):  # as gensim's kv[word]; a LexprobeError naming the word too
        ours["qqxyzz"]
    with pytest.raises(UnknownWords, match="unknown word 'qqxyzz'"):
        ours[[first, "qqxyzz"]]


def test_most_similar_and_cosmul_agree_with_gensim(pair):
    ours, kv = pair
    for word in kv.index_to_key[:40:3]:
        for mine, theirs in ((ours.most_similar(word, topn=5), kv.most_similar(word, topn=5)),
                             (ours.most_similar_cosmul(word, topn=5), kv.most_similar_cosmul(word, topn=5))):
            ids = [ours.key_to_index[w] for w, _ in mine]
            reference = ([kv.key_to_index[w] for w, _ in theirs], [s for _, s in theirs])
            assert_topk_agrees(ids, reference, ERR, scores=np.array([s for _, s in mine]), what=word)
    a, b, c = kv.index_to_key[5:8]
    mine, theirs = ours.most_similar_cosmul([b, c], [a], topn=5), kv.most_similar_cosmul([b, c], [a], topn=5)
    assert_topk_agrees([ours.key_to_index[w] for w, _ in mine], ([kv.key_to_index[w] for w, _ in theirs],
                       [s for _, s in theirs]), ERR, scores=np.array([s for _, s in mine]))
    assert {a, b, c}.isdisjoint(w for w, _ in mine)


def test_doesnt_match_rank_closer_than_most_similar_to_given_agree_with_gensim(pair):
    ours, kv = pair
    words = kv.index_to_key
    for start in range(0, 60, 6):
        group = words[start:start + 5]
        assert ours.doesnt_match(group) == kv.doesnt_match(group), group
        assert ours.most_similar_to_given(group[0], group[1:]) == kv.most_similar_to_given(group[0], group[1:])
        near = kv.most_similar(group[0], topn=8)[-1][0]
        assert ours.closer_than(group[0], near) == kv.closer_than(group[0], near)
        assert ours.rank(group[0], near) == kv.rank(group[0], near) >= 8
    with pytest.raises(UnknownWords):
        ours.doesnt_match([words[0], "qqxyzz"])  # gensim drops it with a warning; lexprobe names it
    with pytest.raises(LexprobeError, match="at least one"):
        ours.most_similar_to_given(words[0], [])


def test_evaluate_word_analogies_matches_gensim_on_its_questions(pair):
    ours, kv = pair
    questions = str(GENSIM_DATA / "questions-words.txt")
    for options in ({}, {"case_insensitive": False}, {"dummy4unknown": True, "restrict_vocab": 1000}):
        score, sections = ours.evaluate_word_analogies(questions, **options)
        want_score, want_sections = kv.evaluate_word_analogies(questions, **options)
        assert score == pytest.approx(want_score)
        assert [s["section"] for s in sections] == [s["section"] for s in want_sections]
        for mine, theirs in zip(sections, want_sections):
            assert mine["correct"] == theirs["correct"] and mine["incorrect"] == theirs["incorrect"], mine["section"]
    assert sum(len(s["correct"]) for s in want_sections) > 0  # answered questions, not only oov


def test_evaluate_word_analogies_on_glove_matches_gensim(glove_home, shared_data, tmp_path):
    from lexprobe.analogies.bench_analogy import gensim_vectors

    lines, section, kept, out = (shared_data / "google_analogy" / "questions-words.txt").read_text().splitlines(), \
        None, 0, []
    for line in lines:  # the first 30 questions of every section
        if line.startswith(":"):
            section, kept = line, 0
            out.append(line)
        elif kept < 30:
            out.append(line)
            kept += 1
    path = tmp_path / "questions-words.txt"
    path.write_text("\n".join(out) + "\n")
    glove = WordIndex.open("glove", home=glove_home)
    score, sections = glove.evaluate_word_analogies(path)
    want_score, want_sections = gensim_vectors(glove).evaluate_word_analogies(str(path))
    assert score == pytest.approx(want_score) and 0.3 < score < 0.9
    assert [(s["section"], s["correct"], s["incorrect"]) for s in sections] == \
        [(s["section"], s["correct"], s["incorrect"]) for s in want_sections]


def test_load_vectors_reads_other_formats_and_reports_bad_ones(tmp_path):
    text = tmp_path / "glove.txt"  # GloVe's text format: no header
    text.write_text("king 1 0 0\nqueen 0.9 0.1 0\nman 0 1 0\n")
    index = lexprobe.load_vectors(str(text))
    assert index.name == "glove.txt" and len(index) == 3 and index.most_similar("king", topn=1)[0][0] == "queen"
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(LexprobeError, match="empty.txt"):
        lexprobe.load_vectors(str(empty))


@pytest.mark.parametrize("name", ["lee_fasttext.bin", "lee_fasttext_new.bin"])
def test_a_fasttext_bin_gives_unseen_words_gensims_subword_vectors(name, tmp_path):
    from gensim.models.fasttext import load_facebook_vectors

    path = str(GENSIM_DATA / name)
    ours, kv = lexprobe.load_vectors(path), load_facebook_vectors(path)
    unseen = ["landlord", "qwertyuiop", "kingdoms", "nightly", "naïveté"]
    assert "n-grams 3..6" in repr(ours) and ours.index_to_key == kv.index_to_key
    for word in unseen:  # vocabulary only, as gensim's key_to_index (gensim's `in` says True for every word)
        assert word not in ours and word not in ours.key_to_index and word not in kv.key_to_index and word in kv
        np.testing.assert_array_equal(ours.vector(word), kv[word], err_msg=word)
    np.testing.assert_array_equal(ours[unseen + ["night"]], kv[unseen + ["night"]])
    for a, b in (("landlord", "night"), ("qwertyuiop", "kingdoms"), ("night", "day")):
        assert ours.similarity(a, b) == pytest.approx(float(kv.similarity(a, b)), abs=ERR)
    for positive, negative in ((["landlord"], []), (["qwertyuiop"], []), (["landlord", "night"], ["kingdoms"])):
        mine, theirs = ours.most_similar(positive, negative, topn=8), kv.most_similar(positive, negative, topn=8)
        assert_topk_agrees([ours.key_to_index[w] for w, _ in mine],
                           ([kv.key_to_index[w] for w, _ in theirs], [s for _, s in theirs]), ERR,
                           scores=np.array([s for _, s in mine]), what=str(positive))
    group = ["night", "kingdoms", "house", "qwertyuiop"]
    assert ours.most_similar_to_given("landlord", group) == kv.most_similar_to_given("landlord", group)
    with pytest.raises(UnknownWords, match="n-gram of 3..6"):  # "<>": no n-gram; gensim's zero vector
        ours.vector("")
    lexprobe.build_word_index("lee", path, home=tmp_path)  # a built index keeps the vocabulary only
    with pytest.raises(UnknownWords, match="landlord"):
        WordIndex.open("lee", home=tmp_path).vector("landlord")
