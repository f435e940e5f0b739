"""Property tests over the command line's options: whatever numbers, names and texts are given, a
command ends with exit code 0, or with exit code 2 and exactly one line ``error: ...`` on stderr; never a
traceback (the in-process runner re-raises any exception) and never a signal (it would end the test run).
A small index is built once; examples are few and fast.

The fuzz harness (the end of the file) runs every reader on truncated, random, huge-line, NUL, BOM, non-finite,
compressed and non-regular inputs, and every HTTP parameter of every endpoint on hostile values: each ends in a
valid result or one ``LexprobeError`` line, in a forked child under a memory cap (``RLIMIT_AS``) and a time cap
per example. Examples are derandomised (the same every run) and few here; ``tools/fuzz.sh`` runs many more
(``LEXPROBE_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import signal
import struct
import time
import traceback
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crash_helpers as ch

FUZZ_EXAMPLES = int(os.environ.get("LEXPROBE_FUZZ_EXAMPLES", "0")) or None  # tools/fuzz.sh: many more
FAST = settings(max_examples=FUZZ_EXAMPLES or 60, deadline=None, derandomize=True,
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
    from lexprobe.sources.vectors import read_vectors

    path = tmp_path_factory.mktemp("bytes") / f"v{suffix}"
    path.write_bytes(head + body)
    try:
        _, chunks = read_vectors(str(path))
        for words, matrix, _ in chunks:
            assert len(words) == len(matrix) and np.isfinite(matrix).all()
    except LexprobeError as exc:
        assert path.name in str(exc) and "\n" not in str(exc)


# ------------------------------------------------------------------------ the fuzz harness: capped


MEMORY_CAP = 1 << 30  # bytes of address space a child may add to what the test process had mapped
TIME_CAP = 20         # seconds one reader call or one request may take
READER_EXAMPLES = FUZZ_EXAMPLES or 12
CAPPED = settings(max_examples=READER_EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))



def _mapped_bytes() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))


def in_capped_child(run, examples: int = READER_EXAMPLES) -> None:
    """Run ``run()`` in a forked child whose address space may grow by :data:`MEMORY_CAP` at most; the child's
    failure (its traceback) fails the test, and so does a child still running after every example's time cap."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_end)
        code = 0
        try:
            resource.setrlimit(resource.RLIMIT_AS, (_mapped_bytes() + MEMORY_CAP, resource.RLIM_INFINITY))
            run()
        except BaseException:
            os.write(write_end, traceback.format_exc()[-30000:].encode())
            code = 1
        os._exit(code)
    os.close(write_end)
    deadline = time.monotonic() + examples * TIME_CAP + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"the fuzzed child ran past {examples * TIME_CAP + 60} s")
        time.sleep(0.05)
    with os.fdopen(read_end, "rb") as f:
        said = f.read().decode(errors="replace")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, said or f"child ended with status {status}"


def _one_error_line(exc, *names: str) -> None:
    message = str(exc)
    assert "\n" not in message and message.strip(), message
    assert any(name in message for name in names), (message, names)


def _consume_vectors(fmt: str):
    def read(path: Path):
        import numpy as np

        from lexprobe.sources.vectors import read_vectors

        _, chunks = read_vectors(str(path), fmt=fmt)
        for words, matrix, _ in chunks:
            assert len(words) == len(matrix) and np.isfinite(matrix).all()
    return read


def _fasttext_seed() -> bytes:
    import numpy as np

    words = ["cat", "dogs", "naïve"]
    head = (793712314).to_bytes(4, "little") + struct.pack("<13i", 12, 3, 5, 5, 1, 5, 1, 2, 1, 7, 3, 6, 100)
    head += struct.pack("<d", 1e-4) + struct.pack("<3iqq", 3, 3, 0, 30, -1)
    body = b"".join(w.encode() + b"\0" + struct.pack("<qb", 1, 0) for w in words)
    matrix = np.arange(30, dtype="<f4").reshape(10, 3) / 10
    return head + body + b"\0" + struct.pack("<2q", 10, 3) + matrix.tobytes()


def _wsd(path: Path):
    from lexprobe.sources.datasets.wsd import read_wsd

    (path.parent / "f.gold.key.txt").write_text("d0.s0.t0 bank%1:14:00::\n")
    return read_wsd(path)


def _readers() -> dict:
    """Every reader: (file name, a valid small file, the call that reads it whole)."""
    from lexprobe.cli.insert import read_words
    from lexprobe.sources.datasets.bats import read_relation_file
    from lexprobe.sources.datasets.google import read_google
    from lexprobe.sources.datasets.jsonl_corpus import read_jsonl_corpus
    from lexprobe.sources.datasets.plain_text import read_plain_text
    from lexprobe.sources.datasets.streusle import read_streusle
    from lexprobe.sources.datasets.wnlampro import read_dataset as read_wnlampro
    from lexprobe.sources.datasets.word_lines import text_lines, word_lines
    from lexprobe.sources.datasets.word_pairs import read_word_pairs
    from lexprobe.sources.datasets.wsd import read_gold_keys
    from lexprobe.sources.vectors import read_fasttext_bin

    def pairs(path):
        table = read_word_pairs(path)
        assert all(s == s and abs(s) != float("inf") for s in table.column("score").to_pylist())

    def fasttext(path):
        model = read_fasttext_bin(path)
        model.word_vectors()
        model.vector("unseenword")

    glove = b"cat 0.1 -0.2 0.3\ndog 0.4 0.5 -0.6\n"
    return {
        "glove": ("v.txt", glove, _consume_vectors("glove")),
        "w2v-text": ("v.vec", b"2 3\n" + glove, _consume_vectors("w2v-text")),
        "w2v-bin": ("v.bin", b"2 3\ncat " + struct.pack("<3f", 0.1, 0.2, 0.3) + b"\ndog "
                    + struct.pack("<3f", 0.4, 0.5, 0.6) + b"\n", _consume_vectors("w2v-bin")),
        "auto": ("v.txt.gz", gzip.compress(glove), _consume_vectors("auto")),
        "fasttext-bin": ("m.bin", _fasttext_seed(), fasttext),
        "plain-text": ("c.txt", b"The cat sat on the mat.\nIt's 3.5 m long.\n", read_plain_text),
        "jsonl-corpus": ("c.jsonl", b'{"words": ["a", "bank"], "targets": [{"position": 1, "sense": "x"}]}\n',
                         read_jsonl_corpus),
        "wsd-xml": ("f.data.xml", b'<corpus lang="en"><text id="d0"><sentence id="d0.s0"><wf lemma="the" pos="DET">'
                    b'the</wf><instance id="d0.s0.t0" lemma="bank" pos="NOUN">bank</instance></sentence></text>'
                    b'</corpus>\n', _wsd),
        "gold-keys": ("g.gold.key.txt", b"d0.s0.t0 bank%1:14:00::\nd0.s0.t1 a%1 b%2\n", read_gold_keys),
        "streusle": ("x.conllulex", ("# sent_id = r1-0001\n# text = at home\n" + "\n".join("\t".join(row) for row in (
            ("1", "at", "at", "ADP", "IN", "_", "2", "case", "_", "_", "_", "P", "at", "p.Locus", "p.Locus", "_",
             "_", "_", "O-P-p.Locus"),
            ("2", "home", "home", "NOUN", "NN", "_", "0", "root", "_", "_", "_", "N", "home", "n.LOCATION", "_",
             "_", "_", "_", "O-N-n.LOCATION"))) + "\n\n").encode(), read_streusle),
        "bats": ("I01 [noun - plural_reg].txt", b"cat\tcats\ndog\tdogs/doggies\n", read_relation_file),
        "google": ("questions-words.txt", b": capital\nAthens Greece Baghdad Iraq\n", read_google),
        "word-pairs": ("pairs.tsv", b"word1\tword2\tscore\ncat\tdog\t7.5\ncar\tbus\t6.25\n", pairs),
        "word-lines": ("q.txt", b"# questions\nman king woman\nparis france rome\n",
                       lambda p: word_lines(p, 3, "3 words", "questions")),
        "text-lines": ("s.txt", b"the cat sat on the ___ .\n", lambda p: text_lines(p, "sentences")),
        "at-file": ("words.txt", b"cat\ndog\n", lambda p: read_words([f"@{p}"])),
        "wnlampro": ("WNLaMPro.txt", b"1\tdev\tlime (n,2.5,300)\tantonym\tfruit (n,4.0,10000)\n", read_wnlampro),
    }


READERS = sorted(_readers())


def fuzzed(valid: bytes):
    """Random bytes, damaged versions of ``valid`` (truncated, flipped, huge lines, non-finite numbers, wrong
    encodings, ...: test_hostile_inputs' mutations), and each of those behind a byte-order mark, with NUL bytes,
    gzip-compressed, or with one line past the line limit."""
    from test_hostile_inputs import damaged

    base = st.one_of(st.binary(max_size=300), damaged(valid), damaged(valid))
    return st.one_of(
        base,
        base.map(lambda d: b"\xef\xbb\xbf" + d),
        st.tuples(base, st.integers(0, 300)).map(lambda t: t[0][: t[1]] + b"\0" + t[0][t[1]:]),
        base.map(gzip.compress),
        st.tuples(base, st.sampled_from([b"x", b"1.5 ", b"\t", b"nan "])).map(
            lambda t: t[0] + b"\n" + t[1] * ((2 << 20) // len(t[1])) + b"\n"),
    )


# errors that name no file, rightly: a word list whose lines are all blank leaves no words from any file
NAMELESS = {"at-file": "no words to approximate"}


def _outcome(reader: str, read, path: Path) -> None:
    from lexprobe.core.errors import LexprobeError

    try:
        with ch.time_limit(TIME_CAP):
            read(path)
    except LexprobeError as exc:
        _one_error_line(exc, path.name, path.parent.name, *([NAMELESS[reader]] if reader in NAMELESS else []))


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_under_the_fuzzer(tmp_path, reader):
    name, valid, read = _readers()[reader]
    case = iter(range(1 << 30))
    (tmp_path / "valid").mkdir()
    (tmp_path / "valid" / name).write_bytes(valid)
    read(tmp_path / "valid" / name)  # the seed itself is valid: the damaged ones test the reader

    @CAPPED
    @given(data=fuzzed(valid))
    def fuzz(data):
        folder = tmp_path / f"case{next(case)}"
        folder.mkdir()
        (folder / name).write_bytes(data)
        _outcome(reader, read, folder / name)

    in_capped_child(fuzz)


@pytest.mark.parametrize("odd", ["fifo", "zero", "folder"])
@pytest.mark.parametrize("reader", READERS)
def test_every_reader_refuses_what_is_not_a_regular_file(tmp_path, reader, odd):
    from lexprobe.core.errors import LexprobeError

    name, _, read = _readers()[reader]
    path = tmp_path / name
    if odd == "fifo":
        os.mkfifo(path)
    elif odd == "zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    with pytest.raises(LexprobeError) as info, ch.time_limit(TIME_CAP):
        read(path)
    _one_error_line(info.value, name)


def _values(param):
    """Hostile values for one HTTP parameter: its own enum (UMAP left out: its first call compiles for tens of
    seconds), numbers at and past its bounds, texts, huge, NUL, BOM, non-finite."""
    own = [v for v in param.enum if v != "umap"]
    edges = [str(x) for x in (param.minimum, param.maximum) if x is not None]
    edges += [str(int(x) + d) for x in (param.minimum, param.maximum) if x is not None for d in (-1, 1)]
    return st.one_of(st.sampled_from(own + edges + ["word0", "word2", "w", "google", "word0,word2,word4", "0",
                                                    "nan", "inf", "-inf", "1e999", "\ufeffword0", "word0\x00",
                                                    "=cmd", "x" * 5000, ""]), TEXTS, NUMBERS)


@pytest.mark.parametrize("path", ["indexes", "neighbors", "analogy", "offsets", "senses", "probe", "projection"])
def test_every_http_parameter_under_the_fuzzer(serve_client, fuzz_home, path):
    from lexprobe.serve.api import ENDPOINT

    endpoint = ENDPOINT[path]
    headers = st.sampled_from([{}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://evil.example"},
                               {"Sec-Fetch-Site": "same-origin"}, {"Origin": "http://localhost"}])

    @CAPPED
    @given(params=st.lists(st.sampled_from(endpoint.params).flatmap(
               lambda p: st.tuples(st.just(p.name), _values(p))), max_size=len(endpoint.params) + 1),
           headers=headers)
    def fuzz(params, headers):
        with ch.time_limit(TIME_CAP):
            response = serve_client.get(f"/api/{path}", query_string=_query(params), headers=headers)
        foreign = headers.get("Sec-Fetch-Site") == "cross-site" or "evil" in headers.get("Origin", "")
        assert response.status_code in ((403,) if foreign else (200, 400, 404, 503)), (params, response.data[:300])
        if response.mimetype == "text/csv":
            cells = [c for line in response.get_data(as_text=True).splitlines()[1:] for c in line.split(",")]
            assert not [c for c in cells if c[:1] in "=+@\t\r"], cells[:20]
        else:
            _json_answer_or_refused(response, fuzz_home)

    in_capped_child(fuzz)


def _json_answer_or_refused(response, home: Path) -> None:
    body = response.get_json()
    assert isinstance(body, dict), response.data[:300]
    if response.status_code != 200:
        assert list(body) == ["error"] and "\n" not in body["error"], body
    assert str(home) not in response.get_data(as_text=True)
