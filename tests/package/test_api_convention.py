"""The public API's convention (CONTRIBUTING.md, "API convention"): every facade function and every public method
of the index views checked by its signature, so that a new drift fails here; the old call forms still work for
one release and warn, naming the new form; result dataclasses give ``to_pandas()`` or one clear error."""

from __future__ import annotations

import inspect
import re
import sys
import warnings

import numpy as np
import pyarrow as pa
import pytest

import lexprobe
from lexprobe.core.conventions import Result
from lexprobe.core.errors import LexprobeError
from lexprobe.kinds.analogy_queries import answer_questions
from lexprobe.kinds.offsets import OffsetIndex, build_offset_index
from lexprobe.kinds.words import WordIndex

# parameter names the convention replaced: top-k is ``k``, leaving a query's own words out is ``exclude_inputs``
FORBIDDEN = {"topk", "top_k", "topn", "n", "n_results", "num_results", "exclude", "include_self", "honest"}
ALLOWED = {("WordIndex.most_similar", "topn"),   # gensim's name, kept for gensim's callers
           ("WordIndex.most_similar_cosmul", "topn"),  # the same: gensim's sibling of most_similar
           *{(f"WordIndex.{m}", "topn") for m in ("similar_by_word", "similar_by_key", "similar_by_vector",
                                                  "relative_cosine_similarity")},  # gensim's KeyedVectors too
           ("analogy_test", "honest")}          # not a switch: also run the honest test (exclude_inputs=False)
HOME_WITHOUT_INDEX = {"build_wnlampro"}          # its home is where WordNet is kept; it names no index

# what each public callable returns: "result" an Arrow table or a Result dataclass; "summary" a JSON-ready dict
# (builds, inserts, runs); "gensim" gensim's shapes; "other" an object, arrays or records (openers, readers, loaders)
RETURNS = {
    "result": {"analogy_test", "relation_offsets", "sense_ranking", "WordIndex.neighbors", "TokenIndex.query",
               "OffsetIndex.select", "probe_wnlampro", "AMModel.infer", "WordIndex.evaluate_word_pairs",
               "WordIndex.evaluate_word_analogies"},
    "summary": {"build_word_index", "build_token_index", "offset_table1", "insert_ota", "train_am", "insert_am"},
    "gensim": {"WordIndex.most_similar", "WordIndex.analogy", "WordIndex.similarity", "WordIndex.most_similar_cosmul",
               "WordIndex.doesnt_match", "WordIndex.closer_than", "WordIndex.rank", "WordIndex.most_similar_to_given",
               *(f"WordIndex.{m}" for m in ("similar_by_word", "similar_by_key", "similar_by_vector", "n_similarity",
                                            "distance", "words_closer_than", "relative_cosine_similarity"))},
    "other": {"open_index", "default_home", "analogy_dataset", "one_token_approximation", "load_lm",
              "load_vectors", "WordIndex.known", "WordIndex.words_at", "WordIndex.raw_of",
              "build_wnlampro", "read_wnlampro", "WordIndex.open", "WordIndex.ids", "WordIndex.unit_of",
              "WordIndex.vector", "WordIndex.describe", "WordIndex.suggestion", "TokenIndex.open",
              "TokenIndex.encode", "TokenIndex.encoder", "TokenIndex.target_lemma", "TokenIndex.words_of",
              "OffsetIndex.open", "OffsetIndex.relations", "OffsetIndex.kinds", "AMModel.open", "AMModel.form",
              "AMModel.state", "AMModel.write", "WordIndex.dead_rows",
              *(f"WordIndex.{m}" for m in ("get_vector", "word_vec", "get_index", "has_index_for", "get_vecattr",
                                           "get_normed_vectors", "get_mean_vector", "distances", "cosine_similarities",
                                           "rank_by_centrality", "save_word2vec_format", "to_gensim", "vectors_for_all",
                                           "fill_norms"))},  # gensim's KeyedVectors getters (kinds/keyed_vectors.py)
}


def public_callables() -> dict[str, object]:
    out = {}
    for name in lexprobe.__all__:
        obj = getattr(lexprobe, name)
        if inspect.isclass(obj):
            if not issubclass(obj, Exception):
                out.update({f"{name}.{m}": f for m, f in inspect.getmembers(obj, callable) if not m.startswith("_")})
        elif callable(obj):
            out[name] = obj
    return out


PUBLIC = public_callables()


def parameters(func) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(func).parameters.values() if p.name not in ("self", "cls")]


def test_every_public_callable_is_classified():
    unclassified = set(PUBLIC) - set().union(*RETURNS.values())
    assert not unclassified, f"classify the new public names in RETURNS (and follow the convention): {unclassified}"


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_names_home_and_k_follow_the_convention(name):
    params = parameters(PUBLIC[name])
    names = [p.name for p in params]
    bad = {n for n in names if n in FORBIDDEN} - {n for q, n in ALLOWED if q == name}
    assert not bad, f"{name}: {sorted(bad)} (top-k is k; leaving the inputs out is exclude_inputs)"
    if "home" in names:
        home = params[names.index("home")]
        assert home.kind is home.KEYWORD_ONLY and home.default is None, f"{name}: home=None, keyword-only"
        if name not in HOME_WITHOUT_INDEX:
            assert re.fullmatch(r"(\w+_)?name", names[0]), f"{name}: the index name comes first, not {names[0]}"


@pytest.mark.parametrize("name", sorted((RETURNS["result"] | RETURNS["summary"] | RETURNS["gensim"]) & set(PUBLIC)))
def test_returns_follow_the_convention(name):
    func = PUBLIC[name]
    annotation = inspect.signature(func).return_annotation
    if name in RETURNS["summary"]:
        assert annotation == "dict", name
    elif name in RETURNS["gensim"]:  # gensim's shapes: lists of (word, score), a word, words, a number, a test
        assert annotation in ("list[tuple[str, float]]", "float", "str", "list[str]", "int",
                              "tuple[float, list[dict]]"), name
    elif annotation != "pa.Table":
        cls = getattr(sys.modules[func.__module__], annotation, None)
        assert isinstance(cls, type) and issubclass(cls, Result), f"{name} returns {annotation}"
        assert "to_arrow" in vars(cls), f"{cls.__name__} names its main table"


# ------------------------------------------------------------------------------ the old forms, one release

@pytest.fixture(scope="module")
def words_home(tmp_path_factory):
    """A words index ``w`` of eight 4-d vectors (seeded)."""
    root = tmp_path_factory.mktemp("convention")
    rng = np.random.default_rng(3)
    vocab = ["man", "king", "woman", "queen", "prince", "boy", "girl", "crown"]
    (root / "v.txt").write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in rng.normal(size=4))}\n" for w in vocab))
    home = root / "home"
    lexprobe.build_word_index("w", str(root / "v.txt"), home=home)
    return home, root / "v.txt"


def new_form(call):
    """The call's result; a DeprecationWarning is an error here."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        return call()


def test_home_first_builds_still_work_and_warn(words_home, tmp_path):
    home, vectors = words_home
    with pytest.warns(DeprecationWarning, match=re.escape("use build_word_index(name, spec, home=home)")):
        lexprobe.build_word_index(str(tmp_path), "old", str(vectors))  # a str home: counted, not typed
    assert new_form(lambda: lexprobe.open_index("old", home=tmp_path)).words == lexprobe.open_index(
        "w", home=home).words
    # the old order with the corpus as a keyword: a Path first is a home (an index name is a str)
    with pytest.warns(DeprecationWarning, match=re.escape("build_token_index(name, model, home=home)")), \
            pytest.raises(LexprobeError, match="nonexistent.jsonl: no such file"):
        lexprobe.build_token_index(tmp_path, "t", "minilm", corpus_spec="jsonl:/nonexistent.jsonl")
    with pytest.raises(LexprobeError, match="nonexistent.jsonl: no such file"):
        new_form(lambda: lexprobe.build_token_index("t", "minilm", "jsonl:/nonexistent.jsonl", home=tmp_path))
    with pytest.warns(DeprecationWarning, match=re.escape("run_table1(words_name, dataset, home=home)")), \
            pytest.raises(LexprobeError, match="nonexistent-bats"):
        lexprobe.offset_table1(home, "w", "bats:/nonexistent-bats", offsets_name="o")
    with pytest.raises(LexprobeError, match="nonexistent-bats"):
        new_form(lambda: lexprobe.offset_table1("w", "bats:/nonexistent-bats", home=home, offsets_name="o"))


def test_home_first_opens_still_work_and_warn(words_home):
    home, _ = words_home
    new = new_form(lambda: WordIndex.open("w", home=home))
    with pytest.warns(DeprecationWarning, match=re.escape("use WordIndex.open(name, home=home)")):
        old = WordIndex.open(home, "w")
    with pytest.warns(DeprecationWarning, match=re.escape("use open_index(name, home=home)")):
        facade = lexprobe.open_index("w", home)
    assert old.words == new.words == facade.words and type(facade) is WordIndex
    with pytest.raises(TypeError):
        WordIndex.open(home, "w", "extra")


def test_renamed_keywords_still_work_and_warn(words_home):
    home, _ = words_home
    index = lexprobe.open_index("w", home=home)
    honest = new_form(lambda: index.analogy("man", "king", "woman", k=3, exclude_inputs=False))
    with pytest.warns(DeprecationWarning, match=re.escape("analogy(k=topn)")):
        assert index.analogy("man", "king", "woman", topn=3, exclude_inputs=False) == honest
    with pytest.warns(DeprecationWarning, match=re.escape("analogy(exclude_inputs=exclude)")):
        assert index.analogy("man", "king", "woman", k=3, exclude=False) == honest
    assert new_form(lambda: index.analogy("man", "king", "woman", k=3)) != honest  # the switch switches
    with_self = new_form(lambda: index.neighbors("king", k=3, exclude_inputs=False))
    assert with_self.column("word")[0].as_py() == "king"
    with pytest.warns(DeprecationWarning, match=re.escape("neighbors(exclude_inputs=not include_self)")):
        assert index.neighbors("king", k=3, include_self=True).equals(with_self)
    ids = index.ids(["man", "king", "woman"])
    a, a_star, b = ids[:1], ids[1:2], ids[2:]
    kept = new_form(lambda: answer_questions(index, a, a_star, b, k=3, exclude_inputs=False))
    with pytest.warns(DeprecationWarning, match=re.escape("answer_questions(exclude_inputs=not honest)")):
        old = answer_questions(index, a, a_star, b, k=3, honest=True)
    np.testing.assert_array_equal(old[1], kept[1])
    with pytest.raises(TypeError, match="give k= only"):
        index.analogy("man", "king", "woman", k=3, topn=3)


# ------------------------------------------------------------------------------ results and pandas

def test_result_dataclasses_give_arrow_and_a_clear_error_without_pandas(words_home, tmp_path, monkeypatch):
    home, _ = words_home
    (tmp_path / "r.txt").write_text("man\tking\nwoman\tqueen\nboy\tprince\n")
    build_offset_index(home, "o", "w", f"bats:{tmp_path / 'r.txt'}")
    rows = OffsetIndex.open("o", home=home).select()
    table = rows.to_arrow()
    assert isinstance(table, pa.Table) and table.column("start").to_pylist() == ["man", "woman", "boy"]
    np.testing.assert_array_equal(np.stack(table.column("offset").to_numpy(zero_copy_only=False)), rows.offset)
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if pandas were not installed (it is not a dependency)
    with pytest.raises(LexprobeError, match=r"to_pandas\(\) needs pandas, which is not installed"):
        rows.to_pandas()
