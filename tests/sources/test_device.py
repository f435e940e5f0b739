"""``--device`` / ``device=``: one resolver, one clear error for a device torch does not see, the CPU path unchanged,
and ``tools/gpu-check.sh`` (its skip line where there is no GPU, its comparisons run CPU against CPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.sources.models import resolve_device

REPO = Path(__file__).resolve().parents[2]


def _torch():
    import torch

    return torch


def _has(kind: str) -> bool:
    torch = _torch()
    if kind == "cuda":
        return torch.cuda.is_available()
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


no_gpu = pytest.mark.skipif(_has("cuda") or _has("mps"), reason="this machine has a GPU")


@no_gpu
def test_auto_is_the_cpu_without_a_gpu():
    assert resolve_device("auto").type == "cpu"
    assert resolve_device(None).type == "cpu"
    assert resolve_device("cpu") == _torch().device("cpu")


@pytest.mark.parametrize("kind,label", [("cuda", "CUDA"), ("mps", "MPS")])
def test_a_device_asked_for_and_absent_is_one_clear_error(kind, label):
    if _has(kind):
        pytest.skip(f"this machine has {label}")
    with pytest.raises(LexprobeError) as err:
        resolve_device(kind)
    assert str(err.value) == f"--device {kind}: torch sees no {label} device"


def test_an_unknown_device_is_an_error():
    with pytest.raises(LexprobeError, match="--device tpu: not a device"):
        resolve_device("tpu")
    with pytest.raises(LexprobeError, match="not a device"):
        resolve_device("cpu:1")


@pytest.mark.skipif(_has("cuda"), reason="this machine has CUDA")
def test_cli_refuses_an_absent_device_before_any_work(cli, tmp_path):
    r = cli("query", "probe", "--device", "cuda", "A kumquat is a ___ .")
    assert r.code == 2 and r.err.strip() == "error: --device cuda: torch sees no CUDA device"
    r = cli("run", "all", "--device", "cuda", "--out", tmp_path / "run")
    assert r.code == 2 and r.err.strip() == "error: --device cuda: torch sees no CUDA device"
    assert not (tmp_path / "run").exists()  # refused before the run folder is claimed
    r = cli("index", "tokens", "--help")
    assert r.code == 0 and "--device" in r.out and "--dtype" in r.out


SENTENCES = [["The", "bank", "of", "the", "river", "was", "steep", "."],
             ["She", "went", "to", "the", "bank", "to", "deposit", "money", "."]]
SPANS = [[(1, 1), (4, 1)], [(4, 1), (6, 2)]]


@no_gpu
def test_cpu_path_unchanged(one_torch_thread):
    """``auto`` is the CPU here, and the explicit CPU gives the same numbers bit for bit as the default, for the
    encoder and for both kinds of language model."""
    import torch

    from lexprobe.rare_words.language_models import load_lm
    from lexprobe.sources.encoder import TokenEncoder

    default = TokenEncoder("minilm", threads=1)
    cpu = TokenEncoder("minilm", threads=1, device="cpu")
    assert cpu.device.type == default.device.type == "cpu"
    np.testing.assert_array_equal(default.encode(SENTENCES, SPANS)[0], cpu.encode(SENTENCES, SPANS)[0])
    for model in ("splade-tiny", "smollm2"):
        a, b = load_lm(model), load_lm(model, device="cpu")
        assert next(a.model.parameters()).device == torch.device("cpu") and a.device.type == "cpu"
        text = "A kumquat is a ___ ."
        assert a.top_predictions(text, 5) == b.top_predictions(text, 5)


def test_gpu_check_skips_with_one_line_where_there_is_no_gpu():
    if _has("cuda") or _has("mps"):
        pytest.skip("this machine has a GPU: the script runs its checks")
    from lexprobe.suite.gpu_check import SKIP_LINE

    env = {**os.environ, "PYTHON": sys.executable}
    r = subprocess.run(["bash", str(REPO / "tools" / "gpu-check.sh")], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [SKIP_LINE]


def test_gpu_check_help():
    r = subprocess.run([sys.executable, "-m", "lexprobe.suite.gpu_check", "--help"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "--device" in r.stdout and "GPU" in r.stdout


def test_gpu_check_compares_the_cpu_with_itself(shared_data, tmp_path, capsys, one_torch_thread):
    """``--device cpu`` runs every comparison CPU against CPU: the same answers, so every check passes at its
    strictest (cosine 1, top-1 agreement 1, MRR difference 0)."""
    from lexprobe.suite import gpu_check

    entries = [{"id": 0, "split": "dev", "keyword": "kumquat", "relation": "hypernym",
                "targets": ["fruit", "tree", "citrus"], "pos": "n", "zipf": 0.5, "count": 3},
               {"id": 1, "split": "test", "keyword": "hot", "relation": "antonym", "targets": ["cold"],
                "pos": "a", "zipf": 4.0, "count": 900},
               {"id": 2, "split": "test", "keyword": "sparrow", "relation": "cohyponym",
                "targets": ["bird", "dog", "cat"], "pos": "n", "zipf": 2.5, "count": 90}]
    dataset = tmp_path / "wnlampro.jsonl"
    dataset.write_text("".join(json.dumps(e) + "\n" for e in entries))
    code = gpu_check.main(["--device", "cpu", "--sentences", "6", "--ota-words", "2", "--ota-iterations", "5",
                           "--wnlampro", str(dataset), "--models", "splade-tiny",
                           "--semcor", str(shared_data / "semcor3.0")])
    out = capsys.readouterr().out
    assert code == 0 and "all checks pass" in out
    rows = [line for line in out.splitlines() if line.startswith("| encode") or line.startswith("| ota")
            or line.startswith("| probe")]
    assert len(rows) == 3 and all(line.rstrip().endswith("| True |") for line in rows)
    assert "| 1.000; +0.0000 [+0.0000, +0.0000] |" in out  # the same answers: top-1 agreement 1, no difference
