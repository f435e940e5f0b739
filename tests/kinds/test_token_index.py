"""Token index: built from a real subset through the CLI, reopened, checked against fresh encodings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lexprobe.sources.datasets.corpora import read_corpus
from lexprobe.kinds.tokens import TokenIndex, encode_sentences, limit_corpus


@pytest.fixture(scope="module")
def built(tmp_path_factory, shared_data, cli):
    """``se07``: the first 30 sentences of SemEval-2007 with MiniLM layers 4-5, first-subword pooling."""
    home = tmp_path_factory.mktemp("tokens_home")
    spec = f"wsd:{shared_data / 'wsd_eval/semeval2007'}"
    r = cli("--home", home, "index", "tokens", "--corpus", spec, "--name", "se07", "--layers", "4-5",
            "--pooling", "first", "--max-sentences", "30")
    assert r.code == 0, r
    return home, spec, r.out


def test_index_reopens_with_settings_and_rows(built):
    home, spec, output = built
    expected = limit_corpus(read_corpus(spec), 30)
    assert f"built se07: {expected.targets.num_rows} targets of 30 sentences" in output
    index = TokenIndex.open("se07", home=home)
    assert index.store.kind == "tokens" and index.dim == 384
    meta = index.settings
    assert (meta["corpus"], meta["model"], meta["layers"], meta["pooling"]) == (spec, "minilm", [4, 5], "first")
    assert index.table.num_rows == expected.targets.num_rows == index.vectors.ntotal
    assert index.table.column("id").to_pylist() == list(range(index.table.num_rows))
    assert index.table.drop(["id"]).to_pylist() == expected.targets.to_pylist()
    assert index.sentences.num_rows == 30
    assert index.words_of(["d000.s000"]) == [expected.sentences.column("words")[0].as_py()]
    assert np.allclose(np.linalg.norm(index.unit, axis=1), 1, atol=1e-5)


def test_stored_vectors_equal_fresh_query_encodings(built):
    home, _, _ = built
    index = TokenIndex.open("se07", home=home)
    rows = index.table.slice(0, 5).to_pylist()
    sentences = index.words_of([r["sentence_id"] for r in rows])
    spans = [[(r["position"], r["length"])] for r in rows]
    fresh = index.encode(sentences, spans)
    np.testing.assert_allclose(fresh, index.raw[:5], atol=5e-5)
    by_name = encode_sentences("minilm", sentences, spans, layers=(4, 5), pooling="first")
    np.testing.assert_allclose(by_name, fresh, atol=1e-6)
    D, I = index.vectors.search(index.unit[:5], 1)  # each target's nearest neighbour is itself
    assert I[:, 0].tolist() == [0, 1, 2, 3, 4] and np.allclose(D[:, 0], 1, atol=1e-4)


def test_a_lemma_the_index_lacks_is_an_error_only_when_asked_for(built):
    """Pins query's same-lemma fallback: an explicit ``lemma`` the index has no instance of is an error; a target
    whose own lemma it lacks ranks every instance, with a NoLemmaInstances warning and the note in the metadata."""
    from lexprobe.core.errors import LexprobeError
    from lexprobe.kinds.tokens import NoLemmaInstances

    home, _, _ = built
    index = TokenIndex.open("se07", home=home)
    with pytest.raises(LexprobeError, match="has no instance of lemma 'zzzq'"):
        index.query("the zzzq ran", "zzzq", k=3, lemma="zzzq")
    with pytest.warns(NoLemmaInstances, match=f"ranking all {index.store.count} instances"):
        table = index.query("the zzzq ran", "zzzq", k=3)
    assert table.num_rows == 3 and b"ranking all" in table.schema.metadata[b"note"]


def test_verify_info_and_sql(built, cli):
    home, _, _ = built
    r = cli("--home", home, "index", "verify", "se07")
    assert r.code == 0 and "tokens" in r.out
    manifest = json.loads(cli("--home", home, "index", "info", "se07").out)
    assert manifest["files"]["sentences"]["file"] == "sentences.arrow" and manifest["meta"]["encode"]["batches"] >= 1
    r = cli("--home", home, "sql", "select count(*) as n, count(distinct lemma) as l from tokens", "--format", "json")
    assert r.code == 0
    n = json.loads(r.out)[0]["n"]
    assert n == TokenIndex.open("se07", home=home).table.num_rows


def test_jsonl_index_counts_skips(tmp_path, cli, home):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"words": ["I", "was", "high", "on", "drugs"],
                                "targets": [{"position": 3, "sense": "p.Circumstance"},
                                            {"position": 9, "sense": "x"}]}) + "\n")
    r = cli("--home", home, "index", "tokens", "--corpus", f"jsonl:{path}", "--name", "mine", "--layer", "2")
    assert r.code == 0, r
    assert "1 targets of 1 sentences" in r.out and "skipped: 1 target span outside its sentence (first: mine.jsonl:1)" in r.out
    index = TokenIndex.open("mine", home=home)
    assert index.settings["layers"] == [2] and index.settings["skipped"]["target span outside its sentence"]["count"] == 1


@pytest.mark.parametrize("args, message", [
    (["--model", "no-such-model-xyz"], "no-such-model-xyz: cannot load"),
    (["--layer", "9"], "no layer 9"),
    (["--layer", "2", "--layers", "3-4"], "not both"),
])
def test_bad_options_are_one_line_errors(tmp_path, cli, home, args, message):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"text": "a b", "targets": [{"position": 0, "sense": "s"}]}) + "\n")
    r = cli("--home", home, "index", "tokens", "--corpus", f"jsonl:{path}", "--name", "x", *args)
    assert r.code == 2 and message in r.err and r.err.strip().count("\n") == 0, r
    assert not (home / "x").exists()


def test_query_example_in_the_docstring_runs():
    """TokenIndex's ``>>>`` example: a three-sentence JSONL corpus indexed with MiniLM, its repr, and a query
    by example whose two nearest instances are the two 'slope' senses of 'bank'."""
    import doctest

    import lexprobe
    import lexprobe.kinds.tokens as tokens

    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in doctest.DocTestFinder().find(tokens, globs={"lexprobe": lexprobe}) if t.examples]
    assert tests
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 8
