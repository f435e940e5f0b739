"""The plain-text corpus reader (``text:PATH``): one sentence a line, compressed or not; bad input is one error
naming the file."""

from __future__ import annotations

import bz2
import gzip
import lzma

import pytest

from lexprobe.core.errors import InputError
from lexprobe.sources.datasets.corpora import provenance, read_corpus
from lexprobe.sources.datasets.plain_text import iter_sentences, read_plain_text

TEXT = "\ufeffThe bank's river (a slope) rose.\n\n  I sat on the bank.  \nDon't go!\n"


def test_sentences_are_split_like_typed_text_and_keep_their_case(tmp_path):
    path = tmp_path / "wiki.txt"
    path.write_text(TEXT, encoding="utf-8")
    got = list(iter_sentences(path))
    assert got == [(1, ["The", "bank", "'s", "river", "(", "a", "slope", ")", "rose", "."]),
                   (3, ["I", "sat", "on", "the", "bank", "."]),
                   (4, ["Do", "n't", "go", "!"])]
    corpus = read_plain_text(path)
    assert corpus.name == "wiki"
    assert corpus.sentences.column("sentence_id").to_pylist() == ["wiki.1", "wiki.3", "wiki.4"]
    assert corpus.targets.num_rows == 0
    assert read_corpus(f"text:{path}").sentences.equals(corpus.sentences)
    assert provenance(f"text:{path}")["corpus"] == f"text:{path.resolve()}"


@pytest.mark.parametrize("opener, suffix", [(gzip.open, ".gz"), (bz2.open, ".bz2"), (lzma.open, ".xz")])
def test_compressed_files_read_as_the_plain_one(tmp_path, opener, suffix):
    plain = tmp_path / "c.txt"
    plain.write_text(TEXT, encoding="utf-8")
    packed = tmp_path / f"c.txt{suffix}"
    with opener(packed, "wb") as f:
        f.write(TEXT.encode())
    assert list(iter_sentences(packed)) == list(iter_sentences(plain))


@pytest.mark.parametrize("content, problem, line", [
    (b"", "no sentences", None),
    (b"\n  \n\t\n", "no sentences", None),
    (b"fine line\nbad \xff\xfe byte\n", "not UTF-8", 2),
    (b"first\n\x00\x01\x02binary\n", "binary data", 2),
])
def test_bad_input_is_one_error_naming_the_file(tmp_path, content, problem, line):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_plain_text(path)
    assert info.value.path == str(path) and problem in info.value.problem and info.value.line == line
    assert "\n" not in str(info.value)


def test_a_truncated_archive_a_folder_and_a_missing_file_are_errors(tmp_path):
    packed = tmp_path / "t.txt.gz"
    packed.write_bytes(gzip.compress(("a sentence of words\n" * 5000).encode())[:200])
    with pytest.raises(InputError, match="truncated"):
        read_plain_text(packed)
    with pytest.raises(InputError, match="not a folder"):
        read_plain_text(tmp_path)
    with pytest.raises(InputError, match="no such file"):
        read_plain_text(tmp_path / "missing.txt")


def test_the_cli_reports_bad_text_in_one_line(tmp_path, cli, home):
    path = tmp_path / "binary.txt"
    path.write_bytes(b"\x00\x01" * 100)
    result = cli("--home", home, "index", "contexts", "--corpus", f"text:{path}", "--name", "c")
    assert result.code == 2
    assert result.err.strip().splitlines() == [f"error: {path}:1: binary data (a NUL byte), not text"]
