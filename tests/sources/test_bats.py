"""BATS and Google readers: real files, CRLF and malformed fixtures, the out-of-vocabulary report."""

from __future__ import annotations

import pytest

from lexprobe.sources.datasets.bats import apply_vocab, category_of, read_bats, read_relation_file
from lexprobe.sources.datasets.google import read_google, read_questions
from lexprobe.core.errors import InputError, LexprobeError


def _write(path, text: str, newline: str = "\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def test_real_bats_has_40_relations_of_50_pairs(shared_data):
    rels = read_bats(shared_data / "BATS_3.0")
    assert len(rels) == 40 and all(len(r.pairs) == 50 for r in rels)
    assert [r.code for r in rels[:2]] == ["I01", "I02"] and rels[-1].code == "L10"
    assert {r.category for r in rels} == {"inflectional", "derivational", "encyclopedic", "lexicographic"}
    assert rels[0].name == "I01 [noun - plural_reg]" and rels[0].pairs[0] == ("album", ["albums"])
    assert all(len(a) == 1 for r in rels for _, a in r.pairs)  # first answer only by default


def test_any_keeps_every_answer_in_order_without_empty_ones(shared_data):
    rel = read_relation_file(shared_data / "BATS_3.0/4_Lexicographic_semantics/L01 [hypernyms - animals].txt",
                             answers="any")
    start, answers = rel.pairs[0]
    assert start == "allosaurus"
    # the file line ends in '/': no empty answer; multi-word answers keep their '_'
    assert answers == ["dinosaur", "reptile", "bird", "archosaur", "archosaurian", "archosaurian_reptile"]
    assert rel.category == "lexicographic"


def test_crlf_and_duplicates(tmp_path):
    f = _write(tmp_path / "3_Encyclopedic_semantics" / "E07 [animal - sound].txt",
               "dog\tbark/growl/bow_wow\ncat\tmeow/purr\ndog\twoof\n\n", newline="\r\n")
    rel = read_relation_file(f, answers="any")
    assert rel.code == "E07" and rel.category == "encyclopedic"
    assert rel.pairs == [("dog", ["bark", "growl", "bow_wow"]), ("cat", ["meow", "purr"])]  # first 'dog' kept
    assert read_bats(tmp_path)[0].pairs == [("dog", ["bark"]), ("cat", ["meow"])]


@pytest.mark.parametrize("line, problem", [
    ("dog\tbark\textra", "3 fields"),
    ("dogbark", "1 fields"),
    ("dog\t///", "no usable answer"),
])
def test_malformed_line_names_file_and_line(tmp_path, line, problem):
    f = _write(tmp_path / "I01 [noun - plural_reg].txt", f"cat\tcats\n{line}\n")
    with pytest.raises(InputError) as err:
        read_relation_file(f)
    assert err.value.line == 2 and problem in err.value.problem and str(f) in str(err.value)


def test_bad_paths_and_policy(tmp_path):
    with pytest.raises(LexprobeError, match="no BATS relation files"):
        read_bats(tmp_path)
    with pytest.raises(LexprobeError, match="no such"):
        read_bats(tmp_path / "missing")
    with pytest.raises(LexprobeError, match="answer policy"):
        read_bats(tmp_path, answers="all")
    assert category_of("2_Derivational_morphology") == "derivational"


def test_apply_vocab_reports_every_drop(tmp_path):
    f = _write(tmp_path / "I01 [noun - plural_reg].txt", "cat\tcats\nox\toxen/oxes\nqux\tquxes\nfoo\tfoos\n")
    vocab = {"cat", "cats", "ox", "oxes", "foo"}
    kept, report = apply_vocab(read_bats(f, answers="first"), vocab)
    assert kept[0].pairs == [("cat", ["cats"])]  # 'ox' dropped: its first answer is OOV (no fallback)
    row = report[0].as_row()
    assert (row["pairs"], row["kept"], row["dropped"], row["coverage"]) == (4, 1, 3, 0.25)
    assert row["oov_examples"] == "oxen qux foos"
    kept_any, report_any = apply_vocab(read_bats(f, answers="any"), vocab)
    assert kept_any[0].pairs == [("cat", ["cats"]), ("ox", ["oxes"])] and report_any[0].answers_dropped == 3


def test_real_google(shared_data):
    path = shared_data / "google_analogy/questions-words.txt"
    questions = read_questions(path)
    assert len(questions) == 19544 and questions[0].section == "capital-common-countries"
    assert (questions[0].a, questions[0].a_star, questions[0].b, questions[0].b_star) == ("Athens", "Greece",
                                                                                          "Baghdad", "Iraq")
    rels = read_google(path, lowercase=True)
    assert len(rels) == 14 and rels[0].pairs[0] == ("athens", ["greece"])
    assert sum(r.category == "syntactic" for r in rels) == 9


def test_google_malformed(tmp_path):
    f = _write(tmp_path / "q.txt", ": family\nboy girl brother sister\nking queen man\n")
    with pytest.raises(InputError, match=r"q.txt:3: expected 4 words"):
        read_questions(f)
    f2 = _write(tmp_path / "q2.txt", "boy girl brother sister\n")
    with pytest.raises(InputError, match="before the first"):
        read_questions(f2)


def test_identity_pairs_are_dropped_and_counted_apart(tmp_path):
    f = _write(tmp_path / "I02 [noun - plural_irreg].txt", "series\tseries\ncat\tcats\nox\toxen/ox\nsheep\tsheep/sheeps\n")
    vocab = {"series", "cat", "cats", "ox", "oxen", "sheep", "sheeps"}
    kept, report = apply_vocab(read_bats(f, answers="first"), vocab)
    assert kept[0].pairs == [("cat", ["cats"]), ("ox", ["oxen"])]  # series:series and sheep:sheep are identities
    row = report[0].as_row()
    assert (row["pairs"], row["kept"], row["dropped"], row["identity"], row["coverage"]) == (4, 2, 0, 2, 0.5)
    kept_any, report_any = apply_vocab(read_bats(f, answers="any"), vocab)
    assert kept_any[0].pairs == [("cat", ["cats"]), ("ox", ["oxen"]), ("sheep", ["sheeps"])]  # a* = a never accepted
    assert report_any[0].identity == 1 and report_any[0].dropped == 0


def test_google_file_questions_by_default_generated_pairs_as_an_option(tmp_path):
    f = _write(tmp_path / "q.txt", ": family\nboy girl brother sister\nboy girl king queen\nbrother sister boy girl\n"
                                   ": city-in-state\nglendale arizona phoenix arizona\nglendale california fresno california\n")
    family, city = read_google(f)
    assert family.pairs == [("boy", ["girl"]), ("brother", ["sister"]), ("king", ["queen"])]
    assert family.questions == [(0, 1), (0, 2), (1, 0)]
    assert city.pairs == [("glendale", ["arizona"]), ("phoenix", ["arizona"]), ("glendale", ["california"]),
                          ("fresno", ["california"])] and city.questions == [(0, 1), (2, 3)]
    assert [x.tolist() for x in city.question_index()] == [[0, 2], [1, 3]]
    family_p, city_p = read_google(f, questions="pairs")  # one pair per start word, every ordered pair of pairs
    assert city_p.pairs == [("glendale", ["arizona"]), ("phoenix", ["arizona"]), ("fresno", ["california"])]
    assert family_p.questions is None and len(city_p.question_index()[0]) == 6
    kept, report = apply_vocab([family], {"boy", "girl", "brother", "sister", "queen"})  # king is unknown
    assert kept[0].pairs == family.pairs[:2] and kept[0].questions == [(0, 1), (1, 0)]
    assert (report[0].as_row()["questions"], report[0].as_row()["questions_kept"]) == (3, 2)
    with pytest.raises(LexprobeError, match="unknown Google questions"):
        read_google(f, questions="all")


def test_real_google_question_counts(shared_data):
    path = shared_data / "google_analogy/questions-words.txt"
    assert sum(len(r.question_index()[0]) for r in read_google(path, lowercase=True)) == 19544
    assert sum(len(r.question_index()[0]) for r in read_google(path, lowercase=True, questions="pairs")) == 30360


def test_coverage_row_by_hand_and_an_empty_relation():
    """Pins Coverage: coverage = kept / pairs, rounded to 4 places in the report row (1 of 3 -> 0.3333), and 0.0
    for a relation with no pairs (never a negative or undefined share)."""
    from lexprobe.sources.datasets.bats import Coverage

    third = Coverage(relation="r", code="I01", category="inflectional", pairs=3, kept=1, dropped=2,
                     answers_dropped=0, dropped_words=["a", "b"])
    assert third.as_row()["coverage"] == 0.3333 and third.as_row()["oov_examples"] == "a b"
    empty = Coverage(relation="r", code="I01", category="inflectional", pairs=0, kept=0, dropped=0,
                     answers_dropped=0, dropped_words=[])
    assert empty.coverage == 0.0 and empty.as_row()["coverage"] == 0.0


def test_relation_file_by_hand_code_blank_lines_ends_and_encoding(tmp_path):
    """Pins read_relation_file on hand-made files: a name outside BATS's pattern gets its first word as the code;
    a blank line between pairs is skipped, not the end of the file; ``ends`` is each pair's first answer even
    when every answer is kept; a file that is not UTF-8 is one InputError naming it."""
    path = _write(tmp_path / "cat" / "my relation.txt", "a\tb/c\n\nd\te\n")
    relation = read_relation_file(path, answers="any")
    assert relation.code == "my" and relation.pairs == [("a", ["b", "c"]), ("d", ["e"])]
    assert relation.starts == ["a", "d"] and relation.ends == ["b", "e"]
    (tmp_path / "latin.txt").write_bytes("caf\xe9\tb\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin.txt:1: not UTF-8 text"):
        read_relation_file(tmp_path / "latin.txt")
