"""What the serve tests share: an index home with the session's 400k GloVe (linked, not copied) and a tiny token
index built from a few sentences with the packaged MiniLM, made once per test session."""

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
    from lexprobe.kinds.tokens import build_token_index

    home = base / "indexes"
    home.mkdir(parents=True)
    (home / "glove").symlink_to(glove_home / "glove", target_is_directory=True)
    corpus = base / "bank.jsonl"
    corpus.write_text("\n".join(json.dumps({"text": text, "targets": [{"position": p, "sense": s, "lemma": "bank",
                                                                        "pos": "NOUN"}]})
                                for text, p, s in BANK_SENTENCES) + "\n")
    build_token_index("bank", "minilm", f"jsonl:{corpus}", home=home)
    _built["home"] = home
    return home
