"""``lexprobe serve``'s JSON API, in-process (Flask's test client): answers checked against numpy by hand on the
real 400k GloVe, BATS from ../shared/data and a small token index; bad input; reopening on a new version."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from lexprobe.kinds.words import WordIndex, build_word_index, insert_words
from lexprobe.serve.api import plane_through_origin
from lexprobe.serve.app import create_app
from serve_fixtures import MONEY, RIVER, serve_home
from topk_ties import analogy_scores, assert_topk_agrees, dot_error, similar_scores, unit_error, unit_float64

G = float(dot_error(50, inputs=unit_error(50)))  # a float32 cosine of GloVe's vectors normalised in float32


@pytest.fixture(scope="module")
def home(tmp_path_factory, glove_home):
    return serve_home(tmp_path_factory.mktemp("serve"), glove_home)


@pytest.fixture(scope="module")
def client(home, shared_data):
    return create_app(home, data_places=[shared_data]).test_client()


@pytest.fixture(scope="module")
def glove(home):
    return WordIndex.open("glove", home=home)


def get(client, endpoint, **params):
    response = client.get(f"/api/{endpoint}", query_string=params)
    return response.status_code, response.get_json()


def test_indexes_lists_every_index_with_its_kind(client):
    status, body = get(client, "indexes")
    assert status == 200
    rows = {r["name"]: r for r in body["indexes"]}
    assert (rows["glove"]["kind"], rows["glove"]["count"], rows["glove"]["dim"]) == ("words", 400_000, 50)
    assert (rows["bank"]["kind"], rows["bank"]["count"], rows["bank"]["dim"]) == ("tokens", 6, 384)


def test_neighbors_match_a_brute_force_cosine_scan(client, glove):
    status, body = get(client, "neighbors", index="glove", word="king", k=8)
    assert status == 200
    assert [list(r) for r in body["rows"]] == [["query", "rank", "word", "score"]] * 8
    king = glove.word_to_id["king"]
    scores, err = similar_scores(unit_float64(glove.raw), [king], [], G)  # float64, and float32's rounding bound
    scores[king] = -np.inf
    top = np.argsort(-scores)[:8]
    assert_topk_agrees(glove.ids([r["word"] for r in body["rows"]]), scores, err,
                       scores=[r["score"] for r in body["rows"]])
    assert "queen" in [r["word"] for r in body["rows"]]
    np.testing.assert_allclose([r["score"] for r in body["rows"]], scores[top], atol=1e-5)


@pytest.mark.parametrize("method", ["add", "mul"])
def test_analogy_matches_a_brute_force_scan(client, glove, method):
    status, body = get(client, "analogy", index="glove", a="man", a_star="king", b="woman", k=3, method=method)
    assert status == 200 and body["method"] == method
    assert list(body["rows"][0]) == ["a", "a_star", "b", "rank", "word", "score"]
    unit = unit_float64(glove.raw)  # float64: the float32 answers may differ only within rounding
    a, a_star, b = (unit[glove.word_to_id[w]] for w in ("man", "king", "woman"))
    if method == "add":
        q = b - a + a_star
        scores = unit @ (q / np.linalg.norm(q))
    else:  # 3CosMul with cosines shifted to [0, 1] and eps 1e-3 (the module's definition)
        s = lambda v: (unit @ v + 1) / 2
        scores = s(b) * s(a_star) / (s(a) + 1e-3)
    scores[[glove.word_to_id[w] for w in ("man", "king", "woman")]] = -np.inf
    top = np.argsort(-scores)[:3]
    err = analogy_scores(unit, method, *glove.ids(["man", "king", "woman"]), G)[1]
    assert_topk_agrees(glove.ids([r["word"] for r in body["rows"]]), scores, err,
                       scores=[r["score"] for r in body["rows"]])
    assert body["rows"][0]["word"] == "queen"
    np.testing.assert_allclose([r["score"] for r in body["rows"]], scores[top], rtol=1e-4)


def test_honest_analogy_may_return_an_input_word(client):
    status, body = get(client, "analogy", index="glove", a="man", a_star="king", b="woman", k=2, honest=1)
    assert status == 200 and body["honest"] is True
    assert [r["word"] for r in body["rows"]] == ["king", "queen"]  # a* itself wins when nothing is excluded


def test_analogy_without_k_gives_five_answers_ranked_from_one(client):
    """Pins /api/analogy's default k (5, as documented in the OpenAPI table) and its 1-based ranks."""
    status, body = get(client, "analogy", index="glove", a="man", a_star="king", b="woman")
    assert status == 200 and [r["rank"] for r in body["rows"]] == [1, 2, 3, 4, 5]
    assert body["rows"][0]["word"] == "queen"


def test_offsets_lists_relations_then_scores_one_by_hand(client, glove):
    status, body = get(client, "offsets", index="glove", dataset="bats")
    assert status == 200
    assert len(body["relations"]) == 40 and body["relations"][0]["code"] == "I01"
    status, body = get(client, "offsets", index="glove", dataset="bats", relation="I01", shuffles=20)
    assert status == 200 and body["relation"].startswith("I01") and body["shuffles"] == 20
    starts = np.array([glove.word_to_id[p["start"]] for p in body["points"]])
    ends = np.array([glove.word_to_id[p["end"]] for p in body["points"]])
    assert len(starts) == body["n_pairs"] >= 45
    raw = glove.raw.astype(np.float64)
    unit = (raw[ends] - raw[starts]) / np.linalg.norm(raw[ends] - raw[starts], axis=1, keepdims=True)
    n = len(unit)
    ocs = ((unit @ unit.T).sum() - n) / (n * (n - 1))  # mean over i != j of o_i . o_j
    assert body["ocs"] == pytest.approx(ocs, abs=1e-9)
    assert 0.5 < body["pcs"] <= 1  # plural offsets are consistent: better than shuffled pairings
    # the scatter: each point is its unit offset projected on two orthonormal axes, so inside the unit circle
    xy = np.array([[p["x"], p["y"]] for p in body["points"]])
    assert (np.hypot(xy[:, 0], xy[:, 1]) <= 1 + 1e-9).all() and xy[:, 0].mean() > 0
    assert len(body["shuffled"]) == n and 0 < sum(body["explained"]) <= 1


def test_plane_through_origin_on_a_hand_made_set():
    """Four unit rows; R^T R = [[2.36, 0, .48], [0, 1.28, 0], [.48, 0, .36]]. Its xz block has eigenvalues
    (2.72 +- sqrt(2.72^2 - 4 * .6192)) / 2 = 2.4692, 0.2508 and top eigenvector (1, .1092/.48) normalised
    = (.9751, .2218); y is an eigenvector with 1.28. So the plane is spanned by (.9751, 0, .2218) and (0, 1, 0),
    holding 2.4692/4 and 1.28/4 of the rows' squared length (4 in all)."""
    rows = np.array([[1, 0, 0], [0.6, 0.8, 0], [0.6, -0.8, 0], [0.8, 0, 0.6]])
    axes, explained = plane_through_origin(rows)
    np.testing.assert_allclose(axes[0], [0.9751, 0, 0.2218], atol=1e-4)  # turned to point along the rows
    np.testing.assert_allclose(abs(axes[1]), [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(explained, [2.4692 / 4, 1.28 / 4], atol=1e-4)


def test_senses_ranks_the_river_bank_first_and_marks_targets(client):
    status, body = get(client, "senses", index="bank", sentence="they fished from the bank of the stream",
                       target="bank", k=6)
    assert status == 200
    assert body["query"] == "they fished from the [[bank]] of the stream" and body["note"] == ""
    assert list(body["rows"][0]) == ["rank", "score", "sense", "lemma", "pos", "sentence", "instance_id"]
    senses = [r["sense"] for r in body["rows"]]
    assert senses == [RIVER] * 3 + [MONEY] * 3
    assert all("[[bank]]" in r["sentence"] for r in body["rows"])
    scores = [r["score"] for r in body["rows"]]
    assert scores == sorted(scores, reverse=True)


def test_probe_gives_k_tokens_by_falling_probability(client):
    status, body = get(client, "probe", text="A lime is a kind of ___ .", k=5)
    assert status == 200 and body["model"] == "splade-tiny"
    assert [r["rank"] for r in body["rows"]] == [1, 2, 3, 4, 5]
    p = [r["probability"] for r in body["rows"]]
    assert p == sorted(p, reverse=True) and 0 < sum(p) <= 1


@pytest.mark.parametrize("endpoint, params, status, says", [
    ("neighbors", {"index": "glove"}, 400, "missing parameter 'word'"),
    ("neighbors", {"index": "glove", "word": "king", "k": "ten"}, 400, "must be an integer"),
    ("neighbors", {"index": "glove", "word": "king", "k": "0"}, 400, "between 1 and 1000"),
    ("neighbors", {"index": "glove", "word": "king", "k": "10000000000"}, 400, "between 1 and 1000"),
    ("neighbors", {"index": "glove", "word": "qxqxqxzz"}, 404, "unknown word 'qxqxqxzz'"),
    ("neighbors", {"index": "nope", "word": "king"}, 404, "no index named 'nope'"),
    ("neighbors", {"index": "../../etc", "word": "king"}, 400, "bad index name"),
    ("neighbors", {"index": "bank", "word": "king"}, 400, "not a words index"),
    ("analogy", {"index": "glove", "a": "man", "a_star": "king", "b": "woman", "method": "sum"}, 400,
     "must be one of add, mul, pairdir"),
    ("offsets", {"index": "glove", "dataset": "nope"}, 404, "unknown dataset 'nope'"),
    ("offsets", {"index": "glove", "dataset": "bats", "relation": "Z99"}, 404, "no relation 'Z99'"),
    ("senses", {"index": "bank", "sentence": "the cat sat", "target": "bank"}, 400, "does not occur"),
    ("senses", {"index": "glove", "sentence": "a bank", "target": "bank"}, 400, "not a tokens index"),
    ("probe", {"text": "no blank here"}, 400, "exactly one blank"),
    ("probe", {"text": "x" * 3000}, 400, "longer than 2000 characters"),
    ("sql", {"q": "select 1"}, 404, "no endpoint /api/sql"),
])
def test_bad_input_gets_one_clear_json_message(client, endpoint, params, status, says):
    code, body = get(client, endpoint, **params)
    assert code == status
    assert list(body) == ["error"] and says in body["error"] and "\n" not in body["error"]
    assert "Traceback" not in body["error"]


def test_only_get_is_answered(client):
    response = client.post("/api/neighbors", data={"index": "glove", "word": "king"})
    assert response.status_code == 405 and "Method Not Allowed" in response.get_json()["error"]


def test_the_page_and_its_assets_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and b'id="neighbors-form"' in page.data
    for asset in ("app.js", "style.css"):
        assert client.get(f"/static/{asset}").status_code == 200
    assert b"http" not in client.get("/static/app.js").data.replace(b"http://www.w3.org/2000/svg", b"")


def test_a_served_index_is_reopened_when_a_writer_commits(tmp_path):
    """Requests keep getting answers while words are inserted (as ``ota --into`` does) and see each new version;
    an unchanged index is not reopened."""
    home = tmp_path / "indexes"
    rng = np.random.default_rng(0)
    vectors = tmp_path / "small.txt"
    words = [f"w{i}" for i in range(200)]
    vectors.write_text("".join(f"{w} {' '.join(f'{x:.5f}' for x in rng.standard_normal(8))}\n" for w in words))
    build_word_index("small", str(vectors), home=home)
    app = create_app(home)
    service = app.config["lexprobe.service"]
    client = app.test_client()
    assert get(client, "neighbors", index="small", word="w0", k=3)[0] == 200
    assert get(client, "neighbors", index="small", word="w1", k=3)[0] == 200
    assert service.indexes.opens == 1
    w0 = WordIndex.open("small", home=home).raw[0]

    failures, stop = [], threading.Event()

    def reader():
        while not stop.is_set():
            code, body = get(client, "neighbors", index="small", word="w0", k=5)
            if code != 200:
                failures.append(body)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for n in range(3):  # each insert is a new version: a near copy of w0
            insert_words(home, "small", [f"new{n}"], (w0 * (1 + 0.01 * (n + 1)))[None, :], origin="ota",
                         settings={"test": n})
            code, body = get(client, "neighbors", index="small", word=f"new{n}", k=3)
            assert code == 200, body
            assert body["rows"][0]["word"] in {"w0", *(f"new{m}" for m in range(n))}
    finally:
        stop.set()
        thread.join()
    assert not failures
    assert service.indexes.opens == 4
    code, body = get(client, "neighbors", index="small", word="w0", k=3)
    assert {r["word"] for r in body["rows"]} == {"new0", "new1", "new2"}


def test_a_model_is_loaded_once_for_concurrent_requests(home, monkeypatch):
    """Four probes at once on a fresh server: one load of the model, four answers."""
    from concurrent.futures import ThreadPoolExecutor

    from lexprobe.rare_words.language_models import MaskedLM

    loads = []
    real = MaskedLM.load.__func__

    def counting(cls, name):
        loads.append(name)
        return real(cls, name)

    monkeypatch.setattr(MaskedLM, "load", classmethod(counting))
    client = create_app(home).test_client()
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: get(client, "probe", text="A lime is a kind of ___ .", k=3), range(4)))
    assert [code for code, _ in answers] == [200] * 4
    assert loads == ["splade-tiny"]
    assert len({tuple(r["token"] for r in body["rows"]) for _, body in answers}) == 1


def test_a_damaged_or_removed_index_gets_a_clear_message(tmp_path):
    from lexprobe.core.store import remove_index

    home = tmp_path / "indexes"
    vectors = tmp_path / "tiny.txt"
    vectors.write_text("".join(f"w{i} {i % 3 + 1}.0 {i % 5 + 1}.0 {i % 7 + 1}.0\n" for i in range(20)))
    build_word_index("tiny", str(vectors), home=home)
    build_word_index("gone", str(vectors), home=home)
    client = create_app(home).test_client()
    assert get(client, "neighbors", index="gone", word="w1")[0] == 200
    remove_index(home, "gone")
    assert get(client, "neighbors", index="gone", word="w1") == (404, {"error": "no index named 'gone' (indexes: tiny)"})
    shard = next((home / "tiny" / "shards").glob("*.arrow"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard.write_bytes(bytes(data))
    code, body = get(client, "neighbors", index="tiny", word="w1")
    assert code == 500 and "checksum mismatch" in body["error"] and shard.name in body["error"]


def test_plane_through_origin_of_a_single_row_pads_a_zero_axis():
    """Pins the padding of plane_through_origin: one row gives that row's direction (turned along it) and a zero
    second axis, holding all and none of the squared length."""
    axes, explained = plane_through_origin(np.array([[0.6, 0.8, 0.0]]))
    np.testing.assert_allclose(axes, [[0.6, 0.8, 0.0], [0.0, 0.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(explained, [1.0, 0.0])


def test_public_text_shows_each_place_as_given_with_or_without_a_trailing_path():
    """Pins public_text's replacement of a served place: paths under it lose the place's folder (replaced by
    what to show, or by nothing), and the bare place itself becomes what to show (or '.' when that is empty)."""
    from lexprobe.serve.api import public_text

    text = "home /zzqx/home, file /zzqx/home/glove/manifest.json"
    assert public_text(text, {"/zzqx/home": "indexes"}) == "home indexes, file indexes/glove/manifest.json"
    assert public_text(text, {"/zzqx/home/": ""}) == "home ., file glove/manifest.json"
    nested = {"/zzqx": "top", "/zzqx/home": "indexes"}  # the longer place wins inside the shorter one
    assert public_text(text, nested) == "home indexes, file indexes/glove/manifest.json"


def test_a_bad_parameter_value_is_echoed_cut_at_40_characters():
    """Pins the parameter parsers' error text: a bad integer or choice is quoted, cut to its first 40
    characters (a long value cannot flood the answer)."""
    from lexprobe.serve.api import BadRequest, choice, integer

    long = "x" * 39 + "yz" + "w" * 20
    with pytest.raises(BadRequest) as info:
        integer({"k": long}, "k", 5, 1, 10)
    assert str(info.value).endswith(f"must be an integer, not {long[:40]!r}")
    with pytest.raises(BadRequest) as info:
        choice({"method": long}, "method", ("add", "mul"), "add")
    assert str(info.value).endswith(f"must be one of add, mul, not {long[:40]!r}")


def test_a_dataset_no_data_place_holds_comes_from_gensims_copy_or_is_not_found(tmp_path, monkeypatch):
    """Pins the offsets endpoint's dataset lookup: a dataset in none of the server's data places is read from
    the copy gensim ships (Google's questions) when there is one, and is a 404 naming it otherwise (BATS)."""
    from lexprobe.serve.api import Service
    from lexprobe.serve.opened import NotFound
    from lexprobe.sources import datahome

    monkeypatch.setattr(datahome, "find", lambda name, places: None)
    service = Service(tmp_path, data_places=[tmp_path], models=())
    assert service._dataset_spec("google") == f"google:{datahome.packaged_copy('google')[0]}"
    assert service._dataset_spec("google").endswith("questions-words.txt")
    with pytest.raises(NotFound, match="dataset 'bats' is not on this server"):
        service._dataset_spec("bats")


def test_the_relation_cache_keeps_one_version_of_each_index(tmp_path, monkeypatch):
    """The offsets endpoint's per-index-version cache of a dataset's relations: a new version of an index (words
    inserted) drops that index's older entries, and keeps the same version's other datasets and other indexes."""
    from lexprobe.serve import api

    vectors = tmp_path / "v.txt"
    vectors.write_text("".join(f"{w} {i + 1} 0.5 {i % 3}\n" for i, w in enumerate(["a", "b", "c", "d"])))
    for name in ("one", "two"):
        build_word_index(name, str(vectors), home=tmp_path / "home")
    monkeypatch.setattr(api, "read_dataset", lambda spec, lowercase=False: [spec])
    monkeypatch.setattr(api, "apply_vocab", lambda relations, vocab: (relations, []))
    service = api.Service(tmp_path / "home", data_places=[tmp_path], models=())
    monkeypatch.setattr(service, "_dataset_spec", lambda name: name)
    version = lambda name: WordIndex.open(name, home=tmp_path / "home").store.manifest["version_id"]
    for name, dataset in (("one", "bats"), ("one", "google"), ("two", "bats")):
        assert service._relations_of(WordIndex.open(name, home=tmp_path / "home"), dataset, False) == [dataset]
    first = version("one")
    insert_words(tmp_path / "home", "one", ["e"], np.ones((1, 3), np.float32), origin="test", settings={})
    assert version("one") != first
    service._relations_of(WordIndex.open("one", home=tmp_path / "home"), "bats", False)
    assert sorted(service._relations) == sorted([("one", version("one"), "bats", False),
                                                 ("two", version("two"), "bats", False)])
    service._relations_of(WordIndex.open("one", home=tmp_path / "home"), "google", True)
    assert len(service._relations) == 3  # the same version's other dataset stays
