"""The store's definitions against independent references: a file's size and CRC32 over every chunk (zlib on the
whole file), the manifest's checksum over every field but its own (JSON with sorted keys, as written), a shard
holding exactly the rows its entry says, the word rule (Unicode's whitespace and control characters by
unicodedata, 4096 UTF-8 bytes) and the index-name rule (128 characters, a letter or digit first)."""

from __future__ import annotations

import json
import unicodedata
import zlib

import numpy as np
import pyarrow as pa
import pytest

from lexprobe.core.errors import CorruptIndexError, LexprobeError
from lexprobe.core.store import (MAX_WORD_BYTES, Store, StoreWriter, check_name, file_crc32, vector_array,
                                 vector_type, word_problem, write_lock)


def _six_rows_in_two_shards(home):
    with write_lock(home, "t"):
        schema = pa.schema([("id", pa.int64()), ("vector", vector_type(2))])
        with StoreWriter(home, "t", kind="test", dim=2, schema=schema, shard_rows=3) as w:
            w.write(pa.table({"id": np.arange(6), "vector": vector_array(np.ones((6, 2), np.float32))}))
            w.commit(source="test")
    path = home / "t" / "manifest.json"
    return path, json.loads(path.read_text())


def _sealed(manifest: dict) -> str:
    """The manifest with its checksum: CRC32 of its JSON with sorted keys, the checksum field left out."""
    body = {k: v for k, v in manifest.items() if k != "checksum"}
    return json.dumps({**body, "checksum": zlib.crc32(json.dumps(body, sort_keys=True).encode())})


def test_the_manifest_checksum_covers_the_shard_list(tmp_path):
    """A shard entry edited without a new checksum is a manifest error (not found later at the shard)."""
    path, manifest = _six_rows_in_two_shards(tmp_path)
    manifest["shards"][0]["crc32"] ^= 1
    path.write_text(json.dumps(manifest))
    with pytest.raises(CorruptIndexError, match="manifest.json: manifest checksum mismatch"):
        Store.open(tmp_path / "t")


def test_a_shard_holds_exactly_the_rows_its_entry_says(tmp_path):
    """Entries of 4 and 2 rows for two shards of 3 (the total still 6, the checksum resealed): the first shard is
    refused for holding fewer rows than its entry says."""
    path, manifest = _six_rows_in_two_shards(tmp_path)
    Store.open(tmp_path / "t")  # the resealed format is the store's own: unchanged, it opens
    path.write_text(_sealed(manifest))
    assert Store.open(tmp_path / "t").count == 6
    manifest["shards"][0]["rows"], manifest["shards"][1]["rows"] = 4, 2
    path.write_text(_sealed(manifest))
    with pytest.raises(CorruptIndexError, match="part-00000.arrow: 3 rows, manifest says 4"):
        Store.open(tmp_path / "t")


def test_file_crc32_runs_over_every_chunk(tmp_path):
    """Nine MiB (three 4 MiB reads, the last one partial): size and CRC32 equal zlib's over the whole content."""
    data = np.random.default_rng(0).integers(0, 256, size=9 * 2 ** 20 + 17, dtype=np.uint8).tobytes()
    path = tmp_path / "blob"
    path.write_bytes(data)
    assert file_crc32(path) == (len(data), zlib.crc32(data))
    (tmp_path / "empty").write_bytes(b"")
    assert file_crc32(tmp_path / "empty") == (0, 0)


def test_a_word_holds_no_whitespace_or_control_character():
    """Every character of Unicode's category Cc (C0, DEL and C1) or whitespace is refused, anywhere in a word;
    other characters (letters of any script, marks, symbols, format characters) are accepted."""
    for code in range(0x3000 + 1):
        c = chr(code)
        refused = unicodedata.category(c) == "Cc" or c.isspace()
        assert (word_problem(f"a{c}b") is not None) == refused, hex(code)
    assert word_problem("") == "empty" and word_problem(3) is not None


def test_a_word_is_at_most_4096_utf8_bytes():
    assert MAX_WORD_BYTES == 4096
    assert word_problem("a" * 4096) is None and word_problem("a" * 4097) is not None
    assert word_problem("é" * 2048) is None and word_problem("é" * 2049) is not None  # 2 bytes each
    assert word_problem("😀" * 1024) is None and word_problem("😀" * 1025) is not None  # 4 bytes each: 1025 chars


def test_an_index_name_is_128_characters_starting_with_a_letter_or_digit():
    for good in ("a", "0", "a" * 128, "glove.6B-50d_v2", "A.b-c_d"):
        assert check_name(good) == good
    for bad in ("a" * 129, ".hidden", "_x", "-x", "..", "a/b", "a b", "é", ""):
        with pytest.raises(LexprobeError, match="bad index name"):
            check_name(bad)
