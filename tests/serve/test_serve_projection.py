"""``GET /api/projection`` and ``format=csv``: PCA against a hand-computed example and scikit-learn, every view on
real data (the packaged GloVe's first 20k words with words inserted as ota/am insert theirs, BATS from
../shared/data, a small token index), unknown words listed, the size cap at, past and inside its limit, seeded
t-SNE and UMAP reproducible, and the CSV export equal to the JSON rows."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from lexprobe.kinds.words import WordIndex
from lexprobe.serve import projection
from lexprobe.serve.app import create_app
from serve_fixtures import INSERTED_WORDS, MONEY, RIVER, small_home


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return small_home(tmp_path_factory.mktemp("serve_projection"))


@pytest.fixture(scope="module")
def client(home, shared_data):
    return create_app(home, models=(), data_places=[shared_data]).test_client()


@pytest.fixture(scope="module")
def glove(home):
    return WordIndex.open("glove", home=home)


def get(client, endpoint="projection", **params):
    response = client.get(f"/api/{endpoint}", query_string=params)
    return response.status_code, response.get_json()


def unit(rows):
    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


# ------------------------------------------------------------------------------------------------- PCA


def test_pca_on_a_hand_made_set():
    """Rows 2u, -u, 5v, -v with u = (1, 0, 0), v = (.6, .8, 0): their directions +-u, +-v have mean 0, and
    X^T X = 2 (uu^T + vv^T), whose xy block [[1.36, .48], [.48, .64]] has eigenvalues 1 +- .6 with eigenvectors
    (2, 1)/sqrt 5 and (-1, 2)/sqrt 5 (each axis's largest component positive). So u lands at (2, -1)/sqrt 5,
    v at (.6*2 + .8, -.6 + 1.6)/sqrt 5 = (2, 1)/sqrt 5, and the axes hold 1.6/2 and .4/2 of the variance."""
    coords, explained = projection.pca(np.array([[2, 0, 0], [-1, 0, 0], [3, 4, 0], [-0.6, -0.8, 0]]))
    r = 1 / np.sqrt(5)
    np.testing.assert_allclose(coords, [[2 * r, -r], [-2 * r, r], [2 * r, r], [-2 * r, -r]], atol=1e-6)
    np.testing.assert_allclose(explained, [0.8, 0.2], atol=1e-6)


def test_pca_agrees_with_scikit_learn_signs_included():
    from sklearn.decomposition import PCA

    rows = np.random.default_rng(1).standard_normal((30, 7))
    coords, explained = projection.pca(rows)
    reference = PCA(2, svd_solver="full").fit(unit(rows))
    np.testing.assert_allclose(coords, reference.transform(unit(rows)), atol=1e-5)  # float32 unit rows
    np.testing.assert_allclose(explained, reference.explained_variance_ratio_, atol=1e-5)


# ----------------------------------------------------------------------------------------------- views


def test_words_view_projects_the_known_words_and_lists_the_others(client, glove):
    status, body = get(client, index="glove", words="king, queen\nman woman qxqxqx Paris king")
    assert status == 200, body
    assert (body["view"], body["method"], body["seed"], body["n"]) == ("words", "pca", 0, 4)
    assert body["library"].startswith("numpy ") and body["library"].endswith(" PCA")
    assert body["unknown"] == ["qxqxqx", "Paris"] and body["edges"] == []
    assert [p["label"] for p in body["points"]] == ["king", "queen", "man", "woman"]
    assert list(body["points"][0]) == ["label", "x", "y", "group", "origin", "score", "gloss", "frequency_bucket"]
    expected, explained = projection.pca(glove.raw[glove.ids(["king", "queen", "man", "woman"])])
    np.testing.assert_allclose([[p["x"], p["y"]] for p in body["points"]], expected, atol=1e-12)
    assert body["explained"] == pytest.approx(list(explained))
    ranks = glove.store.column("rank").to_numpy()[glove.ids(["king", "queen"])]
    assert ranks[0] <= 1000 < ranks[1] <= 10_000  # the buckets follow the file's frequency order
    assert [(p["group"], p["origin"], p["score"], p["gloss"], p["frequency_bucket"]) for p in body["points"][:2]] \
        == [("word", "glove-6b-50d", None, None, "top 1k"), ("word", "glove-6b-50d", None, None, "1k-10k")]


def test_neighbors_view_is_the_word_and_its_neighbours_with_their_cosines(client):
    status, body = get(client, index="glove", view="neighbors", word="frog", k=8)
    assert status == 200, body
    _, table = get(client, "neighbors", index="glove", word="frog", k=8)
    assert [p["label"] for p in body["points"]] == ["frog"] + [r["word"] for r in table["rows"]]
    assert [p["group"] for p in body["points"]] == ["query"] + ["neighbor"] * 8
    assert [p["score"] for p in body["points"][1:]] == [r["score"] for r in table["rows"]]


def test_relation_view_draws_each_pair_of_a_bats_relation(client, glove):
    status, body = get(client, index="glove", view="relation", dataset="bats", relation="I01")
    assert status == 200, body
    _, offsets = get(client, "offsets", index="glove", dataset="bats", relation="I01", shuffles=1)
    points = body["points"]
    pairs = [(points[i]["label"], points[j]["label"]) for i, j in body["edges"]]
    assert pairs == [(p["start"], p["end"]) for p in offsets["points"]] and len(pairs) >= 45
    assert all(points[i]["group"] == "start" and points[j]["group"] == "end" for i, j in body["edges"])
    assert body["n"] == len({w for pair in pairs for w in pair}) and body["unknown"] == []
    _, capitals = get(client, index="glove", view="relation", dataset="bats", relation="E01")  # country - capital
    assert "conakry" in capitals["unknown"]  # beyond the 20k words: the pair is dropped, its word listed
    assert not set(capitals["unknown"]) & (set(glove.word_to_id) | {p["label"] for p in capitals["points"]})


def test_relation_view_takes_your_own_pairs(client):
    status, body = get(client, index="glove", view="relation", method="tsne",
                       pairs="man woman\nking\tqueen\n\nfrance, paris\nqqzzx dog\n")
    assert status == 200, body
    points = body["points"]
    assert [(points[i]["label"], points[j]["label"]) for i, j in body["edges"]] == [
        ("man", "woman"), ("king", "queen"), ("france", "paris")]
    assert body["unknown"] == ["qqzzx"] and body["n"] == 6
    assert body["library"] == "scikit-learn 1.9.1 TSNE(perplexity=5)"  # 30 clipped to n - 1
    status, body = get(client, index="glove", view="relation", pairs="man woman\nking queen prince")
    assert status == 400 and "line 2" in body["error"] and "two words" in body["error"]


def test_senses_view_colours_a_lemmas_tokens_by_sense_with_glosses(client):
    status, body = get(client, index="bank", view="senses", lemma="bank", definitions=1)
    assert status == 200, body
    points = body["points"]
    assert [p["group"] for p in points] == [RIVER, MONEY, RIVER, MONEY, MONEY, RIVER]  # the corpus's order
    assert points[0]["label"] == "... on the river [[bank]] and watched the ..."
    glosses = {p["group"]: p["gloss"] for p in points}
    assert "sloping land" in glosses[RIVER] and "financial institution" in glosses[MONEY]
    # the two senses apart: each point's nearest other point (in the plane) has its sense
    xy = np.array([[p["x"], p["y"]] for p in points])
    distance = np.linalg.norm(xy[:, None] - xy[None], axis=2) + np.eye(len(xy)) * 1e9
    assert [points[j]["group"] for j in distance.argmin(axis=1)] == [p["group"] for p in points]
    status, body = get(client, index="bank", view="senses", lemma="bank")
    assert status == 200 and {p["gloss"] for p in body["points"]} == {None}
    assert get(client, index="bank", view="senses", lemma="river")[0] == 404


def test_inserted_view_shows_ota_and_am_words_beside_their_nearest_originals(client, glove):
    status, body = get(client, index="glove", view="inserted", k=2)
    assert status == 200, body
    points = {p["label"]: p for p in body["points"]}
    for word, (origin, a, b) in INSERTED_WORDS.items():
        assert points[word]["group"] == points[word]["origin"] == origin
        assert points[word]["frequency_bucket"] is None  # an inserted word has no frequency rank
        assert {a, b} <= set(points)  # the two words it is the mean of are its nearest originals
        for original in (a, b):
            cos = unit(glove.raw[glove.ids([word, original])])
            assert points[original]["score"] == pytest.approx(cos[0] @ cos[1], abs=1e-6)
            assert points[original]["group"] == "glove-6b-50d"
    assert body["n"] == len(points) == 3 + 6


# ------------------------------------------------------------------------------------------ limits


def _plain_words(glove, n):
    return [w for w in glove.words[:3 * n] if w.isalpha()][:n]


@pytest.mark.parametrize("method, n, status", [("pca", 1000, 200), ("pca", 1001, 400), ("pca", 12, 200),
                                               ("tsne", 501, 400), ("umap", 501, 400), ("axes", 1001, 400)])
def test_the_size_cap_at_past_and_inside_its_limit(client, glove, method, n, status):
    assert projection.MAX_POINTS == {"pca": 1000, "tsne": 500, "umap": 500, "axes": 1000}
    axes = {"x_axis": "man->woman", "y_axis": "paris->france"} if method == "axes" else {}
    code, body = get(client, index="glove", method=method, words=" ".join(_plain_words(glove, n)), **axes)
    assert code == status, body
    if status == 200:
        assert body["n"] == n
    else:
        assert body["error"].startswith(f"too many points for {method}: {n} words")
        assert f"cap of {projection.MAX_POINTS[method]}" in body["error"] and "\n" not in body["error"]


def test_a_word_and_1000_neighbours_is_past_the_cap(client):
    code, body = get(client, index="glove", view="neighbors", word="king", k=1000)
    assert code == 400 and "a word and its 1000 neighbours" in body["error"]


@pytest.mark.parametrize("params, says", [
    ({"words": "qxqxqx king"}, "at least 2 points; this words view has 1 (not in index 'glove': 'qxqxqx')"),
    ({"view": "neighbors", "word": "qxqxqx"}, "at least 2 points"),
    ({"words": "king queen", "method": "umap"}, "umap needs at least 3 points"),
    ({"words": "king queen", "method": "lda"}, "must be one of pca, tsne, umap"),
    ({"words": "king queen", "view": "galaxy"}, "must be one of words, neighbors, relation, senses, inserted"),
    ({"words": "king queen", "perplexity": "0"}, "'perplexity' must be between 1 and 100"),
    ({"words": "king queen", "perplexity": "nan"}, "'perplexity' must be between 1 and 100"),
    ({"words": "king queen", "seed": "-1"}, "'seed' must be between 0"),
    ({"view": "relation", "dataset": "bats", "relation": "Z99"}, "no relation 'Z99'"),
    ({"view": "inserted", "index": "bank"}, "not a words index"),
])
def test_bad_projection_requests_get_one_clear_message(client, params, says):
    code, body = get(client, **{"index": "glove", **params})
    assert code in (400, 404) and says in body["error"], body


def test_an_index_without_inserted_words_says_so(tmp_path):
    import crash_helpers as ch

    client = create_app(ch.words_home(tmp_path, 50, 4, 0), models=()).test_client()
    code, body = get(client, index="w", view="inserted")
    assert code == 400 and "no inserted words" in body["error"]


@pytest.mark.parametrize("method", ["tsne", "umap"])
def test_the_same_seed_gives_the_same_coordinates(client, method):
    params = {"index": "glove", "view": "neighbors", "word": "river", "k": 15, "method": method}
    first, again, other = (get(client, **params, seed=s)[1] for s in (7, 7, 8))
    assert first["seed"] == 7 and first["n"] == 16 and first["explained"] == []
    xy = lambda body: np.array([[p["x"], p["y"]] for p in body["points"]])
    assert np.array_equal(xy(first), xy(again))
    if method == "umap":  # t-SNE starts from the PCA layout: the seed changes nothing visible there
        assert not np.allclose(xy(first), xy(other))
    library = {"tsne": "scikit-learn 1.9.1 TSNE(perplexity=15)", "umap": "umap-learn 0.5.12 UMAP(n_neighbors=15"}
    assert first["library"].startswith(library[method])


# --------------------------------------------------------------------------------------------- word axes


def test_onto_axes_on_a_hand_made_set():
    """Rows (3, 4, 0) and (0, 0, 2) against axes (1, 0, 0) and (0, 5, 5): cosines .6, .8/sqrt 2 and 0, 1/sqrt 2."""
    coords = projection.onto_axes(np.array([[3, 4, 0], [0, 0, 2]]), np.array([[1, 0, 0], [0, 5, 5]]))
    r = 1 / np.sqrt(2)
    np.testing.assert_allclose(coords, [[0.6, 0.8 * r], [0, r]], atol=1e-12)


def test_word_axes_put_queen_right_of_king_along_man_to_woman(client, glove):
    words = ["king", "queen", "man", "woman", "prince", "princess"]
    code, body = get(client, index="glove", words=" ".join(words), method="axes", x_axis="man->woman",
                     y_axis="bats:I01")
    assert code == 200, body
    x = {p["label"]: p["x"] for p in body["points"]}
    assert x["queen"] > x["king"] and x["princess"] > x["prince"] and x["woman"] > x["man"]
    offset = glove["woman"].astype(np.float64) - glove["man"]
    for p in body["points"]:  # the cosine with woman - man, computed here
        v = glove[p["label"]].astype(np.float64)
        assert p["x"] == pytest.approx(v @ offset / np.linalg.norm(v) / np.linalg.norm(offset), abs=1e-6)
    assert [a["axis"] for a in body["axes"]] == ["x", "y"] and body["axes"][0] == {"axis": "x", "spec": "man->woman",
                                                                                  "pairs": 1}
    assert body["axes"][1]["pairs"] >= 40 and -1 <= body["axes"][1]["cosine_to_x"] <= 1
    assert body["explained"] == [] and "word axes" in body["library"]


@pytest.mark.parametrize("params, status, says", [
    ({"x_axis": "man"}, 400, "'x_axis' must be FROM->TO"),
    ({"x_axis": "man->"}, 400, "a word each side of '->'"),
    ({"x_axis": "man->man"}, 400, "gives no direction"),
    ({"x_axis": "man->Woman"}, 404, "unknown word 'Woman' (not in index 'glove'; try 'woman')"),
    ({"x_axis": "bats:Z99"}, 404, "no relation 'Z99'"),
    ({"x_axis": "nosuch:I01"}, 404, "unknown dataset 'nosuch'"),
    ({"x_axis": "x" * 201}, 400, "parameter 'x_axis' is longer than 200 characters"),
    ({"y_axis": ""}, 400, "missing parameter 'y_axis'"),
])
def test_bad_word_axes_get_one_clear_message(client, params, status, says):
    request = {"index": "glove", "words": "king queen", "method": "axes", "x_axis": "man->woman",
               "y_axis": "paris->france", **params}
    code, body = get(client, **request)
    assert code == status and says in body["error"], body


def test_word_axes_need_a_words_index(client):
    code, body = get(client, index="bank", view="senses", lemma="bank", method="axes", x_axis="man->woman",
                     y_axis="paris->france")
    assert code == 400 and "senses view projects a token index" in body["error"]


# ------------------------------------------------------------------------------------ unknown words


def test_an_unknown_word_gets_the_clis_suggestion(client):
    code, body = get(client, "neighbors", index="glove", word="King")
    assert (code, body) == (404, {"error": "unknown word 'King' (not in index 'glove'; try 'king')"})
    code, body = get(client, index="glove", words="King queen man qxqxqx")
    assert body["unknown"] == ["King", "qxqxqx"] and body["suggestions"] == {"King": "king"}


# ------------------------------------------------------------------------------------------ metadata


def test_metadata_file_gives_each_point_its_row(client):
    csv_text = "word,gender,kind\nking,m,royal\nqueen,f,royal\nman,m,\nnotplotted,x,y\n"
    code, body = get(client, index="glove", words="king queen man woman", metadata=csv_text)
    assert code == 200, body
    assert body["metadata_columns"] == ["gender", "kind"]
    assert {p["label"]: p["metadata"] for p in body["points"]} == {
        "king": {"gender": "m", "kind": "royal"}, "queen": {"gender": "f", "kind": "royal"},
        "man": {"gender": "m", "kind": None}, "woman": None}
    tsv = get(client, index="glove", words="king queen", metadata="word\tgender\nking\tm\n")[1]
    assert [p["metadata"] for p in tsv["points"]] == [{"gender": "m"}, None]
    plain = get(client, index="glove", words="king queen")[1]
    assert plain["metadata_columns"] == [] and all("metadata" not in p for p in plain["points"])


@pytest.mark.parametrize("metadata, says", [
    ("word\nking\n", "the header row must name the label column and 1 to 20 more"),
    ("word,a,a\nking,1,2\n", "each once"),
    ("," .join(["word"] + [f"c{i}" for i in range(21)]) + "\n", "1 to 20 more"),
    ("word,gender\nking,m,extra\n", "parameter 'metadata', line 2: 3 fields where the header has 2"),
    ("word,gender\n" + "king,m\n" * 3000, "parameter 'metadata' is longer than 20000 characters"),
])
def test_a_bad_metadata_file_gets_one_clear_message(client, metadata, says):
    code, body = get(client, index="glove", words="king queen", metadata=metadata)
    assert code == 400 and says in body["error"], body


def test_metadata_at_its_length_limit_is_read():
    from lexprobe.serve.api import MAX_LIST, metadata_table

    head = "word,gender\nking,m\n"
    at = head + "pad," + "x" * (MAX_LIST - len(head) - 4)
    assert len(at) == MAX_LIST
    assert metadata_table({"metadata": at}, "metadata")[1]["king"] == {"gender": "m"}


# --------------------------------------------------------------------------------------------- CSV


def _cells(row: dict, columns) -> list[str]:
    """A JSON row as the CSV should write it."""
    out = []
    for c in columns:
        v = row.get(c)
        out.append("" if v is None else "true" if v is True else "false" if v is False else str(v) if isinstance(
            v, str) else repr(v))
    return out


@pytest.mark.parametrize("endpoint, params, rows", [
    ("projection", {"index": "glove", "view": "inserted", "k": 2}, "points"),
    ("projection", {"index": "bank", "view": "senses", "lemma": "bank", "definitions": 1}, "points"),
    ("neighbors", {"index": "glove", "word": "king", "k": 5}, "rows"),
    ("senses", {"index": "bank", "sentence": "they fished from the bank of the stream", "target": "bank", "k": 3,
                "definitions": 1}, "rows"),
    ("analogy", {"index": "glove", "a": "man", "a_star": "king", "b": "woman", "k": 3}, "rows"),
    ("offsets", {"index": "glove", "dataset": "bats"}, "relations"),
    ("offsets", {"index": "glove", "dataset": "bats", "relation": "I01", "shuffles": 2}, "points"),
    ("indexes", {}, "indexes"),
])
def test_csv_holds_the_json_rows(client, endpoint, params, rows):
    json_rows = get(client, endpoint, **params)[1][rows]
    response = client.get(f"/api/{endpoint}", query_string={**params, "format": "csv"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    disposition = response.headers["Content-Disposition"]
    assert disposition.startswith(f'attachment; filename="lexprobe-{endpoint}') and disposition.endswith('.csv"')
    table = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert table[0] == list(json_rows[0])
    assert table[1:] == [_cells(r, table[0]) for r in json_rows]
    floats = [float(cell) for line in table[1:] for cell, c in zip(line, table[0]) if c in ("x", "y", "score") and cell]
    assert floats == [r[c] for r in json_rows for c in table[0] if c in ("x", "y", "score") and r[c] is not None]


def test_a_bad_format_is_a_400(client):
    code, body = get(client, "neighbors", index="glove", word="king", format="xml")
    assert code == 400 and body == {"error": "parameter 'format' must be one of json, csv, not 'xml'"}


def test_the_projection_libraries_warm_up():
    done = projection.warm_up()  # what lexprobe serve runs on a background thread once it answers
    assert [library.split(" ")[0] for library in done["libraries"]] == ["scikit-learn", "umap-learn"]
    assert done["libraries"][1].endswith("init=spectral)")  # 8 points: enough for the spectral start
