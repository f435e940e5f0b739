"""``--dtype float32|bfloat16``: bfloat16 autocast keeps token vectors and probing answers close to float32 (the
bounds below), OTA stays float32 under a bfloat16 model, an index records a non-float32 dtype, and a bad dtype is
one clear error."""

from __future__ import annotations

import numpy as np
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.sources.datasets.wnlampro import Entry
from lexprobe.sources.models import resolve_dtype

# bench perf measures the packaged models here at min cosine 0.9999 (MiniLM, SemCor) and 90-100% top-1 agreement;
# the bounds leave room for other CPUs' bfloat16 paths while failing when bfloat16 breaks the model (a garbled
# forward pass gives cosines near 0 and top-1 agreement near 0)
MIN_COSINE = 0.99
MIN_TOP1 = 0.75

ENTRIES = [Entry(0, "dev", "kumquat", "hypernym", ["fruit", "tree", "citrus"], "n", 0.5),
           Entry(1, "test", "hot", "antonym", ["cold"], "a", 4.0),
           Entry(2, "test", "sparrow", "cohyponym", ["bird", "dog", "cat"], "n", 2.5),
           Entry(3, "test", "violin", "hypernym", ["instrument"], "n", 2.5),
           Entry(4, "dev", "oak", "hypernym", ["tree", "wood"], "n", 3.0)]


def test_bfloat16_token_vectors_are_close_to_float32(shared_data, one_torch_thread):
    from lexprobe.sources.datasets.corpora import read_corpus
    from lexprobe.suite.bench_encode import sample_sentences
    from lexprobe.suite.torch_compare import compare_encoding

    sentences, spans = sample_sentences(read_corpus(f"wsd:{shared_data / 'semcor3.0'}"), 12, 0)
    r = compare_encoding("minilm", sentences, spans, {"device": "cpu"}, {"device": "cpu", "dtype": "bfloat16"},
                         threads=1)
    assert r["targets"] > 50
    assert r["min_cosine"] > MIN_COSINE
    assert r["mean_cosine"] < 1 - 1e-9  # bfloat16 did run: its vectors are not float32's


@pytest.mark.parametrize("model", ["splade-tiny", "smollm2"])
def test_bfloat16_probing_keeps_most_top1_answers(model, one_torch_thread):
    from lexprobe.suite.torch_compare import compare_probing

    r = compare_probing(model, ENTRIES, {"device": "cpu"}, {"device": "cpu", "dtype": "bfloat16"})
    assert r["queries"] >= 20
    assert r["top1_agreement"] >= MIN_TOP1
    assert r["top10_agreement"] >= MIN_TOP1
    assert r["mrr_low"] <= r["mrr_difference"] <= r["mrr_high"]


def test_ota_stays_float32_under_a_bfloat16_model(one_torch_thread):
    """OTA runs outside the autocast context: a bfloat16 model's OTA vectors are float32's, bit for bit."""
    from lexprobe.rare_words.language_models import MaskedLM
    from lexprobe.rare_words.probing import keyword_vectors
    from lexprobe.sources.models import load_masked_lm, load_tokenizer

    model, tokenizer = load_masked_lm("splade-tiny"), load_tokenizer("splade-tiny")
    words = ["kumquat", "hyperventilating"]
    float32 = keyword_vectors(MaskedLM(model, tokenizer), words, "ota", ota_options={"iterations": 5})
    bfloat16 = keyword_vectors(MaskedLM(model, tokenizer, dtype="bfloat16"), words, "ota",
                               ota_options={"iterations": 5})
    assert float32.dtype == bfloat16.dtype == np.float32
    np.testing.assert_array_equal(float32, bfloat16)


def test_the_dtype_is_recorded_when_not_float32(one_torch_thread):
    from lexprobe.sources.encoder import TokenEncoder

    assert "dtype" not in TokenEncoder("minilm", threads=1).settings()  # float32 indexes read as before
    assert TokenEncoder("minilm", threads=1, dtype="bfloat16").settings()["dtype"] == "bfloat16"


def test_an_invalid_dtype_is_a_clear_error(cli):
    import torch

    assert resolve_dtype("float32") == torch.float32 and resolve_dtype("bfloat16") == torch.bfloat16
    assert resolve_dtype(None) == torch.float32
    with pytest.raises(LexprobeError) as err:
        resolve_dtype("float16")
    assert str(err.value) == "--dtype float16: not an inference dtype (choose from float32, bfloat16)"
    from lexprobe.rare_words.language_models import load_lm

    with pytest.raises(LexprobeError, match="--dtype int8: not an inference dtype"):
        load_lm("splade-tiny", dtype="int8")
    r = cli("query", "probe", "--dtype", "float16", "A kumquat is a ___ .")
    assert r.code == 2 and "--dtype" in r.err and "float16" in r.err and "Traceback" not in r.err
