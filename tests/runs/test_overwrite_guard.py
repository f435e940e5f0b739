"""A run may delete only what a run wrote: ``--overwrite`` deletes the files the previous run's
``run.json`` lists, inside that folder, and refuses the index and data homes, folders holding an index, a
dataset or a ``.git`` at any depth, folders lexprobe did not record (``/etc``-like ones), linked folders;
``--out ""`` is refused. Runs go through the real CLI on a small index; the record's odd entries through the
library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import crash_helpers as ch
from lexprobe.core.errors import LexprobeError
from lexprobe.runs.run_dir import RunDir, begin_run, end_run, run_record


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, Path]:
    """A home with a words index ``w`` (200 x 8) and a one-relation BATS file over its words."""
    root = tmp_path_factory.mktemp("runs")
    home = ch.words_home(root, 200, 8, 1)
    (root / "rel.txt").write_text("".join(f"word{2 * i}\tword{2 * i + 2}\n" for i in range(12)))
    return home, root / "rel.txt"


def _run(cli, small, out, *extra, method="add"):
    home, rel = small
    return cli("--home", home, "-q", "run", "analogy", "--index", "w", "--dataset", f"bats:{rel}", "--method",
               method, "--no-honest", "--out", out, *extra)


def _one_line(r) -> str:
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r
    return lines[0]


def _tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None
            for p in sorted(root.rglob("*"))}


def test_overwrite_deletes_only_the_files_the_previous_run_listed(cli, small, tmp_path):
    out = tmp_path / "out"
    assert _run(cli, small, out).code == 0
    listed = json.loads((out / "run.json").read_text())["files"]
    assert "questions.parquet" in listed and "summary.json" in listed
    assert any(f.endswith(".svg") for f in listed)  # a plot's siblings too
    assert sorted(listed) == sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                                    if p.is_file() and p.name != "run.json")
    (out / "notes.txt").write_text("mine")
    (out / "mine").mkdir()
    (out / "mine" / "draft.md").write_text("mine too")
    r = _run(cli, small, out, method="mul")
    assert _one_line(r) and "--overwrite" in r.err
    assert _run(cli, small, out, "--overwrite", method="mul").code == 0
    assert (out / "notes.txt").read_text() == "mine" and (out / "mine" / "draft.md").read_text() == "mine too"
    record = json.loads((out / "run.json").read_text())
    assert record["method"] == "mul" and "notes.txt" not in record["files"]


def test_the_index_home_is_never_emptied(cli, small, tmp_path):
    home, _ = small
    before = _tree(home)
    (home / "run.json").write_text(json.dumps({"command": "x", "files": ["w/manifest.json"]}))
    try:
        line = _one_line(_run(cli, small, home, "--overwrite"))
        assert "index home" in line
        assert _tree(home) == {**before, "run.json": (home / "run.json").read_bytes()}
    finally:
        (home / "run.json").unlink()
    assert cli("--home", home, "index", "verify", "w").code == 0


def test_a_folder_above_the_index_home_is_never_emptied(cli, small):
    home, _ = small
    before = _tree(home.parent)
    line = _one_line(_run(cli, small, home.parent, "--overwrite"))
    assert "index home" in line and _tree(home.parent) == before


@pytest.mark.parametrize("what", ["git", "index", "dataset"])
def test_a_folder_holding_a_repository_an_index_or_a_dataset_is_refused(cli, small, tmp_path, what):
    out = tmp_path / "out"
    assert _run(cli, small, out).code == 0
    deep = out / "a" / "b"
    deep.mkdir(parents=True)
    if what == "git":
        (deep / ".git").mkdir()
        (deep / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    elif what == "index":
        (deep / "idx").mkdir()
        (deep / "idx" / "manifest.json").write_text("{}")
    else:
        (deep / "FETCH.json").write_text("{}")
    before = _tree(out)
    line = _one_line(_run(cli, small, out, "--overwrite", method="mul"))
    assert {"git": "repository", "index": "index", "dataset": "dataset"}[what] in line
    assert _tree(out) == before


def test_a_folder_lexprobe_did_not_record_is_refused(cli, small, tmp_path):
    """An ``/etc``-like folder: files, no run.json; outside the current folder."""
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "passwd").write_text("root:x:0:0\n")
    (etc / "hosts").write_text("127.0.0.1 localhost\n")
    line = _one_line(_run(cli, small, etc, "--overwrite"))
    assert "did not record" in line
    assert sorted(p.name for p in etc.iterdir()) == ["hosts", "passwd"]


def test_a_linked_out_folder_is_refused(cli, small, tmp_path):
    real = tmp_path / "real"
    assert _run(cli, small, real).code == 0
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    before = _tree(real)
    line = _one_line(_run(cli, small, tmp_path / "link", "--overwrite", method="mul"))
    assert "link" in line and _tree(real) == before


def test_an_empty_out_is_refused(cli, small, tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    (here / "keep.txt").write_text("keep")
    monkeypatch.chdir(here)
    line = _one_line(_run(cli, small, ""))
    assert "--out is empty" in line
    assert [p.name for p in here.iterdir()] == ["keep.txt"]


@pytest.mark.parametrize("entry", ["../victim.txt", "/ABS/victim.txt", "sub/../../victim.txt", "link/victim.txt",
                                   "", ".", "sub", None, 7])
def test_a_listed_entry_never_leads_outside_the_folder(tmp_path, entry):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "x.md").write_text("x")
    (out / "link").symlink_to(tmp_path, target_is_directory=True)
    entry = entry.replace("/ABS", str(tmp_path)) if isinstance(entry, str) else entry
    (out / "run.json").write_text(json.dumps({"command": "old", "files": [entry, "sub/x.md"]}))
    begin_run(out, run_record("lexprobe run new", {}), overwrite=True)
    try:
        RunDir(out).write_text("new.md", "new")
    finally:
        end_run()
    assert victim.read_text() == "precious"
    assert not (out / "sub" / "x.md").exists() and (out / "link").is_symlink()
    assert json.loads((out / "run.json").read_text())["files"] == ["new.md"]


def test_a_run_killed_half_way_still_lists_what_it_wrote(tmp_path):
    out = tmp_path / "out"
    begin_run(out, run_record("lexprobe run a", {}))
    run = RunDir(out)
    run.write_text("a.md", "a")
    run.write_table("t", [{"x": 1}])
    listed = json.loads((out / "run.json").read_text())["files"]  # no end_run: as if killed here
    end_run()
    assert sorted(listed) == ["a.md", "t.md", "t.parquet"]


def test_a_record_without_a_file_list_is_not_emptied(tmp_path):
    """A run.json from before files were listed (or hand-made) deletes nothing."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"command": "lexprobe run old"}))
    (out / "table.parquet").write_bytes(b"x")
    with pytest.raises(LexprobeError, match="did not record"):
        begin_run(out, run_record("lexprobe run new", {}), overwrite=True)
    assert (out / "table.parquet").exists()
