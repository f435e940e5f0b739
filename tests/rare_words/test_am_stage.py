"""The AM stage's findings and tables from hand-made numbers: which half of AM a run tests, the context half
untestable without contexts, AM's recovery against the mean of the contexts, the shares of probed keywords with
contexts and the mean gate by bucket; the static case (GloVe) on real data; the stage is registered in the main
job."""

from __future__ import annotations

import math
from types import SimpleNamespace

from lexprobe.core.findings import AGREES, DISAGREES, UNTESTABLE
from lexprobe.rare_words.rare_word_claims import am_context_half, am_form_half, am_recovery
from lexprobe.rare_words.run_am import context_shares


def _gap(rare_low: float, medium_low: float) -> dict:
    out = {}
    for first in ("am", "am-context"):
        for bucket, low in (("rare", rare_low), ("medium", medium_low)):
            out[(f"{first} - original", bucket)] = {"difference": low + 0.02, "low": low, "high": low + 0.04,
                                                    "entries": 100}
    return out


def _share(rare: float) -> dict:
    return {(s, b): {">= 1 context": rare if b == "rare" else 0.9, ">= 8 contexts": rare / 2 if b == "rare" else 0.5}
            for s in ("am", "am-context") for b in ("rare", "medium", "frequent")}


def test_form_half_verdict_and_which_half():
    few = am_form_half(_gap(0.01, 0.02), _share(0.01), section="am")
    assert few.verdict == AGREES and "form half only" in few.claim
    assert am_form_half(_gap(-0.01, 0.02), _share(0.01), section="am").verdict == DISAGREES  # rare straddles 0
    assert am_form_half(_gap(0.01, -0.02), _share(0.01), section="am").verdict == DISAGREES  # medium too
    assert "form and contexts" in am_form_half(_gap(0.01, 0.02), _share(0.8), section="am").claim
    assert "1.0% with >= 1 context" in few.details[1]


def test_context_half_is_untestable_without_contexts():
    assert am_context_half(_gap(0.01, 0.02), _share(0.01), section="am").verdict == UNTESTABLE
    assert am_context_half(_gap(0.01, 0.02), _share(0.8), section="am").verdict == AGREES
    assert am_context_half(_gap(-0.01, 0.02), _share(0.8), section="am").verdict == DISAGREES


def _recovery(low_at_1: float, low_at_8: float, low_at_32: float = -0.1) -> list[dict]:
    return [{"method": m, "contexts": k, "words": 50, "minus_mean": low + 0.05, "minus_mean_low": low,
             "minus_mean_high": low + 0.1} for k, low in ((1, low_at_1), (8, low_at_8), (32, low_at_32))
            for m in ("am", "form")] + [{"method": "am", "contexts": 0, "words": 50, "minus_mean": math.nan,
                                         "minus_mean_low": math.nan, "minus_mean_high": math.nan}]


def test_am_recovery_is_judged_at_1_and_8_contexts_for_every_target_table():
    good = am_recovery({"splade-tiny": _recovery(0.1, 0.05), "GloVe": _recovery(0.2, 0.01)}, section="am")
    assert good.verdict == AGREES and len(good.evidence) == 4  # 32 contexts straddle 0: shown, not judged
    assert good.evidence[0].name == "splade-tiny am - mean (1)" and good.evidence[0].n == 50
    assert "-0.050 [-0.100, +0.000]" in good.details[-1]
    assert am_recovery({"splade-tiny": _recovery(0.1, 0.05), "GloVe": _recovery(0.2, -0.01)},
                       section="am").verdict == DISAGREES
    assert am_recovery({"GloVe": _recovery(-0.01, 0.05)}, section="am").verdict == DISAGREES


def test_the_static_case_trains_am_on_glove_and_recovers_held_out_words(glove_home, shared_data, tmp_path):
    """A small real run: GloVe's index, the contexts of SemCor's first 2,000 sentences, one epoch, 30 words."""
    import shutil

    from lexprobe.kinds.contexts import ContextIndex, build_contexts_index
    from lexprobe.rare_words.run_am import CONTEXTS_INDEX, STATIC_INDEX, static_recovery

    home = tmp_path / "home"
    shutil.copytree(glove_home / STATIC_INDEX, home / STATIC_INDEX)
    build_contexts_index(CONTEXTS_INDEX, f"wsd:{shared_data / 'semcor3.0'}", home=home, max_sentences=2000)
    index = ContextIndex.open(CONTEXTS_INDEX, home=home)
    rows, trained = static_recovery(home, index, epochs=1, recovery_words=30, seed=0)
    assert trained["targets"] == 400_000 and trained["dim"] == 50 and trained["epochs"] == 1 and not trained["reused"]
    got = {(r["method"], r["contexts"]): r for r in rows}
    assert {m for m, _ in got} == {"am", "form", "mean"} and got[("am", 0)]["words"] == 30
    assert got[("am", 0)]["cosine"] == got[("form", 0)]["cosine"]  # no contexts: AM's vector is its form
    assert all(-1 <= r["cosine"] <= 1 and 1 <= r["median_rank"] <= 400_000 for r in rows)
    assert not math.isnan(got[("am", 1)]["minus_mean"])
    again, reused = static_recovery(home, index, epochs=1, recovery_words=30, seed=0)
    assert reused["reused"] and repr(again) == repr(rows)  # NaN where undefined, in the same places


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
