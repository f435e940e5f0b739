"""``KIND:PATH`` corpus specs: which reader reads a sense-annotated corpus. Kinds:

- ``wsd:PATH``       the Raganato et al. (2017) XML + gold keys (:mod:`lexprobe.sources.datasets.wsd`): SemCor and the
  evaluation sets; PATH is a folder holding one ``*.data.xml`` or the ``.data.xml`` file itself.
- ``streusle:PATH``  STREUSLE CoNLL-U-Lex or ``.vis`` files, or a folder of them (:mod:`lexprobe.sources.datasets.streusle`).
- ``jsonl:PATH``     the documented JSONL format for users' own corpora (:mod:`lexprobe.sources.datasets.jsonl_corpus`).
- ``text:PATH``      plain running text, one sentence a line, maybe compressed; sentences only, no targets
  (:mod:`lexprobe.sources.datasets.plain_text`; for the contexts index).

Every reader returns the common tables of :mod:`lexprobe.sources.datasets.corpus`.
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import InputError, LexprobeError
from ..datahome import named_spec, tree_checksum
from ..vectors import regular_file
from .corpus import Corpus
from .jsonl_corpus import read_jsonl_corpus
from .plain_text import read_plain_text  # Attentive Mimicking's contexts: the text kind
from .streusle import read_streusle, streusle_files
from .wsd import read_wsd, wsd_files

KINDS = ("wsd", "streusle", "jsonl", "text")


def parse_spec(spec: str) -> tuple[str, Path]:
    """``KIND:PATH`` -> (kind, path), with a clear error for an unknown kind or a missing path. A bare dataset
    name of the data home (``semcor``, ``wsd-eval``, ``streusle``) stands for its ``KIND:PATH``."""
    if spec in ("semcor", "wsd-eval", "streusle"):
        spec = named_spec(spec)
    kind, sep, path = spec.partition(":")
    if not sep or kind not in KINDS:
        raise LexprobeError(f"corpus {spec!r}: expected KIND:PATH with KIND one of {', '.join(KINDS)}")
    p = Path(path)
    if not p.exists():
        raise LexprobeError(f"{p}: no such file or folder (corpus {spec!r})")
    return kind, p


def check_readable(kind: str, path: Path) -> None:
    """What the reader of ``kind`` will open, checked before anything is hashed or read: one file for the text
    and JSONL kinds (a folder, a FIFO or a device refused by name), the XML and its gold keys for ``wsd``, the
    STREUSLE files of a file or folder."""
    if kind in ("text", "jsonl"):
        if path.is_dir():
            raise InputError(path, f"a {'plain-text' if kind == 'text' else 'JSONL'} corpus is one file, not a folder")
        regular_file(path)
    elif kind == "wsd":
        wsd_files(path)
    else:
        for file in streusle_files(path):
            regular_file(file)


def provenance(spec: str) -> dict:
    """What a corpus spec reads, as a token index records it: ``corpus`` (the spec with its path resolved, a
    data-home name expanded), ``corpus_typed`` (as given) and ``corpus_sha256`` (over the file or folder given,
    :func:`lexprobe.sources.datahome.tree_checksum`, once :func:`check_readable` has passed), so that an index is found again from any folder and a
    copy of the same corpus elsewhere is known as the same."""
    kind, path = parse_spec(spec)
    check_readable(kind, path)
    return {"corpus": f"{kind}:{path.resolve()}", "corpus_typed": spec,
            "corpus_sha256": tree_checksum(path)["sha256"]}


def read_corpus(spec: str) -> Corpus:
    """Read a corpus named by ``KIND:PATH`` into the common tables."""
    kind, path = parse_spec(spec)
    reader = {"wsd": read_wsd, "streusle": read_streusle, "jsonl": read_jsonl_corpus, "text": read_plain_text}[kind]
    return reader(path)
