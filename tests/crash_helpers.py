"""Helpers of the reliability tests: synthetic vector files, running ``lexprobe`` in a subprocess, killing it
with SIGKILL at a seeded moment or at an exact I/O step, and checking that an index is a complete version.

Two ways to crash a writer:

- :func:`kill_after` starts the real ``lexprobe`` command and sends SIGKILL after a delay (random points);
- :func:`crash_at_step` runs the same command through :data:`CRASH_WRAPPER`, which SIGKILLs the process at
  its N-th call of one I/O step (``fsync``, ``rename``, the directory swap, ``rmtree``, FAISS write, shard
  write): every step of the write protocol gets hit deterministically, not just the ones a timer happens to land on.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

# Runs ``engine.cli.main`` with one I/O step patched to SIGKILL the process on its N-th call.
CRASH_WRAPPER = r"""
import os, signal, sys
step, nth = os.environ["CRASH_STEP"], int(os.environ["CRASH_NTH"])
calls = {"n": 0}
def patch(owner, attr):
    real = getattr(owner, attr)
    def hit(*a, **k):
        calls["n"] += 1
        if calls["n"] == nth:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*a, **k)
    setattr(owner, attr, hit)
import shutil
import engine.store as store, engine.index as vindex
if step == "fsync": patch(os, "fsync")
elif step == "rename": patch(os, "rename")
elif step == "exchange": patch(store, "_exchange")
elif step == "rmtree": patch(shutil, "rmtree")
elif step == "faiss_write": patch(vindex, "save")
elif step == "shard_write": patch(store.StoreWriter, "_write_shard")
else: raise SystemExit(f"unknown step {step}")
from engine.cli import main
main(sys.argv[1:])
"""
CRASH_STEPS = ("fsync", "rename", "exchange", "rmtree", "faiss_write", "shard_write")


def write_glove(path: Path, n: int, dim: int, seed: int) -> tuple[list[str], np.ndarray]:
    """A GloVe text file of ``n`` random words x ``dim`` (values printed with 5 decimals); returns its content."""
    rng = np.random.default_rng(seed)
    words = [f"w{seed}_{i}" if i % 2 else f"word{i}" for i in range(n)]  # half the words shared between seeds
    matrix = rng.standard_normal((n, dim)).round(5).astype(np.float32)
    buf = io.StringIO()
    np.savetxt(buf, matrix, fmt="%.5f")
    path.write_text("".join(f"{w} {row}\n" for w, row in zip(words, buf.getvalue().splitlines())),
                    encoding="utf-8")
    return words, matrix


def env(home: Path, **extra: str) -> dict:
    out = dict(os.environ, LEXPROBE_HOME=str(home), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out.update(extra)
    return out


def lexprobe_argv(*args) -> list[str]:
    return [sys.executable, "-m", "engine", *map(str, args)]


def run_lexprobe(home: Path, *args, timeout: float = 120, **extra) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess to completion."""
    return subprocess.run(lexprobe_argv(*args), env=env(home, **extra), cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)


def kill_after(argv: list[str], environ: dict, delay: float) -> int:
    """Start ``argv``, SIGKILL it after ``delay`` seconds (if still running); its return code (-9 when killed)."""
    proc = subprocess.Popen(argv, env=environ, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    return proc.wait(timeout=60)


def crash_at_step(home: Path, step: str, nth: int, *args, timeout: float = 120) -> int:
    """Run ``lexprobe ARGS`` with SIGKILL at the ``nth`` call of ``step``; its return code (-9 when it hit)."""
    argv = [sys.executable, "-c", CRASH_WRAPPER, *map(str, args)]
    proc = subprocess.run(argv, env=env(home, CRASH_STEP=step, CRASH_NTH=str(nth)), cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)
    return proc.returncode


def timed_run(argv: list[str], environ: dict) -> float:
    """Wall time of one complete run (which must succeed)."""
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=environ, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return time.perf_counter() - t0


def word_state(home: Path, name: str) -> tuple[list[str], np.ndarray]:
    """(words, raw vectors) of the live rows of a words index, after full verification."""
    from engine.words import WordIndex

    index = WordIndex.open(home, name)
    dead = set(index.store.tombstones.tolist())
    live = [i for i in range(index.store.count) if i not in dead]
    return [index.words[i] for i in live], np.asarray(index.raw)[live].copy()


def neighbor_answers(home: Path, name: str, words: list[str], k: int = 5) -> list[tuple]:
    """Neighbour answers (query, word) with scores rounded: equal for two equal indexes."""
    from engine.words import WordIndex

    rows = WordIndex.open(home, name).neighbors(words, k)
    return [(r["query"], r["word"], round(r["score"], 5)) for r in rows]


def stray_temp(home: Path, name: str) -> list[Path]:
    """Temporary folders a writer leaves when it dies (cleaned by the next writer)."""
    return sorted(home.glob(f".{name}.tmp-*")) + sorted(home.glob(f".{name}.old-*"))
