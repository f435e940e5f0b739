"""Reproducibility: the same command with the same seed writes byte-identical result files (Parquet tables,
markdown tables, summary JSON, PNG plots); a different seed changes the seeded ones (so the comparison can fail).

Runs are compared between two fresh homes (nothing reused). A rerun in the same home reuses the indexes the
first run built: its tables must still be identical; only the summary's record of what was built differs.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

BATS_ARGS = ("--shuffles", "3", "--replicates", "2", "--pool", "2000", "--loop-sample", "1")


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _differing(a: Path, b: Path) -> list[str]:
    fa, fb = _files(a), _files(b)
    assert fa.keys() == fb.keys()
    return [name for name in fa if fa[name] != fb[name]]


def test_run_folder_writes_identical_bytes(tmp_path):
    """The run-folder writer itself: Parquet (no timestamps in its metadata), markdown and JSON."""
    from lexprobe.runs.run_dir import RunDir

    rows = [{"relation": "I01", "ocs": 0.25, "pcs": 0.5, "n": 3}, {"relation": "E02", "ocs": float("nan"),
                                                                    "pcs": 0.1, "n": 7}]
    for out in ("a", "b"):
        run = RunDir(tmp_path / out)
        run.write_table("t", rows)
        run.write_table("u", pa.table({"x": pa.array([1.5, 2.5], pa.float32())}))
        run.write_json("summary.json", {"seed": 1, "score": 0.5})
    assert _differing(tmp_path / "a", tmp_path / "b") == []
    assert len(_files(tmp_path / "a")) == 5


@pytest.fixture(scope="module")
def glove_30k_homes(tmp_path_factory):
    """Three fresh homes, each with the 30,000 most frequent packaged GloVe words as index ``g``."""
    from lexprobe.kinds.words import build_word_index

    homes = []
    for n in range(3):
        home = tmp_path_factory.mktemp(f"repro{n}")
        build_word_index("g", "glove-6b-50d", home=home, limit=30_000)
        homes.append(home)
    return homes


def test_bench_offsets_same_seed_same_bytes(cli, shared_data, glove_30k_homes, tmp_path):
    bats = f"bats:{shared_data / 'BATS_3.0'}"
    outs = {}
    for label, home, seed in (("a", glove_30k_homes[0], "3"), ("b", glove_30k_homes[1], "3"),
                              ("rerun", glove_30k_homes[0], "3"), ("other-seed", glove_30k_homes[2], "4")):
        out = tmp_path / label
        r = cli("--home", home, "-q", "bench", "offsets", "--words", "g", "--dataset", bats, *BATS_ARGS,
                "--seed", seed, "--out", out, "--record", tmp_path / f"{label}.md")
        assert r.code == 0, r
        outs[label] = out
    assert _differing(outs["a"], outs["b"]) == []
    assert {p.suffix for p in outs["a"].iterdir()} >= {".parquet", ".md", ".json", ".png"}
    # the rerun reused the offsets index the first run built: same tables, same plot
    assert [n for n in _differing(outs["a"], outs["rerun"]) if n != "summary.json"] == []
    # the seed matters: the random sets (and so their table) change with it
    assert "sets.parquet" in _differing(outs["a"], outs["other-seed"])


@pytest.mark.parametrize("method, honest", [("add", "--honest"), ("mul", "--no-honest")])
def test_bench_analogy_same_command_same_bytes(cli, shared_data, glove_30k_homes, tmp_path, method, honest):
    bats = f"bats:{shared_data / 'BATS_3.0' / '1_Inflectional_morphology'}"
    for label, home in (("a", glove_30k_homes[0]), ("b", glove_30k_homes[1])):
        r = cli("--home", home, "-q", "bench", "analogy", "--words", "g", "--dataset", bats, "--method", method,
                honest, "--out", tmp_path / label)
        assert r.code == 0, r
    assert _differing(tmp_path / "a", tmp_path / "b") == []
    assert {p.suffix for p in (tmp_path / "a").iterdir()} >= {".parquet", ".md", ".json", ".png"}


def test_bench_wnlampro_same_seed_same_bytes(cli, tmp_path):
    """Masked-LM probing with a seeded OTA strategy (random contexts) on a tiny WNLaMPro file."""
    data = tmp_path / "WNLaMPro.txt"
    data.write_text("1\tdev\tkumquat (n,1.5,30)\thypernym\tfruit (n,4.0,10000)\tcitrus (n,3.0,1000)\n"
                    "2\ttest\tquince (n,1.5,30)\thypernym\tfruit (n,4.0,10000)\n"
                    "3\ttest\tsparrow (n,3.0,800)\thypernym\tbird (n,4.5,20000)\n")
    for label in ("a", "b"):
        r = cli("-q", "bench", "wnlampro", "--model", "splade-tiny", "--dataset", data, "--strategies",
                "original,ota", "--ota-iterations", "3", "--seed", "1", "--out", tmp_path / label)
        assert r.code == 0, r
    assert _differing(tmp_path / "a", tmp_path / "b") == []
    assert {p.suffix for p in (tmp_path / "a").iterdir()} >= {".parquet", ".md", ".json", ".png"}


def test_bench_senses_same_seed_same_bytes(cli, shared_data, tmp_path):
    """Sense ranking (token index built by each run in its own fresh home) on a seeded query sample."""
    corpus = f"wsd:{shared_data / 'wsd_eval' / 'senseval2'}"
    for label in ("a", "b"):
        r = cli("--home", tmp_path / f"home-{label}", "-q", "bench", "senses", "--model", "splade-tiny",
                "--database", corpus, "--queries", corpus, "--database-sentences", "80", "-k", "5",
                "--min-sense-count", "2", "--limit-queries", "30", "--seed", "1", "--out", tmp_path / label,
                "--record", "")
        assert r.code == 0, r
    assert _differing(tmp_path / "a", tmp_path / "b") == []
    assert {p.suffix for p in (tmp_path / "a").iterdir()} >= {".parquet", ".md", ".json", ".png"}
