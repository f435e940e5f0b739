"""What the serve tests share: an index home with the session's 400k GloVe (linked, not copied) and a tiny token
index built from a few sentences with the packaged MiniLM, made once per test session; and a small home (the first
20k words of the packaged GloVe with a few inserted words, and the same token index) for the projection tests."""

from __future__ import annotations

import json
from pathlib import Path

# (sentence, target position, WordNet sense key of "bank"): three river banks, three money banks
BANK_SENTENCES = [
    ("we sat on the river bank and watched the boats", 5, "bank%1:17:01::"),
    ("the bank lent us money for the house", 1, "bank%1:14:00::"),
    ("she rowed to the bank of the lake", 4, "bank%1:17:01::"),
    ("he deposited the cheque at the bank on monday", 6, "bank%1:14:00::"),
    ("the bank raised its interest rates again", 1, "bank%1:14:00::"),
    ("grass grew thick along the bank of the stream", 5, "bank%1:17:01::"),
]
RIVER, MONEY = "bank%1:17:01::", "bank%1:14:00::"

_built: dict[str, Path] = {}


def serve_home(base: Path, glove_home: Path) -> Path:
    """``base/indexes`` holding ``glove`` (a link to the session's GloVe) and ``bank`` (6 tokens, MiniLM); built
    on the first call of the session, the same folder afterwards."""
    if "home" in _built:
        return _built["home"]
    home = base / "indexes"
    home.mkdir(parents=True)
    (home / "glove").symlink_to(glove_home / "glove", target_is_directory=True)
    bank_index(home, base)
    _built["home"] = home
    return home


def bank_index(home: Path, base: Path) -> None:
    """The token index ``bank`` in ``home``: :data:`BANK_SENTENCES` embedded with the packaged MiniLM."""
    from lexprobe.kinds.tokens import build_token_index

    corpus = base / "bank.jsonl"
    corpus.write_text("\n".join(json.dumps({"text": text, "targets": [{"position": p, "sense": s, "lemma": "bank",
                                                                        "pos": "NOUN"}]})
                                for text, p, s in BANK_SENTENCES) + "\n")
    build_token_index("bank", "minilm", f"jsonl:{corpus}", home=home)


# words inserted into the small GloVe as ``lexprobe ota --into`` and ``am --into`` insert theirs (origin ota / am):
# each the mean of two real words' vectors, so that its nearest originals are known
INSERTED_WORDS = {"kingqueen": ("ota", "king", "queen"), "riverlake": ("ota", "river", "lake"),
                  "carbus": ("am", "car", "bus")}
SMALL_GLOVE = 20_000  # words of the packaged GloVe in the small home


def small_home(base: Path) -> Path:
    """``base/indexes`` with ``glove`` (the packaged GloVe's first :data:`SMALL_GLOVE` words, plus
    :data:`INSERTED_WORDS`) and ``bank``; built on the first call of the session, the same folder afterwards (the
    tests only read it)."""
    import numpy as np

    from lexprobe.kinds.words import WordIndex, build_word_index, insert_words

    if "small" in _built:
        return _built["small"]
    home = base / "indexes"
    build_word_index("glove", "glove-6b-50d", home=home, limit=SMALL_GLOVE)
    glove = WordIndex.open("glove", home=home)
    for origin in ("ota", "am"):
        words = [w for w, (o, _, _) in INSERTED_WORDS.items() if o == origin]
        vectors = np.stack([(glove.vector(a) + glove.vector(b)) / 2 for _, a, b in
                            (INSERTED_WORDS[w] for w in words)])
        insert_words(home, "glove", words, vectors, origin=origin, settings={"test": "serve_fixtures"})
    bank_index(home, base)
    _built["small"] = home
    return home
