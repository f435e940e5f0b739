"""The WSD framework reader on a hand-written corpus whose every field is known (mutation testing)."""

from __future__ import annotations

import pytest

from lexprobe.core.errors import InputError, LexprobeError
from lexprobe.sources.datasets.wsd import read_gold_keys, read_wsd, wsd_files

DATA = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="ALL">
<text id="senseval2.d000">
<sentence id="senseval2.d000.s000">
<wf lemma="the" pos="DET">The</wf>
<instance id="senseval2.d000.s000.t000" lemma="primary_election" pos="NOUN">primary election</instance>
<instance id="senseval2.d000.s000.t001" lemma="be" pos="VERB">was</instance>
<instance id="senseval2.d000.s000.t002" lemma="close" pos="ADJ">close</instance>
</sentence>
</text>
<text id="semeval2007.d001">
<sentence id="semeval2007.d001.s000">
<instance id="semeval2007.d001.s000.t000" lemma="bank" pos="NOUN">Banks</instance>
<wf lemma="lend" pos="VERB">lend</wf>
</sentence>
</text>
<sentence id="loose.s000"><wf lemma="x" pos="X">x</wf></sentence>
</corpus>
"""
GOLD = """senseval2.d000.s000.t000 primary_election%1:04:00::
senseval2.d000.s000.t001 be%2:42:03:: be%2:42:00:: be%2:42:06::

semeval2007.d001.s000.t000 bank%1:14:00:: bank%1:17:01::
nowhere.t009 x%1:00:00::
"""


@pytest.fixture()
def corpus(tmp_path):
    (tmp_path / "ALL.data.xml").write_text(DATA)
    (tmp_path / "ALL.gold.key.txt").write_text(GOLD)
    return read_wsd(tmp_path)


def test_every_field_of_a_small_corpus(corpus):
    t = corpus.targets.to_pylist()
    assert corpus.name == "ALL"
    assert [r["instance_id"] for r in t] == ["senseval2.d000.s000.t000", "senseval2.d000.s000.t001",
                                             "semeval2007.d001.s000.t000"]
    # a multi-key instance: sense is the FIRST key, senses all of them in file order
    assert t[1]["sense"] == "be%2:42:03::" and t[1]["senses"] == ["be%2:42:03::", "be%2:42:00::", "be%2:42:06::"]
    assert t[2]["sense"] == "bank%1:14:00::" and t[2]["senses"] == ["bank%1:14:00::", "bank%1:17:01::"]
    assert [(r["position"], r["length"], r["surface"]) for r in t] == [(1, 2, "primary election"), (3, 1, "was"),
                                                                       (0, 1, "Banks")]
    assert [(r["lemma"], r["pos"]) for r in t] == [("primary_election", "NOUN"), ("be", "VERB"), ("bank", "NOUN")]
    assert [(r["document"], r["split"], r["corpus"]) for r in t] == [
        ("senseval2.d000", "senseval2", "ALL"), ("senseval2.d000", "senseval2", "ALL"),
        ("semeval2007.d001", "semeval2007", "ALL")]
    s = corpus.sentences.to_pylist()
    assert [r["words"] for r in s] == [["The", "primary", "election", "was", "close"], ["Banks", "lend"], ["x"]]
    assert [(r["document"], r["split"]) for r in s] == [("senseval2.d000", "senseval2"),
                                                        ("semeval2007.d001", "semeval2007"), ("", "ALL")]
    assert corpus.skipped.as_dict() == {
        "gold key without instance": {"count": 1, "first": "ALL.gold.key.txt: nowhere.t009"},
        "instance without gold key": {"count": 1, "first": "ALL.data.xml: senseval2.d000.s000.t002"}}


def test_gold_key_errors_name_the_line(tmp_path):
    p = tmp_path / "g.gold.key.txt"
    p.write_text("a k1\n\nb\n")
    with pytest.raises(InputError, match=r"instance 'b' has no sense key") as e:
        read_gold_keys(p)
    assert ":3" in str(e.value)
    p.write_text("a k1 k2\na k3\n")
    with pytest.raises(InputError, match=r"instance 'a' is listed twice") as e:
        read_gold_keys(p)
    assert ":2" in str(e.value)
    p.write_text("a k1 k2\nb k3\n")
    assert read_gold_keys(p) == {"a": ["k1", "k2"], "b": ["k3"]}


def test_files_and_empty_corpus(tmp_path):
    (tmp_path / "x.data.xml").write_text(DATA)
    with pytest.raises(LexprobeError, match="gold key file missing"):
        wsd_files(tmp_path)
    (tmp_path / "x.gold.key.txt").write_text("other.t000 k\n")
    assert wsd_files(tmp_path) == (tmp_path / "x.data.xml", tmp_path / "x.gold.key.txt")
    with pytest.raises(LexprobeError, match="no instance has a gold key"):
        read_wsd(tmp_path / "x.data.xml")
    (tmp_path / "y.data.xml").write_text(DATA)
    with pytest.raises(LexprobeError, match="2 \\*.data.xml files"):
        wsd_files(tmp_path)


def _write(tmp_path, data, gold="s.t0 k%1\n"):
    (tmp_path / "s.data.xml").write_text(data)
    (tmp_path / "s.gold.key.txt").write_text(gold)
    return tmp_path / "s.data.xml"


def test_bad_xml_errors_name_file_line_and_problem(tmp_path):
    head = '<?xml version="1.0"?>\n<corpus>\n'
    inst = '<instance id="s.t0" lemma="x" pos="X">x</instance>'
    path = _write(tmp_path, head + f'<sentence id="s">{inst}</sentence>\n<sentence id="q">\n<wf>y</wf>\n'
                  '<sentence id="s"><wf>z</wf></sentence>\n</sentence>\n</corpus>\n')
    with pytest.raises(InputError) as e:  # the second <sentence id="s"> is on line 6
        read_wsd(path)
    assert (e.value.line, e.value.problem) == (6, "sentence id 's' appears twice")
    path = _write(tmp_path, head + f'<sentence id="r"><wf>w</wf></sentence><sentence id="s">{inst}</sentence>\n'
                  '<sentence><wf>y</wf></sentence>\n</corpus>\n')
    with pytest.raises(InputError, match=r"a <sentence> after \['s'\] has no id"):  # the sentence before it
        read_wsd(path)
    path = _write(tmp_path, head + f'<sentence id="s">{inst}\n</wf>\n</sentence>\n</corpus>\n')
    with pytest.raises(InputError) as e:
        read_wsd(path)
    assert (e.value.line, e.value.problem) == (4, "malformed XML (mismatched tag)")


def test_unmatched_gold_keys_counted_first_named(tmp_path):
    path = _write(tmp_path, '<corpus><sentence id="s"><instance id="s.t0" lemma="x" pos="X">x</instance>'
                  '</sentence></corpus>', "zz.t1 k%1\ns.t0 k%2\naa.t2 k%3\n")
    assert read_wsd(path).skipped.as_dict() == {"gold key without instance": {"count": 2, "first": "s.gold.key.txt: zz.t1"}}


def test_google_reader_by_hand(tmp_path):
    from lexprobe.sources.datasets.google import read_google, read_questions

    p = tmp_path / "q.txt"
    p.write_text(":capital\nAthens Greece Baghdad Iraq\n\nBaghdad Iraq Athens Greece\n"
                 ": gram1-adj\ncalm calmly quick quickly\n")
    qs = read_questions(p)
    assert [(q.section, q.a, q.b_star) for q in qs] == [("capital", "Athens", "Iraq"), ("capital", "Baghdad", "Greece"),
                                                         ("gram1-adj", "calm", "quickly")]
    assert read_questions(p, lowercase=True)[0].a == "athens" and read_google(p)[0].pairs[0] == ("Athens", ["Greece"])
    rels = read_google(p)
    assert [(r.name, r.category, r.pairs, r.questions) for r in rels] == [
        ("capital", "semantic", [("Athens", ["Greece"]), ("Baghdad", ["Iraq"])], [(0, 1), (1, 0)]),
        ("gram1-adj", "syntactic", [("calm", ["calmly"]), ("quick", ["quickly"])], [(0, 1)])]
    assert read_google(p, questions="pairs")[0].questions is None
    p.write_bytes(b": s\nA B C \xff\n")
    with pytest.raises(InputError, match=r"q.txt:2: not UTF-8 text \(invalid start byte at byte 6\)"):
        read_questions(p)
