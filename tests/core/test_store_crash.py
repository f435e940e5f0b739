"""Crash safety: SIGKILL a writer at random moments and at every step of the write protocol; afterwards the
index is the complete old version or the complete new one (``index verify`` passes, contents and answers
equal a clean build), leftovers break nothing, and re-running the command succeeds.

Writers: the words index build, a Python-level insertion, the offsets and token index builds and
``lexprobe ota --into``, 20 seeded kills each; the words and offsets builds and ``ota --into`` also at every step. Commands run in forked children of one warm process
(``crash_helpers.Zygote``) so that the whole file stays within a few minutes on 2 cores.
"""

from __future__ import annotations

import json
import shutil
import sys

import numpy as np
import pytest

import crash_helpers as ch

N_KILLS = 20
PROBES = ["word0", "word2", "word10", "word100"]  # words present in both versions


@pytest.fixture(scope="module")
def zygote():
    z = ch.Zygote("splade-tiny")
    yield z
    z.close()


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


def _kill_loop(zygote, home, name, commands: dict, check, seed: int, *, full: float, code: str | None = None,
               rerun_every: int = N_KILLS) -> dict:
    """Alternate the two ``commands`` (label -> argv), SIGKILL each at a seeded point of a clean run's length
    ``full``; after each kill ``check`` names the complete version on disk, which must be the previous one or
    the target. Every ``rerun_every`` kills, and at the end, the killed command is re-run to completion."""
    state = check(home)
    rng = np.random.default_rng(seed)
    outcome = {"killed": 0, "finished": 0, "kept_old": 0, "got_new": 0, "stray_temp": 0}
    for i in range(N_KILLS):
        target = list(commands)[i % 2]
        rc = zygote.run(home, *commands[target], code=code, kill_after=rng.uniform(0.02, 0.9) * full)
        assert rc in (0, -9), (target, rc)
        outcome["killed" if rc == -9 else "finished"] += 1
        outcome["stray_temp"] += bool(ch.stray_temp(home, name))
        after = check(home)
        assert after in (state, target) and (rc != 0 or after == target), (i, state, target, after)
        outcome["got_new" if after == target else "kept_old"] += 1
        state = after
        if (i + 1) % rerun_every == 0:  # re-running the killed command redoes the work and cleans up
            assert zygote.run(home, *commands[target], code=code) == 0
            state = check(home)
            assert state == target and not ch.stray_temp(home, name)
    return outcome


def _by_fingerprint(cli, name, versions: dict):
    def check(home) -> str:
        assert cli("--home", home, "index", "verify", name).code == 0
        fp = ch.fingerprint(home, name)
        label = next((k for k, v in versions.items() if v == fp), None)
        assert label is not None, f"{name}: a version matching no clean build"
        assert cli("--home", home, "index", "list").code == 0
        return label
    return check


# ------------------------------------------------------------------------------------------ words index


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """Two GloVe files (versions a and b) and their clean-build answers."""
    from lexprobe.kinds.words import build_word_index

    root = tmp_path_factory.mktemp("crash_src")
    ref = root / "ref"
    versions = {}
    for label, seed in (("a", 1), ("b", 2)):
        path = root / f"{label}.txt"
        words, matrix = ch.write_glove(path, 30_000, 50, seed)
        build_word_index(label, str(path), home=ref, shard_rows=12_000)
        versions[label] = (path, words, matrix, ch.neighbor_answers(ref, label, PROBES))
    return versions


def test_sigkill_during_word_index_build(zygote, cli, sources, tmp_path):
    home = tmp_path / "home"
    versions = {k: v[1:] for k, v in sources.items()}
    commands = {label: ("-q", "index", "words", "--vectors", sources[label][0], "--name", "w", "--shard-rows",
                        "12000", "--replace") for label in ("b", "a")}
    full = min(zygote.timed(home, *commands[label]) for label in ("b", "a"))  # min: robust to a busy machine
    outcome = _kill_loop(zygote, home, "w", commands, lambda h: _check_version(cli, h, "w", versions), 9,
                         full=full, rerun_every=5)
    print("word index kills:", outcome, file=sys.stderr)
    assert outcome["killed"] >= N_KILLS // 4  # the kills do land inside the build


@pytest.mark.parametrize("fresh", [False, True], ids=["over-old-index", "no-old-index"])
def test_crash_at_every_write_step(zygote, cli, tmp_path, fresh):
    """SIGKILL at the n-th fsync / rename / swap / rmtree / FAISS write / shard write, for every n."""
    from lexprobe.kinds.words import build_word_index

    src, old, ref = tmp_path / "v.txt", tmp_path / "old.txt", tmp_path / "ref"
    words_new, matrix_new = ch.write_glove(src, 3000, 20, 5)
    words_old, matrix_old = ch.write_glove(old, 2000, 20, 6)
    build_word_index("new", str(src), home=ref)
    build_word_index("old", str(old), home=ref)
    versions = {"new": (words_new, matrix_new, ch.neighbor_answers(ref, "new", PROBES[:2])),
                "old": (words_old, matrix_old, ch.neighbor_answers(ref, "old", PROBES[:2]))}
    args = ("-q", "index", "words", "--vectors", src, "--name", "w", "--shard-rows", "1000", "--replace")
    hits = 0
    for step in (("fsync", "rename", "shard_write") if fresh else ch.CRASH_STEPS):
        for nth in range(1, 20):
            home = tmp_path / f"h-{step}-{nth}"
            if not fresh:
                build_word_index("w", str(old), home=home)
            rc = zygote.run(home, *args, step=step, nth=nth)
            assert rc in (0, -9), (step, nth, rc)
            if fresh and not (home / "w" / "manifest.json").exists():
                r = cli("--home", home, "query", "neighbors", "--index", "w", "word0")
                assert r.code == 2 and "no index named" in r.err, r
            else:
                label = _check_version(cli, home, "w", versions, PROBES[:2])
                assert label == "new" if rc == 0 else label in ("old", "new"), (step, nth, label)
            r = cli("--home", home, *args)  # re-running succeeds and cleans up
            assert r.code == 0, (step, nth, r)
            assert _check_version(cli, home, "w", versions, PROBES[:2]) == "new" and not ch.stray_temp(home, "w")
            if rc == 0:
                break
            hits += 1
    assert hits >= 10  # the protocol's steps really were interrupted


INSERT = r"""
import numpy as np
from pathlib import Path
from lexprobe.kinds.words import insert_words
variant = int(argv[0])
matrix = np.random.default_rng(variant).standard_normal((8000, 50)).astype(np.float32)
insert_words(Path(__import__("os").environ["LEXPROBE_HOME"]), "w", [f"ins{i}" for i in range(8000)], matrix,
             origin="test", settings={"variant": variant}, replace=True)
"""


def test_sigkill_during_insertion(zygote, cli, sources, tmp_path):
    """Python-level insertions (a new shard + FAISS add, replacing the previous inserted rows) killed at random."""
    from lexprobe.kinds.words import build_word_index

    base_words, base_matrix = sources["a"][1], sources["a"][2]
    versions = {"base": (base_words, base_matrix, sources["a"][3])}
    for variant in (1, 2):  # clean insertions: the reference answers
        ref = tmp_path / f"ref{variant}"
        build_word_index("w", str(sources["a"][0]), home=ref, shard_rows=12_000)
        assert zygote.run(ref, variant, code=INSERT) == 0
        vec = np.random.default_rng(variant).standard_normal((8000, 50)).astype(np.float32)
        versions[f"v{variant}"] = (base_words + [f"ins{i}" for i in range(8000)],
                                   np.concatenate([base_matrix, vec]), ch.neighbor_answers(ref, "w", PROBES))
    home = tmp_path / "home"
    build_word_index("w", str(sources["a"][0]), home=home, shard_rows=12_000)
    full = zygote.timed(home, 1, code=INSERT)
    commands = {"v2": ("2",), "v1": ("1",)}
    outcome = _kill_loop(zygote, home, "w", commands, lambda h: _check_version(cli, h, "w", versions), 11,
                         full=full, code=INSERT, rerun_every=10)
    print("insertion kills:", outcome, file=sys.stderr)
    assert outcome["killed"] >= N_KILLS // 4


# ------------------------------------------------------------------------- offsets and token indexes, OTA


def _clean_versions(zygote, tmp_path, name, commands: dict, base=None) -> tuple[dict, float]:
    """Fingerprints of a clean run of each command (the first one twice: the build is deterministic) and
    the longest run's seconds."""
    versions, full = {}, 0.0
    for n, (label, argv) in enumerate(commands.items()):
        prints = set()
        for attempt in range(2 if n == 0 else 1):
            home = tmp_path / f"clean-{label}-{attempt}"
            if base is not None:
                shutil.copytree(base, home)
            full = max(full, zygote.timed(home, *argv))
            prints.add(ch.fingerprint(home, name))
        assert len(prints) == 1
        versions[label] = prints.pop()
    return versions, full


def test_sigkill_during_offsets_index_build(zygote, cli, shared_data, tmp_path):
    from lexprobe.kinds.words import build_word_index

    bats = shared_data / "BATS_3.0"
    base = tmp_path / "base"
    build_word_index("g", "glove-6b-50d", home=base, limit=30_000)
    commands = {c: ("-q", "index", "offsets", "--words", "g", "--dataset", f"bats:{bats / folder}", "--name", "o",
                    "--replace")
                for c, folder in (("infl", "1_Inflectional_morphology"), ("enc", "3_Encyclopedic_semantics"))}
    versions, full = _clean_versions(zygote, tmp_path, "o", commands, base)
    home = tmp_path / "home"
    shutil.copytree(tmp_path / "clean-infl-0", home)
    outcome = _kill_loop(zygote, home, "o", commands, _by_fingerprint(cli, "o", versions), 21, full=full,
                         rerun_every=10)
    print("offsets index kills:", outcome, file=sys.stderr)
    assert outcome["killed"] >= N_KILLS // 4


def test_sigkill_during_token_index_build(zygote, cli, shared_data, tmp_path):
    corpus = f"wsd:{shared_data / 'wsd_eval' / 'senseval2'}"
    commands = {c: ("-q", "index", "tokens", "--model", "splade-tiny", "--corpus", corpus, "--max-sentences", n,
                    "--shard-rows", "200", "--name", "t", "--replace") for c, n in (("s40", "40"), ("s60", "60"))}
    versions, full = _clean_versions(zygote, tmp_path, "t", commands)
    home = tmp_path / "home"
    shutil.copytree(tmp_path / "clean-s40-0", home)
    outcome = _kill_loop(zygote, home, "t", commands, _by_fingerprint(cli, "t", versions), 22, full=full,
                         rerun_every=10)
    print("token index kills:", outcome, file=sys.stderr)
    assert outcome["killed"] >= N_KILLS // 4


OTA_WORDS = ["kumquat", "persimmon"]


def test_sigkill_during_ota_insertion(zygote, cli, tmp_path):
    """``lexprobe ota --into`` (OTA vectors appended to a words index, replacing the previous ones)."""
    base = tmp_path / "base"
    assert zygote.run(base, "-q", "index", "words", "--vectors", "hf:splade-tiny", "--limit", "3000",
                      "--name", "sp") == 0
    probes = ["river", "city"]
    words, matrix = ch.word_state(base, "sp")
    versions = {"base": (words, matrix, ch.neighbor_answers(base, "sp", probes))}
    ota_answers = {}
    commands = {f"seed{s}": ("-q", "ota", "--model", "splade-tiny", "--into", "sp", "--iterations", "2",
                             "--seed", s, "--replace", *[a for w in OTA_WORDS for a in ("--words", w)])
                for s in ("1", "2")}
    full = 0.0
    for n, (label, argv) in enumerate(commands.items()):  # clean insertions; the first twice: deterministic
        states = []
        for attempt in range(2 if n == 0 else 1):
            home = tmp_path / f"clean-{label}-{attempt}"
            shutil.copytree(base, home)
            full = max(full, zygote.timed(home, *argv))
            states.append(ch.word_state(home, "sp"))
        assert all(s[0] == states[0][0] and np.array_equal(s[1], states[0][1]) for s in states)
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
    outcome = _kill_loop(zygote, home, "sp", commands, check, 23, full=full, rerun_every=10)
    print("OTA insertion kills:", outcome, file=sys.stderr)
    assert outcome["killed"] >= N_KILLS // 4


def _crash_at_every_step(zygote, cli, tmp_path, base, name: str, argv, versions: dict, old: str, new: str) -> int:
    """Run ``argv`` over a copy of ``base`` (holding version ``old``), SIGKILLed at the n-th call of each write
    step, n = 1, 2, ... until a run completes: each time the index is the complete ``old`` or ``new`` version;
    after the last kill of each step, re-running completes and cleans up. Returns the number of kills."""
    check = _by_fingerprint(cli, name, versions)
    kills = 0
    for step in ch.CRASH_STEPS:
        kept_old = None  # the last killed run that left the old version: re-run below
        for nth in range(1, 40):
            home = tmp_path / f"h-{step}-{nth}"
            shutil.copytree(base, home)
            rc = zygote.run(home, *argv, step=step, nth=nth)
            assert rc in (0, -9), (step, nth, rc)
            label = check(home)
            assert label == new if rc == 0 else label in (old, new), (step, nth, label)
            kills += rc != 0
            if rc != 0 and label == old:
                if kept_old is not None:
                    shutil.rmtree(kept_old)
                kept_old = home
            else:
                shutil.rmtree(home)
            if rc == 0:
                break
        if kept_old is not None:  # re-running completes and leaves nothing behind
            assert zygote.run(kept_old, *argv) == 0
            assert check(kept_old) == new and not ch.stray_temp(kept_old, name)
            shutil.rmtree(kept_old)
    return kills


def test_offsets_build_crash_at_every_write_step(zygote, cli, shared_data, tmp_path):
    """``index offsets --replace`` over an existing offsets index, killed at every step of the write protocol."""
    from lexprobe.kinds.words import build_word_index

    bats = shared_data / "BATS_3.0"
    words = tmp_path / "words"
    build_word_index("g", "glove-6b-50d", home=words, limit=20_000)
    commands = {c: ("-q", "index", "offsets", "--words", "g", "--dataset", f"bats:{bats / folder}", "--name", "o",
                    "--replace") for c, folder in (("infl", "1_Inflectional_morphology"),
                                                   ("enc", "3_Encyclopedic_semantics"))}
    versions, _ = _clean_versions(zygote, tmp_path, "o", commands, words)
    kills = _crash_at_every_step(zygote, cli, tmp_path, tmp_path / "clean-infl-0", "o", commands["enc"], versions,
                                 "infl", "enc")
    assert kills >= 8  # every step was interrupted at least once


def test_ota_insertion_crash_at_every_write_step(zygote, cli, tmp_path):
    """``lexprobe ota --into`` (a new shard, FAISS add, tombstones) killed at every step of the write protocol."""
    base = tmp_path / "base"
    assert zygote.run(base, "-q", "index", "words", "--vectors", "hf:splade-tiny", "--limit", "2000",
                      "--name", "sp") == 0
    argv = ("-q", "ota", "--model", "splade-tiny", "--into", "sp", "--iterations", "2", "--seed", "1", "--replace",
            *OTA_WORDS)
    versions = {"base": ch.fingerprint(base, "sp")}
    versions["ota"] = _clean_versions(zygote, tmp_path, "sp", {"ota": argv}, base)[0]["ota"]
    kills = _crash_at_every_step(zygote, cli, tmp_path, base, "sp", argv, versions, "base", "ota")
    assert kills >= 8
