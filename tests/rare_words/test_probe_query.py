"""`query probe` as LAMA users write it: [MASK] as well as ___, several sentences or a file,
and --gold WORD printing the gold word's rank at the blank."""

from __future__ import annotations

import json


def _json(r):
    assert r.code == 0, r
    return json.loads(r.out)


def test_mask_word_several_sentences_file_and_gold(cli, tmp_path):
    base = ("query", "probe", "--model", "splade-tiny", "-k", "5", "--format", "json")
    blank = _json(cli(*base, "A sparrow is a ___ ."))
    mask = _json(cli(*base, "A sparrow is a [MASK] ."))
    assert [r["token"] for r in blank] == [r["token"] for r in mask] and len(mask) == 5
    assert [r["probability"] for r in blank] == [r["probability"] for r in mask]

    sentences = tmp_path / "probes.txt"
    sentences.write_text("# LAMA-style probes\nA sparrow is a [MASK] .\n\nParis is the capital of [MASK] .\n")
    rows = _json(cli(*base, "--file", sentences))
    assert [r["sentence"] for r in rows] == ["A sparrow is a [MASK] ."] * 5 + ["Paris is the capital of [MASK] ."] * 5
    assert [r["token"] for r in rows[:5]] == [r["token"] for r in mask]

    third = mask[2]["token"]
    gold = _json(cli(*base, "A sparrow is a [MASK] .", "A sparrow is a ___ .", "--gold", third))
    assert [g["rank"] for g in gold] == [3, 3] and gold[0]["probability"] == mask[2]["probability"]
    assert gold[0]["top_5"] == ", ".join(r["token"] for r in mask)
    far = _json(cli(*base, "A sparrow is a [MASK] .", "--gold", "bird"))[0]
    assert far["rank"] > 5 and far["probability"] < mask[-1]["probability"]

    r = cli(*base, "A [MASK] is a ___ .")
    assert r.code == 2 and "exactly one blank" in r.err
    r = cli(*base, "A sparrow is a [MASK] .", "--gold", "photosynthesis")
    assert r.code == 2 and "is 3 tokens" in r.err

    long = "a " * 600 + "___ ."  # within the CLI's text limit, past the model's 512 tokens
    for extra in ((), ("--gold", third)):
        r = cli(*base, long, *extra)
        assert r.code == 2 and "Traceback" not in r.err and len(r.err.strip().splitlines()) == 1
        assert "is 604 tokens for this model; it takes at most 512" in r.err, r.err
