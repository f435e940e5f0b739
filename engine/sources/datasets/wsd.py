"""Reader of the Raganato et al. (2017) WSD evaluation framework format: SemCor and the evaluation sets.

``X.data.xml`` holds ``<corpus><text id><sentence id><wf lemma pos>word</wf><instance id lemma pos>word(s)
</instance>...``; ``X.gold.key.txt`` holds ``instance_id key1 [key2 ...]`` (WordNet 3.0 sense keys). A
multi-word element (``<instance lemma="primary_election">primary election</instance>``) becomes several
words of the sentence and one target spanning them.

Every ``<instance>`` with a gold key is a target (sense = first key, senses = all keys). An instance without
a key, or a key without an instance, is a counted skip. Malformed XML or a malformed key line is an
:class:`InputError` with the file and line.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from ...core.errors import InputError, LexprobeError
from ..vectors import regular_file
from .corpus import SENTENCE_SCHEMA, TARGET_SCHEMA, ColumnBuilder, Corpus, Skips
from .word_lines import bounded_lines

DATA_SUFFIX = ".data.xml"
GOLD_SUFFIX = ".gold.key.txt"


def wsd_files(path: Path) -> tuple[Path, Path]:
    """(data XML, gold key file) for a folder holding one ``*.data.xml`` or for the XML file itself."""
    if path.is_dir():
        found = sorted(path.glob(f"*{DATA_SUFFIX}"))
        if len(found) != 1:
            what = "no" if not found else f"{len(found)}"
            raise LexprobeError(f"{path}: {what} *{DATA_SUFFIX} files in this folder (expected one; name the file)")
        path = found[0]
    if not path.name.endswith(DATA_SUFFIX):
        raise LexprobeError(f"{path}: not a WSD framework file (expected a name ending in {DATA_SUFFIX})")
    gold = path.with_name(path.name[: -len(DATA_SUFFIX)] + GOLD_SUFFIX)
    if not gold.exists():
        raise LexprobeError(f"{gold}: gold key file missing (needed beside {path.name})")
    return regular_file(path), regular_file(gold)  # a FIFO would block the XML parser for ever


def read_gold_keys(path: Path) -> dict[str, list[str]]:
    """``instance_id -> [sense keys]`` from a gold key file; a line without a key or a repeated id is an error."""
    keys: dict[str, list[str]] = {}
    for number, line in bounded_lines(path):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 2:
            raise InputError(path, f"instance {parts[0]!r} has no sense key", number)
        if parts[0] in keys:
            raise InputError(path, f"instance {parts[0]!r} is listed twice", number)
        keys[parts[0]] = parts[1:]
    return keys


def _fill_document(sentences: ColumnBuilder, targets: ColumnBuilder, start: tuple[int, int], document: str,
                   name: str) -> None:
    """Set document and split of the rows added since ``start``; split = the evaluation set inside ``ALL``
    (text ids ``senseval2.d000``), else the corpus name."""
    split = document.split(".", 1)[0] if "." in document else name
    for builder, first in zip((sentences, targets), start):
        n = len(builder) - first
        builder.columns["document"][first:] = [document] * n
        builder.columns["split"][first:] = [split] * n


def _second_sentence_line(data: Path, sentence_id: str) -> int | None:
    """Line of the second ``<sentence id=...>`` with this id (only looked up to report the error)."""
    pattern = re.compile(r"<sentence\b[^>]*\bid\s*=\s*[\"']" + re.escape(sentence_id) + r"[\"']")
    hits = 0
    with open(data, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            hits += len(pattern.findall(line))
            if hits >= 2:
                return number
    return None


def read_wsd(path: Path) -> Corpus:
    """Read a WSD framework corpus (folder or ``.data.xml``) into the common sentence and target tables."""
    data, gold_path = wsd_files(Path(path))
    gold = read_gold_keys(gold_path)
    name = data.name[: -len(DATA_SUFFIX)]
    sentences, targets, skipped = ColumnBuilder(SENTENCE_SCHEMA), ColumnBuilder(TARGET_SCHEMA), Skips()
    seen: set[str] = set()
    text_start = (0, 0)  # first sentence row and first target row of the current <text>
    try:
        # only "end" events (half the cost of start+end): a <text>'s id is filled in when it ends
        for _, el in ET.iterparse(data):
            if el.tag == "text":
                _fill_document(sentences, targets, text_start, el.get("id", ""), name)
                text_start = (len(sentences), len(targets))
                el.clear()
            elif el.tag == "sentence":
                sentence_id = el.get("id")
                if not sentence_id:
                    raise InputError(data, f"a <sentence> after {sentences.columns['sentence_id'][-1:]} has no id")
                if not sentences.is_new(sentence_id):
                    raise InputError(data, f"sentence id {sentence_id!r} appears twice",
                                     _second_sentence_line(data, sentence_id))
                words: list[str] = []
                for child in el:
                    parts = (child.text or "").split()
                    if child.tag == "instance":
                        instance_id = child.get("id", "")
                        seen.add(instance_id)
                        keys = gold.get(instance_id)
                        if keys is None:
                            skipped.add("instance without gold key", f"{data.name}: {instance_id}")
                        elif not parts:
                            skipped.add("instance with no words", f"{data.name}: {instance_id}")
                        else:
                            targets.add(instance_id=instance_id, corpus=name, split=None, document=None,
                                        sentence_id=sentence_id, position=len(words), length=len(parts),
                                        surface=" ".join(parts), lemma=child.get("lemma", ""),
                                        pos=child.get("pos", ""), sense=keys[0], senses=keys)
                    words.extend(parts)
                sentences.add(sentence_id=sentence_id, corpus=name, split=None, document=None, words=words)
    except ET.ParseError as exc:
        line = exc.position[0] if exc.position else None
        raise InputError(data, f"malformed XML ({str(exc).split(':')[0]})", line) from None
    _fill_document(sentences, targets, text_start, "", name)  # sentences outside any <text>
    unmatched = [i for i in gold if i not in seen]
    if unmatched:
        skipped.add("gold key without instance", f"{gold_path.name}: {unmatched[0]}", len(unmatched))
    if not len(targets):
        raise LexprobeError(f"{data}: no instance has a gold key in {gold_path.name}")
    return Corpus(name, sentences.table(), targets.table(), skipped)
