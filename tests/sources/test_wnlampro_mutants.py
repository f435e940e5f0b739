"""The WNLaMPro reader's (sources/datasets/wnlampro.py) edges that a mutation run found untested
(benchmarks/mutation.md): each test pins one behaviour by hand."""

from __future__ import annotations

import json

import pytest

from lexprobe.core.errors import InputError
from lexprobe.sources.datasets.wnlampro import Entry, bucket_of_count, estimated_count, read_dataset


def test_count_buckets_at_their_edges():
    """Pins the paper's count buckets: 9 rare, 10 and 99 medium, 100 frequent."""
    assert [bucket_of_count(c) for c in (0, 9, 10, 99, 100, 10**6)] == [
        "rare", "rare", "medium", "medium", "frequent", "frequent"]


def test_estimated_count_is_ten_to_the_zipf_and_zero_for_unknown_words():
    """Pins estimated_count: round(10 ** z) for z > 0 (Zipf 2 -> 100, 0.5 -> 3), 0 for z <= 0 (unknown words)."""
    assert [estimated_count(z) for z in (2.0, 0.5, 3.3)] == [100, 3, 1995]
    assert estimated_count(0.0) == 0 and estimated_count(-1.0) == 0


def test_an_entry_defaults_to_count_zero_in_the_rare_bucket():
    """Pins Entry's defaults: no Zipf and no count (0 each), so the rare bucket."""
    entry = Entry(id=0, split="dev", keyword="x", relation="antonym", targets=["y"])
    assert (entry.zipf, entry.count, entry.bucket) == (0.0, 0, "rare")


def test_a_jsonl_row_with_an_unknown_field_names_it_and_its_line(tmp_path):
    """Pins read_jsonl's error for a row that is no Entry: the file, the line and the field in one line."""
    good = {"id": 0, "split": "dev", "keyword": "x", "relation": "antonym", "targets": ["y"]}
    path = tmp_path / "wnlampro.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "colour": "red"}) + "\n")
    with pytest.raises(InputError, match=r"wnlampro.jsonl:2: not a WNLaMPro entry: .*unexpected keyword argument "
                       r"'colour'") as info:
        read_dataset(path)
    assert "\n" not in str(info.value)
