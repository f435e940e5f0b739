"""``lexprobe serve`` over real HTTP on loopback: the command itself, and bounded load tests on the 400k GloVe (200
neighbour and analogy requests from 8 concurrent clients; 48 projections and neighbour lists mixed from 8 clients):
no errors; latencies recorded, never asserted."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request

import numpy as np
import pytest

from lexprobe.serve.load import latency_row, load_test


def test_latency_row_percentiles_by_hand():
    row = latency_row("x", [i / 1000 for i in range(1, 101)], [200] * 99 + [500])
    assert (row["requests"], row["errors"]) == (100, 1)
    # numpy's linear interpolation: p50 of 1..100 ms is 50.5, p99 is 99.01
    assert row["p50_ms"] == pytest.approx(50.5) and row["p99_ms"] == pytest.approx(99.01)
    assert row["max_ms"] == pytest.approx(100)


def test_bench_serve_200_requests_from_8_clients(cli, glove_home, tmp_path):
    record = tmp_path / "serve.md"
    r = cli("--home", glove_home, "bench", "serve", "--index", "glove", "--requests", 200, "--clients", 8,
            "--record", record)
    assert r.code == 0, r
    text = record.read_text()
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^\| (/api/\w+|all) \| (\d+) \| (\d+) \| ([\d.]+) \| [\d.]+ \| ([\d.]+) \|", text, re.M)}
    assert rows["/api/neighbors"][:2] == ("100", "0") and rows["/api/analogy"][:2] == ("100", "0")
    assert rows["all"][:2] == ("200", "0")
    assert float(rows["all"][2]) <= float(rows["all"][3])  # p50 <= p99
    assert "200 requests from 8 concurrent clients" in text and "errors: 0" in text


def mixed_paths(index, n: int, seed: int = 0) -> list[str]:
    """``n`` GETs on frequent words, in turn: neighbours (k=10), a PCA projection of a 30-word list, a t-SNE
    projection of a word's 20 nearest neighbours."""
    import urllib.parse

    rng = np.random.default_rng(seed)
    top = [index.words[i] for i in range(5000)]
    q = lambda **p: urllib.parse.urlencode({"index": index.name, **p})
    paths = []
    for i in range(n):
        word = top[rng.integers(len(top))]
        if i % 3 == 0:
            paths.append(f"/api/neighbors?{q(word=word, k=10)}")
        elif i % 3 == 1:
            words = " ".join(top[j] for j in rng.choice(len(top), 30, replace=False))
            paths.append(f"/api/projection?{q(view='words', method='pca', words=words)}")
        else:
            paths.append(f"/api/projection?{q(view='neighbors', method='tsne', seed=i, word=word, k=20)}")
    return paths


def test_projections_and_neighbours_mixed_from_8_clients(glove_home):
    from lexprobe.kinds.words import WordIndex
    from lexprobe.serve.app import Running

    paths = mixed_paths(WordIndex.open("glove", home=glove_home), 48)
    with Running(glove_home) as url:
        result = load_test(url, paths, requests=48, clients=8, timeout=120)  # bounded: 48 requests, 120 s each
    assert result["errors"] == 0 and set(result["statuses"]) == {200}, result["rows"]
    rows = {r["endpoint"]: r for r in result["rows"]}
    assert (rows["/api/neighbors"]["requests"], rows["/api/projection"]["requests"], rows["all"]["requests"]) == \
        (16, 32, 48)
    assert rows["all"]["p50_ms"] <= rows["all"]["p99_ms"] <= rows["all"]["max_ms"]


def test_load_test_counts_failures(glove_home):
    from lexprobe.serve.app import Running

    with Running(glove_home) as url:
        result = load_test(url, ["/api/neighbors?index=glove&word=king", "/api/neighbors?index=glove&word=qxqxzz"],
                           requests=10, clients=4)
    assert result["errors"] == 5 and sorted(set(result["statuses"])) == [200, 404]


def test_the_serve_command_listens_on_loopback_and_answers(glove_home):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    process = subprocess.Popen([sys.executable, "-m", "lexprobe", "--home", str(glove_home), "serve", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        printed = []
        while not printed or (printed[-1] and "serving" not in printed[-1]):  # until the address, or EOF
            printed.append(process.stdout.readline())
        match = re.search(r"at (http://127\.0\.0\.1:(\d+)/)", printed[-1])
        assert match, (printed, process.stderr.read() if process.poll() is not None else "")
        with urllib.request.urlopen(match.group(1) + "api/indexes", timeout=60) as response:
            body = json.load(response)
        assert ("glove", "words") in [(i["name"], i["kind"]) for i in body["indexes"]]  # the session home may hold more
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_serve_command_refuses_an_address_it_cannot_listen_on(cli, home):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = cli("--home", home, "serve", "--port", port)
    assert r.code == 2 and r.err.strip() == f"error: cannot listen on 127.0.0.1:{port}: Address already in use"
    r = cli("--home", home, "serve", "--host", "no.such.host.invalid", "--port", 0)
    assert r.code == 2 and "cannot listen on no.such.host.invalid:0: not a known host" in r.err
    assert len(r.err.strip().splitlines()) == 2  # the note that the host is not loopback, then the error
