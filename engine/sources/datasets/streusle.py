"""Reader of STREUSLE (Schneider et al.): web reviews with SNACS supersenses on adpositions and possessives.

Two formats, both read into the common tables (:mod:`lexprobe.sources.datasets.corpus`):

- CoNLL-U-Lex (dev, test; ``CONLLULEX.md``): 19 tab-separated columns per token, ``# sent_id`` headers,
  blank lines between sentences. Empty nodes (``8.1``) and multiword-token lines (``3-4``) are not words.
- ``.vis`` (train; one sentence a line: ``sent_id<TAB>tok|TAG tok|TAG ...``): ``_`` joins the words of a
  strong multiword expression (a trailing/leading ``_`` marks a gap: ``had_ a|DET routine|ADJ _surgery|V``),
  ``~`` joins weak ones; TAG is ``LEXCAT`` or ``LEXCAT-supersense``, construals as ``p.Role:p.Function``.

Targets are the strong lexical expressions whose supersense is a SNACS label (``p.*``): LEXCAT P, PP, INF.P,
POSS or PRON.POSS (the test set has 485). The sense is the construal as STREUSLE's LEXTAG writes it: the scene
role when role and function agree (``p.Locus``), else ``role|function`` (``p.SocialRel|p.Gestalt``); ``senses``
holds that one label. ``??`` (unintelligible) and `` `$`` (idiom slot) are not senses and are not targets. A
multiword expression's span runs from its first to its last word (a gap's words are inside the span).
Lemma: the expression's lemma (CoNLL-U-Lex LEXLEMMA; ``.vis`` has none: lowercased words); pos: LEXCAT.
Split: ``train``/``dev``/``test`` from file names like ``streusle.ud_test.conllulex``.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...core.errors import InputError, LexprobeError
from .corpus import SENTENCE_SCHEMA, TARGET_SCHEMA, ColumnBuilder, Corpus, Skips
from .word_lines import bounded_lines

SUFFIXES = (".conllulex", ".vis")
NAME = "streusle"


def streusle_files(path: Path) -> list[Path]:
    """The CoNLL-U-Lex and ``.vis`` files of a file or folder (searched recursively), in name order."""
    if path.is_file():
        if path.suffix not in SUFFIXES:
            raise LexprobeError(f"{path}: not a STREUSLE file (expected {' or '.join(SUFFIXES)})")
        return [path]
    files = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
    if not files:
        raise LexprobeError(f"{path}: no {' or '.join('*' + s for s in SUFFIXES)} files in this folder")
    return files


def split_of(path: Path) -> str:
    m = re.search(r"ud_([A-Za-z]+)\.", path.name)
    return m.group(1) if m else path.name.split(".")[0]


def construal(role: str, function: str) -> str:
    """The SNACS label as LEXTAG writes it: ``role`` when the function is the same or absent, else ``role|function``."""
    return role if function in ("_", "", role) else f"{role}|{function}"


def read_streusle(path: Path) -> Corpus:
    """Read STREUSLE files (a file or a folder) into the common tables; SNACS-labelled expressions are targets."""
    sentences, targets, skipped = ColumnBuilder(SENTENCE_SCHEMA), ColumnBuilder(TARGET_SCHEMA), Skips()
    for file in streusle_files(Path(path)):
        reader = _read_conllulex if file.suffix == ".conllulex" else _read_vis
        reader(file, split_of(file), sentences, targets, skipped)
    if not len(targets):
        raise LexprobeError(f"{path}: no SNACS-labelled (p.*) expressions found")
    return Corpus(NAME, sentences.table(), targets.table(), skipped)


def _add_target(targets: ColumnBuilder, *, sentence_id: str, document: str, split: str, words: list[str],
                indices: list[int], instance: str, lemma: str, pos: str, sense: str) -> None:
    first, last = min(indices), max(indices)
    targets.add(instance_id=instance, corpus=NAME, split=split, document=document, sentence_id=sentence_id,
                position=first, length=last - first + 1, surface=" ".join(words[i] for i in sorted(indices)),
                lemma=lemma, pos=pos, sense=sense, senses=[sense])


def _read_conllulex(path: Path, split: str, sentences: ColumnBuilder, targets: ColumnBuilder, skipped: Skips) -> None:
    header: dict[str, str] = {}
    rows: list[tuple[int, list[str]]] = []
    document = ""

    def flush() -> None:
        nonlocal header, rows
        if not rows:
            header = {}
            return
        sentence_id = header.get("sent_id") or f"{path.name}:{rows[0][0]}"
        if not sentences.is_new(sentence_id):
            raise InputError(path, f"sentence id {sentence_id!r} appears twice", rows[0][0])
        words = [cols[1] for _, cols in rows]
        groups: dict[str, list[int]] = {}
        for i, (_, cols) in enumerate(rows):
            if cols[10] != "_":
                groups.setdefault(cols[10].split(":")[0], []).append(i)
        doc = document or sentence_id.rsplit("-", 1)[0]
        for i, (line, cols) in enumerate(rows):
            ss = cols[13]
            if not ss.startswith("p."):
                continue
            members = groups.get(cols[10].split(":")[0], [i]) if cols[10] != "_" else [i]
            _add_target(targets, sentence_id=sentence_id, document=doc, split=split, words=words, indices=members,
                        instance=f"{sentence_id}:{cols[0]}", lemma=cols[12], pos=cols[11],
                        sense=construal(ss, cols[14]))
        sentences.add(sentence_id=sentence_id, corpus=NAME, split=split, document=doc, words=words)
        header, rows = {}, []

    for number, line in bounded_lines(path):
        if not line.strip():
            flush()
        elif line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep:
                header[key.strip()] = value.strip()
                if key.strip() == "newdoc id":
                    document = value.strip()
        else:
            cols = line.split("\t")
            if len(cols) != 19:
                raise InputError(path, f"{len(cols)} tab-separated columns, CoNLL-U-Lex has 19", number)
            if not cols[0].isdigit():
                continue  # multiword token (3-4) or empty node (8.1): not a word
            rows.append((number, cols))
    flush()


def _read_vis(path: Path, split: str, sentences: ColumnBuilder, targets: ColumnBuilder, skipped: Skips) -> None:
    for number, line in bounded_lines(path):
        if not line.strip():
            continue
        sentence_id, sep, body = line.partition("\t")
        if not sep or not body.strip():
            raise InputError(path, "expected 'sent_id<TAB>tokens'", number)
        if not sentences.is_new(sentence_id):
            raise InputError(path, f"sentence id {sentence_id!r} appears twice", number)
        words, units = _vis_units(body, path, number)
        doc = sentence_id.rsplit("-", 1)[0]
        for indices, tag in units:
            lexcat, _, supersense = tag.partition("-")
            if not supersense.startswith("p."):
                continue
            role, _, function = supersense.partition(":")
            _add_target(targets, sentence_id=sentence_id, document=doc, split=split, words=words, indices=indices,
                        instance=f"{sentence_id}:{min(indices) + 1}",
                        lemma=" ".join(words[i].lower() for i in indices), pos=lexcat,
                        sense=construal(role, function))
        sentences.add(sentence_id=sentence_id, corpus=NAME, split=split, document=doc, words=words)


_VIS_TAG = re.compile(r"\|([A-Z]+(?:\.[A-Za-z]+)*(?:-(?:[nvp]\.[A-Za-z]+(?::p\.[A-Za-z]+)?|\?\?|`\$))?)(?=$|[_~])")


def _vis_units(body: str, path: Path, number: int) -> tuple[list[str], list[tuple[list[int], str]]]:
    """Words of a ``.vis`` sentence and its strong lexical units (word indices, tag).

    Words may themselves be ``~`` or ``_``-free punctuation like ``~|PUNCT``, so a chunk is cut at its tags
    (``|LEXCAT[-supersense]`` followed by the chunk's end or a joiner), not at every ``~``/``_``.
    """
    words: list[str] = []
    units: list[tuple[list[int], str]] = []
    open_units: list[list[int]] = []  # strong expressions interrupted by a gap

    def take(text: str) -> list[int]:
        pieces = [w for w in text.split("_") if w] or ([text] if text else [])
        if not pieces:
            raise InputError(path, f"empty word in {body!r}", number)
        words.extend(pieces)
        return list(range(len(words) - len(pieces), len(words)))

    for chunk in body.split():
        end = 0
        for k, m in enumerate(_VIS_TAG.finditer(chunk)):
            text = chunk[end:m.start()]
            cont = False
            if k > 0 or (len(text) > 1 and text[0] in "_~"):
                cont = text[0] == "_" and k == 0
                text = text[1:]
            indices = take(text)
            if cont:
                if not open_units:
                    raise InputError(path, f"{chunk!r} continues an expression that was never opened", number)
                indices = open_units.pop() + indices
            units.append((indices, m.group(1)))
            end = m.end()
        rest, cont = chunk[end:], False
        if end and rest[:1] in ("_", "~"):
            rest = rest[1:]
        elif not end and len(rest) > 1 and rest[0] in "_~":
            cont, rest = rest[0] == "_", rest[1:]
        if rest.endswith("_") and len(rest) > 1:  # words inside a gap that reopens: "putting_ me _at_ my _ease"
            indices = take(rest[:-1])
            if cont:
                if not open_units:
                    raise InputError(path, f"{chunk!r} continues an expression that was never opened", number)
                indices = open_units.pop() + indices
            open_units.append(indices)
        elif rest not in ("", "~"):
            raise InputError(path, f"{rest!r} in {chunk!r} has no |TAG", number)
    if open_units:
        raise InputError(path, "an expression opened with '_' is never closed", number)
    return words, units
