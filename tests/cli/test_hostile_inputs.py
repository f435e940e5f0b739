"""Hostile input: property tests (hypothesis) on every reader with random bytes and damaged versions of valid
files (truncation, flipped and inserted bytes, wrong encodings, huge lines, wrong column counts, NaN/inf).

Every case ends in a valid result or a clean :class:`LexprobeError` (one line, naming the file); nothing
hangs (each call runs under an alarm), nothing else is raised, and a failed vector build leaves no index and
no temporary folder. Seeds of the damaged files are the heads of the real files in ``../shared/data`` where
there are some. Runs are derandomised (the same examples every run) and small (CI has 2 cores).
"""

from __future__ import annotations

import io
import json
import os
import re
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import crash_helpers as ch
from lexprobe.core.errors import LexprobeError

EXAMPLES = int(os.environ.get("LEXPROBE_FUZZ_EXAMPLES", "0")) or 60  # tools/fuzz.sh: many more
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                           HealthCheck.data_too_large])
TIME_LIMIT = 20  # seconds per reader call: a hang fails the test instead of blocking the suite
_counter = itertools.count()



def clean_outcome(read, *named: Path):
    """Run ``read()``: a result, or a one-line LexprobeError naming one of ``named``; anything else fails."""
    try:
        with ch.time_limit(TIME_LIMIT):
            return read()
    except LexprobeError as exc:
        message = str(exc)
        assert "\n" not in message, message
        assert any(p.name in message for p in named), (message, [p.name for p in named])
        return exc


# ------------------------------------------------------------------------------------------- mutations

NUMBER = re.compile(rb"-?\d+\.\d+(?:e-?\d+)?")


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


@st.composite
def damaged(draw, valid: bytes) -> bytes:
    """``valid`` after 0-3 damages."""
    data = valid
    for op in draw(st.lists(st.sampled_from(
            ["truncate", "flip", "insert", "huge_line", "nonfinite", "columns", "encoding", "crlf", "drop_line",
             "duplicate_line"]), max_size=3)):
        n = len(data)
        if op == "truncate":
            data = data[: draw(st.integers(0, n))]
        elif op == "flip" and n:
            i = draw(st.integers(0, n - 1))
            data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1:]
        elif op == "insert":
            i = draw(st.integers(0, n))
            data = data[:i] + draw(st.binary(min_size=1, max_size=16)) + data[i:]
        elif op == "huge_line":
            unit = draw(st.sampled_from([b"x", b"1.5 ", b"\t", b"<a>", b"{\"a\":"]))
            lines = _lines(data)
            lines.insert(draw(st.integers(0, len(lines))), unit * draw(st.sampled_from([1 << 12, 1 << 18])))
            data = b"\n".join(lines)
        elif op == "nonfinite":
            spots = list(NUMBER.finditer(data))
            if spots:
                m = spots[draw(st.integers(0, len(spots) - 1))]
                bad = draw(st.sampled_from([b"nan", b"NaN", b"inf", b"-inf", b"1e999", b"-1e999"]))
                data = data[: m.start()] + bad + data[m.end():]
        elif op == "columns":
            lines = _lines(data)
            i = draw(st.integers(0, len(lines) - 1))
            sep = b"\t" if b"\t" in lines[i] else b" "
            fields = lines[i].split(sep)
            if draw(st.booleans()) and len(fields) > 1:
                del fields[draw(st.integers(0, len(fields) - 1))]
            else:
                fields.insert(draw(st.integers(0, len(fields))), fields[0] if fields else b"x")
            lines[i] = sep.join(fields)
            data = b"\n".join(lines)
        elif op == "encoding":
            text = data.decode("utf-8", errors="replace")
            codec = draw(st.sampled_from(["utf-16", "utf-32", "latin-1", "cp1252", "utf-8-sig"]))
            data = text.encode(codec, errors="replace")
        elif op == "crlf":
            data = data.replace(b"\n", b"\r\n")
        elif op in ("drop_line", "duplicate_line"):
            lines = _lines(data)
            i = draw(st.integers(0, len(lines) - 1))
            lines[i: i + 1] = [] if op == "drop_line" else [lines[i], lines[i]]
            data = b"\n".join(lines)
    return data


def hostile(valid: bytes):
    """Random bytes, or damaged versions of ``valid`` (most examples)."""
    return st.one_of(st.binary(max_size=300), damaged(valid), damaged(valid), damaged(valid))


def _write(root: Path, name: str, data: bytes) -> Path:
    folder = root / f"case{next(_counter)}"
    folder.mkdir()
    path = folder / name
    path.write_bytes(data)
    return path


# ------------------------------------------------------------------------------------------- vectors

WORD = st.text(alphabet=st.sampled_from(list("abcxyzé日-_.'")), min_size=1, max_size=6)
VALUE = st.floats(width=32, allow_nan=True, allow_infinity=True) | st.floats(-2, 2, width=32)


@st.composite
def vector_table(draw):
    dim = draw(st.integers(1, 4))
    words = draw(st.lists(WORD, min_size=1, max_size=5))
    values = draw(st.lists(st.lists(VALUE, min_size=dim, max_size=dim), min_size=len(words),
                           max_size=len(words)))
    return words, np.asarray(values, dtype=np.float32).reshape(len(words), dim)


def text_vectors(words, matrix, header: bool) -> bytes:
    lines = [f"{len(words)} {matrix.shape[1]}"] if header else []
    lines += [w + " " + " ".join(repr(float(v)) for v in row) for w, row in zip(words, matrix)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def w2v_binary(words, matrix) -> bytes:
    out = f"{len(words)} {matrix.shape[1]}\n".encode()
    for w, row in zip(words, matrix):
        out += w.encode("utf-8") + b" " + row.astype("<f4").tobytes() + b"\n"
    return out


def _build(root: Path, path: Path, fmt: str, vocab: Path | None = None):
    """Build a words index from ``path``; on success it verifies and holds only finite vectors, on failure
    nothing (no index, no temporary folder) is left under the home."""
    from lexprobe.cli.index import verify_store
    from lexprobe.core.store import open_index
    from lexprobe.core.vector_index import MIN_NORM
    from lexprobe.kinds.words import WordIndex, build_word_index

    home, name = root / "home", f"v{next(_counter)}"
    named = [path] + ([vocab] if vocab else [])
    out = clean_outcome(lambda: build_word_index(name, str(path), home=home, fmt=fmt,
                                                 vocab=str(vocab) if vocab else None), *named)
    if isinstance(out, LexprobeError):
        assert not (home / name).exists() and not ch.stray_temp(home, name)
    else:
        verify_store(open_index(home, name))
        index = WordIndex.open(name, home=home)
        assert index.store.count == out["count"] > 0
        assert np.isfinite(index.raw).all()
        assert np.isfinite(index.store.column("norm").to_numpy()).all()
        raw_norms = index.store.column("norm").to_numpy()  # as the index measured them (float32)
        unit_norms = np.linalg.norm(index.unit, axis=1)
        # every vector with a direction is normalised; one shorter than MIN_NORM has none and is zero
        assert np.allclose(unit_norms[raw_norms >= MIN_NORM], 1, atol=1e-3)
        assert (unit_norms[raw_norms < MIN_NORM] == 0).all()


@pytest.mark.parametrize("fmt", ["glove", "w2v-text", "fasttext", "auto"])
@SETTINGS
@given(data=st.data())
def test_text_vector_readers(tmp_path, fmt, data):
    words, matrix = data.draw(vector_table())
    valid = text_vectors(words, matrix, header=fmt in ("w2v-text", "fasttext"))
    suffix = {"fasttext": ".vec", "auto": ".txt"}.get(fmt, ".txt")
    path = _write(tmp_path, "vectors" + suffix, data.draw(hostile(valid)))
    _build(tmp_path, path, fmt)


@pytest.mark.parametrize("fmt", ["w2v-bin", "auto"])
@SETTINGS
@given(data=st.data())
def test_word2vec_binary_reader(tmp_path, fmt, data):
    words, matrix = data.draw(vector_table())
    path = _write(tmp_path, "vectors.bin", data.draw(hostile(w2v_binary(words, matrix))))
    _build(tmp_path, path, fmt)


@SETTINGS
@given(data=st.data())
def test_npy_and_vocabulary_reader(tmp_path, data):
    words, matrix = data.draw(vector_table())
    buf = io.BytesIO()
    with np.errstate(over="ignore"):
        np.save(buf, matrix.astype(data.draw(st.sampled_from([np.float32, np.float64, np.float16]))))
    npy, vocab = buf.getvalue(), ("\n".join(words) + "\n").encode()
    if data.draw(st.booleans()):
        npy = data.draw(hostile(npy))
    else:
        vocab = data.draw(hostile(vocab))
    path = _write(tmp_path, "vectors.npy", npy)
    (path.parent / "vocab.txt").write_bytes(vocab)
    _build(tmp_path, path, "npy", path.parent / "vocab.txt")


def test_vector_hostile_cases_through_the_cli(cli, tmp_path):
    """Fixed nasty cases through the real entry point: exit 2, one line naming the file, no index left."""
    cases = {
        "nan.txt": b"a 1.0 2.0\nb nan 1.0\n",
        "inf.vec": b"2 2\na 1.0 2.0\nb 1e999 1.0\n",
        "overflow.txt": b"a 1.0 2.0\nb 3e38 3e38\n",  # finite, but its length cannot be normalised in float32
        "ragged.txt": b"a 1.0 2.0\nb 1.0\n",
        "latin1.txt": "caf\xe9 1.0 2.0\n".encode("latin-1"),
        "utf16.txt": "a 1.0 2.0\n".encode("utf-16"),
        "header-lies.vec": b"5 2\na 1.0 2.0\n",
        "truncated.bin": w2v_binary(["a", "b"], np.ones((2, 3), np.float32))[:-7],
        "huge-dim.bin": b"1 2000000000\na \x00\x00\x00\x00\n",
        "huge-count.bin": b"99999999999 2\na " + np.ones(2, "<f4").tobytes(),
        "empty.txt": b"",
        "blank-line.txt": b"a 1.0 2.0\n\nb 1.0 2.0\n",
        "huge-line.txt": b"a " + b"x" * (1 << 20) + b"\n",
    }
    home = tmp_path / "home"
    for n, (file, content) in enumerate(cases.items()):
        (tmp_path / file).write_bytes(content)
        r = cli("--home", home, "index", "words", "--vectors", tmp_path / file, "--name", f"x{n}")
        assert r.code == 2, (file, r)
        lines = r.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and file in lines[0], (file, r.err)
        assert not (home / f"x{n}").exists() and not ch.stray_temp(home, f"x{n}")


# ------------------------------------------------------------------------------------------ datasets


@pytest.fixture(scope="module")
def seeds(shared_data) -> dict[str, bytes]:
    """Valid small files: heads of the real files, or the documented format (a fixture with a short repr:
    hypothesis prints the arguments of every failing case)."""
    return Seeds(_seed_files(shared_data))


class Seeds(dict):
    def __repr__(self) -> str:
        return f"<seeds: {', '.join(self)}>"


def _seed_files(shared_data: Path) -> dict[str, bytes]:
    from lexprobe.rare_words.patterns import RELATIONS

    bats = (shared_data / "BATS_3.0" / "1_Inflectional_morphology" / "I01 [noun - plural_reg].txt").read_bytes()
    google = (shared_data / "google_analogy" / "questions-words.txt").read_bytes()
    xml = (shared_data / "wsd_eval" / "senseval2" / "senseval2.data.xml").read_text(encoding="utf-8")
    cut = xml.index("</sentence>", xml.index("</sentence>") + 1) + len("</sentence>")
    gold = (shared_data / "wsd_eval" / "senseval2" / "senseval2.gold.key.txt").read_text().splitlines()
    conllu = (shared_data / "streusle" / "v4.7.1" / "dev" / "streusle.ud_dev.conllulex").read_text(encoding="utf-8")
    blocks = conllu.split("\n\n")
    take = next(i for i, b in enumerate(blocks) if "\tp." in b) + 1
    vis = (shared_data / "streusle" / "v4.7.1" / "train" / "streusle.ud_train.vis").read_text(encoding="utf-8")
    relation = RELATIONS[0]
    return {
        "bats": b"\n".join(bats.split(b"\n")[:6]) + b"\n",
        "google": b"\n".join(google.split(b"\n")[:4]) + b"\n: gram1-adjective-to-adverb\namazing amazingly apparent apparently\n",
        "wsd.data.xml": (xml[:cut] + "\n</text>\n</corpus>\n").encode(),
        "wsd.gold.key.txt": ("\n".join(g for g in gold if g.startswith(("d000.s000.", "d000.s001."))) + "\n").encode(),
        "conllulex": ("\n\n".join(blocks[: min(take, 6)]) + "\n\n").encode(),
        "vis": ("\n".join(vis.splitlines()[:4]) + "\n").encode(),
        "jsonl": (json.dumps({"sentence_id": "s1", "words": ["I", "was", "high", "on", "drugs"],
                              "targets": [{"position": 3, "sense": "p.Circumstance", "lemma": "on"}]}) + "\n"
                  + json.dumps({"text": "we sat on the bench", "targets": [{"position": 2, "length": 1,
                                                                            "senses": ["p.Locus"]}]}) + "\n").encode(),
        "WNLaMPro.txt": (f"1\tdev\tlime (n,2.5,300)\t{relation}\tfruit (n,4.0,10000)\tcitrus (n,3.0,1000)\n"
                         f"2\ttest\tquince (n,1.5,30)\t{relation}\tfruit (n,4.0,10000)\n").encode(),
        "wnlampro.jsonl": (json.dumps({"id": 1, "split": "dev", "keyword": "lime", "relation": relation,
                                       "targets": ["fruit", "citrus"], "pos": "n", "zipf": 2.5, "count": 300})
                           + "\n").encode(),
    }


def _corpus_is_valid(corpus) -> None:
    lengths = dict(zip(corpus.sentences.column("sentence_id").to_pylist(),
                       map(len, corpus.sentences.column("words").to_pylist())))
    for row in corpus.targets.select(["sentence_id", "position", "length"]).to_pylist():
        assert row["sentence_id"] in lengths
        assert 0 <= row["position"] and row["length"] >= 1
        assert row["position"] + row["length"] <= lengths[row["sentence_id"]]


def test_seeds_are_valid(seeds, tmp_path):
    """The undamaged seeds read without error, so damaged ones test the readers, not a broken seed."""
    from lexprobe.sources.datasets import bats, google, jsonl_corpus, streusle, wnlampro, wsd

    assert bats.read_relation_file(_write(tmp_path, "I01 [noun - plural_reg].txt", seeds["bats"])).pairs
    assert google.read_google(_write(tmp_path, "questions-words.txt", seeds["google"]))
    data = _write(tmp_path, "s.data.xml", seeds["wsd.data.xml"])
    (data.parent / "s.gold.key.txt").write_bytes(seeds["wsd.gold.key.txt"])
    assert len(wsd.read_wsd(data).targets) > 0
    assert len(streusle.read_streusle(_write(tmp_path, "x.conllulex", seeds["conllulex"])).targets) > 0
    assert len(streusle.read_streusle(_write(tmp_path, "x.vis", seeds["vis"])).targets) > 0
    assert len(jsonl_corpus.read_jsonl_corpus(_write(tmp_path, "u.jsonl", seeds["jsonl"])).targets) == 2
    assert len(wnlampro.read_dataset(_write(tmp_path, "WNLaMPro.txt", seeds["WNLaMPro.txt"]))) == 2
    assert len(wnlampro.read_dataset(_write(tmp_path, "wnlampro.jsonl", seeds["wnlampro.jsonl"]))) == 1


@SETTINGS
@given(data=st.data())
def test_bats_reader(seeds, tmp_path, data):
    from lexprobe.sources.datasets.bats import read_bats

    path = _write(tmp_path, "I01 [noun - plural_reg].txt", data.draw(hostile(seeds["bats"])))
    out = clean_outcome(lambda: read_bats(path), path)
    if not isinstance(out, LexprobeError):
        for relation in out:
            assert relation.pairs and all(a and b and "\t" not in a for a, b in relation.pairs)


@SETTINGS
@given(data=st.data())
def test_google_reader(seeds, tmp_path, data):
    from lexprobe.sources.datasets.google import read_questions

    path = _write(tmp_path, "questions-words.txt", data.draw(hostile(seeds["google"])))
    out = clean_outcome(lambda: read_questions(path), path)
    if not isinstance(out, LexprobeError):
        assert out and all(q.a and q.a_star and q.b and q.b_star and q.section for q in out)


@SETTINGS
@given(data=st.data())
def test_raganato_xml_and_gold_keys(seeds, tmp_path, data):
    from lexprobe.sources.datasets.wsd import read_wsd

    xml, gold = seeds["wsd.data.xml"], seeds["wsd.gold.key.txt"]
    if data.draw(st.booleans()):
        xml = data.draw(hostile(xml))
    else:
        gold = data.draw(hostile(gold))
    path = _write(tmp_path, "s.data.xml", xml)
    (path.parent / "s.gold.key.txt").write_bytes(gold)
    out = clean_outcome(lambda: read_wsd(path), path, path.parent / "s.gold.key.txt")
    if not isinstance(out, LexprobeError):
        _corpus_is_valid(out)


def test_xml_entity_expansion_is_refused(tmp_path):
    """A 'billion laughs' file ends in a clean error quickly, not in gigabytes of memory."""
    from lexprobe.sources.datasets.wsd import read_wsd

    lol = "".join(f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
    xml = (f'<?xml version="1.0"?><!DOCTYPE corpus [<!ENTITY l0 "lol">{lol}]><corpus><text id="d">'
           '<sentence id="s"><instance id="i" lemma="a" pos="N">&l9;</instance></sentence></text></corpus>')
    path = _write(tmp_path, "b.data.xml", xml.encode())
    (path.parent / "b.gold.key.txt").write_text("i a%1:00:00::\n")
    out = clean_outcome(lambda: read_wsd(path), path)
    assert isinstance(out, LexprobeError)


@pytest.mark.parametrize("kind", ["conllulex", "vis"])
@SETTINGS
@given(data=st.data())
def test_streusle_reader(seeds, tmp_path, kind, data):
    from lexprobe.sources.datasets.streusle import read_streusle

    path = _write(tmp_path, f"streusle.ud_dev.{kind}", data.draw(hostile(seeds[kind])))
    out = clean_outcome(lambda: read_streusle(path), path)
    if not isinstance(out, LexprobeError):
        _corpus_is_valid(out)


@SETTINGS
@given(data=st.data())
def test_user_jsonl_corpus_reader(seeds, tmp_path, data):
    from lexprobe.sources.datasets.jsonl_corpus import read_jsonl_corpus

    path = _write(tmp_path, "mine.jsonl", data.draw(hostile(seeds["jsonl"])))
    out = clean_outcome(lambda: read_jsonl_corpus(path), path)
    if not isinstance(out, LexprobeError):
        _corpus_is_valid(out)


@pytest.mark.parametrize("file", ["WNLaMPro.txt", "wnlampro.jsonl"])
@SETTINGS
@given(data=st.data())
def test_wnlampro_readers(seeds, tmp_path, file, data):
    from lexprobe.sources.datasets.wnlampro import read_dataset
    from lexprobe.rare_words.patterns import RELATIONS

    path = _write(tmp_path, file, data.draw(hostile(seeds[file])))
    out = clean_outcome(lambda: read_dataset(path), path)
    if not isinstance(out, LexprobeError):
        for entry in out:
            assert entry.relation in RELATIONS and entry.keyword and isinstance(entry.targets, list)


def test_hostile_datasets_through_the_index_builders(cli, tmp_path):
    """Bad dataset files given to ``index offsets`` and ``index tokens``: exit 2, one line naming the file, and
    no index or temporary folder left behind."""
    from lexprobe.kinds.words import build_word_index

    home = tmp_path / "home"
    build_word_index("g", "glove-6b-50d", home=home, limit=5000)
    bats_dir = tmp_path / "bats" / "1_Inflectional_morphology"
    bats_dir.mkdir(parents=True)
    bad = {
        ("offsets", "bats", bats_dir / "I01 [noun - plural_reg].txt"): b"cat\tcats\ndog\n",
        ("offsets", "google", tmp_path / "questions-words.txt"): b": capital\nAthens Greece Baghdad\n",
        ("offsets", "google", tmp_path / "latin1-words.txt"): ": c\nAth\xe8nes Greece Baghdad Iraq\n".encode("latin-1"),
        ("tokens", "jsonl", tmp_path / "mine.jsonl"): b'{"words": ["a", "b"], "targets": []}\n{"words": [1,\n',
        ("tokens", "streusle", tmp_path / "x.conllulex"): b"1\tBuyer\tbuyer\n",
        ("tokens", "wsd", tmp_path / "w.data.xml"): b"<corpus><text id='d'><sentence id='s'><wf>a</wf></corpus>",
    }
    (tmp_path / "w.gold.key.txt").write_text("i a%1:00:00::\n")
    for n, ((command, kind, path), content) in enumerate(bad.items()):
        path.write_bytes(content)
        name = f"x{n}"
        if command == "offsets":
            spec = f"bats:{bats_dir.parent}" if kind == "bats" else f"google:{path}"
            r = cli("--home", home, "-q", "index", "offsets", "--words", "g", "--dataset", spec, "--name", name)
        else:
            r = cli("--home", home, "-q", "index", "tokens", "--model", "splade-tiny", "--corpus", f"{kind}:{path}",
                    "--name", name)
        assert r.code == 2, (path.name, r)
        lines = r.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and path.name in lines[0], (path.name, r.err)
        assert not (home / name).exists() and not ch.stray_temp(home, name)


@pytest.mark.parametrize("argv,name", [
    (("query", "analogy", "--index", "w", "--questions", "{p}"), "q.txt"),
    (("query", "similarity", "--index", "w", "--pairs", "{p}"), "pairs.tsv"),
    (("query", "offsets", "--index", "w", "--pairs", "{p}"), "pairs.txt"),
    (("query", "probe", "--file", "{p}"), "sentences.txt"),
    (("index", "contexts", "--corpus", "text:{p}", "--name", "c"), "corpus.txt"),
    (("index", "contexts", "--corpus", "jsonl:{p}", "--name", "c"), "corpus.jsonl"),
    (("ota", "--model", "splade-tiny", "--into", "w", "@{p}"), "words.txt"),
])
@pytest.mark.parametrize("odd", ["fifo", "zero"])
def test_a_fifo_or_a_device_given_to_any_command_is_one_line_not_a_hang(cli, tmp_path, argv, name, odd):
    """Every path a command reads is checked before it is opened: a FIFO (which would block for ever) or a link to
    /dev/zero (which never ends) is one line naming it."""
    home = ch.words_home(tmp_path, 20, 4, 0)
    path = tmp_path / name
    if odd == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    with ch.time_limit(TIME_LIMIT):
        r = cli("--home", home, *[a.format(p=path) for a in argv])
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and name in lines[0] and "not a regular file" in lines[0], r
