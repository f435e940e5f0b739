"""``bench startup``: the first answer of a new process, as a user meets it, against gensim and FAISS.

Each tool answers one nearest-neighbour question in a process of its own, timed from start to exit (wall and
CPU, the children's rusage):

- ``lexprobe query neighbors --index NAME WORD -k K`` (the CLI, one word), and with several words at once (a
  batch: the compiled top-k kernels), and ``query analogy`` for one question;
- ``import lexprobe; open_index(NAME)``: opening the index, nothing asked (the floor the goal is measured by);
- a notebook's first call: ``open_index(NAME)`` then ``most_similar(WORD)``, and ``open_index(NAME)`` then
  ``neighbors`` of the ``notebook_words`` most frequent words at once (answered in BLAS while the kernels load in
  the background: :mod:`lexprobe.core.topk`);
- gensim: ``KeyedVectors.load`` of the same vectors saved as ``.kv`` (memory-mapped), then ``most_similar``;
- FAISS: ``read_index`` of the same unit vectors in an ``IndexFlatIP``, then one search;
- ``import pandas`` alone, when pandas is installed: pyarrow imports it at its first use, in every lexprobe process.

**Cold** is each command's first process, lexprobe's with an empty compiled-code folder of its own
(:mod:`lexprobe.core.compile_cache`: everything compiled that the command needs); **warm** is the median of the
following ``repeat`` processes with a compiled-code folder filled beforehand (:func:`lexprobe.core.topk.load_kernels`
in a process of its own, as set-up would), the tools taking turns so that they share the machine's load. The
answers of the three tools are compared (the same words, in order).
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..analogies.bench_analogy import gensim_vectors
from ..kinds.words import WordIndex
from ..runs.bench_record import record

_GENSIM = """import json, sys
from gensim.models import KeyedVectors
kv = KeyedVectors.load(sys.argv[1], mmap="r")
print(json.dumps([w for w, _ in kv.most_similar(sys.argv[2], topn=int(sys.argv[3]))]))
"""

_FAISS = """import json, sys
import faiss
index = faiss.read_index(sys.argv[1])
row, k = int(sys.argv[2]), int(sys.argv[3])
_, I = index.search(index.reconstruct(row)[None, :], k + 1)
print(json.dumps([int(i) for i in I[0] if i != row][:k]))
"""

_OPEN = """import sys
import lexprobe
lexprobe.open_index(sys.argv[1], home=sys.argv[2])
"""

_NOTEBOOK_SIMILAR = """import json, sys
import lexprobe
index = lexprobe.open_index(sys.argv[1], home=sys.argv[2])
print(json.dumps([w for w, _ in index.most_similar(sys.argv[3], topn=int(sys.argv[4]))]))
"""

_NOTEBOOK_BATCH = """import sys
import lexprobe
index = lexprobe.open_index(sys.argv[1], home=sys.argv[2])
print(index.neighbors(index.words_at(range(int(sys.argv[3]))), k=int(sys.argv[4])).num_rows)
"""

_FILL = "from lexprobe.core.topk import load_kernels; load_kernels()"


def _timed(argv: list[str], env: dict) -> tuple[float, float, str]:
    """Wall and CPU seconds of one whole process (start to exit; CPU from the children's rusage), and its
    standard output."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, argv))} failed: {proc.stderr.decode(errors='replace').strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout.decode()


def run_startup_bench(home: Path, name: str, *, word: str = "king", k: int = 5, batch_words: int = 8,
                      analogy: tuple[str, str, str] | None = ("man", "king", "woman"), repeat: int = 3,
                      record_path: str | None = None, notebook_words: int = 1000) -> dict:
    """Cold and warm first-answer times of each command; returns the rows, the ratios against gensim and the
    markdown record. ``batch_words`` (0: none) most frequent words make the CLI's batch question,
    ``notebook_words`` (0: none) the notebook's."""
    index = WordIndex.open(name, home=home)
    row = index.ids([word])[0]
    batch = [w for w in index.words[:batch_words + 1] if w != word][:batch_words]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="lexprobe-startup-") as tmp:
        tmp = Path(tmp)
        kv_path, faiss_path = tmp / "vectors.kv", tmp / "flat.faiss"
        gensim_vectors(index).save(str(kv_path))
        import faiss

        flat = faiss.IndexFlatIP(index.dim)
        flat.add(np.ascontiguousarray(index.unit))
        faiss.write_index(flat, str(faiss_path))
        del flat
        env = {**os.environ, "LEXPROBE_CACHE": str(tmp / "compiled"), "PYTHONWARNINGS": "ignore"}
        fill_s = _timed([sys.executable, "-c", _FILL], env)[0]  # the warm folder, as set-up fills it
        lexprobe = [sys.executable, "-m", "lexprobe", "--home", str(home)]
        commands = {
            "lexprobe query neighbors, one word": lexprobe + ["query", "neighbors", "--index", name, word, "-k",
                                                              str(k), "--format", "json"],
            "gensim KeyedVectors.load(mmap) + most_similar": [sys.executable, "-c", _GENSIM, str(kv_path), word,
                                                              str(k)],
            "FAISS read_index + search": [sys.executable, "-c", _FAISS, str(faiss_path), str(row), str(k)],
            "lexprobe open_index only": [sys.executable, "-c", _OPEN, name, str(home)],
            "notebook: open_index + most_similar": [sys.executable, "-c", _NOTEBOOK_SIMILAR, name, str(home), word,
                                                    str(k)],
        }
        notebook_words = min(notebook_words, len(index))
        if notebook_words:
            commands[f"notebook: open_index + neighbors of {notebook_words} words"] = [
                sys.executable, "-c", _NOTEBOOK_BATCH, name, str(home), str(notebook_words), str(k)]
        if importlib.util.find_spec("pandas"):  # pyarrow imports it at its first use: part of every answer above
            commands["import pandas alone"] = [sys.executable, "-c", "import pandas"]
        if analogy:
            commands["lexprobe query analogy, one question"] = lexprobe + ["query", "analogy", "--index", name,
                                                                           *analogy, "-k", str(k)]
        if batch:
            commands[f"lexprobe query neighbors, {len(batch)} words (a batch)"] = lexprobe + [
                "query", "neighbors", "--index", name, *batch, "-k", str(k)]
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
        outputs: dict[str, str] = {}
        for turn in range(repeat + 1):  # turn 0 is the cold run of each command, in an empty folder of its own
            for number, (label, argv) in enumerate(commands.items()):
                cold = {**env, "LEXPROBE_CACHE": str(tmp / f"empty-{number}")}
                wall, cpu, out = _timed(argv, cold if turn == 0 else env)
                times[label].append((wall, cpu))
                outputs.setdefault(label, out)
    load_after = os.getloadavg()
    ours = [r["word"] for r in json.loads(outputs["lexprobe query neighbors, one word"])]
    theirs = json.loads(outputs["gensim KeyedVectors.load(mmap) + most_similar"])
    faiss_words = [index.words[i] for i in json.loads(outputs["FAISS read_index + search"])]
    base = "gensim KeyedVectors.load(mmap) + most_similar"
    base_cold, base_warm = times[base][0][0], statistics.median(w for w, _ in times[base][1:])
    rows = []
    for label, runs in times.items():
        warm = runs[1:]
        cold_wall, warm_wall = runs[0][0], statistics.median(w for w, _ in warm)
        rows.append({"command": label, "cold_s": cold_wall, "cold_cpu_s": runs[0][1], "warm_s": warm_wall,
                     "warm_cpu_s": statistics.median(c for _, c in warm),
                     "cold_vs_gensim": cold_wall / base_cold, "warm_vs_gensim": warm_wall / base_warm})
    one = rows[0]
    notebook = [r for r in rows if r["command"].startswith("notebook:")]
    notes = [f"index {name}: {index.store.count} words x {index.dim} dims; word {word!r}, k={k}; cold: first process "
             f"(lexprobe with an empty compiled-code folder), warm: median of {repeat} more with the folder filled "
             f"beforehand ({fill_s:.1f} s in a process of its own), the commands taking turns; `*_vs_gensim`: time "
             f"over gensim's (below 1: faster)",
             f"lexprobe's first answer, one word: cold **{one['cold_vs_gensim']:.2f}x** gensim's time, warm "
             f"**{one['warm_vs_gensim']:.2f}x**",
             *(f"{r['command']}: cold **{r['cold_vs_gensim']:.2f}x** gensim's load + most_similar, warm "
               f"**{r['warm_vs_gensim']:.2f}x**" for r in notebook),
             f"same {k} words from all three: {ours == theirs == faiss_words} (lexprobe {ours}, gensim {theirs}, "
             f"FAISS {faiss_words})",
             f"load average (1, 5, 15 min) before {', '.join(f'{x:.2f}' for x in load_before)}; after "
             f"{', '.join(f'{x:.2f}' for x in load_after)} ({os.cpu_count()} cores)"]
    md = record(record_path, "bench startup: a new process's first answer, lexprobe vs gensim and FAISS", rows,
                notes=notes, columns=["command", "cold_s", "cold_cpu_s", "warm_s", "warm_cpu_s", "cold_vs_gensim",
                                      "warm_vs_gensim"])
    return {"rows": rows, "agree": ours == theirs == faiss_words, "markdown": md}
