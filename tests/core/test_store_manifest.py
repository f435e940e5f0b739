"""Manifests are checked for structure, not only for their checksum (which anyone can recompute), and the FAISS
file is bound to its shards; FAISS options are checked before anything is built or
searched (item 8). Every edit below keeps the checksum consistent: a traceback or a wrong answer would be a bug.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import crash_helpers as ch


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A home with two words indexes of the same shape (300 x 8) from different vectors: ``w`` and ``twin``."""
    from lexprobe.kinds.words import build_word_index

    root = tmp_path_factory.mktemp("manifest_src")
    ch.write_glove(root / "v.txt", 300, 8, 3)
    ch.write_glove(root / "u.txt", 300, 8, 7)
    build_word_index("w", str(root / "v.txt"), home=root / "home", shard_rows=100)
    build_word_index("twin", str(root / "u.txt"), home=root / "home", shard_rows=100)
    return root / "home"


def _rewrite(path: Path, edit) -> None:
    from lexprobe.core.store import _manifest_checksum

    manifest = json.loads(path.read_text())
    edit(manifest)
    if isinstance(manifest, dict):
        manifest["checksum"] = _manifest_checksum(manifest)
    path.write_text(json.dumps(manifest))


def _set(path: list, value):
    def edit(m):
        target = m
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def _delete(path: list):
    def edit(m):
        target = m
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return edit


EDITS = {
    "shards-not-a-list": _set(["shards"], "part-00000.arrow"),
    "shard-without-crc": _delete(["shards", 0, "crc32"]),
    "shard-path-outside": _set(["shards", 0, "file"], "../../twin/shards/part-00000.arrow"),
    "count-as-text": _set(["count"], "300"),
    "count-disagrees": _set(["count"], 299),
    "dim-zero": _set(["dim"], 0),
    "faiss-path-outside": _set(["files", "faiss", "file"], "../twin/faiss.index"),
    "tombstone-not-a-row": _set(["tombstones"], [5000]),
    "tombstone-text": _set(["tombstones"], ["a"]),
    "kind-not-a-name": _set(["kind"], "../words"),
    "index-option-zero": _set(["meta", "index", "nprobe"], 0),
    "index-option-unknown": _set(["meta", "index", "colour"], 1),
    "meta-not-an-object": _set(["meta"], [1, 2]),
    "no-faiss-entry": _set(["files"], {}),
    "files-not-an-object": _set(["files"], ["faiss.index"]),
    "no-version": _delete(["version_id"]),
    "no-created": _delete(["created"]),              # index list and /api/indexes show it
    "created-a-number": _set(["created"], 20240101),
    "no-normalization": _delete(["normalization"]),  # read when words are inserted
    "history-not-a-list": _set(["history"], {"a": 1}),
    "offsets-without-its-words": _set(["kind"], "offsets"),  # an offsets index names its words index
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_structural_edits_are_one_clear_line(cli, clean, tmp_path, edit):
    home = tmp_path / "home"
    shutil.copytree(clean, home)
    _rewrite(home / "w" / "manifest.json", EDITS[edit])
    info = () if edit.startswith("index-option") else (("index", "info", "w"),)  # FAISS options: checked on load
    for argv in (("index", "verify", "w"), ("query", "neighbors", "--index", "w", "word0"), *info):
        r = cli("--home", home, *argv)
        assert r.code == 2 and r.out == "", (argv, r)
        lines = r.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and "manifest.json" in lines[0], (argv, r)
    # the healthy index is still listed and served
    r = cli("--home", home, "index", "list", "--verify", "--format", "json")
    assert r.code == 0 and {x["name"]: x["status"][:7] for x in json.loads(r.out)} == {"twin": "ok", "w": "damaged"}
    r = cli("--home", home, "sql", "select count(*) as n from words", "--format", "json")
    served = 600 if edit.startswith("index-option") else 300  # FAISS options do not concern the shards SQL reads
    if edit != "offsets-without-its-words":
        assert r.code == 0 and json.loads(r.out) == [{"n": served}], r
    # and the server lists both, the damaged one with its reason
    from lexprobe.serve.app import create_app

    listed = create_app(home, models=()).test_client().get("/api/indexes").get_json()["indexes"]
    rows = {row["name"]: row for row in listed}
    assert rows["twin"]["kind"] == "words" and ("error" in rows["w"]) == (not edit.startswith("index-option"))


def test_a_manifest_that_is_not_a_regular_file_is_damaged_not_waited_on(cli, clean, tmp_path):
    import os

    home = tmp_path / "home"
    shutil.copytree(clean, home)
    (home / "w" / "manifest.json").unlink()
    os.mkfifo(home / "w" / "manifest.json")
    r = cli("--home", home, "index", "list", "--format", "json")
    assert r.code == 0 and {x["name"]: x["status"][:7] for x in json.loads(r.out)} == {"twin": "ok", "w": "damaged"}
    r = cli("--home", home, "query", "neighbors", "--index", "w", "word0")
    assert r.code == 2 and "not a regular file" in r.err, r


def test_faiss_file_of_another_index_of_the_same_shape_is_refused(cli, clean, tmp_path):
    """Its whole manifest entry copied over (checksums agree, shape agrees): the binding to the shards and the
    stored vectors tell."""
    home = tmp_path / "home"
    shutil.copytree(clean, home)
    twin = json.loads((home / "twin" / "manifest.json").read_text())
    shutil.copy(home / "twin" / "faiss.index", home / "w" / "faiss.index")
    _rewrite(home / "w" / "manifest.json", _set(["files", "faiss"], twin["files"]["faiss"]))
    for argv in (("index", "verify", "w"), ("query", "neighbors", "--index", "w", "word0")):
        r = cli("--home", home, *argv)
        assert r.code == 2 and r.out == "" and "faiss.index" in r.err, r
    # and when the binding is rewritten too, the vectors themselves disagree with the shards
    from lexprobe.core.store import shards_digest

    manifest = json.loads((home / "w" / "manifest.json").read_text())
    _rewrite(home / "w" / "manifest.json", _set(["files", "faiss", "shards"], shards_digest(manifest)))
    for argv in (("index", "verify", "w"), ("query", "neighbors", "--index", "w", "word0")):
        r = cli("--home", home, *argv)
        assert r.code == 2 and r.out == "" and "faiss.index" in r.err and "vectors" in r.err, r


@pytest.mark.parametrize("options,problem", [
    (("--index-type", "hnsw", "--hnsw-m", "0"), "--hnsw-m"),
    (("--index-type", "hnsw", "--hnsw-m", "1"), "--hnsw-m"),
    (("--index-type", "hnsw", "--hnsw-m", "-4"), "--hnsw-m"),
    (("--index-type", "hnsw", "--ef-search", "0"), "--ef-search"),
    (("--index-type", "hnsw", "--ef-construction", "0"), "--ef-construction"),
    (("--index-type", "ivf", "--nlist", "-3"), "--nlist"),
    (("--index-type", "ivf", "--nlist", "301"), "nlist"),
    (("--index-type", "ivf", "--nprobe", "0"), "--nprobe"),
    (("--index-type", "ivf", "--nprobe", "-1"), "--nprobe"),
])
def test_faiss_options_are_checked(cli, tmp_path, options, problem):
    ch.write_glove(tmp_path / "v.txt", 300, 8, 3)
    r = cli("--home", tmp_path / "home", "index", "words", "--vectors", tmp_path / "v.txt", "--name", "w", *options)
    assert r.code == 2 and problem in r.err and len(r.err.strip().splitlines()) == 1, r
    assert not (tmp_path / "home" / "w").exists()


def test_hnsw_with_the_smallest_options_answers_k_neighbours(cli, tmp_path):
    ch.write_glove(tmp_path / "v.txt", 300, 8, 3)
    r = cli("--home", tmp_path / "home", "index", "words", "--vectors", tmp_path / "v.txt", "--name", "w",
            "--index-type", "hnsw", "--hnsw-m", "2", "--ef-search", "1", "--ef-construction", "1")
    assert r.code == 0, r
    r = cli("--home", tmp_path / "home", "query", "neighbors", "--index", "w", "word0", "-k", "10", "--format", "json")
    assert r.code == 0 and len(json.loads(r.out)) == 10, r
