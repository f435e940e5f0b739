"""pandas is a dependency: every table-returning facade function's result converts with
``.to_pandas()`` to a DataFrame with the same columns and rows as its Arrow table. The names come from
test_api_convention's RETURNS["result"], so a new one fails here until it has a producer below."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import lexprobe
from lexprobe.kinds.offsets import OffsetIndex, build_offset_index
from test_api_convention import RETURNS

VOCAB = ["man", "king", "woman", "queen", "boy", "prince", "girl", "princess", "crown", "throne"]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A words index ``w`` of ten seeded 6-d vectors, a one-relation BATS file and an offsets index ``o``."""
    root = tmp_path_factory.mktemp("pandas")
    rng = np.random.default_rng(5)
    (root / "v.txt").write_text("".join(f"{w} {' '.join(f'{x:.4f}' for x in rng.normal(size=6))}\n" for w in VOCAB))
    (root / "r.txt").write_text("man\tking\nwoman\tqueen\nboy\tprince\ngirl\tprincess\n")
    home = root / "home"
    lexprobe.build_word_index("w", str(root / "v.txt"), home=home)
    build_offset_index(home, "o", "w", f"bats:{root / 'r.txt'}")
    return root, home


@pytest.fixture(scope="module")
def tokens(tmp_path_factory):
    """A MiniLM token index of six 'bank' sentences (the sense_ranking docstring's corpus)."""
    root = tmp_path_factory.mktemp("pandas_tokens")
    rows = [("we sat on the river bank", 5, "slope"), ("the bank lent us money", 1, "money"),
            ("she rowed to the bank of the lake", 4, "slope"), ("my bank charges a fee", 1, "money"),
            ("grass grew on the bank of the river", 4, "slope"), ("he robbed the bank at noon", 3, "money")]
    (root / "bank.jsonl").write_text("\n".join(json.dumps({"text": t, "targets": [
        {"position": p, "sense": s, "lemma": "bank"}]}) for t, p, s in rows))
    lexprobe.build_token_index("bank", "minilm", f"jsonl:{root / 'bank.jsonl'}", home=root)
    return lexprobe.open_index("bank", home=root)


def _am_model():
    import torch

    from lexprobe.rare_words.am_targets import TargetTable
    from lexprobe.rare_words.mimicking import NGramVocab, preset

    vocab = NGramVocab(["UNK", "PAD", "<S>ab", "<S>ab<S>", "ab<S>"])
    targets = TargetTable(["x", "y", "z"], np.array([[1, 0], [0, 1], [1, 1]], np.float32))
    state = {"ngrams.weight": torch.ones(5, 2), "M.weight": torch.eye(2), "A.weight": torch.eye(2),
             "gate.weight": torch.zeros(1, 4), "gate.bias": torch.zeros(1)}
    return lexprobe.AMModel(preset("am"), vocab, state, targets)


PRODUCERS = {
    "WordIndex.neighbors": lambda r, h, t: lexprobe.open_index("w", home=h).neighbors(["king", "queen"], k=3),
    "OffsetIndex.select": lambda r, h, t: OffsetIndex.open("o", home=h).select(),
    "relation_offsets": lambda r, h, t: lexprobe.relation_offsets(
        lexprobe.open_index("w", home=h), [("man", "king"), ("woman", "queen"), ("boy", "prince")], n_shuffles=5),
    "analogy_test": lambda r, h, t: lexprobe.analogy_test(
        lexprobe.open_index("w", home=h), *lexprobe.analogy_dataset(lexprobe.open_index("w", home=h),
                                                                    f"bats:{r / 'r.txt'}")),
    "WordIndex.evaluate_word_pairs": lambda r, h, t: lexprobe.open_index("w", home=h).evaluate_word_pairs(
        _pairs_file(r), n_resamples=50),
    "WordIndex.evaluate_word_analogies": lambda r, h, t: lexprobe.open_index("w", home=h).evaluate_word_analogies(
        _questions_file(r)),
    "sense_ranking": lambda r, h, t: lexprobe.sense_ranking(t(), k_max=2, min_sense_count=2),
    "TokenIndex.query": lambda r, h, t: t().query("they fished from the bank of the stream", "bank", k=2),
    "AMModel.infer": lambda r, h, t: _am_model().infer(["ab"], [[["x", "y"]]]),
}


def _pairs_file(root):
    path = root / "pairs.tsv"
    path.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in [("man", "woman", 8.3), ("king", "queen", 8.6),
                                                             ("boy", "girl", 8.0), ("crown", "man", 1.2),
                                                             ("throne", "girl", 0.8)]))
    return path


def _questions_file(root):
    path = root / "questions.txt"
    path.write_text(": family\nman king woman queen\nman woman king queen\nboy girl man woman\n")
    return path


# needs a language model: its .to_pandas() is checked with a stand-in model beside its other tests
TESTED_ELSEWHERE = {"probe_wnlampro": "tests/rare_words/test_probing.py::test_probe_wnlampro_returns_a_result_with_its_"
                                      "rows_as_arrow"}


def test_every_table_returning_name_has_a_producer():
    assert set(PRODUCERS) == set(RETURNS["result"]) - set(TESTED_ELSEWHERE)


@pytest.mark.parametrize("name", sorted(PRODUCERS))
def test_to_pandas_gives_the_same_table(name, home, request):
    root, h = home
    result = PRODUCERS[name](root, h, lambda: request.getfixturevalue("tokens"))
    table = result if isinstance(result, pa.Table) else result.to_arrow()
    frame = result.to_pandas()
    assert isinstance(frame, pd.DataFrame) and table.num_rows > 0
    assert list(frame.columns) == table.column_names and len(frame) == table.num_rows
    for column in table.column_names:
        first = table.column(column)[0].as_py()
        if isinstance(first, (str, int, float)) and not isinstance(first, bool):
            assert frame[column].iloc[0] == pytest.approx(first) if isinstance(first, float) else \
                frame[column].iloc[0] == first, column
