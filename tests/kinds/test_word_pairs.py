"""Word similarity: WordSim-353, SimLex-999, MEN and the Rare Words read in their released
formats; WordIndex.evaluate_word_pairs equal to gensim's evaluate_word_pairs on gensim's own files (Pearson and
Spearman with p-values, the oov share, case handling, restrict_vocab, dummy4unknown), with seeded bootstrap
intervals; ``lexprobe query similarity``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lexprobe.core.errors import InputError
from lexprobe.core.intervals import correlation_bootstrap
from lexprobe.kinds.words import WordIndex
from lexprobe.sources.datasets.word_pairs import read_word_pairs

gensim_models = pytest.importorskip("gensim.models")
GENSIM_DATA = __import__("pathlib").Path(gensim_models.__file__).parent.parent / "test" / "test_data"

RELEASED = {  # file name -> (text as released, first pair, its score, dataset)
    "combined.csv": ("Word 1,Word 2,Human (mean)\nlove,sex,6.77\ntiger,cat,7.35\n", ("love", "sex"), 6.77,
                     "wordsim353"),
    "combined.tab": ("Word 1\tWord 2\tHuman (mean)\nlove\tsex\t6.77\ntiger\tcat\t7.35\n", ("love", "sex"), 6.77,
                     "wordsim353"),
    "SimLex-999.txt": ("word1\tword2\tPOS\tSimLex999\tconc(w1)\tconc(w2)\tconcQ\tAssoc(USF)\tSimAssoc333\t"
                       "SD(SimLex)\nold\tnew\tA\t1.58\t2.72\t2.81\t2\t7.25\t1\t0.41\n"
                       "smart\tintelligent\tA\t9.2\t1.75\t2.46\t1\t7.11\t1\t0.67\n", ("old", "new"), 1.58,
                       "simlex999"),
    "MEN_dataset_natural_form_full": ("sun sunlight 50.000000\nautomobile car 50.000000\n", ("sun", "sunlight"),
                                      50.0, "men"),
    "MEN_dataset_lemma_form_full": ("sun-n sunlight-n 50.000000\nbright-j shine-v 41.000000\n",
                                    ("sun", "sunlight"), 50.0, "men"),
    "rw.txt": ("squishing\tsquirt\t5.88\t7\t7\t6\t1\t7\t7\t8\t8\t1\t8\nundated\tunnamed\t4.75\t2\t6\t4\t8\t5\t7\t2"
               "\t6\t0\t8\n", ("squishing", "squirt"), 5.88, "rw"),
}


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_released_formats_read(name, tmp_path):
    text, first, score, dataset = RELEASED[name]
    path = tmp_path / name
    path.write_text(text)
    table = read_word_pairs(path)
    assert table.num_rows == 2 and table.schema.metadata[b"dataset"].decode() == dataset
    row = table.slice(0, 1).to_pylist()[0]
    assert (row["word1"], row["word2"]) == first and row["score"] == pytest.approx(score)
    if name == "MEN_dataset_lemma_form_full":
        assert table.column("word2").to_pylist() == ["sunlight", "shine"]


def test_gensims_files_read_whole():
    from lexprobe.sources.datahome import packaged_copy

    assert read_word_pairs(GENSIM_DATA / "wordsim353.tsv").num_rows == 353
    assert read_word_pairs(GENSIM_DATA / "simlex999.txt").num_rows == 999
    path, source = packaged_copy("simlex999")
    assert path == GENSIM_DATA / "simlex999.txt" and source == f"gensim=={__import__('gensim').__version__} (test data)"
    assert packaged_copy("men") is None  # gensim ships no MEN


def test_bad_lines_are_one_error_naming_file_and_line(tmp_path, cli, glove_home):
    bad = tmp_path / "pairs.tsv"
    bad.write_text("# comment\nking\tqueen\t8.5\nman\twoman\tabout nine\n")
    with pytest.raises(InputError, match=r"pairs.tsv:3: expected 'word word score'"):
        read_word_pairs(bad)
    r = cli("--home", glove_home, "query", "similarity", "--index", "glove", "--pairs", bad)
    assert r.code == 2 and r.err.strip().count("\n") == 0 and "pairs.tsv:3" in r.err


@pytest.fixture(scope="module")
def glove_and_gensim(glove_home):
    from lexprobe.analogies.bench_analogy import gensim_vectors

    glove = WordIndex.open("glove", home=glove_home)
    return glove, gensim_vectors(glove)


@pytest.mark.parametrize("options", [{}, {"case_insensitive": False}, {"dummy4unknown": True},
                                     {"restrict_vocab": 20000, "dummy4unknown": True}, {"restrict_vocab": 5000}])
@pytest.mark.parametrize("dataset", ["wordsim353.tsv", "simlex999.txt"])
def test_equal_to_gensim_on_its_files(glove_and_gensim, dataset, options):
    glove, kv = glove_and_gensim
    path = GENSIM_DATA / dataset
    pearson, spearman, oov = kv.evaluate_word_pairs(str(path), **options)
    result = glove.evaluate_word_pairs(path, n_resamples=200, **options)
    mine_pearson, mine_spearman, mine_oov = result  # unpacks as gensim's
    assert mine_oov == pytest.approx(oov, abs=1e-12)
    assert mine_pearson == pytest.approx((pearson[0], pearson[1]), rel=1e-6)
    assert mine_spearman == pytest.approx((spearman[0], spearman[1]), rel=1e-6)
    lo, hi = result.spearman_interval
    assert lo < mine_spearman[0] < hi and result.pearson_interval[0] < mine_pearson[0] < result.pearson_interval[1]
    table = result.to_arrow()
    assert table.num_rows == read_word_pairs(path).num_rows
    assert table.column("oov").to_pylist().count(True) > 0 or oov == 0


def test_case_and_vocabulary_rules(glove_and_gensim, tmp_path):
    glove, _ = glove_and_gensim
    path = tmp_path / "pairs.tsv"
    path.write_text("King\tQUEEN\t9\nman\twoman\t8\nboy\tqqxyzz\t5\ncar\tbanana\t1\n")
    s = glove.evaluate_word_pairs(path, n_resamples=50)
    assert s.n_scored == 3 and s.oov_ratio == pytest.approx(25.0)
    rows = s.to_arrow().to_pylist()
    king, queen = glove.raw[glove.ids(["king", "queen"])].astype(np.float64)  # cosine by numpy
    assert rows[0]["similarity"] == pytest.approx(king @ queen / np.linalg.norm(king) / np.linalg.norm(queen),
                                                  abs=1e-6)
    assert rows[2]["oov"] and rows[2]["similarity"] is None
    exact = glove.evaluate_word_pairs(path, case_insensitive=False, n_resamples=50)
    assert exact.n_scored == 2 and exact.oov_ratio == pytest.approx(50.0)
    dummy = glove.evaluate_word_pairs(path, dummy4unknown=True, n_resamples=50)
    assert dummy.n_scored == 4 and dummy.to_arrow().column("similarity")[2].as_py() == 0.0
    assert dummy.oov_ratio == pytest.approx(100 / 4)
    assert "spearman" in repr(s) and "\n" not in repr(s) and len(repr(s)) < 200


def test_bootstrap_intervals_are_seeded_and_cover_the_estimate():
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    y = x + rng.normal(size=300)
    a = correlation_bootstrap(x, y, resamples=500, seed=1)
    assert a == correlation_bootstrap(x, y, resamples=500, seed=1)
    assert a != correlation_bootstrap(x, y, resamples=500, seed=2)
    r = np.corrcoef(x, y)[0, 1]
    assert a["pearson"][0] < r < a["pearson"][1] and 0.05 < a["pearson"][1] - a["pearson"][0] < 0.3
    narrow = correlation_bootstrap(x, y, resamples=500, seed=1, level=0.5)
    assert a["spearman"][0] < narrow["spearman"][0] < narrow["spearman"][1] < a["spearman"][1]


def test_query_similarity_cli(cli, glove_home, glove_and_gensim):
    glove, _ = glove_and_gensim
    ws, sl = GENSIM_DATA / "wordsim353.tsv", GENSIM_DATA / "simlex999.txt"
    r = cli("--home", glove_home, "query", "similarity", "--index", "glove", "--pairs", ws, "--pairs", sl,
            "--resamples", "100", "--format", "json")
    assert r.code == 0, r
    rows = json.loads(r.out)
    assert [row["dataset"] for row in rows] == ["wordsim353", "simlex999"]
    api = glove.evaluate_word_pairs(ws, n_resamples=100)
    assert rows[0]["spearman"] == pytest.approx(api.spearman[0]) and rows[0]["pairs"] == 353
    assert (rows[0]["spearman_low"], rows[0]["spearman_high"]) == pytest.approx(api.spearman_interval)
    unknown = api.to_arrow().column("oov").to_pylist()  # the CLI's share is a fraction; gensim's ratio a percentage
    assert rows[0]["oov_share"] == pytest.approx(sum(unknown) / len(unknown)) and "oov_ratio" not in rows[0]
    table = cli("--home", glove_home, "query", "similarity", "--index", "glove", "--pairs", ws, "--resamples", "100")
    assert table.code == 0 and "e-" in table.out  # p-values shown, not rounded to 0.0000
