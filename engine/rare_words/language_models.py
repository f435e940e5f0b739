"""Language models of either kind for probing: masked (:class:`lexprobe.rare_words.probing.MaskedLM`) or causal
(:class:`lexprobe.rare_words.causal_probing.CausalLM`), chosen by what the checkpoint is
(:func:`lexprobe.sources.models.model_kind`), and the target vocabulary WNLaMPro restricts targets to."""

from __future__ import annotations

from .causal_probing import CausalLM, blank_vocabulary
from .probing import MaskedLM


def load_lm(name: str) -> MaskedLM:
    """The model ``name`` as a :class:`MaskedLM` or, when its checkpoint is a causal LM (e.g. ``smollm2``), as a
    :class:`CausalLM` (a subclass: the probing code takes either)."""
    from ..sources.models import model_kind

    return (CausalLM if model_kind(name) == "causal" else MaskedLM).load(name)


def target_words(model: str) -> list[str]:
    """WNLaMPro's target vocabulary T for the model ``model``: its whole-word tokens for a masked model, the words
    that are one token in the form every blank gives them (:func:`blank_vocabulary`) for a causal one."""
    from ..sources.models import load_tokenizer, model_kind
    from ..sources.models import whole_word_tokens

    tokenizer = load_tokenizer(model)
    if model_kind(model) == "causal":
        return list(blank_vocabulary(tokenizer))
    return whole_word_tokens(tokenizer)[0]
