"""Installed as users install it: the wheel built from the checkout, installed (not editable) into a fresh virtual
environment, runs the tour's first five commands and ``import lexprobe`` from another folder. A subpackage left out
of pyproject's package list (or a file of one left out of the wheel) fails here, where the editable install of the
checkout hides it. The dependencies come from the test's own environment (no network)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]


def _run(args, cwd, env, code=0):
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == code, f"{args}: {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the fresh environment's bin folder, its environment variables, a working folder outside the checkout)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"  # a copy: the build writes build/ and egg-info beside the sources
    shutil.copytree(CHECKOUT / "engine", source / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(CHECKOUT / name, source / name)
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", root / "dist", source],
         root, env)
    (wheel,) = (root / "dist").glob("lexprobe-*.whl")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", venv], root, env)
    bin_dir = venv / "bin"
    _run([bin_dir / "python", "-m", "pip", "install", "--no-deps", wheel], root, env)
    site = Path(_run([bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], root,
                     env).stdout.strip())
    (site / "deps-from-tests.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # numpy, faiss, ... (no .pth run)
    work = root / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in env.items() if not k.startswith(("PYTHONPATH", "VIRTUAL_ENV"))}
    env.update(LEXPROBE_HOME=str(root / "indexes"), LEXPROBE_DATA=str(root / "data"), PATH=f"{bin_dir}:{env['PATH']}")
    return bin_dir, env, work, wheel


def test_the_wheel_holds_every_subpackage(installed):
    *_, wheel = installed
    names = zipfile.ZipFile(wheel).namelist()
    packages = {p.parent.relative_to(CHECKOUT / "engine") for p in (CHECKOUT / "engine").rglob("__init__.py")}
    for package in packages:
        inside = "" if package == Path(".") else package.as_posix() + "/"
        assert f"lexprobe/{inside}__init__.py" in names, f"engine/{package} is not in the wheel: add it to " \
            "pyproject's packages"
    assert any(n.startswith("lexprobe/serve/static/") for n in names)


def test_import_and_the_tours_first_commands_from_another_folder(installed, shared_data):
    bin_dir, env, work, _ = installed
    where = _run([bin_dir / "python", "-c", "import lexprobe, lexprobe.cli.root; print(lexprobe.__file__); "
                  "print(sorted(lexprobe.__all__)[:3])"], work, env).stdout
    assert str(bin_dir.parent) in where and str(CHECKOUT) not in where  # the wheel's copy, not the checkout's
    lexprobe = bin_dir / "lexprobe"
    _run([lexprobe, "data", "fetch", "bats", "--from", shared_data / "BATS_3.0"], work, env)
    _run([lexprobe, "index", "words", "--vectors", "glove-6b-50d", "--name", "glove"], work, env)
    neighbors = _run([lexprobe, "query", "neighbors", "--index", "glove", "king", "-k", "5", "--format", "json"],
                     work, env).stdout
    assert [row["word"] for row in __import__("json").loads(neighbors)] == ["prince", "queen", "ii", "emperor", "son"]
    analogy = _run([lexprobe, "query", "analogy", "--index", "glove", "man", "king", "woman", "-k", "3"], work, env)
    assert "queen" in analogy.stdout
    unknown = _run([lexprobe, "query", "neighbors", "--index", "glove", "King", "paris", "-k", "1"], work, env, code=2)
    assert "try 'king'" in unknown.stderr and "Traceback" not in unknown.stderr
