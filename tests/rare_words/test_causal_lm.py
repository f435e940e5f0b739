"""Causal language models: model kinds, the blank at the end, next-token probing on WNLaMPro with every
keyword strategy, OTA and its recovery check, on a tiny random GPT-2 and a tiny random Llama built here (a
byte-level BPE tokenizer trained in the test), checked against the models run by hand; and one short check of the
packaged SmolLM2 (its dequantised cache is created by this test session)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from lexprobe.rare_words.cloze_queries import make_query, split_at_blank, top_predictions
from lexprobe.rare_words.language_models import CausalLM, blank_vocabulary
from lexprobe.core.errors import LexprobeError

WORDS = ("bird fruit tree dog cat animal plant sparrow lime lemon citrus red green hot cold old new kind opposite "
         "big small thing").split()


def _tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>", "<pad>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    corpus = [f"a {w} is a kind of {v} ." for w in WORDS for v in WORDS] * 3 + ['" dog " and " cat " .', '"dog" and "cat" .'] * 20
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                   pad_token="<pad>")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict:
    """Paths of a tiny random GPT-2 and a tiny random Llama sharing one trained BPE tokenizer."""
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    tokenizer = _tokenizer()
    torch.manual_seed(0)
    out = {}
    configs = {"gpt2": (GPT2LMHeadModel, GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2,
                                                    n_positions=64, bos_token_id=0, eos_token_id=0)),
               "llama": (LlamaForCausalLM, LlamaConfig(vocab_size=len(tokenizer), hidden_size=32,
                                                       intermediate_size=64, num_hidden_layers=2,
                                                       num_attention_heads=2, num_key_value_heads=1,
                                                       max_position_embeddings=64, bos_token_id=0, eos_token_id=0,
                                                       pad_token_id=1))}
    for name, (cls, config) in configs.items():
        path = tmp_path_factory.mktemp(f"tiny_{name}")
        model = cls(config)
        with torch.no_grad():  # larger random weights: the ranks differ clearly between tokens
            model.get_input_embeddings().weight.normal_(0, 1)
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)
        out[name] = str(path)
    return out


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tiny models: one torch thread (conftest)


def _next_logits(lm, text: str) -> torch.Tensor:
    """The model run by hand on ``text``: full logits, the last position."""
    ids = torch.tensor([lm.encode(text)])
    with torch.no_grad():
        return lm.model(input_ids=ids).logits[0, -1].float()


# ----------------------------------------------------------------------------------------------- kinds, blank


def test_model_kind_from_the_checkpoint(tiny):
    from lexprobe.sources.models import model_kind

    assert model_kind(tiny["gpt2"]) == "causal"
    assert model_kind(tiny["llama"]) == "causal"
    assert model_kind("splade-tiny") == "masked"


def test_blank_must_end_the_text():
    assert split_at_blank("A kumquat is a kind of ___ .") == ("A kumquat is a kind of", True)
    assert split_at_blank('" dog " and "___" .') == ('" dog " and "', False)
    assert split_at_blank("dogs and ___") == ("dogs and", True)
    with pytest.raises(LexprobeError, match="must end the text"):
        split_at_blank("___ is a kind of bird .")
    with pytest.raises(LexprobeError, match="must end the text"):
        split_at_blank("A ___ is a bird .")
    with pytest.raises(LexprobeError, match="exactly one blank"):
        split_at_blank("A sparrow is a kind of bird .")


def test_blank_vocabulary_takes_the_form_at_the_blank(tiny):
    from lexprobe.sources.models import load_tokenizer

    tok = load_tokenizer(tiny["gpt2"])
    spaced = blank_vocabulary(tok, {True})
    assert spaced["bird"] == tok.convert_tokens_to_ids("Ġbird")
    bare_and_spaced = blank_vocabulary(tok, {True, False})
    # a word is kept only when both " w" and "w" are one token each; the id is the spaced form's
    for w, i in bare_and_spaced.items():
        assert len(tok(w, add_special_tokens=False)["input_ids"]) == 1 and spaced[w] == i
    assert set(bare_and_spaced) <= set(spaced)
    assert "sparrow" not in bare_and_spaced or tok.tokenize("sparrow") == ["sparrow"]


# --------------------------------------------------------------------------------------------------- queries


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_query_and_top_predictions_match_the_model_run_by_hand(tiny, name):
    lm = CausalLM.load(tiny[name])
    q = make_query(lm, "a <W> is a kind of ___ .", "kumquat", replace=False)
    assert q.ids == lm.encode("a kumquat is a kind of") and q.mask_pos == len(q.ids) - 1 and q.slot == -1
    assert q.keyword_tokens == len(lm.tokenizer.tokenize(" kumquat")) > 1
    r = make_query(lm, "a <W> is a kind of ___ .", "kumquat", replace=True)
    assert q.ids[0] == lm.tokenizer.convert_tokens_to_ids("<|endoftext|>")  # the document start comes first
    s = r.slot
    assert s == 2 and len(r.ids) == len(q.ids) - q.keyword_tokens + 1 and r.mask_pos == len(r.ids) - 1
    assert r.ids[:s] + r.ids[s + 1:] == q.ids[:s] + q.ids[s + q.keyword_tokens:]
    logits = _next_logits(lm, "a sparrow is a kind of")
    top = top_predictions(lm, "a sparrow is a kind of ___ .", k=5)
    expected = torch.softmax(logits, -1).topk(5)
    assert [t["token"] for t in top] == [lm.tokenizer.decode([i]).strip() for i in expected.indices.tolist()]
    assert np.allclose([t["probability"] for t in top], expected.values.numpy(), atol=1e-6)


def test_probe_command_checks_the_blank_for_a_causal_model(tiny, cli):
    bad = cli("query", "probe", "--model", tiny["gpt2"], "A ___ is a kind of bird .")
    assert bad.code == 2 and "must end the text" in bad.err and "Traceback" not in bad.err
    ok = cli("query", "probe", "--model", tiny["gpt2"], "-k", "3", "--format", "json", "a dog is a kind of ___ .")
    assert ok.code == 0, ok
    import json

    rows = json.loads(ok.out)
    assert [r["rank"] for r in rows] == [1, 2, 3] and all(r["token"] == r["token"].strip() for r in rows)


# ------------------------------------------------------------------------------------------------------- OTA


def _hidden_states(model, **inputs):
    with torch.no_grad():
        return model.base_model(**inputs, output_hidden_states=True).hidden_states


@pytest.mark.parametrize("name", ["gpt2", "llama"])
@pytest.mark.parametrize("contexts", ["static", "random"])
@pytest.mark.parametrize("distance", ["raw", "normalised"])
def test_ota_loss_on_a_causal_model_compares_the_right_context(tiny, name, contexts, distance):
    """lexprobe's OTA loss on a causal model equals the paper's distance summed over the *right* context's
    positions alone (hand-computed): the left context cannot see the word, so its terms vanish. With
    ``distance="normalised"`` (the default for causal LMs) each hidden state is first divided by its root mean
    square over its dimensions."""
    import zlib

    from lexprobe.rare_words import ota

    lm = CausalLM.load(tiny[name])
    model, tok = lm.model, lm.tokenizer
    assert ota.resolve_distance("auto", model) == "normalised"
    words = ["kumquat", "bird"]
    pieces = ota.word_pieces(tok, words)
    assert len(pieces[0]) > 2 and len(pieces[1]) == 1
    v0 = np.random.default_rng(1).standard_normal((2, 32)).astype(np.float32)
    res = ota.optimise(model, tok, pieces, v0, keys=words, iterations=2, contexts=contexts, lr=0.0, seed=3,
                       distance=distance)
    # the random contexts' vocabulary by an independent rule: byte-level tokens that start a word (Ġ) followed
    # by ASCII letters only, in id order
    vocab = np.array(sorted(i for t, i in tok.get_vocab().items() if re.fullmatch("Ġ[A-Za-z]+", t)))
    assert vocab.tolist() == ota.context_vocabulary(tok).tolist()
    E = model.get_input_embeddings().weight.detach()
    period = tok(".", add_special_tokens=False)["input_ids"]

    def norm(h):
        return h / (h ** 2).mean(-1, keepdim=True).sqrt() if distance == "normalised" else h
    for row, word in enumerate(words):
        draws = np.random.default_rng([3, zlib.crc32(word.encode())]).integers(0, len(vocab), size=(2, 2))
        for it in range(2):
            tl, tr = ([int(vocab[draws[it, 0]])], [int(vocab[draws[it, 1]])]) if contexts == "random" else ([], [])
            left, right = [tok.bos_token_id] + tl, tr + period + [tok.eos_token_id]
            h1 = _hidden_states(model, input_ids=torch.tensor([left + pieces[row] + right]))
            e2 = E[left + [0] + right].clone()
            e2[len(left)] = torch.as_tensor(v0[row])
            h2 = _hidden_states(model, inputs_embeds=e2[None])
            n, a = len(pieces[row]), len(left)
            want = sum(float(((norm(h1[k][0, a + n:]) - norm(h2[k][0, a + 1:])) ** 2).sum())
                       for k in range(1, len(h1)))
            assert torch.allclose(h1[-1][0, :a], h2[-1][0, :a], atol=1e-5)  # left context: untouched by the word
            assert res.loss_history[row, it] == pytest.approx(want, rel=1e-4)


def test_ota_batched_equals_one_word_at_a_time_on_a_causal_model(tiny):
    from lexprobe.rare_words.ota import approximate

    lm = CausalLM.load(tiny["llama"])
    words = ["kumquat", "lingonberry", "samosa"]
    options = dict(iterations=30, contexts="random", init="zeros", lr=1e-2, patience=None, seed=1)
    batched = approximate(lm.model, lm.tokenizer, words, batch_size=3, **options)
    for i, w in enumerate(words):
        alone = approximate(lm.model, lm.tokenizer, [w], batch_size=1, **options)
        assert np.allclose(alone.vectors[0], batched.vectors[i], atol=1e-5)
    assert (batched.loss_history[:, -10:].mean(1) < batched.loss_history[:, :10].mean(1)).all()  # it optimises


def test_recovery_check_on_a_causal_model(tiny):
    """Figure 1 on a causal model: one-token words approximated from zeros move towards their embeddings."""
    from lexprobe.rare_words.ota_recovery import run_recovery

    lm = CausalLM.load(tiny["gpt2"])
    res = run_recovery(lm.model, lm.tokenizer, n_words=6, iterations=100, every=50, seed=0)
    ends = {r["contexts"]: r for r in res["summary"]}
    assert set(ends) == {"static", "random"}
    for r in ends.values():
        assert r["start"] == pytest.approx(1.0) and r["end"] < 0.6
        assert r["read_start"] == pytest.approx(1.0) and r["read_end"] < 0.6


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_recovery_read_distance_weights_by_the_first_norm(tiny, name):
    """The read distance weights both vectors by the first normalisation layer's weights (GPT-2: h.0.ln_1,
    Llama: layers.0.input_layernorm), checked against snapshots recomputed by hand."""
    from lexprobe.rare_words import ota
    from lexprobe.rare_words.ota_recovery import input_norm_weights, recovery_words, run_recovery

    lm = CausalLM.load(tiny[name])
    base = lm.model.base_model
    first = base.h[0].ln_1 if name == "gpt2" else base.layers[0].input_layernorm
    with torch.no_grad():
        first.weight.copy_(torch.linspace(0.01, 2.0, 32))  # uneven weights: the two distances differ
    w = input_norm_weights(lm.model)
    assert np.array_equal(w, first.weight.detach().numpy())
    res = run_recovery(lm.model, lm.tokenizer, n_words=3, iterations=50, every=50, contexts=("static",), seed=0)
    words, ids = recovery_words(lm.tokenizer, 3, 0)
    E = lm.model.get_input_embeddings().weight.detach().numpy()
    again = ota.optimise(lm.model, lm.tokenizer, [[t] for t in ids], np.zeros((3, 32), np.float32), keys=words,
                         iterations=50, contexts="static", lr=1e-3, patience=None, seed=0).vectors
    end = [r for r in res["curve"] if r["iteration"] == 50][0]
    def distance(x, y):  # the mean cosine distance by numpy
        x, y = x.astype(np.float64), y.astype(np.float64)
        return float(np.mean(1 - (x * y).sum(1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)))

    assert end["mean_cos_distance"] == pytest.approx(distance(again, E[ids]), abs=1e-5)
    assert end["read_distance"] == pytest.approx(distance(again * w, E[ids] * w), abs=1e-5)
    assert abs(end["read_distance"] - end["mean_cos_distance"]) > 1e-4


# ------------------------------------------------------------------------------------------- packaged SmolLM2


def test_smollm2_alias_caches_the_dequantised_model_and_knows_a_sparrow(tmp_path_factory, monkeypatch):
    """The packaged SmolLM2: the first use in this session dequantises its GGUF file into the cache (config,
    safetensors weights, tokenizer); the alias then loads from that folder, and the model says a sparrow is a bird."""
    from lexprobe.rare_words.language_models import load_lm
    from lexprobe.rare_words.cloze_queries import top_predictions as any_top
    from lexprobe.sources.models import resolve_model

    cache = tmp_path_factory.getbasetemp() / "lexprobe_cache"
    monkeypatch.setenv("LEXPROBE_CACHE", str(cache))
    folder = resolve_model("smollm2")
    assert folder.startswith(str(cache / "models"))
    import os

    files = set(os.listdir(folder))
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= files
    stamp = os.stat(os.path.join(folder, "model.safetensors")).st_mtime_ns
    lm = load_lm("smollm2")
    assert isinstance(lm, CausalLM) and resolve_model("smollm2") == folder
    assert os.stat(os.path.join(folder, "model.safetensors")).st_mtime_ns == stamp  # read, not converted again
    words = [r["token"] for r in any_top(lm, "A sparrow is a kind of ___ .", k=10)]
    assert "bird" in words, words


# ------------------------------------------------------------------------------------------ WNLaMPro probing


def _rank(logits: torch.Tensor, targets) -> int:
    return int(1 + (logits > logits[list(targets)].max()).sum())


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_probe_ranks_targets_in_the_next_token_distribution(tiny, name):
    """rank(x), RR and P@3 of a causal model, every pattern run by hand; first/last feed the keyword's first/last
    subword token in its place, avg the mean subword embedding."""
    from lexprobe.rare_words import ota
    from lexprobe.rare_words.patterns import BLANK, fill, patterns_for
    from lexprobe.rare_words.probing import probe
    from lexprobe.sources.datasets.wnlampro import Entry

    lm = CausalLM.load(tiny[name])
    entries = [Entry(0, "dev", "kumquat", "hypernym", ["fruit", "tree", "citrus", "xylophone"], "n", 0.5),
               Entry(1, "test", "hot", "antonym", ["cold"], "a", 4.0),
               Entry(2, "test", "sparrow", "cohyponym", ["bird", "dog", "cat"], "n", 2.5)]
    rows, summary = probe(entries, lm, strategies=("original", "first", "last", "avg"), cutoff=100)
    assert summary["skipped"]["targets_dropped"] == 1  # "xylophone" is no single token of this vocabulary
    E = lm.model.get_input_embeddings().weight.detach()
    for e in entries:
        pieces = ota.word_pieces(lm.tokenizer, [e.keyword])[0]
        targets = [lm.whole_words()[t] for t in e.targets if t in lm.whole_words()]
        for strategy in ("original", "first", "last", "avg"):
            ranks, p3 = [], []
            for pattern in patterns_for(e.relation):
                text, spaced = split_at_blank(fill(pattern, e.keyword, BLANK))
                assert spaced  # the patterns' blanks follow a space: the targets are the spaced tokens
                ids = lm.encode(text)
                q = make_query(lm, pattern, e.keyword, replace=False)
                assert q.ids == ids
                if strategy == "original" or q.keyword_tokens == 1:
                    logits = _next_logits(lm, text)
                else:  # the keyword's tokens in this text (after a space or not) give way to one vector,
                    # made from the word's in-sentence pieces (one vector per word)
                    forms = [pieces, lm.tokenizer(e.keyword, add_special_tokens=False)["input_ids"]]
                    s, n = next((i, len(f)) for f in forms for i in range(len(ids)) if ids[i:i + len(f)] == f)
                    vec = {"first": E[pieces[0]], "last": E[pieces[-1]], "avg": E[pieces].mean(0)}[strategy]
                    embeds = torch.cat([E[ids[:s]], vec[None], E[ids[s + n:]]])[None]
                    with torch.no_grad():
                        logits = lm.model(inputs_embeds=embeds).logits[0, -1]
                ranks.append(_rank(logits, targets))
                p3.append(len(set(logits.topk(3).indices.tolist()) & set(targets)) / 3)
            row = next(r for r in rows if r["strategy"] == strategy and r["id"] == e.id)
            assert row["rank"] == min(ranks), (strategy, e.keyword)
            assert row["rr"] == pytest.approx(1 / min(ranks) if min(ranks) <= 100 else 0.0)
            assert row["p@3"] == pytest.approx(max(p3))


def test_prefix_trees_by_hand():
    """Queries sharing beginnings become one tree: each token once, at its query's position, seeing its ancestors;
    equal queries share their end; a keyword slot with another vector is another node; a full tree starts anew."""
    from lexprobe.rare_words.cloze_queries import Query, pack_queries

    ids = [[0, 5, 6, 7], [0, 5, 6], [0, 5, 8], [0, 9], [0, 5, 6], [0, 5, 6], [0, 5, 6]]
    slots = [-1, -1, -1, -1, -1, 1, 1]
    queries = [Query(n, 0, i, len(i) - 1, s) for n, (i, s) in enumerate(zip(ids, slots))]
    vectors = np.zeros((7, 2), np.float32)
    vectors[5], vectors[6] = [1, 2], [3, 4]  # two keywords' vectors in the slot at position 1
    (tree,) = pack_queries(queries, vectors, max_tokens=20)
    # sorted: [0,5,6] x4, [0,5,6,7], [0,5,8], [0,9]: nodes 0 5 6 | slot(1,2) 6 | slot(3,4) 6 | 7 8 9
    assert tree.ids == [0, 5, 6, 5, 6, 5, 6, 7, 8, 9]
    assert tree.parent == [-1, 0, 1, 0, 3, 0, 5, 2, 1, 0] and tree.depth == [0, 1, 2, 1, 2, 1, 2, 3, 2, 1]
    assert tree.vector == [-1, -1, -1, 5, -1, 6, -1, -1, -1, -1]
    ends = dict(zip(tree.queries, tree.ends))
    assert ends == {0: 7, 1: 2, 4: 2, 2: 8, 3: 9, 5: 4, 6: 6}
    sees = tree.ancestors()
    assert np.flatnonzero(sees[7]).tolist() == [0, 1, 2, 7] and np.flatnonzero(sees[4]).tolist() == [0, 3, 4]
    assert sees.sum() == sum(d + 1 for d in tree.depth)
    small = pack_queries(queries[:4], None, max_tokens=4)  # [0,5,6] [0,5,6,7] fill 4 nodes; [0,5,8] [0,9] next
    assert [t.ids for t in small] == [[0, 5, 6, 7], [0, 5, 8, 9]] and [t.queries for t in small] == [[1, 0], [2, 3]]
    assert [len(t.ids) for t in pack_queries(queries[:1], None, max_tokens=2)] == [4]  # a longer query: alone


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_prefix_trees_give_each_query_its_logits_alone(tiny, name, monkeypatch):
    """Batched next-token logits (prefix trees, several per pass and several passes, keyword slots filled with
    vectors) equal the model run on each query alone with full logits; equal queries get equal answers."""
    from lexprobe.rare_words import cloze_queries as causal_probing
    from lexprobe.rare_words.patterns import patterns_for

    lm = CausalLM.load(tiny[name])
    with torch.no_grad():  # sharper attention, so that a wrong position or a wrongly seen token shows
        for key, weight in lm.model.named_parameters():
            if any(part in key for part in ("q_proj", "k_proj", "c_attn")):
                weight.mul_(8)
    words = ["kumquat", "sparrow", "lime", "kumquat", "lingonberry"]
    queries = [make_query(lm, p, w, replace=replace) for w in words for replace in (False, True)
               for p in patterns_for("hypernym") + patterns_for("cohyponym")]
    rng = np.random.default_rng(0)
    table = {w: rng.standard_normal(32).astype(np.float32) for w in words}
    vectors = np.stack([table[w] for w in words for _ in range(2) for _ in range(10)])
    E = lm.model.get_input_embeddings().weight.detach()
    monkeypatch.setattr(causal_probing, "PACKED_TOKENS", 24)  # several trees
    assert len(causal_probing.pack_queries(queries, vectors, 24)) > 3
    got = {}
    for rows, logits in lm.answer_logits(queries, vectors, batch_size=16):
        assert len(rows) <= 16
        got.update(zip(rows, logits))
    assert sorted(got) == list(range(len(queries)))
    for i, q in enumerate(queries):
        embeds = E[q.ids].clone()
        if q.slot >= 0:
            embeds[q.slot] = torch.as_tensor(vectors[i])
        with torch.no_grad():
            alone = lm.model(inputs_embeds=embeds[None]).logits[0, -1]
        assert torch.allclose(got[i], alone, atol=1e-4), i
    assert torch.equal(got[0], got[60]) and torch.equal(got[10], got[70])  # "kumquat" twice: the same nodes


def test_probing_benchmark_probes_whole_entries_and_agrees_with_one_at_a_time(tiny):
    from lexprobe.rare_words.patterns import patterns_for
    from lexprobe.rare_words.bench_probing import benchmark_queries, run_probing_bench

    lm = CausalLM.load(tiny["llama"])
    queries, targets = benchmark_queries(lm, 20, seed=0)
    hypernym = patterns_for("hypernym")
    assert len(queries) == 20 and targets == [[lm.whole_words()["thing"]]] * 20
    for start in (0, 8):  # every pattern of a keyword ("<W> is a": its tokens after the document start), then the next
        keyword = lm.tokenizer.decode(queries[start].ids[1:-2])
        assert [q.ids for q in queries[start:start + 8]] == [make_query(lm, p, keyword, replace=False).ids
                                                             for p in hypernym]
    assert queries[0].ids != queries[8].ids
    result = run_probing_bench(tiny["llama"], n_sentences=40, loop_sample=8, batch_size=16, seed=0,
                               record_path=None)
    assert result["agree"] == 1.0 and "prefix trees" in result["markdown"]


def test_targets_take_the_form_of_the_blank(tiny):
    lm = CausalLM.load(tiny["gpt2"])
    tok = lm.tokenizer
    ids = [lm.whole_words()[w] for w in ("dog", "cat")]
    assert ids == tok.convert_tokens_to_ids(["Ġdog", "Ġcat"])
    assert lm.at_blank(ids, "<W> and ___ .") == ids
    glued = lm.at_blank(ids, '" <W> " and "___" .')  # right after a quote: the bare word
    assert glued == tok.convert_tokens_to_ids(["dog", "cat"]) and set(glued).isdisjoint(ids)


def test_build_wnlampro_for_a_causal_model_keeps_one_token_targets(tiny, cli, home, tmp_path, tmp_path_factory,
                                                                 monkeypatch):
    import json

    from lexprobe.rare_words.language_models import target_words

    assert set(target_words(tiny["gpt2"])) == set(blank_vocabulary(CausalLM.load(tiny["gpt2"]).tokenizer))
    monkeypatch.setenv("LEXPROBE_CACHE", str(tmp_path_factory.getbasetemp() / "lexprobe_cache"))
    out = tmp_path / "wnl"
    r = cli("--home", home, "--quiet", "data", "build-wnlampro", "--model", tiny["gpt2"], "--out", out,
            "--relations", "antonym")
    assert r.code == 0, r
    rows = [json.loads(line) for line in (out / "wnlampro.jsonl").read_text().splitlines()]
    vocab = set(target_words(tiny["gpt2"]))
    assert rows and all(set(row["targets"]) <= vocab for row in rows)
    assert {"keyword": "hot", "targets": ["cold"]}.items() <= next(r for r in rows if r["keyword"] == "hot").items()


# ------------------------------------------------------------------------- intervals of the two-model stage


def _rows(cells: dict) -> list[dict]:
    return [{"strategy": "original", "id": i, "relation": rel, "bucket": b, "rr": rr, "p@3": 0.0, "p@10": 0.0,
             "random_rr": 0.0} for i, ((rel, b), values) in enumerate(cells.items()) for rr in values]


def test_frequency_gap_and_mrr_intervals_by_hand():
    from lexprobe.rare_words.probing import aggregate
    from lexprobe.rare_words.probing_scores import bucket_gap, mrr_interval

    rows = _rows({("antonym", "rare"): [0.0, 0.5], ("antonym", "frequent"): [1.0, 1.0],
                  ("hypernym", "rare"): [0.2], ("hypernym", "frequent"): [0.6, 0.4]})
    population = {("antonym", "rare"): 10, ("antonym", "frequent"): 30, ("hypernym", "rare"): 30,
                  ("hypernym", "frequent"): 10}
    gap = bucket_gap(rows, "original", "frequent", "rare", population=population, seed=1)
    # frequent (30 * 1 + 10 * 0.5) / 40 = 0.875, rare (10 * 0.25 + 30 * 0.2) / 40 = 0.2125
    assert gap["difference"] == pytest.approx(0.6625) and gap["entries"] == 7
    # resampled cell means stay within [0.4, 0.6] (hypernym frequent) and [0, 0.5] (antonym rare)
    assert 0.575 - 1e-12 <= gap["low"] <= 0.6625 <= gap["high"] <= 0.75 + 1e-12 and gap["low"] < gap["high"]
    mrr, low, high = mrr_interval(rows, "original", relation="antonym", bucket="all", population=population)
    assert mrr == pytest.approx((10 * 0.25 + 30 * 1.0) / 40)
    table = {(r["relation"], r["bucket"]): r["mrr"] for r in aggregate(rows, population=population)}
    assert table[("antonym", "all")] == pytest.approx(mrr)  # the interval belongs to the table's number
    assert (30 * 1.0) / 40 <= low <= mrr <= high <= (10 * 0.5 + 30 * 1.0) / 40
    assert mrr_interval(rows, "original", relation="antonym")[0] == pytest.approx(0.625)  # plain mean
    assert np.isnan(bucket_gap(rows, "original", "medium", "rare")["difference"])  # no medium entries


def test_recovery_mean_init_is_refused_for_a_bpe_vocabulary(tiny):
    from lexprobe.rare_words.ota_recovery import run_recovery

    lm = CausalLM.load(tiny["gpt2"])
    with pytest.raises(LexprobeError, match="WordPiece"):
        run_recovery(lm.model, lm.tokenizer, n_words=2, iterations=50, inits=("mean",))


def test_ota_strategy_gives_a_one_token_word_its_own_embedding(tiny):
    """A keyword split only in its sentence-initial form is one token inside a sentence: OTA's exact solution is
    that token's embedding, given without optimising; a word of several pieces is optimised."""
    from lexprobe.rare_words.probing import keyword_vectors

    lm = CausalLM.load(tiny["gpt2"])
    assert len(lm.tokenizer.tokenize("sparrow")) > 1 and lm.tokenizer.tokenize(" sparrow") == ["Ġsparrow"]
    E = lm.model.get_input_embeddings().weight.detach().numpy()
    vecs = keyword_vectors(lm, ["sparrow", "kumquat"], "ota", ota_options={"iterations": 5, "patience": None})
    assert np.array_equal(vecs[0], E[lm.tokenizer.convert_tokens_to_ids("Ġsparrow")])
    avg = keyword_vectors(lm, ["kumquat"], "avg")[0]
    assert not np.allclose(vecs[1], avg)  # optimised away from its mean-of-pieces start
