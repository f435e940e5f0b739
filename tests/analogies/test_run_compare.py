"""``run compare`` end to end on two real embeddings (GloVe's 20,000 most frequent words, and the same words given
each other's vectors): one table and one figure, every value equal to the one the single-embedding commands
give (run analogy, query offsets, query similarity), and the bad inputs."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

import lexprobe
from lexprobe.sources.datahome import packaged_copy

RELATIONS = ("I01 [noun - plural_reg].txt", "I07 [verb_inf - Ved].txt")


@pytest.fixture(scope="module")
def setup(tmp_path_factory, cli, shared_data):
    root = tmp_path_factory.mktemp("compare")
    home = root / "home"
    home.mkdir()
    built = cli("--home", home, "index", "words", "--vectors", "glove-6b-50d", "--name", "g20k", "--limit", 20000)
    assert built.code == 0, built
    glove = lexprobe.load_vectors("glove-6b-50d", limit=20000)
    shuffled = glove.raw[np.random.default_rng(0).permutation(len(glove.raw))]
    path = root / "shuffled.txt"
    with path.open("w") as f:
        f.write(f"{len(shuffled)} {shuffled.shape[1]}\n")
        for word, row in zip(glove.words, shuffled):
            f.write(word + " " + " ".join(f"{x:.6g}" for x in row) + "\n")
    assert cli("--home", home, "index", "words", "--vectors", path, "--name", "shuffled").code == 0
    bats = root / "bats" / "1_Inflectional_morphology"
    bats.mkdir(parents=True)
    for name in RELATIONS:
        shutil.copy(shared_data / "BATS_3.0" / "1_Inflectional_morphology" / name, bats / name)
    wordsim = packaged_copy("wordsim353")
    assert wordsim is not None, "gensim's test data (wordsim353.tsv) is missing"
    dataset = f"bats:{root / 'bats'}"
    out = root / "run"
    result = cli("--home", home, "run", "compare", "--vectors", "g20k", "--vectors", "shuffled", "--dataset", dataset,
                 "--method", "add", "--method", "avg", "--similarity", wordsim[0], "--shuffles", 10, "--out", out)
    assert result.code == 0, result
    return {"home": home, "root": root, "dataset": dataset, "wordsim": wordsim[0], "out": out,
            "rows": pq.read_table(out / "compare.parquet").to_pylist()}


def _value(rows, embedding, measure):
    (row,) = [r for r in rows if r["embedding"] == embedding and r["measure"] == measure]
    return row


def test_one_table_and_one_figure(setup):
    out, rows = setup["out"], setup["rows"]
    assert (out / "compare.md").is_file() and (out / "compare.png").stat().st_size > 10_000
    measures = ["analogy add", "analogy avg", "OCS", "PCS", "spearman", "pearson"]
    assert [(r["embedding"], r["measure"]) for r in rows] == [(e, m) for e in ("g20k", "shuffled") for m in measures]
    for r in rows:
        assert r["low"] is None or r["low"] <= r["value"] <= r["high"]
    real, noise = (lambda m: _value(rows, "g20k", m)["value"]), (lambda m: _value(rows, "shuffled", m)["value"])
    # vectors given to the wrong words lose the relations and the similarities
    assert real("analogy add") > 0.3 > noise("analogy add") and real("analogy avg") > 0.3 > noise("analogy avg")
    assert real("spearman") > 0.4 and abs(noise("spearman")) < 0.2
    assert real("PCS") > 0.6 and real("OCS") > noise("OCS") + 0.1


@pytest.mark.parametrize("embedding", ["g20k", "shuffled"])
def test_values_equal_the_single_commands(setup, cli, embedding):
    home, rows = setup["home"], setup["rows"]
    for method in ("add", "avg"):
        out = setup["root"] / f"single-{embedding}-{method}"
        assert cli("--home", home, "run", "analogy", "--words", embedding, "--dataset", setup["dataset"],
                   "--method", method, "--no-honest", "--out", out).code == 0
        summary = json.loads((out / "summary.json").read_text())
        row = _value(rows, embedding, f"analogy {method}")
        assert (row["value"], row["n"]) == (summary["accuracy"], summary["questions"])
    offsets = json.loads(cli("--home", home, "query", "offsets", "--index", embedding, "--dataset", setup["dataset"],
                             "--relation", "I01", "--relation", "I07", "--shuffles", 10, "--format", "json").out)
    for measure in ("ocs", "pcs"):
        assert _value(rows, embedding, measure.upper())["value"] == pytest.approx(
            np.mean([r[measure] for r in offsets]), rel=1e-12)
    (similarity,) = json.loads(cli("--home", home, "query", "similarity", "--index", embedding, "--pairs",
                                   setup["wordsim"], "--format", "json").out)
    for measure in ("spearman", "pearson"):
        row = _value(rows, embedding, measure)
        assert (row["value"], row["low"], row["high"], row["n"]) == (
            similarity[measure], similarity[f"{measure}_low"], similarity[f"{measure}_high"], similarity["scored"])


def test_bad_input_is_one_clear_line(setup, cli, tmp_path):
    home = setup["home"]
    missing = cli("--home", home, "run", "compare", "--vectors", tmp_path / "nope.txt", "--dataset", setup["dataset"],
                  "--out", tmp_path / "a")
    assert missing.code != 0 and "nope.txt" in missing.err and "Traceback" not in missing.err
    twice = cli("--home", home, "run", "compare", "--vectors", "g20k", "--vectors", "g20k", "--dataset",
                setup["dataset"], "--out", tmp_path / "b")
    assert twice.code != 0 and "share a name" in twice.err


def test_vecto_names_exclusion_and_lrcos_seeds(setup, cli, tmp_path):
    from lexprobe.analogies.set_solvers import answer_relations, lrcos_over_seeds
    from lexprobe.sources.datasets.analogy_sets import usable_relations

    home = setup["home"]
    out = tmp_path / "vecto"
    result = cli("--home", home, "run", "compare", "--vectors", "g20k", "--dataset", setup["dataset"], "--method",
                 "3CosAdd", "--method", "LRCos", "--exclude", "vecto", "--lrcos-seeds", 2, "--seed", 3,
                 "--similarity", setup["wordsim"], "--shuffles", 2, "--out", out)
    assert result.code == 0, result
    rows = pq.read_table(out / "compare.parquet").to_pylist()
    words = lexprobe.open_index("g20k", home=home)
    relations, _ = usable_relations(words, setup["dataset"])
    vecto = answer_relations(words, relations, method="add", exclude="vecto", ranks=False).table
    add = _value(rows, "g20k", "analogy add")
    assert (add["value"], add["n"]) == (np.mean(vecto.column("correct").to_pylist()), vecto.num_rows)
    spread = lrcos_over_seeds(words, relations, seeds=2, seed=3)
    lrcos = _value(rows, "g20k", "analogy lrcos (2 seeds)")
    assert (lrcos["value"], lrcos["low"], lrcos["high"]) == pytest.approx((spread.mean, *spread.interval))
    assert lrcos["low"] < lrcos["high"] or spread.accuracies[0] == spread.accuracies[1]
