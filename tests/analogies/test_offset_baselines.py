"""The random analogy sets of Table 1 (lexprobe.analogies.offset_baselines) on synthetic ids, and the whole Table 1 run
(``bench offsets``) on the packaged GloVe and the real BATS."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.analogies.offset_baselines import (KINDS, baseline_sets, chance_rows, possible_kinds, random_pool,
                                                score_against, summarise)
from lexprobe.analogies.offset_consistency import PairSet
from lexprobe.analogies.run_analogies import run_table1
import math
from lexprobe.analogies.offset_baselines import score_set
from lexprobe.core.seeds import rng_for

OFFSETS = "glove-bats-offsets-t4"  # not the default name: other tests share the session's glove_home


def _relations():
    """4 broad types x 3 relations x 6 pairs over distinct ids (start ids < 1000, end ids >= 1000)."""
    rels, k = [], 0
    for c in ("inflectional", "derivational", "encyclopedic", "lexicographic"):
        for r in range(3):
            rels.append(PairSet(f"{c[0].upper()}0{r}", c, np.arange(k, k + 6), np.arange(1000 + k, 1006 + k)))
            k += 6
    return rels


def test_random_pool_skips_dataset_words_and_non_words():
    words = ["the", ",", "cat", "1990", "dog", "'s", "tree", "house"]
    assert random_pool(words, {"cat"}, 3).tolist() == [0, 4, 6]
    assert random_pool(words, set(), 100).tolist() == [0, 2, 4, 6, 7]


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_has_its_structure(kind):
    rels = _relations()
    pool = np.arange(5000, 5200)
    by_name = {r.relation: r for r in rels}
    sets = baseline_sets(kind, rels, pool, seed=3, replicate=1)
    assert [s.relation for s in sets] == [r.relation for r in rels]
    for s, rel in zip(sets, rels):
        assert len(s) == 6 and (s.start_ids != s.end_ids).all()
        if kind == "permuted":
            assert (s.start_ids == rel.start_ids).all() and sorted(s.end_ids) == sorted(rel.end_ids)
            assert not (s.end_ids == rel.end_ids).any()  # no true pair left
        elif kind.startswith("mismatched"):
            partner = by_name[s.partner]
            assert s.partner != rel.relation
            assert (partner.category == rel.category) == (kind == "mismatched-within")
            assert set(s.start_ids) <= set(rel.start_ids) and set(s.end_ids) <= set(partner.end_ids)
        elif kind == "random-start":
            assert set(s.start_ids) <= set(pool) and (s.end_ids == rel.end_ids).all()
        elif kind == "random-end":
            assert (s.start_ids == rel.start_ids).all() and set(s.end_ids) <= set(pool)
        else:
            both = np.concatenate([s.start_ids, s.end_ids])
            assert set(both) <= set(pool) and len(set(both)) == 12
    if kind.startswith("mismatched"):  # each relation gives its end words to exactly one other
        assert sorted(s.partner for s in sets) == sorted(r.relation for r in rels)


def test_random_sets_are_seeded():
    rels, pool = _relations(), np.arange(5000, 5200)
    for kind in KINDS:
        a = baseline_sets(kind, rels, pool, seed=5, replicate=0)
        b = baseline_sets(kind, rels, pool, seed=5, replicate=0)
        c = baseline_sets(kind, rels, pool, seed=5, replicate=1)
        assert all((x.start_ids == y.start_ids).all() and (x.end_ids == y.end_ids).all() for x, y in zip(a, b))
        assert any((x.start_ids != z.start_ids).any() or (x.end_ids != z.end_ids).any() for x, z in zip(a, c))


def test_mismatched_kinds_need_several_relations_and_broad_types():
    rels = _relations()
    assert possible_kinds(rels) == list(KINDS)
    assert possible_kinds(rels[:3]) == [k for k in KINDS if k != "mismatched-across"]
    assert possible_kinds(rels[:4]) == [k for k in KINDS if k != "mismatched-within"]


def test_small_pool_and_unknown_kind_are_errors():
    with pytest.raises(LexprobeError, match="pool"):
        baseline_sets("random-both", _relations(), np.arange(5000, 5010), seed=0, replicate=0)
    with pytest.raises(LexprobeError, match="unknown random set"):
        baseline_sets("shuffled-twice", _relations(), np.arange(5000, 5100), seed=0, replicate=0)


def test_summary_mean_and_iqr_by_hand():
    rows = [{"set": "bats", "relation": "A", "category": "x", "n_pairs": 5, "ocs": 0.2, "pcs": 0.8},
            {"set": "bats", "relation": "B", "category": "x", "n_pairs": 5, "ocs": 0.4, "pcs": 0.6}]
    rows += [{"set": "permuted", "relation": r, "category": "x", "n_pairs": 5, "ocs": v, "pcs": 0.5}
             for r, v in (("A", 0.0), ("A", 0.1), ("B", 0.2), ("B", 0.3))]
    by_cat, by_rel = summarise(rows, ["A", "B"])
    perm = next(r for r in by_cat if r["category"] == "x" and r["set"] == "permuted")
    # values 0, .1, .2, .3: mean .15; numpy's linear quartiles .075 and .225 -> IQR .15
    assert perm["ocs"] == pytest.approx(0.15) and perm["ocs_iqr"] == pytest.approx(0.15) and perm["sets"] == 4
    assert [r["set"] for r in by_cat if r["category"] == "x"] == ["bats", "permuted"]  # BATS beside the baseline
    assert by_rel[1]["bats_ocs"] == pytest.approx(0.4) and by_rel[1]["permuted_ocs"] == pytest.approx(0.25)


def test_a_set_scored_against_given_shuffles_by_hand():
    """The authors' scoring of a permuted set: its offsets against the real relation's shuffled offsets."""
    vectors = np.array([[0, 0], [0, 0], [0, 0], [1, 0], [0, 1], [1, 1]], dtype=float)
    ps = PairSet("R", "x", np.array([0, 1, 2]), np.array([3, 4, 5]))
    # unit offsets (1,0), (0,1), (1,1)/sqrt2: sim(O) = 0, .7071, .7071
    shuffled = np.array([[[1, 0], [1, 0], [-1, 0]],   # sims 1, -1, -1: 6 of 9 (positive > negative) -> AUC 2/3
                         [[0, 1], [0, 1], [0, 1]]])   # sims 1, 1, 1: AUC 0
    o, p = score_against(vectors, ps, shuffled)
    assert o == pytest.approx(2 * 0.5 ** 0.5 / 3) and p == pytest.approx((2 / 3 + 0) / 2)


def test_half_iqr_rule_per_category_and_set_by_hand():
    rows = [{"category": "x", "set": "bats", "pcs": 0.8, "pcs_iqr": 0.1},
            {"category": "x", "set": "permuted", "pcs": 0.4948, "pcs_iqr": 0.0093},
            {"category": "all", "set": "random-both", "pcs": 0.5001, "pcs_iqr": 0.0026}]
    rule = chance_rows(rows)
    assert [(r["category"], r["set"]) for r in rule] == [("x", "permuted"), ("all", "random-both")]  # BATS: no rule
    assert rule[0]["distance"] == pytest.approx(0.0052) and rule[0]["half_iqr"] == pytest.approx(0.00465)
    assert [r["within"] for r in rule] == [False, True]  # .0052 > .00465; .0001 <= .0013


# ------------------------------------------------------------------------------- real data, CLI


@pytest.fixture(scope="module")
def table1(glove_home, shared_data, tmp_path_factory, cli):
    """``bench offsets`` on all 40 BATS relations with fewer shuffles and replicates than the paper."""
    out = tmp_path_factory.mktemp("offsets_run")
    args = ["--home", glove_home, "bench", "offsets", "--words", "glove", "--dataset",
            f"bats:{shared_data / 'BATS_3.0'}", "--offsets", OFFSETS, "--shuffles", "20", "--replicates", "2",
            "--seed", "4", "--out", out / "run", "--compare", "--record", out / "bench.md", "--loop-sample", "1"]
    r = cli(*args)
    assert r.code == 0, r
    return out, [str(a) for a in args]


def test_table1_on_glove_and_bats_reproduces_the_papers_pattern(table1):
    out, _ = table1
    rows = pq.read_table(out / "run" / "table1.parquet").to_pylist()
    cell = {(r["category"], r["set"]): r for r in rows}
    rel = pq.read_table(out / "run" / "table1_relations.parquet").to_pylist()
    assert len(rel) == 40
    morph = [r for r in rel if r["category"] in ("inflectional", "derivational")]
    assert sum(r["bats_pcs"] > 0.55 for r in morph) >= 17  # most morphological relations are consistent
    for kind in KINDS:  # every random set stays near chance in every broad type
        for cat in ("inflectional", "derivational", "encyclopedic", "lexicographic", "all"):
            assert abs(cell[(cat, kind)]["pcs"] - 0.5) < 0.03, (cat, kind, cell[(cat, kind)])
    assert abs(cell[("all", "random-both")]["ocs"]) < 0.01  # fully random: no concentration
    assert cell[("all", "permuted")]["ocs"] > 0.05  # coherent categories alone give OCS > 0
    assert cell[("all", "bats")]["pcs"] > cell[("all", "permuted")]["pcs"] + 0.1
    assert cell[("all", "random-both")]["sets"] == 80 and cell[("all", "bats")]["sets"] == 40
    assert (out / "run" / "table1.md").read_text().startswith("| category | set |")
    assert (out / "run" / "figure5_offset_similarities.png").stat().st_size > 5000
    summary = json.loads((out / "run" / "summary.json").read_text())
    assert summary["pool_size"] == 10000 and summary["skipped_relations"] == []
    bench = (out / "bench.md").read_text()
    assert "per-pair Python loop" in bench and "| 2440 |" not in bench and "| 520 |" in bench  # 40 x (1 + 6 x 2)
    gap = float(bench.split("difference baseline vs lexprobe on the sample: ")[1].split()[0])
    assert gap < 1e-9  # the loop baseline computes the same numbers


def test_shuffles_are_stored_in_the_offsets_index_and_queried(table1, glove_home, cli, shared_data):
    from lexprobe.kinds.offsets import OffsetIndex

    index = OffsetIndex.open(OFFSETS, home=glove_home)
    assert set(index.kinds()) == {"true", "shuffled", *KINDS}
    shuffled = index.select(kind="shuffled", relation="I01 [noun - plural_reg]")
    assert len(shuffled) == 20 * 50 and set(shuffled.seed) == {4} and set(shuffled.replicate) == set(range(20))
    # a stored shuffle keeps the starts and never rebuilds a true pair or a zero offset
    true = index.select(kind="true", relation="I01 [noun - plural_reg]")
    true_pairs = set(zip(true.start.tolist(), true.end.tolist()))
    assert not any(p in true_pairs for p in zip(shuffled.start.tolist(), shuffled.end.tolist()))
    assert (shuffled.start_id != shuffled.end_id).all()
    # the index-based PCS of the bench is the in-memory PCS of `query offsets` (same seed, same shuffles)
    run = pq.read_table(table1[0] / "run" / "table1_relations.parquet").to_pylist()
    bench_i01 = next(r for r in run if r["relation"].startswith("I01"))
    r = cli("--home", glove_home, "query", "offsets", "--index", "glove", "--relation", "I01", "--dataset",
            f"bats:{shared_data / 'BATS_3.0'}", "--shuffles", "20", "--seed", "4", "--format", "json")
    row = json.loads(r.out)[0]
    assert row["pcs"] == pytest.approx(bench_i01["bats_pcs"], abs=1e-6)
    assert row["ocs"] == pytest.approx(bench_i01["bats_ocs"], abs=1e-6)


def test_rerun_with_the_same_seed_gives_the_same_table_and_stores_nothing_new(table1, glove_home):
    from lexprobe.kinds.offsets import OffsetIndex

    out, args = table1
    before = OffsetIndex.open(OFFSETS, home=glove_home).store.count
    first = pq.read_table(out / "run" / "table1.parquet").to_pylist()
    dataset = args[args.index("--dataset") + 1]
    again = run_table1("glove", dataset, home=glove_home, offsets_name=OFFSETS, n_shuffles=20, replicates=2, seed=4)
    assert again["rows_appended"] == 0 and OffsetIndex.open(OFFSETS, home=glove_home).store.count == before
    np.testing.assert_allclose([[r["ocs"], r["pcs"]] for r in again["table1"]],
                               [[r["ocs"], r["pcs"]] for r in first], rtol=0, atol=1e-12)
    # one more replicate stores only that replicate's sets: none is stored twice
    more = run_table1("glove", dataset, home=glove_home, offsets_name=OFFSETS, n_shuffles=20, replicates=3, seed=4)
    rows = OffsetIndex.open(OFFSETS, home=glove_home).select(kind="random-both")
    sizes = [int((rows.replicate == r).sum()) for r in range(3)]
    assert sizes[0] == sizes[1] == sizes[2] == sum(r["n_pairs"] for r in more["table1_relations"])


def test_bench_offsets_bad_dataset_is_one_line_error(cli, glove_home, tmp_path):
    r = cli("--home", glove_home, "bench", "offsets", "--words", "glove", "--dataset", f"bats:{tmp_path / 'none'}",
            "--offsets", "t4-missing", "--out", tmp_path / "run", "--record", tmp_path / "b.md")
    assert r.code == 2 and "none" in r.err and r.err.strip().count("\n") == 0


def test_bench_offsets_refuses_an_index_of_another_kind_or_dataset(cli, glove_home, shared_data, tmp_path, table1):
    common = ["--home", glove_home, "bench", "offsets", "--words", "glove", "--out", tmp_path / "run",
              "--record", tmp_path / "b.md"]
    r = cli(*common, "--dataset", f"bats:{shared_data / 'BATS_3.0'}", "--offsets", "glove")
    assert r.code == 2 and "not an offsets index" in r.err
    r = cli(*common, "--dataset", f"bats:{shared_data / 'BATS_3.0' / '1_Inflectional_morphology'}",
            "--offsets", OFFSETS)
    assert r.code == 2 and "choose another --offsets" in r.err and not (tmp_path / "run").exists()


def test_one_category_folder_runs_without_the_impossible_mismatched_kind(glove_home, shared_data, tmp_path):
    folder = shared_data / "BATS_3.0" / "2_Derivational_morphology"
    s = run_table1("glove", f"bats:{folder}", home=glove_home, offsets_name="glove-bats-d-t4", n_shuffles=5,
                   replicates=1, seed=1, out=tmp_path)
    assert s["relations"] == 10 and s["skipped_kinds"] == ["mismatched-across"]
    assert {r["set"] for r in s["table1"]} == {"bats", *KINDS} - {"mismatched-across"}
    assert (tmp_path / "table1.parquet").exists()


def test_offsets_index_of_an_older_words_version_is_refused(home, shared_data, tmp_path):
    from lexprobe.kinds.words import build_word_index, insert_words

    build_word_index("small", "glove-6b-50d", home=home, limit=30000)
    dataset = f"bats:{shared_data / 'BATS_3.0' / '1_Inflectional_morphology'}"
    run_table1("small", dataset, home=home, offsets_name="small-offsets", n_shuffles=3, replicates=1, seed=0)
    insert_words(home, "small", ["qqnewword"], np.ones((1, 50), np.float32), origin="test", settings={})
    with pytest.raises(LexprobeError, match="older version"):
        run_table1("small", dataset, home=home, offsets_name="small-offsets", n_shuffles=3, replicates=1, seed=0)


# --- Table 1's chance rule and pair-count floor by hand (mutation testing). ---

def test_chance_rule_includes_its_boundary():
    rows = chance_rows([{"category": "all", "set": "bats", "pcs": 0.9, "pcs_iqr": 0.1},
                        {"category": "all", "set": "permuted", "pcs": 0.75, "pcs_iqr": 0.5},   # |0.25| <= 0.25
                        {"category": "all", "set": "random-end", "pcs": 0.25, "pcs_iqr": 0.25}])  # 0.25 > 0.125
    assert [(r["set"], r["distance"], r["half_iqr"], r["within"]) for r in rows] == [
        ("permuted", 0.25, 0.25, True), ("random-end", 0.25, 0.125, False)]


def test_sets_under_three_pairs_score_nan():
    vectors = np.random.default_rng(0).normal(size=(8, 3))
    two = score_set(vectors, PairSet("r", "c", np.array([0, 1]), np.array([4, 5])), 5, rng_for(0))
    assert all(math.isnan(x) for x in two)
    three = score_set(vectors, PairSet("r", "c", np.array([0, 1, 2]), np.array([4, 5, 6])), 5, rng_for(0))
    assert all(math.isfinite(x) for x in three) and -1 <= three[0] <= 1 and 0 <= three[1] <= 1


def test_possible_kinds_by_category_counts():
    from lexprobe.analogies.offset_baselines import KINDS, possible_kinds

    sets = lambda *cats: [PairSet(f"r{i}", c, np.array([0]), np.array([1])) for i, c in enumerate(cats)]
    assert possible_kinds(sets("a", "a", "b", "b")) == list(KINDS)  # 2 relations per broad type: enough
    assert "mismatched-within" not in possible_kinds(sets("a", "a", "b"))
    assert possible_kinds(sets("a", "a")) == [k for k in KINDS if k != "mismatched-across"]


def test_iqr_of_two_values_and_nan_left_out():
    from lexprobe.analogies.offset_baselines import _iqr

    assert _iqr(np.array([0.0, 1.0, np.nan])) == 0.5  # quartiles 0.25 and 0.75 (linear interpolation)
    assert math.isnan(_iqr(np.array([0.3, np.nan])))


def test_random_set_rows_are_end_minus_start():
    from types import SimpleNamespace

    from lexprobe.analogies.offset_baselines import _set_rows_table

    words = SimpleNamespace(raw=np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [5.0, 1.0]], np.float32),
                            words=["a", "b", "c", "d"])
    t = _set_rows_table(words, "permuted", 2, 7, [PairSet("r", "c1", np.array([0, 1]), np.array([2, 3])),
                                                  PairSet("q", "c2", np.array([3]), np.array([0]))])
    assert t.column("offset").to_pylist() == [[2, 3], [5, -1], [-4, -1]]
    assert t.column("relation").to_pylist() == ["r", "r", "q"] and t.column("end").to_pylist() == ["c", "d", "a"]
    assert set(t.column("replicate").to_pylist()) == {2} and set(t.column("seed").to_pylist()) == {7}


# --- the permuted set's PCS against its relation's stored shuffles, by hand ---

# Two relations of three pairs in 2-D: starts (0, y_i), ends (L_i, y_i), so the true offsets (L_i, 0) are all
# parallel. Three pairs have exactly two shuffles with no true pair: D1 gives start i the end of pair i+1, D2 that
# of pair i-1 (mod 3). The sims (pairwise cosines of the unit offsets, pairs (0,1), (0,2), (1,2)):
#   "I01 [a]": y = 0, 1, 3; L = 1, 1, 2. D1: (1,1), (2,2), (1,-3) -> 1, -2/sqrt20 = -.447, -.447;
#              D2: (2,3), (1,-1), (1,-2) -> -1/sqrt26 = -.196, -4/sqrt65 = -.496, 3/sqrt10 = .949.
#     AUC(D1 against D2): 1 beats all three, each -.447 beats -.496: 5/9. AUC(D2 against D1): -.196 and .949
#     beat both -.447: 4/9.
#   "I02 [b]": y = 0, 2, 3; L = 1, 2, 4. D1: (2,2), (4,1), (1,-3) -> 10/sqrt136 = .857, -4/sqrt80 = -.447,
#              1/sqrt170 = .077; D2: (4,3), (1,-2), (2,-1) -> -2/sqrt125 = -.179, 5/sqrt125 = .447, 4/5 = .8.
#     AUC(D1 against D2): .857 beats all three, .077 beats -.179: 4/9. AUC(D2 against D1): -.179 beats -.447,
#     .447 and .8 beat -.447 and .077: 5/9. (Against the other relation's shuffles the numbers differ: 3/9 for
#     "I01 [a]"'s D1 against "I02 [b]"'s D2, 6/9 for "I02 [b]"'s D2 against "I01 [a]"'s D2.)
PCS_WORDS = {"I01 [a]": (["sa", "sb", "sc"], ["ea", "eb", "ec"], (0, 1, 3), (1, 1, 2)),
             "I02 [b]": (["ta", "tb", "tc"], ["fa", "fb", "fc"], (0, 2, 3), (1, 2, 4))}
PCS_BY_HAND = {"I01 [a]": {"D1": 5 / 9, "D2": 4 / 9}, "I02 [b]": {"D1": 4 / 9, "D2": 5 / 9}}


def test_permuted_set_pcs_is_scored_against_its_relations_stored_shuffles_by_hand(home, tmp_path):
    """The permuted set of each relation (one of D1, D2, drawn by its seed) against the shuffles its relation's
    rows in the offsets index hold, written here by hand: four copies of the other derangement. Its PCS is then
    exactly the AUC above (5/9 or 4/9). Scoring it against its own shuffles (the .4953 bias: they re-create the
    true, parallel pairs, AUC 0), against fresh shuffles of the relation (half of them itself) or against the
    other relation's shuffles gives another number (seed 3 draws D1 for "I01 [a]" and D2 for "I02 [b]")."""
    from lexprobe.analogies.offset_baselines import baseline_sets, scored_relations, table1
    from lexprobe.analogies.offset_consistency import SHUFFLED
    from lexprobe.kinds.offsets import OffsetIndex, append_offsets, build_offset_index, offset_table
    from lexprobe.kinds.words import WordIndex, build_word_index

    vectors, folder = {}, tmp_path / "bats" / "1_Inflectional_morphology"
    folder.mkdir(parents=True)
    for name, (starts, ends, y, L) in PCS_WORDS.items():
        for s, e, yy, ll in zip(starts, ends, y, L):
            vectors[s], vectors[e] = (0, yy), (ll, yy)
        (folder / f"{name}.txt").write_text("".join(f"{s}\t{e}\n" for s, e in zip(starts, ends)))
    for i, w in enumerate(("pool", "word", "fill", "some", "more", "extra")):  # the random sets' pool
        vectors[w] = (5 + i, 7 - 2 * i)
    (tmp_path / "v.txt").write_text("".join(f"{w} {x} {y}\n" for w, (x, y) in vectors.items()))
    build_word_index("pcs", str(tmp_path / "v.txt"), home=home)
    dataset = f"bats:{tmp_path / 'bats'}"
    build_offset_index(home, "pcs-offsets", "pcs", dataset)
    words = WordIndex.open("pcs", home=home)
    relations, _ = scored_relations(OffsetIndex.open("pcs-offsets", home=home).select(kind="true"))
    assert len(relations) == 2 and all(len(r) == 3 for r in relations)
    seed, n_shuffles = 3, 4
    pool = np.asarray([words.ids([w])[0] for w in ("pool", "word", "fill", "some", "more", "extra")])
    shift = lambda perm: "D1" if perm.tolist() == [1, 2, 0] else "D2" if perm.tolist() == [2, 0, 1] else None
    drawn, rows = {}, []
    for rel, ps in zip(relations, baseline_sets("permuted", relations, pool, seed=seed, replicate=0)):
        perm = np.array([rel.end_ids.tolist().index(e) for e in ps.end_ids])
        drawn[rel.relation] = shift(perm)
        other = np.array([2, 0, 1] if drawn[rel.relation] == "D1" else [1, 2, 0])
        starts, ends = np.tile(rel.start_ids, n_shuffles), np.tile(rel.end_ids[other], n_shuffles)
        rows.append(offset_table(relation=[rel.relation] * len(starts), category=[rel.category] * len(starts),
                                 start=[words.words[i] for i in starts], end=[words.words[i] for i in ends],
                                 start_id=starts, end_id=ends, offset=words.raw[ends] - words.raw[starts],
                                 kind=SHUFFLED, replicate=np.repeat(np.arange(n_shuffles), 3), seed=seed))
    assert drawn == {"I01 [a]": "D1", "I02 [b]": "D2"}  # seed 3's draw (the cases the numbers above cover)
    append_offsets(home, "pcs-offsets", pa.concat_tables(rows))
    index = OffsetIndex.open("pcs-offsets", home=home)
    t1 = table1(words, index, relations, pool, n_shuffles=n_shuffles, replicates=1, seed=seed)
    permuted = {r["relation"]: r for r in t1.results if r["set"] == "permuted"}
    assert set(permuted) == set(PCS_BY_HAND)
    for name, row in permuted.items():
        assert row["pcs"] == pytest.approx(PCS_BY_HAND[name][drawn[name]], abs=1e-12), (name, drawn[name])
