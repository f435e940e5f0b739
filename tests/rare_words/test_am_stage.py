"""The AM stage's pieces: the static case (GloVe) on real data, simulated rarity's entries, the shares of probed
keywords with contexts and the mean gate by bucket, reuse of the wnlampro stage's rows and dataset; the stage is
registered in the main job. (The findings are tested on hand-made numbers in test_am_claims.)"""

from __future__ import annotations

import math
from types import SimpleNamespace

from lexprobe.rare_words.run_am import context_shares


def test_the_static_case_trains_three_models_on_glove_and_recovers_held_out_words(glove_home, shared_data, tmp_path):
    """A small real run: GloVe's index, the contexts of SemCor's first 3,000 sentences, one epoch, 20 words with
    32 usable windows; reused the second time."""
    import shutil

    from lexprobe.kinds.contexts import ContextIndex, build_contexts_index
    from lexprobe.kinds.words import WordIndex
    from lexprobe.rare_words.am_targets import index_targets
    from lexprobe.rare_words.mimicking import ContextData
    from lexprobe.rare_words.run_am import CONTEXTS_INDEX, STATIC_INDEX, STATIC_MODELS, train_case

    home = tmp_path / "home"
    shutil.copytree(glove_home / STATIC_INDEX, home / STATIC_INDEX)
    build_contexts_index(CONTEXTS_INDEX, f"wsd:{shared_data / 'semcor3.0'}", home=home, max_sentences=3000)
    index = ContextIndex.open(CONTEXTS_INDEX, home=home)
    data = ContextData.from_index(index)
    table = index_targets(WordIndex.open(STATIC_INDEX, home=home))
    models, trained, recovery, gaps = train_case(home, index, data, table, STATIC_MODELS, epochs=1,
                                                 recovery_words=20, seed=0, also_held=("bank",))
    assert set(trained) == {"am", "am-context", "fcm"} and not any(t["reused"] for t in trained.values())
    assert trained["am"]["targets"] == 400_000 and trained["fcm"]["attention"] == "uniform"
    assert trained["am"]["words"] == trained["fcm"]["words"] == trained["am-context"]["words"]  # the same words
    assert 0 < trained["am-context"]["below_smin"] < trained["am-context"]["words"]
    assert trained["am"]["below_smin"] == 0
    assert models["am"].meta["held_out"]["words"] == 21  # the recovery words and ``also_held``
    got = {(r["method"], r["contexts"]): r for r in recovery.rows}
    assert {m for m, _ in got} == {"am", "am-context", "fcm", "form", "mean", "linear map"}
    assert {k for _, k in got} == {0, 1, 2, 4, 8, 16, 32} and all(r["words"] == 20 for r in recovery.rows)
    assert any(r["what"] == "gap" and r["comparison"] == "(am - linear map) at 32 - at 1" for r in gaps)
    again = train_case(home, index, data, table, STATIC_MODELS, epochs=1, recovery_words=20, seed=0,
                       also_held=("bank",))
    assert all(t["reused"] for t in again[1].values())
    assert repr(again[2].rows) == repr(recovery.rows)  # NaN where undefined, in the same places


def test_rarity_entries_are_frequent_keywords_whose_first_windows_are_usable():
    import numpy as np
    import pyarrow as pa

    from lexprobe.rare_words.am_targets import TargetTable
    from lexprobe.rare_words.mimicking import ContextData
    from lexprobe.rare_words.run_am import rarity_entries
    from lexprobe.sources.datasets.wnlampro import Entry

    targets = TargetTable(["x", "dog"], np.eye(2, dtype=np.float32))
    owners = ["cat"] * 3 + ["dog"] * 3 + ["owl"] * 2
    windows = [["x", "cat"], ["x", "cat"], ["x", "cat"], ["x", "dog"], ["dog"], ["x", "dog"], ["x", "owl"],
               ["x", "owl"]]
    data = ContextData(pa.array(owners), pa.array(windows), {"cat": 3, "dog": 3, "owl": 2})
    entries = [Entry(0, "dev", "Cat", "hypernym", ["animal"], "n", 5.0, 1000),
               Entry(1, "dev", "dog", "hypernym", ["animal"], "n", 5.0, 1000),  # its second window has no known word
               Entry(2, "dev", "owl", "hypernym", ["bird"], "n", 5.0, 1000),  # two windows only
               Entry(3, "dev", "cat", "cohyponym", ["dog"], "n", 1.5, 3)]  # not frequent
    assert [e.id for e in entries if e.bucket != "frequent"] == [3]
    assert [e.id for e in rarity_entries(entries, data, targets, limit=10, seed=0, k=3)] == [0]
    assert [e.id for e in rarity_entries(entries, data, targets, limit=10, seed=0, k=2)] == [0, 2]


def test_context_shares_and_gate_by_bucket():
    rows = [{"strategy": "am", "keyword": w, "bucket": b}
            for w, b in (("a", "rare"), ("b", "rare"), ("c", "frequent"), ("d", "frequent"))]
    provider = SimpleNamespace(inferred={"a": (0, math.nan), "b": (3, 0.2), "c": (10, 0.4), "d": (8, 0.8)})
    got = {r["bucket"]: r for r in context_shares(rows, {"am": provider})}
    assert got["rare"]["keywords"] == 2 and got["rare"][">= 1 context"] == 0.5 and got["rare"][">= 8 contexts"] == 0
    assert got["rare"]["mean gate alpha"] == 0.2
    assert got["frequent"][">= 8 contexts"] == 1 and abs(got["frequent"]["mean gate alpha"] - 0.6) < 1e-12
    assert got["all"]["keywords"] == 4 and abs(got["all"]["mean gate alpha"] - (0.2 + 0.4 + 0.8) / 3) < 1e-9
    assert got["medium"]["keywords"] == 0 and math.isnan(got["medium"][">= 1 context"])


def test_the_stage_is_in_the_main_job():
    from lexprobe.suite.main_job import STAGES

    stage = next(s for s in STAGES if s.name == "am")
    assert stage.paper == "rare-words" and set(stage.datasets) == {"semcor", "wsd-eval", "streusle"}


def test_the_wnlampro_stage_rows_are_reused_only_for_the_same_sample(tmp_path):
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from lexprobe.rare_words.run_am import wnlampro_rows

    rows = [{"strategy": s, "id": i, "rr": 0.5} for s in ("original", "ota", "first") for i in (1, 2)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "entries.parquet")
    (tmp_path / "summary.json").write_text(json.dumps({"limit": 200, "seed": 0, "strategies": ["original", "ota",
                                                                                               "first"]}))
    got = wnlampro_rows(tmp_path, limit=200, seed=0, dtype="float32")
    assert got is not None and {r["strategy"] for r in got} == {"original", "ota"} and len(got) == 4
    assert wnlampro_rows(tmp_path, limit=40, seed=0, dtype="float32") is None
    assert wnlampro_rows(tmp_path, limit=200, seed=1, dtype="float32") is None
    assert wnlampro_rows(tmp_path, limit=200, seed=0, dtype="bfloat16") is None
    assert wnlampro_rows(tmp_path / "none", limit=200, seed=0, dtype="float32") is None


def test_the_wnlampro_stage_dataset_is_reused_only_for_the_same_seed(tmp_path):
    import json

    from lexprobe.rare_words.run_am import wnlampro_entries
    from lexprobe.rare_words.run_rare_words import write_dataset
    from lexprobe.sources.datasets.wnlampro import Entry

    entries = [Entry(0, "dev", "samosa", "cohyponym", ["pizza", "salad"], "n", 2.1, 120),
               Entry(1, "test", "lingonberry", "hypernym", ["fruit"], "n", 0.4, 2)]
    write_dataset(entries, tmp_path / "dataset")
    (tmp_path / "summary.json").write_text(json.dumps({"seed": 0, "limit": 40}))
    assert wnlampro_entries(tmp_path, seed=0) == entries
    assert wnlampro_entries(tmp_path, seed=1) is None and wnlampro_entries(tmp_path / "none", seed=0) is None
