"""The read-only server: it answers only requests addressed to it (its Host, with its port),
writes nothing (no model converted or loaded from a path a client names, no index put back), shows no absolute
path, closes idle connections within seconds, and answers every error in JSON. Servers run on loopback, started
by the tests; the connection test is bounded in count and time."""

from __future__ import annotations

import http.client
import json
import os
import socket
from pathlib import Path

import pytest

import crash_helpers as ch
from lexprobe.serve.app import Running, create_app


@pytest.fixture(scope="module")
def small_home(tmp_path_factory) -> Path:
    """A home with a words index ``w`` (200 x 8)."""
    return ch.words_home(tmp_path_factory.mktemp("serve_small"), 200, 8, 1)


def _snapshot(*roots: Path) -> dict:
    """Every path under ``roots`` with its size and modification time (links not followed)."""
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                st = os.lstat(os.path.join(dirpath, name))
                out[os.path.join(dirpath, name)] = (st.st_size, st.st_mtime_ns)
    return out


def _get(url: str, path: str, host: str | None = None) -> tuple[int, dict]:
    """A GET with an explicit Host header (urllib would always send the right one)."""
    address = url.removeprefix("http://")
    connection = http.client.HTTPConnection(*address.rsplit(":", 1), timeout=60)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", host if host is not None else address)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


# ------------------------------------------------------------------------------------------------ Host


def test_only_requests_for_its_own_host_and_port_are_answered(small_home):
    with Running(small_home) as url:
        port = url.rsplit(":", 1)[1]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
            status, body = _get(url, "/api/indexes", host)
            assert status == 200 and [i["name"] for i in body["indexes"]] == ["w"], host
        for host in ("evil.example", f"evil.example:{port}", "127.0.0.1", f"localhost:{int(port) + 1}",
                     f"127.0.0.1.evil.example:{port}", f"localhost:{port}@evil", ""):
            status, body = _get(url, "/api/neighbors?index=w&word=word0", host)
            assert status == 400 and "own address" in body["error"], host
        assert _get(url, "/", "evil.example")[0] == 400  # the page too


def test_allowed_names_are_added_not_replacing(small_home):
    with Running(small_home, allow_hosts=("box.lan",)) as url:
        port = url.rsplit(":", 1)[1]
        assert _get(url, "/api/indexes", f"box.lan:{port}")[0] == 200
        assert _get(url, "/api/indexes", f"127.0.0.1:{port}")[0] == 200
        assert _get(url, "/api/indexes", f"other.lan:{port}")[0] == 400


def test_the_in_process_client_checks_the_name(small_home):
    client = create_app(small_home, models=()).test_client()
    assert client.get("/api/indexes").status_code == 200  # Host: localhost
    response = client.get("/api/indexes", headers={"Host": "rebound.example"})
    assert response.status_code == 400 and "own address" in response.get_json()["error"]


# ------------------------------------------------------------------------------------------ writes nothing


def test_no_request_writes_converts_or_loads_a_model_it_was_not_started_with(small_home, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("LEXPROBE_CACHE", str(cache))
    (tmp_path / "junk.gguf").write_bytes(b"GGUF\x03\x00\x00\x00junk")
    (tmp_path / "folder").mkdir()
    aside = small_home / ".x.old-0123abcd"  # an index a crashed writer set aside: putting it back is a write
    (aside / "shards").mkdir(parents=True)
    try:
        before = _snapshot(small_home, cache, tmp_path / "folder")
        client = create_app(small_home, models=()).test_client()
        for model in ("smollm2", str(tmp_path / "junk.gguf"), str(tmp_path / "folder"), "/etc", "splade-tiny"):
            response = client.get("/api/probe", query_string={"model": model, "text": "a ___ b"})
            assert response.status_code == 400, (model, response.get_json())
            assert "served" in response.get_json()["error"]
        assert client.get("/api/indexes").status_code == 200
        assert client.get("/api/neighbors", query_string={"index": "x", "word": "a"}).status_code in (404, 500)
        assert _snapshot(small_home, cache, tmp_path / "folder") == before
    finally:
        if aside.exists():
            aside.rename(small_home / ".x.old-0123abcd.gone")
        import shutil
        shutil.rmtree(small_home / ".x.old-0123abcd.gone", ignore_errors=True)
        shutil.rmtree(small_home / "x", ignore_errors=True)
        (small_home / ".x.lock").unlink(missing_ok=True)


def test_a_served_model_is_named_at_start_and_a_causal_gguf_is_refused(small_home):
    from lexprobe.core.errors import LexprobeError

    for name in ("smollm2", "/models/some.gguf", " "):
        with pytest.raises(LexprobeError, match="--model"):
            create_app(small_home, models=(name,))
    client = create_app(small_home, models=("splade-tiny",)).test_client()
    response = client.get("/api/probe", query_string={"model": "minilm", "text": "a ___ b"})
    assert response.status_code == 400 and "--model minilm" in response.get_json()["error"]


def test_the_serve_command_refuses_a_causal_gguf_model(cli, small_home):
    r = cli("--home", small_home, "serve", "--port", 0, "--model", "smollm2")
    assert r.code == 2 and r.err.strip().startswith("error: --model smollm2: a GGUF causal LM"), r


# ------------------------------------------------------------------------------------------- no paths


def test_no_answer_holds_an_absolute_path(small_home, tmp_path):
    import shutil

    home = tmp_path / "home"
    shutil.copytree(small_home, home)
    shutil.copytree(home / "w", home / "broken")
    manifest = json.loads((home / "broken" / "manifest.json").read_text())
    manifest["checksum"] = 1
    (home / "broken" / "manifest.json").write_text(json.dumps(manifest))
    client = create_app(home, models=(), data_places=[tmp_path / "no-data"]).test_client()
    answers = [client.get("/api/indexes"),
               client.get("/api/neighbors", query_string={"index": "broken", "word": "a"}),
               client.get("/api/offsets", query_string={"index": "w", "dataset": "bats"}),
               client.get("/api/neighbors", query_string={"index": "w", "word": "nope"}),
               client.get("/api/senses", query_string={"index": "w", "sentence": "a b", "target": "a"})]
    for response in answers:
        text = response.get_data(as_text=True)
        assert str(tmp_path) not in text and str(home.resolve()) not in text, text
        assert '"/' not in text and ": /" not in text, text
    rows = {r["name"]: r for r in answers[0].get_json()["indexes"]}
    assert rows["w"]["source"] == "v.txt" and "broken/manifest.json" in rows["broken"]["error"]
    assert "home" not in answers[0].get_json()


# ------------------------------------------------------------------------------------------- connections


def test_idle_connections_cannot_hold_the_server(small_home):
    """More idle connections than the server takes at once (100); a real request still gets its answer once
    the idle ones time out (2 s here; 10 s by default)."""
    with Running(small_home, idle_timeout=2) as url:
        address = url.removeprefix("http://").rsplit(":", 1)
        idle = [socket.create_connection((address[0], int(address[1])), timeout=10) for _ in range(110)]
        try:
            status, body = _get(url, "/api/neighbors?index=w&word=word0&k=2")
            assert status == 200 and len(body["rows"]) == 2
        finally:
            for s in idle:
                s.close()


# ---------------------------------------------------------------------------------------------- errors


def test_every_error_is_json(small_home):
    client = create_app(small_home, models=()).test_client()
    for response, status in ((client.get("/no/such/page"), 404), (client.post("/api/neighbors"), 405),
                             (client.get("/static/../../etc/passwd"), 404), (client.get("/api/nope"), 404),
                             (client.get("/api/neighbors", query_string={"index": "w", "word": "word0", "k": "1e3"}), 400)):
        assert response.status_code == status and list(response.get_json()) == ["error"], response.data


# ------------------------------------------------------------------------------------------------ warm-up


def test_the_server_compiles_its_kernels_and_opens_its_words_indexes_before_answering(small_home):
    """In a fresh process (nothing compiled yet), ``make_server`` leaves the search kernels compiled or loaded
    and the words index opened and searched once, so the first request waits for neither; ``warm=False`` does
    neither (the benchmark's baseline, benchmarks/serve.md)."""
    import subprocess
    import sys

    script = """if True:
        import json, sys
        from lexprobe.core import int8_scan, topk, topk_kernels
        from lexprobe.serve.app import make_server
        names = ("rank", "narrow", "kth_best", "dots")
        compiled = lambda: {n: len(getattr(topk_kernels, n).signatures) for n in names}
        before = compiled()
        server = make_server(sys.argv[1], port=0, models=())
        service = server.app.config["lexprobe.service"]
        print(json.dumps({"before": before, "after": compiled(), "int8": int8_scan._kernel.cache_info().currsize,
                          "warm": server.app.config["lexprobe.warm"], "opens": service.indexes.opens}))
        server.close()
    """
    run = subprocess.run([sys.executable, "-c", script, str(small_home)], capture_output=True, text=True,
                         env=ch.env(small_home), timeout=300)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert set(out["before"].values()) == {0}  # a fresh process: nothing compiled
    assert min(out["after"].values()) >= 1 and out["int8"] == 1
    assert out["warm"]["kernels"] == ["rank", "narrow", "kth_best", "dots", "int8_scan"]
    assert out["warm"]["indexes"] == ["w"] and out["opens"] == 1 and out["warm"]["seconds"] > 0
    from lexprobe.serve.app import make_server

    cold = make_server(small_home, port=0, models=(), warm=False)
    try:
        assert cold.app.config["lexprobe.warm"] is None
        assert cold.app.config["lexprobe.service"].indexes.opens == 0
    finally:
        cold.close()


def test_the_serve_command_answers_and_stops_on_ctrl_c(small_home):
    """``lexprobe serve`` as a user starts it, through the measuring tool of benchmarks/serve.md (it waits for the
    line saying where it serves, sends the requests one by one, then stops the server with Ctrl-C); --no-warm keeps
    it short (the warm-up is the test above)."""
    import sys

    from lexprobe.serve.load import first_requests

    argv = [sys.executable, "-m", "lexprobe", "--home", str(small_home), "serve", "--port", "0", "--no-warm"]
    result = first_requests(argv, ["/api/indexes", "/api/neighbors?index=w&word=word0&k=2", "/api/nope"])
    assert result["statuses"] == [200, 200, 404] and result["ready_s"] > 0


def test_different_models_load_one_at_a_time_and_each_once():
    """Models.get: two first requests for different models (a sense query's encoder and a probe's masked LM) load
    one after the other, never together (concurrent transformers imports failed), and each model once."""
    import threading
    import time

    from lexprobe.serve.opened import Models

    models, state, lock = Models(), {"active": 0, "most": 0, "loads": []}, threading.Lock()

    def loader(name):
        def load():
            with lock:
                state["active"] += 1
                state["most"] = max(state["most"], state["active"])
                state["loads"].append(name)
            time.sleep(0.05)
            with lock:
                state["active"] -= 1
            return name
        return load

    barrier = threading.Barrier(6)

    def ask(name):
        barrier.wait()
        assert models.get((name,), loader(name))[0] == name

    threads = [threading.Thread(target=ask, args=(name,)) for name in ("encoder", "mlm") * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["most"] == 1 and sorted(state["loads"]) == ["encoder", "mlm"]


# ------------------------------------------------------------------------------- CSV cells, other sites


def test_csv_cells_that_a_spreadsheet_would_run_start_with_a_quote(tmp_path):
    import csv
    import io

    from lexprobe.kinds.words import build_word_index

    words, _ = ch.write_glove(tmp_path / "v.txt", 30, 4, 2)
    formulas = ['=HYPERLINK("http://x","y")', "+1+2", "-2+3", "@SUM(A1)", "plain-word"]
    with open(tmp_path / "v.txt", "a", encoding="utf-8") as f:
        for i, word in enumerate(formulas):
            f.write(f"{word} {1 + i * 0.01:.2f} 0.5 0.5 0.5\n")
    build_word_index("f", str(tmp_path / "v.txt"), home=tmp_path / "home")
    client = create_app(tmp_path / "home", models=()).test_client()
    response = client.get("/api/neighbors?index=f&word=plain-word&k=40&format=csv")
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    cells = {row["word"] for row in rows}
    assert {"'=HYPERLINK(\"http://x\",\"y\")", "'+1+2", "'-2+3", "'@SUM(A1)"} <= cells
    assert not [c for c in cells if c[:1] in "=+-@\t\r"]
    assert any(row["score"].startswith("-") for row in rows)  # numbers are not texts: written as they are
    from lexprobe.serve.app import csv_value

    assert [csv_value(v) for v in ("\tx", "\rx", "x=1", -0.5, None, True)] == ["'\tx", "'\rx", "x=1", "-0.5", "",
                                                                                  "true"]


@pytest.mark.parametrize("headers,status", [
    ({"Sec-Fetch-Site": "cross-site"}, 403),
    ({"Origin": "http://evil.example"}, 403),
    ({"Origin": "null"}, 403),
    ({"Origin": "http://127.0.0.1.evil.example"}, 403),
    ({"Sec-Fetch-Site": "same-origin"}, 200),
    ({"Sec-Fetch-Site": "none"}, 200),
    ({}, 200),
])
def test_requests_from_another_site_are_refused(small_home, headers, status):
    with Running(small_home) as url:
        address = url.removeprefix("http://")
        own = {"Origin": url} if status == 200 and not headers else {}
        connection = http.client.HTTPConnection(*address.rsplit(":", 1), timeout=60)
        try:
            connection.request("GET", "/api/neighbors?index=w&word=word0", headers={**headers, **own})
            response = connection.getresponse()
            body = json.loads(response.read())
        finally:
            connection.close()
    assert response.status == status, body
    if status == 403:
        assert "another site" in body["error"]


# ---------------------------------------------------------------------- projections in their own pool


def test_projections_beyond_their_pool_are_503_and_a_neighbours_request_still_answers(small_home):
    """16 clients ask for t-SNE of 200 words at once: the pool runs two, queues four and refuses the others at
    once (503, Retry-After); a neighbours request sent meanwhile is answered (bounded: 17 requests, 120 s each)."""
    import threading
    import time
    import urllib.error
    import urllib.request

    from lexprobe.serve.projection import GATE, SLOW_SLOTS, SLOW_WAITING

    words = ",".join(f"word{i}" if i % 2 == 0 else f"w1_{i}" for i in range(200))
    results: list[tuple[int, str | None]] = []

    def project(url: str) -> None:
        try:
            with urllib.request.urlopen(f"{url}/api/projection?index=w&view=words&method=tsne&words={words}",
                                        timeout=120) as response:
                results.append((response.status, None))
        except urllib.error.HTTPError as exc:
            results.append((exc.code, exc.headers.get("Retry-After")))

    with Running(small_home, threads=8) as url:
        clients = [threading.Thread(target=project, args=(url,)) for _ in range(16)]
        for client in clients:
            client.start()
        deadline = time.monotonic() + 60
        while GATE.inside < SLOW_SLOTS + SLOW_WAITING and time.monotonic() < deadline:
            time.sleep(0.05)
        t0 = time.perf_counter()
        with urllib.request.urlopen(f"{url}/api/neighbors?index=w&word=word0&k=5", timeout=120) as response:
            assert response.status == 200 and len(json.loads(response.read())["rows"]) == 5
        waited = time.perf_counter() - t0
        for client in clients:
            client.join(timeout=120)
    statuses = sorted(s for s, _ in results)
    assert len(statuses) == 16 and set(statuses) == {200, 503}
    assert statuses.count(200) >= SLOW_SLOTS + SLOW_WAITING
    assert all(retry == "2" for s, retry in results if s == 503)
    assert waited < 10, waited  # a hang guard, not a benchmark: without the pool it waited for a t-SNE thread
