"""Corruption: a flipped byte, a truncation or a missing file in any shard, the manifest or the FAISS file is
caught by ``index verify`` and on every open (queries, SQL), with the file named, one line, exit code 2, and
nothing is answered from the damaged index.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import crash_helpers as ch


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A home with a words index of 3 shards + FAISS (3000 x 20)."""
    return ch.words_home(tmp_path_factory.mktemp("corrupt_src"), 3000, 20, 3, shard_rows=1000)


def _files(index: Path) -> list[str]:
    return ["manifest.json", "faiss.index"] + sorted(f"shards/{p.name}" for p in (index / "shards").iterdir())


def _damages(size: int, seed: int) -> list[tuple[str, int]]:
    rng = np.random.default_rng(seed)
    spots = sorted({0, 1, size // 2, size - 1, *rng.integers(0, size, 3).tolist()})
    return [("flip", p) for p in spots] + [("truncate", size // 2), ("truncate", size - 1), ("truncate", 0),
                                           ("delete", 0)]


def _damage(path: Path, how: str, where: int) -> None:
    if how == "delete":
        path.unlink()
    elif how == "truncate":
        with open(path, "r+b") as f:
            f.truncate(where)
    else:
        data = bytearray(path.read_bytes())
        data[where] ^= 0xFF
        path.write_bytes(bytes(data))


def _one_line_naming(r, file: str) -> None:
    assert r.code == 2, r
    assert r.out == "", r  # nothing answered
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r
    assert file.split("/")[-1] in lines[0], (file, r.err)


def test_every_damage_to_every_file_is_caught(cli, clean, tmp_path):
    files = _files(clean / "w")
    assert len(files) == 5
    cases = 0
    for n, file in enumerate(files):
        size = (clean / "w" / file).stat().st_size
        for how, where in _damages(size, n):
            home = tmp_path / f"c{cases}"
            shutil.copytree(clean, home)
            _damage(home / "w" / file, how, where)
            _one_line_naming(cli("--home", home, "index", "verify", "w"), file)
            _one_line_naming(cli("--home", home, "query", "neighbors", "--index", "w", "word0", "--format",
                                 "json"), file)
            _one_line_naming(cli("--home", home, "sql", "select count(*) from words"), file)
            cases += 1
    assert cases >= 5 * 10


def test_open_api_refuses_a_damaged_index(clean, tmp_path):
    """The library entry points (not only the CLI) refuse to answer from a damaged index."""
    from lexprobe.core.errors import CorruptIndexError
    from lexprobe.kinds.words import WordIndex

    for file in _files(clean / "w"):
        home = tmp_path / file.replace("/", "_")
        shutil.copytree(clean, home)
        _damage(home / "w" / file, "flip", (home / "w" / file).stat().st_size // 3)
        with pytest.raises(CorruptIndexError, match=file.split("/")[-1].replace(".", r"\.")):
            WordIndex.open("w", home=home)


@pytest.fixture(scope="module")
def other_kinds(tmp_path_factory, shared_data) -> Path:
    """A home with an offsets index (BATS inflections over 20k GloVe words) and a token index (senseval2,
    30 sentences, splade-tiny), each in several shards."""
    from lexprobe.kinds.offsets import build_offset_index
    from lexprobe.kinds.tokens import build_token_index
    from lexprobe.kinds.words import build_word_index

    home = tmp_path_factory.mktemp("corrupt_kinds")
    build_word_index("g", "glove-6b-50d", home=home, limit=20_000)
    build_offset_index(home, "o", "g", f"bats:{shared_data / 'BATS_3.0' / '1_Inflectional_morphology'}")
    build_token_index("t", "splade-tiny", f"wsd:{shared_data / 'wsd_eval' / 'senseval2'}", home=home,
                      max_sentences=30, shard_rows=150)
    return home


@pytest.mark.parametrize("name", ["o", "t"], ids=["offsets", "tokens"])
def test_damage_to_offsets_and_token_indexes_is_caught(cli, other_kinds, tmp_path, name):
    from lexprobe.core.errors import CorruptIndexError
    from lexprobe.kinds.offsets import OffsetIndex
    from lexprobe.kinds.tokens import TokenIndex

    opener = {"o": OffsetIndex.open, "t": TokenIndex.open}[name]
    index = other_kinds / name
    files = [str(p.relative_to(index)) for p in sorted(index.rglob("*")) if p.is_file()]
    assert "manifest.json" in files and sum(f.startswith("shards/") for f in files) >= (1 if name == "o" else 2)
    cases = 0
    for n, file in enumerate(files):
        size = (index / file).stat().st_size
        for how, where in _damages(size, n)[::2]:  # every other damage: the kinds share the store code
            home = tmp_path / f"c{cases}"
            home.mkdir()
            shutil.copytree(index, home / name)
            _damage(home / name / file, how, where)
            _one_line_naming(cli("--home", home, "index", "verify", name), file)
            _one_line_naming(cli("--home", home, "sql", f'select count(*) from "{name}"'), file)
            with pytest.raises(CorruptIndexError, match=file.split("/")[-1].replace(".", r"\.")):
                opener(home, name)
            cases += 1
    assert cases >= 5 * len(files)


def test_consistent_but_wrong_faiss_file_is_caught(cli, clean, tmp_path):
    """A FAISS file from another index with its manifest entry rewritten (checksums agree) is still refused:
    its vector count and dimension must match the shards."""
    import json

    from lexprobe.core.store import _manifest_checksum, file_crc32
    from lexprobe.kinds.words import build_word_index

    other = tmp_path / "other"
    ch.write_glove(tmp_path / "o.txt", 500, 20, 4)
    build_word_index("o", str(tmp_path / "o.txt"), home=other)
    home = tmp_path / "home"
    shutil.copytree(clean, home)
    shutil.copy(other / "o" / "faiss.index", home / "w" / "faiss.index")
    manifest = json.loads((home / "w" / "manifest.json").read_text())
    manifest["files"]["faiss"]["bytes"], manifest["files"]["faiss"]["crc32"] = file_crc32(home / "w" / "faiss.index")
    manifest["checksum"] = _manifest_checksum(manifest)
    (home / "w" / "manifest.json").write_text(json.dumps(manifest))
    _one_line_naming(cli("--home", home, "index", "verify", "w"), "faiss.index")
    _one_line_naming(cli("--home", home, "query", "neighbors", "--index", "w", "word0"), "faiss.index")


def test_a_damaged_index_can_be_removed_and_rebuilt(cli, clean, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(clean, home)
    (home / "w" / "manifest.json").unlink()
    r = cli("--home", home, "index", "list", "--format", "json")  # listed as damaged, naming the file
    assert r.code == 0 and json.loads(r.out)[0]["status"].startswith("damaged: ") and "manifest.json" in r.out, r
    r = cli("--home", home, "index", "rm", "--yes", "w")
    assert r.code == 0 and not (home / "w").exists(), r
    ch.write_glove(tmp_path / "v.txt", 100, 20, 3)
    assert cli("--home", home, "index", "words", "--vectors", tmp_path / "v.txt", "--name", "w").code == 0
    assert cli("--home", home, "index", "verify", "w").code == 0
