"""Shared fixtures: offline model loading, the shared data folder, a session-wide GloVe index. The tests live in
one folder per layer or paper slice (core, sources, kinds, runs, analogies, senses, rare_words, suite, cli, serve,
scale, package); the helper modules beside this file (crash_helpers, serve_fixtures, topk_ties) are importable
from every folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

SHARED_DATA = Path(os.environ.get("LEXPROBE_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` beside the repository: the real datasets the features must work on."""
    assert SHARED_DATA.is_dir(), f"the shared data folder {SHARED_DATA} is missing"
    return SHARED_DATA


@pytest.fixture(scope="session")
def glove_home(tmp_path_factory) -> Path:
    """An index home holding ``glove``: the packaged 400k x 50 GloVe, built once per test session."""
    from lexprobe.kinds.words import build_word_index

    home = tmp_path_factory.mktemp("glove_home")
    build_word_index("glove", "glove-6b-50d", home=home)
    return home


@pytest.fixture
def home(tmp_path) -> Path:
    """An empty index home."""
    path = tmp_path / "indexes"
    path.mkdir()
    return path


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"CliResult(code={self.code}, out={self.out[-500:]!r}, err={self.err[-500:]!r})"


@pytest.fixture(scope="session")
def cli():
    """Run ``lexprobe ARGS...`` in-process through its real entry point: ``cli(*args) -> CliResult``
    with the exit code, stdout and stderr (errors end in ``error: ...`` and exit code 2)."""
    import click
    from click.testing import CliRunner

    from lexprobe.cli.root import main

    @click.command(context_settings={"ignore_unknown_options": True, "help_option_names": []})
    @click.argument("argv", nargs=-1, type=click.UNPROCESSED)
    def entry(argv):
        main(list(argv))

    def run(*args) -> CliResult:
        result = CliRunner().invoke(entry, [str(a) for a in args])
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def one_torch_thread():
    """Tiny models on one torch thread: on a busy 2-core machine two spinning threads are many times slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
