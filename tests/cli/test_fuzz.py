"""Property tests over the command line's options: whatever numbers, names and texts are given, a
command ends with exit code 0, or with exit code 2 and exactly one line ``error: ...`` on stderr; never a
traceback (the in-process runner re-raises any exception) and never a signal (it would end the test run).
A small index is built once; examples are few and fast.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crash_helpers as ch

FAST = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

NUMBERS = st.one_of(
    st.integers(-10**12, 10**12).map(str),
    st.integers(-3, 70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e8", "nan", "-nan", "inf", "-0", "0x10", " 3", "", "1_000", "10000000000", "3.5", "٣"]),
)
TEXTS = st.one_of(
    st.text(max_size=30),
    st.text(st.characters(codec="utf-8", categories=["Cc", "Cs", "Zs", "Po", "Ll"]), max_size=12),
    st.sampled_from(["../x", "/etc/passwd", "a/b", "ok\n", ".hidden", "words", "W", "\x00", "caf\udce9", "--help",
                     "-k", "@", "@/nonexistent", "'; drop table w; --", '"w"', "\u202e", "\ufeffword0"]),
)
NAMES = st.one_of(TEXTS, st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}", fullmatch=True))


@pytest.fixture(scope="module")
def fuzz_home(tmp_path_factory) -> Path:
    """A home with a words index ``w`` (60 x 6) and the vector file it was built from."""
    return ch.words_home(tmp_path_factory.mktemp("fuzz"), 60, 6, 2)


def _ok_or_one_line(r) -> None:
    assert r.code in (0, 2), r
    if r.code == 2:
        lines = r.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), r
    assert "Traceback" not in r.err, r


@FAST
@given(k=NUMBERS, restrict=NUMBERS, word=TEXTS, fmt=st.sampled_from(["table", "json", "csv"]))
def test_neighbors_options(cli, fuzz_home, k, restrict, word, fmt):
    _ok_or_one_line(cli("--home", fuzz_home, "query", "neighbors", "--index", "w", "word0", word, "-k", k,
                        "--format", fmt))
    _ok_or_one_line(cli("--home", fuzz_home, "query", "neighbors", "--index", "w", "word2", "--restrict-vocab",
                        restrict))


@FAST
@given(k=NUMBERS, eps=NUMBERS, restrict=NUMBERS, method=st.sampled_from(["add", "mul", "pairdir"]),
       words=st.lists(st.one_of(st.sampled_from(["word0", "word2", "word4", "w2_1"]), TEXTS), min_size=0, max_size=4))
def test_analogy_options(cli, fuzz_home, k, eps, restrict, method, words):
    _ok_or_one_line(cli("--home", fuzz_home, "query", "analogy", "--index", "w", *words, "--method", method,
                        "-k", k, "--eps", eps))
    _ok_or_one_line(cli("--home", fuzz_home, "query", "analogy", "--index", "w", "word0", "word2", "word4",
                        "--restrict-vocab", restrict))


@FAST
@given(name=NAMES)
def test_index_names(cli, fuzz_home, tmp_path_factory, name):
    _ok_or_one_line(cli("--home", fuzz_home, "query", "neighbors", "--index", name, "word0"))
    _ok_or_one_line(cli("--home", fuzz_home, "index", "verify", name))
    _ok_or_one_line(cli("--home", fuzz_home, "index", "info", name))
    home = tmp_path_factory.mktemp("names") / "home"
    vectors = fuzz_home.parent / "v.txt"
    before = sorted(p.name for p in home.parent.parent.iterdir())
    r = cli("--home", home, "index", "words", "--vectors", vectors, "--name", name)
    _ok_or_one_line(r)
    if r.code == 0:  # a valid name: exactly one index, under the home
        assert [p.name for p in home.iterdir()] == [name]
        _ok_or_one_line(cli("--home", home, "index", "rm", "--yes", name))
        assert not any(home.iterdir())
    else:
        assert not home.exists() or not any(home.iterdir())
    assert sorted(p.name for p in home.parent.parent.iterdir()) == before  # nothing beside the home
    shutil.rmtree(home.parent)


@FAST
@given(options=st.lists(st.tuples(st.sampled_from(["--limit", "--shard-rows", "--hnsw-m", "--ef-search",
                                                   "--ef-construction", "--nlist", "--nprobe", "--seed"]), NUMBERS),
                        max_size=3),
       index_type=st.sampled_from(["flat", "hnsw", "ivf"]))
def test_build_options(cli, fuzz_home, tmp_path_factory, options, index_type):
    home = tmp_path_factory.mktemp("build") / "home"
    argv = [a for pair in options for a in pair]
    r = cli("--home", home, "-q", "index", "words", "--vectors", fuzz_home.parent / "v.txt", "--name", "b",
            "--index-type", index_type, *argv)
    _ok_or_one_line(r)
    if r.code == 0:
        assert cli("--home", home, "index", "verify", "b").code == 0
        _ok_or_one_line(cli("--home", home, "query", "neighbors", "--index", "b", "word0", "-k", "70"))
    shutil.rmtree(home.parent)


@FAST
@given(statement=st.one_of(
    TEXTS,
    st.builds(lambda col, view, lit: f"select {col} from {view} where word = {lit}",
              st.sampled_from(["*", "word", "count(*)", "norm", "vector", "index_name", "1/0"]),
              st.sampled_from(["w", "words", '"w"', "W", "tokens", "read_csv('/etc/passwd')", "glob('/*')"]),
              st.one_of(TEXTS.map(lambda t: "'" + t.replace("'", "''") + "'"), NUMBERS)),
    st.sampled_from(["COPY w TO 'x.csv'", "ATTACH 'x.db'", "INSTALL httpfs", "PRAGMA version",
                     "SET lock_configuration = false", "CREATE TABLE t AS SELECT 1", "select * from duckdb_settings()",
                     "select getvariable('x')", "select 'a\x1b[31m' as s"])))
def test_sql_statements(cli, fuzz_home, tmp_path, monkeypatch, statement):
    monkeypatch.chdir(tmp_path)
    _ok_or_one_line(cli("--home", fuzz_home, "sql", statement))
    assert not any(tmp_path.iterdir())  # nothing written outside


# ------------------------------------------------------------------------- the serve API

SERVE_KEYS = ["index", "word", "k", "a", "a_star", "b", "method", "honest", "dataset", "relation", "lowercase",
              "shuffles", "seed", "sentence", "target", "occurrence", "definitions", "model", "text"]
SERVE_VALUES = st.one_of(TEXTS, NUMBERS, st.sampled_from(["w", "word0", "word2", "word4", "w2_1", "google", "bats",
                                                          "add", "mul", "pairdir", "capital", "1", "0", "___",
                                                          "a ___ b", "splade-tiny", "smollm2", "/etc", "../w"]))


def _query(params: list[tuple[str, str]]) -> str:
    """A raw query string as a client could send it: UTF-8 percent-encoded, lone surrogates as their bytes."""
    from urllib.parse import quote

    return "&".join(quote(k.encode("utf-8", "surrogatepass"), safe="") + "="
                    + quote(v.encode("utf-8", "surrogatepass"), safe="") for k, v in params)


@pytest.fixture(scope="module")
def serve_client(fuzz_home, tmp_path_factory):
    """The API over the fuzz home, a Google file over its words, no model served."""
    from lexprobe.serve.app import create_app

    data = tmp_path_factory.mktemp("serve_data")
    (data / "google").mkdir()
    (data / "google" / "questions-words.txt").write_text(": capital\nword0 word2 word4 word6\nword8 word10 word12 "
                                                         "word14\n: family\nword0 word4 word2 word6\n")
    return create_app(fuzz_home, models=(), data_places=[data]).test_client()


def _json_answer(response, home: Path) -> dict:
    assert response.status_code in (200, 400, 404), (response.status_code, response.data[:300])
    body = response.get_json()
    assert isinstance(body, dict), response.data[:300]
    if response.status_code != 200:
        assert list(body) == ["error"] and "\n" not in body["error"], body
    assert str(home) not in response.get_data(as_text=True)
    return body


@FAST
@given(endpoint=st.sampled_from(["indexes", "neighbors", "analogy", "offsets", "senses", "probe"]),
       params=st.lists(st.tuples(st.one_of(st.sampled_from(SERVE_KEYS), TEXTS), SERVE_VALUES), max_size=6))
def test_serve_query_strings(serve_client, fuzz_home, endpoint, params):
    """Whatever the parameters (repeated, unknown, malformed UTF-8), the answer is JSON: a result or a 4xx."""
    _json_answer(serve_client.get(f"/api/{endpoint}", query_string=_query(params)), fuzz_home)


@FAST
@given(raw=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60))
def test_serve_raw_query_strings(serve_client, fuzz_home, raw):
    """Raw text as the query string (stray ``%``, ``&``, ``=``, ``;``, ``+``, non-ASCII)."""
    query = raw.encode("utf-8").decode("latin-1")
    for endpoint in ("neighbors", "analogy", "offsets"):
        _json_answer(serve_client.get(f"/api/{endpoint}", query_string=query), fuzz_home)


@FAST
@given(host=st.one_of(
    st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), max_size=40),
    st.builds(lambda name, port: f"{name}:{port}",
              st.sampled_from(["127.0.0.1", "localhost", "LocalHost", "[::1]", "::1", "127.0.0.2", "0.0.0.0",
                               "localhost.", "evil.example", "127.0.0.1.nip.io", ""]),
              st.one_of(st.integers(0, 70000).map(str), st.sampled_from(["", "80", "x", "8765@evil"])))))
def test_serve_host_headers(serve_client, fuzz_home, host):
    """Only the loopback names (any port, for the in-process client) are answered; anything else is a 400."""
    response = serve_client.get("/api/indexes", headers={"Host": host})
    body = _json_answer(response, fuzz_home)
    name, _, port = host.strip().lower().rpartition(":") if not host.strip().endswith("]") else (host, "", "")
    name = name or host.strip().lower()
    own = name in ("127.0.0.1", "localhost", "[::1]") and (port == "" or port.isdigit()) and "@" not in host
    assert (response.status_code == 200) == own, (host, body)


# ----------------------------------------------------------------------- the readers

MAGICS = [b"", b"\x1f\x8b", b"BZh9", b"\xfd7zXZ\x00", (793712314).to_bytes(4, "little"), b"\x93NUMPY", b"\x80\x04",
          b"3 2\n", b"1 1\na \x00\x00\x80?\n"]


@FAST
@given(suffix=st.sampled_from([".txt", ".vec", ".bin", ".npy", ".gz", ".bz2", ".xz", ".txt.gz", ".bin.bz2",
                               ".vec.xz", ""]),
       head=st.sampled_from(MAGICS), body=st.binary(max_size=300))
def test_vector_readers_on_random_bytes(tmp_path_factory, suffix, head, body):
    """Random bytes under every extension, behind every magic number: vectors (finite, one dimension) or one
    InputError naming the file; never another exception, never a pickle loaded."""
    import numpy as np

    from lexprobe.core.errors import LexprobeError
    from lexprobe.sources.vector_files import read_vectors

    path = tmp_path_factory.mktemp("bytes") / f"v{suffix}"
    path.write_bytes(head + body)
    try:
        _, chunks = read_vectors(str(path))
        for words, matrix, _ in chunks:
            assert len(words) == len(matrix) and np.isfinite(matrix).all()
    except LexprobeError as exc:
        assert path.name in str(exc) and "\n" not in str(exc)
