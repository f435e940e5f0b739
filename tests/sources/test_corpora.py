"""Sense-corpus readers: the Raganato WSD XML, STREUSLE (CoNLL-U-Lex and .vis), JSONL; on the real files and
on small fixtures with bad input."""

from __future__ import annotations

import json
import re

import pyarrow.compute as pc
import pytest

from lexprobe.sources.datasets.corpora import read_corpus
from lexprobe.sources.datasets.streusle import _vis_units
from lexprobe.core.errors import InputError, LexprobeError

EVAL_SETS = ["senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL"]


def _surfaces_match(corpus) -> bool:
    """Every target's surface is exactly the words at its position..position+length."""
    words = dict(zip(corpus.sentences.column("sentence_id").to_pylist(), corpus.sentences.column("words").to_pylist()))
    t = corpus.targets
    return all(" ".join(words[s][p:p + n]) == surface for s, p, n, surface in
               zip(t.column("sentence_id").to_pylist(), t.column("position").to_pylist(),
                   t.column("length").to_pylist(), t.column("surface").to_pylist()))


def test_semcor_counts(shared_data):
    corpus = read_corpus(f"wsd:{shared_data / 'semcor3.0'}")
    assert corpus.sentences.num_rows == 37_176
    assert corpus.targets.num_rows == 226_036
    assert not corpus.skipped.counts
    n_keys = pc.list_value_length(corpus.targets.column("senses"))
    assert pc.sum(pc.greater(n_keys, 1)).as_py() == 656  # PROVENANCE: 656 instances carry more than one key
    assert pc.sum(n_keys).as_py() == 226_695
    first = corpus.targets.slice(0, 1).to_pylist()[0]
    assert (first["surface"], first["position"], first["length"], first["lemma"], first["sense"]) == \
        ("Fulton County Grand Jury", 1, 4, "group", "group%1:03:00::")
    assert first["document"] == "d000" and first["sentence_id"] == "d000.s000"
    assert _surfaces_match(corpus)


@pytest.mark.parametrize("name", EVAL_SETS)
def test_eval_sets_match_gold_files(shared_data, name):
    folder = shared_data / "wsd_eval" / name
    gold_lines = sum(1 for line in open(folder / f"{name}.gold.key.txt") if line.strip())
    corpus = read_corpus(f"wsd:{folder}")
    assert corpus.targets.num_rows == gold_lines
    assert not corpus.skipped.counts
    splits = set(corpus.targets.column("split").to_pylist())
    assert splits == (set(EVAL_SETS) - {"ALL"} if name == "ALL" else {name})
    assert _surfaces_match(corpus)


def test_wsd_reads_the_xml_file_too(shared_data):
    corpus = read_corpus(f"wsd:{shared_data / 'wsd_eval/semeval2007/semeval2007.data.xml'}")
    assert corpus.name == "semeval2007" and corpus.targets.num_rows == 455


def test_streusle_test_has_485_snacs_tokens(shared_data):
    corpus = read_corpus(f"streusle:{shared_data / 'streusle/v4.7.1/test'}")
    assert corpus.targets.num_rows == 485
    assert set(corpus.targets.column("pos").to_pylist()) == {"P", "PP", "INF.P", "POSS", "PRON.POSS"}
    assert all(s.startswith("p.") for s in corpus.targets.column("sense").to_pylist())
    my = [r for r in corpus.targets.to_pylist() if r["sentence_id"] == "reviews-001325-0002"][0]
    assert (my["surface"], my["lemma"], my["pos"], my["sense"]) == ("My", "my", "PRON.POSS", "p.SocialRel|p.Gestalt")
    multi = [r for r in corpus.targets.to_pylist() if r["length"] > 1]
    assert multi and all(r["pos"] in ("PP", "P") for r in multi)


def test_streusle_all_splits_word_count_matches_stats(shared_data):
    """STATS.md says 55,588 tokens over train (.vis), dev and test: the .vis parser loses or invents none."""
    corpus = read_corpus(f"streusle:{shared_data / 'streusle/v4.7.1'}")
    assert corpus.word_count == 55_588
    assert corpus.sentences.num_rows == 3_814
    splits = pc.value_counts(corpus.targets.column("split")).to_pylist()
    assert {d["values"] for d in splits} == {"train", "dev", "test"}


def test_vis_gaps_and_tilde_words(tmp_path):
    words, units = _vis_units("putting_ me|PRON _at_ my|PRON.POSS-p.Gestalt _ease|V.VID-v.social ~|PUNCT "
                              "for|P-p.Purpose:p.Goal ingrown_toenail|N-n.BODY got|V-v.stative~ ~bill|N-n.FOOD",
                              tmp_path / "x.vis", 1)
    assert words == ["putting", "me", "at", "my", "ease", "~", "for", "ingrown", "toenail", "got", "bill"]
    assert ([0, 2, 4], "V.VID-v.social") in units
    assert ([3], "PRON.POSS-p.Gestalt") in units and ([5], "PUNCT") in units and ([7, 8], "N-n.BODY") in units
    with pytest.raises(InputError, match="never closed"):
        _vis_units("had_ a|DET", tmp_path / "x.vis", 3)


def test_vis_file_targets(tmp_path):
    path = tmp_path / "streusle.ud_train.vis"
    path.write_text("rev-1-0001\tMy|PRON.POSS-p.SocialRel:p.Gestalt dog|N-n.ANIMAL sat|V-v.stative "
                    "on_top_of|P-p.Locus it|PRON\n")
    corpus = read_corpus(f"streusle:{path}")
    rows = corpus.targets.to_pylist()
    assert [(r["position"], r["length"], r["sense"], r["split"]) for r in rows] == \
        [(0, 1, "p.SocialRel|p.Gestalt", "train"), (3, 3, "p.Locus", "train")]
    assert rows[1]["lemma"] == "on top of" and rows[1]["document"] == "rev-1"


def _conllulex_row(n: int, word: str, ss: str = "_") -> str:
    """One 19-column CoNLL-U-Lex token line: id, word, ..., smwe '_', lexcat P, lemma, ss, ss2 '_', ..."""
    cols = [str(n), word, word.lower(), "ADP", "IN", "_", "0", "root", "_", "_", "_", "P", word.lower(), ss, "_"]
    return "\t".join(cols + ["_"] * 4) + "\n"


def test_conllulex_documents_and_sentence_ids_by_hand(tmp_path):
    """Pins the CoNLL-U-Lex reader's headers: '# newdoc id' (only that header) names the document of the
    sentences after it; a sentence without '# sent_id' is named FILE:LINE of its first token."""
    path = tmp_path / "streusle.ud_dev.conllulex"
    path.write_text("# newdoc id = mydoc\n# sent_id = s-0001\n# text = On it\n"
                    + _conllulex_row(1, "On", "p.Locus") + _conllulex_row(2, "it") + "\n"
                    + "# text = At home\n" + _conllulex_row(1, "At", "p.Locus") + _conllulex_row(2, "home") + "\n")
    corpus = read_corpus(f"streusle:{path}")
    rows = corpus.targets.to_pylist()
    assert [(r["sentence_id"], r["document"], r["surface"], r["split"]) for r in rows] == [
        ("s-0001", "mydoc", "On", "dev"), ("streusle.ud_dev.conllulex:8", "mydoc", "At", "dev")]


def test_a_lone_gap_mark_in_vis_is_an_error(tmp_path):
    """Pins the .vis rule that '_' or '~' before a word needs the word: a lone '_' chunk has no |TAG and is
    refused (a lone '~' is a word of its own elsewhere)."""
    with pytest.raises(InputError, match=re.escape("'_' in '_' has no |TAG")):
        _vis_units("a|DET _ b|DET", tmp_path / "x.vis", 1)


def _write_wsd(folder, xml: str, keys: str):
    folder.mkdir()
    (folder / "mini.data.xml").write_text(xml)
    (folder / "mini.gold.key.txt").write_text(keys)
    return folder


XML = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="mini">
<text id="d000">
<sentence id="d000.s000">
<wf lemma="the" pos="DET">The</wf>
<instance id="d000.s000.t000" lemma="primary_election" pos="NOUN">primary election</instance>
<instance id="d000.s000.t001" lemma="end" pos="VERB">ended</instance>
</sentence>
</text>
</corpus>
"""


def test_wsd_fixture_counts_skips(tmp_path):
    folder = _write_wsd(tmp_path / "mini", XML, "d000.s000.t000 primary_election%1:04:00::\nd000.s000.t009 x%1:00:00::\n")
    corpus = read_corpus(f"wsd:{folder}")
    assert corpus.targets.to_pylist()[0]["position"] == 1 and corpus.targets.to_pylist()[0]["length"] == 2
    assert dict(corpus.skipped.counts) == {"instance without gold key": 1, "gold key without instance": 1}
    assert "d000.s000.t001" in corpus.skipped.summary() and "d000.s000.t009" in corpus.skipped.summary()


def test_wsd_bad_input_is_one_line_error(tmp_path, cli, home):
    bad_xml = _write_wsd(tmp_path / "badxml", XML.replace("</sentence>", "", 1), "d000.s000.t000 a%1:00:00::\n")
    with pytest.raises(InputError, match=r"mini.data.xml:\d+: malformed XML"):
        read_corpus(f"wsd:{bad_xml}")
    dup = _write_wsd(tmp_path / "dup", XML, "d000.s000.t000 a%1:00:00::\nd000.s000.t000 b%1:00:00::\n")
    with pytest.raises(InputError, match="gold.key.txt:2: instance 'd000.s000.t000' is listed twice"):
        read_corpus(f"wsd:{dup}")
    (tmp_path / "nogold").mkdir()
    (tmp_path / "nogold" / "x.data.xml").write_text(XML)
    r = cli("--home", home, "index", "tokens", "--corpus", f"wsd:{tmp_path / 'nogold'}", "--name", "t")
    assert r.code == 2 and "gold key file missing" in r.err and r.err.strip().count("\n") == 0
    r = cli("--home", home, "index", "tokens", "--corpus", f"wsd:{bad_xml}", "--name", "t")
    assert r.code == 2 and "malformed XML" in r.err and r.err.strip().count("\n") == 0


def test_corpus_spec_errors(tmp_path):
    with pytest.raises(LexprobeError, match="KIND:PATH"):
        read_corpus(f"semcor:{tmp_path}")
    with pytest.raises(LexprobeError, match="no such file"):
        read_corpus(f"wsd:{tmp_path / 'absent'}")


def test_jsonl_corpus(tmp_path):
    path = tmp_path / "mine.jsonl"
    lines = [
        {"sentence_id": "s1", "words": ["I", "was", "high", "on", "drugs"], "document": "r1", "split": "test",
         "targets": [{"position": 3, "sense": "p.Circumstance", "pos": "ADP"},
                     {"position": 4, "length": 2, "sense": "x"}]},
        {"text": "put it on  the table", "targets": [{"position": 2, "senses": ["p.Locus", "p.Goal"], "id": "t7"}]},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    corpus = read_corpus(f"jsonl:{path}")
    rows = corpus.targets.to_pylist()
    assert [(r["instance_id"], r["sentence_id"], r["position"], r["lemma"], r["sense"], r["senses"]) for r in rows] == [
        ("s1:3", "s1", 3, "on", "p.Circumstance", ["p.Circumstance"]),
        ("t7", "mine.2", 2, "on", "p.Locus", ["p.Locus", "p.Goal"])]
    assert rows[0]["split"] == "test" and rows[1]["split"] == "all"
    assert corpus.skipped.counts == {"target span outside its sentence": 1}
    assert corpus.skipped.first["target span outside its sentence"] == "mine.jsonl:1"
    assert corpus.sentences.column("words").to_pylist()[1] == ["put", "it", "on", "the", "table"]


def test_a_jsonl_file_without_usable_targets_says_what_was_skipped(tmp_path):
    """Pins the JSONL reader's no-target error: it names the file and, when targets were skipped, appends the
    skip summary (so that a file whose every span is out of range says why); without skips, no summary."""
    path = tmp_path / "none.jsonl"
    path.write_text(json.dumps({"words": ["a", "b"], "targets": [{"position": 5, "sense": "x"}]}) + "\n")
    with pytest.raises(InputError, match=r"none.jsonl: no targets \(.*\); skipped: .*target span outside its sentence"):
        read_corpus(f"jsonl:{path}")
    path.write_text(json.dumps({"words": ["a", "b"], "targets": []}) + "\n")
    with pytest.raises(InputError) as info:
        read_corpus(f"jsonl:{path}")
    assert "no targets" in str(info.value) and "skipped" not in str(info.value)


@pytest.mark.parametrize("line, problem", [
    ('{"words": ["a"], "targets": [{"position": 0, "sense": "x"}]}\n{"words": ["a"]', ":2: not valid JSON"),
    ('{"targets": []}', ":1: sentence has neither 'words' nor 'text'"),
    ('{"words": ["a"], "targets": [{"position": "0", "sense": "x"}]}', ":1: target field 'position' must be an integer"),
    ('{"words": ["a"], "targets": [{"position": 0}]}', ":1: target has neither 'sense' nor 'senses'"),
    ('{"sentence_id": "a", "words": ["a"]}\n{"sentence_id": "a", "words": ["b"]}', ":2: sentence_id 'a' appears twice"),
])
def test_jsonl_bad_input(tmp_path, line, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(InputError) as info:
        read_corpus(f"jsonl:{path}")
    assert problem in str(info.value) and str(path) in str(info.value)
