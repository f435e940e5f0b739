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


def test_bench_serve_projections_and_neighbours_mixed_from_8_clients(cli, glove_home, tmp_path):
    """bench serve --mix projections: neighbours, a PCA of 30 words and a t-SNE of a word's 20 neighbours in turn
    from 8 clients (bounded: 48 requests, 120 s each), every one answered, each kind recorded on its own row."""
    record = tmp_path / "serve.md"
    r = cli("--home", glove_home, "bench", "serve", "--index", "glove", "--requests", 48, "--clients", 8,
            "--mix", "projections", "--record", record)
    assert r.code == 0, r
    text = record.read_text()
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^\| (/api/\w+(?: \w+)?|all) \| (\d+) \| (\d+) \| ([\d.]+) \| [\d.]+ \| ([\d.]+) \|", text, re.M)}
    assert {k: v[:2] for k, v in rows.items()} == {"/api/neighbors": ("16", "0"), "/api/projection pca": ("16", "0"),
                                                   "/api/projection tsne": ("16", "0"), "all": ("48", "0")}
    assert float(rows["all"][2]) <= float(rows["all"][3])  # p50 <= p99
    assert "mix projections" in text and "errors: 0" in text


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
