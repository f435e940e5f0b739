"""Index names, replacement and lock leftovers: a name is checked exactly,
before any lock, file or work; a name that collides with a catalog view or (case-insensitively) with another
index is refused; a build replaces an existing index only with ``--replace`` and never the index it reads;
cleanup touches only the index's own temporary names; lock files do not pile up; a crash between the two
fallback renames leaves the index visible to readers.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import crash_helpers as ch


@pytest.fixture(scope="module")
def vectors(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("names") / "v.txt"
    ch.write_glove(path, 300, 8, 4)
    return path


def _one_error(r, *needles: str) -> None:
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r
    for needle in needles:
        assert needle in lines[0], (needle, r.err)


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("bad", ["/../../x/victim/data", "../victim", "a/b", "ok\n", ".hidden", "", "a b",
                                 "x" * 129, "a\x00b", "é"])
def test_bad_names_touch_nothing_outside_or_inside_the_home(cli, vectors, tmp_path, bad):
    home = tmp_path / "h1" / "h2"
    victim = tmp_path / "x" / "victim"
    (victim / "data.old-1").mkdir(parents=True)
    (victim / "data.tmp-1").mkdir()
    (victim / "data.old-1" / "keep").write_text("keep")
    before = _tree(tmp_path)
    for argv in (("index", "words", "--vectors", vectors, "--name", bad),
                 ("index", "offsets", "--words", "nope", "--dataset", "google:/nonexistent", "--name", bad),
                 ("index", "tokens", "--corpus", "wsd:/nonexistent", "--name", bad)):
        r = cli("--home", home, *argv)
        _one_error(r, "bad index name")  # the name is the first thing checked, before reading any input
    assert _tree(tmp_path) == before


def test_cleanup_touches_only_the_index_own_temporary_folders(cli, vectors, tmp_path):
    home = tmp_path / "home"
    assert cli("--home", home, "index", "words", "--vectors", vectors, "--name", "a.old-x").code == 0
    # another writer's work in progress on index 'a.old-x' (its temporary folder) and a lookalike
    live = home / ".a.old-x.tmp-123-abcdef12"
    (live / "shards").mkdir(parents=True)
    lookalike = home / ".a.tmp-notmine"
    lookalike.mkdir()
    assert cli("--home", home, "index", "words", "--vectors", vectors, "--name", "a").code == 0
    assert live.is_dir() and lookalike.is_dir()
    assert cli("--home", home, "index", "verify", "a").code == 0
    assert cli("--home", home, "index", "verify", "a.old-x").code == 0


def test_lock_files_do_not_pile_up(cli, vectors, tmp_path):
    home = tmp_path / "home"
    for name in ("a", "b"):
        assert cli("--home", home, "index", "words", "--vectors", vectors, "--name", name).code == 0
    assert cli("--home", home, "index", "rm", "--yes", "b").code == 0
    assert [p.name for p in home.iterdir()] == ["a"]


def test_lock_wait_must_be_a_finite_number(cli, vectors, tmp_path, monkeypatch):
    for value in ("nan", "inf", "-1"):
        monkeypatch.setenv("LEXPROBE_LOCK_WAIT", value)
        r = cli("--home", tmp_path / "home", "index", "words", "--vectors", vectors, "--name", "a")
        _one_error(r, "LEXPROBE_LOCK_WAIT")


@pytest.mark.parametrize("first,second", [("glove", "Glove"), ("w", "W")])
def test_names_differing_only_in_case_are_refused(cli, vectors, tmp_path, first, second):
    home = tmp_path / "home"
    assert cli("--home", home, "index", "words", "--vectors", vectors, "--name", first).code == 0
    _one_error(cli("--home", home, "index", "words", "--vectors", vectors, "--name", second, "--replace"),
               first, "case")


@pytest.mark.parametrize("name", ["words", "Words", "TOKENS", "offsets"])
def test_names_of_catalog_views_are_refused(cli, vectors, tmp_path, name):
    _one_error(cli("--home", tmp_path / "home", "index", "words", "--vectors", vectors, "--name", name), "reserved")
    assert not (tmp_path / "home" / name).exists()


def _google(path: Path, words: list[str]) -> str:
    lines = [": capital-common-countries"]
    lines += [f"{words[i]} {words[i + 1]} {words[i + 2]} {words[i + 3]}" for i in range(0, 40, 4)]
    path.write_text("\n".join(lines) + "\n")
    return f"google:{path}"


def test_a_build_replaces_only_with_replace_and_never_what_it_reads(cli, vectors, tmp_path):
    home = tmp_path / "home"
    words = [line.split()[0] for line in vectors.read_text().splitlines()]
    dataset = _google(tmp_path / "q.txt", words)
    assert cli("--home", home, "index", "words", "--vectors", vectors, "--name", "g2").code == 0
    before = ch.fingerprint(home, "g2")
    _one_error(cli("--home", home, "index", "words", "--vectors", vectors, "--name", "g2"), "g2", "--replace")
    for extra in ((), ("--replace",)):  # never the index the build reads
        r = cli("--home", home, "index", "offsets", "--words", "g2", "--dataset", dataset, "--name", "g2", *extra)
        _one_error(r, "g2")
    assert ch.fingerprint(home, "g2") == before
    assert cli("--home", home, "index", "offsets", "--words", "g2", "--dataset", dataset, "--name", "o").code == 0
    _one_error(cli("--home", home, "index", "offsets", "--words", "g2", "--dataset", dataset, "--name", "o"),
               "--replace")
    # an index of another kind is not replaced silently either
    _one_error(cli("--home", home, "index", "words", "--vectors", vectors, "--name", "o"), "--replace")
    assert cli("--home", home, "index", "words", "--vectors", vectors, "--name", "g2", "--replace").code == 0
    assert cli("--home", home, "index", "verify", "g2").code == 0


def test_an_index_left_aside_by_a_crash_between_two_renames_is_recovered_on_open(cli, vectors, tmp_path):
    """Without rename-exchange the swap is two renames; a crash between them leaves only ``.NAME.old-*``."""
    home = tmp_path / "home"
    assert cli("--home", home, "index", "words", "--vectors", vectors, "--name", "w").code == 0
    os.rename(home / "w", home / ".w.old-0123abcd")
    r = cli("--home", home, "query", "neighbors", "--index", "w", "word0", "--format", "json")
    assert r.code == 0, r
    assert (home / "w" / "manifest.json").exists() and not (home / ".w.old-0123abcd").exists()
    r = cli("--home", home, "index", "list", "--format", "json")
    assert r.code == 0 and '"w"' in r.out


def test_rm_refuses_bad_names_before_touching_anything(cli, tmp_path):
    home = tmp_path / "h1" / "h2"
    home.mkdir(parents=True)
    (tmp_path / "x").mkdir()
    shutil.copy(__file__, tmp_path / "x" / "victim")
    before = _tree(tmp_path)
    _one_error(cli("--home", home, "index", "rm", "--yes", "../../x/victim"), "bad index name")
    assert _tree(tmp_path) == before
