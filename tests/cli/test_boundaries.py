"""Every ranged option of the CLI at its limit, one past it and one inside it.

``RANGES`` lists each command's ranged options (``click.IntRange`` and the finite floats of
:mod:`lexprobe.cli.options`) with their bounds; a test fails when a command has a ranged option the table does not
list or lists with other bounds, so a new option needs one line here. One past a limit goes through the real entry
point and must end in click's one usage line naming the option (exit 2), before any index or model is opened; a
limit and a value inside it must parse to that value. The commands that are cheap to run (queries of a 30-word
index) also run at their limits.

An integer ``high`` of None is a range click leaves open above (``click.IntRange(1)``): nothing to test there.
"""

from __future__ import annotations

import json
from typing import NamedTuple

import click
import numpy as np
import pytest

from lexprobe.cli import cli as root
from lexprobe.cli.options import MAX_COUNT, MAX_K, MAX_SEED, FiniteFloat


class Range(NamedTuple):
    """An option's bounds: ``low``/``high`` (None: none), whether they are excluded, and the number type."""

    low: float | None
    high: float | None
    kind: type = int
    low_open: bool = False
    high_open: bool = False


COUNT = Range(1, MAX_COUNT)  # options.POSITIVE
NON_NEGATIVE = Range(0, MAX_COUNT)
K = Range(1, MAX_K)
SEED = Range(0, MAX_SEED)
THREADS = Range(1, 1024)
OPEN_ABOVE_1 = Range(1, None)  # click.IntRange(1): no upper bound
ABOVE_0 = Range(0.0, None, float, low_open=True)  # options.POSITIVE_FLOAT
AT_LEAST_0 = Range(0.0, None, float)  # options.NON_NEGATIVE_FLOAT

ANALOGY_RUN = {"--restrict-vocab": OPEN_ABOVE_1, "--eps": ABOVE_0, "--sample": OPEN_ABOVE_1,
               "--faiss-sample": OPEN_ABOVE_1, "--seed": SEED}
OFFSETS_RUN = {"--shuffles": OPEN_ABOVE_1, "--replicates": OPEN_ABOVE_1, "--pool": OPEN_ABOVE_1, "--seed": SEED,
               "--loop-sample": OPEN_ABOVE_1}
SENSES_RUN = {"--limit-queries": COUNT, "--database-sentences": COUNT, "--query-sentences": COUNT, "-k": K,
              "--min-sense-count": COUNT, "--seed": SEED}
WNLAMPRO_RUN = {"--am-max-contexts": COUNT, "--limit": COUNT, "--cutoff": COUNT, "--batch-size": COUNT,
                "--ota-iterations": COUNT, "--seed": SEED, "--threads": THREADS}
COMPARE_RUN = {"--limit": COUNT, "--lrcos-seeds": COUNT, "--restrict-vocab": OPEN_ABOVE_1, "--shuffles": OPEN_ABOVE_1, "--seed": SEED}
OTA_RECOVERY_RUN = {"--words": COUNT, "--iterations": COUNT, "--every": COUNT, "--patience": NON_NEGATIVE,
                    "--tol": AT_LEAST_0, "--batch-size": COUNT, "--seed": SEED}

RANGES: dict[str, dict[str, Range]] = {
    "index contexts": {"--window": COUNT, "--cap": COUNT, "--seed": SEED, "--max-sentences": COUNT},
    "index words": {"--limit": COUNT, "--hnsw-m": Range(2, 512), "--ef-construction": Range(1, 65536),
                    "--ef-search": Range(1, 65536), "--nlist": Range(1, 2 ** 20), "--nprobe": Range(1, 2 ** 20),
                    "--shard-rows": COUNT, "--seed": SEED},
    "index tokens": {"--batch-tokens": COUNT, "--threads": THREADS, "--max-sentences": COUNT, "--shard-rows": COUNT,
                     "--seed": SEED},
    "query neighbors": {"-k": K, "--restrict-vocab": COUNT},
    "query analogy": {"-k": K, "--restrict-vocab": OPEN_ABOVE_1, "--eps": ABOVE_0, "--seed": SEED, "--seeds": COUNT},
    "query offsets": {"--shuffles": OPEN_ABOVE_1, "--seed": SEED},
    "query similarity": {"--restrict-vocab": COUNT, "--resamples": COUNT, "--seed": SEED},
    "query senses": {"--occurrence": COUNT, "-k": K},
    "query probe": {"-k": K},
    "run analogy": ANALOGY_RUN,
    "run offsets": OFFSETS_RUN,
    "run senses": SENSES_RUN,
    "run wnlampro": WNLAMPRO_RUN,
    "run ota-recovery": OTA_RECOVERY_RUN,
    "run compare": COMPARE_RUN,
    "bench am": {"--batches": COUNT, "--min-count": COUNT, "--max-sentences": COUNT, "--seed": SEED},
    "bench neighbors": {"--queries": COUNT, "--small-batch": COUNT, "--small-queries": COUNT, "-k": K,
                        "--gensim-sample": COUNT, "--latency-sample": COUNT, "--seed": SEED},
    "bench startup": {"-k": K, "--batch-words": Range(0, None), "--repeat": COUNT},
    "bench ann-curve": {"--queries": COUNT, "-k": K, "--seed": SEED},
    "bench encode": {"--batch-tokens": COUNT, "--threads": THREADS, "--sentences": COUNT, "--seed": SEED},
    "bench ota": {"--words": COUNT, "--loop-words": COUNT, "--iterations": COUNT, "--lr": ABOVE_0, "--seed": SEED},
    "bench probing": {"--sentences": COUNT, "--loop-sample": COUNT, "--batch-size": COUNT, "--seed": SEED,
                      "--threads": THREADS},
    "bench serve": {"--requests": Range(1, 100_000), "--clients": Range(1, 64), "--threads": Range(1, 64),
                    "--vocab": Range(3, None), "--seed": SEED},
    "bench serve-start": {"--requests": Range(1, 10_000), "--repeats": Range(1, 10)},
    "bench analogy": ANALOGY_RUN,  # the paper commands' bench aliases share their options
    "bench offsets": OFFSETS_RUN,
    "bench senses": SENSES_RUN,
    "bench wnlampro": WNLAMPRO_RUN,
    "bench ota-recovery": OTA_RECOVERY_RUN,
    "bench compare": COMPARE_RUN,
    "data build-wnlampro": {"--seed": SEED, "--corruptions": COUNT, "--min-depth": Range(0, None)},
    "am train": {"--epochs": COUNT, "--seed": SEED, "--min-count": COUNT, "--ota-min-contexts": COUNT,
                 "--ota-iterations": COUNT},
    "am apply": {"--max-contexts": COUNT},
    "am show": {"--max-contexts": COUNT, "-k": K},
    "ota": {"--iterations": COUNT, "--lr": ABOVE_0, "--seed": SEED, "--batch-size": COUNT, "--patience": NON_NEGATIVE,
            "--tol": AT_LEAST_0},
    "serve": {"--port": Range(0, 65535), "--threads": Range(1, 64), "--idle-timeout": Range(1, 3600)},
}


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, path + (name,))
        else:
            yield " ".join(path + (name,)), command


COMMANDS = dict(_commands(root))


def _range_of(param: click.Parameter) -> Range | None:
    t = param.type
    if isinstance(t, (click.IntRange, click.FloatRange)):
        return Range(t.min, t.max, int if isinstance(t, click.IntRange) else float, t.min_open, t.max_open)
    if isinstance(t, FiniteFloat) and (t.low is not None or t.high is not None):
        return Range(t.low, t.high, float, t.low_open, t.high_open)
    return None


def _option(command: click.Command, flag: str) -> click.Parameter:
    return next(p for p in command.params if flag in p.opts)


def _outside(r: Range) -> list:
    """One past each bound (an open bound itself too)."""
    out = []
    for bound, step, is_open in ((r.low, -1, r.low_open), (r.high, +1, r.high_open)):
        if bound is None:
            continue
        if r.kind is int:
            out.append(bound + step)
        else:
            out += ([bound] if is_open else []) + [float(np.nextafter(bound, step * np.inf))]
    return out


def _inside(r: Range) -> list:
    """Each closed bound itself and the value one step inside each bound."""
    out = []
    for bound, step, is_open in ((r.low, +1, r.low_open), (r.high, -1, r.high_open)):
        if bound is None:
            continue
        if r.kind is int:
            out += [bound, bound + step]
        else:
            out += ([] if is_open else [bound]) + [float(np.nextafter(bound, step * np.inf))]
    return out


def _text(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def test_the_table_lists_every_ranged_option():
    found = {(name, p.opts[0]): _range_of(p) for name, command in COMMANDS.items() for p in command.params
             if _range_of(p) is not None}
    listed = {(name, flag): r for name, options in RANGES.items() for flag, r in options.items()}
    missing = sorted(set(found) - set(listed))
    assert not missing, f"ranged options missing from RANGES (add a line each): {missing}"
    assert not sorted(set(listed) - set(found)), "RANGES lists options that are gone or no longer ranged"
    assert {k: v for k, v in found.items() if listed[k] != v} == {}, "bounds differ from RANGES"


@pytest.mark.parametrize("name", sorted(RANGES))
def test_one_past_a_limit_is_one_usage_line_naming_the_option(cli, name, tmp_path):
    """Through the real entry point, with nothing else on the command line: the range check comes first (a
    command's required arguments and its model or index come after), so the answer is click's usage error."""
    wrong = []
    for flag, r in RANGES[name].items():
        for value in _outside(r):
            result = cli("--home", tmp_path, *name.split(), flag, _text(value))
            err = result.err.strip()
            if not (result.code == 2 and result.out == "" and "\n" not in err and "Traceback" not in err
                    and err.startswith(f"error: lexprobe {name}: Invalid value for ") and f"'{flag}'" in err):
                wrong.append((flag, value, result.code, err[:200]))
    assert not wrong
    assert list(tmp_path.iterdir()) == []  # nothing written into the home


@pytest.mark.parametrize("name", sorted(RANGES))
def test_each_limit_and_one_inside_it_parse(name):
    """The command's own parser (click's, as the entry point runs it) turns each closed limit and its neighbour
    inside into that number; the same parse gives nothing for a value one past (so the check can tell)."""
    command = COMMANDS[name]
    wrong = []
    for flag, r in RANGES[name].items():
        param = _option(command, flag)
        for value, accepted in [(v, True) for v in _inside(r)] + [(v, False) for v in _outside(r)]:
            ctx = command.make_context(name, [flag, _text(value)], resilient_parsing=True)
            got = ctx.params[param.name]
            if param.multiple and got is not None:  # bench neighbors -k 1 -k 10: a tuple
                got = got[0] if len(got) == 1 else got
            if got != (value if accepted else None) or (accepted and type(got) is not r.kind):
                wrong.append((flag, value, got))
    assert not wrong


@pytest.fixture(scope="module")
def tiny_home(tmp_path_factory, cli):
    """A home with a 30-word, 8-dimension index, pairs for ``query offsets`` and rated pairs for ``similarity``."""
    base = tmp_path_factory.mktemp("boundaries")
    rng = np.random.default_rng(0)
    (base / "tiny.txt").write_text("".join(f"w{i} {' '.join(f'{x:.5f}' for x in rng.standard_normal(8))}\n"
                                           for i in range(30)))
    (base / "pairs.txt").write_text("".join(f"w{i} w{i + 10}\n" for i in range(8)))
    (base / "rated.txt").write_text("".join(f"w{i}\tw{i + 1}\t{(i * 7) % 10}\n" for i in range(12)))
    built = cli("--home", base / "home", "-q", "index", "words", "--name", "tiny", "--vectors", base / "tiny.txt")
    assert built.code == 0, built
    return base


def _rows(cli, base, *args):
    result = cli("--home", base / "home", "-q", "query", *args, "--format", "json")
    assert result.code == 0 and "Traceback" not in result.err, result
    return json.loads(result.out), result.err


def test_queries_run_at_their_limits(cli, tiny_home):
    """-k at MAX_K and one below clamp to the 29 candidates with a note; -k 1 gives one; --restrict-vocab at its
    limit is the whole vocabulary, at 1 only the most frequent word (an input here: no answer); 3CosMul's --eps
    just above its open bound 0; one shuffle and one resample at the largest seed."""
    for k in (MAX_K, MAX_K - 1):
        rows, err = _rows(cli, tiny_home, "neighbors", "--index", "tiny", "w0", "-k", k)
        assert len(rows) == 29 and f"note: -k {k} is more than the 29" in err
    assert len(_rows(cli, tiny_home, "neighbors", "--index", "tiny", "w0", "-k", 1)[0]) == 1
    top = _rows(cli, tiny_home, "neighbors", "--index", "tiny", "w0", "-k", 5, "--restrict-vocab", MAX_COUNT)[0]
    assert top == _rows(cli, tiny_home, "neighbors", "--index", "tiny", "w0", "-k", 5)[0]
    analogy = ("analogy", "--index", "tiny", "w0", "w1", "w2")
    assert len(_rows(cli, tiny_home, *analogy, "-k", MAX_K, "--restrict-vocab", MAX_COUNT)[0]) == 27
    assert _rows(cli, tiny_home, *analogy, "-k", 1, "--restrict-vocab", 1)[0] == []
    tiny_eps = _text(float(np.nextafter(0.0, 1.0)))
    assert len(_rows(cli, tiny_home, *analogy, "--method", "mul", "--eps", tiny_eps, "-k", 2)[0]) == 2
    offsets = _rows(cli, tiny_home, "offsets", "--index", "tiny", "--pairs", tiny_home / "pairs.txt",
                    "--shuffles", 1, "--seed", MAX_SEED)[0]
    assert len(offsets) == 1 and offsets[0]["n_pairs"] == 8 and 0.0 <= offsets[0]["pcs"] <= 1.0
    similarity = _rows(cli, tiny_home, "similarity", "--index", "tiny", "--pairs", tiny_home / "rated.txt",
                       "--resamples", 1, "--seed", MAX_SEED, "--restrict-vocab", MAX_COUNT)[0]
    assert similarity[0]["scored"] == 12
    assert similarity[0]["spearman_low"] == similarity[0]["spearman_high"]  # one resample: one value


@pytest.mark.parametrize("lrs", ["nan", "inf", "0", "-0.01", "0.001,abc", ","])
def test_learning_rates_are_finite_and_positive(cli, tmp_path, lrs):
    """run ota-recovery --lrs (a comma-separated list, checked by hand): each rate finite and above 0, else one
    usage line naming --lrs before any model is loaded, and nothing written."""
    r = cli("run", "ota-recovery", "--lrs", lrs, "--out", tmp_path / "run")
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1 and "'--lrs'" in r.err, r.err
    assert not (tmp_path / "run").exists()
