"""WNLaMPro builder rules on hand-checked WordNet examples, Table 4 counts, splits, writers and readers
(our JSONL and the authors' WNLaMPro.txt)."""

import json

import pytest

from lexprobe.rare_words.wnlampro_build import Builder, assign_splits, table4
from lexprobe.rare_words.run_rare_words import write_dataset
from lexprobe.sources.datasets.wnlampro import Entry, bucket_of, read_authors_txt, read_dataset, zipf
from lexprobe.core.errors import InputError
from lexprobe.core.formatting import render
from lexprobe.sources.wordnet import load_wordnet


@pytest.fixture(scope="session")
def wordnet(tmp_path_factory):
    return load_wordnet(cache=tmp_path_factory.getbasetemp() / "lexprobe_cache")


@pytest.fixture(scope="session")
def builder(wordnet):
    """T = the whole-word tokens of the packaged SPLADE-tiny (bert-base-uncased vocabulary)."""
    from lexprobe.sources.models import load_tokenizer
    from lexprobe.sources.models import whole_word_tokens

    words, _ = whole_word_tokens(load_tokenizer("splade-tiny"))
    return Builder(wordnet, words, seed=0)


def test_antonyms_of_the_most_frequent_sense_only(builder):
    assert builder.antonyms("new") == ["old"]
    # the paper's Table 2: general's first synset is the noun (40 tags), its most frequent sense the adjective (87)
    assert builder.antonyms("general") == ["specific"]
    assert builder.antonyms("good") == ["bad"] and builder.antonyms("old") == ["young"]  # good.a.01: 190 tags, noun 11
    assert builder.antonyms("local") == ["national"]  # Table 2's "global" is no antonym of local in WordNet 3.0
    assert builder.antonyms("happy") == ["unhappy"]
    assert builder.antonyms("walk") is None  # most frequent sense the verb (184 tags); its lemma's antonym is "ride"
    assert builder.antonyms("lingonberry") is None  # not an adjective


@pytest.mark.parametrize("word, pos", [("general", "a"), ("good", "a"), ("book", "n"), ("lingonberry", "n"),
                                       ("walk", "v"), ("run", "v"), ("greece", "n"), ("nonword", None)])
def test_one_part_of_speech_per_word_from_sense_counts(wordnet, word, pos):
    from lexprobe.rare_words.wnlampro_build import part_of_speech

    assert part_of_speech(wordnet, word) == pos


class _Lemma:
    """A WordNet-like lemma: name, part of speech of its synset, sense count, antonym names."""

    def __init__(self, name, pos, count, antonyms=()):
        self._name, self._pos, self._count, self._antonyms = name, pos, count, antonyms

    def name(self):
        return self._name

    def count(self):
        return self._count

    def synset(self):
        return self

    def pos(self):
        return self._pos

    def antonyms(self):
        return [_Lemma(a, self._pos, 0) for a in self._antonyms]


class _TinyWordNet:
    """Lemmas in WordNet's order (nouns, verbs, adjectives, adverbs; senses by number within each)."""

    def __init__(self, *lemmas):
        self._lemmas = lemmas

    @staticmethod
    def _is(lemma, pos):
        return pos is None or lemma.pos() == pos or (pos == "a" and lemma.pos() == "s")  # "a" holds satellites

    def lemmas(self, word, pos=None):
        return [l for l in self._lemmas if l.name().lower() == word and self._is(l, pos)]

    def all_lemma_names(self, pos):
        return {l.name() for l in self._lemmas if self._is(l, pos)}


def test_part_of_speech_rule_on_a_tiny_wordnet():
    """The most frequent sense by count decides one part of speech per word; untagged ties go to WordNet's order
    (the noun); only adjectives are antonym keywords, only nouns hypernym/cohyponym keywords."""
    wn = _TinyWordNet(
        _Lemma("tied", "n", 0), _Lemma("tied", "a", 0, ["loose"]),         # no counts: the noun, listed first
        _Lemma("tagged", "n", 1), _Lemma("tagged", "s", 0), _Lemma("tagged", "a", 3, ["untagged"]),
        _Lemma("verby", "n", 2), _Lemma("verby", "v", 5),                  # a verb: keyword of no relation
        _Lemma("Capital", "n", 0), _Lemma("loose", "a", 0, ["tied"]), _Lemma("untagged", "a", 0, ["tagged"]))
    b = Builder(wn, ["loose", "tied", "tagged", "untagged"])
    assert b.keywords("n") == ["capital", "tied"]
    assert b.keywords("a") == ["loose", "tagged", "untagged"]
    assert b.antonyms("tagged") == ["untagged"]  # the adjective sense (3 tags) beats the noun (1) listed first
    assert b.antonyms("tied") is None and b.antonyms("verby") is None and b.antonyms("loose") == ["tied"]


def test_hypernyms_hand_checked(builder):
    dog = builder.hypernyms("dog")
    assert {"canine", "animal", "beast"} <= set(dog)  # canine: distance 1; animal: 2 (via domestic_animal), depth 6
    assert "organism" not in dog and "being" not in dog  # distance 3 but minimum depth 5
    assert {"fruit", "berry", "bush"} <= set(builder.hypernyms("lingonberry"))  # the paper's Table 2
    assert {"game", "ball", "sport"} <= set(builder.hypernyms("basketball"))


@pytest.mark.parametrize("word", ["dog", "lingonberry", "basketball", "book", "violin", "oak", "sonata"])
def test_hypernym_targets_respect_distance_and_depth(builder, wordnet, word):
    """Recomputed with NLTK's own hypernym_distances (another code path than the builder's walk)."""
    allowed = set()
    for s in [l.synset() for l in wordnet.lemmas(word, "n") if l.name().lower() == word][:2]:
        allowed |= {n for h, d in s.hypernym_distances() if 1 <= d <= 3 and h.min_depth() >= 6 for n in h.lemma_names()}
    expected = (allowed & builder.T) - {word}
    got = builder.hypernyms(word)
    if len(expected) < 3:
        assert got is None
    else:
        assert set(got) <= expected and len(got) == min(20, len(expected))
        assert got == sorted(got, key=lambda w: (-zipf(w), w))  # the most frequent kept, most frequent first


def test_cohyponyms_hand_checked_and_bounded(builder, wordnet):
    samosa = builder.cohyponyms("samosa")
    assert {"pizza", "sandwich", "salad"} <= set(samosa) and "samosa" not in samosa  # the paper's Table 2
    # Table 2: sax is 4 below wind_instrument, 2 above harmonium: within 4 of the hypernym, not of the keyword
    assert {"brass", "flute", "sax"} <= set(builder.cohyponyms("harmonium"))
    assert {"crime", "evil", "sin", "fraud"} <= set(builder.cohyponyms("immorality"))
    for word in ["samosa", "dog", "violin", "harmonium"]:
        got = builder.cohyponyms(word)
        hyper = set()  # hypernyms within distance 2 of the two most frequent noun senses, minimum depth 6
        for s in [l.synset() for l in wordnet.lemmas(word, "n") if l.name().lower() == word][:2]:
            hyper |= {h for h, d in s.hypernym_distances() if 1 <= d <= 2 and h.min_depth() >= 6}
        hypo = lambda s: s.hyponyms() + s.instance_hyponyms()  # noqa: E731
        allowed = {n for h in hyper for c in h.closure(hypo, depth=4) for n in c.lemma_names()}
        expected = (allowed & builder.T) - {word}
        assert 10 <= len(got) <= 50 and set(got) <= expected and len(got) == min(50, len(expected))


def _one_edit(bad: str, word: str) -> bool:
    if len(bad) == len(word) + 1:
        return any(bad[:i] + bad[i + 1:] == word for i in range(len(bad)))
    if len(bad) == len(word) - 1:
        return any(word[:i] + word[i + 1:] == bad for i in range(len(word)))
    diff = [i for i in range(len(word)) if bad[i] != word[i]]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and bad[diff[0]] == word[diff[1]] and bad[diff[1]] == word[diff[0]]


def test_capitalised_lemmas_are_keywords_in_lower_case(builder):
    """The paper lowercases corpus words and looks them up in WordNet: Greece, TV and York are keywords."""
    assert {"greece", "tv", "york"} <= set(builder.keywords("n"))
    assert "country" in builder.hypernyms("greece") and "receiver" in builder.hypernyms("tv")
    assert all(w == w.lower() for w in builder.keywords("n"))


def test_table4_beside_the_paper():
    from lexprobe.rare_words.wnlampro_build import table4_against_paper

    entries = [Entry(i, "test", f"a{i}", "antonym", ["x"], "a", 0.0) for i in range(82)]  # 82 rare antonyms
    entries += [Entry(100 + i, "test", f"h{i}", "hypernym", ["x"] * 8, "n", 3.0) for i in range(4750)]
    rows = {(r["relation"], r["bucket"]): r for r in table4_against_paper(entries)}
    assert rows[("antonym", "rare")]["entries_ratio"] == 2.0 and rows[("antonym", "rare")]["paper_entries"] == 41
    assert rows[("antonym", "all")]["entries_ratio"] == pytest.approx(82 / 366)
    assert rows[("hypernym", "frequent")]["entries_ratio"] == 1.0 and rows[("hypernym", "frequent")]["targets_ratio"] \
        == pytest.approx(8 / 4.2)
    paper_mean = (1191 * 4.0 + 1785 * 3.9 + 4750 * 4.2) / 7726  # the paper's buckets weighted by their sizes
    assert rows[("hypernym", "all")]["paper_mean_targets"] == pytest.approx(paper_mean)
    assert ("cohyponym", "all") not in rows  # relations that were not built are left out


def test_corruptions_are_one_seeded_edit_of_frequent_vocabulary_words(builder, wordnet):
    pairs = builder.corruptions(200)
    assert len(pairs) >= 190
    for bad, word in pairs:
        assert _one_edit(bad, word), (bad, word)
        assert word in builder.T and zipf(word) >= 2.0 and bad not in builder.T and zipf(bad) == 0
    assert builder.corruptions(200) == pairs
    assert Builder(wordnet, builder.T, seed=1).corruptions(200) != pairs


def test_buckets_and_seeded_dev_split():
    assert [bucket_of(z) for z in (0.0, 0.99, 1.0, 1.99, 2.0, 6.0)] == ["rare", "rare", "medium", "medium",
                                                                        "frequent", "frequent"]
    raw = [(f"w{i}", "hypernym" if i % 3 else "antonym", "n", ["x"]) for i in range(300)]
    entries = assign_splits(raw, freq=lambda w: 0.0, seed=3)
    for relation, n in (("hypernym", 200), ("antonym", 100)):
        assert sum(e.split == "dev" for e in entries if e.relation == relation) == n // 10
    assert [e.split for e in assign_splits(raw, freq=lambda w: 0.0, seed=3)] == [e.split for e in entries]
    assert [e.split for e in assign_splits(raw, freq=lambda w: 0.0, seed=4)] != [e.split for e in entries]


def test_table4_counts_and_round_trip(tmp_path, capsys):
    entries = [Entry(0, "dev", "aa", "antonym", ["b"], "a", 0.0), Entry(1, "test", "bb", "antonym", ["c", "d"], "a", 1.5),
               Entry(2, "test", "cc", "hypernym", ["e", "f", "g"], "n", 3.0),
               Entry(3, "test", "dd", "hypernym", ["e", "f", "g", "h", "i"], "n", 4.0)]
    rows = table4(entries)
    print(render(rows))
    assert rows[0] == {"relation": "antonym", "n_r": 1, "n_m": 1, "n_f": 0, "targets_r": 1.0, "targets_m": 2.0,
                       "targets_f": pytest.approx(float("nan"), nan_ok=True), "dev": 1, "test": 1}
    assert rows[1]["n_f"] == 2 and rows[1]["targets_f"] == 4.0
    assert "relation" in capsys.readouterr().out
    paths = write_dataset(entries, tmp_path / "ds")
    back = read_dataset(tmp_path / "ds")
    assert back == entries
    authors = read_authors_txt(paths["txt"])
    assert [(e.id, e.split, e.keyword, e.relation, e.targets) for e in authors] == \
        [(e.id, e.split, e.keyword, e.relation, e.targets) for e in entries]


def test_authors_format_reader(tmp_path):
    path = tmp_path / "WNLaMPro.txt"
    path.write_text("0\tdev\tunregenerate (a,1.64,5)\tantonym\tregenerate (a,1.2,30)\n"
                    "1\ttest\tlingonberry (n,1.84,50)\thypernym\tfruit (n,4.5,9000)\tberry (n,3.6,800)\r\n"
                    "\n"
                    "2\ttest\tsimluation (n,0,0)\tcorruption\tsimulation (n,4.2,1000)\n", encoding="utf-8")
    entries = read_authors_txt(path)
    assert [(e.keyword, e.relation, e.targets, e.bucket, e.count) for e in entries] == [
        ("unregenerate", "antonym", ["regenerate"], "rare", 5),
        ("lingonberry", "hypernym", ["fruit", "berry"], "medium", 50),
        ("simluation", "corruption", ["simulation"], "rare", 0)]
    assert entries[1].zipf == 1.84 and entries[0].split == "dev"


@pytest.mark.parametrize("line, problem", [
    ("7\tdev\tfoo (n,1,2)\tsynonym\tbar (n,1,2)", "unknown relation 'synonym'"),
    ("7\tval\tfoo (n,1,2)\thypernym\tbar (n,1,2)", "set type"),
    ("7\tdev\tfoo\thypernym\tbar (n,1,2)", "not an annotated word"),
    ("7\tdev\tfoo (n,1,2)\thypernym", "column"),
    ("x\tdev\tfoo (n,1,2)\thypernym\tbar (n,1,2)", "not an integer"),
])
def test_malformed_authors_lines_name_file_and_line(tmp_path, line, problem):
    path = tmp_path / "bad.txt"
    path.write_text("0\tdev\tnew (a,6,1000)\tantonym\told (a,6,1000)\n" + line + "\n")
    with pytest.raises(InputError, match=problem) as err:
        read_authors_txt(path)
    assert str(err.value).startswith(f"{path}:2:")


def test_build_command_prints_table4_and_writes_files(cli, home, tmp_path, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LEXPROBE_CACHE", str(tmp_path_factory.getbasetemp() / "lexprobe_cache"))
    out = tmp_path / "wnl"
    r = cli("--home", home, "--quiet", "data", "build-wnlampro", "--out", out, "--relations", "antonym,corruption",
            "--corruptions", "100")
    assert r.code == 0, r
    assert "n_r" in r.out and "antonym" in r.out and "corruption" in r.out
    rows = [json.loads(line) for line in (out / "wnlampro.jsonl").read_text().splitlines()]
    ant = {row["keyword"]: row for row in rows if row["relation"] == "antonym"}
    assert ant["new"]["targets"] == ["old"] and ant["new"]["bucket"] == "frequent"
    assert ant["general"]["targets"] == ["specific"] and "walk" not in ant  # Table 2; walk's top sense is a verb
    assert 1000 <= len(ant) <= 1200  # 1,087 words whose most frequent sense is an adjective with an antonym in T
    assert sum(row["relation"] == "corruption" for row in rows) == 100
    assert (out / "wnlampro.parquet").is_file() and (out / "table4.md").is_file()
    assert len(read_authors_txt(out / "WNLaMPro.txt")) == len(rows)


def test_unknown_relation_in_build_is_one_line_error(cli, home, tmp_path, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LEXPROBE_CACHE", str(tmp_path_factory.getbasetemp() / "lexprobe_cache"))
    r = cli("--home", home, "data", "build-wnlampro", "--out", tmp_path / "x", "--relations", "synonym")
    assert r.code == 2 and "unknown relation 'synonym'" in r.err and r.err.strip().count("\n") == 0
