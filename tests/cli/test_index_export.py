"""``index export --out``: it replaces only a regular file (a FIFO, a link or a device at the
target is refused and left as it was), never writes inside the index home (an index's manifest or shards, or a
file beside the indexes), and a full disk is one line naming the file."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

import crash_helpers as ch


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """A home with a words index ``w`` (200 x 8)."""
    return ch.words_home(tmp_path_factory.mktemp("export"), 200, 8, 1)


def _export(cli, home, target, *extra):
    return cli("--home", home, "index", "export", "w", "--out", target, *extra)


def _one_line(r, needle: str) -> str:
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], r
    return lines[0]


def test_a_regular_file_is_replaced(cli, exported, tmp_path):
    (tmp_path / "old.txt").write_text("old")
    assert _export(cli, exported, tmp_path / "old.txt").code == 0
    assert (tmp_path / "old.txt").read_text().startswith("200 8\n")


def test_a_fifo_is_refused_and_stays_a_fifo(cli, exported, tmp_path):
    fifo = tmp_path / "out.txt"
    os.mkfifo(fifo)
    _one_line(_export(cli, exported, fifo), "a FIFO, not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_link_is_refused_and_neither_it_nor_its_file_changes(cli, exported, tmp_path):
    (tmp_path / "real.txt").write_text("precious")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    _one_line(_export(cli, exported, tmp_path / "link.txt"), "a link, not a regular file")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "precious"


def test_a_device_is_refused(cli, exported, tmp_path):
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device needs root")
    _one_line(_export(cli, exported, device), "a device or socket, not a regular file")
    assert stat.S_ISCHR(os.lstat(device).st_mode)


@pytest.mark.parametrize("inside", ["w/manifest.json", "w/shards/part-00000.arrow", "beside.txt", ".w.lock"])
def test_nothing_is_written_inside_the_index_home(cli, exported, inside):
    before = {p: p.read_bytes() for p in exported.rglob("*") if p.is_file()}
    _one_line(_export(cli, exported, exported / inside), "inside the index home")
    assert {p: p.read_bytes() for p in exported.rglob("*") if p.is_file()} == before
    assert cli("--home", exported, "index", "verify", "w").code == 0


def test_a_full_disk_names_the_file(cli, tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip() or 'mount failed'})")
    try:
        home = ch.words_home(tmp_path, 3000, 20, 2)
        line = _one_line(cli("--home", home, "index", "export", "w", "--out", mnt / "big.txt"),
                         str(mnt / "big.txt"))
        assert "No space left on device" in line and not list(mnt.iterdir())
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
