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


# ------------------------------------------------------------------------------ the whole reading surface

def gensim_members() -> set[str]:
    """The installed gensim's public KeyedVectors members: the class's and an instance's attributes."""
    import inspect

    cls = gensim_models.KeyedVectors
    return {n for n, _ in inspect.getmembers(cls) if not n.startswith("_")} | \
        {n for n in vars(cls(3)) if not n.startswith("_")}


def test_every_gensim_member_has_a_counterpart_or_a_refusal(pair):
    from lexprobe.kinds.keyed_vectors import GENSIM, Refused

    ours, _ = pair
    members = gensim_members()
    assert members - set(GENSIM) == set(), "a gensim member without a counterpart or a refusal"
    assert set(GENSIM) - members == set(), "a table row for no gensim member"
    for name, (way, note) in GENSIM.items():
        if way is None:
            with pytest.raises(Refused, match=f"^{name}: not a words index member"):
                getattr(ours, name)
            assert not hasattr(ours, name) and note
        else:
            owner, attr = way.split(".")
            assert hasattr(ours if owner == "index" else lexprobe, attr), way


def test_the_gensim_page_is_the_table():
    from pathlib import Path

    from lexprobe.kinds.keyed_vectors import gensim_table

    page = (Path(__file__).resolve().parents[2] / "docs" / "gensim.md").read_text()
    assert gensim_table() in page, "docs/gensim.md: paste lexprobe.kinds.keyed_vectors.gensim_table()"


def test_vectors_and_getters_are_gensims(pair):
    ours, kv = pair
    assert isinstance(ours.vectors, np.ndarray) and ours.vectors.dtype == np.float32
    np.testing.assert_array_equal(ours.vectors, kv.vectors)
    np.testing.assert_array_equal(ours.vectors[0], kv.vectors[0])
    assert type(ours.vectors[0]) is np.ndarray and type(ours.vectors @ kv.vectors[0]) is np.ndarray
    with pytest.raises(ValueError):
        ours.vectors[0, 0] = 1.0
    with pytest.warns(DeprecationWarning, match="index.searcher.search"):  # the old meaning, one release
        assert ours.vectors.search(ours.unit[:1], 1)[1][0, 0] == 0
    assert ours.vector_size == kv.vector_size and ours.searcher.ntotal == len(kv)
    np.testing.assert_allclose(ours.norms, kv.norms, rtol=1e-6)
    np.testing.assert_allclose(ours.get_normed_vectors(), kv.get_normed_vectors(), atol=1e-6)
    word = kv.index_to_key[7]
    np.testing.assert_array_equal(ours.get_vector(word), kv.get_vector(word))
    np.testing.assert_allclose(ours.get_vector(word, norm=True), kv.get_vector(word, norm=True), atol=1e-6)
    np.testing.assert_array_equal(ours.get_vector(3), kv.get_vector(3))
    np.testing.assert_array_equal(ours.word_vec(word), kv.get_vector(word))
    assert ours.get_index(word) == kv.get_index(word) == 7 and ours.get_index(3) == kv.get_index(3) == 3
    assert ours.get_index("qqxyzz", -1) == kv.get_index("qqxyzz", -1) == -1
    assert ours.has_index_for(word) and not ours.has_index_for("qqxyzz") and not ours.has_index_for(10 ** 9)
    with pytest.raises(KeyError):
        ours.get_index("qqxyzz")
    assert ours.get_vecattr(word, "count") == kv.get_vecattr(word, "count")
    assert ours.expandos["count"].tolist() == kv.expandos["count"].tolist()
    for keys, weights, pre, post in ((kv.index_to_key[:3], None, True, False), (kv.index_to_key[3:6], [1, -2, .5],
                                     False, True), ([word, kv.vectors[9]], None, True, True),
                                     ([word, "qqxyzz"], None, True, False)):
        np.testing.assert_allclose(ours.get_mean_vector(keys, weights, pre, post),
                                   kv.get_mean_vector(keys, weights, pre, post), atol=1e-6)


def test_queries_by_vector_weight_row_and_topn_none_are_gensims(pair):
    ours, kv = pair
    w = kv.index_to_key
    queries = [({"positive": [kv[w[4]]]}, {}), ({"positive": [(w[1], 1.0), (w[2], 0.5)], "negative": [(w[3], -2.0)]}, {}),
               ({"positive": [w[5], kv[w[9]]], "negative": w[2]}, {}), ({"positive": 11}, {}),
               ({"positive": [w[6]]}, {"restrict_vocab": 50}), ({"positive": [w[6]]}, {"clip_start": 10, "clip_end": 90})]
    for args, extra in queries:
        mine, theirs = ours.most_similar(**args, topn=6, **extra), kv.most_similar(**args, topn=6, **extra)
        assert_topk_agrees([ours.key_to_index[x] for x, _ in mine], ([kv.key_to_index[x] for x, _ in theirs],
                           [s for _, s in theirs]), ERR, scores=np.array([s for _, s in mine]), what=str(args)[:60])
        np.testing.assert_allclose(ours.most_similar(**args, topn=None, **extra),
                                   kv.most_similar(**args, topn=None, **extra), atol=ERR)
    assert ours.most_similar(w[0], topn=0) == kv.most_similar(w[0], topn=0) == []
    for mine, theirs in ((ours.similar_by_word(w[3], topn=4), kv.similar_by_word(w[3], topn=4)),
                         (ours.similar_by_key(w[3], topn=4), kv.similar_by_key(w[3], topn=4)),
                         (ours.similar_by_vector(kv[w[8]] * 3, topn=4), kv.similar_by_vector(kv[w[8]] * 3, topn=4)),
                         (ours.most_similar_cosmul([kv[w[2]], w[5]], [w[7]], topn=4),
                          kv.most_similar_cosmul([kv[w[2]], w[5]], [w[7]], topn=4))):
        assert [x for x, _ in mine] == [x for x, _ in theirs]
        np.testing.assert_allclose([s for _, s in mine], [s for _, s in theirs], atol=ERR)
    np.testing.assert_allclose(ours.most_similar_cosmul(w[2], w[3], topn=None),
                               kv.most_similar_cosmul(w[2], w[3], topn=None), atol=ERR)
    with pytest.raises(LexprobeError, match="shape"):
        ours.most_similar(np.ones(3, np.float32))
    with pytest.raises(UnknownWords):
        ours.most_similar([("qqxyzz", 1.0)])


def test_similarities_and_distances_are_gensims(pair):
    ours, kv = pair
    w = kv.index_to_key
    assert ours.n_similarity(w[:3], w[3:5]) == pytest.approx(float(kv.n_similarity(w[:3], w[3:5])), abs=ERR)
    assert ours.n_similarity([w[1], "qqxyzz"], [w[2]]) == pytest.approx(float(kv.n_similarity([w[1], "qqxyzz"],
                                                                                               [w[2]])), abs=ERR)
    assert ours.distance(w[1], w[2]) == pytest.approx(float(kv.distance(w[1], w[2])), abs=ERR)
    np.testing.assert_allclose(ours.distances(w[1], w[2:9]), kv.distances(w[1], w[2:9]), atol=ERR)
    np.testing.assert_allclose(ours.distances(kv[w[4]]), kv.distances(kv[w[4]]), atol=ERR)
    np.testing.assert_allclose(ours.cosine_similarities(kv[w[1]], kv.vectors[:20]),
                               kv.cosine_similarities(kv[w[1]], kv.vectors[:20]), atol=ERR)
    near = kv.most_similar(w[0], topn=5)[-1][0]
    assert ours.words_closer_than(w[0], near) == kv.words_closer_than(w[0], near)
    assert ours.relative_cosine_similarity(w[3], w[4]) == pytest.approx(kv.relative_cosine_similarity(w[3], w[4]),
                                                                        abs=ERR)
    for use_norm in (True, False):
        mine, theirs = ours.rank_by_centrality(w[10:16], use_norm), kv.rank_by_centrality(w[10:16], use_norm)
        assert [x for _, x in mine] == [x for _, x in theirs]
        np.testing.assert_allclose([s for s, _ in mine], [s for s, _ in theirs], atol=ERR)


def test_save_word2vec_format_writes_gensims_bytes(pair, tmp_path):
    ours, kv = pair
    for binary in (False, True):
        for who, model in (("ours", ours), ("gensim", kv)):
            model.save_word2vec_format(str(tmp_path / f"{who}.{binary}"), fvocab=str(tmp_path / f"{who}.vocab"),
                                       binary=binary)
        assert (tmp_path / f"ours.{binary}").read_bytes() == (tmp_path / f"gensim.{binary}").read_bytes()
        assert (tmp_path / "ours.vocab").read_bytes() == (tmp_path / "gensim.vocab").read_bytes()
        again = lexprobe.load_vectors(str(tmp_path / f"ours.{binary}"), binary=binary)
        np.testing.assert_array_equal(again.vectors, kv.vectors)


def test_gensim_objects_and_loader_flags(pair, tmp_path):
    ours, kv = pair
    theirs = ours.to_gensim()
    assert isinstance(theirs, gensim_models.KeyedVectors) and theirs.index_to_key == kv.index_to_key
    np.testing.assert_array_equal(theirs.vectors, kv.vectors)
    assert theirs.get_vecattr(kv.index_to_key[2], "count") == kv.get_vecattr(kv.index_to_key[2], "count")
    back = lexprobe.load_vectors(kv)
    assert back.index_to_key == kv.index_to_key and back.most_similar(kv.index_to_key[0], topn=3) == \
        ours.most_similar(kv.index_to_key[0], topn=3)
    glove = tmp_path / "g.txt"
    glove.write_text("king 1 0 0\nqueen 0.9 0.1 0\nman 0 1 0\n")
    plain = gensim_models.KeyedVectors.load_word2vec_format(str(glove), no_header=True)
    np.testing.assert_array_equal(lexprobe.load_vectors(glove, no_header=True).vectors, plain.vectors)
    with pytest.raises(LexprobeError, match="fvocab"):
        lexprobe.load_vectors(str(glove), fvocab="counts.txt")
    with pytest.raises(LexprobeError, match="disagree"):
        lexprobe.load_vectors(str(glove), fmt="glove", binary=True)
    subset = ours.vectors_for_all(kv.index_to_key[3:9] + ["qqxyzz"])
    np.testing.assert_array_equal(subset.vectors, kv.vectors_for_all(kv.index_to_key[3:9] + ["qqxyzz"]).vectors)


def test_evaluate_word_analogies_is_a_table_that_unpacks_as_gensims(pair):
    ours, _ = pair
    result = ours.evaluate_word_analogies(str(GENSIM_DATA / "questions-words.txt"))
    score, sections = result
    assert (score, sections) == (result[0], result[1]) and len(result) == 2
    table = result.to_arrow()
    assert table.column_names == ["section", "a", "a_star", "b", "b_star", "asked", "answer", "correct"]
    asked = table.filter(table.column("asked"))
    assert asked.num_rows == len(sections[-1]["correct"]) + len(sections[-1]["incorrect"]) > 0
    assert sum(asked.column("correct").to_pylist()) == len(sections[-1]["correct"])
    answers = [a.upper() == b for a, b in zip(asked.column("answer").to_pylist(), asked.column("b_star").to_pylist())]
    assert answers == asked.column("correct").to_pylist()  # gensim matches ignoring case: the answer is b*
    with pytest.raises(LexprobeError, match="similarity_function"):
        ours.evaluate_word_analogies(str(GENSIM_DATA / "questions-words.txt"), similarity_function="x")
