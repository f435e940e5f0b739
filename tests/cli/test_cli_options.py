"""Option habits: the root's options work after the subcommand too, ``-k`` has the long
forms ``--topk``/``--topn``, a words index is ``--index`` everywhere (``--words`` kept), ``-k 0`` is refused the
same way by every query."""

from __future__ import annotations

import json

from lexprobe.cli.root import hoist_global_options


def test_hoisting_moves_only_global_options():
    assert hoist_global_options(["query", "neighbors", "--index", "g", "king", "--home", "H", "-q"]) == [
        "--home", "H", "-q", "query", "neighbors", "--index", "g", "king"]
    assert hoist_global_options(["--format", "json", "query", "neighbors", "king"]) == [
        "query", "neighbors", "king", "--format", "json"]
    assert hoist_global_options(["sql", "--home=H", "--", "--home", "-q"]) == ["--home=H", "sql", "--", "--home", "-q"]


def test_global_options_at_any_level(cli, glove_home, tmp_path):
    after = cli("query", "neighbors", "--index", "glove", "king", "-k", "3", "--home", glove_home, "--quiet",
                "--format", "json")
    assert after.code == 0, after
    before = cli("--home", glove_home, "--format", "json", "query", "neighbors", "--index", "glove", "king",
                 "-k", "3")
    assert before.code == 0, before
    assert [r["word"] for r in json.loads(after.out)] == [r["word"] for r in json.loads(before.out)] == [
        "prince", "queen", "ii"]
    listing = cli("index", "list", "--home", glove_home)
    assert listing.code == 0 and f"index home: {glove_home}" in listing.out and "glove" in listing.out


def test_k_long_forms_and_one_index_name(cli, glove_home, shared_data, tmp_path):
    base = ("--home", glove_home, "query", "neighbors", "--index", "glove", "king")
    outs = [cli(*base, opt, "4", "--format", "json") for opt in ("-k", "--topk", "--topn")]
    assert all(o.code == 0 for o in outs) and outs[0].out == outs[1].out == outs[2].out
    assert len(json.loads(outs[0].out)) == 4
    for cmd in (("query", "neighbors", "--index", "glove", "king"),
                ("query", "analogy", "--index", "glove", "man", "king", "woman")):
        zero = cli("--home", glove_home, *cmd, "-k", "0")
        assert zero.code == 2 and "0" in zero.err and "Traceback" not in zero.err
    bats = f"bats:{shared_data / 'BATS_3.0' / '1_Inflectional_morphology' / 'I01 [noun - plural_reg].txt'}"
    for name_opt in ("--index", "--words"):  # the new name and the old one
        r = cli("--home", glove_home, "-q", "run", "analogy", name_opt, "glove", "--dataset", bats, "--no-honest",
                "--out", tmp_path / name_opt.strip("-"))
        assert r.code == 0, r
    assert (tmp_path / "index" / "accuracy_relation.parquet").read_bytes() == (
        tmp_path / "words" / "accuracy_relation.parquet").read_bytes()
