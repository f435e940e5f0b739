"""Vector readers under hostile files (;): no pickle is loaded because
of its first bytes, reading is bounded (decompressed size, line length, header counts against the file's size),
gzip, bzip2 and xz refuse truncated and trailing data alike, only regular files are opened, running out of memory
is one line naming the file; fastText ``.bin`` models in both layouts read as gensim reads them, with the vectors
of unseen words from their character n-grams; a file that fits no format names the formats tried."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import pickle
import threading
from pathlib import Path

import numpy as np
import pytest

from lexprobe.core.errors import InputError, LexprobeError
from lexprobe.sources.vectors import detect_format
from test_vector_downloads import read_whole

GENSIM_DATA = Path(__import__("gensim").__file__).parent / "test" / "test_data"
COMPRESSORS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


def _one_line(r, name: str) -> str:
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and name in lines[0], r
    return lines[0]


class _Touch:
    """Unpickling this creates a file: the proof that a pickle ran."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


# ----------------------------------------------------------------------------------------- pickles (item 1)


@pytest.mark.parametrize("name", ["vectors.txt", "wiki.vec", "model.bin", "vectors", "v.npy.txt"])
def test_a_pickle_is_never_loaded_because_of_its_first_bytes(cli, tmp_path, name):
    ran = tmp_path / "pickle-ran"
    (tmp_path / name).write_bytes(pickle.dumps(_Touch(ran), protocol=4))
    line = _one_line(cli("--home", tmp_path / "home", "index", "words", "--vectors", tmp_path / name,
                         "--name", "p"), name)
    assert not ran.exists()
    assert "pickle" in line and "--format gensim" in line


# ------------------------------------------------------------------------------ compressed streams (item 4)


def _text(n: int = 40, dim: int = 5) -> bytes:
    rng = np.random.default_rng(0)
    return "".join(f"w{i} " + " ".join(f"{v:.4f}" for v in rng.standard_normal(dim)) + "\n"
                   for i in range(n)).encode()


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_truncated_streams_are_one_line_for_every_compressor(cli, tmp_path, suffix):
    data = COMPRESSORS[suffix](_text(400))
    path = tmp_path / f"cut.txt{suffix}"
    path.write_bytes(data[: len(data) * 2 // 3])
    line = _one_line(cli("--home", tmp_path / "home", "index", "words", "--vectors", path, "--name", "c"), path.name)
    assert "truncated" in line or "damaged" in line


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
@pytest.mark.parametrize("trailer", [b"garbage after the stream\n", b"\0" * 8])
def test_trailing_data_after_a_stream_is_refused_alike(tmp_path, suffix, trailer):
    path = tmp_path / f"tail.txt{suffix}"
    path.write_bytes(COMPRESSORS[suffix](_text()) + trailer)
    with pytest.raises(InputError, match=r"tail.txt.*after the end of the .* stream"):
        read_whole(path)


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_concatenated_streams_are_one_file(tmp_path, suffix):
    whole = _text(40)
    cut = whole.index(b"w20 ")
    path = tmp_path / f"two.txt{suffix}"
    path.write_bytes(COMPRESSORS[suffix](whole[:cut]) + COMPRESSORS[suffix](whole[cut:]))
    _, words, _ = read_whole(path)
    assert words == [f"w{i}" for i in range(40)]


@pytest.mark.parametrize("name", ["bomb.txt.gz", "bomb.bin.gz"])
def test_decompressed_size_is_capped(tmp_path, monkeypatch, name):
    """A small file that inflates past the cap stops there; the variable raises the cap."""
    if name.endswith(".bin.gz"):
        from lexprobe.sources.vectors import write_word2vec

        rng = np.random.default_rng(1)
        write_word2vec(tmp_path / name, [f"w{i}" for i in range(3000)], rng.standard_normal((3000, 20)), binary=True)
    else:
        (tmp_path / name).write_bytes(gzip.compress(_text(3000, 20)))
    monkeypatch.setenv("LEXPROBE_MAX_DECOMPRESSED", "100000")
    with pytest.raises(InputError, match=rf"{name}.*more than 100000 bytes.*LEXPROBE_MAX_DECOMPRESSED"):
        read_whole(tmp_path / name)
    monkeypatch.setenv("LEXPROBE_MAX_DECOMPRESSED", str(10 << 20))
    assert len(read_whole(tmp_path / name)[1]) == 3000


def test_line_length_is_capped(cli, tmp_path, monkeypatch):
    line = ("long " + " ".join(["0.5"] * 400) + "\n").encode()
    (tmp_path / "long.txt").write_bytes(b"a 1.0 " + b" ".join([b"2.0"] * 399) + b"\n" + line)
    assert len(read_whole(tmp_path / "long.txt")[1]) == 2
    monkeypatch.setenv("LEXPROBE_MAX_LINE", "1000")
    message = _one_line(cli("--home", tmp_path / "home", "index", "words", "--vectors", tmp_path / "long.txt",
                            "--name", "l"), "long.txt")
    assert "longer than 1000 bytes" in message and "LEXPROBE_MAX_LINE" in message
    monkeypatch.setenv("LEXPROBE_MAX_LINE", "a lot")
    assert "LEXPROBE_MAX_LINE" in _one_line(cli("--home", tmp_path / "home", "index", "words", "--vectors",
                                                tmp_path / "long.txt", "--name", "l"), "LEXPROBE_MAX_LINE")


@pytest.mark.parametrize("name,content", [
    ("count.vec", b"1000000000000 3\na 1 2 3\n"),
    ("dim.vec", b"1 100000000\na 1 2 3\n"),
    ("count.bin", b"1000000000000 3\na " + np.ones(3, "<f4").tobytes() + b"\n"),
    ("dim.bin.gz", gzip.compress(b"1 1000000000\na " + np.ones(3, "<f4").tobytes() + b"\n")),
])
def test_header_counts_are_checked_against_the_file_before_reading(tmp_path, name, content):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(InputError, match=rf"{name}.*(header declares|dimension).*(bytes|line limit)"):
        read_whole(tmp_path / name)


def test_a_text_dimension_whose_shortest_line_just_fits_the_line_limit_is_read(tmp_path, monkeypatch):
    """Pins the header's dimension check at the line limit: a word and dim values take 2 * dim + 1 bytes at the
    least, so dimension 3 fits a 7-byte limit ('w 1 2 3', the last line, no newline) and not a 6-byte one."""
    (tmp_path / "edge.txt").write_bytes(b"1 3\nw 1 2 3")
    monkeypatch.setenv("LEXPROBE_MAX_LINE", "7")
    _, words, matrix = read_whole(tmp_path / "edge.txt")
    assert words == ["w"] and matrix.tolist() == [[1.0, 2.0, 3.0]]
    monkeypatch.setenv("LEXPROBE_MAX_LINE", "6")
    with pytest.raises(InputError, match=r"edge.txt.*header declares dimension 3.*6-byte line limit"):
        read_whole(tmp_path / "edge.txt")


def test_a_compressed_binary_header_past_the_decompressed_limit_names_the_variable(tmp_path, monkeypatch):
    """Pins the word2vec binary header check for compressed files: what the header declares is compared with
    the decompressed-size limit, and the message names the variable that raises it."""
    (tmp_path / "h.bin.gz").write_bytes(gzip.compress(b"5000 20\na " + np.ones(20, "<f4").tobytes() + b"\n"))
    monkeypatch.setenv("LEXPROBE_MAX_DECOMPRESSED", "100000")
    with pytest.raises(InputError, match=r"410000 bytes at the least, more than the 100000-byte limit on what a "
                       r"compressed file may hold \(LEXPROBE_MAX_DECOMPRESSED raises it\)"):
        read_whole(tmp_path / "h.bin.gz")


def test_absurd_fasttext_header_is_one_line_before_any_allocation(tmp_path):
    """gensim would try to allocate (or read for ever) what such a header declares."""
    import struct

    head = (793712314).to_bytes(4, "little") + struct.pack("<13i", 12, 300, 5, 5, 5, 5, 1, 2, 2, 2_000_000, 3, 6,
                                                                    100)
    head += struct.pack("<d", 1e-4) + struct.pack("<3iqq", 2, 2, 0, 10, -1)
    words = b"a\0" + struct.pack("<qb", 1, 0) + b"b\0" + struct.pack("<qb", 1, 0)
    (tmp_path / "absurd.bin").write_bytes(head + words + b"\0" + struct.pack("<2q", 2_000_002, 300) + b"\0" * 64)
    with pytest.raises(InputError, match=r"absurd.bin: input matrix of 2000002 x 300 .* bytes"):
        read_whole(tmp_path / "absurd.bin")
    (tmp_path / "many.bin").write_bytes(head.replace(struct.pack("<3i", 2, 2, 0), struct.pack("<3i", 2**31 - 1,
                                                                                            2**31 - 1, 0)) + words)
    with pytest.raises(InputError, match=r"many.bin: header declares 2147483647 words"):
        read_whole(tmp_path / "many.bin")


# ---------------------------------------------------------------------------------- non-regular files (item 4)


def _unblock(fifo: Path, done: threading.Event) -> None:
    """If a reader is stuck opening ``fifo``, open its other end so that the test ends (and fails)."""
    if not done.wait(20):
        with open(fifo, "wb"):
            pass


@pytest.mark.parametrize("role", ["vectors", "vocab"])
def test_a_fifo_is_refused_not_waited_on(cli, tmp_path, role):
    fifo = tmp_path / ("v.txt" if role == "vectors" else "words.txt")
    os.mkfifo(fifo)
    np.save(tmp_path / "m.npy", np.ones((2, 3), np.float32))
    args = ["--vectors", fifo] if role == "vectors" else ["--vectors", tmp_path / "m.npy", "--vocab", fifo]
    done = threading.Event()
    threading.Thread(target=_unblock, args=(fifo, done), daemon=True).start()
    try:
        line = _one_line(cli("--home", tmp_path / "home", "index", "words", *args, "--name", "f"), fifo.name)
    finally:
        done.set()
    assert "not a regular file" in line and "FIFO" in line


def test_a_device_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"/dev/zero: a character device, not a regular file"):
        read_whole("/dev/zero")


# ------------------------------------------------------------------------------ memory and disk (item 4)


def test_running_out_of_memory_is_one_line_naming_the_file(cli, tmp_path, monkeypatch):
    import lexprobe.sources.vectors.text_vectors as vf

    (tmp_path / "v.txt").write_bytes(_text())

    def no_memory(*a, **k):
        raise MemoryError

    monkeypatch.setattr(vf, "_parse_rows", no_memory)
    line = _one_line(cli("--home", tmp_path / "home", "index", "words", "--vectors", tmp_path / "v.txt",
                         "--name", "m"), "v.txt")
    assert "out of memory" in line


# ---------------------------------------------------------------------------- fastText .bin


@pytest.mark.parametrize("name,layout", [("lee_fasttext.bin", "old"), ("non_ascii_fasttext.bin", "old"),
                                         ("lee_fasttext_new.bin", "new"), ("crime-and-punishment.bin", "new")])
def test_fasttext_bin_in_both_layouts_reads_as_gensim_reads_it(tmp_path, name, layout):
    from gensim.models.fasttext import load_facebook_vectors

    from lexprobe.sources.vectors import read_fasttext_bin

    path = GENSIM_DATA / name
    assert detect_format(path) == "fasttext-bin"
    kv = load_facebook_vectors(str(path))
    source, words, matrix = read_whole(path)
    assert source.format == "fasttext-bin" and source.meta()["fasttext"]["layout"] == layout
    assert words == kv.index_to_key and np.array_equal(matrix, kv.vectors)
    model = read_fasttext_bin(path)
    unseen = ["landlord", "qwertyuiop", "kingdoms", "останавливаюсь", "Ωmega", "x", "naïveté", "日本語"]
    for word in unseen + words[:3]:
        assert word in words or word not in kv.key_to_index
        np.testing.assert_array_equal(model.vector(word), kv[word], err_msg=word)


def test_fasttext_ngram_hashes_equal_gensims(tmp_path):
    from gensim.models.fasttext import ft_ngram_hashes

    from lexprobe.sources.vectors import ngram_buckets

    words = ["a", "ab", "<>", "the", "naïve", "日本語の単語", "x" * 40, "e\u0301", "\U0001F600ok", "tab\tand space"]
    for minn, maxn, bucket in ((3, 6, 2_000_000), (1, 1, 7), (2, 4, 10_000), (0, 0, 5), (5, 5, 3)):
        buckets, offsets = ngram_buckets(words, minn, maxn, bucket)
        for i, word in enumerate(words):
            assert buckets[offsets[i]:offsets[i + 1]].tolist() == ft_ngram_hashes(word, minn, maxn, bucket), word


def test_a_words_index_from_an_old_fasttext_bin_answers_as_gensim(cli, tmp_path):
    from gensim.models.fasttext import load_facebook_vectors

    path = GENSIM_DATA / "lee_fasttext.bin"
    home = tmp_path / "home"
    assert cli("--home", home, "-q", "index", "words", "--vectors", path, "--name", "lee").code == 0
    r = cli("--home", home, "query", "neighbors", "--index", "lee", "night", "-k", "5", "--format", "json")
    assert r.code == 0, r
    ours = [row["word"] for row in json.loads(r.out)]
    assert ours == [w for w, _ in load_facebook_vectors(str(path)).most_similar("night", topn=5)]


def test_a_fasttext_model_of_one_word_reads_as_gensim_reads_it(tmp_path):
    """Pins the header's range check at its low edge: a model of exactly one word is a model (a tiny one trained
    by gensim and saved in Facebook's format)."""
    from gensim.models.fasttext import FastText, load_facebook_vectors, save_facebook_model

    model = FastText(sentences=[["solo"] * 5], min_count=1, vector_size=4, bucket=50, epochs=1, workers=1, seed=0)
    save_facebook_model(model, str(tmp_path / "solo.bin"))
    _, words, matrix = read_whole(tmp_path / "solo.bin")
    assert words == ["solo"] and np.array_equal(matrix, load_facebook_vectors(str(tmp_path / "solo.bin")).vectors)


def test_a_fasttext_header_with_one_field_out_of_range_is_damaged(tmp_path):
    """Pins that every header field must be in range (a conjunction): a new-layout model whose dimension alone
    is 0 is refused as damaged, whatever the other fields say."""
    data = bytearray((GENSIM_DATA / "lee_fasttext_new.bin").read_bytes())
    data[8:12] = (0).to_bytes(4, "little")  # the first argument after the magic number and version: dim
    (tmp_path / "dim0.bin").write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"dim0.bin: a fastText .bin model \(its magic number\) whose header "
                       r"fields are out of range \(damaged\)"):
        read_whole(tmp_path / "dim0.bin")


def test_quantised_and_truncated_fasttext_models_are_one_line(tmp_path):
    data = (GENSIM_DATA / "lee_fasttext_new.bin").read_bytes()
    (tmp_path / "cut.bin").write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut.bin: input matrix .* \(truncated\)"):
        read_whole(tmp_path / "cut.bin")


# -------------------------------------------------------------------------- unrecognised files


@pytest.mark.parametrize("name,content,tried", [
    ("random.bin", bytes(range(256)) * 4, ["fastText .bin", "word2vec binary"]),
    ("prose.txt", b"hello there, this is not a vector file\n", ["fastText .bin", "word2vec text", "GloVe text"]),
    ("letter.vec", "Dear reader,\nthanks\n".encode(), ["word2vec text", "GloVe text"]),
])
def test_an_unrecognised_file_names_the_formats_tried_and_the_option(cli, tmp_path, name, content, tried):
    (tmp_path / name).write_bytes(content)
    line = _one_line(cli("--home", tmp_path / "home", "index", "words", "--vectors", tmp_path / name, "--name", "u"),
                     name)
    assert "tried" in line and all(t in line for t in tried) and "--format" in line
    assert "fasttext-bin" in line  # the values --format takes


def test_a_forced_format_says_what_is_wrong_without_the_guessing(tmp_path):
    (tmp_path / "v.bin").write_bytes(b"hello there\n")
    with pytest.raises(LexprobeError) as info:
        read_whole(tmp_path / "v.bin", fmt="w2v-bin")
    assert "tried" not in str(info.value) and "count dimension" in str(info.value)
