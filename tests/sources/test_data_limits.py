"""Datasets and outputs under hostile conditions: ``data fetch --from`` takes a folder or a
regular file only (a FIFO would block it for ever), archives are limited in members and unpacked bytes before
anything is written, and a full disk is one line naming where the write went (the data home, the run folder).
The full-disk tests mount a small tmpfs (root only; they skip with the reason elsewhere)."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest

from lexprobe.core.errors import InputError, LexprobeError
from lexprobe.sources import datahome


def _one_line(r) -> str:
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r
    return lines[0]


def _google_zip(path: Path, extra: int = 0, extra_bytes: int = 0) -> Path:
    """A zip holding ``questions-words.txt`` (the google marker), ``extra`` small files and one file of
    ``extra_bytes`` zeros."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("questions-words.txt", ": capital-common-countries\nAthens Greece Baghdad Iraq\n")
        for i in range(extra):
            zf.writestr(f"notes/{i}.txt", "x")
        if extra_bytes:
            zf.writestr("zeros.bin", b"\0" * extra_bytes)
    return path


def test_fetch_from_a_fifo_is_refused_not_waited_on(cli, tmp_path):
    fifo = tmp_path / "questions-words.txt"
    os.mkfifo(fifo)
    done = threading.Event()

    def unblock():
        if not done.wait(20):
            with open(fifo, "wb"):
                pass

    threading.Thread(target=unblock, daemon=True).start()
    try:
        line = _one_line(cli("data", "fetch", "google", "--from", fifo, "--data-home", tmp_path / "data"))
    finally:
        done.set()
    assert "FIFO" in line and "not a regular file" in line
    assert not (tmp_path / "data" / "google").exists()


def test_archive_members_are_limited_in_count(tmp_path, monkeypatch):
    archive = _google_zip(tmp_path / "many.zip", extra=30)
    monkeypatch.setenv("LEXPROBE_MAX_MEMBERS", "20")
    with pytest.raises(InputError, match=r"many.zip: 31 archive members, more than 20 \(LEXPROBE_MAX_MEMBERS"):
        datahome.fetch("google", archive, home=tmp_path / "data")
    assert not (tmp_path / "data" / "google").exists() and not list((tmp_path / "data").glob(".google*"))
    monkeypatch.delenv("LEXPROBE_MAX_MEMBERS")
    assert datahome.fetch("google", archive, home=tmp_path / "data")["files"] == 31


def test_archive_unpacked_size_is_limited(tmp_path, monkeypatch):
    archive = _google_zip(tmp_path / "bomb.zip", extra_bytes=3_000_000)  # 3 MB of zeros in a few kB
    monkeypatch.setenv("LEXPROBE_MAX_UNPACK", "1000000")
    with pytest.raises(InputError, match=r"bomb.zip: unpacks to 30000\d\d bytes, more than 1000000"):
        datahome.fetch("google", archive, home=tmp_path / "data")
    assert not (tmp_path / "data" / "google").exists()


def test_a_tar_past_the_member_limit_is_refused(tmp_path, monkeypatch):
    archive = tmp_path / "many.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        for i in range(25):
            data = b"x"
            info = tarfile.TarInfo(f"d/{i}.txt")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    monkeypatch.setenv("LEXPROBE_MAX_MEMBERS", "10")
    with pytest.raises(InputError, match=r"many.tar.gz: 11 archive members, more than 10"):
        datahome.fetch("google", archive, home=tmp_path / "data")


def test_the_default_unpack_limit_scales_with_the_archive(tmp_path, monkeypatch):
    """Without the variable: the floor, or 100 times the archive's size when that is more."""
    archive = _google_zip(tmp_path / "bomb.zip", extra_bytes=3_000_000)
    monkeypatch.delenv("LEXPROBE_MAX_UNPACK", raising=False)
    monkeypatch.setattr(datahome, "UNPACK_FLOOR", 1000)
    cap = 100 * archive.stat().st_size
    assert cap < 3_000_000
    with pytest.raises(InputError, match=rf"bomb.zip: unpacks to 30000\d\d bytes, more than {cap} "):
        datahome.fetch("google", archive, home=tmp_path / "data")
    monkeypatch.setattr(datahome, "UNPACK_FLOOR", 4_000_000)
    assert datahome.fetch("google", archive, home=tmp_path / "data")["files"] == 2


# ---------------------------------------------------------------------------------------------- full disk


@pytest.fixture
def tiny_fs(tmp_path):
    """A 1 MiB tmpfs, unmounted afterwards."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip() or 'mount failed'})")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_during_fetch_names_the_data_home(cli, tiny_fs, tmp_path):
    source = tmp_path / "google"
    source.mkdir()
    (source / "questions-words.txt").write_text(": capital\nAthens Greece Baghdad Iraq\n" * 60_000)  # 2.6 MB
    line = _one_line(cli("data", "fetch", "google", "--from", source, "--data-home", tiny_fs / "data"))
    assert str(tiny_fs / "data" / "google") in line and "No space left on device" in line
    assert not list((tiny_fs / "data").glob(".google*"))


def test_a_full_disk_in_a_run_folder_names_the_file(tiny_fs):
    from lexprobe.runs.run_dir import RunDir

    run = RunDir(tiny_fs / "run")
    with pytest.raises(LexprobeError, match=rf"{tiny_fs / 'run' / 'big.md'}: cannot write it \(No space left"):
        run.write_text("big.md", "x" * 3_000_000)
    with pytest.raises(LexprobeError, match=rf"{tiny_fs / 'run' / 'big.parquet'}: cannot write it"):
        run.write_table("big", [{"text": os.urandom(3_000_000).hex()}], markdown=False)
    assert not [p.name for p in (tiny_fs / "run").iterdir() if p.name.startswith(".")]
