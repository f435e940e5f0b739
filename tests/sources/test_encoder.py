"""Token encoder: pooling and layer choices against a manual computation with the packaged MiniLM, batching
against one sentence at a time, long sentences in windows, and errors."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from lexprobe.sources.encoder import TokenEncoder, _length_batches, parse_layers
from lexprobe.core.errors import LexprobeError
from lexprobe.suite.bench_encode import one_sentence_at_a_time

SENTENCES = [["I", "was", "high", "on", "drugs"],
             ["The", "unbelievably", "hyperventilating", "cat", "sat", "on", "the", "mat", "."],
             ["Fulton", "County", "Grand", "Jury", "said", "Friday"]]
SPANS = [[(3, 1), (0, 2)], [(1, 2), (7, 1)], [(0, 4), (5, 1)]]


@pytest.fixture(scope="module")
def encoder():
    return TokenEncoder("minilm", batch_tokens=16)  # tiny batches: several per call


def manual(encoder, words, position, length, layers, pooling):
    """The vector computed by hand: one sentence, all hidden states, pick the subwords of the span."""
    import torch

    enc = encoder.tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        states = encoder.model(**enc, output_hidden_states=True).hidden_states
    hidden = torch.stack([states[l][0] for l in layers]).mean(0).numpy()
    idx = [i for i, w in enumerate(enc.word_ids()) if w is not None and position <= w < position + length]
    assert idx, "the span has subwords"
    return {"mean": hidden[idx].mean(0), "first": hidden[idx[0]], "last": hidden[idx[-1]]}[pooling]


def test_parse_layers():
    assert parse_layers(6, None) == (6,)
    assert parse_layers(None, "3-6") == (3, 4, 5, 6)
    assert parse_layers(None, "2,4") == (2, 4)
    assert parse_layers(None, None) is None
    for bad in ("6-3", "x", "1-2-3"):
        with pytest.raises(LexprobeError):
            parse_layers(None, bad)
    with pytest.raises(LexprobeError, match="not both"):
        parse_layers(2, "3-4")


@pytest.mark.parametrize("pooling", ["mean", "first", "last"])
def test_pooling_matches_manual(encoder, pooling):
    encoder.pooling = pooling
    try:
        vectors, ok, stats = encoder.encode(SENTENCES, SPANS)
    finally:
        encoder.pooling = "mean"
    assert ok.all() and stats.batches > 1 and stats.split_sentences == 0
    expected = [manual(encoder, w, p, n, [6], pooling) for w, spans in zip(SENTENCES, SPANS) for p, n in spans]
    np.testing.assert_allclose(vectors, np.stack(expected), atol=2e-5)
    if pooling != "mean":  # 'unbelievably hyperventilating' has several subwords: first and last differ
        assert not np.allclose(vectors[2], manual(encoder, SENTENCES[1], 1, 2, [6], "mean"), atol=1e-3)


def test_layer_choice_and_layer_mean(encoder):
    for layers in [(0,), (3,), (3, 4, 5), (-1,)]:
        enc = copy.copy(encoder)  # same loaded model, other layers
        enc.layers = tuple(sorted(l % (encoder.num_layers + 1) for l in layers))
        vectors, ok, _ = enc.encode(SENTENCES[:1], SPANS[:1])
        expected = [manual(encoder, SENTENCES[0], p, n, list(enc.layers), "mean") for p, n in SPANS[0]]
        np.testing.assert_allclose(vectors, np.stack(expected), atol=2e-5)
    with pytest.raises(LexprobeError, match="no layer 7"):
        TokenEncoder("minilm", layers=(7,))


def test_layers_above_the_chosen_ones_are_not_run(encoder):
    """An encoder for layers 2-3 keeps only the first 3 transformer blocks, and its vectors are the full model's."""
    low = TokenEncoder("minilm", layers=(2, 3), batch_tokens=16)
    assert len(low.model.encoder.layer) == 3 and len(encoder.model.encoder.layer) == 6
    vectors, ok, _ = low.encode(SENTENCES, SPANS)
    expected = [manual(encoder, words, p, n, [2, 3], "mean") for words, spans in zip(SENTENCES, SPANS)
                for p, n in spans]
    assert ok.all()
    np.testing.assert_allclose(vectors, np.stack(expected), atol=2e-5)


def test_batched_equals_one_sentence_at_a_time(encoder, shared_data):
    from lexprobe.sources.datasets.corpora import read_corpus
    from lexprobe.suite.bench_encode import sample_sentences

    corpus = read_corpus(f"wsd:{shared_data / 'wsd_eval/semeval2007'}")
    sentences, spans = sample_sentences(corpus, 12, seed=1)
    encoder.batch_tokens = 256
    vectors, ok, stats = encoder.encode(sentences, spans)
    assert ok.all() and stats.batches > 1 and stats.padded_tokens >= stats.subword_tokens
    np.testing.assert_allclose(vectors, one_sentence_at_a_time(encoder, sentences, spans), atol=5e-5)


def test_length_batches_sorted_and_bounded():
    lengths = np.array([5, 30, 7, 6, 100, 8])
    batches = _length_batches(lengths, batch_tokens=24, max_batch=3)
    assert sorted(np.concatenate(batches).tolist()) == list(range(6))
    flat = np.concatenate(batches)
    assert (np.diff(lengths[flat]) >= 0).all()  # sorted by length
    for b in batches:
        assert len(b) <= 3 and (len(b) == 1 or len(b) * lengths[b].max() <= 24)


def test_long_sentences_are_read_in_overlapping_windows(encoder):
    """max_length 16 = [CLS] + 14 subwords + [SEP]: windows of 14 content tokens, 7 apart (starts 0, 7, 14, 21,
    26 for 40 one-subword words). Each target is read from the window that gives it the most context on its
    tighter side, and its vector is what the model gives for that window by hand."""
    words = ["word"] * 40
    enc = copy.copy(encoder)
    enc.max_length = 16
    spans = [[(0, 1), (12, 3), (30, 1), (39, 1), (5, 15)], [(1, 1)]]
    with pytest.warns(UserWarning, match="1 targets are longer than the model's 16-subword limit"):
        vectors, ok, stats = enc.encode([words, ["short", "one"]], spans)
    assert ok.tolist() == [True, True, True, True, False, True]  # 15 words do not fit a 14-token window
    assert stats.split_sentences == 1 and stats.lost_targets == {"longer than the model's length limit": 1}
    # (0,1): window 0; (12,3) = tokens 12-14: window 7 (context 5 before, 6 after); (30,1): window 21
    # (9 and 4) beats 26 (4 and 9) by the earlier start; (39,1): window 26, the only one holding it
    assert stats.windows == 4
    for row, (position, length), start in [(0, (0, 1), 0), (1, (12, 3), 7), (2, (30, 1), 21), (3, (39, 1), 26)]:
        window = words[start:start + 14]
        expected = manual(encoder, window, position - start, length, list(encoder.layers), "mean")
        np.testing.assert_allclose(vectors[row], expected, atol=2e-5)
    assert not vectors[4].any()
    short = manual(encoder, ["short", "one"], 1, 1, list(encoder.layers), "mean")
    np.testing.assert_allclose(vectors[5], short, atol=2e-5)


def test_span_outside_sentence_is_an_error(encoder):
    with pytest.raises(LexprobeError, match="outside sentence 0"):
        encoder.encode([["a", "b"]], [[(1, 2)]])


def test_unknown_model_and_pooling():
    with pytest.raises(LexprobeError, match="no-such-model-xyz: cannot load"):
        TokenEncoder("no-such-model-xyz")
    with pytest.raises(LexprobeError, match="unknown pooling"):
        TokenEncoder("minilm", pooling="max")


def test_bench_encode_records_both_methods(shared_data, tmp_path):
    from lexprobe.suite.bench_encode import run_encode_bench

    out = tmp_path / "encode.md"
    result = run_encode_bench("minilm", f"wsd:{shared_data / 'wsd_eval/semeval2007'}", n_sentences=6, seed=0,
                              record_path=str(out))
    assert result["max_diff"] < 1e-4  # both methods embed the same targets alike
    text = out.read_text()
    assert "one sentence per forward pass" in text and "speed-up" in text and "numpy float32 matmul" in text


def test_max_length_caps_the_models_limit_and_reads_windows():
    capped = TokenEncoder("minilm", max_length=12)
    assert capped.max_length == 12 and capped.settings()["max_length"] == 12
    full = TokenEncoder("minilm")
    assert full.max_length == 512
    words = SENTENCES[1] * 2  # 18 words, more than 12 subwords
    vectors, ok, stats = capped.encode([words], [[(0, 1), (17, 1)]])
    assert ok.all() and stats.split_sentences == 1 and stats.windows >= 2
    whole, _, _ = full.encode([words], [[(0, 1), (17, 1)]])
    assert not np.allclose(vectors, whole, atol=1e-3)  # a window is less context than the whole sentence
    with pytest.raises(LexprobeError, match="at least 8"):
        TokenEncoder("minilm", max_length=4)


@pytest.mark.parametrize("layer", [15, None])
def test_causal_hidden_states_equal_transformers_own(layer):
    """SmolLM2 (a causal LM): the encoder's vector of a target in a short sentence, batched with a longer one
    (right padding), equals the mean of transformers' own hidden states of that layer over the target's subwords,
    the sentence run alone through the whole causal LM (whose input embeddings are the tied output head: the bare
    ``AutoModel`` would leave them random)."""
    import torch
    from transformers import AutoModelForCausalLM

    from lexprobe.sources.models import resolve_model

    encoder = TokenEncoder("smollm2", layers=[layer] if layer else None)
    assert encoder.num_layers == 30 and encoder.layers == ((layer,) if layer else (30,))
    sentences = [["I", "was", "high", "on", "drugs"], SENTENCES[1]]
    spans = [[(3, 1), (4, 1)], [(1, 2)]]
    vectors, ok, stats = encoder.encode(sentences, spans)
    assert ok.all() and stats.batches == 1 and stats.padded_tokens > stats.subword_tokens
    reference = AutoModelForCausalLM.from_pretrained(resolve_model("smollm2")).eval()  # the whole LM, tied weights
    expected = []
    for words, targets in zip(sentences, spans):
        enc = encoder.tokenizer(words, is_split_into_words=True, return_tensors="pt")
        with torch.inference_mode():
            states = reference(**enc, output_hidden_states=True).hidden_states
        assert len(states) == 31
        hidden = states[layer if layer else 30][0].numpy()
        for position, length in targets:
            idx = [i for i, w in enumerate(enc.word_ids()) if w is not None and position <= w < position + length]
            expected.append(hidden[idx].mean(0))
    np.testing.assert_allclose(vectors, np.stack(expected), rtol=1e-4, atol=2e-3 * np.abs(expected).max())
    prefix, _, _ = encoder.encode([sentences[1][:3]], [[(1, 2)]])  # causal: the words after a target change nothing
    np.testing.assert_allclose(prefix[0], vectors[2], rtol=1e-4, atol=2e-3 * np.abs(expected).max())
