"""The SQL catalog and the index listing against hostile homes: folder names are
never pasted into SQL, folders that are not valid indexes are skipped and named, case collisions and damaged
indexes do not take the healthy ones down, and ``lexprobe sql`` reads only the indexes' views unless
``--unsafe`` is given.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import crash_helpers as ch


@pytest.fixture(scope="module")
def src(tmp_path_factory) -> Path:
    """A home with one words index ``w`` (200 x 8)."""
    return ch.words_home(tmp_path_factory.mktemp("sql_src"), 200, 8, 5)


@pytest.fixture
def home(src, tmp_path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(src, home)
    return home


def _count(cli, home, view: str, *extra) -> tuple[int, str]:
    r = cli("--home", home, "sql", f'select count(*) as n from "{view}"', "--format", "json", *extra)
    assert r.code == 0, r
    return json.loads(r.out)[0]["n"], r.err


@pytest.mark.parametrize("folder", ["a'b", "x' AS index_name, 1 FROM (select 1)); COPY (SELECT 42) TO 'pwned.csv'; --",
                                    'q"uote', "UPPER", "sp ace"])
def test_folder_names_never_reach_sql(cli, home, tmp_path, monkeypatch, folder):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(home / "w", home / folder)
    n, err = _count(cli, home, "w")
    assert n == 200
    assert not (tmp_path / "pwned.csv").exists()
    n, _ = _count(cli, home, "words")
    if folder == "UPPER":  # a valid name: served
        assert n == 400 and _count(cli, home, "UPPER")[0] == 200
    else:  # not a valid index name: skipped and named
        assert n == 200 and folder in err
    assert not (tmp_path / "pwned.csv").exists()


def test_case_collisions_and_view_names_on_disk_do_not_break_sql(cli, home):
    """Folders made by hand (builds refuse such names): names SQL cannot tell apart are all left out and
    named; the other indexes are served."""
    for folder in ("other", "W", "Words", "tokens"):
        shutil.copytree(home / "w", home / folder)
    n, err = _count(cli, home, "words")
    assert n == 200 and _count(cli, home, "other")[0] == 200
    for name in ("'W'", "'w'", "/Words:", "/tokens:"):
        assert name in err, (name, err)
    r = cli("--home", home, "sql", "select count(*) as n from tokens", "--format", "json")
    assert r.code == 2 and "tokens" in r.err and len(r.err.strip().splitlines()) == 1  # not posing as a view


def _flip(path: Path, where: int = 100) -> None:
    data = bytearray(path.read_bytes())
    data[where] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_index_does_not_take_down_the_others(cli, home):
    shutil.copytree(home / "w", home / "bad")
    shutil.copytree(home / "w", home / "garbled")
    _flip(next((home / "bad" / "shards").iterdir()))
    (home / "garbled" / "manifest.json").write_text("{not json")
    n, err = _count(cli, home, "w")
    assert n == 200 and "bad" in err and "garbled" in err
    assert _count(cli, home, "words")[0] == 200
    r = cli("--home", home, "index", "list", "--format", "json")
    assert r.code == 0, r
    status = {row["name"]: row["status"] for row in json.loads(r.out)}
    assert status["w"] == "ok" and status["garbled"].startswith("damaged") and set(status) == {"w", "bad", "garbled"}
    r = cli("--home", home, "index", "list", "--verify", "--format", "json")
    status = {row["name"]: row["status"] for row in json.loads(r.out)}
    assert status["w"] == "ok" and status["bad"].startswith("damaged") and "part-00000" in status["bad"]


@pytest.mark.parametrize("statement", [
    "select * from read_csv('/etc/passwd')",
    "select * from read_text('/etc/hostname')",
    "COPY (select 1) TO 'out.csv'",
    "ATTACH 'other.db'",
    "INSTALL httpfs",
    "SET enable_external_access = true",
    "select * from glob('/*')",
])
def test_sql_is_sandboxed_by_default(cli, home, tmp_path, monkeypatch, statement):
    monkeypatch.chdir(tmp_path)
    r = cli("--home", home, "sql", statement)
    assert r.code == 2 and r.err.startswith("error: sql:") and len(r.err.strip().splitlines()) == 1, r
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


def test_sql_cannot_write_an_index_manifest(cli, home):
    manifest = home / "w" / "manifest.json"
    before = manifest.read_bytes()
    r = cli("--home", home, "sql", f"COPY (select 1 as x) TO '{manifest}' (FORMAT json)")
    assert r.code == 2 and manifest.read_bytes() == before
    assert cli("--home", home, "index", "verify", "w").code == 0


def test_unsafe_opts_in_to_the_file_system(cli, home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "extra.csv").write_text("a,b\n1,2\n")
    r = cli("--home", home, "sql", "--unsafe", "select count(*) as n from read_csv('extra.csv') join w on true",
            "--format", "json")
    assert r.code == 0 and json.loads(r.out) == [{"n": 200}], r
