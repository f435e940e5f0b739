"""Unknown words and question files: every unknown word is named with its
case-folded form where the index has it; --skip-unknown answers the rest and lists what was skipped (words,
question lines, pair lines); the standard four-column analogy file gives accuracy per section as gensim's
evaluate_word_analogies does."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lexprobe.kinds.words import UnknownWords, WordIndex


def test_every_unknown_word_named_with_its_case_folded_form(glove_home):
    glove = WordIndex.open("glove", home=glove_home)
    with pytest.raises(UnknownWords) as err:
        glove.ids(["King", "queen", "qqxyzz", "Paris", "King"])
    assert err.value.words == ["King", "qqxyzz", "Paris"]
    assert str(err.value) == ("query: 3 unknown words (not in index 'glove'): 'King' (try 'king'), 'qqxyzz', "
                              "'Paris' (try 'paris')")
    assert glove.suggestion("QUEEN") == "queen" and glove.suggestion("qqxyzz") is None


def test_skip_unknown_neighbors_questions_pairs(cli, glove_home, tmp_path):
    g = ("--home", glove_home, "query")
    r = cli(*g, "neighbors", "--index", "glove", "King", "queen", "qqxyzz", "-k", "2")
    assert r.code == 2 and "'King' (try 'king'), 'qqxyzz'" in r.err and "--skip-unknown" in r.err
    r = cli(*g, "neighbors", "--index", "glove", "King", "queen", "qqxyzz", "-k", "2", "--skip-unknown",
            "--format", "json")
    assert r.code == 0 and {row["query"] for row in json.loads(r.out)} == {"queen"}
    assert "skipped 2 of 3" in r.err and "'King' (try 'king')" in r.err

    questions = tmp_path / "q.txt"
    questions.write_text("man king woman\nMan king Woman\n# a comment\nparis france qqxyzz\nboy prince girl\n")
    r = cli(*g, "analogy", "--index", "glove", "--questions", questions, "-k", "1")
    assert r.code == 2 and "lines 2, 4" in r.err and "'Man' (try 'man')" in r.err and "'qqxyzz'" in r.err
    r = cli(*g, "analogy", "--index", "glove", "--questions", questions, "-k", "1", "--skip-unknown",
            "--format", "json")
    assert r.code == 0 and [row["word"] for row in json.loads(r.out)] == ["queen", "princess"]
    assert "skipped 2 of 4 with unknown words (lines 2, 4)" in r.err

    pairs = tmp_path / "pairs.txt"
    pairs.write_text("man king\nwoman queen\nBoy prince\nboy prince\ngirl princess\n")
    r = cli(*g, "offsets", "--index", "glove", "--pairs", pairs)
    assert r.code == 2 and f"{pairs}:3: unknown word 'Boy' (not in index 'glove'; try 'boy')" in r.err
    r = cli(*g, "offsets", "--index", "glove", "--pairs", pairs, "--skip-unknown", "--format", "json")
    assert r.code == 0 and json.loads(r.out)[0]["n_pairs"] == 4 and "skipped 1 of 5" in r.err


def test_many_unknown_words_are_one_short_line(cli, glove_home, tmp_path):
    """A questions file full of unknown words names the first ten lines and twenty words, then how many more:
    one readable stderr line, skipped or not."""
    questions = tmp_path / "q.txt"
    questions.write_text("man king woman\n" + "".join(f"qq{i}a qq{i}b qq{i}c\n" for i in range(300)))
    g = ("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", questions, "-k", "1")
    for extra in ((), ("--skip-unknown",)):
        r = cli(*g, *extra)
        assert len(r.err.strip().splitlines()) == 1 and len(r.err) < 800, r.err
        assert "lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 290 more" in r.err and "'qq6b' and 880 more" in r.err


@pytest.fixture(scope="module")
def google_subset(shared_data, tmp_path_factory):
    """The first 40 questions of four sections of the real questions-words.txt (names capitalised)."""
    lines = (shared_data / "google_analogy" / "questions-words.txt").read_text().splitlines()
    out, section, kept = [], None, 0
    wanted = {": capital-common-countries", ": city-in-state", ": family", ": gram3-comparative"}
    for line in lines:
        if line.startswith(":"):
            section, kept = line, 0
            if section in wanted:
                out.append(line)
        elif section in wanted and kept < 40:
            out.append(line)
            kept += 1
    path = tmp_path_factory.mktemp("google") / "questions-words.txt"
    path.write_text("\n".join(out) + "\n")
    return path


def test_four_column_file_matches_gensim_per_section(cli, glove_home, google_subset):
    from gensim.models import KeyedVectors

    glove = WordIndex.open("glove", home=glove_home)
    kv = KeyedVectors(glove.dim)
    kv.add_vectors(glove.words, np.asarray(glove.raw))
    score, sections = kv.evaluate_word_analogies(str(google_subset), restrict_vocab=300_000, case_insensitive=True)
    r = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", google_subset,
            "--restrict-vocab", "300000", "--case-insensitive", "--format", "json")
    assert r.code == 0, r
    rows = {row["section"]: row for row in json.loads(r.out)}
    for s in sections:
        name = "total" if s["section"] == "Total accuracy" else s["section"]
        assert (rows[name]["correct"], rows[name]["answered"]) == (len(s["correct"]),
                                                                   len(s["correct"]) + len(s["incorrect"])), name
    assert rows["total"]["accuracy"] == pytest.approx(score) and rows["total"]["questions"] == 160
    assert 0 < rows["family"]["correct"] < rows["family"]["answered"]
    # exact matching: the capitalised names are not in lowercase GloVe, so those questions are oov
    r = cli("--home", glove_home, "query", "analogy", "--index", "glove", "--questions", google_subset,
            "--format", "json")
    exact = {row["section"]: row for row in json.loads(r.out)}
    assert exact["capital-common-countries"]["oov"] == 40 and exact["family"]["oov"] == 0
    assert exact["capital-common-countries"]["accuracy"] is None
