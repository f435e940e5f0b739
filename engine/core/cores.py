"""How many cores this process may use: its CPU affinity, which containers and ``taskset`` narrow, not the
machine's core count."""

from __future__ import annotations

import os


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # platforms without affinity
        return max(1, os.cpu_count() or 1)
