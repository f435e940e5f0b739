"""A bounded load test over HTTP: a fixed number of GET requests from a few concurrent clients on loopback (each
asking again after ``Retry-After`` when the server is busy), with every latency kept (no sampling), for ``lexprobe bench serve`` and the tests; and the first requests of a new
server with and without its warm-up (:func:`start_bench`)."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence
from urllib.parse import parse_qs

import numpy as np


def _get(url: str, timeout: float) -> tuple[int, float]:
    """(status, seconds) of one GET, as a polite client makes it: a 503 with ``Retry-After`` (the server's
    projection pool is full) is asked again after that wait, within ``timeout`` in all; the seconds include the
    waits."""
    t0 = time.perf_counter()
    while True:
        retry = None
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                response.read()
                status = response.status
        except urllib.error.HTTPError as exc:
            status = exc.code
            retry = exc.headers.get("Retry-After") if status == 503 else None
        except (urllib.error.URLError, OSError):
            status = 0  # no answer at all
        if retry is None or not retry.isdigit() or time.perf_counter() - t0 + int(retry) > timeout:
            return status, time.perf_counter() - t0
        time.sleep(int(retry))


def latency_row(label: str, seconds: Sequence[float], statuses: Sequence[int]) -> dict:
    """Requests, errors (any status but 200) and latency percentiles in milliseconds of one group of requests."""
    ms = np.asarray(seconds, dtype=np.float64) * 1000
    return {"endpoint": label, "requests": len(ms), "errors": int(sum(s != 200 for s in statuses)),
            "p50_ms": float(np.percentile(ms, 50)), "p90_ms": float(np.percentile(ms, 90)),
            "p99_ms": float(np.percentile(ms, 99)), "max_ms": float(ms.max())}


def load_test(base: str, paths: Sequence[str], *, requests: int = 200, clients: int = 8,
              timeout: float = 120.0) -> dict:
    """Send ``requests`` GETs to ``base + path`` (cycling through ``paths``) from ``clients`` threads at once.

    Returns ``rows`` (one per endpoint, a projection per method, then ``all``: requests, errors, p50/p90/p99/max in ms), the wall time
    and the throughput. A request that gets no answer counts as an error with status 0.
    """
    if requests < 1 or clients < 1 or not paths:
        raise ValueError("need at least one request, one client and one path")
    urls = [base.rstrip("/") + paths[i % len(paths)] for i in range(requests)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        results = list(pool.map(lambda u: _get(u, timeout), urls))
    wall = time.perf_counter() - t0
    statuses = [s for s, _ in results]
    seconds = [t for _, t in results]
    groups: dict[str, list[int]] = {}
    for i, path in enumerate(paths[i % len(paths)] for i in range(requests)):
        endpoint, _, query = path.partition("?")
        method = parse_qs(query).get("method", [""])[0]  # a projection's method is its own kind of request
        groups.setdefault(f"{endpoint} {method}".strip() if endpoint == "/api/projection" else endpoint, []).append(i)
    rows = [latency_row(label, [seconds[i] for i in idx], [statuses[i] for i in idx]) for label, idx in groups.items()]
    rows.append(latency_row("all", seconds, statuses))
    return {"rows": rows, "errors": rows[-1]["errors"], "statuses": statuses, "seconds": wall,
            "requests_per_s": requests / wall, "clients": clients}


def first_requests(argv: Sequence[str], paths: Sequence[str], *, timeout: float = 600.0) -> dict:
    """Start a server (``argv``: a ``lexprobe ... serve --port 0`` command line), wait until it says where it
    serves, then send ``paths`` one at a time: the seconds from launch to serving, each request's latency
    and status. The server is stopped with Ctrl-C (SIGINT) afterwards."""
    import re
    import signal
    import subprocess
    import tempfile

    t0 = time.perf_counter()
    errors = tempfile.TemporaryFile(mode="w+")
    server = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=errors, text=True)
    try:
        url = None
        for line in server.stdout:
            found = re.search(r"at (http://\S+?)/? \(", line)
            if found:
                url = found.group(1)
                break
        if url is None:
            errors.seek(0)
            said = " ".join(errors.read().split()[-40:])
            raise RuntimeError(f"the server stopped before serving (exit {server.wait()}): {said}")
        ready = time.perf_counter() - t0
        results = [_get(url + path, timeout) for path in paths]
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        errors.close()
    return {"ready_s": ready, "statuses": [s for s, _ in results], "seconds": [t for _, t in results]}


def start_bench(home: str, index: str = "glove", *, requests: int = 150, repeats: int = 2) -> dict:
    """First requests of a new ``lexprobe serve`` with its warm-up (the default) and without (``--no-warm``, the
    baseline), alternating, ``repeats`` times each: ``requests`` single-client ``/api/neighbors`` (k=10) on the
    index's most frequent plain words, sent as soon as the server says where it serves. Rows: seconds to serving,
    first, median and slowest request (and which one was slowest), all of them, errors; notes: the medians'
    ratios."""
    import os
    import sys
    import urllib.parse

    from ..kinds.words import WordIndex

    words = [w for w in WordIndex.open(index, home=home).words[: 4 * requests] if w.isalpha()][:requests]
    paths = [f"/api/neighbors?{urllib.parse.urlencode({'index': index, 'word': w, 'k': 10})}" for w in words]
    rows = []
    for run in range(1, repeats + 1):
        for warm in (False, True):
            argv = [sys.executable, "-m", "lexprobe", "--home", str(home), "serve", "--port", "0",
                    "--warm" if warm else "--no-warm"]
            result = first_requests(argv, paths)
            ms = np.asarray(result["seconds"]) * 1000
            rows.append({"server": f"{'warm-up' if warm else 'no warm-up (baseline)'}, run {run}",
                         "ready_s": result["ready_s"], "first_ms": float(ms[0]), "p50_ms": float(np.median(ms)),
                         "max_ms": float(ms.max()), "slowest": int(ms.argmax()) + 1, "all_s": float(ms.sum() / 1000),
                         "errors": int(sum(s != 200 for s in result["statuses"]))})
    median = lambda key, warm: float(np.median([r[key] for r in rows if r["server"].startswith(warm)]))
    first, slow = ({w: median(key, w) for w in ("warm-up", "no warm-up")} for key in ("first_ms", "max_ms"))
    notes = [f"index {index}: {len(words)} single-client /api/neighbors requests (k=10) on its most frequent words, "
             f"sent as soon as `lexprobe serve --port 0` says where it serves (it loads its masked LM first, in both "
             f"modes); the compiled-code folder as earlier runs left it",
             f"first request: warm-up **{first['warm-up']:.0f} ms**, baseline {first['no warm-up']:.0f} ms "
             f"(**{first['no warm-up'] / first['warm-up']:.1f}x**); slowest of the {len(words)}: "
             f"{slow['warm-up']:.0f} ms vs {slow['no warm-up']:.0f} ms "
             f"(**{slow['no warm-up'] / slow['warm-up']:.1f}x**), medians of the runs. Without warm-up the index is "
             "opened by the first request and the kernels are loaded inside a later one (the first requests take a "
             "full scan in numpy meanwhile)",
             "with warm-up the server also readies t-SNE and UMAP on a background thread once it answers: it competes "
             "with these requests for the GIL",
             "load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg())]
    return {"rows": rows, "notes": notes}
