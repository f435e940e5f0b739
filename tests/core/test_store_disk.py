"""Full disk and read-only home: a build or insertion that cannot write fails with one clear line (exit 2),
leaves the old index complete and answering, and leaves no temporary folder behind.

Tests run as root here, so ``chmod`` stops nothing: the home is a small tmpfs mount (full disk) or one
remounted read-only. Where mounting is not allowed, the tests skip and say why.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import crash_helpers as ch


def _mount_tmpfs(target: Path, size: str) -> None:
    target.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip() or 'mount failed'}): "
                    "the full-disk and read-only tests need mount rights")


@pytest.fixture
def small_fs(tmp_path):
    """A 3 MiB tmpfs, unmounted afterwards."""
    mnt = tmp_path / "mnt"
    _mount_tmpfs(mnt, "3m")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _one_line(r) -> str:
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r
    return lines[0]


def _intact(cli, home, name, words, matrix) -> None:
    assert cli("--home", home, "index", "verify", name).code == 0
    got_words, got_matrix = ch.word_state(home, name)
    assert got_words == words and np.array_equal(got_matrix, matrix)
    r = cli("--home", home, "query", "neighbors", "--index", name, "word0", "-k", "3")
    assert r.code == 0, r
    assert not ch.stray_temp(home, name), list(home.iterdir())


def test_full_disk_build_fails_clearly_and_keeps_the_old_index(cli, small_fs, tmp_path):
    home = small_fs / "home"
    small_words, small_matrix = ch.write_glove(tmp_path / "small.txt", 2000, 20, 1)
    ch.write_glove(tmp_path / "big.txt", 20_000, 50, 2)  # 4 MB of float32: cannot fit in 3 MiB
    assert cli("--home", home, "index", "words", "--vectors", tmp_path / "small.txt", "--name", "w").code == 0
    line = _one_line(cli("--home", home, "index", "words", "--vectors", tmp_path / "big.txt", "--name", "w",
                         "--shard-rows", "5000", "--replace"))
    assert "No space left on device" in line and str(home / "w") in line  # the file named
    _intact(cli, home, "w", small_words, small_matrix)
    # a build under another name fails the same way and leaves nothing half-written
    _one_line(cli("--home", home, "index", "words", "--vectors", tmp_path / "big.txt", "--name", "other"))
    assert not (home / "other").exists() and not ch.stray_temp(home, "other")


def test_full_disk_insertion_fails_clearly_and_keeps_the_old_index(small_fs, tmp_path):
    from lexprobe.core.errors import LexprobeError
    from lexprobe.kinds.words import build_word_index, insert_words

    home = small_fs / "home"
    words, matrix = ch.write_glove(tmp_path / "small.txt", 2000, 20, 1)
    build_word_index("w", str(tmp_path / "small.txt"), home=home)
    big = np.random.default_rng(0).standard_normal((40_000, 20)).astype(np.float32)
    with pytest.raises((OSError, LexprobeError)) as info:
        insert_words(home, "w", [f"n{i}" for i in range(40_000)], big, origin="test", settings={})
    assert "No space left on device" in str(info.value) or info.value.errno == 28
    got_words, got_matrix = ch.word_state(home, "w")
    assert got_words == words and np.array_equal(got_matrix, matrix)
    assert not ch.stray_temp(home, "w")


def test_read_only_home_fails_clearly_and_still_answers(cli, small_fs, tmp_path):
    home = small_fs / "home"
    words, matrix = ch.write_glove(tmp_path / "small.txt", 2000, 20, 1)
    assert cli("--home", home, "index", "words", "--vectors", tmp_path / "small.txt", "--name", "w").code == 0
    proc = subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot remount read-only here: {proc.stderr.strip()}")
    line = _one_line(cli("--home", home, "index", "words", "--vectors", tmp_path / "small.txt", "--name", "w2"))
    assert "Read-only file system" in line
    line = _one_line(cli("--home", home, "index", "words", "--vectors", tmp_path / "small.txt", "--name", "w",
                         "--replace"))
    assert "Read-only file system" in line
    _intact(cli, home, "w", words, matrix)  # reading, verifying and querying need no write access
    r = cli("--home", home, "sql", "select count(*) as n from words", "--format", "csv")
    assert r.code == 0 and r.out.split() == ["n", "2000"], r
