"""Helpers of the reliability tests: synthetic vector files, running ``lexprobe`` in child processes, killing
them with SIGKILL at a seeded moment or at an exact I/O step, and checking that an index is a complete version;
and :func:`time_limit`, which turns a reader that hangs (on a FIFO, in quadratic work) into a failing test.

Commands run in forked children of one warm process (:class:`Zygote`: torch, transformers and the engine
imported once), so that a command that loads a model starts in about a second and 20 kills per writer stay
affordable. Two ways to crash a writer:

- ``Zygote.run(..., kill_after=s)`` sends SIGKILL to the child after ``s`` seconds (random points);
- ``Zygote.run(..., step=S, nth=n)`` makes the child SIGKILL itself at its n-th call of one I/O step
  (``fsync``, ``rename``, the directory swap, ``rmtree``, FAISS write, shard write): every step of the write
  protocol gets hit deterministically, not just the ones a timer happens to land on.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise TimeoutError in the block once it has run ``seconds`` (SIGALRM): a hang fails instead of blocking."""
    def fire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


REPO = Path(__file__).resolve().parents[1]
CRASH_STEPS = ("fsync", "rename", "exchange", "rmtree", "faiss_write", "shard_write")

# The parent never computes with torch (model loads only) and runs torch on one thread, so no OpenMP pool
# exists at fork time (a pool inherited by a forked child can deadlock it).
ZYGOTE = r"""
import json, os, shutil, signal, sys
import torch, transformers, transformers.models.bert  # the slow imports, once
torch.set_num_threads(1)
import lexprobe.cli.root, lexprobe.sources.encoder, lexprobe.core.vector_index, lexprobe.rare_words.ota, lexprobe.core.store, lexprobe.kinds.tokens
from lexprobe.sources.models import load_encoder, load_tokenizer
for name in sys.argv[1:]:  # warm-up: transformers imports the rest of its modules on the first load
    load_tokenizer(name), load_encoder(name)

def crash_at(step, nth):
    owner, attr = {"fsync": (os, "fsync"), "rename": (os, "rename"), "exchange": (lexprobe.core.store, "_exchange"),
                   "rmtree": (shutil, "rmtree"), "faiss_write": (lexprobe.core.vector_index, "save"),
                   "shard_write": (lexprobe.core.store.StoreWriter, "_write_shard")}[step]
    real, calls = getattr(owner, attr), [0]
    def hit(*a, **k):
        calls[0] += 1
        if calls[0] == nth:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*a, **k)
    setattr(owner, attr, hit)

for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.environ.update(job["env"])
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        code = 0
        try:
            if job["step"]:
                crash_at(job["step"], job["nth"])
            if job["code"]:
                exec(job["code"], {"__name__": "__job__", "argv": job["argv"]})
            else:
                lexprobe.cli.root.main(job["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            code = 99
        os._exit(code)
    print(pid, flush=True)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


class Zygote:
    """Runs ``lexprobe`` commands in forked children of one warm process; SIGKILLs them on request."""

    def __init__(self, *models: str):
        self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE, *models], env=env(Path("/nonexistent")),
                                     cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)

    def run(self, home: Path, *args, kill_after: float | None = None, step: str | None = None, nth: int = 0,
            code: str | None = None, limit: float = 60.0, _retries: int = 2, **extra: str) -> int:
        """Exit code of ``lexprobe ARGS`` (or of Python ``code`` given ``argv``) under ``home``: -9 when it was
        killed, after ``kill_after`` seconds or at the ``nth`` call of ``step``; 99 for a traceback. A child still
        running after ``limit`` seconds is killed too (a hung child is one more crash, never a hung test): a child
        forked from a process that loaded torch can deadlock at start, rarely, an artefact of this harness (the
        ``lexprobe`` commands never fork). A run meant to complete is then run again, up to twice."""
        job = {"argv": [str(a) for a in args], "env": {"LEXPROBE_HOME": str(home), **extra}, "step": step,
               "nth": nth, "code": code}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        pid = int(self.proc.stdout.readline())
        if kill_after is not None:
            time.sleep(kill_after)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline, hung = time.monotonic() + limit, False
        with contextlib.suppress(ProcessLookupError):
            while time.monotonic() < deadline:  # the zygote reaps the child: then it is gone
                os.kill(pid, 0)
                time.sleep(0.05)
            os.kill(pid, signal.SIGKILL)
            hung = True
        rc = int(self.proc.stdout.readline())
        if hung and kill_after is None and step is None and _retries:
            return self.run(home, *args, code=code, limit=limit, _retries=_retries - 1, **extra)
        return rc

    def timed(self, home: Path, *args, code: str | None = None) -> float:
        """Seconds one complete run takes (it must succeed)."""
        t0 = time.perf_counter()
        assert self.run(home, *args, code=code) == 0, args
        return time.perf_counter() - t0

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


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


def words_home(root: Path, n: int, dim: int, seed: int, name: str = "w", **build) -> Path:
    """``root/home`` holding a words index ``name`` built (``build``: builder options) from a :func:`write_glove`
    file ``root/v.txt``."""
    from lexprobe.kinds.words import build_word_index

    write_glove(root / "v.txt", n, dim, seed)
    build_word_index(name, str(root / "v.txt"), home=root / "home", **build)
    return root / "home"


def env(home: Path, **extra: str) -> dict:
    out = dict(os.environ, LEXPROBE_HOME=str(home), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out.update(extra)
    return out


def lexprobe_argv(*args) -> list[str]:
    return [sys.executable, "-m", "lexprobe", *map(str, args)]


def word_state(home: Path, name: str) -> tuple[list[str], np.ndarray]:
    """(words, raw vectors) of the live rows of a words index, after full verification."""
    from lexprobe.kinds.words import WordIndex

    index = WordIndex.open(name, home=home)
    dead = set(index.store.tombstones.tolist())
    live = [i for i in range(index.store.count) if i not in dead]
    return [index.words[i] for i in live], np.asarray(index.raw)[live].copy()


def neighbor_answers(home: Path, name: str, words: list[str], k: int = 5) -> list[tuple]:
    """Neighbour answers (query, word) with scores rounded: equal for two equal indexes."""
    from lexprobe.kinds.words import WordIndex

    rows = WordIndex.open(name, home=home).neighbors(words, k).to_pylist()
    return [(r["query"], r["word"], round(r["score"], 5)) for r in rows]


def stray_temp(home: Path, name: str) -> list[Path]:
    """Temporary folders a writer leaves when it dies (cleaned by the next writer)."""
    return sorted(home.glob(f".{name}.tmp-*")) + sorted(home.glob(f".{name}.old-*"))


def fingerprint(home: Path, name: str) -> tuple:
    """What a version of an index is, byte for byte: (kind, count, tombstones, shard CRCs, side-file CRCs),
    after full verification (checksums on open, FAISS size against the shards)."""
    from lexprobe.cli.index import verify_store
    from lexprobe.core.store import open_index

    store = open_index(home, name)
    verify_store(store)
    m = store.manifest
    return (m["kind"], m["count"], tuple(m["tombstones"]), tuple((s["rows"], s["crc32"]) for s in m["shards"]),
            tuple(sorted((k, f["crc32"]) for k, f in m["files"].items())))
