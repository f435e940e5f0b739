"""The main job on both cores: work run side by side in worker processes or threads gives the numbers it
gives one part after the other, errors come back as one clear error, and every stage's wall and CPU time is
recorded."""

from __future__ import annotations

import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.sources.models import in_processes, resolve_device


def test_in_processes_returns_results_in_order_and_errors_clearly():
    assert in_processes([(pow, (2, 10), {}), (divmod, (17, 5), {}), (sorted, ([3, 1, 2],), {"reverse": True})]) \
        == [1024, (3, 2), [3, 2, 1]]
    with pytest.raises(LexprobeError, match="--device tpu: not a device"):
        in_processes([(pow, (2, 3), {}), (resolve_device, ("tpu",), {})])


def test_ota_recovery_contexts_side_by_side_give_the_same_numbers(tmp_path):
    """The OTA stage's two context variants in two worker processes (one torch thread each) against both in this
    process on one thread: the same curve and summary, to the bit."""
    from lexprobe.rare_words.run_rare_words import run_ota_recovery

    options = dict(n_words=3, iterations=50, contexts=("static", "random"), every=50, seed=0, threads=1)
    apart = run_ota_recovery("minilm", tmp_path / "apart", contexts_side_by_side=True, **options)
    here = run_ota_recovery("minilm", tmp_path / "here", **options)
    assert apart["words"] == here["words"] and len(here["curve"]) == 4
    assert apart["curve"] == here["curve"] and apart["summary"] == here["summary"]
    assert (tmp_path / "apart" / "summary.md").read_text() == (tmp_path / "here" / "summary.md").read_text()


def test_ota_batches_side_by_side_give_the_same_rows():
    """WNLaMPro probed with OTA's batches two at once (threads of one torch thread each) against one after the
    other: the same rows, to the bit (72 multi-token keywords: two OTA batches, of 64 and 8)."""
    from lexprobe.rare_words.language_models import MaskedLM
    from lexprobe.rare_words.probing import probe_tables
    from lexprobe.sources.datasets.wnlampro import Entry

    heads, tails = ["sun", "moon", "star", "rain", "snow", "wind", "fire", "stone"], \
        ["berry", "fish", "wort", "bird", "weed", "nut", "fly", "root", "horn"]
    entries = [Entry(n, "test", h + t, "hypernym", ["plant", "animal", "thing"], "n", 1.0)
               for n, (h, t) in enumerate((h, t) for h in heads for t in tails)]
    lm = MaskedLM.load("splade-tiny")
    options = dict(strategies=("ota",), ota_iterations=3, seed=0)
    one, two = probe_tables(entries, lm, **options), probe_tables(entries, lm, **options, ota_batch_threads=2)
    assert two.summary["multi_token_keywords"] > 64 and two.summary["replaced_keywords"]["ota"] > 64
    assert one.rows == two.rows and one.to_arrow().equals(two.to_arrow())


def test_stage_times_are_recorded(tmp_path):
    from lexprobe.runs.report import Section, Table
    from lexprobe.suite import main_job

    def busy(run_dir, settings):
        sum(i * i for i in range(10_000_000))  # some CPU time to measure
        return Section("busy", "Busy stage", "analogies", tables=[Table("t", [{"x": 1}])])

    lines = []
    stages = [main_job.Stage("busy", "Busy stage", "analogies", busy)]
    main_job.run_all(tmp_path / "run", main_job.Settings(home=tmp_path / "home"), stages, echo=lines.append)
    table = (tmp_path / "run" / "stage_times.md").read_text()
    assert "| stage | status | wall_s | cpu_s | cpu_share |" in table
    assert "| busy | done |" in table and "| total |" in table
    import pyarrow.parquet as pq

    rows = pq.read_table(tmp_path / "run" / "stage_times.parquet").to_pylist()
    assert rows[0]["cpu_s"] > 0.1 and rows[0]["cpu_share"] == pytest.approx(rows[0]["cpu_s"] / rows[0]["wall_s"],
                                                                             rel=0.05)
    assert any(line.startswith("stage busy: done in") and "CPU" in line for line in lines)
    assert "stage times (wall s, CPU share)" in (tmp_path / "run" / "report.md").read_text()
