"""The data home: fetch from a local folder, an archive or a (file://) download, checksums, clear errors."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from lexprobe.sources import datahome
from lexprobe.core.errors import InputError, LexprobeError


def _bats_fixture(root: Path) -> Path:
    """A tiny BATS-shaped folder: two relations in one category."""
    folder = root / "BATS_3.0" / "1_Inflectional_morphology"
    folder.mkdir(parents=True)
    (folder / "I01 [noun - plural_reg].txt").write_text("cat\tcats\ndog\tdogs/doggies\n", encoding="utf-8")
    (folder / "I02 [noun - plural_irreg].txt").write_text("man\tmen\r\nchild\tchildren\r\n", encoding="utf-8")
    return root / "BATS_3.0"


def _expected_digest(root: Path) -> str:
    """The documented checksum, computed independently: sha256 over sorted (path, NUL, file sha256)."""
    tree = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != "FETCH.json"):
        tree.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return tree.hexdigest()


def test_fetch_from_folder_records_source_and_checksum(cli, tmp_path):
    source = _bats_fixture(tmp_path / "src")
    home = tmp_path / "data"
    r = cli("data", "fetch", "bats", "--from", source, "--data-home", home)
    assert r.code == 0, r
    record = json.loads((home / "bats" / "FETCH.json").read_text())
    assert record["source"] == source.resolve().as_uri()
    assert record["sha256"] == _expected_digest(source) == _expected_digest(home / "bats" / "BATS_3.0")
    assert record["files"] == 2 and record["method"] == "copy"
    assert datahome.locate("bats", home) == home / "bats" / "BATS_3.0"

    listing = cli("data", "list", "--data-home", home, "--verify", "--format", "json")
    rows = {row["name"]: row for row in json.loads(listing.out)}
    assert rows["bats"]["status"] == "ok" and rows["google"]["status"] == "missing"

    (home / "bats" / "BATS_3.0" / "extra.txt").write_text("x")
    rows = {row["name"]: row for row in datahome.list_datasets(home, verify=True)}
    assert rows["bats"]["status"] == "modified"


def test_missing_dataset_names_the_fetch_command(tmp_path):
    with pytest.raises(LexprobeError, match=r"lexprobe data fetch wsd-eval"):
        datahome.locate("wsd-eval", tmp_path)
    with pytest.raises(LexprobeError, match="unknown dataset 'nope'"):
        datahome.locate("nope", tmp_path)


def test_fetch_from_wrong_folder_keeps_the_old_dataset(cli, tmp_path):
    home = tmp_path / "data"
    datahome.fetch("bats", _bats_fixture(tmp_path / "src"), home)
    before = _expected_digest(home / "bats" / "BATS_3.0")
    (tmp_path / "other").mkdir()
    r = cli("data", "fetch", "bats", "--from", tmp_path / "other", "--data-home", home)
    assert r.code == 2 and r.err.count("\n") == 1
    assert "does not hold the bats dataset" in r.err and "1_Inflectional_morphology" in r.err
    assert _expected_digest(home / "bats" / "BATS_3.0") == before
    assert [p.name for p in home.iterdir()] == ["bats"]  # no temporary folder left behind


def test_download_unpacks_and_records_the_archive(tmp_path, monkeypatch):
    source = _bats_fixture(tmp_path / "src")
    archive = tmp_path / "BATS_3.0.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(source.rglob("*.txt")):
            zf.write(path, path.relative_to(source.parent).as_posix())
    url = archive.as_uri()  # urllib reads file:// like any URL: the download code path runs for real
    monkeypatch.setitem(datahome.DATASETS, "bats", dataclasses.replace(datahome.DATASETS["bats"], url=url))
    home = tmp_path / "data"
    record = datahome.fetch("bats", home=home)
    assert record["method"] == "download" and record["source"] == url
    assert record["archive_sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert record["sha256"] == _expected_digest(source)
    assert (datahome.locate("bats", home) / "1_Inflectional_morphology" / "I01 [noun - plural_reg].txt").exists()
    assert not any((home / ".downloads").iterdir())  # the archive is removed once unpacked


def test_download_failure_is_one_line_and_leaves_nothing(cli, tmp_path, monkeypatch):
    dead = "http://127.0.0.1:9/BATS_3.0.zip"  # the discard port: connection refused at once
    monkeypatch.setitem(datahome.DATASETS, "bats", dataclasses.replace(datahome.DATASETS["bats"], url=dead))
    home = tmp_path / "data"
    r = cli("data", "fetch", "bats", "--data-home", home)
    assert r.code == 2 and r.err.count("\n") == 1
    assert dead in r.err and "--from PATH" in r.err
    assert not (home / "bats").exists() and not any((home / ".downloads").iterdir())
    assert not [p for p in home.iterdir() if p.name.startswith(".bats")]


def test_archive_escaping_its_folder_is_refused(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../outside.txt", "x")
    with pytest.raises(InputError, match="points outside"):
        datahome.fetch("bats", archive, tmp_path / "data")
    assert not (tmp_path / "outside.txt").exists()


def test_real_shared_data_is_found_and_fetched(shared_data, tmp_path):
    places = [shared_data]
    expected = {"bats": "BATS_3.0", "google": "google_analogy/questions-words.txt", "semcor": "semcor3.0",
                "wsd-eval": "wsd_eval", "streusle": "streusle/v4.7.1"}
    for name, rel in expected.items():
        entry, _ = datahome.find(name, places)
        assert entry == shared_data / rel, name

    home = tmp_path / "data"
    record = datahome.fetch("google", shared_data / "google_analogy", home)
    path = datahome.locate("google", home)
    assert path.name == "questions-words.txt"
    assert path.read_text().count("\n") == 19544 + 14
    assert record["sha256"] == _expected_digest(shared_data / "google_analogy")
    record = datahome.fetch("wsd-eval", shared_data, home)  # nested folders, found inside the whole data folder
    assert record["files"] == 15 and record["sha256"] == _expected_digest(shared_data / "wsd_eval")
    assert datahome.locate("wsd-eval", home) == home / "wsd-eval" / "wsd_eval"


@pytest.mark.parametrize("name, file, text, pairs", [
    ("wordsim353", "combined.tab", "Word 1\tWord 2\tHuman (mean)\nlove\tsex\t6.77\ntiger\tcat\t7.35\n", 2),
    ("simlex999", "SimLex-999.txt", "word1\tword2\tPOS\tSimLex999\tconc(w1)\nold\tnew\tA\t1.58\t2.72\n", 1),
    ("men", "MEN_dataset_natural_form_full", "sun sunlight 50.000000\nautomobile car 50.000000\n", 2),
    ("rw", "rw.txt", "squishing\tsquirt\t5.88\t7\t7\t6\n", 1),
])
def test_similarity_sets_fetch_from_their_released_file_and_are_located(cli, tmp_path, name, file, text, pairs):
    """The word-similarity sets are datasets of the data home: `data fetch NAME --from FILE` takes the released
    file, locate() hands readers that file, and the main job's locate_data finds it (before any packaged copy)."""
    from lexprobe.sources.datasets.word_pairs import read_word_pairs
    from lexprobe.suite.main_job import locate_data

    released = tmp_path / "download" / file
    released.parent.mkdir()
    released.write_text(text)
    home = tmp_path / "data"
    assert cli("data", "fetch", name, "--from", released, "--data-home", home).code == 0
    path = datahome.locate(name, home)
    assert path == home / name / file
    table = read_word_pairs(path)
    assert table.num_rows == pairs and table.schema.metadata[b"dataset"].decode() == name
    paths, info = locate_data(home)
    assert paths[name] == path and info[name]["source"] == released.resolve().as_uri()


# ------------------------------------------------------------------------- what fetch trusts


@pytest.mark.parametrize("name,file", [("google", "questions-words.txt"), ("wordsim353", "combined.tab"),
                                       ("rw", "rw.txt")])
def test_random_bytes_under_a_released_file_name_are_refused(cli, tmp_path, name, file):
    (tmp_path / file).write_bytes(bytes(range(256)) * 8)
    r = cli("data", "fetch", name, "--from", tmp_path / file, "--data-home", tmp_path / "data")
    assert r.code == 2 and r.err.count("\n") == 1 and f"not the {name} dataset as its reader reads it" in r.err, r
    assert not (tmp_path / "data" / name).exists()
    assert not [p for p in (tmp_path / "data").iterdir() if ".tmp-" in p.name]


def test_a_bats_folder_that_does_not_parse_is_refused(tmp_path):
    source = _bats_fixture(tmp_path / "src")
    (source / "1_Inflectional_morphology" / "I03 [verb].txt").write_text("one two three four\n")
    with pytest.raises(LexprobeError, match=r"not the bats dataset as its reader reads it: .*I03 \[verb\].txt:1: "
                                            r"expected 'start<TAB>answer1/answer2/...'"):
        datahome.fetch("bats", source, tmp_path / "data")


def test_a_fetched_file_is_a_copy_the_source_s_later_edits_do_not_reach(tmp_path):
    source = tmp_path / "questions-words.txt"
    source.write_text(": capital\nAthens Greece Baghdad Iraq\n")
    home = tmp_path / "data"
    record = datahome.fetch("google", source, home)
    fetched = datahome.locate("google", home)
    assert record["method"] == "copy" and fetched.stat().st_nlink == 1 and not fetched.samefile(source)
    with open(source, "a") as f:
        f.write("Paris France Rome Italy\n")
    assert fetched.read_text().count("\n") == 2
    assert {r["name"]: r for r in datahome.list_datasets(home)}["google"]["status"] == "ok"


def test_data_list_hashes_a_set_again_when_a_file_s_size_or_time_changed(tmp_path):
    home = tmp_path / "data"
    datahome.fetch("bats", _bats_fixture(tmp_path / "src"), home)
    relation = home / "bats" / "BATS_3.0" / "1_Inflectional_morphology" / "I01 [noun - plural_reg].txt"
    assert {r["name"]: r for r in datahome.list_datasets(home)}["bats"]["status"] == "ok"
    relation.write_text("cat\tkittens\ndog\tdogs/doggies\n", encoding="utf-8")  # edited in place, no --verify
    assert {r["name"]: r for r in datahome.list_datasets(home)}["bats"]["status"] == "modified"


def test_a_killed_fetch_s_temporary_folder_is_removed_by_the_next_one(tmp_path):
    home = tmp_path / "data"
    stale = home / ".google.tmp-0123abcd"
    (stale / "unpacked").mkdir(parents=True)
    (stale / "unpacked" / "big.bin").write_bytes(b"x" * 1000)
    other = home / ".googlex.tmp-0123abcd"  # another name's: left alone
    other.mkdir()
    source = tmp_path / "questions-words.txt"
    source.write_text(": capital\nAthens Greece Baghdad Iraq\n")
    datahome.fetch("google", source, home)
    assert not stale.exists() and other.exists()
