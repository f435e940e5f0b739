"""The documentation: README.md stays one page whose relative links resolve, and the MkDocs site (mkdocs.yml,
docs/) builds with ``--strict``, its CLI reference naming every command and its API reference every public name.
The site is built into a temporary folder, never into the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import click
import pytest

import lexprobe
from lexprobe.cli import cli

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}   # mkdocs-material's notice about its successor, not a warning

# The API through mkdocs' Python API, to build a copy of docs/ with the repository's mkdocs.yml (hooks, snippets).
BUILD_COPY = """
import logging, sys
from mkdocs.commands.build import build
from mkdocs.config import load_config
logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
build(load_config(sys.argv[1], strict=True, docs_dir=sys.argv[2], site_dir=sys.argv[3]))
"""


def headings(html: str) -> set[str]:
    return {unescape(re.sub(r"<[^>]+>", "", h)).rstrip("¶").strip()
            for _, h in re.findall(r"<h(\d)[^>]*>(.*?)</h\1>", html, flags=re.S)}


def command_paths(group: click.Group, prefix: str = "lexprobe"):
    for name, command in group.commands.items():
        if not command.hidden:
            yield f"{prefix} {name}"
            if isinstance(command, click.Group):
                yield from command_paths(command, f"{prefix} {name}")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-5000:]
    return out


def test_readme_is_one_page_and_its_relative_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z][a-z+.-]*:|#", t)]
    assert len(targets) >= 10, "the README links into docs/"
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_cli_reference_names_every_command(site):
    found = headings((site / "cli" / "index.html").read_text(encoding="utf-8"))
    expected = set(command_paths(cli))
    assert {"lexprobe index words", "lexprobe query neighbors", "lexprobe run all"} <= expected
    assert not expected - found, f"commands missing from the CLI reference: {sorted(expected - found)}"


def test_api_reference_documents_every_public_name(site):
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    html = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "most_similar" in headings(html)
    for name, (module, attr) in lexprobe._EXPORTS.items():
        path = f"lexprobe.{module}.{attr}"
        assert f"::: {path}\n" in page, f"docs/api.md does not reference {name} ({path})"
        assert f'id="{path}"' in html, f"{path} was not rendered"


def test_benchmark_records_are_part_of_the_site(site):
    """benchmarks/*.md are pages of the site (docs/hooks.py), linked from the Benchmarks page at /benchmarks/."""
    assert (site / "benchmarks" / "neighbors" / "index.html").is_file()
    assert (site / "benchmarks" / "ann_curve.png").is_file()
    assert 'href="neighbors/"' in (site / "benchmarks" / "index.html").read_text(encoding="utf-8")


def build_copy(tmp_path: Path, edit) -> subprocess.CompletedProcess:
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    edit(docs)
    return subprocess.run([sys.executable, "-c", BUILD_COPY, str(ROOT / "mkdocs.yml"), str(docs),
                           str(tmp_path / "site")], cwd=ROOT, env=ENV, capture_output=True, text=True)


def test_strict_build_fails_on_a_broken_link_or_anchor(tmp_path):
    def edit(docs):
        (docs / "api.md").write_text("# Python API\n", encoding="utf-8")   # faster: no docstrings to read
        with open(docs / "tour.md", "a", encoding="utf-8") as f:
            f.write("\nSee [nothing](no-such-page.md) and [no heading](cli.md#no-such-heading).\n")

    proc = build_copy(tmp_path, edit)
    assert proc.returncode != 0
    assert "no-such-page.md" in proc.stderr and "no-such-heading" in proc.stderr


def test_strict_build_fails_on_a_missing_api_reference(tmp_path):
    proc = build_copy(tmp_path, lambda docs: (docs / "api.md").write_text(
        "# Python API\n\n::: lexprobe.kinds.words.NoSuchName\n", encoding="utf-8"))
    assert proc.returncode != 0
    assert "lexprobe.kinds.words.NoSuchName" in proc.stderr


def test_claims_page_is_generated_from_the_recorded_findings():
    """docs/claims.md is what tools/claims_page.py renders from benchmarks/main-job-findings.json, not hand-written."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("claims_page_tool", ROOT / "tools" / "claims_page.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    record = json.loads((ROOT / "benchmarks" / "main-job-findings.json").read_text(encoding="utf-8"))
    assert record["findings"] and (ROOT / "docs" / "claims.md").read_text(encoding="utf-8") == tool.page_from_record(record)
