"""kinds.section_scores: the one computation of accuracy per section of a four-column analogy file, behind
evaluate_word_analogies, query analogy --questions (analogies.analogy_sections) and the main job's Google table;
a hand-computed example, gensim's case rule, the sample, and the answers against float64 brute force on GloVe."""

from __future__ import annotations

import numpy as np
import pytest

import lexprobe
from lexprobe.analogies.analogy_sections import section_accuracy
from lexprobe.kinds.section_scores import score_sections
from lexprobe.kinds.words import WordIndex
from lexprobe.sources.datasets.google import read_questions
from topk_ties import add_error, assert_topk_agrees, dot_error, unit_error, unit_float64

# q = a* - a + b on unit vectors. family 1: q = (-.29, 1, .71, 0); cosines KING .986, queen .959, woman .794: the
# first non-input is KING, the input king in another case (gensim's rule skips it: QUEEN, correct ignoring case).
# family 2: q = (.29, .71, 0, 0): woman .924 first (correct, also honestly). other: q = (1, -.29, .71, 0): king .959.
VECTORS = "man 1 0 0 0\nking 1 0 1 0\nwoman 0 1 0 0\nqueen 0 1 1 0\nKING -0.1 1 0.8 0\napple 0 0 0 1\n"
QUESTIONS = (": family\nman king woman queen\nking queen man woman\nman king woman xyzzy\n"
             ": other\nwoman queen man king\n")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sections")
    (folder / "v.txt").write_text(VECTORS)
    (folder / "q.txt").write_text(QUESTIONS)
    return lexprobe.load_vectors(str(folder / "v.txt")), folder / "q.txt"


def test_rows_by_hand_and_gensims_case_rule(small):
    index, path = small
    exact = score_sections(index, read_questions(path))
    assert [(r["section"], r["questions"], r["oov"], r["answered"], r["correct"]) for r in exact.rows] == \
        [("family", 3, 1, 2, 1), ("other", 1, 0, 1, 1), ("total", 4, 1, 3, 2)]
    assert exact.rows[0]["accuracy"] == 0.5 and exact.rows[-1]["accuracy"] == pytest.approx(2 / 3)
    assert index.words_at(exact.predicted[:2]) == ["KING", "woman"] and exact.predicted[2] == -1
    assert index.words_at(exact.honest[[0, 1, 3]]) == ["KING", "woman", "king"]
    assert [exact.rows[0][c] for c in ("honest_accuracy", "honest_returns_b", "honest_returns_a_star")] == [0.5, 0, 0]
    folded = score_sections(index, read_questions(path), case_insensitive=True)
    assert index.words_at(folded.predicted[:1]) == ["queen"] and folded.rows[0]["accuracy"] == 1.0
    assert folded.rows[0]["honest_returns_a_star"] == 0.5  # KING is a* (king) ignoring case
    assert folded.words[0] == ("MAN", "KING", "WOMAN", "QUEEN")
    assert section_accuracy(index, read_questions(path))[-1] == {
        "section": "total", "questions": 4, "oov": 1, "answered": 3, "correct": 2, "accuracy": 2 / 3}


def test_evaluate_word_analogies_on_the_example_is_gensims(small):
    gensim_models = pytest.importorskip("gensim.models")
    index, path = small
    kv = gensim_models.KeyedVectors.load_word2vec_format(str(path.parent / "v.txt"), no_header=True)
    for options in ({}, {"case_insensitive": False}, {"dummy4unknown": True}):
        score, sections = index.evaluate_word_analogies(path, **options)
        want_score, want_sections = kv.evaluate_word_analogies(str(path), **options)
        assert score == pytest.approx(want_score) and sections == want_sections, options


def test_a_sample_asks_only_that_many_known_questions(small):
    index, path = small
    scores = score_sections(index, read_questions(path), sample=2, seed=3)
    assert scores.asked.sum() == 2 and not scores.asked[2]
    assert scores.rows[-1]["answered"] == 2 and scores.rows[-1]["oov"] == 1
    assert (scores.predicted[~scores.asked] == -1).all()


def test_answers_equal_brute_force_on_real_questions(glove_home, shared_data):
    index = WordIndex.open("glove", home=glove_home)
    questions = read_questions(shared_data / "google_analogy" / "questions-words.txt", lowercase=True)
    scores = score_sections(index, questions, sample=150, seed=0)
    asked = np.flatnonzero(scores.asked)
    ids = index.ids([w for i in asked for w in scores.words[i]]).reshape(-1, 4)
    unit = unit_float64(index.raw)  # float64: the float32 answers may differ only within rounding
    q = unit[ids[:, 2]] - unit[ids[:, 0]] + unit[ids[:, 1]]
    err = add_error(float(dot_error(50, inputs=unit_error(50))), np.linalg.norm(q, axis=1))  # tests/topk_ties.py
    for part in np.array_split(np.arange(len(q)), 5):  # 30 questions at a time: 96 MB of float64 scores
        best = (q[part] / np.linalg.norm(q[part], axis=1, keepdims=True)) @ unit.T
        assert_topk_agrees(scores.honest[asked[part], None], best, err[part, None], what="honest")
        np.put_along_axis(best, ids[part, :3], -np.inf, axis=1)
        assert_topk_agrees(scores.predicted[asked[part], None], best, err[part, None], what="inputs excluded")
    assert scores.rows[-1]["answered"] == 150 and scores.rows[-1]["accuracy"] > 0.3
