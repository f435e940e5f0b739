def test_neighbors_on_packaged_glove(cli, glove_home):
    r = cli("--home", glove_home, "query", "neighbors", "--index", "glove", "king", "-k", "5", "--format", "json")
    assert r.code == 0, r
    import json
    words = [row["word"] for row in json.loads(r.out)]
    assert "prince" in words and "queen" in words


def test_unknown_word_is_one_line_error(cli, glove_home):
    r = cli("--home", glove_home, "query", "neighbors", "--index", "glove", "notawordxyz")
    assert r.code == 2
    assert r.err.strip().count("\n") == 0 and "notawordxyz" in r.err
