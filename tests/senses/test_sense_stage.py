"""The main job's senses stage end to end on a sliver of the real corpora, with two fast models in the place of
the three: every corpus and model ranked, the comparison's tables and figures written, one finding per model and
corpus and per claim part, and a second run reusing every token index."""

from __future__ import annotations

import pyarrow.parquet as pq

from lexprobe.senses import run_senses
from lexprobe.suite.main_job import Settings
from lexprobe.runs.run_dir import RunDir


def test_stage_compares_models_on_both_corpora_and_reuses_its_indexes(shared_data, tmp_path, monkeypatch):
    monkeypatch.setattr(run_senses, "COMPARED", ("splade-tiny", "minilm"))
    monkeypatch.setattr(run_senses, "CAUSAL", "minilm")  # the causal role only: minilm is read whole
    monkeypatch.setattr(run_senses, "QUICK_FRACTIONS", {"semcor": 0.004, "streusle": 0.1})
    data = {"semcor": shared_data / "semcor3.0", "wsd-eval": shared_data / "wsd_eval",
            "streusle": shared_data / "streusle" / "v4.7.1"}
    settings = Settings(home=tmp_path / "home", quick=True, data=data)
    section = run_senses.senses_stage(RunDir(tmp_path / "run"), settings)
    assert section.text[0].startswith("Token indexes built now")
    claims = [f.claim for f in section.findings]
    for corpus in ("SemCor", "STREUSLE"):
        assert f"SPLADE-tiny above random in every cell ({corpus})" in claims
        assert f"MiniLM above random in every cell ({corpus})" in claims
        assert f"MiniLM (causal) lowest on rare senses ({corpus})" in claims
        assert f"models differ much more where r < 0.25 ({corpus})" in claims
    assert len(claims) == 2 * 5 + 2 and all(f.quote for f in section.findings)
    for key in ("semcor", "streusle"):
        folder = tmp_path / "run" / key
        cells = pq.read_table(folder / "compare_cells.parquet").to_pylist()
        assert {r["model"] for r in cells} == {"splade-tiny", "minilm"}
        assert all(r["random_p_at_k"] <= r["oracle_p_at_k"] for r in cells if r["queries"])
        assert (folder / "p_at_k.png").is_file() and (folder / "lift.png").is_file()
        queries = pq.read_table(folder / "queries.parquet")
        assert set(queries.column("run").to_pylist()) == {"splade-tiny", "minilm"}
    assert [image.path for image in section.images] == ["semcor/p_at_k.png", "semcor/lift.png",
                                                        "streusle/p_at_k.png", "streusle/lift.png"]
    again = run_senses.senses_stage(RunDir(tmp_path / "again"), settings)
    assert again.text[0] == "Token indexes reused (manifests match)."
    assert [f.verdict for f in again.findings] == [f.verdict for f in section.findings]
