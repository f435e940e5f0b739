"""Word-similarity sets: word pairs with a human similarity score, read in their released formats.

- WordSim-353 (Finkelstein et al. 2002): ``combined.csv`` (a ``Word 1,Word 2,Human (mean)`` header, commas),
  ``combined.tab`` and ``set1``/``set2`` (the same with tabs), and gensim's ``wordsim353.tsv`` (``#`` comments);
- SimLex-999 (Hill et al. 2015): ``SimLex-999.txt``, tab-separated under a header, the score in its ``SimLex999``
  column (the others hold the part of speech, concreteness, association and the ratings' SD); gensim's
  ``simlex999.txt`` keeps three columns;
- MEN (Bruni et al. 2014): ``MEN_dataset_natural_form_full``, ``word word score`` separated by spaces (0-50); in
  the lemma form (``MEN_dataset_lemma_form_full``) every word ends in ``-n``, ``-v`` or ``-j``, dropped here;
- the Stanford Rare Words set (Luong et al. 2013): ``rw.txt``, tab-separated ``word word mean`` then the ten
  ratings.

gensim ships WordSim-353 and SimLex-999 whole in its test data
(:func:`lexprobe.sources.datahome.packaged_copy`): the copies the main job scores when no other is at hand.

Any file of ``word word score`` lines reads the same way: tabs, else commas, else spaces separate the fields
(decided on the first line); blank lines and ``#`` comments are skipped; a first line whose third field is no
number is a header. A malformed line, and a score that is not a finite number (``nan``, ``inf``, ``1e999``), is one
error naming the file and the line.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pyarrow as pa

from ...core.errors import InputError, LexprobeError
from .word_lines import bounded_lines

_MEN_TAG = re.compile(r"-[nvj]$")
# the released files' names -> the set's name (else the file's stem)
_NAMES = ((re.compile(r"simlex"), "simlex999"), (re.compile(r"wordsim|ws-?353|^combined\.|^set[12]\."), "wordsim353"),
          (re.compile(r"^men"), "men"), (re.compile(r"^rw\.|rare.?words"), "rw"))


SETS = ("wordsim353", "simlex999", "men", "rw")  # the sets lexprobe knows by name (lexprobe data fetch NAME)


def dataset_name(path: str | os.PathLike) -> str:
    """The set a file holds, by its released file name (``SimLex-999.txt`` -> ``simlex999``); else its stem."""
    name = Path(path).name.lower()
    return next((label for pattern, label in _NAMES if pattern.search(name)), Path(path).stem)


def _split(line: str, delimiter: str | None) -> list[str]:
    return [f.strip() for f in line.split(delimiter)] if delimiter else line.split()


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def read_word_pairs(path: str | os.PathLike) -> pa.Table:
    """The pairs of a word-similarity file: ``word1, word2, score, line`` (score as in the file: 0-10 for
    WordSim-353, SimLex-999 and the Rare Words, 0-50 for MEN), the set's name in the metadata ``dataset``."""
    path = Path(path)
    if not path.exists():
        raise LexprobeError(f"{path}: no such file (word pairs with similarity scores)")
    lines = [(n, line) for n, line in bounded_lines(path)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise InputError(path, "no word pairs")
    first = lines[0][1]
    delimiter = "\t" if "\t" in first else "," if "," in first else None
    header = _split(first, delimiter)
    column = 2
    if len(header) >= 3 and _number(header[2]) is None:
        names = [h.lower().replace("-", "") for h in header]
        column = names.index("simlex999") if "simlex999" in names else 2
        lines = lines[1:]
    rows: dict[str, list] = {"word1": [], "word2": [], "score": [], "line": []}
    for number, line in lines:
        fields = _split(line, delimiter)
        score = _number(fields[column]) if len(fields) > column else None
        if score is None or not fields[0] or not fields[1]:
            raise InputError(path, f"expected 'word word score' (score in field {column + 1}), found "
                                   f"{line.strip()[:80]!r}", number)
        if not math.isfinite(score):
            raise InputError(path, f"score {fields[column][:40]!r} is not a finite number", number)
        for key, value in zip(rows, (fields[0], fields[1], score, number)):
            rows[key].append(value)
    if not rows["word1"]:
        raise InputError(path, "no word pairs under the header")
    words = rows["word1"] + rows["word2"]
    if all(_MEN_TAG.search(w) for w in words):  # MEN's lemma form: sun-n, shine-v, bright-j
        rows["word1"], rows["word2"] = ([w[:-2] for w in rows[k]] for k in ("word1", "word2"))
    table = pa.table({"word1": pa.array(rows["word1"], pa.string()), "word2": pa.array(rows["word2"], pa.string()),
                      "score": pa.array(rows["score"], pa.float64()), "line": pa.array(rows["line"], pa.int64())})
    return table.replace_schema_metadata({"dataset": dataset_name(path), "path": str(path)})
