"""Masked-LM probing: rank/MRR/P@k against hand computations with a fake model, the exact random baseline,
a/an, bad patterns, mask-only logits, keyword strategies on SPLADE-tiny and the CLI."""

import itertools
import json
from math import comb

import numpy as np
import pytest

from lexprobe.runs.rare_words import write_dataset
from lexprobe.sources.datasets.wnlampro import Entry
from lexprobe.core.errors import LexprobeError
from lexprobe.analyses.patterns import PATTERNS, article, check_pattern, fill
from lexprobe.analyses.probing import MaskedLM, make_query, probe, random_scores, rank_targets


@pytest.fixture(scope="session")
def tokenizer():
    from lexprobe.sources.models import load_tokenizer

    return load_tokenizer("splade-tiny")


@pytest.fixture(scope="session")
def splade():
    return MaskedLM.load("splade-tiny")


class FakeLM(MaskedLM):
    """Known predictions: token v scores -((v - 999) mod V), so token 999 ('!') ranks 1, 1000 ranks 2, ...;
    sentences containing 'opposite' put token 'old' on top."""

    def __init__(self, tokenizer):
        self.tokenizer, self.model, self.vocab_size = tokenizer, None, len(tokenizer)
        self.opposite = tokenizer.convert_tokens_to_ids("opposite")
        self.old = tokenizer.convert_tokens_to_ids("old")

    def mask_logits(self, input_ids, attention_mask, mask_pos, inputs_embeds=None, *, full=False):
        import torch

        rows = torch.arange(len(mask_pos))
        assert (input_ids[rows, mask_pos] == self.tokenizer.mask_token_id).all()  # logits asked at the mask
        base = -((torch.arange(self.vocab_size) - 999) % self.vocab_size).float()
        logits = base.repeat(len(mask_pos), 1)
        logits[(input_ids == self.opposite).any(1), self.old] = 1e6
        return logits


def _entries(tokenizer):
    tok = tokenizer.convert_ids_to_tokens
    return [Entry(0, "dev", "new", "antonym", ["old"], "a", 6.0),
            Entry(1, "test", "samosa", "hypernym", [tok(1050), tok(1003), "zzzqqq"], "n", 1.5),
            Entry(2, "test", "kumquat", "cohyponym", [tok(999 + 149)], "n", 0.5),
            Entry(3, "test", "qwerty", "hypernym", ["notatokenxyz"], "n", 0.0),
            Entry(4, "test", "kumquat", "synonym", [tok(1000)], "n", 0.5)]


def test_mrr_and_precision_equal_hand_computation(tokenizer):
    rows, summary = probe(_entries(tokenizer), FakeLM(tokenizer), cutoff=100)
    by_id = {r["id"]: r for r in rows}
    # 'new' antonym: 2 of 5 patterns contain 'opposite' -> 'old' ranks 1 there; top-3 holds 1 target
    assert by_id[0]["rank"] == 1 and by_id[0]["rr"] == 1.0
    assert by_id[0]["p@3"] == pytest.approx(1 / 3) and by_id[0]["p@10"] == pytest.approx(1 / 10)
    # samosa: targets at token ids 1050 (rank 52) and 1003 (rank 5); top-10 = ids 999..1008 holds 1003
    assert by_id[1]["rank"] == 5 and by_id[1]["rr"] == pytest.approx(0.2)
    assert by_id[1]["p@3"] == 0.0 and by_id[1]["p@10"] == pytest.approx(0.1) and by_id[1]["n_targets"] == 2
    # kumquat: rank 150 > cutoff 100 -> reciprocal rank 0
    assert by_id[2]["rank"] == 150 and by_id[2]["rr"] == 0.0
    assert set(by_id) == {0, 1, 2}
    assert summary["skipped"] == {"no_target_in_vocab": 1, "unknown_relation": 1, "targets_dropped": 2}
    rows200, _ = probe(_entries(tokenizer), FakeLM(tokenizer), cutoff=200)
    assert {r["id"]: r["rr"] for r in rows200}[2] == pytest.approx(1 / 150)


def test_rank_targets_ties_and_top():
    logits = np.array([[0.5, 2.0, 2.0, 1.0, -1.0]])
    ranks, top = rank_targets(logits, [[3, 4]], 3)
    assert ranks.tolist() == [3] and top.tolist() == [[1, 2, 3]]  # two tokens above target 3
    assert rank_targets(logits, [[2]], 2)[0].tolist() == [1]  # a tie counts for the target: 1 + strictly higher
    straddle = np.array([[1.0, 3.0, 2.0, 2.0, 2.0], [0.0, 1.0, 1.0, 5.0, 1.0]])  # ties across the cut at 2
    ranks, top = rank_targets(straddle, [[4], [0, 2]], 2)
    assert top.tolist() == [[1, 2], [3, 1]] and ranks.tolist() == [2, 2]  # tied: lower id first


def test_random_baseline_is_exact():
    """Brute force over every placement of the targets in a 6-token ranking, for 2 independent patterns."""
    V, t, P, cutoff = 6, 2, 2, 3
    best = [min(c) + 1 for c in itertools.combinations(range(V), t)]  # best target rank of one query
    rr = np.mean([1 / min(a, b) if min(a, b) <= cutoff else 0.0 for a in best for b in best])
    hits = [sum(x < 3 for x in c) for c in itertools.combinations(range(V), t)]  # targets in the top 3
    p3 = np.mean([max(a, b) / 3 for a in hits for b in hits])
    got = random_scores(np.array([t]), np.array([P]), V, cutoff=cutoff, at=(3,))
    assert got["rr"][0] == pytest.approx(rr) and got["p@3"][0] == pytest.approx(p3)
    one = random_scores(np.array([1]), np.array([1]), 10, cutoff=100, at=(3,))
    assert one["rr"][0] == pytest.approx(sum(1 / j for j in range(1, 11)) / 10) and len(best) == comb(V, t)


def test_articles_and_patterns():
    assert [article(w) for w in ("apple", "unicorn", "hour", "dog", "euro", "umbrella")] == \
        ["an", "a", "an", "a", "a", "an"]
    assert fill("a <W> is a kind of ___ .", "owl", "[MASK]") == "an owl is a kind of [MASK] ."
    assert fill("<W> is a ___ .", "owl", "[MASK]") == "owl is a [MASK] ."  # the article before the blank stays
    assert fill("“<W>” refers to a ___ .", "apple", "_") == "“apple” refers to a _ ."
    assert all(check_pattern(p) for ps in PATTERNS.values() for p in ps)
    assert sum(len(p) for p in PATTERNS.values()) == 14  # Table 3
    for bad in ("<W> is ___ and ___ .", "is a ___ .", "<W> <W> ___"):
        with pytest.raises(LexprobeError, match="exactly one keyword"):
            check_pattern(bad)


def test_keyword_slot(tokenizer):
    lm = FakeLM(tokenizer)
    q = make_query(lm, "a <W> is a kind of ___ .", "samosa", replace=False)
    assert tokenizer.convert_ids_to_tokens(q.ids) == ["[CLS]", "a", "sam", "##osa", "is", "a", "kind", "of",
                                                      "[MASK]", ".", "[SEP]"]
    assert q.keyword_tokens == 2 and q.slot == -1 and q.mask_pos == 8
    r = make_query(lm, "“<W>” and “___” .", "samosa", replace=True)
    assert tokenizer.convert_ids_to_tokens(r.ids)[:4] == ["[CLS]", "“", "sam", "”"] and r.slot == 2 and r.mask_pos == 6
    assert make_query(lm, "<W> and ___ .", "dog", replace=True).slot == -1  # one-token keywords stay as they are


def test_mask_only_logits_equal_full_logits(splade):
    import torch

    qs = [make_query(splade, p, w, replace=False) for p, w in [("<W> is a ___ .", "kumquat"),
                                                                ("a <W> is a kind of ___ .", "dog")]]
    width = max(len(q.ids) for q in qs)
    ids = torch.zeros((2, width), dtype=torch.long)
    mask = torch.zeros((2, width), dtype=torch.long)
    for j, q in enumerate(qs):
        ids[j, :len(q.ids)], mask[j, :len(q.ids)] = torch.tensor(q.ids), 1
    pos = torch.tensor([q.mask_pos for q in qs])
    fast, slow = splade.mask_logits(ids, mask, pos), splade.mask_logits(ids, mask, pos, full=True)
    assert fast.shape == (2, splade.vocab_size) and torch.allclose(fast, slow, atol=1e-4)


def test_strategies_on_splade_tiny(splade):
    """first/last/avg/ota go through inputs_embeds; 'first' for 'samosa' must equal feeding 'sam' as a token."""
    entries = [Entry(0, "dev", "samosa", "cohyponym", ["pizza", "sandwich", "salad", "curry"], "n", 2.1),
               Entry(1, "dev", "sam", "cohyponym", ["pizza", "sandwich", "salad", "curry"], "n", 4.0),
               Entry(2, "test", "new", "antonym", ["old"], "a", 6.2),
               Entry(3, "test", "lingonberry", "hypernym", ["fruit", "bush", "berry"], "n", 1.8)]
    rows, summary = probe(entries, splade, strategies=["original", "first", "last", "avg", "ota"],
                          ota_options={"iterations": 5})
    rank = {(r["strategy"], r["keyword"]): r["rank"] for r in rows}
    assert rank[("first", "samosa")] == rank[("original", "sam")]
    assert len({rank[(s, "new")] for s in ("original", "first", "last", "avg", "ota")}) == 1  # one token: unchanged
    assert rank[("original", "samosa")] != rank[("first", "samosa")]
    assert summary["multi_token_keywords"] == 2 and len(rows) == 20
    for r in rows:
        assert 1 <= r["rank"] <= splade.vocab_size and 0 < r["random_rr"] < 0.01


def test_bench_wnlampro_command(cli, tmp_path):
    entries = [Entry(0, "dev", "new", "antonym", ["old"], "a", 6.2),
               Entry(1, "test", "lingonberry", "hypernym", ["fruit", "bush", "berry"], "n", 1.8),
               Entry(2, "test", "simluation", "corruption", ["simulation"], "", 0.0),
               Entry(3, "test", "harmonium", "cohyponym", ["flute", "piano", "organ", "guitar"], "n", 0.9)]
    write_dataset(entries, tmp_path / "ds")
    out = tmp_path / "run"
    r = cli("--quiet", "bench", "wnlampro", "--dataset", tmp_path / "ds", "--strategies", "original,avg",
            "--out", out)
    assert r.code == 0, r
    assert "original mrr" in r.out and "avg p@10" in r.out and "random_mrr" in r.out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["entries"] == 4 and set(summary["random_mrr_by_bucket"]) == {"rare", "medium", "frequent", "all"}
    assert (out / "figure2.png").stat().st_size > 1000 and (out / "entries.parquet").is_file()
    r = cli("bench", "wnlampro", "--dataset", tmp_path / "ds", "--strategies", "original,bert", "--out", out)
    assert r.code == 2 and "unknown keyword strategy 'bert'" in r.err


def test_bench_wnlampro_bad_file_names_line(cli, tmp_path):
    bad = tmp_path / "WNLaMPro.txt"
    bad.write_text("0\tdev\tnew (a,6,1000)\tantonym\told (a,6,1000)\n1\tdev\tnew (a,6,1000)\tsynonym\told (a,6,9)\n")
    r = cli("bench", "wnlampro", "--dataset", bad, "--out", tmp_path / "run")
    assert r.code == 2 and f"{bad}:2:" in r.err and r.err.strip().count("\n") == 0


def test_query_probe_command(cli):
    r = cli("query", "probe", "A kumquat is a ___ .", "-k", "5", "--format", "json")
    assert r.code == 0, r
    rows = json.loads(r.out)
    probs = [row["probability"] for row in rows]
    assert [row["rank"] for row in rows] == [1, 2, 3, 4, 5] and probs == sorted(probs, reverse=True)
    r = cli("query", "probe", "A kumquat is a fruit .")
    assert r.code == 2 and "exactly one blank" in r.err


def test_a_model_without_a_masked_lm_head_is_refused(cli):
    """MiniLM's checkpoint is a bare encoder: transformers would make up a random head; lexprobe says no."""
    r = cli("query", "probe", "--model", "minilm", "A kumquat is a ___ .")
    assert r.code == 2 and r.err.strip().count("\n") == 0, r
    assert "minilm: not a masked language model" in r.err and "cls.predictions" in r.err
