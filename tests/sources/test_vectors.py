"""Static vector readers: round trips of fixtures written here, the packaged GloVe, hf: input embeddings, and
bad input ending in one clear line with exit code 2."""

import numpy as np
import pytest

from lexprobe.core.errors import InputError
from lexprobe.sources.vectors import read_vectors

WORDS = ["the", "cat", "sat"]
VECS = np.array([[0.5, -1.25, 3.0], [1e-3, 2.5, -0.75], [4.0, 0.0, -2.0]], dtype=np.float32)


def _read_all(spec, **kw):
    source, chunks = read_vectors(str(spec), **kw)
    words, mats, ids = [], [], []
    for w, m, i in chunks:
        words += w
        mats.append(m)
        ids.append(i)
    return source, words, np.concatenate(mats), np.concatenate(ids)


def _write_w2v_bin(path, words, vecs):
    with open(path, "wb") as f:
        f.write(f"{len(words)} {vecs.shape[1]}\n".encode())
        for w, v in zip(words, vecs):
            f.write(w.encode() + b" " + v.astype("<f4").tobytes() + b"\n")


def _text(words, vecs):
    return "".join(w + " " + " ".join(repr(float(x)) for x in v) + "\n" for w, v in zip(words, vecs))


def test_word2vec_binary_three_rows(tmp_path):
    path = tmp_path / "v.bin"
    _write_w2v_bin(path, WORDS, VECS)
    source, words, mat, ids = _read_all(path)
    assert source.format == "w2v-bin" and words == WORDS
    np.testing.assert_array_equal(mat, VECS)
    assert ids.tolist() == [0, 1, 2]


def test_word2vec_binary_written_by_gensim(tmp_path):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(3)
    kv.add_vectors(WORDS, VECS)
    path = tmp_path / "g.bin"
    kv.save_word2vec_format(str(path), binary=True)
    _, words, mat, _ = _read_all(path)
    assert words == WORDS
    np.testing.assert_array_equal(mat, VECS)


@pytest.mark.parametrize("name,header,fmt", [("v.txt", True, "w2v-text"), ("v.vec", True, "w2v-text"),
                                             ("glove.txt", False, "glove")])
def test_text_formats(tmp_path, name, header, fmt):
    path = tmp_path / name
    path.write_text(("3 3\n" if header else "") + _text(WORDS, VECS))
    source, words, mat, _ = _read_all(path)
    assert source.format == fmt and words == WORDS
    np.testing.assert_allclose(mat, VECS)


def test_fasttext_format_name_and_crlf(tmp_path):
    path = tmp_path / "ft.vec"
    path.write_bytes(("3 3\r\n" + _text(WORDS, VECS).replace("\n", "\r\n")).encode())
    _, words, mat, _ = _read_all(path, fmt="fasttext")
    assert words == WORDS
    np.testing.assert_allclose(mat, VECS)


def test_npy_with_vocab(tmp_path):
    np.save(tmp_path / "m.npy", VECS)
    (tmp_path / "m.vocab").write_text("\n".join(WORDS) + "\n")
    _, words, mat, _ = _read_all(tmp_path / "m.npy")
    assert words == WORDS
    np.testing.assert_array_equal(mat, VECS)


def test_lowercase_duplicates_and_limit(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text(_text(["The", "the", "Cat", "dog", "sat"], np.arange(15, dtype=np.float32).reshape(5, 3)))
    source, words, mat, ids = _read_all(path, lowercase=True)
    assert words == ["the", "cat", "dog", "sat"] and source.duplicates == 1
    assert mat[0].tolist() == [0, 1, 2] and ids.tolist() == [0, 2, 3, 4]  # first wins
    source, words, _, _ = _read_all(path, lowercase=True, limit=2)
    assert words == ["the", "cat"]


def test_packaged_glove_alias():
    source, words, mat, _ = _read_all("glove-6b-50d", limit=1000)
    assert len(words) == 1000 and mat.shape == (1000, 50) and words[0] == "the"


def test_hf_input_embeddings_are_whole_word_tokens():
    from lexprobe.sources.models import load_encoder, load_tokenizer

    source, words, mat, ids = _read_all("hf:splade-tiny")
    tok = load_tokenizer("splade-tiny")
    emb = load_encoder("splade-tiny").get_input_embeddings().weight.detach().numpy()
    assert not any(w.startswith("##") or w.startswith("[") and w.endswith("]") for w in words)
    assert "the" in words and len(words) > 20000
    j = words.index("house")
    assert ids[j] == tok.convert_tokens_to_ids("house")
    np.testing.assert_array_equal(mat[j], emb[ids[j]])


@pytest.mark.parametrize("content,problem,line", [
    ("cat 1 2 3\ndog 1 2\n", "inconsistent dimension", 2),
    ("cat 1 2 3\ndog 1 x 3\n", "not a number", 2),
    ("cat 1 2 3\ndog 1 nan 3\n", "NaN or infinite", 2),
    ("cat 1 2 3\n\n", "empty line", 2),
])
def test_malformed_text_reports_file_and_line(tmp_path, content, problem, line):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(InputError, match=problem) as err:
        _read_all(path)
    assert err.value.line == line and str(path) in str(err.value)


def test_non_utf8_and_truncated_binary(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"cat 1 2 3\n\xff\xfe 1 2 3\n")
    with pytest.raises(InputError, match="UTF-8") as err:
        _read_all(path)
    assert err.value.line == 2
    path = tmp_path / "cut.bin"
    _write_w2v_bin(path, WORDS, VECS)
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(InputError, match="truncated|ends"):
        _read_all(path)


@pytest.mark.parametrize("setup,needle", [
    (lambda p: None, "not found"),
    (lambda p: p.write_text(""), "empty file"),
])
def test_cli_bad_vector_files_exit_2_with_one_line(tmp_path, cli, setup, needle):
    path = tmp_path / "v.txt"
    setup(path)
    r = cli("--home", tmp_path / "h", "index", "words", "--vectors", path, "--name", "x")
    assert r.code == 2 and needle in r.err and str(path) in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert not (tmp_path / "h" / "x").exists()


def test_cli_unknown_format_and_bad_dimension_keep_old_index(tmp_path, cli):
    home = tmp_path / "h"
    good = tmp_path / "good.txt"
    good.write_text(_text(WORDS, VECS))
    assert cli("--home", home, "index", "words", "--vectors", good, "--name", "x").code == 0
    before = (home / "x" / "manifest.json").read_bytes()
    r = cli("--home", home, "index", "words", "--vectors", good, "--name", "x", "--format", "nope")
    assert r.code == 2
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2 3\nb 1 2\n")
    r = cli("--home", home, "index", "words", "--vectors", bad, "--name", "x", "--replace")
    assert r.code == 2 and f"{bad}:2" in r.err and len(r.err.strip().splitlines()) == 1
    assert (home / "x" / "manifest.json").read_bytes() == before
    assert cli("--home", home, "index", "verify", "x").code == 0
