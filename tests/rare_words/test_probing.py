"""Masked-LM probing: rank/MRR/P@k against hand computations with a fake model, the exact random baseline,
a/an, bad patterns, mask-only logits, keyword strategies on SPLADE-tiny and the CLI."""

import itertools
import json
from math import comb

import numpy as np
import pytest

from lexprobe.rare_words.run_rare_words import write_dataset
from lexprobe.sources.datasets.wnlampro import Entry
from lexprobe.core.errors import LexprobeError
from lexprobe.rare_words.patterns import PATTERNS, article, check_pattern, fill
from lexprobe.rare_words.cloze_queries import make_query
from lexprobe.rare_words.language_models import MaskedLM
from lexprobe.rare_words.probing import probe
from lexprobe.rare_words.probing_scores import random_scores, rank_targets


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


def test_probe_wnlampro_returns_a_result_with_its_rows_as_arrow(tokenizer):
    import lexprobe
    from lexprobe.rare_words.probing import WNLaMProScores

    scores = lexprobe.probe_wnlampro(_entries(tokenizer), FakeLM(tokenizer), cutoff=100)
    rows, _ = probe(_entries(tokenizer), FakeLM(tokenizer), cutoff=100)
    assert isinstance(scores, WNLaMProScores) and scores.rows == rows
    assert scores.to_arrow().to_pylist() == rows and scores.to_pandas()["rank"].tolist() == [1, 5, 150]
    assert {(r["strategy"], r["bucket"]) for r in scores.overall} >= {("original", "all")}
    assert scores.summary["entries"] == 3 and "\n" not in repr(scores) and len(repr(scores)) < 300


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
    assert {r: len(p) for r, p in PATTERNS.items()} == {"antonym": 5, "hypernym": 8, "cohyponym": 2, "corruption": 2}
    for bad in ("<W> is ___ and ___ .", "is a ___ .", "<W> <W> ___"):
        with pytest.raises(LexprobeError, match="exactly one keyword"):
            check_pattern(bad)


def test_patterns_as_the_authors_ran_them():
    """Table 3 as eval-script/patterns.py + mlm.py run it: ASCII quotes, "a ___" and "an ___", a period appended
    only when the text does not end a sentence already."""
    filled = {p: fill(p, "owl", "[MASK]") for ps in PATTERNS.values() for p in ps}
    assert filled["<W> is the opposite of ___"] == "owl is the opposite of [MASK]."
    assert filled['" <W> " and " ___ "'] == '" owl " and " [MASK] ".'
    assert filled['" <W> " . did you mean " ___ " ?'] == '" owl " . did you mean " [MASK] " ?'
    assert filled['" <W> " is a misspelling of " ___ " .'] == '" owl " is a misspelling of " [MASK] " .'
    assert {filled[p] for p in PATTERNS["hypernym"]} >= {"an owl is a [MASK].", "an owl is an [MASK].",
                                                       '" owl " refers to an [MASK].'}
    assert not any("“" in p or "”" in p for ps in PATTERNS.values() for p in ps)


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
    r = cli("bench", "wnlampro", "--dataset", tmp_path / "ds", "--strategies", "original,bert", "--out",
            tmp_path / "run2")
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


def _row(strategy, entry, relation, bucket, rr):
    return {"strategy": strategy, "id": entry, "relation": relation, "bucket": bucket, "rr": rr, "p@3": 0.0,
            "p@10": 0.0, "random_rr": rr / 10}


def test_bucket_means_are_weighted_to_the_dataset():
    """A sample capped per relation over-represents relation A in bucket 'rare': A has 10 entries there in the
    dataset, B 30; weighted MRR = (10 * 1 + 30 * 0.25) / 40, not the sample's plain mean 0.625."""
    from lexprobe.rare_words.probing import aggregate

    rows = [_row("s", 0, "antonym", "rare", 1.0), _row("s", 1, "antonym", "rare", 1.0),
            _row("s", 2, "hypernym", "rare", 0.0), _row("s", 3, "hypernym", "rare", 0.5)]
    population = {("antonym", "rare"): 10, ("hypernym", "rare"): 30}
    plain = {r["bucket"]: r for r in aggregate(rows, by=("strategy", "bucket"))}
    weighted = {r["bucket"]: r for r in aggregate(rows, by=("strategy", "bucket"), population=population)}
    assert plain["rare"]["mrr"] == pytest.approx(0.625) and "n_dataset" not in plain["rare"]
    assert weighted["rare"]["mrr"] == pytest.approx(17.5 / 40) and weighted["all"]["mrr"] == pytest.approx(17.5 / 40)
    assert weighted["rare"]["random_mrr"] == pytest.approx(1.75 / 40)
    assert weighted["rare"]["n"] == 4 and weighted["rare"]["n_dataset"] == 40
    cells = {(r["relation"], r["bucket"]): r["mrr"] for r in aggregate(rows, population=population)}
    assert cells[("antonym", "rare")] == 1.0 and cells[("hypernym", "rare")] == 0.25  # one cell: plain means


def test_probe_sample_is_independent_of_the_dev_split():
    """The split and the sample used to share one seeded permutation: 200 of 1,000 entries drawn with the split's
    seed were the 100 dev entries first. Each purpose now has its own stream: about 10% of the sample is dev."""
    from lexprobe.rare_words.probing import select
    from lexprobe.rare_words.wnlampro_build import assign_splits

    entries = assign_splits([(f"w{i}", "hypernym", "n", ["x"]) for i in range(1000)], freq=lambda w: 0.0, seed=0)
    assert sum(e.split == "dev" for e in entries) == 100
    for seed in range(5):
        split = assign_splits([(f"w{i}", "hypernym", "n", ["x"]) for i in range(1000)], freq=lambda w: 0.0, seed=seed)
        sample = select(split, limit=200, seed=seed)
        assert len(sample) == 200 and 5 <= sum(e.split == "dev" for e in sample) <= 40  # hypergeometric: 20 +- 4


def test_strategy_difference_has_a_paired_bootstrap_interval():
    from lexprobe.core.intervals import paired_bootstrap
    from lexprobe.rare_words.probing_scores import compare_strategies

    rows = [_row("ota", 0, "hypernym", "rare", 1.0), _row("first", 0, "hypernym", "rare", 0.0),
            _row("ota", 1, "hypernym", "rare", 1.0), _row("first", 1, "hypernym", "rare", 0.0),
            _row("ota", 2, "antonym", "frequent", 0.5), _row("first", 2, "antonym", "frequent", 0.5),
            _row("ota", 3, "antonym", "frequent", 0.5), _row("first", 3, "antonym", "frequent", 0.5)]
    plain = compare_strategies(rows, "ota", "first")
    assert (plain["difference"], plain["low"], plain["high"], plain["entries"]) == (0.5, 0.5, 0.5, 4)
    weighted = compare_strategies(rows, "ota", "first",
                                  population={("hypernym", "rare"): 1, ("antonym", "frequent"): 3})
    assert weighted["difference"] == pytest.approx(0.25) and weighted["low"] == pytest.approx(0.25)
    d = np.random.default_rng(1).normal(0.1, 1.0, 400)  # large n: the bootstrap matches mean +- 1.96 sd / sqrt(n)
    diff, low, high = paired_bootstrap(d, np.zeros(400), resamples=4000)
    half = 1.96 * d.std() / 20
    assert diff == pytest.approx(d.mean()) and low == pytest.approx(diff - half, abs=0.01)
    assert high == pytest.approx(diff + half, abs=0.01)


def test_select_cells_caps_each_relation_and_bucket():
    from lexprobe.rare_words.probing import select_cells
    from lexprobe.rare_words.wnlampro_build import assign_splits

    raw = [(f"w{i}", rel, "n", ["x"]) for rel in ("hypernym", "antonym") for i in range(30)]
    entries = assign_splits(raw, freq=lambda w: [0.0, 1.5, 3.0][int(w[1:]) % 3], seed=0)  # 10 per cell
    got = select_cells(entries, 4, seed=1)
    cells = {}
    for e in got:
        cells[(e.relation, e.bucket)] = cells.get((e.relation, e.bucket), 0) + 1
    assert cells == {(r, b): 4 for r in ("antonym", "hypernym") for b in ("rare", "medium", "frequent")}
    assert [e.id for e in select_cells(entries, 4, seed=1)] == [e.id for e in got]
    assert [e.id for e in select_cells(entries, 4, seed=2)] != [e.id for e in got]
    assert {e.relation for e in select_cells(entries, 20, relations=("antonym",))} == {"antonym"}
    assert len(select_cells(entries, 20)) == 60  # fewer than asked: the whole cell
