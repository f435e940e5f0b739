"""``bench all``: stage skipping, failure isolation, index reuse, and the GloVe stage end to end on real data."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from lexprobe.suite import main_job as pipeline
from lexprobe.runs.index_reuse import ensure_index
from lexprobe.sources.datasets.google import read_questions
from lexprobe.core.errors import LexprobeError
from lexprobe.runs.report import Image, Section, Table
from lexprobe.core.store import Store
from lexprobe.kinds.words import build_word_index


def _ok_stage(run_dir, settings):
    import matplotlib.pyplot as plt

    plt.imsave(run_dir.file("plot.png"), np.zeros((10, 10, 3)))
    return Section("ok", "OK stage", "analogies", tables=[Table("t", [{"seed": settings.seed}])],
                   images=[Image("plot.png")])


def _broken_stage(run_dir, settings):
    raise ValueError("boom")


def test_skips_failures_and_timings(tmp_path):
    stages = [
        pipeline.Stage("ok", "OK stage", "analogies", _ok_stage),
        pipeline.Stage("needs-data", "Needs BATS", "analogies", _ok_stage, datasets=("bats",)),
        pipeline.Stage("no-package", "Needs a package", "rare-words", _ok_stage, packages=("no_such_pkg_xyz",)),
        pipeline.Stage("broken", "Broken stage", "rare-words", _broken_stage),
    ]
    lines = []
    settings = pipeline.Settings(home=tmp_path / "indexes", seed=7)
    report = pipeline.run_all(tmp_path / "run", settings, stages, echo=lines.append)
    status = {s.key: (s.status, s.note) for s in report.sections}
    assert status["ok"] == ("done", "")
    assert status["needs-data"][0] == "skipped" and "lexprobe data fetch bats" in status["needs-data"][1]
    assert status["no-package"] == ("skipped", "needs the package(s) no_such_pkg_xyz (pip install 'lexprobe[all]')")
    assert status["broken"] == ("failed", "ValueError: boom")
    assert report.sections[0].images[0].path == "ok/plot.png" and (tmp_path / "run" / "ok" / "plot.png").exists()
    assert report.sections[0].tables[0].rows == [{"seed": 7}]
    assert report.sections[0].seconds is not None and lines[-1].startswith("total time: ")
    md = (tmp_path / "run" / "report.md").read_text()
    for s in stages:
        assert s.title in md  # every section is in the report, run or not
    assert 'src="data:image/png;base64,' in (tmp_path / "run" / "report.html").read_text()


def test_unknown_stage_is_a_clear_error(cli, tmp_path):
    with pytest.raises(LexprobeError, match="unknown stage 'nope'"):
        pipeline.select(["nope"])
    r = cli("bench", "all", "--out", tmp_path / "run", "--stages", "glove-analogy,nope")
    assert r.code == 2 and "unknown stage 'nope'" in r.err and not (tmp_path / "run").exists()


def test_ensure_index_reuses_rebuilds_on_change_and_on_damage(tmp_path):
    vectors = tmp_path / "v.txt"
    vectors.write_text("a 1 0\nb 0 1\nc 1 1\n")
    home = tmp_path / "indexes"
    builds = []

    def build():
        builds.append(1)
        build_word_index("small", str(vectors), home=home, replace=True)  # ensure_index rebuilds on purpose

    wanted = {"kind": "words", "source": str(vectors), "lowercase": False}
    first = ensure_index(home, "small", wanted, build)
    again = ensure_index(home, "small", wanted, build)
    assert (first["reused"], again["reused"], len(builds)) == (False, True, 1)
    assert again["version"] == first["version"]

    changed = ensure_index(home, "small", {**wanted, "lowercase": True}, build)
    assert not changed["reused"] and "lowercase False -> True" in changed["reason"] and len(builds) == 2

    shard = next((home / "small" / "shards").iterdir())
    data = bytearray(shard.read_bytes())
    data[-20] ^= 0xFF
    shard.write_bytes(bytes(data))
    repaired = ensure_index(home, "small", {**wanted, "lowercase": True}, build)
    assert not repaired["reused"] and "failed verification" in repaired["reason"] and len(builds) == 3
    Store.open(home / "small")  # verifies again


def test_missing_google_skips_the_stage_with_the_fetch_command(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    r = cli("--home", tmp_path / "indexes", "bench", "all", "--out", tmp_path / "run", "--data", tmp_path / "empty",
            "--stages", "glove-analogy")
    assert r.code == 0, r
    assert "stage glove-analogy: skipped (dataset 'google' not found: run `lexprobe data fetch google`" in r.out
    assert "total time:" in r.out and not (tmp_path / "indexes").exists()
    assert "lexprobe data fetch google" in (tmp_path / "run" / "report.md").read_text()


def test_glove_and_offsets_stages_end_to_end_on_real_data(cli, glove_home, shared_data, tmp_path):
    home = tmp_path / "indexes"  # the session's GloVe index, hard-linked: this test adds indexes beside it
    shutil.copytree(glove_home / "glove", home / "glove", copy_function=os.link)
    version = Store.open(home / "glove", verify=False).manifest["version_id"]
    runs, offsets_versions = [], []
    for run in ("run1", "run2"):
        r = cli("--home", home, "bench", "all", "--out", tmp_path / run, "--data", shared_data,
                "--stages", "glove-analogy,offsets", "--quick", "--seed", "3")
        assert r.code == 0, r
        assert "stage glove-analogy: done" in r.out and "stage offsets: done" in r.out and "total time:" in r.out
        runs.append(json.loads((tmp_path / run / "report.json").read_text()))
        offsets_versions.append(Store.open(home / "glove-bats-offsets", verify=False).manifest["version_id"])
    # indexes that match what the stages want are reused, never rebuilt; same seed, same numbers
    assert Store.open(home / "glove", verify=False).manifest["version_id"] == version
    assert offsets_versions[0] == offsets_versions[1]
    assert [s["tables"] for s in runs[0]["sections"]] == [s["tables"] for s in runs[1]["sections"]]
    assert runs[0]["findings"] == runs[1]["findings"]
    glove, offsets = runs[0]["sections"]
    assert "reused" in glove["text"][0] and "built" in offsets["text"][0]
    assert "reused" in runs[1]["sections"][1]["text"][0]
    neighbours = [row["word"] for row in glove["tables"][0]["rows"] if row["query"] == "king"]
    assert "queen" in neighbours and "prince" in neighbours
    per_section, honest = glove["tables"][1]["rows"], glove["tables"][2]
    overall = per_section[-1]
    assert overall["section"] == "all" and overall["questions"] == 2000
    assert 0.3 < overall["accuracy"] < 0.8
    verdicts = {}
    for finding in runs[0]["findings"]:
        verdicts.setdefault(finding["section"], []).append(finding["verdict"])
    assert verdicts["glove-analogy"] == ["agrees"] and honest["rows"][0]["returned"] == "b"
    assert abs(sum(row["share"] for row in honest["rows"]) - 1) < 1e-6

    table1 = {(r["category"], r["set"]): r for r in offsets["tables"][0]["rows"]}
    assert table1[("all", "bats")]["pcs"] > 0.6 and abs(table1[("all", "random-both")]["ocs"]) < 0.02
    offsets_verdicts = {f["claim"]: f["verdict"] for f in runs[0]["findings"] if f["section"] == "offsets"}
    assert offsets_verdicts["Table 1: BATS PCS above chance"] == "agrees"
    assert offsets_verdicts["Table 1: fully random set's OCS zero"] == "agrees"
    html = (tmp_path / "run1" / "report.html").read_text()
    # Google accuracy and honest returns; no word similarity: --data names the shared folder only, which has no set
    assert html.count('<img src="data:image/png;base64,') == 2
    assert (tmp_path / "run1" / "glove-analogy" / "google_per_section.parquet").exists()


def test_new_machine_finds_the_google_and_similarity_sets_in_gensim(tmp_path, monkeypatch):
    pytest.importorskip("gensim", reason="gensim (the dev extra) ships the Google set as test data")
    monkeypatch.setenv("LEXPROBE_DATA", str(tmp_path / "empty-home"))
    monkeypatch.setattr(pipeline.datahome, "shared_data", lambda: tmp_path / "no-shared")
    paths, info = pipeline.locate_data(None)
    assert list(paths) == ["google", "wordsim353", "simlex999"]  # gensim's test data: whole copies of the three
    assert paths["google"].name == "questions-words.txt" and info["google"]["source"].startswith("gensim==")
    assert all(info[name]["source"].startswith("gensim==") for name in ("wordsim353", "simlex999"))
    assert len(read_questions(paths["google"])) == 19544
