"""WNLaMPro's AM strategies on SPLADE-tiny: the provider's vector is what the model reads at the keyword slot (the
same ranks as feeding the token whose embedding it is), the replace policies (``all`` replaces one-token keywords,
``multi`` does not), a word without a vector keeps its tokens, an AM strategy without a provider is refused; and an
AM model trained on SPLADE-tiny's input embeddings through the CLI's ``run wnlampro --am``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.rare_words.cloze_queries import make_query
from lexprobe.rare_words.language_models import MaskedLM
from lexprobe.rare_words.probing import probe, replace_policy
from lexprobe.sources.datasets.wnlampro import Entry

TARGETS = ["pizza", "sandwich", "salad", "curry"]


@pytest.fixture(scope="module")
def splade():
    return MaskedLM.load("splade-tiny")


def _embedding(lm, token: str) -> np.ndarray:
    table = lm.model.get_input_embeddings().weight.detach().numpy()
    return table[lm.tokenizer.convert_tokens_to_ids(token)].copy()


def _entries():
    return [Entry(0, "dev", "samosa", "cohyponym", TARGETS, "n", 2.1),   # two tokens: sam ##osa
            Entry(1, "dev", "sam", "cohyponym", TARGETS, "n", 4.0),
            Entry(2, "test", "new", "antonym", ["old"], "a", 6.2),       # one token
            Entry(3, "test", "young", "antonym", ["old"], "a", 5.0)]


def _hand_provider(lm, table: dict[str, str]):
    """words -> the input embedding of the token ``table`` names for each (NaN: no vector)."""
    def provide(words):
        return np.stack([_embedding(lm, table[w]) if w in table else np.full(lm.model.get_input_embeddings()
                                                                             .weight.shape[1], np.nan, np.float32)
                         for w in words])
    return provide


def test_the_am_vector_is_what_the_model_reads(splade):
    provider = _hand_provider(splade, {"samosa": "sam", "new": "young", "sam": "sam", "young": "young"})
    rows, summary = probe(_entries(), splade, strategies=["original", "am"], providers={"am": provider})
    rank = {(r["strategy"], r["keyword"]): r["rank"] for r in rows}
    rr = {(r["strategy"], r["keyword"]): r["rr"] for r in rows}
    # 'samosa' fed as the embedding of 'sam' answers as the keyword 'sam' does; 'new' (one token) replaced under the
    # default policy of am ("all") by the embedding of 'young' answers as 'young' does
    assert rank[("am", "samosa")] == rank[("original", "sam")] != rank[("original", "samosa")]
    assert rank[("am", "new")] == rank[("original", "young")] and rr[("am", "new")] == rr[("original", "young")]
    assert rank[("original", "new")] != rank[("original", "young")]
    assert all(r["replaced"] for r in rows if r["strategy"] == "am")
    assert not any(r["replaced"] for r in rows if r["strategy"] == "original")
    assert summary["replace_policy"] == {"original": "none", "am": "all"} and summary["replaced_keywords"]["am"] == 4


def test_policy_multi_keeps_one_token_keywords(splade):
    provider = _hand_provider(splade, {"samosa": "sam", "new": "young", "sam": "sam", "young": "young"})
    rows, summary = probe(_entries(), splade, strategies=["original", "am"], providers={"am": provider},
                          policy="multi")
    rank = {(r["strategy"], r["keyword"]): r["rank"] for r in rows}
    replaced = {r["keyword"]: r["replaced"] for r in rows if r["strategy"] == "am"}
    assert replaced == {"samosa": True, "sam": False, "new": False, "young": False}
    assert rank[("am", "new")] == rank[("original", "new")] and rank[("am", "samosa")] == rank[("original", "sam")]
    assert summary["replace_policy"]["am"] == "multi"


def test_a_word_without_a_vector_keeps_its_tokens(splade):
    provider = _hand_provider(splade, {"new": "young"})  # NaN rows for the others
    rows, _ = probe(_entries(), splade, strategies=["original", "am"], providers={"am": provider})
    rank = {(r["strategy"], r["keyword"]): r["rank"] for r in rows}
    replaced = {r["keyword"]: r["replaced"] for r in rows if r["strategy"] == "am"}
    assert replaced == {"samosa": False, "sam": False, "new": True, "young": False}
    assert rank[("am", "samosa")] == rank[("original", "samosa")]


def test_one_token_slot_and_refusals(splade):
    q = make_query(splade, "<W> and ___ .", "dog", replace="all")
    assert q.slot == 1 and q.keyword_tokens == 1 and len(q.ids) == len(make_query(splade, "<W> and ___ .", "dog",
                                                                                 replace=False).ids)
    assert replace_policy("am") == "all" and replace_policy("ota") == "multi" and replace_policy("original") is False
    with pytest.raises(LexprobeError, match="needs an AM model"):
        probe(_entries(), splade, strategies=["am"])
    with pytest.raises(LexprobeError, match="replace policy"):
        replace_policy("am", "some")
    with pytest.raises(LexprobeError, match="shape"):
        probe(_entries(), splade, strategies=["am"], providers={"am": lambda words: np.zeros((len(words), 3))})


def test_run_wnlampro_with_an_am_model(cli, tmp_path, shared_data, one_torch_thread):
    """An AM model on SPLADE-tiny's whole-word tokens (no OTA targets: quick), trained on the Senseval-2 texts, then
    ``run wnlampro --strategies original,am --am``: every keyword replaced, the gate recorded by the provider."""
    from lexprobe.kinds.contexts import build_contexts_index
    from lexprobe.rare_words.am_store import AMVectors, train_am
    from lexprobe.rare_words.run_rare_words import write_dataset

    home = tmp_path / "indexes"
    build_contexts_index("ctx", [f"wsd:{shared_data / 'wsd_eval' / 'senseval2'}"], home=home, seed=0)
    train_am("tiny", contexts="ctx", model="splade-tiny", home=home, epochs=1, ota_max_words=0)
    folder = write_dataset(_entries(), tmp_path / "data")["jsonl"]
    out = tmp_path / "run"
    res = cli("--home", home, "run", "wnlampro", "--model", "splade-tiny", "--dataset", folder, "--strategies",
              "original,am", "--am", "tiny", "--out", out)
    assert res.code == 0, res
    summary = json.loads((out / "summary.json").read_text())
    assert summary["replace_policy"]["am"] == "all" and summary["replaced_keywords"]["am"] == 4
    bad = cli("--home", home, "run", "wnlampro", "--model", "splade-tiny", "--dataset", folder, "--strategies",
              "am", "--out", tmp_path / "run2")
    assert bad.code == 2 and "needs an AM model" in bad.err and len(bad.err.strip().splitlines()) == 1
    provider = AMVectors("tiny", home=home)
    vectors = provider(["the", "zqxjvw"])
    assert vectors.shape == (2, 128) and provider.inferred["the"][0] > 0 and np.isnan(provider.inferred["zqxjvw"][1])
    with pytest.raises(LexprobeError, match="not 'minilm'"):
        provider.check_model("minilm")
