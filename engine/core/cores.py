"""How many cores this process may use (its CPU affinity, which containers and ``taskset`` narrow, not the
machine's core count), and work split across them."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without affinity
        return max(1, os.cpu_count() or 1)


def in_parallel(m: int, work: Callable[[int, int], object], serial_below: int = 5) -> None:
    """Run ``work(a, b)`` over consecutive ranges covering 0..m, one per usable core, on threads; fewer than
    ``serial_below`` rows run here, in one call. The work must release the GIL (compiled kernels do: numba's
    ``nogil``, ctypes calls); a thread costs tens of microseconds, where numba's own parallel launch costs
    milliseconds on a busy machine."""
    parts = min(usable_cores(), m) if m >= serial_below else 1
    if parts <= 1:
        work(0, m)
        return
    bounds = [m * i // parts for i in range(parts + 1)]
    with ThreadPoolExecutor(parts) as pool:
        list(pool.map(work, bounds[:-1], bounds[1:]))
