"""Crash safety: SIGKILL a writer at random moments and at every step of the write protocol; afterwards the
index is the complete old version or the complete new one (``index verify`` passes, contents and answers
equal a clean build), leftovers break nothing, and re-running the command succeeds.

Bounded in time: 40k x 50 vectors (a build takes about 1.5 s here), 20 seeded kills per command.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

import crash_helpers as ch

N_KILLS = 20
PROBES = ["word0", "word2", "word10", "word100"]  # words present in both versions


def _check_version(cli, home, name, versions: dict, probes: list[str] = PROBES) -> str:
    """Which complete version ``name`` holds (a key of ``versions``); fails on anything else."""
    r = cli("--home", home, "index", "verify", name)
    assert r.code == 0, r
    words, matrix = ch.word_state(home, name)
    label = next((k for k, (w, m, _) in versions.items() if w == words and np.array_equal(m, matrix)), None)
    assert label is not None, f"index {name} holds {len(words)} rows matching no complete version"
    assert ch.neighbor_answers(home, name, probes) == versions[label][2]
    # leftovers of the dead writer break neither the listing nor the SQL catalog
    r = cli("--home", home, "index", "list", "--format", "json")
    assert r.code == 0 and [x["name"] for x in json.loads(r.out)] == [name], r
    r = cli("--home", home, "sql", f'select count(*) as n from "{name}"', "--format", "json")
    assert r.code == 0 and json.loads(r.out)[0]["n"] >= len(words), r
    return label


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """Two GloVe files (versions a and b) and their clean-build answers."""
    from engine.words import build_word_index

    root = tmp_path_factory.mktemp("crash_src")
    ref = root / "ref"
    versions = {}
    for label, seed in (("a", 1), ("b", 2)):
        path = root / f"{label}.txt"
        words, matrix = ch.write_glove(path, 40_000, 50, seed)
        build_word_index(ref, label, str(path), shard_rows=15_000)
        versions[label] = (path, words, matrix, ch.neighbor_answers(ref, label, PROBES))
    return versions


def test_sigkill_during_word_index_build(cli, sources, tmp_path):
    home = tmp_path / "home"
    versions = {k: v[1:] for k, v in sources.items()}
    argv = lambda label: ch.lexprobe_argv("-q", "index", "words", "--vectors", sources[label][0], "--name", "w",
                                          "--shard-rows", "15000")
    full = ch.timed_run(argv("a"), ch.env(home))
    state = _check_version(cli, home, "w", versions)
    rng = np.random.default_rng(9)
    outcomes = {"killed": 0, "finished": 0, "kept_old": 0, "got_new": 0, "stray_temp": 0}
    for i in range(N_KILLS):
        target = "b" if i % 2 == 0 else "a"
        rc = ch.kill_after(argv(target), ch.env(home), rng.uniform(0.05, 1.0) * full)
        assert rc in (0, -9), rc
        outcomes["killed" if rc == -9 else "finished"] += 1
        outcomes["stray_temp"] += bool(ch.stray_temp(home, "w"))
        after = _check_version(cli, home, "w", versions)
        assert after in (state, target)
        if rc == 0:
            assert after == target
        outcomes["kept_old" if after == state and after != target else "got_new"] += 1
        state = after
        if i % 5 == 4:  # re-running the killed command redoes the work and cleans up
            proc = ch.run_lexprobe(home, "-q", "index", "words", "--vectors", sources[target][0], "--name", "w",
                                   "--shard-rows", "15000")
            assert proc.returncode == 0, proc.stderr
            state = _check_version(cli, home, "w", versions)
            assert state == target and not ch.stray_temp(home, "w")
    print("word index kills:", outcomes, file=sys.stderr)
    assert outcomes["killed"] >= N_KILLS // 2  # most kills land inside the build


@pytest.mark.parametrize("fresh", [False, True], ids=["over-old-index", "no-old-index"])
def test_crash_at_every_write_step(cli, tmp_path, fresh):
    """SIGKILL at the n-th fsync / rename / swap / rmtree / FAISS write / shard write, for every n."""
    src = tmp_path / "v.txt"
    words_new, matrix_new = ch.write_glove(src, 3000, 20, 5)
    old = tmp_path / "old.txt"
    words_old, matrix_old = ch.write_glove(old, 2000, 20, 6)
    ref = tmp_path / "ref"
    from engine.words import build_word_index

    build_word_index(ref, "new", str(src))
    build_word_index(ref, "old", str(old))
    versions = {"new": (words_new, matrix_new, ch.neighbor_answers(ref, "new", PROBES[:2])),
                "old": (words_old, matrix_old, ch.neighbor_answers(ref, "old", PROBES[:2]))}
    args = ("-q", "index", "words", "--vectors", src, "--name", "w", "--shard-rows", "1000")
    hits = 0
    for step in (("fsync", "rename", "shard_write") if fresh else ch.CRASH_STEPS):
        for nth in range(1, 20):
            home = tmp_path / f"h-{step}-{nth}"
            if not fresh:
                build_word_index(home, "w", str(old))
            rc = ch.crash_at_step(home, step, nth, *args)
            assert rc in (0, -9), (step, nth, rc)
            if fresh and not (home / "w" / "manifest.json").exists():
                r = cli("--home", home, "query", "neighbors", "--index", "w", "word0")
                assert r.code == 2 and "no index named" in r.err, r
            else:
                label = _check_version_small(home, versions)
                assert label == "new" if rc == 0 else label in ("old", "new"), (step, nth, label)
            r = cli("--home", home, *args)  # re-running succeeds and cleans up
            assert r.code == 0, (step, nth, r)
            assert _check_version_small(home, versions) == "new" and not ch.stray_temp(home, "w")
            if rc == 0:
                break
            hits += 1
    assert hits >= 10  # the protocol's steps really were interrupted


def _check_version_small(home, versions) -> str:
    from engine.commands.indexes import verify_store
    from engine.store import open_index

    verify_store(open_index(home, "w"))
    words, matrix = ch.word_state(home, "w")
    label = next((k for k, (w, m, _) in versions.items() if w == words and np.array_equal(m, matrix)), None)
    assert label is not None
    assert ch.neighbor_answers(home, "w", PROBES[:2]) == versions[label][2]
    return label


INSERT_SCRIPT = r"""
import sys, numpy as np
from pathlib import Path
from engine.words import insert_words
home, name, variant = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
words = [f"ins{i}" for i in range(8000)]
matrix = np.random.default_rng(variant).standard_normal((8000, 50)).astype(np.float32)
insert_words(home, name, words, matrix, origin="test", settings={"variant": variant}, replace=True)
"""


def test_sigkill_during_insertion(cli, sources, tmp_path):
    """Insertions (a new shard + FAISS add, replacing the previous inserted rows) killed at random points."""
    from engine.words import build_word_index

    home = tmp_path / "home"
    build_word_index(home, "w", str(sources["a"][0]), shard_rows=15_000)
    base_words, base_matrix = sources["a"][1], sources["a"][2]
    ins_words = [f"ins{i}" for i in range(8000)]
    versions = {"base": (base_words, base_matrix, sources["a"][3])}
    ref = tmp_path / "ref"
    for variant in (1, 2):  # clean insertions: the reference answers
        build_word_index(ref, f"v{variant}", str(sources["a"][0]), shard_rows=15_000)
        proc = subprocess.run([sys.executable, "-c", INSERT_SCRIPT, str(ref), f"v{variant}", str(variant)],
                                 env=ch.env(ref), cwd=ch.REPO, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    for variant in (1, 2):
        vec = np.random.default_rng(variant).standard_normal((8000, 50)).astype(np.float32)
        versions[f"v{variant}"] = (base_words + ins_words, np.concatenate([base_matrix, vec]), None)
    _rename_ref(ref, versions)
    argv = lambda variant: [sys.executable, "-c", INSERT_SCRIPT, str(home), "w", str(variant)]
    full = ch.timed_run(argv(1), ch.env(home))
    state = _check_version(cli, home, "w", versions)
    assert state == "v1"
    rng = np.random.default_rng(11)
    killed = 0
    for i in range(N_KILLS):
        target = "v2" if i % 2 == 0 else "v1"
        rc = ch.kill_after(argv(int(target[1])), ch.env(home), rng.uniform(0.05, 1.0) * full)
        assert rc in (0, -9), rc
        killed += rc == -9
        after = _check_version(cli, home, "w", versions)
        assert after in (state, target) and (rc != 0 or after == target)
        state = after
    proc = subprocess.run(argv(1), env=ch.env(home), cwd=ch.REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert _check_version(cli, home, "w", versions) == "v1" and not ch.stray_temp(home, "w")
    assert killed >= N_KILLS // 2


def _rename_ref(ref, versions) -> None:
    """Fill in the clean answers of the inserted versions from the reference indexes."""
    for label in ("v1", "v2"):
        words, matrix, _ = versions[label]
        versions[label] = (words, matrix, ch.neighbor_answers(ref, label, PROBES))


# ------------------------------------------------- offsets, token and OTA writers (in a warm forked process)


@pytest.fixture(scope="module")
def zygote():
    z = ch.Zygote("splade-tiny")
    yield z
    z.close()


def _kill_loop(zygote, cli, home, name, commands: dict, versions: dict, check, seed: int) -> dict:
    """Alternate the two ``commands`` (label -> argv), SIGKILL each at a seeded point of a clean run's length;
    after each kill ``check`` names the complete version on disk: the previous one or the target."""
    full = max(zygote.timed(home, *commands[label]) for label in commands)
    state = check(home)
    rng = np.random.default_rng(seed)
    killed = 0
    for i in range(N_KILLS):
        target = list(commands)[i % 2]
        rc = zygote.run(home, *commands[target], kill_after=rng.uniform(0.05, 1.0) * full)
        assert rc in (0, -9), (target, rc)
        killed += rc == -9
        after = check(home)
        assert after in (state, target) and (rc != 0 or after == target), (i, state, target, after)
        state = after
    target = list(commands)[0]
    assert zygote.run(home, *commands[target]) == 0  # re-running succeeds and cleans up
    assert check(home) == target and not ch.stray_temp(home, name)
    r = cli("--home", home, "index", "list")
    assert r.code == 0, r
    return {"killed": killed, "full_run_seconds": round(full, 2)}


def _by_fingerprint(cli, name, versions: dict):
    def check(home) -> str:
        assert cli("--home", home, "index", "verify", name).code == 0
        fp = ch.fingerprint(home, name)
        label = next((k for k, v in versions.items() if v == fp), None)
        assert label is not None, f"{name}: a version matching no clean build"
        return label
    return check


def test_sigkill_during_offsets_index_build(zygote, cli, shared_data, tmp_path):
    from engine.words import build_word_index

    bats = shared_data / "BATS_3.0"
    ref = tmp_path / "ref"
    build_word_index(ref, "g", "glove-6b-50d", limit=30_000)
    commands = {c: ("-q", "index", "offsets", "--words", "g", "--dataset", f"bats:{bats / folder}", "--name", "o")
                for c, folder in (("infl", "1_Inflectional_morphology"), ("enc", "3_Encyclopedic_semantics"))}
    versions = {}
    for label, argv in commands.items():  # clean builds, twice: a build is deterministic
        prints = set()
        for attempt in range(2):
            home = tmp_path / f"clean-{label}-{attempt}"
            shutil.copytree(ref, home)
            assert zygote.run(home, *argv) == 0
            prints.add(ch.fingerprint(home, "o"))
        assert len(prints) == 1
        versions[label] = prints.pop()
    home = tmp_path / "home"
    shutil.copytree(ref, home)
    outcome = _kill_loop(zygote, cli, home, "o", commands, versions, _by_fingerprint(cli, "o", versions), 21)
    print("offsets index kills:", outcome, file=sys.stderr)
    assert outcome["killed"] >= N_KILLS // 2


def test_sigkill_during_token_index_build(zygote, cli, shared_data, tmp_path):
    corpus = f"wsd:{shared_data / 'wsd_eval' / 'senseval2'}"
    commands = {c: ("-q", "index", "tokens", "--model", "splade-tiny", "--corpus", corpus, "--max-sentences", n,
                    "--shard-rows", "200", "--name", "t") for c, n in (("s40", "40"), ("s60", "60"))}
    versions = {}
    for label, argv in commands.items():
        prints = {ch.fingerprint(h, "t") for h in (tmp_path / f"clean-{label}-{a}" for a in range(2))
                  if zygote.run(h, *argv) == 0}
        assert len(prints) == 1  # both clean builds succeeded and are byte-identical
        versions[label] = prints.pop()
    outcome = _kill_loop(zygote, cli, tmp_path / "home", "t", commands, versions,
                         _by_fingerprint(cli, "t", versions), 22)
    print("token index kills:", outcome, file=sys.stderr)
    assert outcome["killed"] >= N_KILLS // 2


OTA_WORDS = ["kumquat", "persimmon"]


def test_sigkill_during_ota_insertion(zygote, cli, tmp_path):
    """``lexprobe ota --into`` (OTA vectors appended to a words index, replacing the previous ones)."""
    base = tmp_path / "base"
    assert zygote.run(base, "-q", "index", "words", "--vectors", "hf:splade-tiny", "--limit", "8000", "--name", "sp") == 0
    probes = ["apple", "river"]
    words, matrix = ch.word_state(base, "sp")
    versions = {"base": (words, matrix, ch.neighbor_answers(base, "sp", probes))}
    commands = {f"seed{s}": ("-q", "ota", "--model", "splade-tiny", "--into", "sp", "--iterations", "8",
                             "--seed", s, "--replace", *[a for w in OTA_WORDS for a in ("--words", w)])
                for s in ("1", "2")}
    ota_answers = {}
    for label, argv in commands.items():  # clean insertions, twice: OTA with a seed is deterministic
        states = []
        for attempt in range(2):
            home = tmp_path / f"clean-{label}-{attempt}"
            shutil.copytree(base, home)
            assert zygote.run(home, *argv) == 0
            states.append(ch.word_state(home, "sp"))
        assert states[0][0] == states[1][0] and np.array_equal(states[0][1], states[1][1])
        versions[label] = (*states[0], ch.neighbor_answers(home, "sp", probes))
        ota_answers[label] = ch.neighbor_answers(home, "sp", OTA_WORDS)
    assert versions["seed1"][0] == words + OTA_WORDS

    def check(home) -> str:
        label = _check_version(cli, home, "sp", versions, probes)
        if label != "base":  # the inserted words answer from the same version as the rest
            assert ch.neighbor_answers(home, "sp", OTA_WORDS) == ota_answers[label]
        return label

    home = tmp_path / "home"
    shutil.copytree(base, home)
    outcome = _kill_loop(zygote, cli, home, "sp", commands, versions, check, 23)
    print("OTA insertion kills:", outcome, file=sys.stderr)
    assert outcome["killed"] >= N_KILLS // 2
