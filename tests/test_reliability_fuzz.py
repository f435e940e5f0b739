"""Property tests over the command line's options (issue 13): whatever numbers, names and texts are given, a
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
