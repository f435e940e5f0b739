"""Ray scale-out: builds on a local Ray equal the local build; sharded search equals local search;
a dead worker is retried, a killed driver leaves the old index. One local Ray (2 CPUs) for the module."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import faiss
import numpy as np
import pyarrow as pa
import pytest
import ray  # the `ray` extra, part of `all`: the README set-up installs it

from lexprobe.core.store import write_lock
from lexprobe.kinds.tokens import TokenIndex, limit_corpus
from lexprobe.kinds.words import WordIndex, build_word_index
from lexprobe.core import vector_index as vindex
from lexprobe.core.store import column_matrix, vector_array
from lexprobe.kinds.tokens import token_schema
from lexprobe.scale.build import (EncoderPool, ShardCutter, build_token_index_ray, corpus_blocks, unit_file,
                                  write_flat_faiss, write_shard)
from lexprobe.scale.search import merge_topk, open_sharded, shard_groups
from lexprobe.sources.datasets.corpora import read_corpus

SENTENCES = 40
BLOCK = 8


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="module")
def spec(shared_data):
    return f"wsd:{shared_data / 'wsd_eval/semeval2007'}"


@pytest.fixture(scope="module")
def local(tmp_path_factory, spec, cli):
    """The local build of the first 40 SemEval-2007 sentences (MiniLM, last layer), 50 rows a shard."""
    home = tmp_path_factory.mktemp("scale_home")
    r = cli("--home", home, "index", "tokens", "--corpus", spec, "--name", "local", "--max-sentences", SENTENCES,
            "--shard-rows", 50, "--threads", 1)
    assert r.code == 0, r
    return home


def assert_same_index(home, name, reference="local"):
    a, b = TokenIndex.open(reference, home=home), TokenIndex.open(name, home=home)
    assert a.table.equals(b.table)  # same rows in the same order, ids included
    assert a.sentences.equals(b.sentences)
    assert np.abs(a.raw - b.raw).max() <= 1e-5
    assert b.vectors.ntotal == a.vectors.ntotal
    keep = ("model", "layers", "pooling", "dim", "targets", "sentences", "skipped", "index")
    assert {k: a.settings[k] for k in keep} == {k: b.settings[k] for k in keep}
    return a, b


def test_blocks_cover_the_targets_in_order(spec):
    corpus = limit_corpus(read_corpus(spec), SENTENCES)
    blocks = corpus_blocks(corpus, BLOCK)
    assert len(blocks) == -(-len(corpus.targets.column("sentence_id").unique()) // BLOCK)
    assert [r for _, t in blocks for r in t.column("instance_id").to_pylist()] == \
        corpus.targets.column("instance_id").to_pylist()
    for sentences, targets in blocks:
        assert set(sentences.column("sentence_id").to_pylist()) == set(targets.column("sentence_id").to_pylist())


def test_ray_build_equals_local_build(cluster, local, spec, cli):
    r = cli("--home", local, "index", "tokens", "--corpus", spec, "--name", "onray", "--max-sentences", SENTENCES,
            "--shard-rows", 50, "--engine", "ray", "--workers", 2, "--block-sentences", BLOCK)
    assert r.code == 0, r
    blocks = len(corpus_blocks(limit_corpus(read_corpus(spec), SENTENCES), BLOCK))
    assert blocks >= 4 and f"ray: 2 encoder actors, {blocks} blocks" in r.out
    a, b = assert_same_index(local, "onray")
    assert b.settings["engine"]["workers"] == 2 and b.settings["engine"]["writes"] == "workers"
    assert b.store.count > 100
    assert [s["rows"] for s in a.store.manifest["shards"]] == [s["rows"] for s in b.store.manifest["shards"]]
    assert not list(local.glob(".onray.*"))  # the block files went with the temporary folder
    assert cli("--home", local, "index", "verify", "onray").code == 0


def test_dead_worker_is_retried(cluster, local, spec):
    """An actor SIGKILLed while it holds blocks (encoding or writing one) restarts and Ray retries its block;
    killed again with no restart left, it hands its blocks to the other actor. Either way the index equals the
    local one and nothing of the dead writes is left."""
    pool = EncoderPool(2, "minilm", threads=1, max_restarts=1)
    encode = pool.encode

    def killing(*args):
        for i, item in enumerate(encode(*args)):
            if i == 0:
                os.kill(pool.pids()[0], signal.SIGKILL)
            yield item

    pool.encode = killing
    try:
        first_pid = pool.pids()[0]
        for name in ("restarted", "reassigned"):
            build_token_index_ray(name, "minilm", spec, home=local, max_sentences=SENTENCES, block_sentences=BLOCK // 2,
                                  shard_rows=50, pool=pool)
            assert_same_index(local, name)
            if name == "restarted":
                assert pool.pids()[0] != first_pid  # a fresh process took over the actor
            assert not list(local.glob(f".{name}.*"))
        with pytest.raises(ray.exceptions.RayActorError):
            ray.get(pool.actors[0].pid.remote())  # out of restarts: the second build ran on the other actor alone
    finally:
        pool.close()


@pytest.mark.parametrize("moment", ["blocks/block-*", "shards/part-*"])
def test_killed_driver_leaves_the_old_index(cluster, local, spec, tmp_path, moment):
    """A driver killed (SIGKILL) while its workers write blocks, or while shards are cut, leaves the old index,
    verified and unchanged; the next writer removes its temporary folder."""
    before = TokenIndex.open("local", home=local).store.manifest["version_id"]
    env = {**os.environ, "RAY_ADDRESS": cluster, "LEXPROBE_HOME": str(local)}
    log = open(tmp_path / "driver.log", "w")
    driver = subprocess.Popen([sys.executable, "-m", "lexprobe", "-q", "index", "tokens", "--corpus", spec,
                               "--name", "local", "--replace", "--max-sentences", str(SENTENCES), "--shard-rows",
                               "10", "--engine", "ray", "--workers", "1", "--block-sentences", "4"],
                              env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    try:
        while not any(p.glob(moment) for p in local.glob(".local.tmp-*")):  # a new version is on its way
            assert driver.poll() is None, (tmp_path / "driver.log").read_text()[-2000:]
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    time.sleep(1)  # the dead driver's actors are stopped by Ray; one may still finish the write it had begun
    index = TokenIndex.open("local", home=local)
    assert index.store.manifest["version_id"] == before and np.isfinite(index.raw).all()
    with write_lock(local, "local"):
        pass
    assert not list(local.glob(".local.tmp-*"))


def test_shard_cutter_keeps_the_local_boundaries():
    """Blocks of 3, 0, 5 and 2 rows in shards of 4: rows 0-3, 4-7, 8-9, each from the blocks that hold them."""
    cut = ShardCutter(4)
    assert cut.add(3) == [] and cut.add(0) == []
    assert cut.add(5) == [(0, [(0, 0, 3), (2, 0, 1)], 0), (1, [(2, 1, 5)], 4)]
    assert cut.add(2) == []
    assert cut.finish() == [(2, [(3, 0, 2)], 8)]
    assert cut.finish() == []
    big = ShardCutter(2)
    assert big.add(5) == [(0, [(0, 0, 2)], 0), (1, [(0, 2, 4)], 2)] and big.finish() == [(2, [(0, 4, 5)], 4)]


def test_shard_tasks_and_flat_faiss_file_equal_faiss_own(tmp_path):
    """Shards cut from block files hold the rows with running ids; the FAISS file assembled from their unit
    vectors has the bytes FAISS itself writes for the same vectors."""
    rng = np.random.default_rng(3)
    raw = rng.normal(size=(23, 7)).astype(np.float32)
    schema = pa.schema([token_schema(7).field("id"), token_schema(7).field("vector")])
    (tmp_path / "shards").mkdir()
    blocks = []
    for b, (a, z) in enumerate([(0, 9), (9, 9), (9, 23)]):
        blocks.append(tmp_path / f"b{b}.arrow")
        with pa.ipc.new_file(str(blocks[-1]), schema.remove(0)) as w:
            w.write_table(pa.table({"vector": vector_array(raw[a:z])}, schema=schema.remove(0)))
    cut = ShardCutter(5)
    jobs = cut.add(9) + cut.add(0) + cut.add(14) + cut.finish()
    entries = [write_shard(str(tmp_path), [(str(blocks[p]), a, z) for p, a, z in pieces], first, f"part-{k:05d}.arrow",
                           schema, str(tmp_path)) for k, pieces, first in jobs]
    assert [e["rows"] for e in entries] == [5, 5, 5, 5, 3]
    shards = [pa.ipc.open_file(str(tmp_path / "shards" / e["file"])).read_all() for e in entries]
    assert pa.concat_tables(shards).column("id").to_pylist() == list(range(23))
    np.testing.assert_array_equal(np.concatenate([column_matrix(t.column("vector")) for t in shards]), raw)
    write_flat_faiss(str(tmp_path / "flat.index"), [unit_file(tmp_path, e["file"]) for e in entries], 7, 23)
    expected = faiss.serialize_index(vindex.build(vindex.unit_rows(raw)[0], np.arange(23))).tobytes()
    assert (tmp_path / "flat.index").read_bytes() == expected


@pytest.mark.parametrize("address, message", [
    ("nonsense", "error: bad Ray address 'nonsense'"),
    ("127.0.0.1:1", "error: cannot reach the Ray cluster at 127.0.0.1:1"),
])
def test_bad_ray_address_is_one_line(home, spec, cli, address, message):
    r = cli("--home", home, "index", "tokens", "--corpus", spec, "--name", "x", "--engine", "ray", "--ray-address",
            address)
    assert r.code == 2 and r.err.startswith(message) and len(r.err.strip().splitlines()) == 1


def test_merge_topk_by_score_then_id():
    inf = -np.inf
    a = (np.array([[0.9, 0.5, inf]], np.float32), np.array([[4, 2, -1]]))
    b = (np.array([[0.7, 0.5, 0.1]], np.float32), np.array([[9, 1, 3]]))
    D, I = merge_topk([a, b], 4)
    assert I.tolist() == [[4, 9, 1, 2]] and D[0].tolist() == pytest.approx([0.9, 0.7, 0.5, 0.5])
    D, I = merge_topk([(np.array([[0.3, inf]], np.float32), np.array([[7, -1]]))] * 1, 2)
    assert I.tolist() == [[7, -1]] and D[0, 1] == inf


def test_shard_groups_are_contiguous_and_balanced():
    assert shard_groups([50, 50, 50, 50, 8], 2) == [[0, 1, 2], [3, 4]]
    assert shard_groups([10, 10], 5) == [[0], [1]]
    assert shard_groups([100], 3) == [[0]]
    groups = shard_groups([7] * 10, 3)
    assert sum(groups, []) == list(range(10)) and all(groups)


def test_sharded_token_search_equals_local(cluster, local, cli):
    """Queries by example over 2 shard groups: the same ids as the local FAISS search (with a restriction to an
    id subset and per-query exclusion), and the same `query senses` rows."""
    index = TokenIndex.open("local", home=local)
    queries = index.unit[::7]
    restrict = np.arange(3, index.store.count, 2)
    exclude = [[i * 7] for i in range(len(queries))]
    with open_sharded(TokenIndex, local, "local", groups=2) as sharded:
        assert len(sharded.vectors.groups) == 2 and sharded.vectors.ntotal == index.vectors.ntotal
        for kwargs in ({}, {"restrict": restrict, "exclude": exclude}):
            D0, I0 = index.vectors.search(queries, 8, **kwargs)
            D1, I1 = sharded.vectors.search(queries, 8, **kwargs)
            assert (I0 == I1).all()
            np.testing.assert_allclose(D0, D1, atol=1e-6)
        victim = sharded.vectors.actors[1]
        ray.kill(victim, no_restart=False)  # a dead search actor restarts and the query is retried
        assert (sharded.vectors.search(queries, 8)[1] == index.vectors.search(queries, 8)[1]).all()
    sentence = index.words_of([index.table.column("sentence_id")[0].as_py()])[0]
    target = index.table.column("surface")[0].as_py()
    args = ["--home", local, "query", "senses", "--index", "local", "--sentence", " ".join(sentence), "--target",
            target, "--all-lemmas", "-k", 12, "--format", "json"]
    here, there = cli(*args), cli(*args, "--engine", "ray", "--shard-groups", 2)
    assert here.code == 0 and there.code == 0, there
    rows_here, rows_there = json.loads(here.out), json.loads(there.out)
    assert [r["instance_id"] for r in rows_here] == [r["instance_id"] for r in rows_there]
    assert [r["score"] for r in rows_there] == pytest.approx([r["score"] for r in rows_here], abs=1e-6)


def test_sharded_neighbors_equal_local(cluster, tmp_path, cli):
    """`query neighbors` on the packaged GloVe's first 20k words in 4 shards: the same rows with --engine ray."""
    home = tmp_path / "home"
    build_word_index("g20k", "glove-6b-50d", home=home, limit=20_000, shard_rows=5_000)
    args = ["--home", home, "query", "neighbors", "--index", "g20k", "king", "paris", "run", "-k", 15, "--format",
            "json"]
    for extra in ([], ["--restrict-vocab", 3000]):
        here, there = cli(*args, *extra), cli(*args, *extra, "--engine", "ray", "--shard-groups", 3)
        assert here.code == 0 and there.code == 0, there
        a, b = json.loads(here.out), json.loads(there.out)
        assert [(r["query"], r["word"]) for r in a] == [(r["query"], r["word"]) for r in b]
        assert [r["score"] for r in b] == pytest.approx([r["score"] for r in a], abs=1e-6)
    assert WordIndex.open("g20k", home=home).store.count == 20_000


def test_sense_ranking_on_ray_equals_local(cluster, local, spec, cli, tmp_path):
    """`run senses --engine ray`: the candidates' vectors come from shard actors, one lemma at a time; every
    per-query number equals the local run's (same index, reused by both)."""
    import pyarrow.parquet as pq

    args = ["--home", local, "run", "senses", "--database", spec, "--queries", spec, "--database-sentences",
            SENTENCES, "--query-sentences", SENTENCES, "--min-sense-count", 1, "-k", 10, "--lemma-edges", 5]
    here = cli(*args, "--out", tmp_path / "here")
    there = cli(*args, "--out", tmp_path / "there", "--engine", "ray", "--shard-groups", 2)
    assert here.code == 0 and there.code == 0, there
    a, b = pq.read_table(tmp_path / "here/queries.parquet"), pq.read_table(tmp_path / "there/queries.parquet")
    assert len(a) >= 10 and a.equals(b)
