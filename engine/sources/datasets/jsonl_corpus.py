"""Reader of users' own sense-annotated corpora: one JSON object per line, one line per sentence.

Format (``jsonl:PATH``; UTF-8; blank lines are ignored)::

    {"sentence_id": "s1", "words": ["I", "was", "high", "on", "drugs"], "document": "r1", "split": "test",
     "targets": [{"position": 3, "sense": "p.Circumstance", "lemma": "on", "pos": "ADP"}]}

- ``words`` (list of strings) or ``text`` (a string split on whitespace): required.
- ``sentence_id``: unique in the file; default ``<file stem>.<line number>``.
- ``document``: default ``""``; ``split``: default ``"all"``.
- ``targets``: default none. Each target: ``position`` (0-based index of its first word, required),
  ``length`` (words spanned, default 1), ``sense`` (a string) and/or ``senses`` (a list; ``sense`` defaults to
  its first element): at least one is required; ``lemma`` (default: the lowercased words), ``pos``
  (default ``""``), ``id`` (default ``<sentence_id>:<position>``).

The corpus is named after the file's stem. Malformed JSON, a missing or mistyped field and a repeated
``sentence_id`` are errors naming the file and line; a target span outside its sentence is a counted skip.
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import InputError
from .corpus import SENTENCE_SCHEMA, TARGET_SCHEMA, ColumnBuilder, Corpus, Skips, target_in_sentence
from .json_lines import json_objects


def _field(obj: dict, key: str, kind: type | tuple, default, path: Path, number: int, what: str = "sentence"):
    value = obj.get(key, default)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(path, f"{what} field {key!r} must be {_type_name(kind)}, not {type(value).__name__}", number)
    return value


def _type_name(kind) -> str:
    names = {str: "a string", int: "an integer", list: "a list", dict: "an object"}
    return " or ".join(names[k] for k in (kind if isinstance(kind, tuple) else (kind,)))


def read_jsonl_corpus(path: Path) -> Corpus:
    """Read a JSONL corpus (format in the module docstring) into the common tables."""
    path = Path(path)
    if path.is_dir():
        raise InputError(path, "a JSONL corpus is one file, not a folder")
    name = path.name.split(".")[0]
    sentences, targets, skipped = ColumnBuilder(SENTENCE_SCHEMA), ColumnBuilder(TARGET_SCHEMA), Skips()
    seen: set[str] = set()
    for number, obj in json_objects(path):
        if "words" in obj:
            words = _field(obj, "words", list, None, path, number)
            if not all(isinstance(w, str) and w.strip() and not any(c.isspace() for c in w) for w in words):
                raise InputError(path, "'words' must be non-empty strings without spaces", number)
        elif "text" in obj:
            words = _field(obj, "text", str, None, path, number).split()
        else:
            raise InputError(path, "sentence has neither 'words' nor 'text'", number)
        sentence_id = _field(obj, "sentence_id", str, f"{name}.{number}", path, number)
        if sentence_id in seen:
            raise InputError(path, f"sentence_id {sentence_id!r} appears twice", number)
        seen.add(sentence_id)
        document = _field(obj, "document", str, "", path, number)
        split = _field(obj, "split", str, "all", path, number)
        for t in _field(obj, "targets", list, [], path, number):
            if not isinstance(t, dict):
                raise InputError(path, "each target must be a JSON object", number)
            position = _field(t, "position", int, None, path, number, "target")
            length = _field(t, "length", int, 1, path, number, "target")
            senses = _field(t, "senses", list, [], path, number, "target")
            if "sense" not in t and not senses:
                raise InputError(path, "target has neither 'sense' nor 'senses'", number)
            sense = _field(t, "sense", str, senses[0] if senses else None, path, number, "target")
            if not all(isinstance(s, str) for s in senses):
                raise InputError(path, "target field 'senses' must be a list of strings", number)
            if not target_in_sentence(position, length, len(words)):
                skipped.add("target span outside its sentence", f"{path.name}:{number}")
                continue
            span = words[position:position + length]
            targets.add(instance_id=_field(t, "id", str, f"{sentence_id}:{position}", path, number, "target"),
                        corpus=name, split=split, document=document, sentence_id=sentence_id,
                        position=position, length=length, surface=" ".join(span),
                        lemma=_field(t, "lemma", str, " ".join(span).lower(), path, number, "target"),
                        pos=_field(t, "pos", str, "", path, number, "target"), sense=sense,
                        senses=senses or [sense])
        sentences.add(sentence_id=sentence_id, corpus=name, split=split, document=document, words=words)
    if not len(targets):
        raise InputError(path, "no targets (each line needs a 'targets' list with at least one target somewhere)"
                         + (f"; skipped: {skipped.summary()}" if skipped.counts else ""))
    return Corpus(name, sentences.table(), targets.table(), skipped)
