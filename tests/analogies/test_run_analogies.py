"""The main job's GloVe stage reports word similarity: WordSim-353 and SimLex-999 scored by the packaged GloVe
with gensim's numbers, bootstrap intervals and the sets' provenance (gensim's test data, or the located data)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from lexprobe.analogies.run_analogies import add_word_similarity
from lexprobe.kinds.words import WordIndex
from lexprobe.runs.report import Section
from lexprobe.runs.run_dir import RunDir
from lexprobe.sources import datahome
from lexprobe.suite.main_job import Settings, locate_data

gensim_models = pytest.importorskip("gensim.models")
GENSIM_DATA = __import__("pathlib").Path(gensim_models.__file__).parent.parent / "test" / "test_data"


def _located(monkeypatch, data_home):
    """locate_data as the main job calls it (no --data), with ``data_home`` as the data home and no shared data."""
    monkeypatch.setattr(datahome, "data_home", lambda: data_home)
    monkeypatch.setattr(datahome, "shared_data", lambda: data_home / "no-shared")
    return locate_data(None)


def test_word_similarity_table_is_gensims_numbers_with_intervals(glove_home, tmp_path, monkeypatch):
    from lexprobe.analogies.bench_analogy import gensim_vectors

    glove = WordIndex.open("glove", home=glove_home)
    section = Section("glove-analogy", "GloVe", "analogies")
    data, info = _located(monkeypatch, tmp_path / "empty-home")
    assert "men" not in data and "rw" not in data  # gensim ships no MEN and no Rare Words
    add_word_similarity(section, RunDir(tmp_path / "run"), glove, Settings(home=glove_home, seed=0, data=data,
                                                                            data_info=info))
    rows = pq.read_table(tmp_path / "run" / "word_similarity.parquet").to_pylist()
    kv = gensim_vectors(glove)
    assert [r["dataset"] for r in rows] == ["wordsim353", "simlex999"]
    for row, name in zip(rows, ("wordsim353.tsv", "simlex999.txt")):
        pearson, spearman, oov = kv.evaluate_word_pairs(str(GENSIM_DATA / name))
        assert (row["pearson"], row["pearson_p"]) == pytest.approx(tuple(pearson), rel=1e-6)
        assert (row["spearman"], row["spearman_p"]) == pytest.approx(tuple(spearman), rel=1e-6)
        assert row["oov_percent"] == pytest.approx(oov) and row["scored"] <= row["pairs"]
        assert row["spearman_low"] < row["spearman"] < row["spearman_high"]
        assert row["pearson_low"] < row["pearson"] < row["pearson_high"]
    assert rows[0]["pairs"] == 353 and rows[1]["pairs"] == 999 and rows[0]["spearman"] > 0.4
    shown = section.tables[-1].rows
    assert shown[0]["spearman_p"] == f"{rows[0]['spearman_p']:.2g}" != "0.0"  # not printed as 0.0000
    assert section.settings["similarity wordsim353"].startswith("gensim==")
    assert "sha256" in section.settings["similarity simlex999"]
    assert (tmp_path / "run" / "word_similarity.png").stat().st_size > 0
    assert section.images[-1].path == "word_similarity.png"
    assert section.settings["similarity men"].startswith("not found: run `lexprobe data fetch men`")


def test_a_located_set_is_taken_before_gensims_copy(glove_home, tmp_path, monkeypatch):
    folder = tmp_path / "home" / "wordsim353"
    folder.mkdir(parents=True)
    (folder / "combined.tab").write_text("Word 1\tWord 2\tHuman (mean)\nking\tqueen\t8\nking\tcabbage\t1\n"
                                         "man\twoman\t7\ncar\tbanana\t0.5\n")
    data, info = _located(monkeypatch, tmp_path / "home")
    settings = Settings(home=glove_home, data=data, data_info=info)
    section = Section("glove-analogy", "GloVe", "analogies")
    add_word_similarity(section, RunDir(tmp_path / "run"), WordIndex.open("glove", home=glove_home), settings)
    rows = pq.read_table(tmp_path / "run" / "word_similarity.parquet").to_pylist()
    assert rows[0]["pairs"] == 4 and rows[1]["pairs"] == 999
    assert section.settings["similarity wordsim353"].startswith("local folder (not fetched), sha256 ")
    assert section.settings["similarity simlex999"].startswith("gensim==")
