"""One-token approximation: the loss definition by hand, the optimiser, batching, baselines, the recovery
helpers, and insertion into a real ``hf:splade-tiny`` words index through the CLI."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lexprobe.rare_words import ota  # noqa: E402
from lexprobe.core.errors import LexprobeError  # noqa: E402
from lexprobe.rare_words.ota_recovery import (cosine_distance, paired_curve, past_minimum, run_recovery,  # noqa: E402
                                              split_without, stop_iterations)

SYLLABLES = ["ba", "be", "bo", "da", "de", "do", "ka", "ke", "ko", "la", "le", "lo", "ma", "me", "mo", "na"]
WORDS = ["cat", "dog", "sun", "run", "tree"] + [a + b for a in SYLLABLES for b in SYLLABLES[:12]]


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tiny models: one torch thread (conftest)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A random 2-layer BERT (hidden 16) with a WordPiece vocabulary of a few hundred tokens."""
    from transformers import BertConfig, BertModel, BertTokenizer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "##s", "##ing", "##ly"] + WORDS
    path = tmp_path_factory.mktemp("tiny") / "vocab.txt"
    path.write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizer(str(path))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32)
    return BertModel(config).eval(), tokenizer


@pytest.fixture(scope="module")
def tiny_roberta(tmp_path_factory):
    """A random 2-layer RoBERTa with a byte-level BPE vocabulary (positions depend on padding)."""
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizer

    merges = [("Ġ", "d"), ("Ġd", "o"), ("Ġdo", "g"), ("i", "n"), ("in", "g"), ("Ġ", "c"), ("Ġc", "a"),
              ("Ġca", "t"), ("Ġ", "s"), ("Ġs", "u"), ("Ġsu", "n")]
    vocab = list(dict.fromkeys(["<s>", "<pad>", "</s>", "<unk>", ".", "Ġ"] + list("abcdefghijklmnopqrstuvwxyz")
                               + ["".join(m) for m in merges]))
    folder = tmp_path_factory.mktemp("tiny_roberta")
    (folder / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(vocab)}))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(f"{a} {b}" for a, b in merges) + "\n")
    tokenizer = RobertaTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    torch.manual_seed(0)
    config = RobertaConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=40, pad_token_id=1)
    return RobertaModel(config).eval(), tokenizer


@pytest.fixture(params=["bert", "roberta"])
def any_tiny(request):
    return request.getfixturevalue("tiny" if request.param == "bert" else "tiny_roberta")


def _hidden(model, **inputs):
    with torch.no_grad():
        return model(**inputs, output_hidden_states=True).hidden_states


def _manual_loss(model, tokenizer, left, pieces, right, v, layers=(1, 2)):
    """The paper's d(e(t(w)), [v] | l, r) computed on explicit sequences, position by position."""
    ids = tokenizer.convert_tokens_to_ids
    target = torch.tensor([ids(left) + pieces + ids(right)])
    h1 = _hidden(model, input_ids=target)
    approx = model.get_input_embeddings()(torch.tensor([ids(left) + [0] + ids(right)])).detach().clone()
    approx[0, len(left)] = torch.as_tensor(v)
    h2 = _hidden(model, inputs_embeds=approx)
    a, r, n = len(left), len(right), len(pieces)
    pos1 = list(range(a)) + [a + n + j for j in range(r)]
    pos2 = list(range(a)) + [a + 1 + j for j in range(r)]
    return sum(float(((h1[k][0, pos1] - h2[k][0, pos2]) ** 2).sum()) for k in layers)


@pytest.mark.parametrize("contexts", ["static", "random"])
def test_loss_is_the_papers_definition_with_context_positions_aligned(any_tiny, contexts):
    model, tokenizer = any_tiny
    words = ["dogsing", "cat"]  # 3 pieces and 1 piece in one batch: padding and shifted right contexts
    pieces = ota.word_pieces(tokenizer, words)
    assert [len(p) for p in pieces] == [3, 1]
    v0 = np.random.default_rng(1).standard_normal((2, 16)).astype(np.float32)
    res = ota.optimise(model, tokenizer, pieces, v0, keys=words, iterations=3, contexts=contexts, lr=0.0, seed=7)
    # the random contexts' vocabulary by hand: the whole ASCII-alphabetic words of each fixture's vocabulary
    vocab_tokens = WORDS if tokenizer.cls_token == "[CLS]" else ["Ġd", "Ġdo", "Ġdog", "Ġc", "Ġca", "Ġcat", "Ġs",
                                                                 "Ġsu", "Ġsun"]
    assert tokenizer.convert_ids_to_tokens(ota.context_vocabulary(tokenizer).tolist()) == vocab_tokens
    for row, word in enumerate(words):
        draws = np.random.default_rng([7, zlib.crc32(word.encode())]).integers(0, len(vocab_tokens), size=(3, 2))
        for it in range(3):
            tl, tr = (vocab_tokens[draws[it, 0]], vocab_tokens[draws[it, 1]])
            cls, sep = tokenizer.cls_token, tokenizer.sep_token
            left, right = ([cls], [".", sep]) if contexts == "static" else ([cls, tl], [tr, ".", sep])
            want = _manual_loss(model, tokenizer, left, pieces[row], right, v0[row])
            assert res.loss_history[row, it] == pytest.approx(want, rel=1e-4)
    # the true embedding of a one-token word is an exact solution
    e_cat = model.get_input_embeddings().weight[pieces[1][0]].detach().numpy()[None]
    exact = ota.optimise(model, tokenizer, [pieces[1]], e_cat, keys=["cat"], iterations=2, contexts=contexts, lr=0.0)
    assert exact.loss_history.max() < 1e-8


def test_layers_option_selects_hidden_states(tiny):
    model, tokenizer = tiny
    pieces = ota.word_pieces(tokenizer, ["dogsing"])
    v0 = np.ones((1, 16), np.float32)
    res = ota.optimise(model, tokenizer, pieces, v0, keys=["dogsing"], iterations=1, contexts="static", lr=0.0,
                       layers="all-but-last")
    assert res.loss_history[0, 0] == pytest.approx(
        _manual_loss(model, tokenizer, ["[CLS]"], pieces[0], [".", "[SEP]"], v0[0], layers=(1,)), rel=1e-4)
    with pytest.raises(LexprobeError, match="layers 1..2"):
        ota.optimise(model, tokenizer, pieces, v0, keys=["x"], iterations=1, layers=[3])


def test_loss_decreases_and_only_v_gets_a_gradient(tiny):
    model, tokenizer = tiny
    model.train()  # OTA must switch to eval (no dropout) and back
    before = {k: t.clone() for k, t in model.state_dict().items()}
    assert all(p.requires_grad for p in model.parameters())
    # a random BERT's right-context position embeddings differ between the sequences, a floor v cannot remove;
    # for a one-token word the floor is 0
    res = ota.approximate(model, tokenizer, ["cat", "dogsing", "sunly"], iterations=300, contexts="static",
                          init="zeros", lr=1e-2, seed=0)
    first, last = res.loss_history[:, 0], res.final_loss
    assert (last < first).all() and last[0] < 1e-3 * first[0], (first, last)
    assert all(p.grad is None for p in model.parameters())
    assert all(torch.equal(before[k], t) for k, t in model.state_dict().items())
    assert all(p.requires_grad for p in model.parameters()) and model.training
    model.eval()


def test_batched_equals_one_word_at_a_time(any_tiny):
    model, tokenizer = any_tiny
    words = ["dogsing", "cat", "sunsing"] + (["bobely", "treely"] if tokenizer.cls_token == "[CLS]" else ["dog"])
    # from zeros: "mean" starts a one-token word ("cat") at its exact optimum, where the padded batch's rounding
    # (1e-15) is all the gradient and Adam, which divides by the gradient's size, turns it into full steps
    options = dict(iterations=60, contexts="random", init="zeros", lr=1e-2, seed=3)
    batched = ota.approximate(model, tokenizer, words, batch_size=len(words), **options)
    for i, w in enumerate(words):
        alone = ota.approximate(model, tokenizer, [w], batch_size=1, **options)
        np.testing.assert_allclose(batched.vectors[i], alone.vectors[0], atol=1e-5)
        assert batched.final_loss[i] == pytest.approx(alone.final_loss[0], rel=1e-4)
    other_seed = ota.approximate(model, tokenizer, words, batch_size=len(words), **{**options, "seed": 4})
    assert not np.allclose(other_seed.vectors, batched.vectors)


def test_early_stop_on_a_flat_loss(tiny):
    model, tokenizer = tiny
    res = ota.approximate(model, tokenizer, ["dogsing", "cat"], iterations=400, contexts="static", lr=0.0,
                          patience=100, tol=0.01)
    # window 1 sets the best; windows 2 and 3 do not improve: 2 x 50 >= 100 -> stop after iteration 150
    assert res.iterations.tolist() == [150, 150]
    assert np.isnan(res.loss_history[:, 150:]).all() and not np.isnan(res.loss_history[:, :150]).any()
    assert stop_iterations(np.nan_to_num(res.loss_history, nan=1.0) * 0 + 5.0, 100, 0.01).tolist() == [150, 150]


def test_baselines_first_last_avg_by_hand(tiny):
    model, tokenizer = tiny
    E = model.get_input_embeddings().weight.detach().numpy()
    ids = tokenizer.convert_tokens_to_ids(["dog", "##s", "##ing"])
    assert np.allclose(ota.subword_baseline(model, tokenizer, ["dogsing"], "first")[0], E[ids[0]])
    assert np.allclose(ota.subword_baseline(model, tokenizer, ["dogsing"], "last")[0], E[ids[2]])
    avg = ota.subword_baseline(model, tokenizer, ["dogsing", "cat"], "avg")
    assert np.allclose(avg[0], (E[ids[0]] + E[ids[1]] + E[ids[2]]) / 3, atol=1e-6)
    assert np.allclose(avg[1], E[tokenizer.convert_tokens_to_ids("cat")])
    with pytest.raises(LexprobeError):
        ota.subword_baseline(model, tokenizer, ["dog"], "median")


def test_inputs_embeds_with_replaces_one_slot(tiny):
    model, tokenizer = tiny
    ids = torch.tensor([[2, 10, 11, 3], [2, 12, 13, 3]])
    vecs = np.full((2, 16), 7.0, np.float32)
    out = ota.inputs_embeds_with(model, ids, [2, -1], vecs)
    plain = model.get_input_embeddings()(ids).detach()
    assert torch.equal(out[0, 2], torch.full((16,), 7.0))
    mask = torch.ones(2, 4, dtype=torch.bool)
    mask[0, 2] = False
    assert torch.equal(out[mask], plain[mask])


def test_unknown_tokens_and_empty_words_are_clear_errors(tiny):
    model, tokenizer = tiny
    with pytest.raises(LexprobeError, match="unknown token"):
        ota.word_pieces(tokenizer, ["xyzzy"])
    with pytest.raises(LexprobeError, match="empty"):
        ota.word_pieces(tokenizer, ["  "])


def test_masked_models_keep_the_papers_raw_distance(any_tiny):
    """``distance="auto"`` is the paper's raw distance for BERT and RoBERTa (the normalised one is for causal
    LMs, tests in test_causal.py); an unknown distance is a clear error."""
    model, tokenizer = any_tiny
    assert ota.resolve_distance("auto", model) == "raw"
    assert ota.resolve_distance("normalised", model) == "normalised"
    pieces = ota.word_pieces(tokenizer, ["dogsing"])
    runs = {d: ota.optimise(model, tokenizer, pieces, np.zeros((1, model.config.hidden_size), np.float32),
                            keys=["dogsing"], iterations=1, contexts="static", lr=0.0, distance=d)
            for d in ("auto", "raw", "normalised")}
    assert runs["auto"].loss_history[0, 0] == runs["raw"].loss_history[0, 0] != runs["normalised"].loss_history[0, 0]
    with pytest.raises(LexprobeError, match="distance must be one of"):
        ota.resolve_distance("cosine", model)


def test_recovery_helpers_by_hand():
    from lexprobe.sources.models import load_tokenizer

    tokenizer = load_tokenizer("splade-tiny")
    king = tokenizer.convert_tokens_to_ids("king")
    pieces = split_without(tokenizer, "king")
    assert king not in pieces and len(pieces) >= 2
    assert tokenizer.convert_tokens_to_string(tokenizer.convert_ids_to_tokens(pieces)) == "king"
    d = cosine_distance(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]]), np.array([[1.0, 0.0]] * 3))
    np.testing.assert_allclose(d, [1.0, 0.0, 1.0])
    hist = np.array([[10.0] * 50 + [5.0] * 50 + [4.99] * 100, [10.0] * 200])
    # row 0 improves in window 2 (5 < 10 * 0.99), not in 3, 4; row 1 never after window 1
    assert stop_iterations(hist, 100, 0.01).tolist() == [200, 150]


def test_a_stopping_rule_ends_the_run_at_a_snapshot_with_the_same_numbers(tiny):
    model, tokenizer = tiny
    words = ["dogsing", "cat", "sunsing"]
    options = dict(contexts="random", init="zeros", lr=1e-2, seed=3, patience=None, snapshot_every=50)
    full = ota.approximate(model, tokenizer, words, iterations=200, **options)
    seen = []

    def until(at, vectors):
        seen.append((at, vectors.copy()))
        return at == 100

    cut = ota.approximate(model, tokenizer, words, iterations=200, until=until, **options)
    assert [at for at, _ in seen] == [50, 100] and cut.snapshot_at == [0, 50, 100]
    assert cut.iterations.tolist() == [100] * 3 and cut.loss_history.shape == (3, 100)
    np.testing.assert_allclose(cut.vectors, full.snapshots[2], atol=1e-6)
    np.testing.assert_allclose(seen[0][1], full.snapshots[1], atol=1e-6)  # the rule sees the words in input order
    with pytest.raises(LexprobeError, match="one batch"):
        ota.approximate(model, tokenizer, words, iterations=100, until=until, batch_size=2, **options)


def test_past_minimum_and_the_paired_curve_by_hand():
    truth = np.array([[1.0, 0.0], [0.0, 1.0]])
    rule = past_minimum(truth, 1, 100)
    at = lambda c: np.array([[c, np.sqrt(1 - c * c)], [np.sqrt(1 - c * c), c]])  # noqa: E731  cosine c to truth
    # mean distance 0.5, 0.2 (new minimum at 100), 0.3, 0.25: stops 100 iterations past the minimum
    assert [rule(50, at(0.5)), rule(100, at(0.8)), rule(150, at(0.7)), rule(200, at(0.75))] == [False] * 3 + [True]
    static = ([0, 50, 100], np.array([[1.0, 1.0], [0.5, 0.7], [0.4, 0.4]]))
    random = ([0, 50], np.array([[1.0, 1.0], [0.3, 0.3]]))
    rows = paired_curve(static, random)
    assert [r["iteration"] for r in rows] == [0, 50]  # the iterations both reached
    assert rows[1]["difference"] == pytest.approx(0.3) and rows[1]["static"] == pytest.approx(0.6)
    assert rows[1]["low"] == pytest.approx(0.2) and rows[1]["high"] == pytest.approx(0.4)  # two words: 0.2 or 0.4
    assert rows[0]["difference"] == 0.0 and rows[1]["words"] == 2


def test_recovery_on_splade_tiny_gets_closer():
    from lexprobe.sources.models import load_encoder, load_tokenizer

    tokenizer, model = load_tokenizer("splade-tiny"), load_encoder("splade-tiny")
    res = run_recovery(model, tokenizer, n_words=4, iterations=150, inits=("zeros", "mean"), lrs=(1e-2,), every=50)
    assert {(r["contexts"], r["init"]) for r in res["summary"]} == {(c, i) for c in ("static", "random")
                                                                      for i in ("zeros", "mean")}
    for r in res["summary"]:
        assert r["end"] < r["start"] - (0.3 if r["init"] == "zeros" else 0.0), r
        assert set(r) == {"contexts", "init", "lr", "start", "end", "best", "best_iteration", "iterations_run",
                          "its_to_95", "stop_it", "dist_at_stop", "its_to_95_ref", "read_start",
                          "read_end"}  # no reference-only columns
        assert r["its_to_95_ref"] is None
    assert res["curve"][0]["iteration"] == 0 and res["curve"][0]["mean_cos_distance"] == pytest.approx(1.0)


def test_run_ota_recovery_writes_only_its_run_folder(cli, tmp_path, monkeypatch):
    """``run ota-recovery`` (the runner the main job's ota stage calls too) writes curve, summary, words and the
    plot into --out, prints the summary, and appends to no benchmark file unless --record names one."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "rec"
    r = cli("-q", "run", "ota-recovery", "--model", "splade-tiny", "--words", "2", "--iterations", "50",
            "--every", "50", "--contexts", "static", "--out", out)
    assert r.code == 0, r
    assert "| static | zeros |" in r.out and "winning context variant" not in r.out  # one variant: no winner
    assert {"curve.parquet", "summary.parquet", "words.json", "recovery.png"} <= {p.name for p in out.iterdir()}
    assert len(json.loads((out / "words.json").read_text())["words"]) == 2
    assert not (tmp_path / "benchmarks").exists()


@pytest.fixture(scope="module")
def splade_home(tmp_path_factory):
    from lexprobe.kinds.words import build_word_index

    home = tmp_path_factory.mktemp("ota_home")
    build_word_index("sp", "hf:splade-tiny", home=home)
    return home


def test_insert_ota_returns_a_json_ready_summary(splade_home):
    import lexprobe
    from lexprobe.kinds.words import WordIndex
    from lexprobe.sources.models import load_encoder, load_tokenizer

    options = {"iterations": 5, "seed": 3}
    summary = lexprobe.insert_ota("sp", "splade-tiny", ["kumquat"], home=splade_home, replace=True, **options)
    assert json.loads(json.dumps(summary)) == summary and summary["model"] == "splade-tiny"
    [row] = summary["words"]
    alone = ota.approximate(load_encoder("splade-tiny"), load_tokenizer("splade-tiny"), ["kumquat"], **options)
    assert row == {"word": "kumquat", "tokens": len(ota.word_pieces(load_tokenizer("splade-tiny"), ["kumquat"])[0]),
                   "iterations": 5, "final_loss": float(alone.final_loss[0])} and row["tokens"] > 1
    index = WordIndex.open("sp", home=splade_home)
    np.testing.assert_array_equal(index.vector("kumquat"), alone.vectors[0])


def test_ota_inserts_into_a_real_splade_index(cli, splade_home, tmp_path):
    from lexprobe.kinds.words import WordIndex

    before = WordIndex.open("sp", home=splade_home).store.count
    words_file = tmp_path / "words.txt"
    words_file.write_text("unhappiness\n\nphotosynthesis\n")
    r = cli("--home", splade_home, "ota", "--model", "splade-tiny", "--into", "sp", "--words", f"@{words_file}",
            "--iterations", "60", "--lr", "0.01", "--format", "json")
    assert r.code == 0, r
    rows = json.loads(r.out)
    assert [x["word"] for x in rows] == ["unhappiness", "photosynthesis"] and all(x["tokens"] > 1 for x in rows)
    assert cli("--home", splade_home, "index", "verify", "sp").code == 0
    index = WordIndex.open("sp", home=splade_home)
    assert index.store.count == before + 2
    new = index.ids(["unhappiness"])[0]
    assert index.store.column("origin")[int(new)].as_py() == "ota"
    assert index.store.manifest["history"][-1]["settings"]["iterations"] == 60
    # served from FAISS: the new word is its own nearest neighbour, and a neighbour-list entry
    r = cli("--home", splade_home, "query", "neighbors", "--index", "sp", "--include-self", "unhappiness", "-k", "3",
            "--format", "json")
    hits = json.loads(r.out)
    assert hits[0]["word"] == "unhappiness" and hits[0]["score"] == pytest.approx(1.0, abs=1e-5)
    D, I = index.vectors.search(index.unit_of([new]), 1)
    assert I[0, 0] == new
    r = cli("--home", splade_home, "query", "neighbors", "--index", "sp", "photosynthesis", "-k", "3")
    assert r.code == 0 and "photosynthesis" in r.out

    # an existing word: an error without --replace, replaced with it
    r = cli("--home", splade_home, "ota", "--model", "splade-tiny", "--into", "sp", "unhappiness", "--iterations", "5")
    assert r.code == 2 and "--replace" in r.err and r.err.strip().count("\n") == 0
    r = cli("--home", splade_home, "ota", "--model", "splade-tiny", "--into", "sp", "unhappiness", "--iterations", "5",
            "--replace")
    assert r.code == 0, r
    index = WordIndex.open("sp", home=splade_home)
    assert index.store.count == before + 3 and len(index.store.tombstones) == 1
    assert cli("--home", splade_home, "index", "verify", "sp").code == 0

    # the index holds another model's embeddings / a bad word file: one line, nothing written
    r = cli("--home", splade_home, "ota", "--model", "minilm", "--into", "sp", "whatsoever")
    assert r.code == 2 and "splade-tiny" in r.err and r.err.strip().count("\n") == 0
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\xfe\n")
    r = cli("--home", splade_home, "ota", "--model", "splade-tiny", "--into", "sp", "--words", f"@{bad}")
    assert r.code == 2 and f"{bad}:2" in r.err
    assert WordIndex.open("sp", home=splade_home).store.count == before + 3


def test_progress_moves_inside_a_batch(tiny, monkeypatch):
    """The bar counts word-iterations: it moves while one batch (here every word) optimises, and a word that
    stops early has its unused iterations counted, so the bar ends full (it once sat at 0/2 to the end)."""
    model, tokenizer = tiny
    updates = []

    class Recorder:
        def __init__(self, total, **_):
            self.total = total

        def update(self, n=1):
            updates.append(n)

        def set_postfix(self, **_):
            pass

        def close(self):
            pass

    monkeypatch.setattr(ota, "bar", Recorder)
    res = ota.approximate(model, tokenizer, ["dogsing", "cat"], iterations=400, contexts="static", lr=0.0,
                          patience=100, tol=0.01, batch_size=2)
    assert res.iterations.tolist() == [150, 150]
    assert len(updates) > 100 and updates[:3] == [2, 2, 2] and sum(updates) == 2 * 400
