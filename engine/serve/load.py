"""A bounded load test over HTTP: a fixed number of GET requests from a few concurrent clients on loopback,
with every latency kept (no sampling), for ``lexprobe bench serve`` and the tests."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

import numpy as np


def _get(url: str, timeout: float) -> tuple[int, float]:
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, OSError):
        status = 0  # no answer at all
    return status, time.perf_counter() - t0


def latency_row(label: str, seconds: Sequence[float], statuses: Sequence[int]) -> dict:
    """Requests, errors (any status but 200) and latency percentiles in milliseconds of one group of requests."""
    ms = np.asarray(seconds, dtype=np.float64) * 1000
    return {"endpoint": label, "requests": len(ms), "errors": int(sum(s != 200 for s in statuses)),
            "p50_ms": float(np.percentile(ms, 50)), "p90_ms": float(np.percentile(ms, 90)),
            "p99_ms": float(np.percentile(ms, 99)), "max_ms": float(ms.max())}


def load_test(base: str, paths: Sequence[str], *, requests: int = 200, clients: int = 8,
              timeout: float = 120.0) -> dict:
    """Send ``requests`` GETs to ``base + path`` (cycling through ``paths``) from ``clients`` threads at once.

    Returns ``rows`` (one per endpoint, then ``all``: requests, errors, p50/p90/p99/max in ms), the wall time
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
        groups.setdefault(path.split("?")[0], []).append(i)
    rows = [latency_row(label, [seconds[i] for i in idx], [statuses[i] for i in idx]) for label, idx in groups.items()]
    rows.append(latency_row("all", seconds, statuses))
    return {"rows": rows, "errors": rows[-1]["errors"], "statuses": statuses, "seconds": wall,
            "requests_per_s": requests / wall, "clients": clients}
