"""Defaults that come from a paper or its authors' code, each pinned beside its source, and checked where the code
uses it (what training, reading or scoring does with the default, not only the constant)."""

from __future__ import annotations

import inspect

import numpy as np
import pyarrow as pa
import pytest


def default(fn, name):
    return inspect.signature(fn).parameters[name].default


# ------------------------------------------------------------------------------- Attentive Mimicking


def test_am_config_defaults_are_the_authors():
    """timoschick/form-context-model: train.py's defaults (batch 64, lr 0.01, 10 epochs), ngram_builder.py's
    n-grams of 3..5 characters kept when they occur at least 4 times; the rare-words paper (section 3.2 of
    "Rare words"): AM's minimum of 1 context, AM+context's minimum of 8 and n-gram dropout 0.1."""
    from lexprobe.rare_words.mimicking import AMConfig, preset

    c = AMConfig()
    assert (c.nmin, c.nmax, c.ngram_threshold) == (3, 5, 4)            # ngram_builder.py
    assert (c.batch_size, c.lr, c.epochs) == (64, 0.01, 10)            # train.py
    assert (c.smin, c.smax, c.ngram_dropout) == (1, 20, 0.0)           # paper: AM min 1; train.py: smax 20
    assert (c.count_per_copy, c.max_copies) == (100, 5)                # batch_builder.py: max(1, min(c/100, 5))
    assert c.attention == "clustering"                                 # the authors' default attention
    ctx = preset("am-context")
    assert (ctx.smin, ctx.smax, ctx.ngram_dropout) == (8, 20, 0.1)     # paper section 3.2: AM+context


def _training_set(words, occurrences, config):
    from lexprobe.rare_words.am_targets import TargetTable
    from lexprobe.rare_words.mimicking import ContextData, training_set

    targets = TargetTable(list(words), np.eye(len(words), dtype=np.float32))
    # each word's one window holds the next word (a known word: a usable context)
    owners = pa.array(list(words), pa.string())
    windows = pa.array([[w, words[(i + 1) % len(words)]] for i, w in enumerate(words)], pa.list_(pa.string()))
    return training_set(targets, ContextData(owners, windows, dict(zip(words, occurrences))), config)


def test_training_builds_its_ngram_vocabulary_with_the_authors_range_and_threshold():
    """Four words share the prefix <S>abcd; every other n-gram holds the word's own last letter. With 3..5-grams
    kept at >= 4 occurrences the vocabulary is exactly the shared n-grams (by hand), most frequent first after
    UNK and PAD."""
    from lexprobe.rare_words.mimicking import AMConfig

    ts, vocab = _training_set(["abcde", "abcdf", "abcdg", "abcdh"], [1, 1, 1, 1], AMConfig())
    assert vocab.ngrams[:2] == ["UNK", "PAD"]
    assert sorted(vocab.ngrams[2:]) == sorted(["<S>ab", "<S>abc", "<S>abcd", "abc", "abcd", "bcd"])
    assert (vocab.nmin, vocab.nmax) == (3, 5)
    # three words only: every shared n-gram occurs 3 times, under the threshold of 4
    _, three = _training_set(["abcde", "abcdf", "abcdg"], [1, 1, 1], AMConfig())
    assert three.ngrams == ["UNK", "PAD"]


def test_instances_per_word_are_the_authors():
    """batch_builder.py: a word with count c gives int(max(1, min(c / 100, 5))) instances per epoch."""
    from lexprobe.rare_words.mimicking import AMConfig

    occurrences = [1, 99, 100, 250, 499, 500, 10_000]
    words = ["aa", "bb", "cc", "dd", "ee", "ff", "gg"]
    ts, _ = _training_set(words, occurrences, AMConfig())
    assert dict(zip(ts.words, ts.copies.tolist())) == {"aa": 1, "bb": 1, "cc": 1, "dd": 2, "ee": 4, "ff": 5,
                                                       "gg": 5}


# ------------------------------------------------------------------------------------------------- OTA


class _Tokenizer:
    """A WordPiece-like vocabulary: specials, a continuation, punctuation, digits, non-ASCII letters, words."""

    all_special_tokens = ["[CLS]", "[SEP]", "[PAD]", "[UNK]"]

    def get_vocab(self):
        tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[unused0]", "the", "##s", ",", "1990", "café", "Paris",
                  "cat", "x2", "naïve", "-", "dog"]
        return {t: i for i, t in enumerate(tokens)}


def test_ota_random_contexts_draw_whole_ascii_alphabetic_words():
    """Rare words, section 4: the random variant's t_l, t_r are "tokens that represent an actual word": whole-word
    tokens of ASCII letters only (no punctuation, digits, non-ASCII letters, continuations or specials). The ids
    are written by hand from the vocabulary above."""
    from lexprobe.rare_words.ota import context_vocabulary

    assert context_vocabulary(_Tokenizer()).tolist() == [5, 10, 11, 15]  # the, Paris, cat, dog


def test_ota_defaults_and_the_papers_setting():
    """The paper (Rare words, section 6.1): random contexts, Adam with lr 1e-3 from zeros, 4000 iterations. The
    defaults keep random contexts and take init "mean", lr 3e-3 and at most 1000 iterations with an early stop
    after 300 (benchmarks/ota_recovery.md's speed-to-quality tables); the paper's setting stays reachable."""
    from lexprobe.rare_words import ota

    assert ota.DEFAULTS == {"iterations": 1000, "contexts": "random", "init": "mean", "lr": 3e-3, "layers": "all",
                            "patience": 300, "tol": 0.01, "distance": "auto"}
    assert default(ota.optimise, "iterations") == 1000 and default(ota.optimise, "contexts") == "random"
    assert "zeros" in ota.INITS and "static" in ota.CONTEXTS
    assert ota.WINDOW == 50


# ------------------------------------------------------------------------------------------------ WNLaMPro


@pytest.mark.parametrize("count,bucket", [(0, "rare"), (9, "rare"), (10, "medium"), (99, "medium"),
                                          (100, "frequent"), (10_000, "frequent")])
def test_wnlampro_buckets_are_the_papers(count, bucket):
    """Rare words, section 5: "WNLaMPro-rare, containing all words that occur less than 10 times,
    WNLaMPro-medium, containing all words that occur 10 or more times, but less than 100 times, and
    WNLaMPro-frequent, containing all remaining words"."""
    from lexprobe.sources.datasets.wnlampro import BUCKETS, bucket_of_count

    assert bucket_of_count(count) == bucket
    assert BUCKETS == ("rare", "medium", "frequent")


# ---------------------------------------------------------------------------------------- the analogy paper


def test_bats_keeps_the_first_answer_and_the_first_pair_of_a_start_word(tmp_path):
    """Analogies minus the analogy test, on BATS: "When multiple pairs exist for the same input word, we only
    keep the first"; Fournier et al.'s code keeps each pair's first listed answer (answers="first", the default)."""
    from lexprobe.sources.datasets.bats import read_bats, read_relation_file

    path = tmp_path / "E01 [country - capital].txt"
    path.write_text("france\tparis/lutetia\nfrance\tlyon\nspain\tmadrid\n")
    rel = read_relation_file(path)
    assert rel.pairs == [("france", ["paris"]), ("spain", ["madrid"])]
    assert read_relation_file(path, answers="any").pairs[0] == ("france", ["paris", "lutetia"])
    assert default(read_bats, "answers") == "first" and default(read_relation_file, "answers") == "first"


def test_3cosmul_epsilon_is_levy_and_goldbergs():
    """Levy & Goldberg (2014), "Linguistic regularities in sparse and explicit word representations", section 6:
    "epsilon = 0.001 is used to prevent division by zero" (gensim's most_similar_cosmul uses 1e-6)."""
    from lexprobe.analogies.analogy import run_relations
    from lexprobe.kinds.analogy_queries import DEFAULT_EPS, partial_score

    assert DEFAULT_EPS == 1e-3 and default(run_relations, "eps") == 1e-3
    # s(c) = (c + 1) / 2: cos(c, a*) = 1 and cos(c, a) = -1 give 1 / (0 + eps)
    assert partial_score("mul", np.array([1.0]), np.array([-1.0]), DEFAULT_EPS)[0] == pytest.approx(1000.0)


def test_the_number_of_shuffles_is_the_papers():
    """Analogies minus the analogy test, the pairing consistency score: "For S_s a list of N_s sets of shuffled offsets O' (here
    N_s = 50)"."""
    from lexprobe.analogies.offset_baselines import table1
    from lexprobe.analogies.offset_consistency import offset_scores, score_pairs

    assert default(offset_scores, "n_shuffles") == 50
    assert default(score_pairs, "n_shuffles") == 50
    assert default(table1, "n_shuffles") == 50
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(12, 5))
    s = offset_scores(vectors, np.arange(6), np.arange(6, 12), rng=np.random.default_rng(1))
    assert len(s.aucs) == 50 and s.permutations.shape == (50, 6)
