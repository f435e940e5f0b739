"""Run folders describe themselves and are never mixed: a folder holding another run is
refused unless --overwrite (which empties it), every Parquet file carries the run record, summary.json is strict
JSON with the version, honest.parquet has no meaningless rank column."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.core.version import __version__
from lexprobe.runs.run_dir import RunDir, begin_run, end_run, run_record, strict_json


def test_strict_json_and_record_in_every_file(tmp_path):
    record = run_record("lexprobe run x --method add --seed 3", {"method": "add", "seed": 3})
    begin_run(tmp_path / "out", record)
    try:
        run = RunDir(tmp_path / "out" / "stage")  # a sub-folder of the claimed run carries its record too
        run.write_table("t", [{"x": 1.0, "y": float("nan")}])
        run.write_json("summary.json", {"score": float("nan"), "inf": [float("inf"), 2.0], "n": 3})
    finally:
        end_run()
    text = (tmp_path / "out" / "stage" / "summary.json").read_text()
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert data["score"] is None and data["inf"] == [None, 2.0] and data["n"] == 3
    assert data["lexprobe"]["lexprobe_version"] == __version__ and data["lexprobe"]["seed"] == 3
    meta = json.loads(pq.read_schema(tmp_path / "out" / "stage" / "t.parquet").metadata[b"lexprobe"])
    assert meta == record and meta["method"] == "add" and meta["command"].startswith("lexprobe run x")
    assert math.isnan(pq.read_table(tmp_path / "out" / "stage" / "t.parquet").column("y")[0].as_py())
    # outside a command: the version only
    RunDir(tmp_path / "lib").write_table("u", pa.table({"a": [1]}))
    assert json.loads(pq.read_schema(tmp_path / "lib" / "u.parquet").metadata[b"lexprobe"]) == {
        "lexprobe_version": __version__}
    assert strict_json({"a": (1, float("-inf"))}) == {"a": [1, None]}


def test_folder_of_another_run_is_refused_then_cleared(tmp_path, shared_data):
    out = tmp_path / "out"
    google = f"google:{shared_data / 'google_analogy' / 'questions-words.txt'}"
    first = run_record("lexprobe run a --method add", {"method": "add", "dataset": google})
    assert len(first["dataset_sha256"]) == 64 and first["dataset"] == google
    begin_run(out, first)
    assert not out.exists()  # nothing is written before the run writes its first file
    RunDir(out).write_text("honest.md", "x")
    end_run()
    begin_run(out, first)  # the same run again: reused in place
    RunDir(out)
    end_run()
    assert (out / "honest.md").exists()
    second = run_record("lexprobe run a --method mul", {"method": "mul", "dataset": google})
    with pytest.raises(LexprobeError, match="holds another run .*--method add.*--overwrite"):
        begin_run(out, second)
    begin_run(out, second, overwrite=True)
    assert (out / "honest.md").exists()  # emptied only when the run starts writing
    RunDir(out / "sub")
    end_run()
    assert sorted(p.name for p in out.iterdir()) == ["run.json", "sub"]
    assert json.loads((out / "run.json").read_text())["method"] == "mul"
    newer = {**second, "lexprobe_version": "9.9"}
    with pytest.raises(LexprobeError, match="holds a run of this command with other lexprobe_version"):
        begin_run(out, newer)
    stranger = tmp_path / "mine"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("keep")
    with pytest.raises(LexprobeError, match="files of something else"):
        begin_run(stranger, first)
    assert (stranger / "notes.txt").read_text() == "keep"


def test_cli_rerun_into_same_out(cli, glove_home, shared_data, tmp_path):
    """3CosAdd then 3CosMul into one --out: refused; --overwrite leaves only the second run's files; every
    Parquet file names the command, index, dataset checksum, method; honest.parquet has no rank column."""
    bats = f"bats:{shared_data / 'BATS_3.0' / '1_Inflectional_morphology' / 'I01 [noun - plural_reg].txt'}"
    out = tmp_path / "run"
    args = ("--home", glove_home, "-q", "run", "analogy", "--index", "glove", "--dataset", bats, "--out", out)
    assert cli(*args).code == 0
    assert (out / "honest.parquet").exists() and "rank" not in pq.read_schema(out / "honest.parquet").names
    r = cli(*args, "--method", "mul", "--no-honest")
    assert r.code == 2 and "holds another run" in r.err and "--overwrite" in r.err and "Traceback" not in r.err
    assert cli(*args, "--method", "mul", "--no-honest", "--overwrite").code == 0
    assert not (out / "honest.parquet").exists()  # the first run's files are gone
    for table in out.glob("*.parquet"):
        meta = json.loads(pq.read_schema(table).metadata[b"lexprobe"])
        assert meta["method"] == "mul" and meta["index"] == "glove" and meta["index_rows"] == 400_000
        assert meta["command"].startswith("lexprobe run analogy --index glove") and "--out" not in meta["command"]
        assert meta["dataset"] == bats and len(meta["dataset_sha256"]) == 64
        assert meta["lexprobe_version"] == __version__
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lexprobe"]["method"] == "mul"
    assert cli(*args, "--method", "mul", "--no-honest").code == 0  # the identical command reruns in place
