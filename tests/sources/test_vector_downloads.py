"""Vector files as people download them: gzip/bz2/xz read transparently, fastText .bin
models read as gensim reads them, gensim .kv files through gensim (a clear message without it), and `index export` writing a words
index back as word2vec text or binary that lexprobe and gensim read to the same vectors."""

from __future__ import annotations

import gzip
import sys

import numpy as np
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.sources.vectors import detect_format, read_vectors, write_word2vec


def read_whole(path, **kw):
    """(source, words, matrix) of a vector file read to its end through every chunk."""
    source, chunks = read_vectors(str(path), **kw)
    words, mats = [], []
    for w, m, _ in chunks:
        words += w
        mats.append(m)
    return source, words, np.concatenate(mats)


@pytest.fixture(scope="module")
def glove_2k():
    """The 2,000 most frequent packaged GloVe words and their vectors."""
    _, words, matrix = read_whole("glove-6b-50d", limit=2000)
    return words, matrix


@pytest.mark.parametrize("name, binary, fmt", [
    ("v.txt.gz", False, "w2v-text"), ("v.vec.bz2", False, "w2v-text"), ("v.txt.xz", False, "w2v-text"),
    ("v.bin.gz", True, "w2v-bin"), ("v.bin.bz2", True, "w2v-bin"), ("v.bin", True, "w2v-bin"),
    ("v.txt", False, "w2v-text")])
def test_compressed_and_plain_files_read_back_exactly(tmp_path, glove_2k, name, binary, fmt):
    words, matrix = glove_2k
    write_word2vec(tmp_path / name, words, matrix, binary=binary)
    assert detect_format(tmp_path / name) == fmt
    source, got_words, got = read_whole(tmp_path / name)
    assert got_words == words and np.array_equal(got, matrix) and source.format == fmt


def test_compressed_glove_text_and_damaged_archive(tmp_path, glove_2k):
    words, matrix = glove_2k
    lines = "".join(w + " " + " ".join(f"{v:.5f}" for v in row) + "\n" for w, row in zip(words[:50], matrix[:50]))
    (tmp_path / "glove.txt.gz").write_bytes(gzip.compress(lines.encode()))
    source, got_words, got = read_whole(tmp_path / "glove.txt.gz")
    assert source.format == "glove" and got_words == words[:50] and np.allclose(got, matrix[:50], atol=1e-5)
    cut = gzip.compress(lines.encode())[:-200]
    (tmp_path / "cut.txt.gz").write_bytes(cut)
    with pytest.raises(LexprobeError, match=r"cut.txt.gz: .*(truncated|damaged)"):
        read_whole(tmp_path / "cut.txt.gz")


def test_fasttext_bin_and_gensim_kv_through_gensim(tmp_path, glove_2k):
    from gensim.models import FastText, KeyedVectors
    from gensim.models.fasttext import save_facebook_model

    sentences = [["the", "king", "and", "the", "queen"], ["a", "man", "and", "a", "woman"]] * 20
    model = FastText(sentences, vector_size=8, min_count=1, epochs=1, seed=1, workers=1)
    save_facebook_model(model, str(tmp_path / "cc.en.bin"))
    assert detect_format(tmp_path / "cc.en.bin") == "fasttext-bin"
    _, words, got = read_whole(tmp_path / "cc.en.bin")
    assert sorted(words) == sorted(model.wv.index_to_key)
    assert np.allclose(got[words.index("king")], model.wv["king"], atol=1e-6)

    words2k, matrix = glove_2k
    kv = KeyedVectors(matrix.shape[1])
    kv.add_vectors(words2k, matrix)
    kv.save(str(tmp_path / "glove.kv"))
    source, got_words, got = read_whole(tmp_path / "glove.kv")
    assert source.format == "gensim" and got_words == words2k and np.array_equal(got, matrix)


def test_without_gensim_the_message_says_what_to_install(tmp_path, monkeypatch):
    (tmp_path / "m.kv").write_bytes(b"\x80\x04" + b"\0" * 64)
    monkeypatch.setitem(sys.modules, "gensim.models", None)
    with pytest.raises(LexprobeError, match=r"m.kv: reading a gensim KeyedVectors file needs gensim .*lexprobe\[gensim\]"):
        read_whole(tmp_path / "m.kv")


def test_index_export_round_trip(cli, home, tmp_path):
    assert cli("--home", home, "-q", "index", "words", "--vectors", "glove-6b-50d", "--limit", "3000",
               "--name", "g").code == 0
    for name, fmt in (("g.txt.gz", "w2v-text"), ("g.bin", "w2v-bin")):
        r = cli("--home", home, "index", "export", "g", "--out", tmp_path / name, "--format", fmt)
        assert r.code == 0 and "3000 words x 50 dims" in r.out, r
        assert cli("--home", home, "-q", "index", "words", "--vectors", tmp_path / name,
                   "--name", name.replace(".", "-")).code == 0
        a = cli("--home", home, "query", "neighbors", "--index", "g", "king", "--format", "csv")
        b = cli("--home", home, "query", "neighbors", "--index", name.replace(".", "-"), "king", "--format", "csv")
        assert a.out == b.out and "prince" in a.out
    from gensim.models import KeyedVectors

    kv = KeyedVectors.load_word2vec_format(str(tmp_path / "g.bin"), binary=True)
    assert len(kv) == 3000 and kv.most_similar("king", topn=1)[0][0] == "prince"
