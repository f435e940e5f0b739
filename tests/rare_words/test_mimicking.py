"""Attentive Mimicking: the forward pass computed by hand, recovery of a synthetic form-made space, training."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.rare_words import mimicking
from lexprobe.rare_words.am_targets import TargetTable
from lexprobe.rare_words.mimicking import (AMModel, ContextData, NGramVocab, char_ngrams, context_vectors,
                                           epoch_instances, ngram_dropout, preset, train, training_set)


def test_ngrams_of_the_padded_word_as_the_authors_cut_them():
    assert char_ngrams("ab") == ["<S>ab", "<S>ab<S>", "ab<S>"]
    assert char_ngrams("abcd", 3, 3) == ["<S>ab", "abc", "bcd", "cd<S>"]
    vocab = NGramVocab.build(["abc", "abd", "abe", "abf", "xyz"], threshold=4)
    assert vocab.ngrams == ["UNK", "PAD", "<S>ab"]  # in 4 words; every other n-gram in fewer
    assert vocab.ids("abq") == [2, 0, 0, 0, 0, 0]
    flat, offsets = vocab.encode(["ab", "abq"])
    assert offsets.tolist() == [0, 3, 9] and flat[:3].tolist() == [2, 0, 0]


def tiny_model(attention="clustering"):
    """d = 2; word 'ab' has the n-grams <S>ab, <S>ab<S>, ab<S> (ids 2, 3, 4) with vectors (2,0), (0,2), (1,1)."""
    import torch

    vocab = NGramVocab(["UNK", "PAD", "<S>ab", "<S>ab<S>", "ab<S>"])
    targets = TargetTable(["x", "y", "z"], np.array([[1, 0], [0, 1], [1, 1]], np.float32))
    state = {"ngrams.weight": torch.tensor([[9., 9.], [9., 9.], [2., 0.], [0., 2.], [1., 1.]]),
             "M.weight": torch.eye(2), "A.weight": torch.tensor([[2., 0.], [0., 0.]]),
             "gate.weight": torch.tensor([[0., 0., 1., 0.]]), "gate.bias": torch.tensor([-153.5 / 173])}
    return AMModel(preset("am", attention=attention), vocab, state, targets)


def test_forward_pass_by_hand():
    """Contexts of 'ab': v1 = mean(x, y) = (.5, .5); v2 = z = (1, 1); v3 = mean(x, x, z) = (1, 1/3) (both x
    count; 'ab' itself and the unknown 'q' are left out). With M = I: row sums of v_i.v_j are 13/6, 13/3, 28/9
    (over sqrt 2, which cancels), so rho = (39, 78, 56) / 173, not a softmax. ctx = (153.5, 116.1667) / 173.
    Form = mean of (2,0), (0,2), (1,1) = (1, 1). The gate reads the untransformed ctx: w.[form; ctx] + b =
    ctx_1 - 153.5/173 = 0, alpha = .5. Output = .5 (1, 1) + .5 A ctx = (.5 + 153.5/173, .5)."""
    model = tiny_model()
    got = model.infer(["ab"], [["x ab y", "z ab q", "x ab x z"]])
    assert got.contexts.tolist() == [3]
    assert np.allclose(got.rho[0], np.array([39, 78, 56]) / 173, atol=1e-6)
    assert got.alpha[0] == pytest.approx(0.5, abs=1e-6)
    assert np.allclose(got.vectors[0], [0.5 + 153.5 / 173, 0.5], atol=1e-6)
    assert np.allclose(model.form(["ab"]), [[1, 1]])


def test_uniform_attention_weighs_every_known_word_alike():
    model = tiny_model("uniform")
    got = model.infer(["ab"], [["x ab y", "z ab", "x ab x z"]])
    assert np.allclose(got.rho[0], np.array([2, 1, 3]) / 6, atol=1e-6)  # 2, 1 and 3 known words
    ctx = np.array([2 * 0.5 + 1 + 3 * 1, 2 * 0.5 + 1 + 3 / 3]) / 6  # the mean of all six known word vectors
    alpha = 1 / (1 + math.exp(-(ctx[0] - 153.5 / 173)))
    assert got.alpha[0] == pytest.approx(alpha, abs=1e-6)
    assert np.allclose(got.vectors[0], alpha * np.ones(2) + (1 - alpha) * np.array([2 * ctx[0], 0]), atol=1e-6)


def test_uniform_attention_gives_a_single_one_word_context_all_the_weight():
    """Pins the uniform weights' normalisation (counts / their sum; the sum is clamped to at least 1 only so
    that a word without contexts gets zeros, not NaN): one context with one known word has rho = 1 and ctx =
    that word's vector."""
    got = tiny_model("uniform").infer(["ab"], [["z ab"]])
    assert np.allclose(got.rho[0], [1.0], atol=1e-6)
    alpha = 1 / (1 + math.exp(-(1 - 153.5 / 173)))  # ctx = z = (1, 1)
    assert got.alpha[0] == pytest.approx(alpha, abs=1e-6)


def test_the_vocabulary_defaults_are_the_authors_3_to_5_grams():
    """Pins NGramVocab.from_lists' defaults (n-grams of 3 to 5 characters, threshold 4), the lengths its ids
    for a new word are cut with."""
    lists = [char_ngrams(w) for w in ("abcde", "abcdf", "abcdg", "abcdh")]
    vocab = NGramVocab.from_lists(lists)
    assert (vocab.nmin, vocab.nmax) == (3, 5)
    assert "<S>abcd" in vocab.ngrams and len(vocab.ids("abcdz")) == len(char_ngrams("abcdz", 3, 5))
    assert NGramVocab.from_lists(lists[:3]).ngrams == ["UNK", "PAD"]  # in 3 lists: under the threshold


def test_no_usable_context_gives_the_form_and_no_gate():
    model = tiny_model()
    got = model.infer(["ab", "ab", "zz"], [[], ["ab q", "ab"], None])
    assert np.allclose(got.vectors[:2], [[1, 1], [1, 1]]) and np.isnan(got.alpha).all()
    assert got.contexts.tolist() == [0, 0, 0] and all(len(r) == 0 for r in got.rho)
    with pytest.raises(LexprobeError, match="lists of contexts"):
        model.infer(["ab"], [[], []])


def test_context_vectors_drop_the_owner_and_unknown_words():
    targets = TargetTable(["a", "b", "w"], np.array([[1, 0], [0, 1], [5, 5]], np.float32))
    V, n = context_vectors([["a", "w", "b", "w"], ["w", "q"], ["a", "w", "a"]], ["w", "w", "a"], targets)
    assert n.tolist() == [2, 0, 1]
    assert np.allclose(V, [[0.5, 0.5], [0, 0], [5, 5]])


def test_ngram_dropout_keeps_a_word_alive_with_unk():
    flat, offsets = np.arange(2, 12), np.array([0, 3, 10])
    f, o = ngram_dropout(flat, offsets, 0.999999, np.random.default_rng(0))
    assert o.tolist() == [0, 1, 2] and f.tolist() == [0, 0]
    f, o = ngram_dropout(flat, offsets, 0.5, np.random.default_rng(1))
    assert set(f[o[0]:o[1]].tolist()) <= {2, 3, 4, 0} and set(f[o[1]:].tolist()) <= set(range(5, 12)) | {0}


def test_instances_follow_the_authors_sampling():
    """Counts 50, 350 and 900 give 1, 3 and 5 instances; a word's instances share no context; an instance past
    the word's contexts, or left with fewer than smin, is dropped; each instance takes smin..smax contexts."""
    words = ["aaa", "bbb", "ccc"]
    targets = TargetTable(words + ["x"], np.eye(4, dtype=np.float32)[:, :3].copy() + 0)
    windows = [["x", w] for w in words for _ in range(12)]
    data = ContextData(pa.array([w for w in words for _ in range(12)]), pa.array(windows),
                       {"aaa": 50, "bbb": 350, "ccc": 900})
    config = preset("am", smin=2, smax=4)
    ts, _ = training_set(targets, data, config)
    assert ts.copies.tolist() == [1, 3, 5]
    inst, _ = epoch_instances(ts, config, epoch=0)
    for w in range(3):
        mine = inst.word == w
        used = np.concatenate([inst.order[s:s + c] for s, c in zip(inst.start[mine], inst.count[mine])])
        assert len(used) == len(set(used.tolist())) and set(used.tolist()) <= set(range(12 * w, 12 * w + 12))
        assert (inst.count[mine] >= 2).all() and (inst.count[mine] <= 4).all()
    assert (inst.word == 0).sum() == 1 and (inst.word == 1).sum() == 3 and 3 <= (inst.word == 2).sum() <= 5
    again, _ = epoch_instances(ts, config, epoch=0)
    assert np.array_equal(again.order, inst.order) and np.array_equal(again.start, inst.start)


def test_the_context_preset_trains_only_on_instances_with_its_minimum():
    """smin 8: a word with 6 usable windows gives no instance (the authors' builder gave it one of 6); a word with
    20 gives only instances of 8 or more; the log counts the words below the minimum."""
    words = ["aaa", "bbb"]
    targets = TargetTable(words + ["x"], np.eye(3, dtype=np.float32))
    owners = ["aaa"] * 6 + ["bbb"] * 20
    data = ContextData(pa.array(owners), pa.array([["x", w] for w in owners]), {"aaa": 500, "bbb": 500})
    config = preset("am-context", epochs=3)
    ts, _ = training_set(targets, data, config)
    for epoch in range(3):
        inst, _ = epoch_instances(ts, config, epoch=epoch)
        assert (inst.word == 1).all() and (inst.count >= 8).all() and inst.count.sum() <= 20
    _, log = train(targets, data, config)
    assert log.below_smin == 1 and log.words == 2
    with pytest.raises(LexprobeError, match="no training word has 8 usable contexts"):
        train(targets, data, config, held_out=["bbb"])


def synthetic(seed=0, n_words=1500, dim=16):
    """Words over a small alphabet whose vectors are the sums of their n-grams' vectors; contexts of random
    other words (no information about the word)."""
    rng = np.random.default_rng(seed)
    letters = list("abc")  # few letters: most n-grams of a held-out word occur in 4+ training words
    words = sorted({"".join(rng.choice(letters, size=rng.integers(4, 7))) for _ in range(n_words)})
    grams = sorted({g for w in words for g in char_ngrams(w)})
    gram_vec = dict(zip(grams, 0.05 * rng.standard_normal((len(grams), dim)).astype(np.float32)))
    noise = [f"n{i}" for i in range(50)]
    matrix = np.concatenate([np.stack([sum(gram_vec[g] for g in char_ngrams(w)) for w in words]),
                             0.5 * rng.standard_normal((len(noise), dim)).astype(np.float32)])
    targets = TargetTable(words + noise, matrix)
    owners, windows = [], []
    for w in words:
        for _ in range(6):
            windows.append(list(rng.choice(noise + words, size=6)) + [w])
            owners.append(w)
    data = ContextData(pa.array(owners), pa.array(windows), {w: 300 for w in words})
    held = words[::10]
    return targets, data, held


def cosines(a, b):
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def recovery(model, targets, data, held):
    owners = data.owners.to_pylist()
    windows = data.windows.to_pylist()
    contexts = [[win for o, win in zip(owners, windows) if o == w] for w in held]
    truth = targets.matrix[[targets.row(w) for w in held]]
    got = model.infer(held, contexts)
    V, _ = context_vectors([c for cs in contexts for c in cs], [w for w, cs in zip(held, contexts) for _ in cs],
                           targets)
    mean = V.reshape(len(held), -1, targets.dim).mean(1)
    return cosines(got.vectors, truth).mean(), cosines(mean, truth).mean(), got


def test_am_recovers_a_space_made_from_form_far_better_than_the_context_mean(one_torch_thread):
    targets, data, held = synthetic()
    model, log = train(targets, data, preset("am", epochs=10, seed=3), held_out=held)
    am, baseline, got = recovery(model, targets, data, held)
    assert log.losses[-1] < 0.2 * log.losses[0]  # training lowers the loss
    assert am > 0.85 and baseline < 0.35 and am - baseline > 0.5
    assert np.nanmean(got.alpha) > 0.7  # the gate learned that the contexts carry nothing here
    assert log.words == len(set(data.owners.to_pylist())) - len(held)  # the held-out words were never targets


def test_a_broken_form_path_fails_the_same_check(one_torch_thread, monkeypatch):
    """The mutation the recovery test must catch: every n-gram looked up as UNK."""
    targets, data, held = synthetic()
    encode = NGramVocab.encode

    def unk_only(self, words, lists=None):
        flat, offsets = encode(self, words, lists)
        return np.full_like(flat, mimicking.UNK), offsets

    monkeypatch.setattr(NGramVocab, "encode", unk_only)
    model, _ = train(targets, data, preset("am", epochs=10, seed=3), held_out=held)
    am, baseline, _ = recovery(model, targets, data, held)
    assert am < 0.35


def test_batched_and_instance_at_a_time_training_agree(one_torch_thread):
    targets, data, held = synthetic(n_words=200)
    config = preset("am-context", smin=3, epochs=2, seed=1)  # the synthetic words have 6 windows
    a, log_a = train(targets, data, config)
    b, log_b = train(targets, data, config, reference=True)
    assert np.allclose(log_a.losses, log_b.losses, rtol=1e-4)
    assert np.allclose(a.form(held), b.form(held), atol=1e-4)


def test_training_is_seeded_and_checks_its_settings(one_torch_thread):
    targets, data, _ = synthetic(n_words=120)
    one, _ = train(targets, data, preset("am", epochs=1, seed=5))
    two, _ = train(targets, data, preset("am", epochs=1, seed=5))
    three, _ = train(targets, data, preset("am", epochs=1, seed=6))
    words = ["abcd", "gfed"]
    assert np.array_equal(one.form(words), two.form(words)) and not np.allclose(one.form(words), three.form(words))
    with pytest.raises(LexprobeError, match="preset"):
        preset("nope")
    with pytest.raises(LexprobeError, match="smin"):
        preset("am", smin=5, smax=2)
    with pytest.raises(LexprobeError, match="attention"):
        preset("am", attention="softmax")
    with pytest.raises(LexprobeError, match="no training word"):
        train(targets, data, preset("am"), held_out=data.owners.to_pylist())
