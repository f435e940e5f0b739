"""Attentive Mimicking end to end: contexts from real text, a model trained on GloVe (and on a language model's
input embeddings with OTA targets), stored and reused, its vectors inserted into a words index that verifies,
answers neighbours and SQL; the recovery table."""

from __future__ import annotations

import json

import numpy as np
import pytest

import lexprobe
from lexprobe.core.errors import LexprobeError
from lexprobe.kinds import open_index
from lexprobe.kinds.contexts import ContextIndex
from lexprobe.kinds.words import insert_words
from lexprobe.rare_words.am_recovery import am_recovery, recovery_words
from lexprobe.rare_words.mimicking import AMModel


@pytest.fixture(scope="module")
def am_home(tmp_path_factory, shared_data):
    """GloVe's 20,000 most frequent words (``g``) and the contexts of the Senseval-2 and -3 texts (``ctx``)."""
    home = tmp_path_factory.mktemp("am") / "indexes"
    lexprobe.build_word_index("g", "glove-6b-50d", home=home, limit=20000)
    from lexprobe.kinds.contexts import build_contexts_index

    build_contexts_index("ctx", [f"wsd:{shared_data / 'wsd_eval' / 'senseval2'}",
                                 f"wsd:{shared_data / 'wsd_eval' / 'senseval3'}"], home=home, seed=1)
    return home


def rare_words(home, n=4):
    """Words with windows in ``ctx`` that GloVe's top 20,000 lack."""
    g, ctx = open_index("g", home=home), open_index("ctx", home=home)
    return [w for w in ctx.words if w.isalpha() and len(w) > 5 and w not in g.word_to_id][:n]


def test_train_apply_show_through_the_cli(am_home, cli, one_torch_thread):
    home = am_home
    first = cli("--home", home, "am", "train", "--targets", "g", "--contexts", "ctx", "--name", "m", "--epochs", "2",
                "--seed", "3")
    assert first.code == 0, first
    assert first.out.startswith("trained in") and "loss by epoch" in first.out
    again = cli("--home", home, "am", "train", "--targets", "g", "--contexts", "ctx", "--name", "m", "--epochs", "2",
                "--seed", "3")
    assert again.code == 0 and again.out.startswith("reused AM model m")
    other = cli("--home", home, "am", "train", "--targets", "g", "--contexts", "ctx", "--name", "m", "--epochs", "3")
    assert other.code == 2 and "--replace" in other.err and len(other.err.strip().splitlines()) == 1

    words = rare_words(home) + ["zqxjvw"]  # the last has no context: its form alone
    (home.parent / "words.txt").write_text("\n".join(words) + "\n")
    applied = cli("--home", home, "am", "apply", "m", "--words", f"@{home.parent / 'words.txt'}", "--into", "g",
                  "--format", "json")
    assert applied.code == 0, applied
    rows = json.loads(applied.out)
    assert [r["word"] for r in rows] == words and rows[-1]["contexts"] == 0 and rows[-1]["alpha"] is None
    assert all(r["contexts"] > 0 and 0 < r["alpha"] < 1 for r in rows[:-1])
    assert cli("--home", home, "index", "verify", "g").out.startswith("ok: g (words, 20005 rows")
    sql = cli("--home", home, "sql", "select word from g where origin = 'am' order by word", "--format", "csv")
    assert sql.out.split()[1:] == sorted(words)
    g = open_index("g", home=home)
    assert len(g.neighbors(words[0], k=3)) == 3
    history = g.store.manifest["history"][-1]
    assert history["origin"] == "am" and history["settings"]["am_model"] == "m"
    assert history["settings"]["targets"]["index"] == "g" and history["settings"]["contexts"]["corpora"][0].startswith("wsd:")
    twice = cli("--home", home, "am", "apply", "m", "--words", words[0], "--into", "g")
    assert twice.code == 2 and "already has" in twice.err

    show = cli("--home", home, "am", "show", "m", words[0], "-k", "3")
    assert show.code == 0 and "gate alpha" in show.out and f"[[{words[0]}]]" in show.out
    shown = json.loads(cli("--home", home, "am", "show", "m", words[0], "--format", "json").out)
    assert shown["contexts"] == rows[0]["contexts"] and len(shown["weights"]) == shown["contexts"]
    assert sum(w["rho"] for w in shown["weights"]) == pytest.approx(1, abs=1e-4)  # normalised, not softmaxed

    # the model's target table is the index without AM's own rows: inserting AM vectors changed nothing, another
    # insertion does, and the model says so
    assert AMModel.open("m", home=home).targets.words[-1] != words[-1]
    insert_words(home, "g", ["qqqzzz"], np.ones((1, 50), np.float32), origin="manual", settings={})
    assert cli("--home", home, "am", "show", "m", words[0]).err.count("changed since training") == 1


def test_api_inserts_into_the_same_space_only(am_home, tmp_path, one_torch_thread):
    home = am_home
    summary = lexprobe.train_am("api", contexts="ctx", targets="g", home=home, epochs=1, preset_name="am-context")
    assert summary["preset"] == "am-context" and summary["words"] > 100
    from lexprobe.rare_words.am_store import model_path

    manifest = json.loads((model_path("api", home=home) / "manifest.json").read_text())
    assert manifest["source"] == "am:g"  # the targets it mimics: the words index g
    (tmp_path / "v.txt").write_text("a 1 2\nb 3 4\n")
    lexprobe.build_word_index("other", str(tmp_path / "v.txt"), home=home)
    with pytest.raises(LexprobeError, match="insert there"):
        lexprobe.insert_am("api", ["zzzq"], into="other", home=home)
    with pytest.raises(LexprobeError, match="no AM model named 'nope'"):
        lexprobe.AMModel.open("nope", home=home)
    model = lexprobe.AMModel.open("api", home=home)
    inferred = model.infer(["bank"], [open_index("ctx", home=home).windows("bank", 3)])
    assert inferred.to_arrow().column_names == ["word", "contexts", "alpha", "vector"]
    # a probing strategy needs a model that mimics the probed language model's input embeddings
    from lexprobe.rare_words.am_store import am_providers

    with pytest.raises(LexprobeError, match="AM model 'api' mimics the words index 'g', not 'minilm'"):
        am_providers({"am": "api"}, ["am"], model="minilm", home=home)
    with pytest.raises(LexprobeError, match="strategy am needs an AM model"):
        am_providers({}, ["am"], model="minilm", home=home)


def test_nearest_targets_by_cosine_by_hand_and_for_a_zero_vector():
    """Pins am_store.nearest: cosine against the target rows (both normalised), best first, ties in table order;
    a zero vector scores 0 against every row (the norm clamp), never NaN."""
    from lexprobe.rare_words.am_store import nearest
    from lexprobe.rare_words.am_targets import TargetTable

    table = TargetTable(["x", "y", "xy", "zero"], np.array([[2, 0], [0, 3], [1, 1], [0, 0]], np.float32))
    got = nearest(table, np.array([0.5, 0.5], np.float32), k=3)
    assert [w for w, _ in got] == ["xy", "x", "y"]
    assert [s for _, s in got] == pytest.approx([1.0, 2 ** -0.5, 2 ** -0.5])
    assert nearest(table, np.zeros(2, np.float32), k=4) == [("x", 0.0), ("y", 0.0), ("xy", 0.0), ("zero", 0.0)]
    many = TargetTable([f"w{i}" for i in range(12)], np.eye(12, dtype=np.float32))
    assert len(nearest(many, np.ones(12, np.float32))) == 10  # k defaults to 10


def test_ota_candidates_are_letter_words_of_two_or_more_pieces_most_frequent_first():
    """Pins ota_candidates by hand (a fake tokenizer and contexts table): words with at least min_contexts
    windows, letters only, not whole-word tokens, and split into 2+ pieces (a word that is one piece but not a
    listed whole word, e.g. after the tokenizer's normalisation, needs no OTA), most occurrences first."""
    import pyarrow as pa
    from types import SimpleNamespace

    from lexprobe.rare_words.am_targets import ota_candidates

    pieces = {"alpha": [1, 2], "beta": [3], "gamma": [4, 5, 6], "known": [7, 8], "x2": [9, 10], "rare": [11, 12]}
    tokenizer = type("Tok", (), {"unk_token_id": None, "unk_token": None,
                                 "__call__": lambda self, texts, add_special_tokens: {
                                     "input_ids": [pieces[t.strip()] for t in texts]}})()
    rows = [(w, occ) for w, occ, n in [("alpha", 5, 2), ("beta", 9, 2), ("gamma", 7, 2), ("known", 8, 2),
                                        ("x2", 9, 2), ("rare", 9, 1)] for _ in range(n)]
    table = pa.table({"word": [w for w, _ in rows], "occurrences": [o for _, o in rows]})
    contexts = SimpleNamespace(store=SimpleNamespace(table=lambda columns: table.select(columns)))
    assert ota_candidates(tokenizer, contexts, known={"known"}, min_contexts=2) == ["gamma", "alpha"]
    assert ota_candidates(tokenizer, contexts, known={"known"}, min_contexts=2, max_words=1) == ["gamma"]


def test_index_targets_leave_out_replaced_rows(tmp_path):
    """Pins index_targets' tombstones: a word replaced in the words index appears once in the target table,
    with its new vector."""
    from lexprobe.rare_words.am_targets import index_targets

    (tmp_path / "v.txt").write_text("a 1 0\nb 0 1\nc 1 1\n")
    lexprobe.build_word_index("w", str(tmp_path / "v.txt"), home=tmp_path / "h")
    insert_words(tmp_path / "h", "w", ["b"], np.array([[2, 2]], np.float32), origin="manual", settings={},
                 replace=True)
    targets = index_targets(open_index("w", home=tmp_path / "h"))
    assert sorted(targets.words) == ["a", "b", "c"]
    assert targets.matrix[targets.words.index("b")].tolist() == [2.0, 2.0]


def test_recovery_at_fixed_words_on_held_out_glove_words(am_home, one_torch_thread):
    """The same held-out words at every k, their first k usable windows (nested), every method; the mean
    baseline's rank recomputed by brute force for one word; the models' own rows at k = 0 are their form."""
    from lexprobe.kinds.words import WordIndex
    from lexprobe.rare_words.am_recovery import differences, fit_linear_map, word_means
    from lexprobe.rare_words.am_store import train_model
    from lexprobe.rare_words.am_targets import index_targets
    from lexprobe.rare_words.mimicking import ContextData, context_vectors, preset, training_set

    home = am_home
    ctx = ContextIndex.open("ctx", home=home)
    data = ContextData.from_index(ctx)
    targets = index_targets(WordIndex.open("g", home=home))
    held, windows = recovery_words(targets, data, 30, seed=2, min_contexts=8)
    assert len(held) == 30 and all(len(w) == 8 for w in windows)
    assert all(windows[i] == [w for w in ctx.windows(held[i], 16) if any(
        t != held[i] and targets.row(t) is not None for t in w)][:8] for i in range(3))  # its first usable ones
    assert recovery_words(targets, data, 30, seed=2, min_contexts=8)[0] == held  # seeded
    prepared = training_set(targets, data, preset("am"), held_out=held)
    assert not set(held) & set(prepared[0].words)
    models = {key: train_model(f"rec-{key}", ctx, targets, preset("am", attention=att, epochs=2), home=home,
                               held_out=held, data=data, prepared=prepared)[0]
              for key, att in (("am", "clustering"), ("fcm", "uniform"))}
    linear = fit_linear_map(word_means(prepared[0]), prepared[0].targets)
    result = am_recovery(models, held, windows, linear_map=linear, ks=(0, 1, 2, 8), resamples=200)
    by = {(r["method"], r["contexts"]): r for r in result.rows}
    assert {m for m, _ in by} == {"am", "fcm", "form", "mean", "linear map"} and ("mean", 0) not in by
    assert by[("am", 0)]["cosine"] == pytest.approx(by[("form", 0)]["cosine"], abs=1e-6)  # no context: the form
    assert all(r["words"] == 30 for r in result.rows)  # the same words in every column
    for r in result.rows:
        assert r["cosine_low"] <= r["cosine"] <= r["cosine_high"] and 1 <= r["median_rank"] <= len(targets.words)
    assert 0 < by[("am", 8)]["alpha"] < 1 and np.isnan(by[("mean", 8)]["alpha"])
    V, _ = context_vectors(windows[0][:2], [held[0]] * 2, targets)
    v = V.mean(0)
    unit = targets.matrix / np.linalg.norm(targets.matrix, axis=1, keepdims=True)
    cos = unit @ (v / np.linalg.norm(v))
    single = am_recovery(models, held[:1], windows[:1], ks=(2,), resamples=10).rows
    assert [r["median_rank"] for r in single if r["method"] == "mean"] == [int((cos >= cos[targets.row(held[0])]).sum())]
    gaps = {(r["what"], r["comparison"], r["contexts"]): r for r in differences(result, resamples=200)}
    d = gaps[("cosine", "am - linear map", 2)]
    assert d["difference"] == pytest.approx(np.mean(result.cosine[("am", 2)] - result.cosine[("linear map", 2)]))
    assert ("contexts", "am (8) - am (1)", 8) in gaps and ("gap", "(am - fcm) at 8 - at 1", 8) in gaps
    assert ("alpha", "fcm - am", 8) in gaps


def test_language_model_targets_with_ota(am_home, cli, one_torch_thread):
    """SPLADE-tiny's whole-word tokens plus OTA of two multi-token context words, cached, inserted into the
    model's own words index."""
    home = am_home
    args = ("--home", home, "am", "train", "--model", "splade-tiny", "--contexts", "ctx", "--name", "lm",
            "--epochs", "1", "--ota-min-contexts", "2", "--ota-max-words", "2", "--ota-iterations", "3")
    result = cli(*args)
    assert result.code == 0, result
    model = AMModel.open("lm", home=home)
    provenance = model.meta["targets"]
    assert provenance["kind"] == "model" and provenance["ota_words"] == 2 and provenance["tokens"] > 20000
    assert cli(*args).out.startswith("reused")  # the OTA table came from the cache, the same checksum
    assert cli("--home", home, "index", "words", "--vectors", "hf:splade-tiny", "--name", "splade").code == 0
    known = open_index("splade", home=home).word_to_id
    word = next(w for w in open_index("ctx", home=home).words if w.isalpha() and w not in known)
    applied = cli("--home", home, "am", "apply", "lm", "--words", word, "--into", "splade")
    assert applied.code == 0, applied
    wrong = cli("--home", home, "am", "apply", "lm", "--words", "zzqq", "--into", "g")
    assert wrong.code == 2 and "input embeddings" in wrong.err


def test_the_benchmark_compares_the_same_batches(am_home, shared_data, tmp_path):
    from lexprobe.rare_words.bench_am import run_am_bench

    result = run_am_bench(home=am_home, targets="g", corpus=f"wsd:{shared_data / 'wsd_eval' / 'senseval2'}",
                          batches=3, record_path=str(tmp_path / "am.md"), contexts_name="bench-ctx")
    assert result["speedup"] > 0 and result["max_rel_loss_diff"] < 1e-5 and result["tokens_per_s"] > 0
    text = (tmp_path / "am.md").read_text()
    assert "instance at a time (the authors' batch builder)" in text and "3 batches each way" in text


def test_the_linear_map_is_least_squares_in_closed_form():
    """An exact linear relation is recovered; with noise, the map's residual is orthogonal to the inputs (the
    normal equations), and too few words for the dimension is refused."""
    from lexprobe.rare_words.am_recovery import fit_linear_map

    rng = np.random.default_rng(0)
    U, M = rng.standard_normal((200, 5)).astype(np.float32), rng.standard_normal((5, 5)).astype(np.float32)
    assert np.allclose(fit_linear_map(U, U @ M), M, atol=1e-4)
    Y = U @ M + rng.standard_normal((200, 5)).astype(np.float32)
    fitted = fit_linear_map(U, Y)
    assert np.abs(U.T @ (Y - U @ fitted)).max() < 1e-2
    with pytest.raises(LexprobeError, match="4 training words for 5 dimensions"):
        fit_linear_map(U[:4], Y[:4])


def _small_model(home):
    """A tiny trained AM model (3 words) and the arguments that name it."""
    from lexprobe.rare_words.am_targets import TargetTable
    from lexprobe.rare_words.mimicking import ContextData, preset, train
    import pyarrow as pa

    targets = TargetTable(["aaa", "bbb", "x"], np.eye(3, dtype=np.float32))
    data = ContextData(pa.array(["aaa", "bbb"]), pa.array([["x", "aaa"], ["x", "bbb"]]), {"aaa": 1, "bbb": 1})
    model, log = train(targets, data, preset("am", epochs=1))
    meta = {"config": model.config.as_dict(), "targets": {"kind": "index", "index": "none",
                                                          "checksum": targets.checksum}, "training": log.as_dict(),
            "ngrams": len(model.vocab)}
    return model, meta, targets


def test_a_model_whose_tensors_do_not_match_its_manifest_is_refused_in_one_line(tmp_path, monkeypatch):
    from lexprobe.rare_words.am_targets import models_dir

    model, meta, targets = _small_model(tmp_path)
    root = models_dir(tmp_path, "am")
    root.mkdir(parents=True)
    model.write(root, "ok", meta)
    assert AMModel.open("ok", home=tmp_path, targets=targets).state().keys() == model.state().keys()
    state = model.state()
    monkeypatch.setattr(AMModel, "state", lambda self: {**state, "A.weight": state["A.weight"][:2]})
    model.write(root, "bad", meta)  # the manifest records the cut tensor; the network expects 3 x 3
    with pytest.raises(LexprobeError) as err:
        AMModel.open("bad", home=tmp_path, targets=targets)
    assert "weight 'A.weight' is [2, 3]" in str(err.value) and "\n" not in str(err.value)
    meta_bad = json.loads((root / "bad" / "manifest.json").read_text())["meta"]
    assert meta_bad["tensors"]["A.weight"] == [2, 3]


@pytest.mark.parametrize("code", ["ENOSPC", "EROFS"])
def test_a_full_or_read_only_disk_is_one_line(tmp_path, monkeypatch, code):
    import errno
    import os

    import safetensors.torch

    from lexprobe.rare_words.am_targets import models_dir

    model, meta, _ = _small_model(tmp_path)
    root = models_dir(tmp_path, "am")
    root.mkdir(parents=True)

    def fail(*args, **kwargs):
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)))

    monkeypatch.setattr(safetensors.torch, "save", fail)
    with pytest.raises(LexprobeError) as err:
        model.write(root, "m", meta)
    assert str(err.value) == f"{root / 'm'}: cannot write the AM model ({os.strerror(getattr(errno, code))})"
    assert not (root / "m").exists() and not [p for p in root.iterdir() if p.name.startswith(".m.tmp")]


def test_a_second_train_of_the_same_name_at_the_same_time_is_refused(am_home, monkeypatch, one_torch_thread):
    """Two threads train one name: the second is refused while the first holds the model's writer lock (the
    check, the training and the swap-in are one critical section), in one line."""
    import threading

    from lexprobe.core.errors import LockedError
    from lexprobe.rare_words import am_store

    started, release = threading.Event(), threading.Event()
    real = am_store.train

    def slow(*args, **kwargs):
        started.set()
        release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(am_store, "train", slow)
    first: dict = {}
    thread = threading.Thread(target=lambda: first.update(
        lexprobe.train_am("twice", contexts="ctx", targets="g", home=am_home, epochs=1)))
    thread.start()
    try:
        assert started.wait(60)
        with pytest.raises(LockedError) as err:
            lexprobe.train_am("twice", contexts="ctx", targets="g", home=am_home, epochs=1)
        assert "being written by another process" in str(err.value) and "\n" not in str(err.value)
    finally:
        release.set()
        thread.join()
    assert first["reused"] is False
    assert lexprobe.train_am("twice", contexts="ctx", targets="g", home=am_home, epochs=1)["reused"]
