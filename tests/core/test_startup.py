"""A new process's first answer: the top-k kernels and the int8 scan's object code are kept on
disk in the compiled-code folder (core/compile_cache.py) and found again by the next process; an unwritable
folder compiles in memory; a process's first single queries are answered without compiled code, with the same
floats as the kernels; ``bench startup`` times whole processes against gensim and FAISS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from lexprobe.core import compile_cache, int8_scan, topk, topk_kernels


def _python(code: str, env: dict) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("d", [50, 300, 13, 7, 8])
def test_ranking_scores_are_the_kernels_floats(d):
    rng = np.random.default_rng(d)
    V = rng.standard_normal((3000, d)).astype(np.float32)
    Q = rng.standard_normal((3, d)).astype(np.float32)
    R = np.empty((3, 3000), np.float32)
    topk_kernels.dots(Q, V, R)
    np.testing.assert_array_equal(topk.ranking_scores(Q, V), R)  # bit for bit: the same sums in the same order


@pytest.mark.parametrize("k", [1, 5, 40])
def test_full_scan_without_compiled_code_answers_the_same(k):
    rng = np.random.default_rng(k)
    V = rng.standard_normal((5000, 24)).astype(np.float32)
    V[100:110] = V[7]  # equal rows: ties broken by column
    Q = np.concatenate([V[[7, 3]], rng.standard_normal((2, 24)).astype(np.float32)])
    excl = np.array([[7, 102, -1], [3, -1, -1], [-1, -1, -1], [0, 1, 2]])
    D1, I1 = topk.exact_topk(Q, V, k, excl)
    D2, I2 = topk.exact_topk(Q, V, k, excl, compiled=False)
    np.testing.assert_array_equal(I1, I2)
    np.testing.assert_array_equal(D1, D2)
    assert I1[0, 0] == 100 and 7 not in I1[0] and 102 not in I1[0]


def test_first_single_query_needs_no_compiled_code_and_matches_the_kernels(tmp_path):
    out = _python("""
        import sys, json
        import numpy as np
        from lexprobe.core.topk import TopK
        rng = np.random.default_rng(0)
        V = rng.standard_normal((40000, 16)).astype(np.float32)  # large enough for the pruned path
        searcher = TopK(V)
        first = searcher.search(V[5:6], 10, exclude=np.array([[5]]))
        without = "numba" not in sys.modules
        batch = searcher.search(V[:300], 10, exclude=np.arange(300)[:, None])  # BLAS, the kernels loading meanwhile
        from lexprobe.core import topk
        loading = bool(topk._loader) and topk._loader[0].is_alive()
        topk._loader[0].join()
        again = TopK(V).search(V[5:6], 10, exclude=np.array([[5]]))  # kernels loaded: the pruned path
        compiled = TopK(V).search(V[:300], 10, exclude=np.arange(300)[:, None])
        print(json.dumps({"without": without, "loading": loading, "with": topk._ready.is_set(),
                          "same": bool((first[0] == again[0]).all() and (first[1] == again[1]).all()),
                          "batch": bool((batch[0] == compiled[0]).all() and (batch[1] == compiled[1]).all())}))
        """, {"LEXPROBE_CACHE": str(tmp_path / "compiled")})
    assert json.loads(out) == {"without": True, "loading": True, "with": True, "same": True, "batch": True}


@pytest.mark.parametrize("k", [1, 10, 40])
def test_batches_in_numpy_answer_as_the_kernels(k):
    """The path a batch takes while the kernels load: the same floats and words as the compiled pruned path,
    exclusions and equal rows included (an independent reference: the full scan's ranking)."""
    rng = np.random.default_rng(k)
    V = rng.standard_normal((40000, 16)).astype(np.float32)
    V /= np.linalg.norm(V, axis=1, keepdims=True)  # unit rows: a row's best match is itself or its copies
    V[1000:1005] = V[3]  # equal rows: ties broken by column
    Q = np.concatenate([V[[3, 8]], rng.standard_normal((40, 16)).astype(np.float32), np.zeros((1, 16), np.float32)])
    excl = np.full((len(Q), 2), -1, np.int64)
    excl[0] = [3, 1002]
    searcher = topk.TopK(V)
    step = 32 if k <= 16 else 16
    D1, I1 = searcher._sampled_in_numpy(Q, V, k, topk._sorted_exclusions(excl, len(V)), step)
    D2, I2 = topk.exact_topk(Q, V, k, excl)
    np.testing.assert_array_equal(I1, I2)
    np.testing.assert_array_equal(D1, D2)
    assert 3 not in I1[0] and 1002 not in I1[0] and I1[0, 0] == 1000
    ready = topk._ready.is_set()
    try:  # a batch while loading: numpy blocks, then (kernels ready) the compiled path for the rest
        topk._ready.clear()
        D3, I3 = searcher._while_loading(Q, V, k, topk._sorted_exclusions(excl, len(V)), step)
        topk.load_kernels()
        D4, I4 = searcher._while_loading(Q, V, k, topk._sorted_exclusions(excl, len(V)), step)
    finally:
        (topk._ready.set if ready else topk._ready.clear)()
    for D, I in ((D3, I3), (D4, I4)):
        np.testing.assert_array_equal(I, I2)
        np.testing.assert_array_equal(D, D2)


def test_numba_cache_found_by_the_next_process(tmp_path):
    module = tmp_path / "cached_kernel.py"
    module.write_text(textwrap.dedent("""
        from numba import njit
        from lexprobe.core.compile_cache import cached_on_disk

        @cached_on_disk
        @njit
        def twice(x):
            return 2 * x
        """))
    code = """
        import sys
        sys.path.insert(0, %r)
        from cached_kernel import twice
        assert twice(21) == 42
        print(twice.stats.cache_hits.most_common(1)[0][1] if twice.stats.cache_hits else 0, twice._cache.cache_path)
        """ % str(tmp_path)
    env = {"LEXPROBE_CACHE": str(tmp_path / "compiled")}
    hits, path = _python(code, env).split()
    assert hits == "0" and path.startswith(str(tmp_path / "compiled" / "numba"))
    hits, _ = _python(code, env).split()
    assert hits == "1"


def test_topk_kernels_live_in_the_compiled_code_folder():
    folder = compile_cache.cache_dir()
    if folder is None:
        pytest.skip("no writable compiled-code folder here")
    for kernel in (topk_kernels.rank, topk_kernels.narrow, topk_kernels.kth_best, topk_kernels.dots):
        assert kernel._cache.cache_path.startswith(str(folder / "numba"))


def test_unwritable_folder_compiles_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("LEXPROBE_CACHE", str(blocker / "cache"))  # under a file: cannot be created
    assert compile_cache.cache_dir() is None
    from numba import njit
    from numba.core.caching import NullCache

    kernel = compile_cache.cached_on_disk(njit(lambda x: x + 1))
    assert isinstance(kernel._cache, NullCache) and kernel(1) == 2
    compile_cache.save_object("k", b"code")
    assert compile_cache.load_object("k") is None


def test_int8_object_code_stored_and_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("LEXPROBE_CACHE", str(tmp_path))
    loaded = []
    real_load = compile_cache.load_object
    monkeypatch.setattr(int8_scan, "load_object", lambda key: loaded.append(real_load(key)) or loaded[-1])
    first = int8_scan._kernel.__wrapped__(False)
    [stored] = (tmp_path / "objects").glob("*.o")
    second = int8_scan._kernel.__wrapped__(False)
    assert loaded[0] is None and loaded[1] is not None and len(loaded[1]) > 100

    rng = np.random.default_rng(0)
    V, Q = rng.standard_normal((500, 20)).astype(np.float32), rng.standard_normal((9, 20)).astype(np.float32)
    rows = int8_scan.Int8Rows.of(V)
    queries = int8_scan.Int8Queries.of(Q, rows.groups)
    u = rows.packed.transpose(0, 2, 1, 3).reshape(-1, rows.groups * 4)[:500].astype(np.int64)
    v = queries.packed.view(np.int8).reshape(len(queries.packed), -1)[:9].astype(np.int64)
    ints = v @ u.T
    cut = np.full(len(queries.packed), int8_scan.SKIP, np.int32)
    cut[:9] = np.quantile(ints, 0.8, axis=1).astype(np.int32)
    for kernel in (first, second):
        monkeypatch.setattr(int8_scan, "_kernel", lambda vnni, kernel=kernel: kernel)
        counts, cand, _ = int8_scan.scan(rows, queries, cut, 500, 500)
        for r in range(9):
            np.testing.assert_array_equal(cand[r, :counts[r]], np.flatnonzero(ints[r] >= cut[r]))

    data = stored.read_bytes()
    stored.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # damaged: not loaded, compiled again
    assert real_load(stored.stem) is None


def test_bench_startup_times_whole_processes(cli, tmp_path):
    vectors = tmp_path / "small.txt"
    rng = np.random.default_rng(0)
    words = ["king", "queen", "man", "woman"] + [f"w{i}" for i in range(300)]
    vectors.write_text("".join(f"{w} {' '.join(f'{x:.5f}' for x in rng.standard_normal(12))}\n" for w in words))
    home = tmp_path / "home"
    assert cli("--home", home, "index", "words", "--vectors", vectors, "--name", "small").code == 0
    record = tmp_path / "startup.md"
    r = cli("--home", home, "bench", "startup", "--index", "small", "--batch-words", "0", "--repeat", "1",
            "--record", record)
    assert r.code == 0, r
    text = record.read_text()
    for label in ("lexprobe query neighbors, one word", "gensim KeyedVectors.load(mmap) + most_similar",
                  "FAISS read_index + search", "lexprobe open_index only", "lexprobe query analogy, one question",
                  "notebook: open_index + most_similar", "notebook: open_index + neighbors of 304 words"):
        assert f"| {label} |" in text
    assert "same 5 words from all three: True" in text
