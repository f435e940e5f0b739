"""What every benchmark shares: the machine description, numpy's float32 GEMM rate as a yardstick, a timer,
and appending a result (markdown table + the command that produced it) to a file under ``benchmarks/``."""

from __future__ import annotations

import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..core.formatting import markdown_table


def machine_info() -> dict:
    """Cores, CPU model, BLAS, torch threads and library versions, for the record."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    blas = "unknown"
    try:
        cfg = np.show_config(mode="dicts")
        b = cfg.get("Build Dependencies", {}).get("blas", {})
        blas = f"{b.get('name', '?')} {b.get('version', '')}".strip()
    except Exception:  # older numpy: no dict mode
        pass
    info = {"cores": os.cpu_count(), "cpu": cpu, "blas": blas, "numpy": np.__version__,
            "python": platform.python_version()}
    try:
        import faiss

        info["faiss"] = faiss.__version__
    except ImportError:
        pass
    if "torch" in sys.modules:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    return info


def timed(fn: Callable[[], object], repeat: int = 1) -> tuple[float, object]:
    """Best wall time in seconds over ``repeat`` calls, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def numpy_gflops(n: int = 1024, repeat: int = 3) -> float:
    """float32 matrix-product rate of numpy's BLAS on this machine (GFLOP/s), the yardstick for kernels."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    seconds, _ = timed(lambda: a @ b, repeat=repeat)
    return 2 * n ** 3 / seconds / 1e9


def command_line() -> str:
    """The command that is running, as the user would type it."""
    args = [Path(sys.argv[0]).name] + sys.argv[1:]
    return " ".join(shlex.quote(a) for a in args)


def record(path: str | os.PathLike | None, title: str, rows: Sequence[dict], *, notes: Sequence[str] = (),
           columns: Sequence[str] | None = None) -> str:
    """Markdown for one benchmark run (title, command, machine, table, notes); appended to ``path`` if given."""
    info = machine_info()
    lines = [f"## {title}", "", f"- date: {time.strftime('%Y-%m-%d %H:%M')}",
             f"- command: `{command_line()}`",
             "- machine: " + ", ".join(f"{k} {v}" for k, v in info.items()), ""]
    lines += [markdown_table(rows, columns), ""]
    lines += [f"- {n}" for n in notes]
    text = "\n".join(lines).rstrip() + "\n"
    if path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(("\n" if path.stat().st_size else "") + text)
    return text
