"""MkDocs hooks for lexprobe's documentation (named in mkdocs.yml's ``hooks``; not a page).

- griffe, which reads the docstrings for mkdocstrings, finds a package by its folder name, and lexprobe's folder
  is ``engine/`` (pyproject's ``package-dir``). The Python handler is given a temporary folder holding one link,
  ``lexprobe -> engine``: griffe then reads the source statically and imports nothing.
- The benchmark records live in ``benchmarks/`` beside the code, not in ``docs/``. Their files are added to the
  site under ``benchmarks/``, so the pages link to them and the strict build checks those links.
- The docstrings are written for Sphinx and doctest, not Markdown: :class:`Docstrings` shows their ``>>>`` examples
  as code (an output like ``[('queen', 0.85)][0]`` would otherwise read as a Markdown link), a role such as
  ``:func:`x``` as the code ``x``, and a star after a word that opens no emphasis (``a:a*::b``) as a star.
"""

from __future__ import annotations

import atexit
import re
import shutil
import tempfile
from pathlib import Path

from markdown import Extension
from markdown.preprocessors import Preprocessor
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files, InclusionLevel

ROOT = Path(__file__).resolve().parent.parent
RECORDS = "benchmarks"
_link_dir: Path | None = None


def package_link() -> Path:
    """A temporary folder with ``lexprobe`` linked to ``engine/``, made once per process, removed at exit."""
    global _link_dir
    if _link_dir is None:
        _link_dir = Path(tempfile.mkdtemp(prefix="lexprobe-docs-"))
        atexit.register(shutil.rmtree, _link_dir, ignore_errors=True)   # removes the link, never engine/
        (_link_dir / "lexprobe").symlink_to(ROOT / "engine", target_is_directory=True)
    return _link_dir


ROLE = re.compile(r":(?:func|meth|class|mod|attr|data|exc|obj):`~?\.?([^`]+)`")
FENCE = "```"
CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")


def plain_stars(text: str) -> str:
    """``text`` with each ``*`` that follows a word character and closes no emphasis escaped (code spans kept)."""
    out, start = [], 0
    for span in [*CODE_SPAN.finditer(text), None]:
        end = span.start() if span else len(text)
        segment, opened = text[start:end], False
        for i, ch in enumerate(segment):
            if ch != "*":
                out.append(ch)
                continue
            before, after = segment[i - 1] if i else " ", segment[i + 1] if i + 1 < len(segment) else " "
            if before.isalnum() and not opened:
                out.append("\\*")
                continue
            if before.isalnum() or (not before.isalnum() and after.isalnum()):
                opened = not opened
            out.append(ch)
        if span:
            out.append(span.group())
            start = span.end()
    return "".join(out)


class DoctestBlocks(Preprocessor):
    """Each run of lines from a ``>>>`` line to the next blank line becomes a fenced ``pycon`` block; roles become
    code; lone stars are escaped. Lines inside fenced blocks are left as they are."""

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        fenced = example = False
        for line in lines:
            if example and not line.strip():
                out.append(FENCE)
                example = False
            if line.lstrip().startswith(FENCE) and not example:
                fenced = not fenced
            elif not fenced and not example and line.startswith(">>>"):
                out.append(FENCE + "pycon")
                example = True
            out.append(line if fenced or example else plain_stars(ROLE.sub(r"`\1`", line)))
        if example:
            out.append(FENCE)
        return out


class Docstrings(Extension):
    def extendMarkdown(self, md):
        md.preprocessors.register(DoctestBlocks(md), "lexprobe_doctest_blocks", 40)   # before fenced code (25)


@event_priority(100)   # before mkdocstrings' on_config, which creates the handler and takes the extensions
def on_config(config):
    config.markdown_extensions.append(Docstrings())
    python = config.plugins["mkdocstrings"].config.handlers.setdefault("python", {})
    python["paths"] = [str(package_link())]
    return config


def on_files(files: Files, config) -> Files:
    for path in sorted((ROOT / RECORDS).rglob("*")):
        if path.is_file():
            files.append(File(path.relative_to(ROOT).as_posix(), src_dir=str(ROOT), dest_dir=config.site_dir,
                              use_directory_urls=config.use_directory_urls,
                              inclusion=InclusionLevel.NOT_IN_NAV))   # linked from benchmarks.md, not in the nav
    return files
