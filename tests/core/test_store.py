"""The Arrow shard store: layout, zero-copy reads, shard sizes, appends, manifest, atomic replacement, lock."""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from lexprobe.core.errors import CorruptIndexError, LexprobeError, LockedError
from lexprobe.core.store import (Store, StoreWriter, open_index, vector_array, vector_type, write_lock)


def _schema(dim):
    return pa.schema([("id", pa.int64()), ("vector", vector_type(dim))])


def _write(home, name, matrix, shard_rows=4, base=None, **commit):
    with write_lock(home, name):
        with StoreWriter(home, name, kind="test", dim=matrix.shape[1], schema=_schema(matrix.shape[1]),
                         shard_rows=shard_rows, base=base) as w:
            start = base.count if base else 0
            w.write(pa.table({"id": np.arange(start, start + len(matrix)), "vector": vector_array(matrix)}))
            w.commit(source="test", **commit)


def test_roundtrip_shards_and_manifest(home):
    m = np.arange(30, dtype=np.float32).reshape(10, 3)
    _write(home, "t", m, shard_rows=4)
    store = open_index(home, "t")
    assert [s["rows"] for s in store.manifest["shards"]] == [4, 4, 2]
    assert sorted(p.name for p in (home / "t" / "shards").iterdir()) == [
        "part-00000.arrow", "part-00001.arrow", "part-00002.arrow"]
    man = store.manifest
    for key in ("schema_version", "source", "dim", "count", "normalization", "shards", "checksum"):
        assert key in man
    assert man["count"] == 10 and man["dim"] == 3
    assert all({"rows", "bytes", "crc32"} <= set(s) for s in man["shards"])
    np.testing.assert_array_equal(store.matrix(), m)


def test_single_shard_vectors_are_memory_mapped_without_copy(home):
    m = np.random.default_rng(0).standard_normal((50, 8)).astype(np.float32)
    _write(home, "t", m, shard_rows=100)
    store = open_index(home, "t")
    mat = store.matrix()
    np.testing.assert_array_equal(mat, m)
    assert not mat.flags.owndata  # a view over the Arrow buffer, which is the memory map
    buf = store.tables[0].column("vector").chunks[0].values.buffers()[1]
    assert mat.ctypes.data == buf.address


def test_append_adds_a_shard_and_keeps_old_ones(home):
    m = np.ones((5, 2), np.float32)
    _write(home, "t", m, shard_rows=10)
    first = open_index(home, "t")
    old_file = (home / "t" / "shards" / "part-00000.arrow").read_bytes()
    _write(home, "t", 2 * np.ones((3, 2), np.float32), shard_rows=10, base=first)
    store = open_index(home, "t")
    assert [s["rows"] for s in store.manifest["shards"]] == [5, 3]
    assert (home / "t" / "shards" / "part-00000.arrow").read_bytes() == old_file
    assert store.count == 8 and store.matrix()[-1].tolist() == [2.0, 2.0]


def test_uncommitted_writer_leaves_old_version(home):
    _write(home, "t", np.zeros((3, 2), np.float32))
    with write_lock(home, "t"):
        with StoreWriter(home, "t", kind="test", dim=2, schema=_schema(2)) as w:
            w.write(pa.table({"id": np.arange(7), "vector": vector_array(np.ones((7, 2), np.float32))}))
            # no commit: leaving the block aborts
    store = open_index(home, "t")
    assert store.count == 3
    assert not list(home.glob(".t.tmp-*"))


def test_manifest_edit_is_detected(home):
    _write(home, "t", np.zeros((3, 2), np.float32))
    path = home / "t" / "manifest.json"
    man = json.loads(path.read_text())
    man["source"] = "tampered"
    path.write_text(json.dumps(man))
    with pytest.raises(CorruptIndexError, match="manifest.json"):
        Store.open(home / "t")


def test_flipped_shard_byte_is_detected_with_file_named(home):
    _write(home, "t", np.zeros((6, 2), np.float32), shard_rows=3)
    shard = home / "t" / "shards" / "part-00001.arrow"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(CorruptIndexError, match="part-00001.arrow"):
        Store.open(home / "t")


def test_second_writer_fails_clearly(home):
    with write_lock(home, "t"):
        with pytest.raises(LockedError, match="being written"):
            with write_lock(home, "t", wait=0):
                pass


def test_unknown_index_and_bad_name(home):
    with pytest.raises(LexprobeError, match="no index named"):
        open_index(home, "missing")
    with pytest.raises(LexprobeError, match="bad index name"):
        open_index(home, "../escape")


def _edit_manifest(home, name, edit):
    """Apply ``edit`` to the manifest and recompute its checksum (which anyone can): only the structure check
    stands between the edit and a reader."""
    from lexprobe.core.store import _manifest_checksum

    path = home / name / "manifest.json"
    man = json.loads(path.read_text())
    edit(man)
    man["checksum"] = _manifest_checksum(man)
    path.write_text(json.dumps(man))


def test_tombstones_must_be_row_ids_below_the_count(home):
    """Pins the tombstone check: rows 0 and count - 1 are rows, -1 and the count are not, and no row is listed
    twice."""
    _write(home, "t", np.zeros((6, 2), np.float32), shard_rows=3)
    _edit_manifest(home, "t", lambda m: m.update(tombstones=[0, 5]))
    assert Store.open(home / "t").tombstones.tolist() == [0, 5]
    for bad in ([6], [-1], [2, 2]):  # past the last row; before the first; a row twice
        _edit_manifest(home, "t", lambda m: m.update(tombstones=bad))
        with pytest.raises(CorruptIndexError, match="manifest.json.*tombstones are not distinct row ids"):
            Store.open(home / "t")


@pytest.mark.parametrize("crc", [-1, 2**32])
def test_a_shard_crc_outside_32_bits_is_a_manifest_error(home, crc):
    """Pins the crc32 range [0, 2**32 - 1] of the structure check: a CRC outside it is reported as the
    manifest's fault (naming manifest.json), not as a damaged shard found later by the checksum comparison."""
    _write(home, "t", np.zeros((6, 2), np.float32), shard_rows=3)
    _edit_manifest(home, "t", lambda m: m["shards"][1].update(crc32=crc))
    with pytest.raises(CorruptIndexError, match="manifest.json: shard part-00001.arrow: rows, bytes or crc32"):
        Store.open(home / "t")


def test_an_index_left_only_set_aside_is_put_back(home):
    """Pins recover_aside/recover_on_open: where a swap was two renames and a crash fell between them, the index
    exists only as ``.NAME.old-HEX``; opening it (or listing the home) renames it back, unchanged."""
    from lexprobe.core.store import list_indexes

    m = np.arange(12, dtype=np.float32).reshape(6, 2)
    _write(home, "t", m, shard_rows=4)
    (home / "t").rename(home / ".t.old-0123abcd")
    np.testing.assert_array_equal(open_index(home, "t").matrix(), m)
    assert not list(home.glob(".t.old-*"))
    (home / "t").rename(home / ".t.old-89abcdef")
    assert [p.name for p in list_indexes(home)] == ["t"]
    np.testing.assert_array_equal(open_index(home, "t").matrix(), m)


@pytest.mark.parametrize("meta, key", [
    ({"model": "", "layers": [8], "pooling": "mean"}, "model"),
    ({"model": 7, "layers": [8], "pooling": "mean"}, "model"),
    ({"model": "bert-base-uncased", "layers": [], "pooling": "mean"}, "layers"),
    ({"model": "bert-base-uncased", "layers": [True], "pooling": "mean"}, "layers"),
    ({"model": "bert-base-uncased", "layers": [8], "pooling": ""}, "pooling"),
])
def test_a_token_index_manifest_needs_each_setting_its_reader_takes(home, meta, key):
    """Pins KIND_META for tokens: each of model, layers, pooling must be present and non-empty of its type
    (an empty model name or a bool layer is refused), checked before the kind's side files."""
    _write(home, "t", np.zeros((3, 2), np.float32))
    _edit_manifest(home, "t", lambda m: m.update(kind="tokens", meta=meta))
    with pytest.raises(CorruptIndexError, match=f"manifest.json: meta '{key}' is missing or not"):
        Store.open(home / "t")


def test_replacing_an_index_in_a_relative_home(home, monkeypatch):
    """Pins the rename-exchange's directory argument (AT_FDCWD): a home given as a relative path is swapped
    relative to the current folder, like every other file operation."""
    monkeypatch.chdir(home)
    rel = Path("rel")
    _write(rel, "t", np.zeros((3, 2), np.float32))
    _write(rel, "t", np.ones((4, 2), np.float32))
    store = open_index(rel, "t")
    assert store.count == 4 and store.matrix().tolist() == [[1.0, 1.0]] * 4
    assert sorted(p.name for p in rel.iterdir() if not p.name.endswith(".lock")) == ["t"]


def test_a_side_file_crc_outside_32_bits_is_a_manifest_error(home):
    """Pins the side files' crc32 range check at 2**32 (the first value no CRC32 takes): reported as the
    manifest's fault, naming manifest.json, before any checksum comparison."""
    with write_lock(home, "t"):
        with StoreWriter(home, "t", kind="test", dim=2, schema=_schema(2)) as w:
            w.write(pa.table({"id": np.arange(3), "vector": vector_array(np.zeros((3, 2), np.float32))}))
            with open(w.side_file("extra", "extra.bin"), "wb") as f:
                f.write(b"side")
            w.commit(source="test")
    assert Store.open(home / "t").count == 3
    _edit_manifest(home, "t", lambda m: m["files"]["extra"].update(crc32=2**32))
    with pytest.raises(CorruptIndexError, match="manifest.json: side file extra.bin: bytes or crc32"):
        Store.open(home / "t")


def test_shard_size_must_be_a_positive_row_count(home):
    """Pins the shard size check at its edge: 0 rows is refused with one clear message, 1 row cuts a shard per
    row."""
    with write_lock(home, "t"):
        with pytest.raises(LexprobeError, match="shard size must be at least 1 row, not 0"):
            StoreWriter(home, "t", kind="test", dim=2, schema=_schema(2), shard_rows=0)
    _write(home, "t", np.zeros((3, 2), np.float32), shard_rows=1)
    assert [s["rows"] for s in open_index(home, "t").manifest["shards"]] == [1, 1, 1]


def test_a_crashed_writers_temporary_folder_is_removed_by_the_next_writer(home):
    """Pins the temporary folder's name (``.NAME.tmp-PID-HEX8``): the next writer recognises a crashed one's
    folder by exactly that pattern and removes it."""
    with write_lock(home, "t"):
        crashed = StoreWriter(home, "t", kind="test", dim=2, schema=_schema(2))  # never committed nor aborted
    assert crashed.tmp.is_dir()
    _write(home, "t", np.zeros((3, 2), np.float32))
    assert not crashed.tmp.exists() and not list(home.glob(".t.tmp-*"))


def test_default_home_is_a_checkouts_indexes_folder_only_with_its_readme(tmp_path, monkeypatch):
    """Pins default_home's checkout rule: without $LEXPROBE_HOME, a lexprobe checkout (pyproject naming
    lexprobe) above the working folder gives its indexes/ folder only when indexes/README.md is there;
    otherwise the per-user folder under $XDG_DATA_HOME."""
    from lexprobe.core.store import default_home

    checkout = tmp_path / "checkout"
    (checkout / "sub").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text('[project]\nname = "lexprobe"\n')
    monkeypatch.delenv("LEXPROBE_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(checkout / "sub")
    assert default_home() == (tmp_path / "xdg" / "lexprobe" / "indexes").resolve()
    (checkout / "indexes").mkdir()
    (checkout / "indexes" / "README.md").write_text("indexes\n")
    assert default_home() == (checkout / "indexes").resolve()


def test_an_append_of_no_rows_adds_no_shard(home):
    """Pins the writer's pending-row count starting at zero: committing a new version with no new rows keeps
    the shard list as it was (no empty shard)."""
    _write(home, "t", np.ones((5, 2), np.float32), shard_rows=4)
    _write(home, "t", np.ones((0, 2), np.float32), shard_rows=4, base=open_index(home, "t"))
    store = open_index(home, "t")
    assert [s["rows"] for s in store.manifest["shards"]] == [4, 1] and store.count == 5


def test_a_writer_still_locked_out_after_its_wait_gets_a_clear_error(home):
    """Pins the lock's wait loop: a writer that finds the lock held retries until its wait is over, then fails
    with LockedError; it never goes ahead without the lock."""
    with write_lock(home, "t"):
        with pytest.raises(LockedError, match="being written by another process"):
            with write_lock(home, "t", wait=0.3):
                pass


def _with_side_file(home, content: bytes, rows: int) -> None:
    with write_lock(home, "t"):
        with StoreWriter(home, "t", kind="test", dim=2, schema=_schema(2)) as w:
            w.write(pa.table({"id": np.arange(rows), "vector": vector_array(np.zeros((rows, 2), np.float32))}))
            with open(w.side_file("extra", "extra.bin"), "wb") as f:
                f.write(content)
            w.commit(source="test")


def _open_fds() -> int:
    import os

    return len(os.listdir("/proc/self/fd"))


def test_an_open_store_keeps_its_own_versions_side_file_and_frees_it_when_dropped(home):
    """Pins the open store's hold on its version (Linux /proc): after the index is replaced and the old version
    deleted, a store opened before still reads its own side file through file_path; dropping the store closes
    every descriptor it held."""
    import gc

    _with_side_file(home, b"version 1", 3)
    before = _open_fds()
    old = Store.open(home / "t")
    _with_side_file(home, b"version 2", 4)
    assert not list(home.glob(".t.old-*")) and Store.open(home / "t").count == 4
    with open(old.file_path("extra"), "rb") as f:
        assert f.read() == b"version 1"
    del old
    gc.collect()
    assert _open_fds() == before


def test_replacing_an_index_never_moves_the_live_folder_aside_where_the_system_can_exchange(home, monkeypatch):
    """Pins the atomic swap: where renameat2(RENAME_EXCHANGE) works (probed here with ctypes, independently of
    the store), a replace exchanges the two folders in one step and never renames the live folder away (a
    reader could find no index in between); elsewhere it takes the two-rename path. Same index either way."""
    import ctypes
    import ctypes.util
    import os

    from lexprobe.core import store as store_module

    a, b = home / "probe-a", home / "probe-b"
    a.mkdir()
    b.mkdir()
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    can_exchange = fn is not None and fn(-100, os.fsencode(a), -100, os.fsencode(b), 2) == 0
    _write(home, "t", np.zeros((3, 2), np.float32))
    renamed = []
    real_rename = os.rename
    monkeypatch.setattr(store_module.os, "rename", lambda src, dst: (renamed.append(Path(src)), real_rename(src, dst)))
    _write(home, "t", np.ones((4, 2), np.float32))
    assert (home / "t" in renamed) == (not can_exchange)
    assert open_index(home, "t").count == 4 and not list(home.glob(".t.old-*"))


def test_a_removal_interrupted_after_its_rename_is_cleaned_by_the_next_writer(home, monkeypatch):
    """Pins remove_index's trash folder name (``.NAME.tmp-rm-HEX8``): if the process dies before deleting it,
    the next writer of the name recognises and removes it."""
    from lexprobe.core import store as store_module

    _write(home, "t", np.zeros((3, 2), np.float32))
    monkeypatch.setattr(store_module.shutil, "rmtree", lambda *a, **k: None)  # dies before the delete
    store_module.remove_index(home, "t")
    left = list(home.glob(".t.tmp-rm-*"))
    assert len(left) == 1 and not (home / "t").exists()
    monkeypatch.undo()
    _write(home, "t", np.ones((2, 2), np.float32))
    assert not list(home.glob(".t.tmp-*")) and open_index(home, "t").count == 2


def test_a_folder_without_manifest_is_damaged_only_if_it_holds_shards(home):
    """Pins Store.open's two missing-manifest cases: shards without a manifest are a damaged index
    (CorruptIndexError naming manifest.json); a folder with neither is simply no index (LexprobeError)."""
    _write(home, "t", np.zeros((3, 2), np.float32))
    (home / "t" / "manifest.json").unlink()
    with pytest.raises(CorruptIndexError, match="manifest.json: missing, the index folder is damaged"):
        Store.open(home / "t")
    (home / "empty").mkdir()
    with pytest.raises(LexprobeError, match="no such index") as caught:
        Store.open(home / "empty")
    assert not isinstance(caught.value, CorruptIndexError)
