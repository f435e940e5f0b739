"""The offsets index: build over the packaged GloVe and real BATS, selection, atomic appends, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.kinds.offsets import OffsetIndex, append_offsets, build_offset_index, offset_table
from lexprobe.kinds.words import WordIndex
from lexprobe.sources.datasets.analogy_sets import read_dataset


@pytest.fixture(scope="module")
def bats_offsets(glove_home, shared_data):
    summary = build_offset_index(glove_home, "glove-bats", "glove", f"bats:{shared_data / 'BATS_3.0'}")
    return glove_home, summary


def test_build_rows_are_end_minus_start(bats_offsets):
    home, summary = bats_offsets
    assert summary["relations"] == 40 and 0 < summary["pairs_dropped"] < 400
    assert summary["rows"] == 2000 - summary["pairs_dropped"] - summary["identity_dropped"]
    assert summary["identity_dropped"] == 2  # I02 series:series and species:species (identities left out)
    index, words = OffsetIndex.open("glove-bats", home=home), WordIndex.open("glove", home=home)
    assert index.store.meta["words_index"] == "glove" and index.store.meta["dataset"].startswith("bats:")
    rows = index.select(relation="I01 [noun - plural_reg]")
    assert len(rows) > 40 and set(rows.kind) == {"true"} and set(rows.replicate) == {-1}
    i = list(rows.start).index("album")
    assert rows.end[i] == "albums"
    np.testing.assert_allclose(rows.offset[i], words.raw[words.word_to_id["albums"]] - words.raw[words.word_to_id["album"]],
                               rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(rows.unit, axis=1), 1, rtol=1e-5)
    np.testing.assert_allclose(rows.norm, np.linalg.norm(rows.offset, axis=1), rtol=1e-5)
    assert index.relations()[0] == "I01 [noun - plural_reg]" and len(index.relations()) == 40
    cov = {c["code"]: c for c in index.store.meta["coverage"]}
    assert cov["I01"]["kept"] == len(rows)


def test_append_is_a_new_shard_and_selectable(bats_offsets):
    home, _ = bats_offsets
    before = OffsetIndex.open("glove-bats", home=home)
    true = before.select(relation="E01 [country - capital]")
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(true))
    table = offset_table(relation=true.relation, category=true.category, start=true.start, end=true.end[perm],
                         start_id=true.start_id, end_id=true.end_id[perm],
                         offset=true.offset[perm] + 0, kind="shuffled", replicate=3, seed=7)
    out = append_offsets(home, "glove-bats", table)
    after = OffsetIndex.open("glove-bats", home=home)
    assert out["appended"] == len(true) and after.store.count == before.store.count + len(true)
    assert len(after.store.manifest["shards"]) == len(before.store.manifest["shards"]) + 1
    shuffled = after.select(kind="shuffled", replicate=3)
    assert len(shuffled) == len(true) and set(shuffled.seed) == {7}
    assert shuffled.id.min() == before.store.count  # ids continue the index's row ids
    assert len(after.select(relation="E01 [country - capital]")) == len(true)  # kind defaults to true
    assert after.kinds() == ["true", "shuffled"]


def test_append_wrong_dimension_leaves_index_intact(bats_offsets):
    home, _ = bats_offsets
    before = OffsetIndex.open("glove-bats", home=home).store.manifest["version_id"]
    bad = offset_table(relation=["r"], category=["c"], start=["a"], end=["b"], start_id=[0], end_id=[1],
                       offset=np.ones((1, 3), np.float32), kind="random")
    with pytest.raises(LexprobeError, match="dimension 3"):
        append_offsets(home, "glove-bats", bad)
    assert OffsetIndex.open("glove-bats", home=home).store.manifest["version_id"] == before


def test_cli_builds_google_offsets_and_reports_bad_input(cli, glove_home, shared_data, tmp_path):
    q = shared_data / "google_analogy/questions-words.txt"
    r = cli("--home", glove_home, "index", "offsets", "--words", "glove", "--dataset", f"google:{q}",
            "--lowercase", "--name", "glove-google")
    assert r.code == 0, r
    assert "in 14 relations" in r.out
    assert OffsetIndex.open("glove-google", home=glove_home).store.meta["lowercase"] is True
    bad = tmp_path / "I01 [x - y].txt"
    bad.write_text("cat\tcats\ndog\n")
    # a name of its own: the default name may be taken by an earlier test's offsets index in the shared home
    r = cli("--home", glove_home, "index", "offsets", "--words", "glove", "--dataset", f"bats:{bad}",
            "--name", "glove-bad-pairs")
    assert r.code == 2 and f"{bad}:2:" in r.err and r.err.count("\n") == 1
    r = cli("--home", glove_home, "index", "offsets", "--words", "glove", "--dataset", "vecto:/x",
            "--name", "glove-bad-kind")
    assert r.code == 2 and "bats:PATH, google:PATH" in r.err and "vecto:/x" in r.err
    r = cli("--home", glove_home, "query", "neighbors", "--index", "glove-google", "x")
    assert r.code == 2


def test_read_dataset_lowercases_bats(tmp_path):
    f = tmp_path / "E01 [country - capital].txt"
    f.write_text("France\tParis\n")
    assert read_dataset(f"bats:{f}", lowercase=True)[0].pairs == [("france", ["paris"])]


def test_offset_table_by_hand_and_its_defaults():
    """Pins offset_table: unit = offset / ||offset|| (zero stays zero), norm = ||offset||, and rows given no ids,
    replicate or seed get -1 in each (true pairs, numbered later by append_offsets)."""
    rows = offset_table(relation=["r", "r"], category=["c", "c"], start=["a", "b"], end=["x", "y"],
                        start_id=[0, 1], end_id=[2, 3], offset=np.array([[3, 4], [0, 0]], np.float32), kind="true")
    assert rows.column("id").to_pylist() == [-1, -1]
    assert rows.column("replicate").to_pylist() == [-1, -1] and rows.column("seed").to_pylist() == [-1, -1]
    assert rows.column("unit").to_pylist() == [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    assert rows.column("norm").to_pylist() == [5.0, 0.0]
    numbered = offset_table(relation=["r"], category=["c"], start=["a"], end=["x"], start_id=[0], end_id=[2],
                            offset=np.ones((1, 2), np.float32), kind="shuffled", replicate=4, seed=9, ids=np.array([7]))
    assert [numbered.column(c)[0].as_py() for c in ("id", "replicate", "seed")] == [7, 4, 9]


def test_rows_whose_offsets_are_not_fixed_size_vectors_are_refused(tmp_path):
    """Pins append_offsets' dimension check on the column type: an offset column of variable-length lists is
    refused with one clear error (dimension unknown) even by a 1-dimensional index, and the index is unchanged."""
    import pyarrow as pa

    from lexprobe.core.store import StoreWriter, write_lock
    from lexprobe.kinds.offsets import offset_schema

    one = dict(relation=["r"], category=["c"], start=["a"], end=["x"], start_id=[0], end_id=[1], kind="true")
    with write_lock(tmp_path, "o1"):
        with StoreWriter(tmp_path, "o1", kind="offsets", dim=1, schema=offset_schema(1)) as w:
            w.write(offset_table(**one, offset=np.ones((1, 1), np.float32), ids=np.array([0])))
            w.commit(source="test", meta={"words_index": "w"})
    before = OffsetIndex.open("o1", home=tmp_path).store.manifest["version_id"]
    table = offset_table(**one, offset=np.ones((1, 1), np.float32))
    ragged = table.set_column(table.column_names.index("offset"), "offset",
                              pa.array([[1.0, 2.0]], pa.list_(pa.float32())))
    with pytest.raises(LexprobeError, match="offsets to append have dimension -1, index 'o1' has 1"):
        append_offsets(tmp_path, "o1", ragged)
    assert OffsetIndex.open("o1", home=tmp_path).store.manifest["version_id"] == before
