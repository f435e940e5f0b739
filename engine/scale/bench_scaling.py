"""``bench scaling``: how each cost grows with the work, measured at several sizes in one command, against
gensim and FAISS flat in the same run; rows accumulate in ``benchmarks/scaling.json`` (sizes can be run one at
a time, the largest last), and every run re-fits the exponents (slope of log cost on log size) and redraws
the log-log plots over all rows recorded.

- **words** (N words x d dims; the vocabulary is the packaged GloVe's words, most frequent first, so BATS is
  answerable, then ``w<i>`` fillers; vectors synthetic, normal, from a fixed seed): the word2vec binary file;
  ``lexprobe index words`` on it and gensim's ``load_word2vec_format`` of it, each a process of its own (wall
  time, peak RSS against the float32 matrix); the index's disk bytes; a new process's first answer
  (``lexprobe query neighbors``) against gensim's memory-mapped ``KeyedVectors.load`` + ``most_similar``;
  exact neighbours (k = 10, one large batch) against FAISS ``IndexFlatIP``; the whole-BATS 3CosAdd test and
  OCS/PCS of one relation.
- **tokens** (N rows x 384; synthetic vectors, a lemma of 100 and one of 100,000 instances): the token
  index writer's throughput (shards, sentences, FAISS flat, manifest; the encoder is measured by ``bench
  encode``), disk bytes per token, query-by-example latency restricted to each lemma.
- **ray**: the Ray token-index build at two corpus sizes (driver peak RSS, per-worker rate, the driver's commit),
  the Ray contexts build over a synthetic Zipf text at two sizes (map and reduce rates, map bytes per token,
  driver RSS), and from these the projected times on 8 and 32 nodes.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..runs.bench_record import record

RESULTS = "benchmarks/scaling.json"
PLOT = "benchmarks/scaling.png"
PROJECTED_NODES = (8, 32)
SEED = 0


def _run(argv: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (bytes) and stdout of one child process (its own rusage, from wait4)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or os.environ.copy())
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # fallback; wait4 already reaped it
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, argv))} failed: {err.decode(errors='replace').strip()[-800:]}")
    rss = _last_rss(out) or usage.ru_maxrss * 1024
    return wall, rss, out.decode()


def _last_rss(out: bytes) -> int | None:
    """A child that prints ``RSS <bytes>`` last reports its own peak (ours is the maximum over all children)."""
    lines = out.decode(errors="replace").strip().splitlines()
    return int(lines[-1].split()[1]) if lines and lines[-1].startswith("RSS ") else None


# VmHWM, the peak of this process's own memory map: ru_maxrss would count the parent's peak too (the forked
# child starts as a copy of the parent, and Linux keeps the larger figure across exec)
_PEAK = ("print('RSS', 1024 * int(next(l.split()[1] for l in open('/proc/self/status') "
         "if l.startswith('VmHWM:'))))")


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def synthetic_words(n: int, vocabulary: list[str]) -> list[str]:
    return vocabulary[:n] + [f"w{i}" for i in range(max(0, n - len(vocabulary)))]


def write_w2v_bin(path: Path, words: list[str], dim: int, seed: int = SEED, chunk: int = 100_000,
                  matrix: np.ndarray | None = None) -> None:
    """A word2vec binary file of ``matrix``, or of normal vectors drawn chunk by chunk from one seeded generator."""
    rng = np.random.default_rng(seed)
    with open(path, "wb") as f:
        f.write(f"{len(words)} {dim}\n".encode())
        for a in range(0, len(words), chunk):
            m = min(chunk, len(words) - a)
            block = (matrix[a:a + m] if matrix is not None else rng.standard_normal((m, dim), dtype=np.float32))
            block = np.asarray(block, dtype="<f4")
            f.write(b"".join(w.encode() + b" " + row.tobytes() + b"\n" for w, row in zip(words[a:a + chunk], block)))


_GENSIM_LOAD = """import sys, time
from gensim.models import KeyedVectors
t0 = time.perf_counter()
kv = KeyedVectors.load_word2vec_format(sys.argv[1], binary=True)
print("LOAD", time.perf_counter() - t0)
kv.fill_norms()
kv.save(sys.argv[2])
""" + _PEAK

_GENSIM_FIRST = """import sys
from gensim.models import KeyedVectors
kv = KeyedVectors.load(sys.argv[1], mmap="r")
print(kv.most_similar(sys.argv[2], topn=10)[0][0])
"""


def words_point(n: int, dim: int, vocabulary: list[str], tmp: Path, relations, relation_pairs,
                real: np.ndarray | None = None) -> dict:
    """One size of the words curve (see the module doc); ``real``: the vocabulary's own vectors instead."""
    from ..analogies.analogy import run_relations
    from ..analogies.offset_consistency import offset_scores
    from ..kinds.words import WordIndex
    from ..sources.datasets.bats import apply_vocab
    from ..suite.bench_neighbors import faiss_flat, faiss_neighbors

    words = synthetic_words(n, vocabulary)
    src = tmp / f"w{n}x{dim}.bin"
    write_w2v_bin(src, words, dim, matrix=real)
    home = tmp / "home"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    name = f"s{n}x{dim}"
    build_s, build_rss, _ = _run([sys.executable, "-c", "import sys; from lexprobe.cli.root import main\n"
                                  "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    assert not e.code\n"
                                  + _PEAK, "-q", "--home", str(home), "index", "words", "--vectors", str(src),
                                  "--name", name, "--format", "w2v-bin"], env)
    kv_path = tmp / f"{name}.kv"
    _, gensim_rss, out = _run([sys.executable, "-c", _GENSIM_LOAD, str(src), str(kv_path)], env)
    gensim_s = float(next(l.split()[1] for l in out.splitlines() if l.startswith("LOAD")))
    probe = words[min(5, n - 1)]
    first_s, _, _ = _run([sys.executable, "-m", "lexprobe", "--home", str(home), "query", "neighbors", "--index",
                          name, probe, "-k", "10", "--format", "json"], env)
    gensim_first_s, _, _ = _run([sys.executable, "-c", _GENSIM_FIRST, str(kv_path), probe], env)
    disk = _du(home / name)
    file_bytes = src.stat().st_size
    for path in (src, *tmp.glob(f"{name}.kv*")):
        path.unlink()
    index = WordIndex.open(name, home=home)
    unit = np.ascontiguousarray(index.unit)
    rng = np.random.default_rng(SEED)
    ids = rng.choice(n, size=min(4096, n), replace=False)
    queries = unit[ids]
    index.vectors.search(queries[:64], 10, exclude=ids[:64, None])  # warm-up
    t0 = time.perf_counter()
    _, I = index.vectors.search(queries, 10, exclude=ids[:, None])
    ours_s = time.perf_counter() - t0
    flat = faiss_flat(unit)
    t0 = time.perf_counter()
    _, If = faiss_neighbors(flat, queries, ids, 10, len(queries))
    faiss_s = time.perf_counter() - t0
    del flat
    kept, _ = apply_vocab(relations, index.word_to_id)
    questions, bats_s = 0, float("nan")
    if kept:
        t0 = time.perf_counter()
        questions = len(run_relations(index, kept, method="add", k=1, ranks=False).table)
        bats_s = time.perf_counter() - t0
    start, end = relation_pairs
    have = [(a, b) for a, b in zip(start, end) if a in index.word_to_id and b in index.word_to_id]
    ocs_s = float("nan")
    if len(have) >= 4:
        t0 = time.perf_counter()
        offset_scores(index.raw, index.ids([a for a, _ in have]), index.ids([b for _, b in have]), n_shuffles=50,
                      rng=np.random.default_rng(SEED))
        ocs_s = time.perf_counter() - t0
    matrix = n * dim * 4
    return {"part": "words", "n": n, "dim": dim, "vectors": "synthetic" if real is None else "glove",
            "file_bytes": file_bytes, "build_s": build_s,
            "gensim_load_s": gensim_s, "build_vs_gensim": build_s / gensim_s, "build_rss": build_rss,
            "gensim_rss": gensim_rss, "matrix_bytes": matrix, "rss_vs_matrix": build_rss / matrix,
            "disk_bytes": disk, "first_answer_s": first_s, "gensim_first_s": gensim_first_s,
            "first_vs_gensim": first_s / gensim_first_s, "neighbors_qps": len(ids) / ours_s,
            "faiss_qps": len(ids) / faiss_s, "neighbors_vs_faiss": faiss_s / ours_s,
            "same_as_faiss": float((I == If).all(axis=1).mean()), "bats_questions": questions,
            "bats_s": bats_s, "ocs_pcs_s": ocs_s}


def tokens_point(n: int, tmp: Path, dim: int = 384, big: int = 100_000, small: int = 100) -> dict:
    """One size of the tokens curve: the writer on synthetic vectors, disk bytes, restricted query latency."""
    import pyarrow as pa

    from ..core import vector_index as vindex
    from ..kinds.tokens import TokenIndex, write_token_index
    from ..sources.datasets.corpus import SENTENCE_SCHEMA, TARGET_SCHEMA, Corpus
    from ..sources.encoder import EncodeStats

    rng = np.random.default_rng(SEED)
    big = min(big, n // 2)
    lemma = np.array(["lemma%d" % i for i in rng.integers(0, 1000, n)], dtype=object)
    lemma[:big], lemma[big:big + small] = "big", "small"
    rng.shuffle(lemma)
    per = 10
    sid = pa.array([f"s{i // per}" for i in range(n)])
    targets = pa.table({f.name: (sid if f.name == "sentence_id" else pa.array(lemma.tolist()) if f.name == "lemma"
                                 else pa.array(np.arange(n) % per, f.type) if f.name == "position"
                                 else pa.array(np.ones(n, np.int64), f.type) if f.name == "length"
                                 else pa.array([f"t{i}" for i in range(n)]) if f.name == "instance_id"
                                 else pa.nulls(n, f.type)) for f in TARGET_SCHEMA}, schema=pa.schema(TARGET_SCHEMA))
    n_sent = -(-n // per)
    sentences = pa.table({"sentence_id": [f"s{i}" for i in range(n_sent)], "corpus": ["syn"] * n_sent,
                          "split": ["all"] * n_sent, "document": [""] * n_sent,
                          "words": [["x"] * per] * n_sent}, schema=pa.schema(SENTENCE_SCHEMA))
    blocks = []
    for a in range(0, n, 100_000):
        m = min(100_000, n - a)
        blocks.append((targets.slice(a, m), rng.standard_normal((m, dim), dtype=np.float32), np.ones(m, bool),
                       EncodeStats()))
    settings = {"model": "synthetic", "layers": [0], "pooling": "mean", "dim": dim}
    home = tmp / "tokens"
    t0 = time.perf_counter()
    write_token_index(home, "t", Corpus("syn", sentences, targets), blocks, settings=settings, corpus_spec="synthetic",
                      max_sentences=None, params=vindex.IndexParams())
    write_s = time.perf_counter() - t0
    del blocks
    disk = _du(home / "t")
    index = TokenIndex.open("t", home=home)
    lemmas = index.table.column("lemma").to_numpy(zero_copy_only=False)
    latency = {}
    for label in ("small", "big"):
        restrict = np.flatnonzero(lemmas == label)
        q = index.unit[restrict[:1]]
        index.vectors.search(q, 10, restrict=restrict)
        times = []
        for _ in range(15):
            t1 = time.perf_counter()
            index.vectors.search(q, 10, restrict=restrict)
            times.append(time.perf_counter() - t1)
        latency[label] = float(np.median(times))
    del index
    shutil.rmtree(home)
    return {"part": "tokens", "n": n, "dim": dim, "write_s": write_s, "rows_per_s": n / write_s,
            "disk_bytes": disk, "bytes_per_token": disk / n, "query_100_ms": latency["small"] * 1e3,
            "query_big_ms": latency["big"] * 1e3, "big_instances": big}


_RAY_TOKENS = """import json, sys, warnings
warnings.simplefilter("ignore")
from lexprobe.scale.build import build_token_index_ray
s = build_token_index_ray("r", "minilm", sys.argv[1], home=sys.argv[2], max_sentences=int(sys.argv[3]),
                          workers=2, block_sentences=int(sys.argv[4]), replace=True)
peak = 1024 * int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")))
from lexprobe.sources.datasets.corpora import read_corpus
c = read_corpus(sys.argv[1])
print(json.dumps({"targets": s["targets"], "tokens": s["encode"].subword_tokens, "wall_tokens_per_s":
                  s["wall_tokens_per_s"], "commit_s": s["commit_s"], "seconds": s["seconds"],
                  "blocks": s["blocks"], "sentences": s["sentences"],
                  "corpus_bytes_per_sentence": (c.sentences.nbytes + c.targets.nbytes) / c.sentences.num_rows}))
print("RSS", peak)
"""

_RAY_CONTEXTS = """import json, sys, warnings
warnings.simplefilter("ignore")
from lexprobe.scale.contexts_ray import build_contexts_index_ray
s = build_contexts_index_ray("c", "text:" + sys.argv[1], home=sys.argv[2], block_bytes=int(sys.argv[3]),
                             replace=True)
print(json.dumps({k: s[k] for k in ("windows", "words", "tokens", "sentences", "blocks", "reducers", "map_s",
                                    "reduce_s", "commit_s", "seconds", "map_bytes")}))
""" + _PEAK


def zipf_text(path: Path, tokens: int, vocabulary: list[str], seed: int = SEED) -> None:
    """Sentences of 5-40 words drawn from ``vocabulary`` by a Zipf law (exponent 1.1), one a line."""
    rng = np.random.default_rng(seed)
    vocab = np.array(vocabulary, dtype=object)
    with open(path, "w", encoding="utf-8") as f:
        done = 0
        while done < tokens:
            ranks = np.minimum(rng.zipf(1.1, size=200_000), len(vocab)) - 1
            lengths = rng.integers(5, 41, size=20_000)
            cuts = np.cumsum(lengths)
            cuts = cuts[cuts <= len(ranks)]
            f.write("\n".join(" ".join(vocab[ranks[a:b]]) for a, b in zip(np.r_[0, cuts[:-1]], cuts)) + "\n")
            done += int(cuts[-1])


def ray_points(corpus_spec: str, sentence_sizes: tuple[int, ...], text_sizes: tuple[int, ...], vocabulary: list[str],
               tmp: Path, block_sentences: int = 100, block_bytes: int = 4 << 20) -> list[dict]:
    """The Ray builds at each size, every build a driver process of its own (its own peak RSS)."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "RAY_ADDRESS": "", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    rows = []
    for n in sentence_sizes:
        wall, rss, out = _run([sys.executable, "-c", _RAY_TOKENS, corpus_spec, str(tmp / "rayhome"), str(n),
                               str(block_sentences)], env)
        s = json.loads(out.strip().splitlines()[-2])
        rows.append({"part": "ray-tokens", "n": n, **s, "driver_rss": rss, "process_s": wall,
                     "per_worker_tokens_per_s": s["wall_tokens_per_s"] / 2})
    for n in text_sizes:
        path = tmp / f"zipf{n}.txt"
        zipf_text(path, n, vocabulary)
        wall, rss, out = _run([sys.executable, "-c", _RAY_CONTEXTS, str(path), str(tmp / "rayhome"),
                               str(block_bytes)], env)
        s = json.loads(out.strip().splitlines()[-2])
        path.unlink()
        cpus = min(2, s["blocks"])
        rows.append({"part": "ray-contexts", "n": n, **s, "driver_rss": rss, "process_s": wall,
                     "map_tokens_per_s_per_task": s["tokens"] / (s["map_s"] * cpus),
                     "reduce_windows_per_s_per_task": s["windows"] / (s["reduce_s"] * min(2, s["reducers"])),
                     "map_bytes_per_token": s["map_bytes"] / s["tokens"]})
    shutil.rmtree(tmp / "rayhome", ignore_errors=True)
    return rows


def slope(rows: list[dict], x: str, y: str) -> float | None:
    """The fitted exponent: least-squares slope of log y on log x (None with fewer than two sizes)."""
    pts = [(r[x], r[y]) for r in rows if r.get(y) and r.get(y) > 0]
    if len({p[0] for p in pts}) < 2:
        return None
    return float(np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0])


def project(rows: list[dict], node_cpus: int = 16) -> list[str]:
    """Projected hours on 8 and 32 nodes of ``node_cpus`` one-CPU workers, from the measured rates."""
    notes = []
    tok = sorted((r for r in rows if r["part"] == "ray-tokens"), key=lambda r: r["n"])
    if len(tok) > 1:
        small, big = tok[0], tok[-1]
        per_s = big["tokens"] / big["sentences"]  # subword tokens of the targets' sentences a sentence
        tgt_s = big["targets"] / big["sentences"]
        commit_per_target = max(0.0, (big["commit_s"] - small["commit_s"]) / (big["targets"] - small["targets"]))
        commit_fixed = big["commit_s"] - commit_per_target * big["targets"]
        sentences = 10_000_000
        text_gb = sentences * big["corpus_bytes_per_sentence"] / 1e9
        old_gb = sentences * tgt_s * 384 * 4 * 2 / 1e9
        for nodes in PROJECTED_NODES:
            workers = nodes * node_cpus
            encode_h = sentences * per_s / (big["per_worker_tokens_per_s"] * workers) / 3600
            commit_h = (commit_fixed + sentences * tgt_s * commit_per_target) / 3600
            notes.append(f"projected token build, 10M sentences on {nodes} nodes x {node_cpus} CPUs ({workers} "
                         f"one-CPU encoder actors at the measured {big['per_worker_tokens_per_s']:.0f} subword "
                         f"tokens/s each): encoding and shard cutting {encode_h:.2f} h (shard tasks run beside "
                         f"the encoding), then the driver's commit {commit_h:.3f} h: about "
                         f"{encode_h + commit_h:.2f} h")
        notes.append(f"token build basis: {per_s:.1f} subword tokens and {tgt_s:.2f} targets a sentence (the "
                     f"SemCor sample); the driver's commit {commit_fixed:.2f} s + {commit_per_target * 1e6:.2f} us "
                     f"a target (fitted on {small['targets']} and {big['targets']} targets: sentences file, FAISS "
                     f"file copied from the shard tasks' unit vectors, fsync, manifest); per-worker rate assumed to "
                     "scale linearly (encoding is embarrassingly parallel; each worker writes its own blocks)")
        notes.append(f"driver peak RSS {small['driver_rss'] / 1e6:.0f} MB at {small['n']} sentences "
                     f"({small['targets']} targets) and {big['driver_rss'] / 1e6:.0f} MB at {big['n']} "
                     f"({big['targets']}): no vector passes through the driver (the former build would have held "
                     f"{(big['targets'] - small['targets']) * 384 * 4 * 2 / 1e6:.0f} MB more, unit vectors and the "
                     f"flat FAISS copy; {old_gb:.0f} GB at 10M sentences). The driver still holds the corpus as "
                     f"its reader returns it, {big['corpus_bytes_per_sentence'] / 1e3:.2f} kB a sentence (SemCor's "
                     f"Arrow tables), so about {text_gb:.1f} GB at 10M sentences: over the 2 GB target, not met "
                     "(the corpus readers read whole; workers reading their own byte ranges, as the contexts "
                     "build does, is the way there)")
    ctx = [r for r in rows if r["part"] == "ray-contexts"]
    if ctx:
        big = max(ctx, key=lambda r: r["n"])
        tokens = 1e9
        windows_per_token = big["windows"] / big["tokens"]
        for nodes in PROJECTED_NODES:
            workers = nodes * node_cpus
            map_h = tokens / (big["map_tokens_per_s_per_task"] * workers) / 3600
            reduce_h = tokens * windows_per_token / (big["reduce_windows_per_s_per_task"] * workers) / 3600
            notes.append(f"projected contexts index, 1e9 tokens on {nodes} nodes x {node_cpus} CPUs: map "
                         f"{map_h:.2f} h + reduce {reduce_h:.2f} h = {map_h + reduce_h:.2f} h")
        notes.append(f"contexts basis: map {big['map_tokens_per_s_per_task']:.0f} tokens/s a task, reduce "
                     f"{big['reduce_windows_per_s_per_task']:.0f} windows/s a task, {windows_per_token:.3f} windows "
                     f"a token and {big['map_bytes_per_token']:.1f} map bytes a token at {big['n']:.0g} tokens "
                     f"(the synthetic Zipf text; the share of windows falls as the corpus grows, so the reduce "
                     f"term is an upper bound); driver peak RSS " + ", ".join(f"{r['driver_rss'] / 1e6:.0f} MB at {r['n']:.0g} tokens" for r in ctx))
    return notes


def plot(rows: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("words", "n", ["build_s", "gensim_load_s", "first_answer_s", "gensim_first_s"], "seconds"),
              ("words", "n", ["build_rss", "matrix_bytes", "disk_bytes"], "bytes"),
              ("words", "n", ["neighbors_qps", "faiss_qps"], "queries/s (k=10)"),
              ("tokens", "n", ["write_s", "query_big_ms"], "s / ms"),
              ("words", "dim", ["build_s", "gensim_load_s", "neighbors_qps", "faiss_qps"], "s, queries/s")]
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4))
    for ax, (part, x, ys, label) in zip(axes, panels):
        if x == "dim":  # the dimension curve: every dimension at the smallest N measured at several
            sizes = [r["n"] for r in rows if r["part"] == part]
            pts = sorted((r for r in rows if r["part"] == part and r["n"] == min(sizes, default=0)
                          and r.get("vectors", "synthetic") == "synthetic"),
                         key=lambda r: r[x])
        else:
            pts = sorted((r for r in rows if r["part"] == part and r.get("dim", 300) in (300, 384)
                          and r.get("vectors", "synthetic") == "synthetic"), key=lambda r: r[x])
        for y in ys:
            xs = [r[x] for r in pts if r.get(y)]
            if xs:
                b = slope(pts, x, y)
                ax.loglog(xs, [r[y] for r in pts if r.get(y)], "o-",
                          label=f"{y} (exponent {b:.2f})" if b is not None else y)
        ax.set_xlabel(f"{part}: {'dimension' if x == 'dim' else 'rows'}")
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_scaling_bench(part: str, sizes: tuple[int, ...], *, dim: int = 300, home: Path | None = None,
                      results: str = RESULTS, plot_path: str = PLOT, record_path: str | None = None,
                      bats: str | None = None, corpus_spec: str = "semcor", text_sizes: tuple[int, ...] = (),
                      glove: bool = False) -> str:
    """Measure ``part`` at ``sizes``, add the rows to ``results``, re-fit and re-plot; returns the markdown."""
    from ..kinds.words import WordIndex

    packaged = WordIndex.open("glove", home=home)
    vocabulary = packaged.words
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="lexprobe-scaling-", dir=os.environ.get("LEXPROBE_SCALING_TMP")) as tmp:
        tmp = Path(tmp)
        if part == "words":
            from ..sources.datasets.bats import read_bats

            relations = read_bats(bats) if bats else []
            first = relations[0] if relations else None
            pairs = ([s for s, _ in first.pairs], [a[0] for _, a in first.pairs]) if first else ([], [])
            if glove:  # the packaged GloVe's own vectors, at its own size and dimension
                rows = [words_point(len(vocabulary), packaged.dim, vocabulary, tmp, relations, pairs,
                                    real=np.asarray(packaged.raw))]
            else:
                rows = [words_point(n, dim, vocabulary, tmp, relations, pairs) for n in sizes]
        elif part == "tokens":
            rows = [tokens_point(n, tmp) for n in sizes]
        elif part == "ray":
            rows = ray_points(corpus_spec, sizes, text_sizes, vocabulary, tmp)
    stamp = time.strftime("%Y-%m-%d %H:%M")
    for r in rows:
        r["date"] = stamp
    everything = json.loads(Path(results).read_text()) if Path(results).exists() else []
    everything += rows
    Path(results).write_text(json.dumps(everything, indent=1))
    plot(everything, plot_path)
    notes = [f"load average (1, 5, 15 min) after: {', '.join(f'{x:.2f}' for x in os.getloadavg())} "
             f"({os.cpu_count()} cores, shared with other jobs)"]
    same = [r for r in everything if r["part"] == part and r.get("dim", dim) == dim
            and r.get("vectors", "synthetic") == "synthetic"]
    for y in {"words": ("build_s", "gensim_load_s", "build_rss", "disk_bytes", "first_answer_s", "neighbors_qps",
                        "faiss_qps", "bats_s"),
              "tokens": ("write_s", "disk_bytes", "query_big_ms", "query_100_ms"),
              "ray": ()}[part]:
        b = slope(same, "n", y)
        if b is not None:
            notes.append(f"fitted exponent of {y} on N (all {part} rows at d={dim} recorded): {b:.2f}")
    if part == "ray":
        notes += project(everything)
    return record(record_path, f"bench scaling: {part}", rows, notes=notes)
