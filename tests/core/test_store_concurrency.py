"""Concurrency: readers in other processes, querying while a writer inserts entries, see the index before or
after each insertion, never a mix (shards, tombstones and FAISS always of one version); a second writer on the
same index fails at once with one clear line (``LEXPROBE_LOCK_WAIT=0``, the default) or waits for the lock
(``LEXPROBE_LOCK_WAIT>0``), and the two never interleave.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest

import crash_helpers as ch

N_INS = 2000
DIM = 20

INSERT = r"""
import sys, numpy as np
from pathlib import Path
from lexprobe.kinds.words import insert_words
home, variants = Path(sys.argv[1]), sys.argv[2].split(",")
for v in variants:
    matrix = np.random.default_rng(int(v)).standard_normal((%(n)d, %(d)d)).astype(np.float32)
    insert_words(home, "w", [f"ins{i}" for i in range(%(n)d)], matrix, origin="test", settings={}, replace=True)
""" % {"n": N_INS, "d": DIM}

# Opens the index again and again until ``stop`` exists (``ready`` after its first good open); checks every
# open is one complete version.
READER = r"""
import json, sys, time, traceback
import numpy as np
from pathlib import Path
from lexprobe.kinds.words import WordIndex
home, expected = Path(sys.argv[1]), json.load(open(sys.argv[2]))
ready, stop = Path(sys.argv[3]), Path(sys.argv[4])
seen, errors, opens = {}, [], 0
deadline = time.monotonic() + 300
while not stop.exists() and time.monotonic() < deadline:
    try:
        index = WordIndex.open("w", home=home)
        opens += 1
        dead = set(index.store.tombstones.tolist())
        live = [i for i in range(index.store.count) if i not in dead]
        words = [index.words[i] for i in live]
        state = None
        for label, exp in expected.items():
            if words == exp["words"] and abs(float(np.asarray(index.raw)[live].sum()) - exp["sum"]) < 1e-2:
                state = label
        if state is None:
            errors.append(f"open {opens}: {len(words)} live rows match no version")
            continue
        rows = index.neighbors(exp_probe := expected[state]["probes"], 5).to_pylist()
        got = [[r["query"], r["word"], round(r["score"], 4)] for r in rows]
        if got != expected[state]["answers"]:
            errors.append(f"open {opens}: answers of version {state} differ: {got[:3]}")
        seen[state] = seen.get(state, 0) + 1
        ready.touch()
    except Exception as exc:
        errors.append(f"open {opens}: {type(exc).__name__}: {exc}")
print(json.dumps({"opens": opens, "seen": seen, "errors": errors[:20]}))
"""


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """A base index and, in a reference home, the clean results of inserting variants 1 and 2."""
    from lexprobe.kinds.words import WordIndex, build_word_index, insert_words

    root = tmp_path_factory.mktemp("concurrency")
    src = root / "base.txt"
    base_words, base_matrix = ch.write_glove(src, 20_000, DIM, 7)
    ref = root / "ref"
    build_word_index("w", str(src), home=ref, shard_rows=10_000)
    probes = ["word0", "word2", "ins0", "ins1"]
    expected = {}
    for label in ("base", "1", "2"):
        if label != "base":
            matrix = np.random.default_rng(int(label)).standard_normal((N_INS, DIM)).astype(np.float32)
            insert_words(ref, "w", [f"ins{i}" for i in range(N_INS)], matrix, origin="test", settings={},
                         replace=True)
        index = WordIndex.open("w", home=ref)
        dead = set(index.store.tombstones.tolist())
        live = [i for i in range(index.store.count) if i not in dead]
        use = probes if label != "base" else probes[:2]
        rows = index.neighbors(use, 5).to_pylist()
        expected[label] = {"words": [index.words[i] for i in live],
                           "sum": float(np.asarray(index.raw)[live].sum()), "probes": use,
                           "answers": [[r["query"], r["word"], round(r["score"], 4)] for r in rows]}
    (root / "expected.json").write_text(json.dumps(expected))
    return root, src


def _wait_until_ready(ready: list, readers: list, limit: float = 120) -> None:
    """Wait until every reader has made its first good open (its ``ready`` file exists)."""
    deadline = time.monotonic() + limit
    while not all(r.exists() for r in ready):
        for proc in readers:
            assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "readers did not start"
        time.sleep(0.05)


def _stop_readers(stop, readers: list) -> list[dict]:
    """Let the readers read the last version for a second, stop them, and return their reports."""
    time.sleep(1)
    stop.touch()
    reports = []
    for proc in readers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def test_readers_never_see_a_mix_during_insertions(versions, tmp_path):
    from lexprobe.kinds.words import build_word_index

    root, src = versions
    home = tmp_path / "home"
    build_word_index("w", str(src), home=home, shard_rows=10_000)
    ready, stop = [tmp_path / f"ready{i}" for i in range(2)], tmp_path / "stop"
    readers = [subprocess.Popen([sys.executable, "-c", READER, str(home), str(root / "expected.json"), str(r),
                                 str(stop)], env=ch.env(home), cwd=ch.REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for r in ready]
    _wait_until_ready(ready, readers)  # both have read the base version
    writer = subprocess.run([sys.executable, "-c", INSERT, str(home), "1,2,1,2,1,2,1,2"], env=ch.env(home),
                            cwd=ch.REPO, capture_output=True, text=True, timeout=120)
    assert writer.returncode == 0, writer.stderr
    reports = _stop_readers(stop, readers)
    print("readers:", reports, file=sys.stderr)
    for report in reports:
        assert report["errors"] == []
        assert report["opens"] >= 5 and set(report["seen"]) <= {"base", "1", "2"}
    seen = set().union(*(r["seen"] for r in reports))
    assert len(seen) >= 2  # the readers did overlap the insertions


def test_second_writer_fails_clearly_or_waits(cli, versions, tmp_path):
    """Another process holds the writer lock (this test, so the timing is deterministic): a writer fails at once
    with one line naming the lock, or after ``LEXPROBE_LOCK_WAIT`` seconds, or waits for the lock and then runs."""
    from lexprobe.core.store import write_lock

    root, src = versions
    big = tmp_path / "big.txt"
    big_words, big_matrix = ch.write_glove(big, 4_000, 50, 8)
    home = tmp_path / "home"
    assert cli("--home", home, "-q", "index", "words", "--vectors", big, "--name", "w").code == 0
    env0 = {k: v for k, v in ch.env(home).items() if k != "LEXPROBE_LOCK_WAIT"}
    build = ch.lexprobe_argv("-q", "index", "words", "--vectors", src, "--name", "w", "--replace")
    with write_lock(home, "w"):
        second = subprocess.run(build, env=env0, cwd=ch.REPO, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2, second.stderr
        assert second.stderr.count("\n") == 1 and "being written by another process" in second.stderr
        assert ".w.lock" in second.stderr
        inserter = subprocess.run([sys.executable, "-c", INSERT, str(home), "1"], env=env0, cwd=ch.REPO,
                                  capture_output=True, text=True, timeout=60)
        assert inserter.returncode != 0 and "LockedError" in inserter.stderr  # library callers get the exception
        began = time.monotonic()
        short = subprocess.run(build, env=ch.env(home, LEXPROBE_LOCK_WAIT="1"), cwd=ch.REPO, capture_output=True,
                               text=True, timeout=60)
        assert short.returncode == 2 and "being written by another process" in short.stderr
        assert time.monotonic() - began >= 1.0  # it did wait the second it was given
        waiter = subprocess.Popen(build, env=ch.env(home, LEXPROBE_LOCK_WAIT="60"), cwd=ch.REPO,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(3)
        assert waiter.poll() is None  # still waiting for the lock
        words, matrix = ch.word_state(home, "w")
        assert words == big_words and np.array_equal(matrix, big_matrix)  # the holder's version is intact
    _, err = waiter.communicate(timeout=120)
    assert waiter.returncode == 0, err
    assert cli("--home", home, "index", "verify", "w").code == 0
    words, _ = ch.word_state(home, "w")
    assert words == json.loads((root / "expected.json").read_text())["base"]["words"]
    history = json.loads((home / "w" / "manifest.json").read_text())["history"]
    assert [h["op"] for h in history] == ["build"]  # one clean rebuild, not two interleaved


def test_an_open_reader_keeps_its_version_after_a_swap(tmp_path):
    """A reader that opened the index before a writer swapped in a new version (and deleted the old folder)
    still loads the old version's side files: the FAISS file is held open, not looked up again by name."""
    from lexprobe.kinds.words import WordIndex, build_word_index, insert_words

    ch.write_glove(tmp_path / "v.txt", 1000, DIM, 1)
    build_word_index("w", str(tmp_path / "v.txt"), home=tmp_path / "h")
    before = WordIndex.open("w", home=tmp_path / "h").store
    insert_words(tmp_path / "h", "w", ["zz"], np.ones((1, DIM), np.float32), origin="test", settings={})
    assert not any((tmp_path / "h").glob(".w.tmp-*"))  # the old folder is gone
    from lexprobe.core import vector_index as vindex

    assert vindex.load(before.file_path("faiss")).ntotal == 1000
    assert WordIndex.open("w", home=tmp_path / "h").vectors.ntotal == 1001


OTA_WORDS = ["kumquat", "persimmon", "quince"]

# Opens the index until ``stop`` exists; every open must be one consistent version: the base words, plus all
# or none of the OTA words, and FAISS holding exactly the unit vectors of the shards' live rows.
OTA_READER = r"""
import json, sys, time
from pathlib import Path
import numpy as np
from lexprobe.kinds.words import WordIndex
home, base_count, ota = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
stop, ready = Path(sys.argv[4]), Path(sys.argv[5])
versions, errors, opens = set(), [], 0
deadline = time.monotonic() + 300
while not stop.exists() and time.monotonic() < deadline:
    try:
        index = WordIndex.open("sp", home=home)
        opens += 1
        live = sorted(index.word_to_id.values())
        words = [index.words[i] for i in live]
        extra = words[base_count:]
        if len(words) < base_count or extra not in ([], ota):
            errors.append(f"open {opens}: {len(words)} live words, extra {extra[:5]}")
        ids = index.vectors.ids()
        if sorted(ids.tolist()) != live:
            errors.append(f"open {opens}: FAISS ids differ from the live rows")
        for w in extra:
            i = index.word_to_id[w]
            if not np.allclose(index.vectors.index.reconstruct(int(i)), index.unit_of([i])[0], atol=1e-5):
                errors.append(f"open {opens}: FAISS vector of {w} is not its shard vector")
        versions.add(index.store.manifest["version_id"])
        ready.touch()
    except Exception as exc:
        errors.append(f"open {opens}: {type(exc).__name__}: {exc}")
print(json.dumps({"opens": opens, "versions": len(versions), "errors": errors[:20]}))
"""


def test_readers_never_see_a_mix_during_ota_insertions(tmp_path):
    """Readers in other processes while ``lexprobe ota --into`` inserts (and replaces) OTA vectors."""
    zygote = ch.Zygote("splade-tiny")
    try:
        home, stop = tmp_path / "home", tmp_path / "stop"
        assert zygote.run(home, "-q", "index", "words", "--vectors", "hf:splade-tiny", "--limit", "3000",
                          "--name", "sp") == 0
        ready = [tmp_path / f"ready{i}" for i in range(2)]
        readers = [subprocess.Popen([sys.executable, "-c", OTA_READER, str(home), "3000", ",".join(OTA_WORDS),
                                     str(stop), str(r)], env=ch.env(home), cwd=ch.REPO, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for r in ready]
        _wait_until_ready(ready, readers)
        for seed in ("1", "2"):
            assert zygote.run(home, "-q", "ota", "--model", "splade-tiny", "--into", "sp", "--iterations", "2",
                              "--seed", seed, "--replace", *OTA_WORDS) == 0
        reports = _stop_readers(stop, readers)
    finally:
        zygote.close()
    print("OTA readers:", reports, file=sys.stderr)
    for report in reports:
        assert report["errors"] == [] and report["opens"] >= 5
    assert max(r["versions"] for r in reports) >= 2  # the readers did overlap the insertions


def test_bad_lock_wait_setting_is_one_clear_line(cli, tmp_path, monkeypatch):
    ch.write_glove(tmp_path / "v.txt", 50, DIM, 1)
    monkeypatch.setenv("LEXPROBE_LOCK_WAIT", "soon")
    r = cli("--home", tmp_path / "home", "index", "words", "--vectors", tmp_path / "v.txt", "--name", "w")
    assert r.code == 2 and r.err.strip().count("\n") == 0 and "LEXPROBE_LOCK_WAIT" in r.err, r
    assert not (tmp_path / "home" / "w").exists()
