"""The store's definitions against independent references: a file's size and CRC32 over every chunk (zlib on the
whole file), the word rule (Unicode's whitespace and control characters by unicodedata, 4096 UTF-8 bytes) and the
index-name rule (128 characters, a letter or digit first)."""

from __future__ import annotations

import unicodedata
import zlib

import numpy as np
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.core.store import MAX_WORD_BYTES, check_name, file_crc32, word_problem


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
